// Package trust tells people, pipelines and AI agents whether a dataset can be trusted:
// the trust score with its components, blockers and warnings; AI readiness per use
// case; the trust decision for a purpose (one dataset or a batch), recorded in the audit
// trail when an API token asks; the context and trust facts agents read; and the
// consumer registry, whose untrusted reads notify the workspace within caps. Everything
// is computed from the record (scores, verdicts, profiles, issues) without an LLM.
package trust

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
)

// Store is the persistence trust needs. Every read is scoped to the viewer's workspace
// and visibility (the vigia_dataset_visible rule).
type Store interface {
	// Facts loads the facts of the datasets among ids that the viewer can see, at now,
	// in a fixed number of queries; invisible or unknown ids are absent.
	Facts(ctx context.Context, v catalog.Viewer, ids []string, now time.Time) (map[string]Facts, error)
	// AddActivity appends to the audit trail.
	AddActivity(ctx context.Context, a event.Activity) error
	// FindDatasets searches the viewer's datasets; at most limit, in relevance order,
	// truncated when more matched.
	FindDatasets(ctx context.Context, v catalog.Viewer, f FindFilter, now time.Time, limit int) ([]Found, bool, error)
	ConsumerStore
}

// Messages renders catalogue messages (i18n.Catalog).
type Messages interface {
	Message(lang, key string, params map[string]any) string
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Datasets is what trust needs of the catalog.
type Datasets interface {
	FindDatasets(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error)
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// ServiceConfig bounds the service.
type ServiceConfig struct {
	Rules Config
	// ConsumptionsPerMinute is the workspace limit of recorded reads per minute (600 by
	// default); above it POST /trust/consumptions answers 429.
	ConsumptionsPerMinute int
	// NoticeCap is the workspace's untrusted-read notices per hour (20, the contract's).
	NoticeCap int
	// Pipelines tells the failing and late pipelines writing datasets; nil: none.
	Pipelines Pipelines
}

// Service answers trust reads and records consumptions.
type Service struct {
	store    Store
	tx       Tx
	datasets Datasets
	msgs     Messages
	clock    vigia.Clock
	cfg      ServiceConfig
}

// NewService returns the trust service.
func NewService(store Store, tx Tx, datasets Datasets, msgs Messages, clock vigia.Clock, cfg ServiceConfig) *Service {
	if cfg.ConsumptionsPerMinute <= 0 {
		cfg.ConsumptionsPerMinute = 600
	}
	if cfg.NoticeCap <= 0 {
		cfg.NoticeCap = 20
	}
	cfg.Rules = cfg.Rules.withDefaults()
	return &Service{store: store, tx: tx, datasets: datasets, msgs: msgs, clock: clock, cfg: cfg}
}

// ptPT is the language of the contract's pt-PT messages (trust findings, reasons).
const ptPT = "pt-PT"

// facts loads the visible datasets' facts with their contract state.
func (s *Service) facts(ctx context.Context, ids []string, now time.Time) (map[string]Facts, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	valid := vigia.ValidIDs(ids)
	if len(valid) == 0 {
		return map[string]Facts{}, nil
	}
	fs, err := s.store.Facts(ctx, catalog.ViewerOf(p), valid, now)
	if err != nil {
		return nil, err
	}
	var pipes map[string][]PipelineFact
	if s.cfg.Pipelines != nil && len(fs) > 0 {
		seen := make([]string, 0, len(fs))
		for id := range fs {
			seen = append(seen, id)
		}
		if pipes, err = s.cfg.Pipelines.PipelineFacts(ctx, p.WorkspaceID, seen, now); err != nil {
			return nil, err
		}
	}
	for id, f := range fs {
		f.Pipelines = pipes[id]
		f.CountIssues()
		fs[id] = f
	}
	return fs, nil
}

// one loads one dataset's facts; KindNotFound when the caller cannot see it.
func (s *Service) one(ctx context.Context, id string, now time.Time) (Facts, error) {
	if !vigia.ValidID(id) {
		return Facts{}, vigia.NotFound()
	}
	fs, err := s.facts(ctx, []string{id}, now)
	if err != nil {
		return Facts{}, err
	}
	f, ok := fs[id]
	if !ok {
		return Facts{}, vigia.NotFound()
	}
	return f, nil
}

// Assessment is what trust says of one dataset: its facts, readiness and trust score.
type Assessment struct {
	Facts     Facts
	Readiness Readiness
	Score     Score
}

// Assess returns the assessments of the datasets among ids the caller can see, for
// other features (data products); invisible ids are absent.
func (s *Service) Assess(ctx context.Context, ids []string) (map[string]Assessment, error) {
	now := s.clock.Now()
	fs, err := s.facts(ctx, ids, now)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Assessment, len(fs))
	for id, f := range fs {
		out[id] = Assessment{Facts: f, Readiness: s.render(ComputeReadiness(f, now, s.cfg.Rules)),
			Score: s.renderScore(ComputeScore(f, now, s.cfg.Rules))}
	}
	return out, nil
}

// TrustScore returns a dataset's trust score. Returns KindNotFound when the caller
// cannot see the dataset.
func (s *Service) TrustScore(ctx context.Context, datasetID string) (Score, error) {
	now := s.clock.Now()
	f, err := s.one(ctx, datasetID, now)
	if err != nil {
		return Score{}, err
	}
	return s.renderScore(ComputeScore(f, now, s.cfg.Rules)), nil
}

// TrustScores returns the trust scores of the datasets among ids the caller can see.
func (s *Service) TrustScores(ctx context.Context, ids []string) (map[string]Score, error) {
	now := s.clock.Now()
	fs, err := s.facts(ctx, ids, now)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Score, len(fs))
	for id, f := range fs {
		out[id] = s.renderScore(ComputeScore(f, now, s.cfg.Rules))
	}
	return out, nil
}

// DatasetDetail returns one dataset like catalog's Dataset with its trust brief: the
// blockers and warnings of its trust score. Returns KindNotFound if it does not exist
// or the caller cannot see it.
//
// The dataset and its trust facts are read concurrently (two round trips at once, not
// one after the other): it is never called inside a transaction (the REST detail).
func (s *Service) DatasetDetail(ctx context.Context, id string) (catalog.Dataset, error) {
	var sc Score
	var scErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc, scErr = s.TrustScore(ctx, id)
	}()
	d, err := s.datasets.Dataset(ctx, id)
	<-done
	if err != nil {
		return d, err
	}
	if scErr != nil {
		return d, scErr
	}
	return withBrief(d, sc), nil
}

// Now is the time of the service's clock: the now a caller reading facts for
// DetailOf reads them at.
func (s *Service) Now() time.Time { return s.clock.Now() }

// DetailOf is DatasetDetail from reads already made, for a reader that fetches them in
// one round trip: d as catalog's Dataset returns it (visible to the caller) and f its
// facts as Store.Facts reads them at now. The score does not weigh the pipelines writing
// the dataset (decisions do), so f needs none.
func (s *Service) DetailOf(d catalog.Dataset, f Facts, now time.Time) catalog.Dataset {
	f.CountIssues()
	return withBrief(d, s.renderScore(ComputeScore(f, now, s.cfg.Rules)))
}

// withBrief adds the trust brief of score sc to d.
func withBrief(d catalog.Dataset, sc Score) catalog.Dataset {
	d.Trust = &catalog.TrustBrief{Score: sc.Score, Grade: sc.Grade, Blockers: toItems(sc.Blockers), Warnings: toItems(sc.Warnings)}
	return d
}

func toItems(fs []Finding) []catalog.TrustItem {
	out := make([]catalog.TrustItem, 0, len(fs))
	for _, f := range fs {
		out = append(out, catalog.TrustItem{Key: f.Key, Message: f.Message, Params: f.Params})
	}
	return out
}

// FindDatasetsWithTrust lists datasets like catalog.FindDatasets and adds the page's
// trust scores (GET /datasets?include=trust).
func (s *Service) FindDatasetsWithTrust(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], map[string]Score, error) {
	page, err := s.datasets.FindDatasets(ctx, f)
	if err != nil {
		return page, nil, err
	}
	ids := make([]string, 0, len(page.Items))
	for _, d := range page.Items {
		ids = append(ids, d.ID)
	}
	scores, err := s.TrustScores(ctx, ids)
	return page, scores, err
}

// AIReadiness returns a dataset's AI readiness. Returns KindNotFound when the caller
// cannot see the dataset.
func (s *Service) AIReadiness(ctx context.Context, datasetID string) (Readiness, error) {
	now := s.clock.Now()
	f, err := s.one(ctx, datasetID, now)
	if err != nil {
		return Readiness{}, err
	}
	return s.render(ComputeReadiness(f, now, s.cfg.Rules)), nil
}

// invalidPurpose is the 422 of an unknown purpose.
func invalidPurpose(loc ...string) error {
	return vigia.Invalid(vigia.Field("enum", nil, loc...))
}

// Decide returns the trust decision of a dataset for purpose ("" is agente, ml is
// treino). A call through an API token is written to the audit trail. Returns
// KindInvalid for an unknown purpose and KindNotFound when the caller cannot see the
// dataset.
func (s *Service) Decide(ctx context.Context, datasetID, purpose string) (Decision, error) {
	pp, ok := NormalizePurpose(purpose)
	if !ok {
		return Decision{}, invalidPurpose("purpose")
	}
	now := s.clock.Now()
	f, err := s.one(ctx, datasetID, now)
	if err != nil {
		return Decision{}, err
	}
	d := s.decide(f, pp, now)
	if err := s.audit(ctx, "trust_decision.read", "dataset", f.DatasetID, map[string]any{"purpose": pp, "decision": d.Decision}, now); err != nil {
		return Decision{}, err
	}
	return d, nil
}

// MaxBatch is the most datasets one batch decision or consumption names.
const MaxBatch = 50

// Batch is the answer of POST /trust-decisions.
type Batch struct {
	Purpose   string
	AsOf      time.Time
	Decisions []Decision
	// NotFound are the requested ids the caller cannot see (or that do not exist), in
	// request order.
	NotFound []string
}

// DecideBatch returns the decisions of up to 50 datasets for one purpose, in request
// order (duplicates once); ids the caller cannot see are listed in NotFound. A call
// through an API token is written to the audit trail. Returns KindInvalid for an empty
// or too long list or an unknown purpose.
func (s *Service) DecideBatch(ctx context.Context, ids []string, purpose string) (Batch, error) {
	pp, ok := NormalizePurpose(purpose)
	if !ok {
		return Batch{}, invalidPurpose("purpose")
	}
	if len(ids) == 0 {
		return Batch{}, vigia.Invalid(vigia.Field("too_short", map[string]any{"min_length": 1}, "dataset_ids"))
	}
	if len(ids) > MaxBatch {
		return Batch{}, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": MaxBatch}, "dataset_ids"))
	}
	now := s.clock.Now()
	uniq := dedupe(ids)
	fs, err := s.facts(ctx, uniq, now)
	if err != nil {
		return Batch{}, err
	}
	out := Batch{Purpose: pp, AsOf: now, Decisions: []Decision{}, NotFound: []string{}}
	counts := map[string]int{}
	for _, id := range uniq {
		f, ok := fs[id]
		if !ok {
			out.NotFound = append(out.NotFound, id)
			continue
		}
		d := s.decide(f, pp, now)
		counts[d.Decision]++
		out.Decisions = append(out.Decisions, d)
	}
	found := make([]string, 0, len(out.Decisions))
	for _, d := range out.Decisions {
		found = append(found, d.DatasetID)
	}
	if err := s.audit(ctx, "trust_decision.batch_read", "datasets", "batch",
		map[string]any{"purpose": pp, "dataset_ids": found, "not_found": len(out.NotFound), "decisions": counts}, now); err != nil {
		return Batch{}, err
	}
	return out, nil
}

func (s *Service) decide(f Facts, purpose string, now time.Time) Decision {
	// Only the reasons' messages are shown: the readiness itself stays unrendered.
	r := ComputeReadiness(f, now, s.cfg.Rules)
	d := Decide(f, r, purpose, now, s.cfg.Rules)
	for i, rs := range d.Reasons {
		params := map[string]any{}
		for k, v := range rs.Params {
			params[k] = v
		}
		if rs.Finding != nil {
			params["detail"] = s.msgs.Message(ptPT, rs.Finding.MessageKey(), rs.Finding.Params)
		}
		d.Reasons[i].Message = s.msgs.Message(ptPT, rs.MessageKey(), params)
	}
	d.Recommended = s.msgs.Message(ptPT, d.RecommendedKey, map[string]any{"purpose": purpose})
	return d
}

// audit records a call made through an API token; people's reads are not audited.
func (s *Service) audit(ctx context.Context, action, subjectType, subjectID string, details map[string]any, now time.Time) error {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil || !p.IsToken() {
		return err
	}
	return s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Actor: "token:" + p.TokenID,
		Action: action, SubjectType: subjectType, SubjectID: subjectID, Details: details, CreatedAt: now})
}

// renderScore fills the pt-PT messages of a trust score.
func (s *Service) renderScore(sc Score) Score {
	for i := range sc.Blockers {
		sc.Blockers[i].Message = s.msgs.Message(ptPT, sc.Blockers[i].MessageKey(), sc.Blockers[i].Params)
	}
	for i := range sc.Warnings {
		sc.Warnings[i].Message = s.msgs.Message(ptPT, sc.Warnings[i].MessageKey(), sc.Warnings[i].Params)
	}
	for i := range sc.Components {
		if a := sc.Components[i].Action; a != nil {
			a.Message = s.msgs.Message(ptPT, a.MessageKey(), a.Params)
		}
	}
	return sc
}

// render fills the pt-PT messages of a readiness.
func (s *Service) render(r Readiness) Readiness {
	for i := range r.UseCases {
		u := &r.UseCases[i]
		for j := range u.Blockers {
			u.Blockers[j].Message = s.msgs.Message(ptPT, u.Blockers[j].MessageKey(), u.Blockers[j].Params)
		}
		for j := range u.Warnings {
			u.Warnings[j].Message = s.msgs.Message(ptPT, u.Warnings[j].MessageKey(), u.Warnings[j].Params)
		}
	}
	for i := range r.Recommendations {
		r.Recommendations[i].Message = s.msgs.Message(ptPT, r.Recommendations[i].MessageKey(), nil)
	}
	return r
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// EditorBrief is what an editor shows beside a table name: the agent decision, the
// latest score and the owner of the dataset's first domain. Columns are the facts'
// columns (names, types and semantic types: no values).
type EditorBrief struct {
	Decision Decision
	Score    *float64
	Owner    *string
	PII      []string
}

// EditorBrief returns the editor brief of a dataset for the default purpose; unlike
// Decide it is not written to the audit trail (an editor asks as one types).
// KindNotFound when the caller cannot see the dataset.
func (s *Service) EditorBrief(ctx context.Context, datasetID string) (EditorBrief, error) {
	now := s.clock.Now()
	f, err := s.one(ctx, datasetID, now)
	if err != nil {
		return EditorBrief{}, err
	}
	pp, _ := NormalizePurpose("")
	b := EditorBrief{Decision: s.decide(f, pp, now), Score: f.LatestScore}
	for _, d := range f.Domains {
		if d.OwnerName != nil {
			b.Owner = d.OwnerName
			break
		}
	}
	b.PII, _ = PII(f.Columns)
	return b, nil
}
