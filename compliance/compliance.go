// Package compliance builds the EU AI Act Article 10 data-governance dossier from what
// Vigia knows of the workspace's datasets: their sources, lineage, quality measures and
// results, personal and bias-relevant columns (names only), and the gaps. The dossiers
// need the business plan (402 plan_limit otherwise).
package compliance

import (
	"context"
	"regexp"
	"sort"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/plan"
	"github.com/vigia-data/vigia/trust"
)

// DatasetFacts is what the store reads of a visible dataset.
type DatasetFacts struct {
	ID, Name                     string
	ConnectionID, ConnectionName string
	ConnectionKind               string
	DataCountry                  *string
	Upstream                     int
	Score                        *float64
	Verdict                      string
	Profiled                     bool
	// RuleCount counts the dataset's rules; Passed and Failed their last results.
	RuleCount, Passed, Failed int
	OpenIssues                int
	Columns                   []trust.ColumnFact
	Domains                   []string
	// Downstream counts the datasets lineage says derive from it.
	Downstream int
	// RestrictedDomain is true when one of its domains is of restricted access.
	RestrictedDomain bool
	// LastProfiledAt is its last profile's time; nil before one.
	LastProfiledAt *time.Time
	// Validity lists the columns of a semantic type with a validity check (NIF, IBAN...)
	// with the sampled values that matched and were valid.
	Validity []ColumnValidity
}

// ColumnValidity is the last profile's validity figures of one column.
type ColumnValidity struct {
	Column, Type   string
	Matches, Valid int
}

// Store reads the facts of the datasets the viewer can see.
type Store interface {
	Art10Facts(ctx context.Context, v catalog.Viewer) ([]DatasetFacts, error)
	// PolicyFacts reads whether an enabled pii_retention_max_age rule exists (workspace
	// or domain policy) and how many policy violations are open.
	PolicyFacts(ctx context.Context, workspaceID string) (PolicyFacts, error)
}

// PolicyFacts is what the vertical reports read of data policies.
type PolicyFacts struct {
	RetentionRule    bool
	OpenViolations   int
	RetentionMaxDays *int
}

// Plans answers whether the caller's plan includes a feature.
type Plans interface {
	Require(ctx context.Context, f plan.Feature) error
}

// Gap codes of the dossier.
const (
	GapNoQualityRules = "no_quality_rules"
	GapNotProfiled    = "not_profiled"
	GapFailingRules   = "failing_rules"
	GapNoLineage      = "no_lineage"
	GapNoDomain       = "no_domain"
	GapPersonalData   = "personal_data"
)

// Dataset is one dataset of the dossier.
type Dataset struct {
	DatasetFacts
	PIIColumns  []string
	BiasColumns []string
	Gaps        []string
}

// Art10 is the dossier.
type Art10 struct {
	GeneratedAt time.Time
	Datasets    []Dataset
	// GapCounts counts the datasets per gap code.
	GapCounts map[string]int
}

// biasRE matches column names that tell characteristics a model may be biased on
// (protected characteristics and their usual proxies), in Portuguese, Spanish and English.
var biasRE = regexp.MustCompile(`(?i)(^|[-_. ])(sexo|genero|género|gender|sex|idade|edad|age|nascimento|birth|dob|` +
	`nacionalidade|nacionalidad|nationality|etnia|ethnic|ethnicity|raca|raça|race|religiao|religião|religion|` +
	`deficiencia|deficiência|disability|estado_civil|marital|codigo_postal|postal|zip)($|[-_. ]|[0-9])`)

// Service builds dossiers.
type Service struct {
	store   Store
	aiStore AISystemStore
	plans   Plans
	clock   vigia.Clock
}

// NewService returns the compliance service.
func NewService(store Store, aiStore AISystemStore, plans Plans, clock vigia.Clock) *Service {
	return &Service{store: store, aiStore: aiStore, plans: plans, clock: clock}
}

// Art10 builds the Article 10 dossier over the datasets the caller can see; 402
// plan_limit below the business plan.
func (s *Service) Art10(ctx context.Context) (Art10, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Art10{}, err
	}
	if err := s.plans.Require(ctx, plan.ComplianceDossiers); err != nil {
		return Art10{}, err
	}
	facts, err := s.store.Art10Facts(ctx, catalog.ViewerOf(p))
	if err != nil {
		return Art10{}, err
	}
	out := Art10{GeneratedAt: s.clock.Now().UTC(), Datasets: []Dataset{}, GapCounts: map[string]int{}}
	for _, f := range facts {
		d := Dataset{DatasetFacts: f, BiasColumns: []string{}, Gaps: []string{}}
		d.PIIColumns, _ = trust.PII(f.Columns)
		for _, c := range f.Columns {
			if biasRE.MatchString(c.Name) {
				d.BiasColumns = append(d.BiasColumns, c.Name)
			}
		}
		sort.Strings(d.BiasColumns)
		add := func(ok bool, code string) {
			if ok {
				d.Gaps = append(d.Gaps, code)
				out.GapCounts[code]++
			}
		}
		add(f.RuleCount == 0, GapNoQualityRules)
		add(!f.Profiled, GapNotProfiled)
		add(f.Failed > 0, GapFailingRules)
		add(f.Upstream == 0, GapNoLineage)
		add(len(f.Domains) == 0, GapNoDomain)
		add(len(d.PIIColumns) > 0, GapPersonalData)
		out.Datasets = append(out.Datasets, d)
	}
	return out, nil
}
