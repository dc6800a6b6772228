package trust_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/trust"
)

// Every finding, action, reason and recommendation the rules can produce has a message in
// the catalogues.
func TestEveryMessageKeyExists(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	variants := []func(f *trust.Facts){
		func(*trust.Facts) {},
		func(f *trust.Facts) { *f = trust.Facts{DatasetID: "d"} },
		func(f *trust.Facts) {
			f.CriticalIssues, f.WarningIssues, f.Verdict = 1, 2, "fail"
			f.UnackedSchemaChanges, f.OldestUnackedSchemaChange = 1, ptr(now.Add(-30*24*time.Hour))
			f.LatestTimestamp, f.Consumptions30d, f.Domains = ptr(now.Add(-72*time.Hour)), 0, nil
			f.Columns = append(f.Columns, trust.ColumnFact{Name: "email", SemanticType: "email", SemanticMatches: 3})
			f.RowCount, f.Dimensions["completude"] = ptr(int64(3)), ptr(10.0)
			f.Contract = trust.ContractFact{Active: true}
		},
		func(f *trust.Facts) { f.Verdict, f.LatestTimestamp, f.Domains[0].OwnerName = "warn", nil, nil },
		func(f *trust.Facts) { f.Verdict = "fail" },
		func(f *trust.Facts) {
			f.Pipelines = []trust.PipelineFact{{Orchestrator: "airflow", Pipeline: "a", Status: trust.PipelineFailing, RunID: "1", ConsecutiveFailures: 2},
				{Orchestrator: "airflow", Pipeline: "b", Status: trust.PipelineLate, RunID: "2", ExpectedBy: ptr(now)}}
		},
	}
	keys := map[string]bool{}
	for _, v := range variants {
		f := healthy()
		v(&f)
		s := trust.ComputeScore(f, now, trust.Config{})
		for _, x := range append(append([]trust.Finding{}, s.Blockers...), s.Warnings...) {
			keys[x.MessageKey()] = true
		}
		for _, comp := range s.Components {
			if comp.Action != nil {
				keys[comp.Action.MessageKey()] = true
			}
		}
		r := trust.ComputeReadiness(f, now, trust.Config{})
		for _, u := range r.UseCases {
			for _, x := range append(append([]trust.Finding{}, u.Blockers...), u.Warnings...) {
				keys[x.MessageKey()] = true
			}
		}
		for _, rc := range r.Recommendations {
			keys[rc.MessageKey()] = true
		}
		for _, p := range trust.Purposes() {
			d := trust.Decide(f, r, p, now, trust.Config{})
			keys[d.RecommendedKey] = true
			for _, rs := range d.Reasons {
				keys[rs.MessageKey()] = true
			}
		}
	}
	if len(keys) < 40 {
		t.Fatalf("only %d keys produced", len(keys))
	}
	for k := range keys {
		for _, lang := range []string{i18n.PT, i18n.EN, i18n.ES} {
			if msg := c.Message(lang, k, map[string]any{}); msg == k {
				t.Errorf("%s has no %s message", k, lang)
			}
		}
	}
}
