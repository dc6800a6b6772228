package scan_test

import (
	"testing"

	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

func ruleResult(id, severity string, status quality.RuleStatus) scan.RuleResult {
	obs, thr := 3.0, 1.0
	return scan.RuleResult{RuleID: id, RuleType: "referential", Column: "cliente_id", Severity: severity, Status: status,
		Observed: &obs, Threshold: &thr, Title: "Regra referential falhou", TitleKey: "issue.rule.referential"}
}

func TestRulesInEvaluate(t *testing.T) {
	base := table(col("id", "integer", 1), col("email", "text", 2))
	current := func(status string) scan.KnownIssue {
		return scan.KnownIssue{ID: "is-1", Type: scan.IssueTypeRule, Severity: "critical", Status: status, RuleID: "r1", RuleCurrent: true}
	}
	cases := []struct {
		name        string
		status      quality.RuleStatus
		prev        []scan.KnownIssue
		newIssues   int
		redetected  int
		transition  string // to/event of the one transition, "" for none
		verdict     quality.Verdict
		validadeSet bool
	}{
		{"FailedOpensOneIssue", quality.RuleFailed, nil, 1, 0, "", quality.VerdictFail, true},
		{"FailedAgainIsADetection", quality.RuleFailed, []scan.KnownIssue{current("acknowledged")}, 0, 1, "", quality.VerdictFail, true},
		{"FailedWhileIgnoredStaysQuiet", quality.RuleFailed, []scan.KnownIssue{current("ignored")}, 0, 1, "", quality.VerdictFail, true},
		{"FailedAfterResolveReopens", quality.RuleFailed, []scan.KnownIssue{current("resolved")}, 0, 1, "open/verification_failed", quality.VerdictFail, true},
		{"PassedResolvesTheOpenIssue", quality.RulePassed, []scan.KnownIssue{current("open")}, 0, 0, "resolved/auto_resolved", quality.VerdictPass, true},
		{"PassedVerifiesAResolution", quality.RulePassed, []scan.KnownIssue{current("resolved")}, 0, 0, "resolved/verified", quality.VerdictPass, true},
		{"PassedReleasesAnIgnoredIssue", quality.RulePassed, []scan.KnownIssue{current("ignored")}, 0, 0, "ignored/rule_passed", quality.VerdictPass, true},
		// Nothing changes, and the open issue still stands: the verdict counts it as the
		// trust decision does (quality.CountStanding), the rule itself does not count.
		{"NotEvaluatedKeepsTheOpenIssueStanding", quality.RuleNotEvaluated, []scan.KnownIssue{current("open")}, 0, 0, "", quality.VerdictFail, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := input(scan.PrevState{Seq: 2, Issues: c.prev}, profile(1000, false), base)
			in.Rules = []scan.RuleResult{ruleResult("r1", "critical", c.status)}
			res, err := scan.Evaluate(in)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.NewIssues) != c.newIssues || len(res.Redetected) != c.redetected || len(res.RuleResults) != 1 {
				t.Fatalf("new %+v redetected %+v", res.NewIssues, res.Redetected)
			}
			if c.newIssues == 1 && (res.NewIssues[0].RuleID != "r1" || res.NewIssues[0].Type != "rule" || res.NewIssues[0].Subtype != "referential") {
				t.Fatalf("issue %+v", res.NewIssues[0])
			}
			var tr string
			if len(res.Transitions) == 1 {
				tr = res.Transitions[0].To + "/" + res.Transitions[0].Event
				if c.status == quality.RulePassed != res.Transitions[0].ClearCurrent {
					t.Fatalf("clear current %+v", res.Transitions[0])
				}
			} else if len(res.Transitions) > 1 {
				t.Fatalf("transitions %+v", res.Transitions)
			}
			if tr != c.transition {
				t.Fatalf("transition %q; want %q", tr, c.transition)
			}
			if res.Verdict.Verdict != c.verdict {
				t.Fatalf("verdict %s %+v", res.Verdict.Verdict, res.Verdict.Reasons)
			}
			if (res.Score.Dimensions.Validade != nil) != c.validadeSet {
				t.Fatalf("validade %v", res.Score.Dimensions.Validade)
			}
			if c.status == quality.RuleFailed && *res.Score.Dimensions.Validade != 0 {
				t.Fatalf("a failed rule alone gives validade 0: %v", *res.Score.Dimensions.Validade)
			}
		})
	}
}

// A not_evaluated rule leaves the score as if the rule did not exist.
func TestNotEvaluatedRuleDoesNotMoveTheScore(t *testing.T) {
	base := table(col("id", "integer", 1), col("email", "text", 2))
	without, err := scan.Evaluate(input(scan.PrevState{Seq: 1}, profile(1000, false), base))
	if err != nil {
		t.Fatal(err)
	}
	in := input(scan.PrevState{Seq: 1}, profile(1000, false), base)
	ne := ruleResult("r1", "critical", quality.RuleNotEvaluated)
	ne.Observed = nil
	in.Rules = []scan.RuleResult{ne}
	with, err := scan.Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	if *with.Score.Score != *without.Score.Score || with.Verdict.Verdict != without.Verdict.Verdict || len(with.Verdict.FailingRules) != 0 {
		t.Fatalf("score %v vs %v, verdict %s vs %s", *with.Score.Score, *without.Score.Score, with.Verdict.Verdict, without.Verdict.Verdict)
	}
}
