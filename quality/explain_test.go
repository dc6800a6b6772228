package quality_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
)

func TestExplain(t *testing.T) {
	columns := []quality.ColumnStats{{Name: "id", PrimaryKey: true, Distinct: fp(100)}, {Name: "b", NullCount: 20}}
	worst := quality.Note{Code: "completude_worst_column", Params: map[string]any{"column": "b", "column_completude": 80.0, "cell_average": 90.0}}
	prevIn := quality.ScoreInput{RowCount: 100, Columns: columns,
		Consistency: []quality.ConsistencyIssue{{ID: "a1", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, DetectedNow: true}}}
	currIn := quality.ScoreInput{RowCount: 100, Columns: columns,
		Consistency: []quality.ConsistencyIssue{{ID: "a1", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, Age: 1, PrevAge: vigia.Ptr(0)}}}
	prev := mustScore(t, prevIn)
	curr := mustScore(t, currIn)

	t.Run("FirstScanExplainsOpenedIssue", func(t *testing.T) {
		got := quality.Explain(prev, nil)
		want := quality.Explanation{Score: prev.Score, Drivers: []quality.Driver{{
			Kind: "consistency_issue", IssueID: "a1",
			Params: map[string]any{"change": "opened", "age_before": nil, "age_after": 0, "points_before": 0.0,
				"points_after": 15.0, "decay_scans": 5, "severity": "warning"},
		}}, Notes: []quality.Note{worst}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("explanation (-want +got):\n%s", diff)
		}
	})

	t.Run("DecayingIssueRaisesConsistencia", func(t *testing.T) {
		got := quality.Explain(curr, &prev)
		want := quality.Explanation{Score: curr.Score, PreviousScore: prev.Score, Drivers: []quality.Driver{
			{Kind: "consistency_issue", IssueID: "a1", Params: map[string]any{"change": "decaying", "age_before": 0, "age_after": 1,
				"points_before": 15.0, "points_after": 12.0, "decay_scans": 5, "severity": "warning"}},
			{Kind: "dimension_changed", Params: map[string]any{"dimension": "consistencia", "before": 85.0, "after": 88.0, "delta": 3.0}},
		}, Notes: []quality.Note{worst}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("explanation (-want +got):\n%s", diff)
		}
	})

	t.Run("WeightsChangedNotedPerDimension", func(t *testing.T) {
		in := currIn
		in.Weights = quality.Weights{quality.Completude: 60, quality.Unicidade: 40}
		weighted := mustScore(t, in)
		got := quality.Explain(weighted, &curr)
		var kinds []string
		for _, d := range got.Drivers {
			kinds = append(kinds, d.Kind+":"+asString(d.Params["dimension"]))
		}
		wantKinds := []string{"consistency_issue:", "weight_changed:completude", "weight_changed:unicidade",
			"weight_changed:validade", "weight_changed:atualidade", "weight_changed:consistencia"}
		if diff := cmp.Diff(wantKinds, kinds); diff != "" {
			t.Errorf("drivers (-want +got):\n%s", diff)
		}
		if len(got.Notes) != 2 || got.Notes[0].Code != "weights_changed" || got.Notes[1].Code != worst.Code {
			t.Fatalf("notes = %+v, want weights_changed", got.Notes)
		}
		wc := got.Drivers[1].Params
		if wc["weight_before"] != 20.0 || wc["weight_after"] != 60.0 {
			t.Errorf("completude weight params = %v", wc)
		}
	})

	t.Run("ScorePredatingModelNoted", func(t *testing.T) {
		old := prev
		old.Consistency.Model = ""
		got := quality.Explain(curr, &old)
		want := []quality.Note{{Code: "consistency_model_changed", Params: map[string]any{"from": nil, "to": "decay_v1_k5"}}, worst}
		if diff := cmp.Diff(want, got.Notes); diff != "" {
			t.Fatalf("notes (-want +got):\n%s", diff)
		}
	})

	t.Run("OldScoreWithoutWeightsReadAsDefault", func(t *testing.T) {
		old := curr
		old.Weights = nil
		if got := quality.Explain(curr, &old); len(got.Notes) != 1 || got.Notes[0].Code != worst.Code {
			t.Fatalf("notes = %+v, want only the worst column", got.Notes)
		}
	})

	t.Run("DimensionAppearingOutranksMoves", func(t *testing.T) {
		in := currIn
		in.Now, in.LatestTimestamp = scanTime, vigia.Ptr(scanTime)
		fresh := mustScore(t, in)
		got := quality.Explain(fresh, &prev)
		var dims []any
		for _, d := range got.Drivers {
			if d.Kind == "dimension_changed" {
				dims = append(dims, d.Params["dimension"])
			}
		}
		if diff := cmp.Diff([]any{"atualidade", "consistencia"}, dims); diff != "" {
			t.Fatalf("dimension drivers (-want +got):\n%s", diff)
		}
	})
}

// consistencia has a floor: once its deductions pass 100 the dimension cannot fall, so
// the explanation says so and names the issues it hides, newest last.
func TestExplainNamesTheIssuesBeyondASaturatedConsistencia(t *testing.T) {
	var issues []quality.ConsistencyIssue
	for i, age := range []int{2, 1, 1, 0, 0} {
		issues = append(issues, quality.ConsistencyIssue{ID: string(rune('a' + i)), Type: "anomaly", Severity: quality.SeverityCritical,
			Status: quality.IssueOpen, Age: age, PrevAge: vigia.Ptr(max(age-1, 0)), DetectedNow: age == 0})
	}
	// 18 + 24 + 24 + 30 + 30 = 126: the last 26 points (issue e, the newest; d reaches 96) do not show.
	sc := mustScore(t, quality.ScoreInput{RowCount: 10, Columns: []quality.ColumnStats{{Name: "x"}}, Consistency: issues})
	if *sc.Dimensions.Consistencia != 0 || !sc.Consistency.Saturated || sc.Consistency.HiddenPoints != 26 {
		t.Fatalf("consistency %+v", sc.Consistency)
	}
	got := quality.Explain(sc, nil)
	want := []quality.Note{{Code: "dimension_saturated", Params: map[string]any{"dimension": "consistencia", "deduction": 126.0,
		"floor": 0.0, "hidden_points": 26.0, "issues_beyond_floor": []string{"e"}}}}
	if diff := cmp.Diff(want, got.Notes); diff != "" {
		t.Fatalf("notes (-want +got):\n%s", diff)
	}
	unsaturated := mustScore(t, quality.ScoreInput{RowCount: 10, Columns: []quality.ColumnStats{{Name: "x"}}, Consistency: issues[:3]})
	if unsaturated.Consistency.Saturated || len(quality.Explain(unsaturated, nil).Notes) != 0 {
		t.Fatalf("66 points saturate nothing: %+v", unsaturated.Consistency)
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
