package product

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/trust"
)

// DatasetVerdict is a member dataset's verdict and score.
type DatasetVerdict struct {
	DatasetID   string
	DatasetName string
	Verdict     string
	Score       *float64
}

// DomainVerdict is a domain's aggregated verdict over the datasets the caller can see.
type DomainVerdict struct {
	DomainID string
	Verdict  string
	// Score is the mean of the datasets' latest scores (nil when none has one).
	Score    *float64
	Counts   map[string]int
	Datasets []DatasetVerdict
}

// memberFacts loads the facts of the domain's datasets the caller can see, by name,
// with their assessments.
func (s *Service) memberFacts(ctx context.Context, d Domain) ([]trust.Facts, map[string]trust.Assessment, error) {
	as, err := s.trust.Assess(ctx, d.DatasetIDs)
	if err != nil {
		return nil, nil, err
	}
	out := make([]trust.Facts, 0, len(as))
	for _, id := range d.DatasetIDs {
		if a, ok := as[id]; ok {
			out = append(out, a.Facts)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, as, nil
}

func verdictOf(d Domain, fs []trust.Facts) DomainVerdict {
	out := DomainVerdict{DomainID: d.ID, Counts: map[string]int{"pass": 0, "warn": 0, "fail": 0, "unknown": 0},
		Datasets: make([]DatasetVerdict, 0, len(fs))}
	vs := make([]quality.Verdict, 0, len(fs))
	sum, n := 0.0, 0
	for _, f := range fs {
		v := f.Verdict
		if v == "" {
			v = "unknown"
		}
		vs = append(vs, quality.Verdict(v))
		out.Counts[v]++
		out.Datasets = append(out.Datasets, DatasetVerdict{DatasetID: f.DatasetID, DatasetName: f.Name(), Verdict: v, Score: f.LatestScore})
		if f.LatestScore != nil {
			sum += *f.LatestScore
			n++
		}
	}
	out.Verdict = string(quality.AggregateVerdict(vs))
	if n > 0 {
		sc := round2(sum / float64(n))
		out.Score = &sc
	}
	return out
}

// Verdict returns the domain's aggregated verdict: the worst of its datasets' in the
// order fail, warn, unknown, pass (unknown without datasets). Returns KindNotFound for
// a domain the caller cannot see.
func (s *Service) Verdict(ctx context.Context, id string) (DomainVerdict, error) {
	d, _, err := s.domain(ctx, id)
	if err != nil {
		return DomainVerdict{}, err
	}
	fs, _, err := s.memberFacts(ctx, d)
	if err != nil {
		return DomainVerdict{}, err
	}
	return verdictOf(d, fs), nil
}

// Readiness returns the domain's readiness per use case with its consumers by kind.
// Returns KindNotFound for a domain the caller cannot see.
func (s *Service) Readiness(ctx context.Context, id string) (Readiness, error) {
	d, _, err := s.domain(ctx, id)
	if err != nil {
		return Readiness{}, err
	}
	fs, as, err := s.memberFacts(ctx, d)
	if err != nil {
		return Readiness{}, err
	}
	return s.readiness(ctx, d, fs, as)
}

func (s *Service) readiness(ctx context.Context, d Domain, fs []trust.Facts, as map[string]trust.Assessment) (Readiness, error) {
	list := make([]trust.Readiness, 0, len(fs))
	for _, f := range fs {
		list = append(list, as[f.DatasetID].Readiness)
	}
	slo, err := s.slo(ctx, d, s.clock.Now(), fs)
	if err != nil {
		return Readiness{}, err
	}
	cs, err := s.consumers(ctx, d)
	if err != nil {
		return Readiness{}, err
	}
	return ComputeReadiness(d, list, slo.AvailabilityPct, CountConsumers(cs)), nil
}

var monthRE = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)

// SLO returns the domain's SLO attainment in month (YYYY-MM, the current month when
// nil), per dataset the caller can see, in the workspace's time zone. Returns
// KindInvalid for a malformed month and KindNotFound for a domain the caller cannot see.
func (s *Service) SLO(ctx context.Context, id string, month *string) (SLOReport, error) {
	var at time.Time
	if month != nil {
		if !monthRE.MatchString(*month) {
			return SLOReport{}, vigia.Invalid(vigia.Field("month_format", nil, "month"))
		}
		t, err := time.Parse("2006-01", *month)
		if err != nil {
			return SLOReport{}, vigia.Invalid(vigia.Field("month_format", nil, "month"))
		}
		at = t.Add(36 * time.Hour) // inside the month whatever the zone
	}
	d, _, err := s.domain(ctx, id)
	if err != nil {
		return SLOReport{}, err
	}
	if at.IsZero() {
		at = s.clock.Now()
	}
	fs, _, err := s.memberFacts(ctx, d)
	if err != nil {
		return SLOReport{}, err
	}
	return s.slo(ctx, d, at, fs)
}

// slo computes the month of the members fs (the visible ones, by name).
func (s *Service) slo(ctx context.Context, d Domain, month time.Time, fs []trust.Facts) (SLOReport, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return SLOReport{}, err
	}
	tz, err := s.store.WorkspaceTimezone(ctx, d.WorkspaceID)
	if err != nil {
		return SLOReport{}, err
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	m := month.In(loc)
	start := time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, loc)
	end := start.AddDate(0, 1, 0)
	datasets := make([]SLODataset, 0, len(fs))
	for _, f := range fs {
		datasets = append(datasets, SLODataset{DatasetID: f.DatasetID, DatasetName: f.Name()})
	}
	cov, err := s.store.Coverage(ctx, catalog.ViewerOf(p), d.ID, start, end)
	if err != nil {
		return SLOReport{}, err
	}
	return ComputeSLO(SLOInput{Month: start, Location: loc, Now: s.clock.Now(), HistoryDays: s.cfg.HistoryDays, SLA: d.SLA,
		Datasets: datasets, Coverage: cov}), nil
}

// Consumers lists the domain's consumers: those registered by hand, then those derived
// from the consumer registry (reads of the datasets the caller can see in the last 30
// days). Returns KindNotFound for a domain the caller cannot see.
func (s *Service) Consumers(ctx context.Context, id string) ([]DomainConsumer, error) {
	d, _, err := s.domain(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.consumers(ctx, d)
}

// ConsumerPage lists one page of the domain's consumers (see Consumers).
func (s *Service) ConsumerPage(ctx context.Context, id string, page vigia.Page) (vigia.List[DomainConsumer], error) {
	cs, err := s.Consumers(ctx, id)
	if err != nil {
		return vigia.List[DomainConsumer]{}, err
	}
	return paginate(cs, page), nil
}

func (s *Service) consumers(ctx context.Context, d Domain) ([]DomainConsumer, error) {
	manual, err := s.store.ManualConsumers(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	derived, err := s.trust.ConsumersOf(ctx, d.DatasetIDs, s.clock.Now().Add(-30*24*time.Hour))
	if err != nil {
		return nil, err
	}
	out := append([]DomainConsumer{}, manual...)
	for _, c := range derived {
		kind := c.Kind
		out = append(out, DomainConsumer{ID: c.ID, DomainID: d.ID, WorkspaceID: d.WorkspaceID, Name: c.Name, Kind: DomainKindOf(c.Kind),
			Source: SourceDerived, RegistryKind: &kind, Consumptions30: c.Consumptions30d, Datasets30: c.Datasets30d,
			LastConsumedAt: c.LastConsumedAt, CreatedAt: c.CreatedAt})
	}
	sortConsumers(out)
	return out, nil
}

// ConsumerInput registers a consumer on a domain by hand.
type ConsumerInput struct {
	Name      string
	Kind      string
	ChannelID *string
}

var consumerNameRE = regexp.MustCompile(`^[\p{L}\p{M}\p{N} _.:/\-]+$`)

// AddConsumer registers a consumer of the domain by hand (a manager's or admin's
// session); a channel_id names the notification channel that receives critical SLA
// breach notices. Returns KindInvalid for a bad name or kind, KindConflict when the
// name and kind are taken, KindNotFound for a channel not in the workspace, and
// KindNotFound and KindForbidden as UpdateDomain.
func (s *Service) AddConsumer(ctx context.Context, id string, in ConsumerInput) (DomainConsumer, error) {
	var fields []vigia.FieldError
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || utf8.RuneCountInString(in.Name) > 200 || !consumerNameRE.MatchString(in.Name) {
		fields = append(fields, vigia.Field("consumer_name", map[string]any{"max_length": 200}, "name"))
	}
	switch in.Kind {
	case ConsumerUser, ConsumerAISystem, ConsumerDBTExposure, ConsumerExternal:
	default:
		fields = append(fields, vigia.Field("enum", nil, "kind"))
	}
	if in.ChannelID != nil && !vigia.ValidID(*in.ChannelID) {
		fields = append(fields, vigia.Field("value_error", nil, "channel_id"))
	}
	if len(fields) > 0 {
		return DomainConsumer{}, vigia.Invalid(fields...)
	}
	d, p, err := s.managed(ctx, id)
	if err != nil {
		return DomainConsumer{}, err
	}
	if err := vigia.CheckRefs(ctx, s.store, d.WorkspaceID, vigia.RefOf(vigia.RefChannel, in.ChannelID)...); err != nil {
		return DomainConsumer{}, err
	}
	c := DomainConsumer{ID: vigia.NewID(), DomainID: d.ID, WorkspaceID: d.WorkspaceID, Name: in.Name, Kind: in.Kind, Source: SourceManual,
		ChannelID: in.ChannelID, CreatedBy: p.UserID, CreatedAt: s.clock.Now()}
	if err := s.store.AddManualConsumer(ctx, c); err != nil {
		return DomainConsumer{}, err
	}
	return c, nil
}

// DeleteConsumer removes a consumer registered by hand. Returns KindNotFound when the
// domain or the consumer is not there, KindForbidden as UpdateDomain.
func (s *Service) DeleteConsumer(ctx context.Context, id, consumerID string) error {
	d, _, err := s.managed(ctx, id)
	if err != nil {
		return err
	}
	if !vigia.ValidID(consumerID) {
		return vigia.NotFound()
	}
	ok, err := s.store.DeleteManualConsumer(ctx, d.ID, consumerID)
	if err != nil {
		return err
	}
	if !ok {
		return vigia.NotFound()
	}
	return nil
}

// DomainFacts is the trust facts envelope of a domain.
type DomainFacts struct {
	SchemaVersion string
	GeneratedAt   time.Time
	Domain        Domain
	Verdict       DomainVerdict
	SLO           SLOReport
	Readiness     Readiness
	Datasets      []DatasetFact
}

// DatasetFact is one member in the domain's trust facts.
type DatasetFact struct {
	DatasetID    string
	DatasetName  string
	Verdict      string
	Score        *float64
	TrustScore   float64
	TrustGrade   string
	OpenCritical int
	OpenWarning  int
	LastScanAt   *time.Time
}

// TrustFacts returns the domain's trust facts envelope: status, version, SLA, verdict,
// this month's SLO, readiness and each visible dataset's verdict, score and trust grade.
// Returns KindNotFound for a domain the caller cannot see.
func (s *Service) TrustFacts(ctx context.Context, id string) (DomainFacts, error) {
	d, _, err := s.domain(ctx, id)
	if err != nil {
		return DomainFacts{}, err
	}
	now := s.clock.Now()
	fs, as, err := s.memberFacts(ctx, d)
	if err != nil {
		return DomainFacts{}, err
	}
	r, err := s.readiness(ctx, d, fs, as)
	if err != nil {
		return DomainFacts{}, err
	}
	slo, err := s.slo(ctx, d, now, fs)
	if err != nil {
		return DomainFacts{}, err
	}
	out := DomainFacts{SchemaVersion: trust.FactsSchemaVersion, GeneratedAt: now, Domain: d, Verdict: verdictOf(d, fs), SLO: slo,
		Readiness: r, Datasets: make([]DatasetFact, 0, len(fs))}
	for _, f := range fs {
		sc := as[f.DatasetID].Score
		v := f.Verdict
		if v == "" {
			v = "unknown"
		}
		out.Datasets = append(out.Datasets, DatasetFact{DatasetID: f.DatasetID, DatasetName: f.Name(), Verdict: v, Score: f.LatestScore,
			TrustScore: sc.Score, TrustGrade: sc.Grade, OpenCritical: f.CriticalIssues, OpenWarning: f.WarningIssues, LastScanAt: f.LastScanAt})
	}
	return out, nil
}

// Metadata-quality problem codes.
const (
	ProblemMissingOwner       = "missing_owner"
	ProblemMissingDomain      = "missing_domain"
	ProblemMissingDescription = "missing_description"
	ProblemMissingSLA         = "missing_sla"
	ProblemNotProfiled        = "not_profiled"
	ProblemNoTimestamp        = "no_timestamp"
)

// maxListed is how many datasets a problem lists.
const maxListed = 5

// ReachDataset is a dataset listed by a problem, with its downstream reach.
type ReachDataset struct {
	DatasetID       string
	DatasetName     string
	DownstreamReach int
}

// Suggestion says where a fix can come from: channel lineage (domain suggestions from
// lineage links) or domain (set it on the data product).
type Suggestion struct {
	Channel string
	Action  string
}

// Problem is one metadata problem: how many datasets (or domains) have it and up to 5
// datasets by downstream reach, largest first, ties by name.
type Problem struct {
	Code       string
	Count      int
	Datasets   []ReachDataset
	Suggestion *Suggestion
}

// MetadataQuality is the metadata-quality read of the catalog or of a domain.
type MetadataQuality struct {
	DomainID      *string
	DatasetsTotal int
	// Score is the share of checks passed, 0-100.
	Score    float64
	Problems []Problem
}

// listByReach returns up to 5 of the datasets by downstream reach, ties by name.
func (s *Service) listByReach(ctx context.Context, ids []string, names map[string]string) ([]ReachDataset, error) {
	out := []ReachDataset{}
	if len(ids) == 0 {
		return out, nil
	}
	reach, err := s.lineage.DownstreamReach(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		out = append(out, ReachDataset{DatasetID: id, DatasetName: names[id], DownstreamReach: reach[id]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.DownstreamReach != b.DownstreamReach {
			return a.DownstreamReach > b.DownstreamReach
		}
		if a.DatasetName != b.DatasetName {
			return a.DatasetName < b.DatasetName
		}
		return a.DatasetID < b.DatasetID
	})
	if len(out) > maxListed {
		out = out[:maxListed]
	}
	return out, nil
}

// CatalogMetadataQuality reports the datasets the caller can see without a domain
// (missing_domain) or without an owner (none of their domains has one: missing_owner),
// each problem listing up to 5 datasets by downstream reach, ties by name, with the
// suggestion channel lineage (GET /api/v1/domains/suggestions proposes domains from
// lineage links, and a domain's owner then covers the dataset).
func (s *Service) CatalogMetadataQuality(ctx context.Context) (MetadataQuality, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return MetadataQuality{}, err
	}
	metas, err := s.store.DatasetMeta(ctx, catalog.ViewerOf(p))
	if err != nil {
		return MetadataQuality{}, err
	}
	names := map[string]string{}
	var noDomain, noOwner []string
	for _, m := range metas {
		names[m.ID] = m.Name
		if !m.HasDomain {
			noDomain = append(noDomain, m.ID)
		}
		if !m.HasOwner {
			noOwner = append(noOwner, m.ID)
		}
	}
	out := MetadataQuality{DatasetsTotal: len(metas), Problems: []Problem{}}
	sugg := &Suggestion{Channel: "lineage", Action: "GET /api/v1/domains/suggestions"}
	for _, pr := range []struct {
		code string
		ids  []string
	}{{ProblemMissingDomain, noDomain}, {ProblemMissingOwner, noOwner}} {
		listed, err := s.listByReach(ctx, pr.ids, names)
		if err != nil {
			return MetadataQuality{}, err
		}
		out.Problems = append(out.Problems, Problem{Code: pr.code, Count: len(pr.ids), Datasets: listed, Suggestion: sugg})
	}
	out.Score = 100
	if len(metas) > 0 {
		out.Score = round2(100 * float64(2*len(metas)-len(noDomain)-len(noOwner)) / float64(2*len(metas)))
	}
	return out, nil
}

// MetadataQuality reports a domain's metadata problems: missing_owner,
// missing_description and missing_sla (no availability objective and no retention) of
// the domain, and its visible datasets never profiled (not_profiled) or without a
// timestamp column to measure freshness (no_timestamp). Returns KindNotFound for a
// domain the caller cannot see.
func (s *Service) MetadataQuality(ctx context.Context, id string) (MetadataQuality, error) {
	d, _, err := s.domain(ctx, id)
	if err != nil {
		return MetadataQuality{}, err
	}
	fs, _, err := s.memberFacts(ctx, d)
	if err != nil {
		return MetadataQuality{}, err
	}
	names := map[string]string{}
	var notProfiled, noTS []string
	for _, f := range fs {
		names[f.DatasetID] = f.Name()
		switch {
		case !f.Profiled:
			notProfiled = append(notProfiled, f.DatasetID)
		case f.LatestTimestamp == nil:
			noTS = append(noTS, f.DatasetID)
		}
	}
	domainID := d.ID
	out := MetadataQuality{DomainID: &domainID, DatasetsTotal: len(fs), Problems: []Problem{}}
	checks, failed := 3+2*len(fs), 0
	domainProblem := func(code string, missing bool) {
		if missing {
			failed++
			out.Problems = append(out.Problems, Problem{Code: code, Count: 1, Datasets: []ReachDataset{},
				Suggestion: &Suggestion{Channel: "domain", Action: "PATCH /api/v1/domains/" + d.ID}})
		}
	}
	domainProblem(ProblemMissingOwner, d.OwnerName == nil || *d.OwnerName == "")
	domainProblem(ProblemMissingDescription, strings.TrimSpace(d.Description) == "")
	domainProblem(ProblemMissingSLA, d.SLA.AvailabilityObjectivePct == nil && d.SLA.RetentionDays == nil)
	for _, pr := range []struct {
		code, action string
		ids          []string
	}{{ProblemNotProfiled, "POST /api/v1/scans", notProfiled}, {ProblemNoTimestamp, "GET /api/v1/datasets/{dataset_id}/freshness", noTS}} {
		if len(pr.ids) == 0 {
			continue
		}
		failed += len(pr.ids)
		if pr.code == ProblemNotProfiled {
			failed += len(pr.ids) // a dataset never profiled has no timestamp measured either
		}
		listed, err := s.listByReach(ctx, pr.ids, names)
		if err != nil {
			return MetadataQuality{}, err
		}
		out.Problems = append(out.Problems, Problem{Code: pr.code, Count: len(pr.ids), Datasets: listed,
			Suggestion: &Suggestion{Channel: "scan", Action: pr.action}})
	}
	out.Score = round2(100 * float64(checks-failed) / float64(checks))
	return out, nil
}
