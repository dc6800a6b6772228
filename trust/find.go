package trust

import (
	"context"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Layers and usage classes of /datasets/find.
const (
	LayerBronze = "bronze"
	LayerSilver = "silver"
	LayerGold   = "gold"

	UsageHot    = "hot"
	UsageActive = "active"
	UsageCold   = "cold"
	UsageDead   = "dead"
)

// FindLimit is the most datasets /datasets/find returns.
const FindLimit = 40

// FindFilter combines the criteria of /datasets/find; nil fields do not filter.
type FindFilter struct {
	Query      *string
	Layer      *string
	Domain     *string // id or name
	HasPII     *bool
	MinScore   *float64
	UsageClass *string
}

// Found is a dataset /datasets/find returns: names and states, and only the names of
// its PII columns.
type Found struct {
	ID            string
	Schema        string
	Table         string
	Kind          string
	Layer         *string
	UsageClass    string
	LatestScore   *float64
	Verdict       string
	QueriesPerDay *float64
	Domains       []DomainFact
	PIIColumns    []string
}

// Name is schema.table.
func (f Found) Name() string {
	if f.Schema == "" {
		return f.Table
	}
	return f.Schema + "." + f.Table
}

// FindResult is up to 40 datasets and whether more matched.
type FindResult struct {
	Datasets  []Found
	Truncated bool
}

// Find searches the caller's datasets with every given criterion combined: query (in
// schema, table and name), layer (bronze, silver, gold: read from schema or table name
// conventions such as raw_, stg_, int_, mart_, dim_, fct_), domain (id or name),
// has_pii, min_score (0-100) and usage_class (hot: 100+ queries a day or 100+ recorded
// reads in 30 days; active: 1+; cold: some queries or a read in 180 days; dead:
// neither). Returns KindInvalid for out-of-range criteria.
func (s *Service) Find(ctx context.Context, f FindFilter) (FindResult, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return FindResult{}, err
	}
	var fields []vigia.FieldError
	if f.Query != nil {
		q := strings.TrimSpace(*f.Query)
		if q == "" {
			f.Query = nil
		} else {
			f.Query = &q
		}
	}
	if f.Layer != nil && *f.Layer != LayerBronze && *f.Layer != LayerSilver && *f.Layer != LayerGold {
		fields = append(fields, vigia.Field("enum", nil, "layer"))
	}
	if f.UsageClass != nil {
		switch *f.UsageClass {
		case UsageHot, UsageActive, UsageCold, UsageDead:
		default:
			fields = append(fields, vigia.Field("enum", nil, "usage_class"))
		}
	}
	if f.MinScore != nil && (*f.MinScore < 0 || *f.MinScore > 100) {
		fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 0, "le": 100}, "min_score"))
	}
	if len(fields) > 0 {
		return FindResult{}, vigia.Invalid(fields...)
	}
	if f.Domain != nil {
		d := strings.TrimSpace(*f.Domain)
		f.Domain = &d
	}
	items, truncated, err := s.store.FindDatasets(ctx, catalog.ViewerOf(p), f, s.clock.Now(), FindLimit)
	if err != nil {
		return FindResult{}, err
	}
	if items == nil {
		items = []Found{}
	}
	return FindResult{Datasets: items, Truncated: truncated}, nil
}

// ContextColumn is a column as /context describes it: no values, no samples.
type ContextColumn struct {
	Name         string
	DataType     string
	SemanticType *string
	PII          bool
	NullRate     *float64
	PrimaryKey   bool
}

// Context is what an agent reads before using a dataset.
type Context struct {
	DatasetID      string
	Name           string
	Kind           string
	Layer          *string
	UsageClass     string
	RowCount       *int64
	RowCountExact  *bool
	Columns        []ContextColumn
	PIIColumns     []string
	Domains        []DomainFact
	Verdict        string
	Score          *float64
	Dimensions     map[string]*float64
	TrustScore     float64
	TrustGrade     string
	OpenCritical   int
	OpenWarning    int
	FreshnessAge   *float64
	FreshnessSLA   float64
	FreshnessMet   *bool
	LastScanAt     *time.Time
	Consumers30d   int
	Readiness      map[string]string
	SummaryPT      string
	GeneratedAt    time.Time
	QueriesPerDay  *float64
	LastConsumedAt *time.Time
}

// DatasetContext returns the context object of a dataset: its columns with semantic
// types and PII flags (names only), domains, verdict, scores, freshness, readiness per
// use case and a short pt-PT summary. Returns KindNotFound when the caller cannot see it.
func (s *Service) DatasetContext(ctx context.Context, datasetID string) (Context, error) {
	now := s.clock.Now()
	f, err := s.one(ctx, datasetID, now)
	if err != nil {
		return Context{}, err
	}
	sc := ComputeScore(f, now, s.cfg.Rules)
	r := ComputeReadiness(f, now, s.cfg.Rules)
	age, met := FreshnessOf(f, now, s.cfg.Rules.FreshnessSLA)
	out := Context{DatasetID: f.DatasetID, Name: f.Name(), Kind: f.Kind, Layer: f.Layer, UsageClass: f.UsageClass, RowCount: f.RowCount,
		RowCountExact: f.RowCountExact, PIIColumns: r.PIIColumns, Domains: f.Domains, Verdict: f.Verdict, Score: f.LatestScore, Dimensions: f.Dimensions,
		TrustScore: sc.Score, TrustGrade: sc.Grade, OpenCritical: f.CriticalIssues, OpenWarning: f.WarningIssues,
		FreshnessAge: age, FreshnessSLA: round2(s.cfg.Rules.FreshnessSLA.Hours()), FreshnessMet: met, LastScanAt: f.LastScanAt,
		Consumers30d: f.Consumptions30d, Readiness: map[string]string{}, GeneratedAt: now, QueriesPerDay: f.QueriesPerDay,
		LastConsumedAt: f.LastConsumedAt, Columns: []ContextColumn{}}
	if out.Domains == nil {
		out.Domains = []DomainFact{}
	}
	pii := map[string]bool{}
	for _, c := range r.PIIColumns {
		pii[c] = true
	}
	for _, c := range f.Columns {
		cc := ContextColumn{Name: c.Name, DataType: c.DataType, PII: pii[c.Name], NullRate: c.NullRate, PrimaryKey: c.PrimaryKey}
		if c.SemanticType != "" {
			t := c.SemanticType
			cc.SemanticType = &t
		}
		out.Columns = append(out.Columns, cc)
	}
	for _, u := range r.UseCases {
		out.Readiness[u.UseCase] = u.Status
	}
	out.SummaryPT = s.msgs.Message(ptPT, "trust.context.summary", map[string]any{"name": out.Name, "columns": len(out.Columns),
		"verdict": out.Verdict, "grade": out.TrustGrade, "trust": out.TrustScore, "pii": len(out.PIIColumns),
		"critical": out.OpenCritical})
	return out, nil
}

// DatasetFacts is the trust facts envelope of a dataset.
type DatasetFacts struct {
	SchemaVersion string
	GeneratedAt   time.Time
	Facts         Facts
	Score         Score
	Readiness     Readiness
	FreshnessAge  *float64
	FreshnessMet  *bool
	FreshnessSLA  float64
}

// FactsSchemaVersion is the schema_version of the trust facts envelopes.
const FactsSchemaVersion = "1.0"

// TrustFacts returns the trust facts envelope of a dataset. Returns KindNotFound when
// the caller cannot see it.
func (s *Service) TrustFacts(ctx context.Context, datasetID string) (DatasetFacts, error) {
	now := s.clock.Now()
	f, err := s.one(ctx, datasetID, now)
	if err != nil {
		return DatasetFacts{}, err
	}
	age, met := FreshnessOf(f, now, s.cfg.Rules.FreshnessSLA)
	return DatasetFacts{SchemaVersion: FactsSchemaVersion, GeneratedAt: now, Facts: f,
		Score: s.renderScore(ComputeScore(f, now, s.cfg.Rules)), Readiness: s.render(ComputeReadiness(f, now, s.cfg.Rules)),
		FreshnessAge: age, FreshnessMet: met, FreshnessSLA: round2(s.cfg.Rules.FreshnessSLA.Hours())}, nil
}
