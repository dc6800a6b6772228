package notify_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/notify"
)

const (
	dsA   = "0192a000-0000-7000-8000-00000000000a"
	dsB   = "0192a000-0000-7000-8000-00000000000b"
	connA = "0192a000-0000-7000-8000-0000000000ca"
	connB = "0192a000-0000-7000-8000-0000000000cb"
	domA  = "0192a000-0000-7000-8000-0000000000da"
	domR  = "0192a000-0000-7000-8000-0000000000d0" // restricted
	team  = "0192a000-0000-7000-8000-0000000000ee"
)

func ptr[T any](v T) *T { return &v }

var (
	factsA = notify.DatasetFacts{ID: dsA, Name: "public.a", ConnectionID: connA, DomainIDs: []string{domA}}
	factsR = notify.DatasetFacts{ID: dsB, Name: "public.b", ConnectionID: connB, DomainIDs: []string{domR},
		RestrictedDomainIDs: []string{domR}}
)

func channel(mod func(*notify.Channel)) notify.Channel {
	c := notify.Channel{MinSeverity: notify.SeverityWarning, EventKinds: []string{notify.EventKindAlerts},
		Scope: notify.Scope{IncludeAutoMonitors: true}}
	if mod != nil {
		mod(&c)
	}
	return c
}

func TestWantsAlert(t *testing.T) {
	anomaly := notify.AlertIssue{Type: "anomaly", Severity: notify.SeverityWarning}
	critical := notify.AlertIssue{Type: "schema_drift", Severity: notify.SeverityCritical}
	rule := notify.AlertIssue{Type: "rule_failed", Severity: notify.SeverityWarning, RuleID: ptr("r1")}
	grants := map[string][]string{team: {domR}}
	tests := []struct {
		name  string
		ch    notify.Channel
		issue notify.AlertIssue
		ds    notify.DatasetFacts
		want  bool
	}{
		{"DefaultChannelGetsWarning", channel(nil), anomaly, factsA, true},
		{"MinSeverityCriticalDropsWarning", channel(func(c *notify.Channel) { c.MinSeverity = "critical" }), anomaly, factsA, false},
		{"MinSeverityCriticalKeepsCritical", channel(func(c *notify.Channel) { c.MinSeverity = "critical" }), critical, factsA, true},
		{"WithoutAlertsKindNothing", channel(func(c *notify.Channel) { c.EventKinds = []string{"dataset.verdict_changed"} }), critical, factsA, false},
		{"DatasetScopeMatches", channel(func(c *notify.Channel) { c.Scope.DatasetIDs = []string{dsA} }), anomaly, factsA, true},
		{"DatasetScopeOther", channel(func(c *notify.Channel) { c.Scope.DatasetIDs = []string{dsB} }), anomaly, factsA, false},
		{"AnyMatchConnectionOrDataset", channel(func(c *notify.Channel) {
			c.Scope.DatasetIDs, c.Scope.ConnectionIDs = []string{dsB}, []string{connA}
		}), anomaly, factsA, true},
		{"DomainScope", channel(func(c *notify.Channel) { c.Scope.DomainIDs = []string{domA} }), anomaly, factsA, true},
		{"IssueTypesFilter", channel(func(c *notify.Channel) { c.Scope.IssueTypes = []string{"schema_drift"} }), anomaly, factsA, false},
		{"IssueTypesMatch", channel(func(c *notify.Channel) { c.Scope.IssueTypes = []string{"schema_drift"} }), critical, factsA, true},
		{"NoAutoMonitorsDropsAnomaly", channel(func(c *notify.Channel) { c.Scope.IncludeAutoMonitors = false }), anomaly, factsA, false},
		{"NoAutoMonitorsKeepsRuleIssues", channel(func(c *notify.Channel) { c.Scope.IncludeAutoMonitors = false }), rule, factsA, true},
		{"WorkspaceChannelSeesRestricted", channel(nil), anomaly, factsR, true},
		{"TeamWithoutGrantMissesRestricted", channel(func(c *notify.Channel) { c.TeamID = ptr("0192a000-0000-7000-8000-0000000000ff") }), anomaly, factsR, false},
		{"TeamWithGrantSeesRestricted", channel(func(c *notify.Channel) { c.TeamID = ptr(team) }), anomaly, factsR, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ch.WantsAlert(tt.issue, tt.ds, grants); got != tt.want {
				t.Fatalf("WantsAlert = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStateEventsIgnoreSeverityAndIssueTypes(t *testing.T) {
	ch := channel(func(c *notify.Channel) {
		c.MinSeverity, c.Scope.IssueTypes = "critical", []string{"anomaly"}
		c.EventKinds = []string{notify.EventKindDatasetVerdictChanged}
	})
	if !ch.WantsDatasetState(notify.EventKindDatasetVerdictChanged, factsA, nil) {
		t.Fatal("state event filtered by minimum severity or issue types")
	}
	if ch.WantsDatasetState(notify.EventKindPolicyViolationOpened, factsA, nil) {
		t.Fatal("policy event delivered without its event kind")
	}
	ch.Scope.ConnectionIDs = []string{connB}
	if ch.WantsDatasetState(notify.EventKindDatasetVerdictChanged, factsA, nil) {
		t.Fatal("connection scope not applied to a state event")
	}
}

func TestWantsDomainState(t *testing.T) {
	dom := notify.DomainFacts{ID: domR, Name: "Vendas", Restricted: true}
	kinds := func(c *notify.Channel) { c.EventKinds = []string{notify.EventKindDomainVerdictChanged} }
	tests := []struct {
		name string
		ch   notify.Channel
		want bool
	}{
		{"Unscoped", channel(kinds), true},
		{"DomainScoped", channel(func(c *notify.Channel) { kinds(c); c.Scope.DomainIDs = []string{domR} }), true},
		{"ChangedDatasetInScope", channel(func(c *notify.Channel) { kinds(c); c.Scope.DatasetIDs = []string{dsA} }), true},
		{"OutOfScope", channel(func(c *notify.Channel) { kinds(c); c.Scope.ConnectionIDs = []string{connB} }), false},
		{"TeamWithoutGrant", channel(func(c *notify.Channel) { kinds(c); c.TeamID = ptr(team) }), false},
		{"NotSubscribed", channel(nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ch.WantsDomainState(dom, []notify.DatasetFacts{factsA}, nil); got != tt.want {
				t.Fatalf("WantsDomainState = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConsumerNoticeDatasets(t *testing.T) {
	both := []notify.DatasetFacts{factsA, factsR}
	tests := []struct {
		name string
		ch   notify.Channel
		want int
	}{
		{"AlertsChannelGetsAll", channel(nil), 2},
		{"OnlyDatasetsInScope", channel(func(c *notify.Channel) { c.Scope.DatasetIDs = []string{dsB} }), 1},
		{"IssueTypeChannelsGetNothing", channel(func(c *notify.Channel) { c.Scope.IssueTypes = []string{"anomaly"} }), 0},
		{"CriticalOnlyGetsNothing", channel(func(c *notify.Channel) { c.MinSeverity = "critical" }), 0},
		{"InfoGetsWarning", channel(func(c *notify.Channel) { c.MinSeverity = "info" }), 2},
		{"NoAlertsKind", channel(func(c *notify.Channel) { c.EventKinds = []string{"domain.verdict_changed"} }), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(tt.ch.ConsumerNoticeDatasets(both, nil)); got != tt.want {
				t.Fatalf("datasets = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestMutesHoldWhatPart6Says(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	mute := func(scope string, mod func(*notify.Mute)) notify.Mute {
		m := notify.Mute{ID: scope, Scope: scope, CreatedAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour)}
		if mod != nil {
			mod(&m)
		}
		return m
	}
	ws := mute(notify.MuteWorkspace, nil)
	conn := mute(notify.MuteConnection, func(m *notify.Mute) { m.ConnectionID = ptr(connA) })
	ds := mute(notify.MuteDataset, func(m *notify.Mute) { m.DatasetID = ptr(dsA) })
	types := mute(notify.MuteIssueTypes, func(m *notify.Mute) { m.IssueTypes = []string{"anomaly"} })
	policy := mute(notify.MuteIssueTypes, func(m *notify.Mute) { m.IssueTypes = []string{"policy_violation"} })
	ended := mute(notify.MuteWorkspace, func(m *notify.Mute) { m.EndsAt = now.Add(-time.Minute) })

	held := func(ids []string) bool { return len(ids) > 0 }
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"AlertByWorkspace", held(notify.Mutes{ws}.HoldingIssue("anomaly", factsR)), true},
		{"AlertByConnection", held(notify.Mutes{conn}.HoldingIssue("anomaly", factsA)), true},
		{"AlertOfOtherConnection", held(notify.Mutes{conn}.HoldingIssue("anomaly", factsR)), false},
		{"AlertByDataset", held(notify.Mutes{ds}.HoldingIssue("schema_drift", factsA)), true},
		{"AlertByType", held(notify.Mutes{types}.HoldingIssue("anomaly", factsR)), true},
		{"AlertOfOtherType", held(notify.Mutes{types}.HoldingIssue("schema_drift", factsR)), false},
		{"VerdictByDataset", held(notify.Mutes{ds}.HoldingDatasetVerdict(factsA)), true},
		{"VerdictByConnection", held(notify.Mutes{conn}.HoldingDatasetVerdict(factsA)), true},
		{"VerdictNotByTypes", held(notify.Mutes{types, policy}.HoldingDatasetVerdict(factsA)), false},
		{"PolicyByPolicyType", held(notify.Mutes{policy}.HoldingPolicy(factsR)), true},
		{"PolicyNotByOtherTypes", held(notify.Mutes{types}.HoldingPolicy(factsR)), false},
		{"PolicyByDataset", held(notify.Mutes{ds}.HoldingPolicy(factsA)), true},
		{"DomainOnlyByWorkspace", held(notify.Mutes{conn, ds, types, policy}.HoldingWorkspace()), false},
		{"DomainByWorkspace", held(notify.Mutes{ws}.HoldingWorkspace()), true},
		{"ConsumerNoticeNeedsEveryDataset", held(notify.Mutes{ds}.HoldingConsumerNotice([]notify.DatasetFacts{factsA, factsR})), false},
		{"ConsumerNoticeAllMuted", held(notify.Mutes{ds, mute(notify.MuteDataset, func(m *notify.Mute) { m.DatasetID = ptr(dsB) })}.
			HoldingConsumerNotice([]notify.DatasetFacts{factsA, factsR})), true},
		{"EndedMuteInactive", ended.Active(now), false},
		{"FutureMuteInactive", mute(notify.MuteWorkspace, func(m *notify.Mute) { m.CreatedAt = now.Add(time.Minute) }).Active(now), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("held = %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestAtLeastSeverity(t *testing.T) {
	tests := []struct {
		sev, min string
		want     bool
	}{
		{"critical", "warning", true}, {"warning", "warning", true}, {"info", "warning", false},
		{"warning", "critical", false}, {"info", "info", true}, {"bogus", "info", false},
	}
	for _, tt := range tests {
		if got := notify.AtLeastSeverity(tt.sev, tt.min); got != tt.want {
			t.Errorf("AtLeastSeverity(%s, %s) = %v", tt.sev, tt.min, got)
		}
	}
}
