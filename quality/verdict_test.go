package quality_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vigia-data/vigia/quality"
)

func TestDecideVerdict(t *testing.T) {
	failed := func(id string, sev quality.Severity) quality.RuleOutcome {
		return quality.RuleOutcome{RuleID: id, RuleType: "not_null", Severity: sev, Status: quality.RuleFailed}
	}
	issue := func(typ string, sev quality.Severity, st quality.IssueStatus) quality.VerdictIssue {
		return quality.VerdictIssue{ID: "i", Type: typ, Severity: sev, Status: st}
	}
	tests := []struct {
		name      string
		in        quality.VerdictInput
		want      quality.Verdict
		wantCodes []string
	}{
		{"UnknownWithoutProfile", quality.VerdictInput{Rules: []quality.RuleOutcome{failed("r", "critical")}}, quality.VerdictUnknown, []string{"no_profile"}},
		{"PassWhenClean", quality.VerdictInput{Profiled: true, Score: fp(95)}, quality.VerdictPass, nil},
		{"PassWithoutScore", quality.VerdictInput{Profiled: true}, quality.VerdictPass, nil},
		{"EmptyDatasetDoesNotPass", quality.VerdictInput{Profiled: true, Score: fp(100), Empty: true}, quality.VerdictWarn, []string{"empty_dataset"}},
		{"FailOnCriticalRule", quality.VerdictInput{Profiled: true, Score: fp(99), Rules: []quality.RuleOutcome{failed("r", "critical")}}, quality.VerdictFail, []string{"failed_rule_critical"}},
		{"FailOnOpenCriticalIssue", quality.VerdictInput{Profiled: true, Issues: []quality.VerdictIssue{issue("anomaly", "critical", "open")}}, quality.VerdictFail, []string{"critical_issue"}},
		{"FailOnAcknowledgedCriticalAnomaly", quality.VerdictInput{Profiled: true, Issues: []quality.VerdictIssue{issue("anomaly", "critical", "acknowledged")}}, quality.VerdictFail, []string{"critical_issue"}},
		{"AcknowledgedSchemaDriftAccepted", quality.VerdictInput{Profiled: true, Issues: []quality.VerdictIssue{issue("schema_drift", "critical", "acknowledged")}}, quality.VerdictPass, nil},
		{"ResolvedIssueIgnored", quality.VerdictInput{Profiled: true, Issues: []quality.VerdictIssue{issue("anomaly", "critical", "resolved")}}, quality.VerdictPass, nil},
		{"ModelingIssueIgnored", quality.VerdictInput{Profiled: true, Issues: []quality.VerdictIssue{issue("modeling", "critical", "open")}}, quality.VerdictPass, nil},
		{"WarnOnWarningRule", quality.VerdictInput{Profiled: true, Rules: []quality.RuleOutcome{failed("r", "warning")}}, quality.VerdictWarn, []string{"failed_rule_warning"}},
		{"WarnOnOpenWarningIssue", quality.VerdictInput{Profiled: true, Issues: []quality.VerdictIssue{issue("schema_drift", "warning", "open")}}, quality.VerdictWarn, []string{"warning_issue"}},
		{"WarnOnLowScore", quality.VerdictInput{Profiled: true, Score: fp(69.99)}, quality.VerdictWarn, []string{"score_below_threshold"}},
		{"OwnThreshold", quality.VerdictInput{Profiled: true, Score: fp(85), WarnBelow: 90}, quality.VerdictWarn, []string{"score_below_threshold"}},
		{"InfoRuleListedButPasses", quality.VerdictInput{Profiled: true, Rules: []quality.RuleOutcome{failed("r", "info")}}, quality.VerdictPass, nil},
		{"NotEvaluatedNeverCounts", quality.VerdictInput{Profiled: true, Rules: []quality.RuleOutcome{{RuleID: "r", Severity: "critical", Status: quality.RuleNotEvaluated}}}, quality.VerdictPass, nil},
		{"FailOutranksWarn", quality.VerdictInput{Profiled: true, Score: fp(10), Rules: []quality.RuleOutcome{failed("w", "warning"), failed("c", "critical")}},
			quality.VerdictFail, []string{"failed_rule_critical", "failed_rule_warning", "score_below_threshold"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quality.DecideVerdict(tt.in)
			if got.Verdict != tt.want {
				t.Errorf("verdict = %q, want %q", got.Verdict, tt.want)
			}
			var codes []string
			for _, r := range got.Reasons {
				codes = append(codes, r.Code)
			}
			if diff := cmp.Diff(tt.wantCodes, codes); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideVerdictListsFailingRulesCriticalFirst(t *testing.T) {
	got := quality.DecideVerdict(quality.VerdictInput{Profiled: true, Rules: []quality.RuleOutcome{
		{RuleID: "b", Severity: "warning", Status: quality.RuleFailed},
		{RuleID: "ok", Severity: "critical", Status: quality.RulePassed},
		{RuleID: "i", Severity: "info", Status: quality.RuleFailed},
		{RuleID: "c", Severity: "critical", Status: quality.RuleFailed},
		{RuleID: "a", Severity: "warning", Status: quality.RuleFailed},
	}})
	var ids []string
	for _, r := range got.FailingRules {
		ids = append(ids, r.RuleID)
	}
	if diff := cmp.Diff([]string{"c", "a", "b", "i"}, ids); diff != "" {
		t.Fatalf("failing rules (-want +got):\n%s", diff)
	}
}

func TestAggregateVerdictIsTheWorst(t *testing.T) {
	tests := []struct {
		name string
		in   []quality.Verdict
		want quality.Verdict
	}{
		{"EmptyIsUnknown", nil, quality.VerdictUnknown},
		{"AllPass", []quality.Verdict{"pass", "pass"}, quality.VerdictPass},
		{"UnknownBeatsPass", []quality.Verdict{"pass", "unknown"}, quality.VerdictUnknown},
		{"WarnBeatsUnknown", []quality.Verdict{"unknown", "warn", "pass"}, quality.VerdictWarn},
		{"FailBeatsAll", []quality.Verdict{"warn", "fail", "unknown"}, quality.VerdictFail},
		{"StrangeValueIsUnknown", []quality.Verdict{"pass", "maybe"}, quality.VerdictUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quality.AggregateVerdict(tt.in); got != tt.want {
				t.Fatalf("AggregateVerdict = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerdictChangedSkipsBaseline(t *testing.T) {
	pass := quality.VerdictPass
	if quality.VerdictChanged(nil, quality.VerdictFail) {
		t.Error("baseline emitted a change")
	}
	if quality.VerdictChanged(&pass, quality.VerdictPass) {
		t.Error("same verdict emitted a change")
	}
	if !quality.VerdictChanged(&pass, quality.VerdictWarn) {
		t.Error("pass → warn did not emit a change")
	}
}

// One count of standing issues serves the verdict, the trust decision, readiness and the
// score explanation: same statuses, same severities, ids named.
func TestCountStandingIsTheOneCount(t *testing.T) {
	issues := []quality.VerdictIssue{
		{ID: "c2", Type: "anomaly", Severity: "critical", Status: "open"},
		{ID: "c1", Type: "rule", Severity: "critical", Status: "acknowledged"},
		{ID: "w1", Type: "schema_drift", Severity: "warning", Status: "open"},
		{ID: "w2", Type: "anomaly", Severity: "", Status: "open"}, // no severity: a warning
		{ID: "x1", Type: "schema_drift", Severity: "critical", Status: "acknowledged"},
		{ID: "x2", Type: "modeling", Severity: "critical", Status: "open"},
		{ID: "x3", Type: "bi_refresh", Severity: "warning", Status: "open"},
		{ID: "x4", Type: "anomaly", Severity: "critical", Status: "resolved"},
		{ID: "x5", Type: "anomaly", Severity: "info", Status: "open"},
		{ID: "x6", Type: "anomaly", Severity: "warning", Status: "ignored"},
	}
	got := quality.CountStanding(issues)
	want := quality.IssueCounts{Critical: 2, Warning: 2, CriticalIDs: []string{"c1", "c2"}, WarningIDs: []string{"w1", "w2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("counts (-want +got):\n%s", diff)
	}
	v := quality.DecideVerdict(quality.VerdictInput{Profiled: true, Score: fp(90), Issues: issues})
	if v.Verdict != quality.VerdictFail || len(v.Reasons) != 2 {
		t.Fatalf("verdict %+v", v)
	}
	for _, r := range v.Reasons {
		n, ids := r.Params["count"], r.Params["issue_ids"]
		switch r.Code {
		case "critical_issue":
			if n != 2 || !cmp.Equal(ids, want.CriticalIDs) {
				t.Errorf("critical reason %v", r.Params)
			}
		case "warning_issue":
			if n != 2 || !cmp.Equal(ids, want.WarningIDs) {
				t.Errorf("warning reason %v", r.Params)
			}
		}
	}
	if empty := quality.CountStanding(nil); empty.CriticalIDs == nil || empty.WarningIDs == nil {
		t.Fatalf("ids must be lists: %+v", empty)
	}
}

// An issue's severity is the highest of its detections.
func TestHigherSeverity(t *testing.T) {
	for _, c := range []struct{ a, b, want quality.Severity }{
		{"warning", "critical", "critical"}, {"critical", "warning", "critical"}, {"warning", "info", "warning"},
		{"info", "warning", "warning"}, {"", "warning", "warning"}, {"critical", "", "critical"},
	} {
		if got := quality.HigherSeverity(c.a, c.b); got != c.want {
			t.Errorf("HigherSeverity(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
