package scan_test

import (
	"testing"

	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

// The domain weights passed to Evaluate make the score, and the explanation notes them.
func TestEvaluateAppliesDomainWeights(t *testing.T) {
	base := table(col("id", "integer", 1), col("email", "text", 2))
	prev, err := scan.Evaluate(input(scan.PrevState{}, profile(1000, false), base))
	if err != nil {
		t.Fatal(err)
	}
	in := input(scan.PrevState{Seq: 1, Columns: []quality.ColumnShape{{Name: "id", Type: "integer", Position: 1},
		{Name: "email", Type: "text", Position: 2}}, Score: &prev.Score}, profile(1000, false), base)
	in.Weights = quality.Weights{quality.Completude: 60, quality.Unicidade: 40, quality.Validade: 0, quality.Atualidade: 0, quality.Consistencia: 0}
	res, err := scan.Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	// 2000 cells, 50 null emails: completude 97.5; "id" without a declared key is
	// unique-looking but its distinct values were not counted: unicidade is null, so
	// completude carries the whole score.
	d := res.Score.Dimensions
	if *d.Completude != 97.5 || d.Unicidade != nil || *res.Score.Score != 97.5 {
		t.Fatalf("dimensions %+v score %v", d, *res.Score.Score)
	}
	notes := quality.Explain(res.Score, &prev.Score).Notes
	if len(notes) != 2 || notes[0].Code != quality.NoteWeightsChanged || notes[1].Code != quality.NoteCompletudeWorstColumn {
		t.Fatalf("notes %+v", notes)
	}
}
