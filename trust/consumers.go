package trust

import (
	"context"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
)

// Consumer kinds (contract part 6, consumer_read).
const (
	KindAgent       = "agent"
	KindApplication = "application"
	KindPipeline    = "pipeline"
	KindNotebook    = "notebook"
)

// EventUntrustedRead is the outbox type of an untrusted-read notice; the webhook
// feature delivers it as service.consumer.untrusted_read.
const EventUntrustedRead = "consumer.untrusted_read"

// Consumer is a registered consumer with its counters (computed over the datasets the
// caller can see; on a dataset's list, over that dataset).
type Consumer struct {
	ID          string
	WorkspaceID string
	Name        string
	Kind        string
	Framework   *string
	CreatedAt   time.Time
	Counters
}

// Counters are a consumer's activity.
type Counters struct {
	Consumptions7d  int
	Consumptions30d int
	Datasets30d     int
	// Decisions7d counts the datasets read in the last 7 days by the decision seen.
	Decisions7d    map[string]int
	LastDecision   *string
	LastPurpose    *string
	LastConsumedAt *time.Time
}

// ConsumerRef names the consumer of a read.
type ConsumerRef struct {
	Name      string
	Kind      string
	RunRef    *string
	Framework *string
}

// DecisionSeen is the decision the consumer saw before reading and when it was made.
type DecisionSeen struct {
	Decision string
	AsOf     *time.Time
}

// ConsumptionInput is one read to record.
type ConsumptionInput struct {
	Consumer     ConsumerRef
	DatasetIDs   []string
	Purpose      string
	DecisionSeen *DecisionSeen
}

// Consumption is a recorded read.
type Consumption struct {
	ID          string
	WorkspaceID string
	ConsumerID  string
	RunRef      *string
	Purpose     string
	Actor       string
	CreatedAt   time.Time
	Datasets    []ConsumedDataset
}

// ConsumedDataset is one dataset of a read with the decision seen.
type ConsumedDataset struct {
	DatasetID   string
	DatasetName string
	Decision    string
	TrustAsOf   time.Time
}

// ConsumptionResult is the answer of RecordConsumption.
type ConsumptionResult struct {
	Consumption
	Consumer Consumer
	// Replayed is true when the run_ref had been recorded: nothing new was written.
	Replayed bool
}

// Notice is an untrusted-read notice for the events outbox.
type Notice struct {
	EventID        string
	WorkspaceID    string
	ConsumerID     string
	DatasetIDs     []string
	IdempotencyKey string
	Payload        map[string]any
	CreatedAt      time.Time
}

// ConsumerFilter selects consumers and the reads their counters cover.
type ConsumerFilter struct {
	// DatasetIDs restricts the reads counted (and lists only consumers with such a read
	// since Since); nil counts every visible read and lists every consumer.
	DatasetIDs []string
	Since      *time.Time
	Page       vigia.Page
}

// Exposure is a consumer as an incident shows it: who read a dataset recently.
type Exposure struct {
	ConsumerID     string
	Name           string
	Kind           string // agent, application, pipeline, notebook
	Framework      *string
	Consumptions7d int
	LastDecision   *string
	LastConsumedAt *time.Time
}

// ConsumerStore is the persistence of the consumer registry.
type ConsumerStore interface {
	// LockWorkspace serializes consumption writes of a workspace until the transaction
	// in ctx ends (the notice caps count what committed before).
	LockWorkspace(ctx context.Context, workspaceID string) error
	// EnsureConsumer returns the consumer with c's workspace, name and kind, creating it
	// from c at first registration; a given framework is kept.
	EnsureConsumer(ctx context.Context, c Consumer) (Consumer, error)
	ConsumptionByRunRef(ctx context.Context, consumerID, runRef string) (Consumption, bool, error)
	// ConsumptionsSince counts the workspace's reads since since, with the oldest one's time.
	ConsumptionsSince(ctx context.Context, workspaceID string, since time.Time) (int, time.Time, error)
	InsertConsumption(ctx context.Context, c Consumption) error
	// NotifiedDatasets returns which datasets already had a notice for the consumer since since.
	NotifiedDatasets(ctx context.Context, consumerID string, datasetIDs []string, since time.Time) (map[string]bool, error)
	NoticesSince(ctx context.Context, workspaceID string, since time.Time) (int, error)
	// InsertNotice writes the notice to the events outbox and to the notice log.
	InsertNotice(ctx context.Context, n Notice) error
	Consumers(ctx context.Context, v catalog.Viewer, f ConsumerFilter, now time.Time) (vigia.List[Consumer], error)
	ConsumerExposures(ctx context.Context, v catalog.Viewer, datasetIDs []string, since, now time.Time) (map[string][]Exposure, error)
}

// consumerNameRE is the contract's rule: letters of any language, digits, spaces and
// _ . : / - only.
var consumerNameRE = regexp.MustCompile(`^[\p{L}\p{M}\p{N} _.:/\-]+$`)

const (
	maxNameLen   = 200
	maxRunRefLen = 200
)

func validName(s string, max int) bool {
	return s != "" && utf8.RuneCountInString(s) <= max && consumerNameRE.MatchString(s)
}

func validRunRef(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > maxRunRefLen {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func validKind(k string) bool {
	switch k {
	case KindAgent, KindApplication, KindPipeline, KindNotebook:
		return true
	}
	return false
}

// validate checks a read; the 422 items say where and never echo what was sent.
func (in *ConsumptionInput) validate() (string, error) {
	var fields []vigia.FieldError
	in.Consumer.Name = strings.TrimSpace(in.Consumer.Name)
	switch {
	case in.Consumer.Name == "":
		fields = append(fields, vigia.Field("missing", nil, "consumer", "name"))
	case utf8.RuneCountInString(in.Consumer.Name) > maxNameLen:
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": maxNameLen}, "consumer", "name"))
	case !validName(in.Consumer.Name, maxNameLen):
		fields = append(fields, vigia.Field("consumer_name", nil, "consumer", "name"))
	}
	if !validKind(in.Consumer.Kind) {
		fields = append(fields, vigia.Field("enum", nil, "consumer", "kind"))
	}
	if in.Consumer.RunRef != nil && !validRunRef(*in.Consumer.RunRef) {
		fields = append(fields, vigia.Field("string_pattern_mismatch", map[string]any{"min_length": 1, "max_length": maxRunRefLen},
			"consumer", "run_ref"))
	}
	if in.Consumer.Framework != nil {
		fw := strings.TrimSpace(*in.Consumer.Framework)
		in.Consumer.Framework = &fw
		if !validName(fw, 100) {
			fields = append(fields, vigia.Field("consumer_name", map[string]any{"max_length": 100}, "consumer", "framework"))
		}
	}
	switch {
	case len(in.DatasetIDs) == 0:
		fields = append(fields, vigia.Field("too_short", map[string]any{"min_length": 1}, "datasets"))
	case len(in.DatasetIDs) > MaxBatch:
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxBatch}, "datasets"))
	}
	purpose, ok := NormalizePurpose(in.Purpose)
	if in.Purpose == "" {
		fields = append(fields, vigia.Field("missing", nil, "purpose"))
	} else if !ok {
		fields = append(fields, vigia.Field("enum", nil, "purpose"))
	}
	if in.DecisionSeen != nil && !ValidDecision(in.DecisionSeen.Decision) {
		fields = append(fields, vigia.Field("enum", nil, "decision_seen", "decision"))
	}
	if len(fields) > 0 {
		return "", vigia.Invalid(fields...)
	}
	return purpose, nil
}

// RecordConsumption records that a consumer read datasets (a marked write API tokens may
// call). The consumer is created at its first registration. A read whose run_ref the
// consumer already recorded is a replay: the first recording is returned and nothing is
// written or notified. Each dataset's decision is decision_seen when sent, else the
// decision of now for the purpose. Datasets read with decision untrusted raise one
// consumer.untrusted_read notice in the events outbox, within the caps: at most one per
// hour per consumer and dataset (datasets notified in the last hour are left out), and
// at most 20 per hour per workspace (the 20th carries params.warnings_cap).
//
// Returns KindInvalid for a bad body, KindNotFound when a dataset is not one the caller
// can see in the workspace, and KindRateLimited (with the seconds to wait) above the
// workspace's reads per minute.
func (s *Service) RecordConsumption(ctx context.Context, in ConsumptionInput) (ConsumptionResult, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return ConsumptionResult{}, err
	}
	purpose, err := in.validate()
	if err != nil {
		return ConsumptionResult{}, err
	}
	now := s.clock.Now()
	ids := dedupe(in.DatasetIDs)
	fs, err := s.facts(ctx, ids, now)
	if err != nil {
		return ConsumptionResult{}, err
	}
	if len(fs) != len(ids) {
		return ConsumptionResult{}, vigia.NotFound()
	}
	actor := p.UserID
	if p.IsToken() {
		actor = "token:" + p.TokenID
	}
	c := Consumption{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, RunRef: in.Consumer.RunRef, Purpose: purpose, Actor: actor, CreatedAt: now}
	for _, id := range ids {
		f := fs[id]
		cd := ConsumedDataset{DatasetID: id, DatasetName: f.Name(), TrustAsOf: now}
		if in.DecisionSeen != nil {
			cd.Decision = in.DecisionSeen.Decision
			if in.DecisionSeen.AsOf != nil {
				cd.TrustAsOf = in.DecisionSeen.AsOf.UTC()
			}
		} else {
			cd.Decision = Decide(f, ComputeReadiness(f, now, s.cfg.Rules), purpose, now, s.cfg.Rules).Decision
		}
		c.Datasets = append(c.Datasets, cd)
	}

	var out ConsumptionResult
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.LockWorkspace(ctx, p.WorkspaceID); err != nil {
			return err
		}
		consumer, err := s.store.EnsureConsumer(ctx, Consumer{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID,
			Name: in.Consumer.Name, Kind: in.Consumer.Kind, Framework: in.Consumer.Framework, CreatedAt: now})
		if err != nil {
			return err
		}
		out.Consumer = consumer
		if c.RunRef != nil {
			prev, ok, err := s.store.ConsumptionByRunRef(ctx, consumer.ID, *c.RunRef)
			if err != nil {
				return err
			}
			if ok {
				out.Consumption, out.Replayed = prev, true
				return nil
			}
		}
		n, oldest, err := s.store.ConsumptionsSince(ctx, p.WorkspaceID, now.Add(-time.Minute))
		if err != nil {
			return err
		}
		if n >= s.cfg.ConsumptionsPerMinute {
			wait := int(math.Ceil(oldest.Add(time.Minute).Sub(now).Seconds()))
			return vigia.RateLimited(vigia.CodeRateLimited, max(wait, 1))
		}
		c.ConsumerID = consumer.ID
		if err := s.store.InsertConsumption(ctx, c); err != nil {
			return err
		}
		out.Consumption = c
		return s.notifyUntrusted(ctx, consumer, c, now)
	})
	if err != nil {
		return ConsumptionResult{}, err
	}
	return out, nil
}

// notifyUntrusted writes the untrusted-read notice of a new read, within the caps.
func (s *Service) notifyUntrusted(ctx context.Context, consumer Consumer, c Consumption, now time.Time) error {
	var untrusted []ConsumedDataset
	var ids []string
	for _, d := range c.Datasets {
		if d.Decision == DecisionUntrusted {
			untrusted = append(untrusted, d)
			ids = append(ids, d.DatasetID)
		}
	}
	if len(untrusted) == 0 {
		return nil
	}
	since := now.Add(-time.Hour)
	done, err := s.store.NotifiedDatasets(ctx, consumer.ID, ids, since)
	if err != nil {
		return err
	}
	var fresh []event.DatasetRef
	var freshIDs []string
	for _, d := range untrusted {
		if !done[d.DatasetID] {
			fresh = append(fresh, event.DatasetRef{DatasetID: d.DatasetID, DatasetName: d.DatasetName})
			freshIDs = append(freshIDs, d.DatasetID)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	sent, err := s.store.NoticesSince(ctx, c.WorkspaceID, since)
	if err != nil {
		return err
	}
	if sent >= s.cfg.NoticeCap {
		return nil
	}
	params := map[string]any{"consumer_id": consumer.ID, "consumer_kind": consumer.Kind, "datasets": len(fresh)}
	if sent+1 == s.cfg.NoticeCap {
		params["warnings_cap"] = s.cfg.NoticeCap
	}
	textParams := map[string]any{"consumer": consumer.Name, "purpose": c.Purpose, "datasets": len(fresh), "cap": s.cfg.NoticeCap}
	bodyKey := "trust.notice.body"
	if _, capped := params["warnings_cap"]; capped {
		bodyKey = "trust.notice.body_cap"
	}
	eventID := vigia.NewID()
	payload := map[string]any{
		"code":   event.CodeConsumerUntrustedRead,
		"params": params,
		"consumer_read": event.ConsumerRead{ConsumerID: consumer.ID, ConsumerName: consumer.Name, ConsumerKind: consumer.Kind,
			Purpose: c.Purpose, Decision: DecisionUntrusted, RunRef: c.RunRef, Datasets: fresh},
		"severity":     "warning",
		"dataset_ids":  freshIDs,
		"title_key":    "trust.notice.title",
		"body_key":     bodyKey,
		"text_params":  textParams,
		"title":        s.msgs.Message(ptPT, "trust.notice.title", textParams),
		"body":         s.msgs.Message(ptPT, bodyKey, textParams),
		"consumption":  c.ID,
		"occurred_at":  now.UTC().Format(time.RFC3339Nano),
		"workspace_id": c.WorkspaceID,
	}
	return s.store.InsertNotice(ctx, Notice{EventID: eventID, WorkspaceID: c.WorkspaceID, ConsumerID: consumer.ID, DatasetIDs: freshIDs,
		IdempotencyKey: event.IdempotencyKey(consumer.ID, c.ID, EventUntrustedRead, ""), Payload: payload, CreatedAt: now})
}

// ConsumerPageDefault is the page size of the consumer list when limit is not given.
const ConsumerPageDefault = 500

// Consumers lists the workspace's consumers, by name, with counters over the datasets
// the caller can see.
func (s *Service) Consumers(ctx context.Context, page vigia.Page) (vigia.List[Consumer], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Consumer]{}, err
	}
	if err := page.Validate(); err != nil {
		return vigia.List[Consumer]{}, err
	}
	return s.store.Consumers(ctx, catalog.ViewerOf(p), ConsumerFilter{Page: page}, s.clock.Now())
}

// DatasetConsumers lists the consumers that read a dataset, with counters over that
// dataset. Returns KindNotFound when the caller cannot see the dataset.
func (s *Service) DatasetConsumers(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[Consumer], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Consumer]{}, err
	}
	now := s.clock.Now()
	if _, err := s.one(ctx, datasetID, now); err != nil {
		return vigia.List[Consumer]{}, err
	}
	return s.store.Consumers(ctx, catalog.ViewerOf(p), ConsumerFilter{DatasetIDs: []string{datasetID}, Page: page}, now)
}

// ConsumersOf lists the consumers that read any of datasetIDs since since, with
// counters over those datasets (data products' derived consumers).
func (s *Service) ConsumersOf(ctx context.Context, datasetIDs []string, since time.Time) ([]Consumer, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	if len(datasetIDs) == 0 {
		return []Consumer{}, nil
	}
	l, err := s.store.Consumers(ctx, catalog.ViewerOf(p), ConsumerFilter{DatasetIDs: datasetIDs, Since: &since,
		Page: vigia.Page{Limit: 10000}}, s.clock.Now())
	return l.Items, err
}

// RecentConsumers returns, per dataset among datasetIDs the caller can see, the
// consumers that read it since since (the contract's exposures: consumers appear in
// incidents when they consumed in the last 30 days), with their reads of that dataset
// in the last 7 days and their last decision. For the incident feature.
func (s *Service) RecentConsumers(ctx context.Context, datasetIDs []string, since time.Time) (map[string][]Exposure, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	valid := vigia.ValidIDs(datasetIDs)
	if len(valid) == 0 {
		return map[string][]Exposure{}, nil
	}
	return s.store.ConsumerExposures(ctx, catalog.ViewerOf(p), valid, since, s.clock.Now())
}
