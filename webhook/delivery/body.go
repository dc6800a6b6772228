package delivery

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/vigia-data/vigia/event"
)

// Event types (part 6); X-Service-Event equals the body's event.
const (
	EventAlerts                  = "service.alerts"
	EventEscalation              = "service.escalation"
	EventIssueSLABreached        = "service.issue.sla_breached"
	EventDigest                  = "service.digest"
	EventStewardPlan             = "service.steward_plan"
	EventTest                    = "service.test"
	EventDatasetVerdictChanged   = "service.dataset.verdict_changed"
	EventPolicyViolationOpened   = "service.policy.violation_opened"
	EventPolicyViolationResolved = "service.policy.violation_resolved"
	EventDomainVerdictChanged    = "service.domain.verdict_changed"
	EventConsumerUntrustedRead   = "service.consumer.untrusted_read"
)

// IsStateEvent reports whether event is a state event, which carries an
// idempotency_key and the Idempotency-Key header.
func IsStateEvent(event string) bool {
	switch event {
	case EventDatasetVerdictChanged, EventPolicyViolationOpened,
		EventPolicyViolationResolved, EventDomainVerdictChanged:
		return true
	}
	return false
}

// Body codes (part 6, Codes).
const (
	CodeAlertsNew               = "alerts_new"
	CodeConsumerSLABreached     = "consumer_sla_breached"
	CodeEscalationLevel         = "escalation_level"
	CodeEscalationExhausted     = "escalation_exhausted"
	CodeEscalationTeam          = "escalation_team"
	CodeIssueSLABreached        = "issue_sla_breached"
	CodeDigestWeekly            = "digest_weekly"
	CodeDigestTeamWeekly        = "digest_team_weekly"
	CodeStewardPlan             = "steward_plan"
	CodeChannelTest             = "channel_test"
	CodeDatasetVerdictChanged   = "dataset_verdict_changed"
	CodeDomainVerdictChanged    = "domain_verdict_changed"
	CodePolicyViolationOpened   = "policy_violation_opened"
	CodePolicyViolationResolved = "policy_violation_resolved"
	CodeConsumerUntrustedRead   = event.CodeConsumerUntrustedRead
)

// Body is the JSON body of every delivery (part 6, Body). Alerts, Incidents
// and Params are always present (empty outside their events); the context
// objects appear only in their event. Title and Body are plain text that may
// hold user-chosen names and never source values. Encode it with Encode.
type Body struct {
	Event       string         `json:"event"`
	WorkspaceID string         `json:"workspace_id"`
	OccurredAt  time.Time      `json:"occurred_at"` // sent in UTC
	Title       string         `json:"title"`
	Body        string         `json:"body"`
	Code        string         `json:"code"`
	Params      map[string]any `json:"params"` // values: integer, number or string
	Alerts      []Alert        `json:"alerts"`
	Incidents   []Incident     `json:"incidents"`

	Escalation      *Escalation         `json:"escalation,omitempty"`
	TurnID          string              `json:"turn_id,omitempty"`    // steward plan
	ReportID        string              `json:"report_id,omitempty"`  // steward plan
	PeriodKey       string              `json:"period_key,omitempty"` // steward plan, YYYY-MM-DD
	Counts          *Counts             `json:"counts,omitempty"`     // steward plan
	IdempotencyKey  string              `json:"idempotency_key,omitempty"`
	VerdictChange   *VerdictChange      `json:"verdict_change,omitempty"`
	PolicyViolation *PolicyViolation    `json:"policy_violation,omitempty"`
	ConsumerRead    *event.ConsumerRead `json:"consumer_read,omitempty"`
	SLABreach       *SLABreach          `json:"sla_breach,omitempty"`
}

// Alert is one item of alerts[].
type Alert struct {
	ID       string `json:"id"`
	Severity string `json:"severity"` // info, warning, critical
	Title    string `json:"title"`
	IssueID  string `json:"issue_id"`
}

// Incident is one item of incidents[]. The nullable counts are null, with
// empty ImpactColumns, when impact could not be computed.
type Incident struct {
	ID                    string   `json:"id"`
	Title                 *string  `json:"title"`
	RootDatasetID         *string  `json:"root_dataset_id"`
	IssueIDs              []string `json:"issue_ids"`
	AlertIDs              []string `json:"alert_ids"`
	ImpactScope           *string  `json:"impact_scope"` // column, table, none, or null
	ImpactColumns         []string `json:"impact_columns"`
	DownstreamCount       *int     `json:"downstream_count"`
	DownstreamColumnCount *int     `json:"downstream_column_count"`
	ExposuresCount        *int     `json:"exposures_count"`
}

// Escalation is the context of service.escalation.
type Escalation struct {
	IssueID   string  `json:"issue_id"`
	Level     int     `json:"level"` // 0 = first on call
	UserID    *string `json:"user_id"`
	Exhausted bool    `json:"exhausted"`
}

// Counts is the steward plan's summary.
type Counts struct {
	Total              int            `json:"total"`
	ByRisk             map[string]int `json:"by_risk"`
	ByKind             map[string]int `json:"by_kind"`
	SuggestionsCreated int            `json:"suggestions_created"`
}

// VerdictChange is the context of the dataset and domain verdict events;
// exactly one of the variants is set.
type VerdictChange struct {
	From     string `json:"from"` // pass, warn, fail, unknown
	To       string `json:"to"`
	ScanID   string `json:"scan_id"`
	TrustURL string `json:"trust_url"` // needs a session or API token
	*DatasetVerdict
	*DomainVerdict
}

// DatasetVerdict is the dataset variant of VerdictChange.
type DatasetVerdict struct {
	DatasetID    string   `json:"dataset_id"`
	DatasetName  string   `json:"dataset_name"`
	ConnectionID string   `json:"connection_id"`
	Verdict      string   `json:"verdict"`
	Score        *float64 `json:"score"`
}

// DomainVerdict is the domain variant of VerdictChange.
type DomainVerdict struct {
	DomainID        string             `json:"domain_id"`
	DomainName      string             `json:"domain_name"`
	DatasetsChanged []event.DatasetRef `json:"datasets_changed"`
}

// PolicyViolation is the context of the policy events.
type PolicyViolation struct {
	DatasetID    string   `json:"dataset_id"`
	DatasetName  string   `json:"dataset_name"`
	ConnectionID string   `json:"connection_id"`
	ScanID       string   `json:"scan_id"`
	Rule         string   `json:"rule"`
	Label        string   `json:"label"`
	Severity     string   `json:"severity"` // warning, critical
	Source       string   `json:"source"`   // workspace or domain:<name>
	SourceDomain *string  `json:"source_domain"`
	Verdict      string   `json:"verdict"`
	Score        *float64 `json:"score"`
	TrustURL     string   `json:"trust_url"`
}

// SLABreach is the context of service.issue.sla_breached.
type SLABreach struct {
	IssueID     string    `json:"issue_id"`
	Severity    string    `json:"severity"`
	TargetHours int       `json:"target_hours"`
	BreachedAt  time.Time `json:"breached_at"` // sent in UTC
}

// Encode returns the body's JSON bytes, the exact bytes to sign and send:
// required arrays and maps are [] and {} rather than null, times are UTC,
// and <, > and & are left as they are (the text is plain, not HTML).
func (b Body) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b.normalized()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// normalized returns a copy ready to encode; b itself is not modified.
func (b Body) normalized() Body {
	b.OccurredAt = b.OccurredAt.UTC()
	if b.Params == nil {
		b.Params = map[string]any{}
	}
	if b.Alerts == nil {
		b.Alerts = []Alert{}
	}
	incidents := make([]Incident, len(b.Incidents))
	for i, in := range b.Incidents {
		in.IssueIDs = nonNil(in.IssueIDs)
		in.AlertIDs = nonNil(in.AlertIDs)
		in.ImpactColumns = nonNil(in.ImpactColumns)
		incidents[i] = in
	}
	b.Incidents = incidents
	if b.Counts != nil {
		c := *b.Counts
		if c.ByRisk == nil {
			c.ByRisk = map[string]int{}
		}
		if c.ByKind == nil {
			c.ByKind = map[string]int{}
		}
		b.Counts = &c
	}
	if b.VerdictChange != nil && b.VerdictChange.DomainVerdict != nil {
		vc := *b.VerdictChange
		dv := *vc.DomainVerdict
		dv.DatasetsChanged = nonNil(dv.DatasetsChanged)
		vc.DomainVerdict = &dv
		b.VerdictChange = &vc
	}
	if b.ConsumerRead != nil {
		cr := *b.ConsumerRead
		cr.Datasets = nonNil(cr.Datasets)
		b.ConsumerRead = &cr
	}
	if b.SLABreach != nil {
		s := *b.SLABreach
		s.BreachedAt = s.BreachedAt.UTC()
		b.SLABreach = &s
	}
	return b
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
