package scan_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func table(cols ...source.Column) source.Table {
	return source.Table{Schema: "public", Name: "clientes", Kind: "table", Columns: cols}
}

func col(name, typ string, pos int) source.Column {
	return source.Column{Name: name, DataType: typ, Position: pos, Class: source.ClassText}
}

func profile(rows int64, truncated bool) *source.TableProfile {
	latest := now.Add(-time.Hour)
	return &source.TableProfile{RowCount: rows, Truncated: truncated, Depth: source.DepthStandard, LatestTimestamp: &latest,
		Columns: []source.ColumnProfile{{Name: "id", NullCount: 0}, {Name: "email", NullCount: rows / 20}}}
}

func input(prev scan.PrevState, p *source.TableProfile, t source.Table) scan.EvaluateInput {
	return scan.EvaluateInput{Now: now, ScanID: "scan-2", Dataset: scan.DatasetRef{ID: "ds-1", WorkspaceID: "ws-1", Schema: "public", Table: "clientes"},
		Table: t, Profile: p, Prev: prev, DecayScans: 5, FreshnessSLA: 24 * time.Hour}
}

func TestEvaluate(t *testing.T) {
	base := table(col("id", "integer", 1), col("email", "text", 2))
	steady := make([]scan.Metrics, 6)
	for i := range steady {
		steady[i] = scan.Metrics{"volume": 1000 + float64(i%2), "null_rate:email": 0.05}
	}
	warn := quality.VerdictWarn

	t.Run("FirstScanIsTheBaseline", func(t *testing.T) {
		res, err := scan.Evaluate(input(scan.PrevState{}, profile(1000, false), base))
		if err != nil {
			t.Fatal(err)
		}
		if res.Seq != 1 || len(res.NewIssues) != 0 || len(res.Events) != 0 || len(res.SchemaChanges) != 0 {
			t.Fatalf("baseline produced %+v", res)
		}
		if res.Score.Score == nil || res.Verdict.Verdict == quality.VerdictUnknown {
			t.Fatalf("no score or verdict: %+v", res.Score)
		}
	})

	t.Run("DroppedColumnOpensStructuralDriftWithRename", func(t *testing.T) {
		prev := scan.PrevState{Seq: 3, Columns: []quality.ColumnShape{{Name: "id", Type: "integer", Position: 1},
			{Name: "codigo_postal", Type: "text", Position: 2}}, History: steady}
		res, err := scan.Evaluate(input(prev, profile(1000, false), table(col("id", "integer", 1), col("cod_postal", "text", 2))))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NewIssues) != 1 || res.NewIssues[0].Type != "schema_drift" || !res.NewIssues[0].Structural {
			t.Fatalf("issues %+v", res.NewIssues)
		}
		var renamed bool
		for _, c := range res.SchemaChanges {
			renamed = renamed || c.Change == "drop" && c.SuggestedRenameTo != nil && *c.SuggestedRenameTo == "cod_postal"
		}
		if !renamed {
			t.Fatalf("changes %+v", res.SchemaChanges)
		}
		if d := res.Score.Dimensions.Consistencia; d == nil || *d >= 100 {
			t.Fatalf("consistencia %v", d)
		}
	})

	t.Run("VolumeDropOpensAnomalyOnce", func(t *testing.T) {
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 6, History: steady}, profile(100, false), base))
		if err != nil {
			t.Fatal(err)
		}
		var anomaly *scan.NewIssue
		for i := range res.NewIssues {
			if res.NewIssues[i].Type == "anomaly" && res.NewIssues[i].Metric == "volume" {
				anomaly = &res.NewIssues[i]
			}
		}
		if anomaly == nil {
			t.Fatalf("no volume anomaly: %+v", res.NewIssues)
		}
		again, err := scan.Evaluate(input(scan.PrevState{Seq: 7, History: steady, Issues: []scan.KnownIssue{{ID: "is-1",
			Type: "anomaly", Severity: "critical", Status: "open", Metric: "volume", LastDetectedSeq: 7}}}, profile(100, false), base))
		if err != nil {
			t.Fatal(err)
		}
		for _, ni := range again.NewIssues {
			if ni.Type == "anomaly" && ni.Metric == "volume" {
				t.Fatal("a second open issue for the same anomaly")
			}
		}
		if len(again.Redetected) == 0 || again.Redetected[0].IssueID != "is-1" {
			t.Fatalf("not redetected: %+v", again.Redetected)
		}
	})

	t.Run("SilencedMetricKeepsSignalOpensNothing", func(t *testing.T) {
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 6, History: steady, Silenced: map[string]bool{"volume": true}}, profile(100, false), base))
		if err != nil {
			t.Fatal(err)
		}
		for _, ni := range res.NewIssues {
			if ni.Metric == "volume" {
				t.Fatal("silenced metric opened an issue")
			}
		}
		if len(res.Signals) == 0 {
			t.Fatal("no signal kept")
		}
	})

	t.Run("TruncatedProfileTracksNoVolume", func(t *testing.T) {
		res, err := scan.Evaluate(input(scan.PrevState{}, profile(1000, true), base))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := res.Metrics["volume"]; ok {
			t.Fatalf("metrics %v", res.Metrics)
		}
	})

	t.Run("VerdictChangeEmitsOneStableEvent", func(t *testing.T) {
		prev := scan.PrevState{Seq: 6, History: steady, Verdict: &warn}
		a, err := scan.Evaluate(input(prev, profile(1000, false), base))
		if err != nil {
			t.Fatal(err)
		}
		if a.Verdict.Verdict == warn {
			t.Skip("verdict did not change")
		}
		b, _ := scan.Evaluate(input(prev, profile(1000, false), base))
		if len(a.Events) != 1 || a.Events[0].Type != "dataset.verdict_changed" || a.Events[0].IdempotencyKey != b.Events[0].IdempotencyKey ||
			a.Events[0].IdempotencyKey != event.IdempotencyKey("ds-1", "scan-2", "dataset.verdict_changed", "") || len(a.Events[0].IdempotencyKey) != 64 {
			t.Fatalf("events %+v / %+v", a.Events, b.Events)
		}
		same, _ := scan.Evaluate(input(scan.PrevState{Seq: 6, History: steady, Verdict: &a.Verdict.Verdict}, profile(1000, false), base))
		if len(same.Events) != 0 {
			t.Fatal("an unchanged verdict emitted an event")
		}
	})

	t.Run("ResolvedIssueIsGoneFromConsistencia", func(t *testing.T) {
		prevScore := quality.Score{Consistency: quality.Consistency{Issues: []quality.IssueDeduction{{IssueID: "is-9", Severity: "warning", AgeAfter: 1, PointsAfter: 12}}}}
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 4, History: steady, Score: &prevScore, Issues: []scan.KnownIssue{{ID: "is-9",
			Type: "anomaly", Severity: "warning", Status: "resolved", Metric: "null_rate", Column: "email", LastDetectedSeq: 3}}}, profile(1000, false), base))
		if err != nil {
			t.Fatal(err)
		}
		var gone bool
		for _, d := range res.Score.Consistency.Issues {
			gone = gone || d.IssueID == "is-9" && d.Change == "gone" && d.PointsAfter == 0
		}
		if !gone || *res.Score.Dimensions.Consistencia != 100 {
			t.Fatalf("consistency %+v", res.Score.Consistency)
		}
	})
}
