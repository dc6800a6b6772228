package rest

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/suggest"
)

// DatasetOut is a dataset in lists.
type DatasetOut struct {
	ID             string     `json:"id"`
	Name           string     `json:"name" doc:"schema.table"`
	Schema         string     `json:"schema"`
	Table          string     `json:"table"`
	ConnectionID   string     `json:"connection_id"`
	ConnectionName string     `json:"connection_name"`
	Kind           string     `json:"kind" enum:"table,view,materialized_view,external,unknown"`
	CostGuarded    bool       `json:"cost_guarded" doc:"Scans profile at depth basic over the first rows and count no distinct values"`
	DataCountry    *string    `json:"data_country" doc:"ISO 3166-1 alpha-2; null = inherited"`
	LatestScore    *float64   `json:"latest_score" doc:"0-100; null before the first scan"`
	QueriesPerDay  *float64   `json:"queries_per_day" doc:"Scans of the table per day, from the source's own statistics between two scans (Postgres); null while unknown"`
	LastScanAt     *time.Time `json:"last_scan_at"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	// Trust is the trust score with blockers and warnings: always on the detail, on
	// list items with include=trust.
	Trust *TrustBriefOut `json:"trust,omitempty" doc:"Trust score, grade, blockers[] and warnings[] (detail; lists with include=trust)"`
}

// DatasetDetailOut is one dataset with its columns and context.
type DatasetDetailOut struct {
	DatasetOut
	RowCount      *int64              `json:"row_count" doc:"Rows counted by the last profile; null before one"`
	RowCountExact *bool               `json:"row_count_exact" doc:"False when the last profile read the first rows only (a cost-guarded view): row_count is then the rows read, a lower bound; null before a profile"`
	LastFailure   *ProfileFailureOut  `json:"last_failure" doc:"Why the last scan that tried could not profile the dataset, when that happened after its last profile; null otherwise"`
	AccessRole    string              `json:"access_role" enum:"viewer,editor,owner"`
	Country       CountryOut          `json:"country"`
	Columns       []ColumnOut         `json:"columns"`
	ScoreHistory  []ScoreOut          `json:"score_history" doc:"Newest first, with the five dimensions"`
	Issues        []IssueOut          `json:"issues" doc:"Open and acknowledged issues"`
	Suggestions   []SuggestionItemOut `json:"suggestions" doc:"Open suggestions of the dataset, newest first (at most 100)"`
}

// ProfileFailureOut is a scan's failure to profile a dataset.
type ProfileFailureOut struct {
	ScanID   string    `json:"scan_id"`
	Code     string    `json:"code" doc:"Stable: not_populated (a materialized view never refreshed), permission_denied, not_found, timeout, canceled, unreachable, query_failed, bad_result, internal"`
	FailedAt time.Time `json:"failed_at"`
}

// CountryOut is the data country scans use and where it comes from.
type CountryOut struct {
	Effective string `json:"effective"`
	Source    string `json:"source" enum:"dataset,connection,workspace"`
}

// ColumnOut is a column with its last profile.
type ColumnOut struct {
	Name       string       `json:"name"`
	Position   int          `json:"position"`
	DataType   string       `json:"data_type"`
	Nullable   bool         `json:"nullable"`
	PrimaryKey bool         `json:"primary_key"`
	Partition  bool         `json:"partition"`
	Clustering bool         `json:"clustering"`
	Semantic   *SemanticOut `json:"semantic"`
	Profile    *ProfileOut  `json:"profile"`
	// References are the declared foreign keys the column is part of.
	References []ColumnRefOut `json:"references" doc:"Declared foreign keys the column is part of (read by discovery): join paths, not lineage"`
}

// ColumnRefOut is a column's place in a declared foreign key.
type ColumnRefOut struct {
	Constraint  string  `json:"constraint" doc:"The constraint's name (fk_<n> on SQLite, which keeps none)"`
	DatasetID   *string `json:"dataset_id" doc:"The referenced dataset; null when Vigia does not know it or the caller cannot see it"`
	DatasetName *string `json:"dataset_name" doc:"schema.table of the referenced table; null when restricted"`
	Column      *string `json:"column" doc:"The referenced column; null when restricted"`
	Restricted  bool    `json:"restricted" doc:"The referenced dataset exists but the caller cannot see it"`
}

// SemanticOut is a column's semantic type measured on a sample.
type SemanticOut struct {
	Type       string  `json:"type"`
	Region     *string `json:"region" doc:"numbering plan of type phone; null otherwise"`
	Estimated  bool    `json:"estimated"`
	SampleSize int     `json:"sample_size"`
}

// ProfileOut holds a column's statistics: counts and masks, never text values.
type ProfileOut struct {
	NullCount  int64        `json:"null_count"`
	NullRate   float64      `json:"null_rate"`
	Estimated  bool         `json:"estimated" doc:"True when null_count, null_rate, min/max and masks were measured on the first sample_size rows only (a cost-guarded view), not the whole dataset"`
	SampleSize *int         `json:"sample_size" doc:"Rows the estimated figures were measured on; null when they cover the whole dataset"`
	Min        *NumberOut   `json:"min,omitempty"`
	Max        *NumberOut   `json:"max,omitempty"`
	MinTime    *time.Time   `json:"min_time,omitempty"`
	MaxTime    *time.Time   `json:"max_time,omitempty"`
	MinLength  *int         `json:"min_length,omitempty"`
	MaxLength  *int         `json:"max_length,omitempty"`
	AvgLength  *float64     `json:"avg_length,omitempty"`
	Distinct   *EstimateOut `json:"distinct,omitempty"`
	Masks      []MaskOut    `json:"masks,omitempty"`
	Quantiles  []float64    `json:"quantiles,omitempty" doc:"Numeric and temporal columns: 21 equi-depth cut points (probabilities 0, 0.05, …, 1, interpolated as percentile_cont) of the profile's sample; temporal values as Unix seconds"`
}

// EstimateOut is a number that may come from a sample, with its 95% interval.
type EstimateOut struct {
	Value      float64    `json:"value"`
	Estimated  bool       `json:"estimated"`
	SampleSize int        `json:"sample_size"`
	CI95       [2]float64 `json:"ci95"`
}

// MaskOut is a pattern mask (digit 9, letter A) and how many sampled values had it.
type MaskOut struct {
	Mask  string `json:"mask"`
	Count int    `json:"count"`
}

func (s *Server) datasetRoutes() {
	s.register(operation{ID: "listDatasets", Method: http.MethodGet, Path: "/api/v1/datasets", Tag: "datasets",
		Summary: "Datasets the caller can see", List: true, ListDefault: catalog.DatasetPageDefault, Response: []DatasetOut{},
		Params: []param{
			{Name: "connection_id", In: "query", Type: "string", MaxLen: 64, Desc: "Only datasets of this connection"},
			{Name: "q", In: "query", Type: "string", MaxLen: 200, Desc: "Search in schema, table and name"},
			{Name: "sort", In: "query", Type: "string", Enum: []string{catalog.SortName, catalog.SortUsage, catalog.SortImpact}, Default: catalog.SortName,
				Desc: "name (default), usage (queries per day, most used first) or impact (downstream reach, largest first, ties by name)"},
			{Name: "include", In: "query", Type: "string", MaxLen: 100, Desc: "Comma list; trust adds each item's trust score (unknown items are ignored)"},
			{Name: "verdict", In: "query", Type: "string", Enum: catalog.Verdicts,
				Desc: "Extension: only datasets whose latest verdict is this one (unknown also before their first verdict)"},
			{Name: "cursor", In: "query", Type: "string", MaxLen: 4000,
				Desc: "Extension: the X-Next-Cursor of the previous page of the same sort (and filters); the page starts after its last item, " +
					"as fast at any depth (offset must then be 0). Opaque."},
		},
		Headers: map[string]string{"X-Next-Cursor": "Extension: when the page is full, the cursor of the page after it"}}, s.handleDatasetList)
	s.register(operation{ID: "getDataset", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}", Tag: "datasets",
		Summary: "One dataset with its columns", Response: DatasetDetailOut{},
		Params: []param{{Name: "dataset_id", In: "path", Type: "string", Required: true, MaxLen: 64}}}, s.handleDatasetGet)
}

func (s *Server) handleDatasetList(w http.ResponseWriter, r *http.Request, in *input) {
	sort := "name"
	if v := in.String("sort"); v != nil {
		sort = *v
	}
	f := catalog.DatasetFilter{ConnectionID: in.String("connection_id"), Q: in.String("q"), Sort: sort, Page: in.Page(),
		Verdict: in.String("verdict"), Cursor: in.String("cursor")}
	next := func(items []catalog.Dataset) {
		if len(items) > 0 && len(items) == f.Page.Limit {
			w.Header().Set("X-Next-Cursor", catalog.KeyOf(items[len(items)-1], sort).Cursor())
		}
	}
	if includes(in.String("include"), "trust") && s.deps.Trust != nil {
		res, scores, err := s.deps.Trust.FindDatasetsWithTrust(r.Context(), f)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := make([]DatasetOut, 0, len(res.Items))
		for _, d := range res.Items {
			o := toDatasetOut(d)
			if sc, ok := scores[d.ID]; ok {
				o.Trust = &TrustBriefOut{Score: sc.Score, Grade: sc.Grade, Blockers: toFindingsOut(sc.Blockers), Warnings: toFindingsOut(sc.Warnings)}
			}
			out = append(out, o)
		}
		next(res.Items)
		list(w, res.Total, out)
		return
	}
	res, err := s.deps.Catalog.FindDatasets(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]DatasetOut, 0, len(res.Items))
	for _, d := range res.Items {
		out = append(out, toDatasetOut(d))
	}
	next(res.Items)
	list(w, res.Total, out)
}

// DatasetDetailService reads a dataset's detail with its trust brief and open
// suggestions at once (KindNotFound when the caller cannot see it).
type DatasetDetailService interface {
	DatasetDetail(ctx context.Context, id string) (catalog.Dataset, []suggest.Suggestion, error)
}

func (s *Server) handleDatasetGet(w http.ResponseWriter, r *http.Request, in *input) {
	if s.deps.DatasetDetail != nil {
		d, sgs, err := s.deps.DatasetDetail.DatasetDetail(r.Context(), in.Path("dataset_id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		p, _ := vigia.PrincipalFrom(r.Context())
		out := toDatasetDetailOut(d, catalog.DatasetAccessRole(p, d))
		out.Suggestions = make([]SuggestionItemOut, 0, len(sgs))
		for _, sg := range sgs {
			out.Suggestions = append(out.Suggestions, s.toSuggestionOut(r, sg))
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	d, err := s.deps.Trust.DatasetDetail(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, _ := vigia.PrincipalFrom(r.Context())
	out := toDatasetDetailOut(d, catalog.DatasetAccessRole(p, d))
	out.Suggestions = []SuggestionItemOut{}
	if s.deps.Suggestions != nil {
		sgs, err := s.deps.Suggestions.Open(r.Context(), d.ID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		for _, sg := range sgs {
			out.Suggestions = append(out.Suggestions, s.toSuggestionOut(r, sg))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func toDatasetOut(d catalog.Dataset) DatasetOut {
	return DatasetOut{ID: d.ID, Name: d.Name(), Schema: d.Schema, Table: d.Table, ConnectionID: d.ConnectionID,
		ConnectionName: d.ConnectionName, Kind: d.Kind, CostGuarded: d.CostGuarded(), DataCountry: d.DataCountry,
		LatestScore: d.LatestScore, QueriesPerDay: d.QueriesPerDay, LastScanAt: d.LastScanAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

func toDatasetDetailOut(d catalog.Dataset, accessRole string) DatasetDetailOut {
	c := d.Country()
	out := DatasetDetailOut{DatasetOut: toDatasetOut(d), AccessRole: accessRole, RowCount: d.RowCount, RowCountExact: d.RowCountExact,
		Country: CountryOut{Effective: c.Effective, Source: c.Source}, Columns: make([]ColumnOut, 0, len(d.Columns))}
	if f := d.LastFailure; f != nil {
		out.LastFailure = &ProfileFailureOut{ScanID: f.ScanID, Code: f.Code, FailedAt: f.At}
	}
	if d.Trust != nil {
		out.Trust = toTrustBriefOut(*d.Trust)
	}
	for _, col := range d.Columns {
		out.Columns = append(out.Columns, toColumnOut(col))
	}
	out.ScoreHistory = make([]ScoreOut, 0, len(d.ScoreHistory))
	for _, p := range d.ScoreHistory {
		out.ScoreHistory = append(out.ScoreHistory, ScoreOut{ScanID: p.ScanID, Score: p.Score, Dimensions: p.Dimensions, CreatedAt: p.CreatedAt})
	}
	out.Issues = make([]IssueOut, 0, len(d.Issues))
	for _, is := range d.Issues {
		out.Issues = append(out.Issues, toIssueOut(is))
	}
	return out
}

func toColumnOut(c catalog.Column) ColumnOut {
	out := ColumnOut{Name: c.Name, Position: c.Position, DataType: c.DataType, Nullable: c.Nullable,
		PrimaryKey: c.PrimaryKey, Partition: c.Partition, Clustering: c.Clustering, References: make([]ColumnRefOut, 0, len(c.References))}
	for _, r := range c.References {
		ro := ColumnRefOut{Constraint: r.Constraint, DatasetID: r.DatasetID, Restricted: r.Restricted}
		if !r.Restricted {
			name, col := r.Table, r.Column
			if r.Schema != "" {
				name = r.Schema + "." + r.Table
			}
			ro.DatasetName, ro.Column = &name, &col
		}
		out.References = append(out.References, ro)
	}
	p := c.Profile
	if p == nil {
		return out
	}
	if p.Semantic != nil {
		so := &SemanticOut{Type: p.Semantic.Type, Estimated: p.Semantic.Estimated, SampleSize: p.Semantic.SampleSize}
		if p.Semantic.Region != "" {
			so.Region = &p.Semantic.Region
		}
		out.Semantic = so
	}
	po := &ProfileOut{NullCount: p.NullCount, NullRate: p.NullRate, Estimated: p.Estimated, Min: toNumberOut(p.Min),
		Max: toNumberOut(p.Max), MinTime: p.MinTime, MaxTime: p.MaxTime, MinLength: p.MinLength, MaxLength: p.MaxLength, AvgLength: p.AvgLength,
		Quantiles: p.Quantiles}
	if p.Estimated {
		n := p.SampleSize
		po.SampleSize = &n
	}
	if p.Distinct != nil {
		po.Distinct = &EstimateOut{Value: p.Distinct.Value, Estimated: p.Distinct.Estimated, SampleSize: p.Distinct.SampleSize, CI95: p.Distinct.CI95}
	}
	for _, m := range p.Masks {
		po.Masks = append(po.Masks, MaskOut{Mask: m.Mask, Count: m.Count})
	}
	out.Profile = po
	return out
}

// includes reports whether a comma list names item.
func includes(list *string, item string) bool {
	if list == nil {
		return false
	}
	for _, p := range strings.Split(*list, ",") {
		if strings.TrimSpace(p) == item {
			return true
		}
	}
	return false
}
