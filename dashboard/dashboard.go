// Package dashboard answers the governance metrics (coverage of ownership, domains, rules,
// contracts and sensitivity review; the issue flow; SLA attainment) and the executive and
// management dashboard reads, over the datasets the caller can see, with every *_eur
// figure also in the workspace currency (finops). The finops dashboard is finops'.
package dashboard

import (
	"context"
	"math"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/finops"
)

// Period bounds of the metrics.
const (
	DefaultDays = 30
	MaxDays     = 366
)

// Facts are the counts the store reads over the visible live datasets.
type Facts struct {
	Datasets              int
	Profiled              int
	WithOwner             int // in a domain that has an owner
	WithDomain            int
	WithRules             int
	WithContract          int // an accepted contract version
	SensitivityReviewed   int // a column whose sensitivity a person set
	MeanScore             *float64
	Verdicts              map[string]int
	Opened                int // issues opened in the period
	Resolved              int // resolved in the period
	Ignored               int // ignored (any reason) in the period
	OpenNow               int
	OpenCritical          int
	OpenWarning           int
	OpenBreached          int
	ClosedInScope         int // resolved in the period, not ignored as expected
	ClosedWithinSLA       int // of those, never breached
	OpenIncidentsCritical int
	OpenIncidentsWarning  int
	UntrustedReads        int // reads recorded with decision untrusted in the period
	Reads                 int
}

// Store reads the facts.
type Store interface {
	DashboardFacts(ctx context.Context, v catalog.Viewer, since time.Time) (Facts, error)
}

// Money converts euros to the workspace currency.
type Money interface {
	Currency(ctx context.Context) (string, *finops.Rate, error)
}

// Share is a count with its share of the whole (pct null when the whole is 0).
type Share struct {
	Count int
	Pct   *float64
}

// Coverage is how much of the catalog is governed.
type Coverage struct {
	Datasets                                                                 int
	Profiled, WithOwner, WithDomain, WithRules, WithContract, SensitivityRev Share
}

// IssueFlow is the issues of the period and the backlog now.
type IssueFlow struct {
	Opened, Resolved, Ignored                        int
	OpenNow, OpenCritical, OpenWarning, OpenBreached int
}

// SLA is the attainment of resolution targets over the issues resolved in the period.
type SLA struct {
	ClosedInScope, Met, Breached int
	AttainmentPct                *float64
}

// Governance is the governance metrics.
type Governance struct {
	AsOf       time.Time
	PeriodDays int
	Coverage   Coverage
	IssueFlow  IssueFlow
	SLA        SLA
}

// Executive is the executive dashboard.
type Executive struct {
	Governance
	MeanScore             *float64
	Verdicts              map[string]int
	OpenIncidentsCritical int
	OpenIncidentsWarning  int
	Reads, UntrustedReads int
	LLMCostEUR            float64
	LLMCost               finops.Money
}

// Service answers the reads.
type Service struct {
	store Store
	money Money
	clock vigia.Clock
}

// NewService returns the dashboard service.
func NewService(store Store, money Money, clock vigia.Clock) *Service {
	return &Service{store: store, money: money, clock: clock}
}

// Governance returns the governance metrics over the last days (DefaultDays when nil);
// KindInvalid for days outside 1-MaxDays.
func (s *Service) Governance(ctx context.Context, days *int) (Governance, error) {
	g, _, err := s.read(ctx, days)
	return g, err
}

// Executive returns the executive dashboard (the management one is the same read: both
// audiences get every figure; the transports choose what each shows).
func (s *Service) Executive(ctx context.Context, days *int) (Executive, error) {
	g, f, err := s.read(ctx, days)
	if err != nil {
		return Executive{}, err
	}
	cur, rate, err := s.money.Currency(ctx)
	if err != nil {
		return Executive{}, err
	}
	return Executive{Governance: g, MeanScore: f.MeanScore, Verdicts: f.Verdicts, OpenIncidentsCritical: f.OpenIncidentsCritical,
		OpenIncidentsWarning: f.OpenIncidentsWarning, Reads: f.Reads, UntrustedReads: f.UntrustedReads,
		LLMCost: finops.Convert(0, cur, rate)}, nil
}

func (s *Service) read(ctx context.Context, days *int) (Governance, Facts, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Governance{}, Facts{}, err
	}
	d := DefaultDays
	if days != nil {
		d = *days
	}
	if d < 1 {
		return Governance{}, Facts{}, vigia.Invalid(vigia.Field("greater_than_equal", map[string]any{"ge": 1}, "days"))
	}
	if d > MaxDays {
		return Governance{}, Facts{}, vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"le": MaxDays}, "days"))
	}
	now := s.clock.Now().UTC()
	f, err := s.store.DashboardFacts(ctx, catalog.ViewerOf(p), now.AddDate(0, 0, -d))
	if err != nil {
		return Governance{}, Facts{}, err
	}
	return Compose(f, d, now), f, nil
}

// Compose turns the facts into the governance metrics.
func Compose(f Facts, days int, now time.Time) Governance {
	share := func(n int) Share { return Share{Count: n, Pct: pct(n, f.Datasets)} }
	return Governance{AsOf: now, PeriodDays: days,
		Coverage: Coverage{Datasets: f.Datasets, Profiled: share(f.Profiled), WithOwner: share(f.WithOwner), WithDomain: share(f.WithDomain),
			WithRules: share(f.WithRules), WithContract: share(f.WithContract), SensitivityRev: share(f.SensitivityReviewed)},
		IssueFlow: IssueFlow{Opened: f.Opened, Resolved: f.Resolved, Ignored: f.Ignored, OpenNow: f.OpenNow, OpenCritical: f.OpenCritical,
			OpenWarning: f.OpenWarning, OpenBreached: f.OpenBreached},
		SLA: SLA{ClosedInScope: f.ClosedInScope, Met: f.ClosedWithinSLA, Breached: f.ClosedInScope - f.ClosedWithinSLA,
			AttainmentPct: pct(f.ClosedWithinSLA, f.ClosedInScope)}}
}

// pct is n of whole in percent with one decimal; nil when whole is 0.
func pct(n, whole int) *float64 {
	if whole == 0 {
		return nil
	}
	v := math.Round(float64(n)*1000/float64(whole)) / 10
	return &v
}
