package delivery_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/webhook/delivery"
)

func TestBodyEncodeKeepsRequiredFieldsPresent(t *testing.T) {
	tests := []struct {
		name string
		body delivery.Body
		want string
	}{
		{"EmptyListsAndParamsAreNotNull", delivery.Body{
			Event: delivery.EventDigest, WorkspaceID: "ws_1", OccurredAt: time.Unix(0, 0),
			Title: "t", Body: "b", Code: delivery.CodeDigestWeekly,
		}, `{"event":"service.digest","workspace_id":"ws_1","occurred_at":"1970-01-01T00:00:00Z","title":"t","body":"b","code":"digest_weekly","params":{},"alerts":[],"incidents":[]}`},
		{"IncidentWithoutImpactHasNullsAndEmptyColumns", delivery.Body{
			Event: delivery.EventAlerts, WorkspaceID: "ws_1", OccurredAt: time.Unix(0, 0),
			Title: "t", Body: "b", Code: delivery.CodeAlertsNew,
			Incidents: []delivery.Incident{{ID: "in_1"}},
		}, `{"event":"service.alerts","workspace_id":"ws_1","occurred_at":"1970-01-01T00:00:00Z","title":"t","body":"b","code":"alerts_new","params":{},"alerts":[],"incidents":[{"id":"in_1","title":null,"root_dataset_id":null,"issue_ids":[],"alert_ids":[],"impact_scope":null,"impact_columns":[],"downstream_count":null,"downstream_column_count":null,"exposures_count":null}]}`},
		{"EscalationContext", delivery.Body{
			Event: delivery.EventEscalation, WorkspaceID: "ws_1", OccurredAt: time.Unix(0, 0),
			Title: "t", Body: "b", Code: delivery.CodeEscalationExhausted,
			Params:     map[string]any{"issue_id": "is_1", "level": 2, "minutes_unacked": 45},
			Escalation: &delivery.Escalation{IssueID: "is_1", Level: 2, Exhausted: true},
		}, `{"event":"service.escalation","workspace_id":"ws_1","occurred_at":"1970-01-01T00:00:00Z","title":"t","body":"b","code":"escalation_exhausted","params":{"issue_id":"is_1","level":2,"minutes_unacked":45},"alerts":[],"incidents":[],"escalation":{"issue_id":"is_1","level":2,"user_id":null,"exhausted":true}}`},
		{"DomainVerdictVariant", delivery.Body{
			Event: delivery.EventDomainVerdictChanged, WorkspaceID: "ws_1", OccurredAt: time.Unix(0, 0),
			Title: "t", Body: "b", Code: delivery.CodeDomainVerdictChanged, IdempotencyKey: "k",
			VerdictChange: &delivery.VerdictChange{From: "pass", To: "fail", ScanID: "sc_1", TrustURL: "u",
				DomainVerdict: &delivery.DomainVerdict{DomainID: "dm_1", DomainName: "Vendas"}},
		}, `{"event":"service.domain.verdict_changed","workspace_id":"ws_1","occurred_at":"1970-01-01T00:00:00Z","title":"t","body":"b","code":"domain_verdict_changed","params":{},"alerts":[],"incidents":[],"idempotency_key":"k","verdict_change":{"from":"pass","to":"fail","scan_id":"sc_1","trust_url":"u","domain_id":"dm_1","domain_name":"Vendas","datasets_changed":[]}}`},
		{"StewardPlanContext", delivery.Body{
			Event: delivery.EventStewardPlan, WorkspaceID: "ws_1", OccurredAt: time.Unix(0, 0),
			Title: "t", Body: "b", Code: delivery.CodeStewardPlan,
			TurnID: "tu_1", ReportID: "rp_1", PeriodKey: "2026-11-21", Counts: &delivery.Counts{Total: 3},
		}, `{"event":"service.steward_plan","workspace_id":"ws_1","occurred_at":"1970-01-01T00:00:00Z","title":"t","body":"b","code":"steward_plan","params":{},"alerts":[],"incidents":[],"turn_id":"tu_1","report_id":"rp_1","period_key":"2026-11-21","counts":{"total":3,"by_risk":{},"by_kind":{},"suggestions_created":0}}`},
		{"ConsumerReadAndSLABreachInUTC", delivery.Body{
			Event: delivery.EventConsumerUntrustedRead, WorkspaceID: "ws_1", OccurredAt: time.Unix(0, 0),
			Title: "t", Body: "b", Code: delivery.CodeConsumerUntrustedRead,
			ConsumerRead: &event.ConsumerRead{ConsumerID: "cs_1", ConsumerName: "agent", ConsumerKind: "agent", Purpose: "rag", Decision: "untrusted"},
			SLABreach:    &delivery.SLABreach{IssueID: "is_1", Severity: "critical", TargetHours: 4, BreachedAt: time.Date(2026, 1, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600))},
		}, `{"event":"service.consumer.untrusted_read","workspace_id":"ws_1","occurred_at":"1970-01-01T00:00:00Z","title":"t","body":"b","code":"consumer_untrusted_read","params":{},"alerts":[],"incidents":[],"consumer_read":{"consumer_id":"cs_1","consumer_name":"agent","consumer_kind":"agent","purpose":"rag","decision":"untrusted","run_ref":null,"datasets":[]},"sla_breach":{"issue_id":"is_1","severity":"critical","target_hours":4,"breached_at":"2026-01-01T00:00:00Z"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.body.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("Encode =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
