package scan_test

import (
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

func steadyHistory(n int, volume float64) []scan.Metrics {
	out := make([]scan.Metrics, n)
	for i := range out {
		out[i] = scan.Metrics{"volume": volume, "null_rate:email": 0.05}
	}
	return out
}

func volumeIssue(clean int, band *quality.Band) scan.KnownIssue {
	return scan.KnownIssue{ID: "vol-1", Type: "anomaly", Severity: "critical", Status: "open", Metric: "volume",
		LastDetectedSeq: 6, Band: band, Direction: "down", CleanScans: clean}
}

func transitionOf(res scan.DatasetResult, id string) *scan.IssueTransition {
	for i, tr := range res.Transitions {
		if tr.IssueID == id {
			return &res.Transitions[i]
		}
	}
	return nil
}

func TestAnomalyIssuesCloseWhenTheDataRecovers(t *testing.T) {
	base := table(col("id", "integer", 1), col("email", "text", 2))
	band := &quality.Band{Low: vigia.Ptr(990.0), High: vigia.Ptr(1010.0)}
	// The history holds the drop: the robust model alone would no longer flag 100 rows.
	hist := append(steadyHistory(6, 1000), scan.Metrics{"volume": 100, "null_rate:email": 0.05})

	t.Run("FirstCleanScanCounts", func(t *testing.T) {
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 7, History: hist, Issues: []scan.KnownIssue{volumeIssue(0, band)}}, profile(1000, false), base))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Recovery) != 1 || res.Recovery[0] != (scan.CleanScans{IssueID: "vol-1", Count: 1}) || transitionOf(res, "vol-1") != nil {
			t.Fatalf("recovery %+v transitions %+v", res.Recovery, res.Transitions)
		}
		if res.Verdict.Verdict != quality.VerdictFail {
			t.Fatalf("still open after one clean scan: verdict %s", res.Verdict.Verdict)
		}
	})
	t.Run("SecondCleanScanResolves", func(t *testing.T) {
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 8, History: hist, Issues: []scan.KnownIssue{volumeIssue(1, band)}}, profile(1000, false), base))
		if err != nil {
			t.Fatal(err)
		}
		tr := transitionOf(res, "vol-1")
		if tr == nil || tr.To != "resolved" || tr.Event != scan.EventResolved || tr.From != "open" {
			t.Fatalf("transitions %+v", res.Transitions)
		}
		// It no longer stands after this scan, and it still deducts in it (a resolved
		// issue stops deducting at the next scan).
		if res.Verdict.Verdict != quality.VerdictPass {
			t.Fatalf("verdict %s %+v", res.Verdict.Verdict, res.Verdict.Reasons)
		}
		if c := *res.Score.Dimensions.Consistencia; c != 88 {
			t.Fatalf("consistencia %v, want 100 - 30 × 2/5 = 88", c)
		}
	})
	t.Run("ANewLevelIsNoRecovery", func(t *testing.T) {
		// 100 rows for the 8th time: the median moved, the robust model sees nothing,
		// and the table is still 90% below the band the issue was opened against.
		shifted := append(steadyHistory(4, 1000), steadyHistory(8, 100)...)
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 12, History: shifted, Issues: []scan.KnownIssue{volumeIssue(1, band)}}, profile(100, false), base))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Redetected) != 0 || transitionOf(res, "vol-1") != nil || len(res.Recovery) != 1 || res.Recovery[0].Count != 0 {
			t.Fatalf("redetected %+v transitions %+v recovery %+v", res.Redetected, res.Transitions, res.Recovery)
		}
	})
	t.Run("AnIssueWithoutABandRecoversWhenNotFlagged", func(t *testing.T) {
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 8, History: steadyHistory(7, 1000), Issues: []scan.KnownIssue{volumeIssue(1, nil)}}, profile(1000, false), base))
		if err != nil {
			t.Fatal(err)
		}
		if tr := transitionOf(res, "vol-1"); tr == nil || tr.Event != scan.EventResolved {
			t.Fatalf("transitions %+v", res.Transitions)
		}
	})
	t.Run("AGoneColumnTakesItsAnomaliesWithIt", func(t *testing.T) {
		gone := scan.KnownIssue{ID: "nr-1", Type: "anomaly", Severity: "warning", Status: "acknowledged", Metric: "null_rate", Column: "email", LastDetectedSeq: 5}
		p := profile(1000, false)
		p.Columns = p.Columns[:1]
		res, err := scan.Evaluate(input(scan.PrevState{Seq: 7, History: steadyHistory(7, 1000), Issues: []scan.KnownIssue{gone}}, p, table(col("id", "integer", 1))))
		if err != nil {
			t.Fatal(err)
		}
		tr := transitionOf(res, "nr-1")
		if tr == nil || tr.From != "acknowledged" || tr.To != "resolved" || tr.Event != scan.EventResolved || tr.Note != scan.NoteColumnDropped {
			t.Fatalf("transitions %+v", res.Transitions)
		}
	})
}

// Detected again, an anomaly issue keeps its highest severity and says its latest value.
func TestRedetectionKeepsTheHighestSeverityAndRewritesTheTitle(t *testing.T) {
	base := table(col("id", "integer", 1), col("email", "text", 2))
	// 2000 for six scans then 4000: a 400 row count is z −5.1 (a warning for the z) but
	// gross from the median and from the previous scan: critical.
	hist := append(steadyHistory(6, 2000), scan.Metrics{"volume": 4000, "null_rate:email": 0.05})
	open := scan.KnownIssue{ID: "vol-1", Type: "anomaly", Severity: "warning", Status: "open", Metric: "volume", LastDetectedSeq: 7,
		Band: &quality.Band{Low: vigia.Ptr(1980.0), High: vigia.Ptr(2020.0)}, Direction: "up", CleanScans: 1}
	res, err := scan.Evaluate(input(scan.PrevState{Seq: 7, History: hist, Issues: []scan.KnownIssue{open}}, profile(400, false), base))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Redetected) != 1 {
		t.Fatalf("redetected %+v", res.Redetected)
	}
	rd := res.Redetected[0]
	if rd.Severity != "critical" || !strings.Contains(rd.Title, "400 linhas (mediana 2000)") || rd.TitleParams["value"] != 400.0 {
		t.Fatalf("redetection %+v", rd)
	}
	if b, _ := rd.Details["band"].(*quality.Band); b == nil || *b.Low != 1980 || rd.Details["method"] != quality.MethodGross || rd.Details["direction"] != "down" {
		t.Fatalf("details %+v", rd.Details)
	}
	var ded quality.IssueDeduction
	for _, d := range res.Score.Consistency.Issues {
		if d.IssueID == "vol-1" {
			ded = d
		}
	}
	if ded.Severity != "critical" || ded.PointsAfter != 30 || res.Verdict.Verdict != quality.VerdictFail {
		t.Fatalf("deduction %+v verdict %s", ded, res.Verdict.Verdict)
	}
	// A later warning detection does not lower it.
	open.Severity = "critical"
	hist = append(steadyHistory(6, 1000), scan.Metrics{"volume": 1000})
	later, err := scan.Evaluate(input(scan.PrevState{Seq: 7, History: hist, Issues: []scan.KnownIssue{open}}, profile(1030, false), base))
	if err != nil {
		t.Fatal(err)
	}
	if len(later.Redetected) != 1 || later.Redetected[0].Severity != "critical" {
		t.Fatalf("redetected %+v", later.Redetected)
	}
}

// The gross-change thresholds judge a new table from its second scan.
func TestColdStartRaisesGrossChanges(t *testing.T) {
	base := table(col("id", "integer", 1), col("email", "text", 2))
	two := steadyHistory(2, 1000)
	res, err := scan.Evaluate(input(scan.PrevState{Seq: 2, History: two}, profile(200, false), base))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Signals) != 1 || res.Signals[0].Method != quality.MethodGross || res.Signals[0].Severity != "critical" ||
		len(res.NewIssues) != 1 || res.NewIssues[0].Band == nil || *res.NewIssues[0].Band.Low != 500 {
		t.Fatalf("signals %+v issues %+v", res.Signals, res.NewIssues)
	}
	quiet, err := scan.Evaluate(input(scan.PrevState{Seq: 2, History: two}, profile(700, false), base))
	if err != nil {
		t.Fatal(err)
	}
	if len(quiet.Signals) != 0 {
		t.Fatalf("a 30%% drop during a cold start: %+v", quiet.Signals)
	}
}

// A distinct ratio measured on a sample is an anomaly only when its whole interval lies
// outside the band: the same true value never flaps with the sample.
func TestSampledDistinctRatioIsJudgedAtItsInterval(t *testing.T) {
	base := table(col("id", "integer", 1), col("codigo", "integer", 2))
	hist := make([]scan.Metrics, 6)
	for i := range hist {
		hist[i] = scan.Metrics{"volume": 30000, "distinct_ratio:codigo": 0.1}
	}
	prof := func(value float64, ci [2]float64) *source.TableProfile {
		p := profile(30000, false)
		p.Columns = []source.ColumnProfile{{Name: "id"}, {Name: "codigo", Distinct: &source.Estimate{Value: value, Estimated: true, CI95: ci}}}
		return p
	}
	noisy, err := scan.Evaluate(input(scan.PrevState{Seq: 6, History: hist}, prof(3621, [2]float64{2700, 4100}), base))
	if err != nil {
		t.Fatal(err)
	}
	if len(noisy.Signals) != 0 {
		t.Fatalf("0.1207 with an interval holding 0.1 flagged: %+v", noisy.Signals)
	}
	real, err := scan.Evaluate(input(scan.PrevState{Seq: 6, History: hist}, prof(15000, [2]float64{14000, 16000}), base))
	if err != nil {
		t.Fatal(err)
	}
	if len(real.Signals) != 1 || real.Signals[0].CI95 == nil || real.Signals[0].CI95[0] != 14000.0/30000 {
		t.Fatalf("signals %+v", real.Signals)
	}
}
