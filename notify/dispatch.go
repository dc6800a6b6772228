package notify

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// dispatchBatch is how many outbox rows or finished scans one transaction handles.
const dispatchBatch = 50

// scanLookback bounds how far back finished scans are looked for: older ones were
// dispatched already, or predate the feature.
const scanLookback = 24 * time.Hour

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// errSkip marks an outbox row that cannot be turned into a notification (malformed
// payload, subject gone): it is marked dispatched and logged, never retried.
var errSkip = errors.New("webhook: event skipped")

// Dispatch turns undispatched outbox events and the alerts of finished scans into
// notifications and deliveries, each batch in one transaction that also marks its
// rows dispatched, and returns how many rows it handled. Several processes may run it
// at once: rows are claimed with SKIP LOCKED.
func (s *Service) Dispatch(ctx context.Context) (int, error) {
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	total := 0
	for {
		n, err := s.dispatchEvents(ctx)
		total += n
		if err != nil {
			return total, err
		}
		if n < dispatchBatch {
			break
		}
	}
	for {
		n, err := s.dispatchScans(ctx)
		total += n
		if err != nil {
			return total, err
		}
		if n < dispatchBatch {
			break
		}
	}
	return total, nil
}

func (s *Service) dispatchEvents(ctx context.Context) (int, error) {
	n := 0
	var failing *OutboxEvent
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		evs, err := s.store.ClaimEvents(ctx, dispatchBatch)
		if err != nil {
			return err
		}
		n = len(evs)
		cache := map[string]*wsCtx{}
		now := s.clock.Now()
		for _, ev := range evs {
			if err := s.fanOutEvent(ctx, cache, ev); err != nil {
				if !errors.Is(err, errSkip) {
					failing = &ev
					return err
				}
				s.log.WarnContext(ctx, "webhook: outbox event skipped", "event_id", ev.ID, "type", ev.Type)
			}
			if err := s.store.MarkEventDispatched(ctx, ev.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && failing != nil && s.poisoned("event:"+failing.ID) {
		s.log.ErrorContext(ctx, "webhook: outbox event failed repeatedly; marked dispatched without notification",
			"event_id", failing.ID, "type", failing.Type, "cause", causeText(err))
		return n, s.store.MarkEventDispatched(ctx, failing.ID, s.clock.Now())
	}
	return n, err
}

func (s *Service) dispatchScans(ctx context.Context) (int, error) {
	n := 0
	var failing *FinishedScan
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		now := s.clock.Now()
		scans, err := s.store.ClaimFinishedScans(ctx, now.Add(-scanLookback), dispatchBatch)
		if err != nil {
			return err
		}
		n = len(scans)
		cache := map[string]*wsCtx{}
		for _, sc := range scans {
			if err := s.fanOutScanAlerts(ctx, cache, sc); err != nil {
				failing = &sc
				return err
			}
		}
		return nil
	})
	if err != nil && failing != nil && s.poisoned("scan:"+failing.ID) {
		s.log.ErrorContext(ctx, "webhook: scan alerts failed repeatedly; skipped", "scan_id", failing.ID, "cause", causeText(err))
		return n, s.store.MarkScanAlerts(ctx, *failing, 0, s.clock.Now())
	}
	return n, err
}

// poisonAfter is how many times in a row one outbox row or scan may fail its batch
// before it is set aside, so that one bad row cannot hold every notification back.
const poisonAfter = 3

// poisoned counts a failure of key and reports whether it reached poisonAfter. The
// caller holds dispatchMu.
func (s *Service) poisoned(key string) bool {
	if s.failures == nil {
		s.failures = map[string]int{}
	}
	s.failures[key]++
	if s.failures[key] < poisonAfter {
		return false
	}
	delete(s.failures, key)
	return true
}

// wsCtx is what fan-out needs of one workspace, loaded once per transaction.
type wsCtx struct {
	info     WorkspaceInfo
	channels []Channel
	mutes    Mutes
	grants   map[string][]string // team id → domain ids it has grants on
}

func (s *Service) workspaceCtx(ctx context.Context, cache map[string]*wsCtx, workspaceID string) (*wsCtx, error) {
	if w, ok := cache[workspaceID]; ok {
		return w, nil
	}
	info, err := s.store.WorkspaceInfo(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	channels, err := s.store.Channels(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	mutes, err := s.store.ActiveMutes(ctx, workspaceID, s.clock.Now())
	if err != nil {
		return nil, err
	}
	var teams []string
	for _, c := range channels {
		if c.TeamID != nil && !slices.Contains(teams, *c.TeamID) {
			teams = append(teams, *c.TeamID)
		}
	}
	grants := map[string][]string{}
	if len(teams) > 0 {
		if grants, err = s.store.TeamGrants(ctx, workspaceID, teams); err != nil {
			return nil, err
		}
	}
	w := &wsCtx{info: info, channels: channels, mutes: Mutes(mutes).active(s.clock.Now()), grants: grants}
	cache[workspaceID] = w
	return w, nil
}

// fanout is one notification and what each channel receives of it.
type fanout struct {
	notif Notification
	hold  []string // mutes holding it back
	// build returns a channel's delivery body, or false when the channel does not
	// receive it.
	build          func(ch Channel, lang string) (delivery.Body, bool)
	idempotencyKey string
}

// emit records the notification and, unless a mute holds it, one delivery per channel
// that receives it, with its job, in the transaction in ctx. A notification that exists
// already (the same cause dispatched before) emits nothing again.
func (s *Service) emit(ctx context.Context, w *wsCtx, f fanout) error {
	n := f.notif
	n.ID = vigia.NewID()
	n.WorkspaceID = w.info.ID
	n.Held = len(f.hold) > 0
	n.MuteIDs = f.hold
	n.CreatedAt = s.clock.Now()
	inserted, err := s.store.InsertNotification(ctx, n)
	if err != nil || !inserted || n.Held {
		return err
	}
	count := 0
	for _, ch := range w.channels {
		b, ok := f.build(ch, lang(&ch, w.info))
		if !ok {
			continue
		}
		b.IdempotencyKey = f.idempotencyKey
		_, created, err := s.createDelivery(ctx, ch, &n.ID, b, n.SourceKey, false)
		if err != nil {
			return err
		}
		if created {
			count++
		}
	}
	if count == 0 {
		return nil
	}
	return s.store.AddNotificationDeliveries(ctx, n.ID, count)
}

// createDelivery stores one delivery of b to ch and, unless it is a channel test
// (sent at once by the caller), enqueues its job in the transaction in ctx. created is
// false when the channel already has a delivery for sourceKey.
func (s *Service) createDelivery(ctx context.Context, ch Channel, notificationID *string, b delivery.Body, sourceKey string, test bool) (Delivery, bool, error) {
	raw, err := b.Encode()
	if err != nil {
		return Delivery{}, false, vigia.Internal(err)
	}
	now := s.clock.Now()
	d := Delivery{ID: vigia.NewID(), WorkspaceID: ch.WorkspaceID, ChannelID: ch.ID, NotificationID: notificationID,
		Event: b.Event, SourceKey: sourceKey, Body: raw, Test: test, Status: StatusPending, CreatedAt: now, NextAttemptAt: &now}
	if delivery.IsStateEvent(b.Event) && b.IdempotencyKey != "" {
		k := b.IdempotencyKey
		d.IdempotencyKey = &k
	}
	created, err := s.store.InsertDelivery(ctx, d)
	if err != nil || !created {
		return d, false, err
	}
	if !test {
		if err := s.jobs.EnqueueDelivery(ctx, d.ID, d.WorkspaceID); err != nil {
			return d, false, err
		}
	}
	return d, true, nil
}

// fanOutScanAlerts turns the warning and critical issues a finished scan opened into
// alert notifications and one service.alerts delivery per channel, the alerts of one
// incident aggregated.
func (s *Service) fanOutScanAlerts(ctx context.Context, cache map[string]*wsCtx, sc FinishedScan) error {
	issues, err := s.store.ScanAlertIssues(ctx, sc.ID)
	if err != nil {
		return err
	}
	if err := s.store.MarkScanAlerts(ctx, sc, len(issues), s.clock.Now()); err != nil || len(issues) == 0 {
		return err
	}
	w, err := s.workspaceCtx(ctx, cache, sc.WorkspaceID)
	if err != nil {
		return err
	}
	return s.fanOutAlerts(ctx, w, sc.FinishedAt, &sc.ID, issues, "alerts:"+sc.ID)
}

// fanOutAlerts turns alert issues into alert notifications (held by the mutes covering
// them) and one service.alerts delivery per channel that wants some of them, under
// the delivery source key source, the alerts of one incident aggregated. scanID is the
// scan that opened them, nil for issues opened outside a scan.
func (s *Service) fanOutAlerts(ctx context.Context, w *wsCtx, at time.Time, scanID *string, issues []AlertIssue, source string) error {
	workspaceID := w.info.ID
	facts, err := s.store.DatasetFacts(ctx, workspaceID, issueDatasets(issues))
	if err != nil {
		return err
	}
	var items []alertItem
	for _, is := range issues {
		d, ok := facts[is.DatasetID]
		if !ok {
			continue
		}
		n := Notification{Event: delivery.EventAlerts, Code: delivery.CodeAlertsNew,
			Params:  map[string]any{"issue_id": is.ID, "dataset_id": d.ID, "severity": is.Severity, "type": is.Type},
			Payload: map[string]any{"message": s.alertItemMessage(is, d)}, SourceKey: "alert:" + is.ID,
			DatasetIDs: []string{d.ID}, IssueID: &is.ID, ScanID: scanID, Severity: &is.Severity}
		n.ID = vigia.NewID()
		n.WorkspaceID = workspaceID
		n.MuteIDs = w.mutes.HoldingIssue(is.Type, d)
		n.Held = len(n.MuteIDs) > 0
		n.CreatedAt = s.clock.Now()
		inserted, err := s.store.InsertNotification(ctx, n)
		if err != nil {
			return err
		}
		if inserted && !n.Held {
			items = append(items, alertItem{notifID: n.ID, issue: is, ds: d})
		}
	}
	if len(items) == 0 {
		return nil
	}
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, it.issue.ID)
	}
	incidents, err := s.incidents.ForIssues(ctx, workspaceID, ids)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, ch := range w.channels {
		var mine []alertItem
		for _, it := range items {
			if ch.WantsAlert(it.issue, it.ds, w.grants) {
				mine = append(mine, it)
			}
		}
		if len(mine) == 0 {
			continue
		}
		b := s.alertsBody(lang(&ch, w.info), workspaceID, at, mine, incidents)
		_, created, err := s.createDelivery(ctx, ch, nil, b, source, false)
		if err != nil {
			return err
		}
		if created {
			for _, it := range mine {
				counts[it.notifID]++
			}
		}
	}
	for id, c := range counts {
		if err := s.store.AddNotificationDeliveries(ctx, id, c); err != nil {
			return err
		}
	}
	return nil
}

type alertItem struct {
	notifID string
	issue   AlertIssue
	ds      DatasetFacts
}

func issueDatasets(issues []AlertIssue) []string {
	var out []string
	for _, is := range issues {
		if !slices.Contains(out, is.DatasetID) {
			out = append(out, is.DatasetID)
		}
	}
	return out
}

// alertItemMessage is how the in-app list shows one alert.
func (s *Service) alertItemMessage(is AlertIssue, d DatasetFacts) message {
	return message{Key: "webhook.alert_item", Vars: map[string]any{"dataset": d.Name, "severity": is.Severity},
		Lines: []line{issueLine(is)}, Words: []string{"severity"}}
}

func issueLine(is AlertIssue) line {
	return line{Key: is.TitleKey, Params: is.Params, Text: is.Title}
}

// issueTitle is an issue's title in lang: the catalogue's when it has the issue's
// title key, else the stored title.
func (s *Service) issueTitle(lang string, is AlertIssue) string { return IssueTitle(s.msgs, lang, is) }

// alertsBody builds service.alerts for one channel's share of a scan's alerts.
func (s *Service) alertsBody(lang, workspaceID string, at time.Time, items []alertItem, incidents []IncidentImpact) delivery.Body {
	alerts := make([]delivery.Alert, 0, len(items))
	byIssue := map[string]string{}
	datasets := map[string]string{}
	critical, warning := 0, 0
	var lines []line
	for _, it := range items {
		alerts = append(alerts, delivery.Alert{ID: it.notifID, Severity: it.issue.Severity,
			Title: s.issueTitle(lang, it.issue), IssueID: it.issue.ID})
		byIssue[it.issue.ID] = it.notifID
		datasets[it.ds.ID] = it.ds.Name
		if it.issue.Severity == SeverityCritical {
			critical++
		} else {
			warning++
		}
		lines = append(lines, issueLine(it.issue))
	}
	var incs []delivery.Incident
	for _, in := range incidents {
		var alertIDs []string
		for _, issueID := range in.IssueIDs {
			if id, ok := byIssue[issueID]; ok {
				alertIDs = append(alertIDs, id)
			}
		}
		if len(alertIDs) == 0 {
			continue
		}
		incs = append(incs, delivery.Incident{ID: in.ID, Title: in.Title, RootDatasetID: in.RootDatasetID,
			IssueIDs: in.IssueIDs, AlertIDs: alertIDs, ImpactScope: in.ImpactScope, ImpactColumns: in.ImpactColumns,
			DownstreamCount: in.DownstreamCount, DownstreamColumnCount: in.DownstreamColumnCount, ExposuresCount: in.ExposuresCount})
	}
	vars := map[string]any{"count": len(alerts), "critical": critical, "warning": warning, "datasets": len(datasets)}
	key := "webhook.alerts_new"
	if len(datasets) == 1 {
		key = "webhook.alerts_new_dataset"
		for _, name := range datasets {
			vars["dataset"] = name
		}
	}
	params := map[string]any{"count": len(alerts), "alerts": len(alerts), "incidents": len(incs)}
	b := s.body(lang, delivery.EventAlerts, delivery.CodeAlertsNew, workspaceID, at, params, message{Key: key, Vars: vars, Lines: lines})
	b.Alerts = alerts
	b.Incidents = incs
	return b
}

// Outbox payloads (see docs/webhooks.md, "the events outbox").
type verdictPayload struct {
	DatasetID       string             `json:"dataset_id"`
	DatasetName     string             `json:"dataset_name"`
	DomainID        string             `json:"domain_id"`
	DomainName      string             `json:"domain_name"`
	From            string             `json:"from"`
	To              string             `json:"to"`
	Score           *float64           `json:"score"`
	ScanID          string             `json:"scan_id"`
	DatasetsChanged []event.DatasetRef `json:"datasets_changed"`
}

type policyPayload struct {
	DatasetID    string   `json:"dataset_id"`
	ScanID       string   `json:"scan_id"`
	Rule         string   `json:"rule"`
	Label        string   `json:"label"`
	Severity     string   `json:"severity"`
	Source       string   `json:"source"`
	SourceDomain *string  `json:"source_domain"`
	Verdict      string   `json:"verdict"`
	Score        *float64 `json:"score"`
}

type slaPayload struct {
	IssueID     string    `json:"issue_id"`
	Severity    string    `json:"severity"`
	TargetHours int       `json:"target_hours"`
	BreachedAt  time.Time `json:"breached_at"`
}

type consumerReadPayload struct {
	ConsumerID   string             `json:"consumer_id"`
	ConsumerName string             `json:"consumer_name"`
	ConsumerKind string             `json:"consumer_kind"`
	Purpose      string             `json:"purpose"`
	Decision     string             `json:"decision"`
	RunRef       *string            `json:"run_ref"`
	Datasets     []event.DatasetRef `json:"datasets"`
}

type consumerSLAPayload struct {
	DomainID   string   `json:"domain_id"`
	DomainName string   `json:"domain_name"`
	Issues     int      `json:"issues"`
	ChannelIDs []string `json:"channel_ids"`
}

// Outbox event types (the events.type column, without the service. prefix).
const (
	OutboxDatasetVerdictChanged   = "dataset.verdict_changed"
	OutboxDomainVerdictChanged    = "domain.verdict_changed"
	OutboxPolicyViolationOpened   = "policy.violation_opened"
	OutboxPolicyViolationResolved = "policy.violation_resolved"
	OutboxIssueSLABreached        = "issue.sla_breached"
	OutboxConsumerUntrustedRead   = "consumer.untrusted_read"
	OutboxConsumerSLABreached     = "domain.consumer_sla_breached"
	OutboxIssueOpened             = event.TypeIssueOpened
)

func (s *Service) fanOutEvent(ctx context.Context, cache map[string]*wsCtx, ev OutboxEvent) error {
	typ := strings.TrimPrefix(ev.Type, "service.")
	w, err := s.workspaceCtx(ctx, cache, ev.WorkspaceID)
	if err != nil {
		return err
	}
	var fn func(context.Context, *wsCtx, OutboxEvent) error
	switch typ {
	case OutboxDatasetVerdictChanged:
		fn = s.fanOutDatasetVerdict
	case OutboxDomainVerdictChanged:
		fn = s.fanOutDomainVerdict
	case OutboxPolicyViolationOpened, OutboxPolicyViolationResolved:
		fn = s.fanOutPolicy
	case OutboxIssueSLABreached:
		fn = s.fanOutSLABreach
	case OutboxConsumerUntrustedRead:
		fn = s.fanOutConsumerRead
	case OutboxConsumerSLABreached:
		fn = s.fanOutConsumerSLA
	case OutboxIssueOpened:
		fn = s.fanOutIssueOpened
	default:
		return errSkip
	}
	return fn(ctx, w, ev)
}

func decode(payload []byte, v any) error {
	if err := json.Unmarshal(payload, v); err != nil {
		return errSkip
	}
	return nil
}

// stateKey is the event's idempotency_key: the outbox row's when it has the contract's
// form (sha256 of subject, scan, type and rule), else computed the same way.
func stateKey(ev OutboxEvent, scanID, rule string) string {
	if hex64.MatchString(ev.IdempotencyKey) {
		return ev.IdempotencyKey
	}
	return event.IdempotencyKey(ev.SubjectID, scanID, strings.TrimPrefix(ev.Type, "service."), rule)
}

func scanOf(ev OutboxEvent, fromPayload string) string {
	if fromPayload != "" {
		return fromPayload
	}
	if ev.ScanID != nil {
		return *ev.ScanID
	}
	return ""
}

// orSubject is the id a payload names, else the event's subject.
func orSubject(id string, ev OutboxEvent) string {
	if id == "" {
		return ev.SubjectID
	}
	return id
}

func (s *Service) oneDataset(ctx context.Context, workspaceID, id string) (DatasetFacts, error) {
	if !vigia.ValidID(id) {
		return DatasetFacts{}, errSkip
	}
	facts, err := s.store.DatasetFacts(ctx, workspaceID, []string{id})
	if err != nil {
		return DatasetFacts{}, err
	}
	d, ok := facts[id]
	if !ok {
		return DatasetFacts{}, errSkip
	}
	return d, nil
}

// oneDomain loads the domain an event is about: id, else the event's subject; errSkip
// when it is not an id or the domain no longer exists.
func (s *Service) oneDomain(ctx context.Context, ev OutboxEvent, id string) (DomainFacts, error) {
	id = orSubject(id, ev)
	if !vigia.ValidID(id) {
		return DomainFacts{}, errSkip
	}
	dom, err := s.store.DomainFacts(ctx, ev.WorkspaceID, id)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return DomainFacts{}, errSkip
	}
	return dom, err
}

func (s *Service) fanOutDatasetVerdict(ctx context.Context, w *wsCtx, ev OutboxEvent) error {
	var p verdictPayload
	if err := decode(ev.Payload, &p); err != nil {
		return err
	}
	d, err := s.oneDataset(ctx, ev.WorkspaceID, orSubject(p.DatasetID, ev))
	if err != nil {
		return err
	}
	scanID := scanOf(ev, p.ScanID)
	params := map[string]any{"dataset_id": d.ID, "from": p.From, "to": p.To}
	if p.Score != nil {
		params["score"] = *p.Score
	}
	msg := message{Key: "webhook.dataset_verdict_changed", Vars: map[string]any{"dataset": d.Name, "from": p.From,
		"to": p.To, "score": scoreText(p.Score)}, Words: []string{"from", "to"}}
	key := stateKey(ev, scanID, "")
	return s.emit(ctx, w, fanout{
		notif: Notification{Event: delivery.EventDatasetVerdictChanged, Code: delivery.CodeDatasetVerdictChanged,
			Params: params, Payload: map[string]any{"message": msg},
			SourceKey: "event:" + ev.ID, DatasetIDs: []string{d.ID}, ScanID: nullable(scanID)},
		hold:           w.mutes.HoldingDatasetVerdict(d),
		idempotencyKey: key,
		build: func(ch Channel, lang string) (delivery.Body, bool) {
			if !ch.WantsDatasetState(EventKindDatasetVerdictChanged, d, w.grants) {
				return delivery.Body{}, false
			}
			b := s.body(lang, delivery.EventDatasetVerdictChanged, delivery.CodeDatasetVerdictChanged, ev.WorkspaceID,
				ev.CreatedAt, params, msg)
			b.VerdictChange = &delivery.VerdictChange{From: p.From, To: p.To, ScanID: scanID, TrustURL: s.datasetTrustURL(d.ID),
				DatasetVerdict: &delivery.DatasetVerdict{DatasetID: d.ID, DatasetName: d.Name, ConnectionID: d.ConnectionID,
					Verdict: p.To, Score: p.Score}}
			return b, true
		},
	})
}

func (s *Service) fanOutDomainVerdict(ctx context.Context, w *wsCtx, ev OutboxEvent) error {
	var p verdictPayload
	if err := decode(ev.Payload, &p); err != nil {
		return err
	}
	dom, err := s.oneDomain(ctx, ev, p.DomainID)
	if err != nil {
		return err
	}
	var ids []string
	for _, dc := range p.DatasetsChanged {
		if vigia.ValidID(dc.DatasetID) {
			ids = append(ids, dc.DatasetID)
		}
	}
	facts, err := s.store.DatasetFacts(ctx, ev.WorkspaceID, ids)
	if err != nil {
		return err
	}
	var changed []DatasetFacts
	var refs []event.DatasetRef
	for _, id := range ids {
		if d, ok := facts[id]; ok {
			changed = append(changed, d)
			refs = append(refs, event.DatasetRef{DatasetID: d.ID, DatasetName: d.Name})
		}
	}
	scanID := scanOf(ev, p.ScanID)
	params := map[string]any{"domain_id": dom.ID, "from": p.From, "to": p.To}
	msg := message{Key: "webhook.domain_verdict_changed", Vars: map[string]any{"domain": dom.Name, "from": p.From,
		"to": p.To, "datasets": len(refs)}, Words: []string{"from", "to"}}
	return s.emit(ctx, w, fanout{
		notif: Notification{Event: delivery.EventDomainVerdictChanged, Code: delivery.CodeDomainVerdictChanged,
			Params: params, Payload: map[string]any{"message": msg},
			SourceKey: "event:" + ev.ID, DatasetIDs: ids, DomainID: &dom.ID, ScanID: nullable(scanID)},
		hold:           w.mutes.HoldingWorkspace(),
		idempotencyKey: stateKey(ev, scanID, ""),
		build: func(ch Channel, lang string) (delivery.Body, bool) {
			if !ch.WantsDomainState(dom, changed, w.grants) {
				return delivery.Body{}, false
			}
			b := s.body(lang, delivery.EventDomainVerdictChanged, delivery.CodeDomainVerdictChanged, ev.WorkspaceID,
				ev.CreatedAt, params, msg)
			b.VerdictChange = &delivery.VerdictChange{From: p.From, To: p.To, ScanID: scanID, TrustURL: s.domainTrustURL(dom.ID),
				DomainVerdict: &delivery.DomainVerdict{DomainID: dom.ID, DomainName: dom.Name, DatasetsChanged: refs}}
			return b, true
		},
	})
}

func (s *Service) fanOutPolicy(ctx context.Context, w *wsCtx, ev OutboxEvent) error {
	var p policyPayload
	if err := decode(ev.Payload, &p); err != nil {
		return err
	}
	d, err := s.oneDataset(ctx, ev.WorkspaceID, orSubject(p.DatasetID, ev))
	if err != nil {
		return err
	}
	if p.Rule == "" {
		return errSkip
	}
	opened := strings.TrimPrefix(ev.Type, "service.") == OutboxPolicyViolationOpened
	event, code, kind, key := delivery.EventPolicyViolationResolved, delivery.CodePolicyViolationResolved,
		EventKindPolicyViolationResolved, "webhook.policy_violation_resolved"
	if opened {
		event, code, kind, key = delivery.EventPolicyViolationOpened, delivery.CodePolicyViolationOpened,
			EventKindPolicyViolationOpened, "webhook.policy_violation_opened"
	}
	if p.Source == "" {
		p.Source = "workspace"
	}
	scanID := scanOf(ev, p.ScanID)
	params := map[string]any{"dataset_id": d.ID, "rule": p.Rule, "severity": p.Severity, "verdict": p.Verdict}
	label := p.Label
	if label == "" {
		label = p.Rule
	}
	msg := message{Key: key, Vars: map[string]any{"dataset": d.Name, "label": label, "severity": p.Severity, "verdict": p.Verdict},
		Words: []string{"severity", "verdict"}}
	return s.emit(ctx, w, fanout{
		notif: Notification{Event: event, Code: code, Params: params, Payload: map[string]any{"message": msg},
			SourceKey: "event:" + ev.ID, DatasetIDs: []string{d.ID}, ScanID: nullable(scanID), Severity: nullable(p.Severity)},
		hold:           w.mutes.HoldingPolicy(d),
		idempotencyKey: stateKey(ev, scanID, p.Rule),
		build: func(ch Channel, lang string) (delivery.Body, bool) {
			if !ch.WantsDatasetState(kind, d, w.grants) {
				return delivery.Body{}, false
			}
			b := s.body(lang, event, code, ev.WorkspaceID, ev.CreatedAt, params, msg)
			b.PolicyViolation = &delivery.PolicyViolation{DatasetID: d.ID, DatasetName: d.Name, ConnectionID: d.ConnectionID,
				ScanID: scanID, Rule: p.Rule, Label: label, Severity: p.Severity, Source: p.Source, SourceDomain: p.SourceDomain,
				Verdict: p.Verdict, Score: p.Score, TrustURL: s.datasetTrustURL(d.ID)}
			return b, true
		},
	})
}

func (s *Service) fanOutSLABreach(ctx context.Context, w *wsCtx, ev OutboxEvent) error {
	var p slaPayload
	if err := decode(ev.Payload, &p); err != nil {
		return err
	}
	p.IssueID = orSubject(p.IssueID, ev)
	if !vigia.ValidID(p.IssueID) {
		return errSkip
	}
	is, err := s.store.IssueByID(ctx, ev.WorkspaceID, p.IssueID)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return errSkip
	} else if err != nil {
		return err
	}
	if p.Severity != "" {
		is.Severity = p.Severity
	}
	if p.BreachedAt.IsZero() {
		p.BreachedAt = ev.CreatedAt
	}
	d, err := s.oneDataset(ctx, ev.WorkspaceID, is.DatasetID)
	if err != nil {
		return err
	}
	params := map[string]any{"issue_id": is.ID, "target_hours": p.TargetHours}
	msg := message{Key: "webhook.issue_sla_breached", Vars: map[string]any{"dataset": d.Name, "target_hours": p.TargetHours,
		"severity": is.Severity}, Lines: []line{issueLine(is)}, Words: []string{"severity"}}
	return s.emit(ctx, w, fanout{
		notif: Notification{Event: delivery.EventIssueSLABreached, Code: delivery.CodeIssueSLABreached, Params: params,
			Payload: map[string]any{"message": msg}, SourceKey: "event:" + ev.ID, DatasetIDs: []string{d.ID},
			IssueID: &is.ID, Severity: &is.Severity},
		hold: w.mutes.HoldingIssue(is.Type, d),
		build: func(ch Channel, lang string) (delivery.Body, bool) {
			if !ch.WantsAlert(is, d, w.grants) {
				return delivery.Body{}, false
			}
			b := s.body(lang, delivery.EventIssueSLABreached, delivery.CodeIssueSLABreached, ev.WorkspaceID, ev.CreatedAt, params, msg)
			b.SLABreach = &delivery.SLABreach{IssueID: is.ID, Severity: is.Severity, TargetHours: p.TargetHours, BreachedAt: p.BreachedAt}
			return b, true
		},
	})
}

// consumerThrottle is how long a consumer's notice about a dataset is not repeated.
const consumerThrottle = time.Hour

func (s *Service) fanOutConsumerRead(ctx context.Context, w *wsCtx, ev OutboxEvent) error {
	var p consumerReadPayload
	if err := decode(ev.Payload, &p); err != nil {
		return err
	}
	if p.ConsumerID == "" || len(p.Datasets) == 0 {
		return errSkip
	}
	var ids []string
	for _, d := range p.Datasets {
		if vigia.ValidID(d.DatasetID) && !slices.Contains(ids, d.DatasetID) {
			ids = append(ids, d.DatasetID)
		}
	}
	facts, err := s.store.DatasetFacts(ctx, ev.WorkspaceID, ids)
	if err != nil {
		return err
	}
	since := s.clock.Now().Add(-consumerThrottle)
	recent, sent, err := s.store.RecentConsumerNotices(ctx, ev.WorkspaceID, p.ConsumerID, since)
	if err != nil {
		return err
	}
	if sent >= s.cfg.ConsumerNoticeCap {
		return nil // the workspace's cap for the hour is reached; the notice that reached it said so
	}
	var ds []DatasetFacts
	for _, id := range ids {
		if d, ok := facts[id]; ok && !slices.Contains(recent, id) {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return nil // every dataset was noticed for this consumer within the hour
	}
	reachesCap := sent+1 == s.cfg.ConsumerNoticeCap
	source := "event:" + ev.ID
	if p.RunRef != nil && *p.RunRef != "" {
		// A replay of the same run does not repeat the notice.
		source = "consumer_read:" + p.ConsumerID + ":" + *p.RunRef
	}
	dsIDs := make([]string, 0, len(ds))
	for _, d := range ds {
		dsIDs = append(dsIDs, d.ID)
	}
	notifParams := map[string]any{"consumer_id": p.ConsumerID, "consumer_kind": p.ConsumerKind, "datasets": len(ds)}
	if reachesCap {
		notifParams["warnings_cap"] = s.cfg.ConsumerNoticeCap
	}
	msgFor := func(n int) message {
		m := message{Key: "webhook.consumer_untrusted_read", Vars: map[string]any{"consumer": p.ConsumerName,
			"kind": p.ConsumerKind, "purpose": p.Purpose, "datasets": n}}
		if reachesCap {
			m.Lines = []line{{Key: "webhook.consumer_untrusted_read.cap", Params: map[string]any{"cap": s.cfg.ConsumerNoticeCap},
				Text: "cap"}}
		}
		return m
	}
	sev := SeverityWarning
	return s.emit(ctx, w, fanout{
		notif: Notification{Event: delivery.EventConsumerUntrustedRead, Code: delivery.CodeConsumerUntrustedRead,
			Params: notifParams, Payload: map[string]any{"message": msgFor(len(ds)), "consumer_id": p.ConsumerID},
			SourceKey: source, DatasetIDs: dsIDs, Severity: &sev},
		hold: w.mutes.HoldingConsumerNotice(ds),
		build: func(ch Channel, lang string) (delivery.Body, bool) {
			mine := ch.ConsumerNoticeDatasets(ds, w.grants)
			if len(mine) == 0 {
				return delivery.Body{}, false
			}
			refs := make([]event.DatasetRef, 0, len(mine))
			for _, d := range mine {
				refs = append(refs, event.DatasetRef{DatasetID: d.ID, DatasetName: d.Name})
			}
			params := map[string]any{"consumer_id": p.ConsumerID, "consumer_kind": p.ConsumerKind, "datasets": len(refs)}
			if reachesCap {
				params["warnings_cap"] = s.cfg.ConsumerNoticeCap
			}
			b := s.body(lang, delivery.EventConsumerUntrustedRead, delivery.CodeConsumerUntrustedRead, ev.WorkspaceID,
				ev.CreatedAt, params, msgFor(len(refs)))
			b.ConsumerRead = &event.ConsumerRead{ConsumerID: p.ConsumerID, ConsumerName: p.ConsumerName,
				ConsumerKind: p.ConsumerKind, Purpose: p.Purpose, Decision: p.Decision, RunRef: p.RunRef, Datasets: refs}
			return b, true
		},
	})
}

func (s *Service) fanOutConsumerSLA(ctx context.Context, w *wsCtx, ev OutboxEvent) error {
	var p consumerSLAPayload
	if err := decode(ev.Payload, &p); err != nil {
		return err
	}
	if len(p.ChannelIDs) == 0 {
		return errSkip
	}
	dom, err := s.oneDomain(ctx, ev, p.DomainID)
	if err != nil {
		return err
	}
	params := map[string]any{"domain_id": dom.ID, "issues": p.Issues}
	msg := message{Key: "webhook.consumer_sla_breached", Vars: map[string]any{"domain": dom.Name, "issues": p.Issues}}
	sev := SeverityCritical
	return s.emit(ctx, w, fanout{
		notif: Notification{Event: delivery.EventAlerts, Code: delivery.CodeConsumerSLABreached, Params: params,
			Payload: map[string]any{"message": msg}, SourceKey: "event:" + ev.ID,
			DomainID: &dom.ID, Severity: &sev},
		hold: w.mutes.HoldingWorkspace(),
		build: func(ch Channel, lang string) (delivery.Body, bool) {
			// Regardless of severity, scope and event kinds: the channel is a registered
			// consumer of the data product.
			if !slices.Contains(p.ChannelIDs, ch.ID) {
				return delivery.Body{}, false
			}
			return s.body(lang, delivery.EventAlerts, delivery.CodeConsumerSLABreached, ev.WorkspaceID, ev.CreatedAt, params, msg), true
		},
	})
}

// fanOutIssueOpened sends the alert of a warning or critical issue opened outside a scan
// (a dbt test, a BI refresh, a pipeline): the same notification, mutes, channel filters
// and service.alerts body as a finished scan's alerts, one delivery per channel.
func (s *Service) fanOutIssueOpened(ctx context.Context, w *wsCtx, ev OutboxEvent) error {
	var p event.IssueOpened
	if err := decode(ev.Payload, &p); err != nil {
		return err
	}
	id := orSubject(p.IssueID, ev)
	if !vigia.ValidID(id) {
		return errSkip
	}
	is, err := s.store.IssueByID(ctx, ev.WorkspaceID, id)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return errSkip
	} else if err != nil {
		return err
	}
	if is.Severity != SeverityWarning && is.Severity != SeverityCritical || is.ScanID != nil {
		return nil // not an alert, or a scan's issue: its finished scan alerts it
	}
	return s.fanOutAlerts(ctx, w, ev.CreatedAt, nil, []AlertIssue{is}, "alerts:issue:"+is.ID)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func viewerOf(p vigia.Principal) catalog.Viewer { return catalog.ViewerOf(p) }

// RunBackground dispatches the outbox and finished scans every dispatchEvery until ctx
// ends. Failures are logged (by code, never with a URL or a value) and retried on the
// next tick.
func (s *Service) RunBackground(ctx context.Context, dispatchEvery time.Duration) {
	if dispatchEvery <= 0 {
		dispatchEvery = time.Second
	}
	tick := time.NewTicker(dispatchEvery)
	defer tick.Stop()
	for {
		if _, err := s.Dispatch(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook: dispatch failed", "cause", causeText(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// causeText describes a failure for a log line. Errors of this package and its
// stores never carry a URL, a secret or a source value.
func causeText(err error) string { return err.Error() }
