package rest

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/synthetic"
)

// SyntheticService is what the transport needs of synthetic data.
type SyntheticService interface {
	Rows(ctx context.Context, datasetID string, rows int, seed int64) (synthetic.Result, error)
	Evaluate(ctx context.Context, datasetID string, rows int, seed int64) (synthetic.Evaluation, error)
	Pack(ctx context.Context, req synthetic.PackRequest) (*synthetic.Pack, error)
	WriteSQLite(ctx context.Context, p *synthetic.Pack, w io.Writer) error
}

// SyntheticEvaluationOut is the scorecard of generated rows.
type SyntheticEvaluationOut struct {
	DatasetID         string             `json:"dataset_id"`
	Rows              int                `json:"rows"`
	Seed              int64              `json:"seed"`
	UtilityScore      float64            `json:"utility_score" minimum:"0" maximum:"100" doc:"Weighted sum of the components (docs/synthetic.md)"`
	UtilityComponents map[string]float64 `json:"utility_components" doc:"0-100 each: marginals, null_rate, distinct_ratio, lengths, pattern_masks, semantic_validity, referential_integrity (those the table measures)"`
	UtilityWeights    map[string]float64 `json:"utility_weights" doc:"Weight of each component; they sum to 100"`
	PrivacyVerdict    string             `json:"privacy_verdict" enum:"pass,warn,fail" doc:"fail on sample_leak, extreme_leak or pii_leak; warn when k_min is below k_threshold; else pass"`
	Key               *string            `json:"key" enum:"sample_leak,extreme_leak,pii_leak,k_below" doc:"The deciding finding; null on pass"`
	Params            map[string]any     `json:"params" doc:"The finding's params: column, counts of source rows, k_min; never a value"`
	Reason            string             `json:"reason" doc:"The verdict in words (pt-PT; en or es by the request's language)"`
	Findings          []SyntheticFinding `json:"findings" doc:"Every leak found"`
	KMin              *int               `json:"k_min" doc:"Smallest group of generated rows sharing a quasi-identifier combination; null without quasi-identifiers"`
	KThreshold        int                `json:"k_threshold"`
	QuasiIdentifiers  []string           `json:"quasi_identifiers"`
}

// SyntheticFinding is one privacy finding.
type SyntheticFinding struct {
	Key    string         `json:"key" enum:"sample_leak,extreme_leak,pii_leak"`
	Params map[string]any `json:"params"`
}

// SyntheticRowsOut is the JSON answer of the rows endpoint.
type SyntheticRowsOut struct {
	Manifest SyntheticManifestOut `json:"manifest"`
	Rows     []map[string]any     `json:"rows"`
}

// SyntheticManifestOut describes generated rows, with their evaluation.
type SyntheticManifestOut struct {
	DatasetID  string                     `json:"dataset_id"`
	Table      string                     `json:"table"`
	Rows       int                        `json:"rows"`
	Seed       int64                      `json:"seed"`
	Columns    []synthetic.ManifestColumn `json:"columns"`
	Evaluation SyntheticEvaluationOut     `json:"evaluation"`
}

// SyntheticPackIn asks for a pack.
type SyntheticPackIn struct {
	ConnectionID *string  `json:"connection_id,omitempty" maxLength:"64" doc:"Every profiled table of the connection (exactly one of connection_id, domain_id, dataset_ids)"`
	DomainID     *string  `json:"domain_id,omitempty" maxLength:"64" doc:"Every profiled table of the data product"`
	DatasetIDs   []string `json:"dataset_ids,omitempty" minItems:"1" maxItems:"20" doc:"These datasets (1-20)"`
	MaxTables    *int     `json:"max_tables,omitempty" minimum:"1" maximum:"20" doc:"Tables at most (20 by default); a connection or domain with more keeps the first by name and the manifest says truncated"`
	RowsPerTable *int     `json:"rows_per_table,omitempty" minimum:"1" maximum:"20000" doc:"1000 by default"`
	Seed         *int64   `json:"seed,omitempty" doc:"Seed of the generator; 0 by default. The same seed over the same profiles gives the same bytes"`
	Format       *string  `json:"format,omitempty" enum:"zip,sqlite" doc:"zip (default) or sqlite"`
}

const (
	syntheticLimitDefault  = 20
	syntheticWindowDefault = 10 * time.Minute
	zipType                = "application/zip"
	sqliteType             = "application/vnd.sqlite3"
)

var syntheticParams = []param{
	datasetIDParam,
	{Name: "rows", In: "query", Type: "integer", Min: intp(1), Max: intp(synthetic.MaxRows), Default: int64(synthetic.DefaultRows), Desc: "Rows to generate (1-20000)"},
	{Name: "seed", In: "query", Type: "integer", Min: intp(0), Max: intp(1<<53 - 1), Default: int64(0), Desc: "Seed of the generator"},
}

const syntheticDesc = "Values come from the dataset's profile (types, null rates, distinct ratios, ranges, lengths, pattern masks, " +
	"semantic types with the data country), never from stored values; the same seed over the same profile gives the same bytes. " +
	"The privacy evaluation reads the source only to count generated values found there. The request has a 30 s budget " +
	"(422 synthetic_budget_exceeded)."

func (s *Server) syntheticRoutes() {
	s.syntheticLimiter = newLimiter(s.cfg.RateLimitSynthetic, s.cfg.SyntheticWindow, s.now)
	budget := "Over the 30 s budget: synthetic_budget_exceeded, detail names budget_seconds; or invalid parameters (validation_error)"
	unreachable := "The source could not be read for the privacy check (synthetic_source_unreachable)"
	s.register(operation{ID: "datasetSynthetic", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/synthetic", Tag: "synthetic",
		Summary: "Synthetic rows of the dataset, as CSV or JSON (the JSON manifest carries the evaluation)", ContentType: "text/csv",
		Params:   append(append([]param{}, syntheticParams...), param{Name: "format", In: "query", Type: "string", Enum: []string{synthetic.FormatCSV, synthetic.FormatJSON}, Default: synthetic.FormatCSV}),
		Response: SyntheticRowsOut{},
		Errors: map[int]string{http.StatusConflict: "The privacy verdict is fail (synthetic_privacy_fail; detail has key, params, message)",
			http.StatusUnprocessableEntity: budget, http.StatusBadGateway: unreachable},
		Desc: syntheticDesc + " CSV is RFC 4180 with a header row; a text value starting with =, +, -, @, tab or CR is prefixed with a quote."},
		s.handleSyntheticRows)
	s.register(operation{ID: "datasetSyntheticEvaluation", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/synthetic/evaluation", Tag: "synthetic",
		Summary: "Utility and privacy scorecard of synthetic rows of the dataset", Params: syntheticParams, Response: SyntheticEvaluationOut{},
		Errors: map[int]string{http.StatusUnprocessableEntity: budget, http.StatusBadGateway: unreachable},
		Desc:   syntheticDesc + " A fail verdict is an answer here, not an error."},
		s.handleSyntheticEvaluation)
	s.register(operation{ID: "createSyntheticPack", Method: http.MethodPost, Path: "/api/v1/synthetic-packs", Tag: "synthetic", TokenWrite: true,
		Summary: "A multi-table synthetic pack as a ZIP (CSV per table, schema.sql, manifest.json) or a SQLite file (a marked write)",
		Body:    SyntheticPackIn{}, ContentType: zipType, MoreContentTypes: []string{sqliteType},
		Headers: map[string]string{"Content-Disposition": "attachment; file name of the pack"},
		Errors: map[int]string{http.StatusConflict: "A table's privacy verdict is fail (synthetic_privacy_fail; detail has key, params, message and tables[] with name, dataset_id, key, params)",
			http.StatusUnprocessableEntity: budget + "; not exactly one of connection_id, domain_id, dataset_ids; an unknown field",
			http.StatusBadGateway:          unreachable,
			http.StatusTooManyRequests:     "Above 20 packs per 10 minutes for the workspace (rate_limited, Retry-After)"},
		Desc: syntheticDesc + " Foreign keys (inferred from names within the pack) reference generated parent rows; schema.sql and the SQLite file " +
			"declare primary and foreign keys. Each workspace may ask 20 packs per 10 minutes. API tokens may call it."},
		s.handleSyntheticPack)
}

func (s *Server) handleSyntheticRows(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Synthetic.Rows(r.Context(), in.Path("dataset_id"), in.Int("rows"), int64(in.Int("seed")))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if f := in.String("format"); f != nil && *f == synthetic.FormatJSON {
		out := SyntheticRowsOut{Manifest: SyntheticManifestOut{DatasetID: res.Table.DatasetID, Table: res.Table.Source.Name(), Rows: res.Table.Rows,
			Seed: res.Evaluation.Seed, Columns: synthetic.ManifestColumns(res.Table), Evaluation: s.toSyntheticEvaluationOut(r, res.Evaluation)},
			Rows: synthetic.JSONRows(res.Table)}
		writeJSON(w, http.StatusOK, out)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFileName(res.Table.Name)+`.csv"`)
	w.WriteHeader(http.StatusOK)
	if err := synthetic.WriteCSV(w, res.Table); err != nil {
		s.log.DebugContext(r.Context(), "write synthetic csv", "request_id", vigia.RequestID(r.Context()), "err", err)
	}
}

func (s *Server) handleSyntheticEvaluation(w http.ResponseWriter, r *http.Request, in *input) {
	ev, err := s.deps.Synthetic.Evaluate(r.Context(), in.Path("dataset_id"), in.Int("rows"), int64(in.Int("seed")))
	s.reply(w, r, err, func() any { return s.toSyntheticEvaluationOut(r, ev) })
}

func (s *Server) handleSyntheticPack(w http.ResponseWriter, r *http.Request, in *input) {
	p, err := vigia.MustPrincipal(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := s.syntheticLimiter.take("synthetic:" + p.WorkspaceID)
	setRateHeaders(w, q)
	if !q.Allowed {
		s.writeError(w, r, vigia.RateLimited(vigia.CodeRateLimited, secondsUntil(q.Reset, s.now())))
		return
	}
	var body SyntheticPackIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	req := synthetic.PackRequest{ConnectionID: body.ConnectionID, DomainID: body.DomainID, DatasetIDs: body.DatasetIDs}
	if body.MaxTables != nil {
		req.MaxTables = *body.MaxTables
		if req.MaxTables < 1 {
			s.writeError(w, r, vigia.Invalid(vigia.Field("greater_than_equal", map[string]any{"ge": 1}, "max_tables")))
			return
		}
	}
	if body.RowsPerTable != nil {
		req.RowsPerTable = *body.RowsPerTable
		if req.RowsPerTable < 1 {
			s.writeError(w, r, vigia.Invalid(vigia.Field("greater_than_equal", map[string]any{"ge": 1}, "rows_per_table")))
			return
		}
	}
	if body.Seed != nil {
		req.Seed = *body.Seed
	}
	if body.Format != nil {
		req.Format = *body.Format
	}
	pack, err := s.deps.Synthetic.Pack(r.Context(), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	name := "synthetic-pack-" + strconv.FormatInt(pack.Seed, 10)
	if req.Format == synthetic.FormatSQLite {
		w.Header().Set("Content-Type", sqliteType)
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.sqlite"`)
		err = s.deps.Synthetic.WriteSQLite(r.Context(), pack, w)
	} else {
		w.Header().Set("Content-Type", zipType)
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.zip"`)
		err = synthetic.WriteZIP(w, pack)
	}
	if err != nil {
		s.log.DebugContext(r.Context(), "write synthetic pack", "request_id", vigia.RequestID(r.Context()), "err", err)
	}
}

func (s *Server) toSyntheticEvaluationOut(r *http.Request, ev synthetic.Evaluation) SyntheticEvaluationOut {
	out := SyntheticEvaluationOut{DatasetID: ev.DatasetID, Rows: ev.Rows, Seed: ev.Seed, UtilityScore: ev.UtilityScore,
		UtilityComponents: ev.UtilityComponents, UtilityWeights: ev.UtilityWeights, PrivacyVerdict: ev.PrivacyVerdict,
		Params: nonNilMap(ev.Params), KMin: ev.KMin, KThreshold: ev.KThreshold, QuasiIdentifiers: nonNilStrings(ev.QuasiIdentifiers),
		Findings: make([]SyntheticFinding, 0, len(ev.Findings))}
	if ev.Key != "" {
		k := ev.Key
		out.Key = &k
	}
	for _, f := range ev.Findings {
		out.Findings = append(out.Findings, SyntheticFinding{Key: f.Key, Params: nonNilMap(f.Params)})
	}
	out.Reason = s.msgs.Message(vigia.Lang(r.Context()), ev.ReasonKey(), ev.Params)
	return out
}

// safeFileName keeps letters, digits, dot, dash and underscore of a name.
func safeFileName(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		return "synthetic"
	}
	return string(b)
}
