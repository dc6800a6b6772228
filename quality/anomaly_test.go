package quality_test

import (
	"math"
	"sort"
	"testing"

	"github.com/vigia-data/vigia/quality"
)

func TestDetectAnomaly(t *testing.T) {
	steady := []float64{1000, 1010, 990, 1005, 995} // median 1000, MAD 5
	tests := []struct {
		name          string
		in            quality.AnomalyInput
		wantEval      bool
		wantReason    string
		wantAnomaly   bool
		wantSeverity  quality.Severity
		wantDirection string
		wantScale     string
		wantZ         *float64
	}{
		{
			name:     "NinetyPercentDropAfterFiveSteadyScans",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: steady, Value: 100},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "down",
			wantScale: "mad", wantZ: fp(-121.41),
		},
		{
			name:     "SteadyNoiseIsNoAnomaly",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: steady, Value: 1008},
			wantEval: true, wantDirection: "up", wantScale: "mad", wantZ: fp(1.0792),
		},
		{
			name:     "JustAboveThresholdIsWarning",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: steady, Value: 1030},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityWarning, wantDirection: "up", wantScale: "mad", wantZ: fp(4.047),
		},
		{
			name:     "TunedThresholdSilencesModerateMove",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: steady, Value: 1030, Threshold: 4.5},
			wantEval: true, wantDirection: "up", wantScale: "mad", wantZ: fp(4.047),
		},
		{
			name:     "ColdStartFlagsAnEmptiedTableAsCritical",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: steady[:4], Value: 0},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "down",
		},
		{
			name:     "ColdStartLetsAModerateChangePass",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: steady[:4], Value: 700},
			wantEval: true, wantDirection: "down",
		},
		{
			name:     "ColdStartFromTheSecondScan",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{1000}, Value: 2000},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "up",
		},
		{
			name:       "FirstScanIsNotJudged",
			in:         quality.AnomalyInput{Metric: quality.MetricVolume, Value: 0},
			wantReason: "insufficient_history",
		},
		{
			name:     "NaNHistoryPointsDoNotCount",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{1000, 1000, math.NaN(), 1000, 1000}, Value: 990},
			wantEval: true, wantDirection: "down",
		},
		{
			name:     "ColdStartNullRateJumpAboveTwentyPoints",
			in:       quality.AnomalyInput{Metric: quality.MetricNullRate, History: []float64{0.01, 0.01}, Value: 0.25},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "up",
		},
		{
			name:     "ColdStartNullRateJumpOfTwentyPointsIsNotGross",
			in:       quality.AnomalyInput{Metric: quality.MetricNullRate, History: []float64{0.01, 0.01}, Value: 0.21},
			wantEval: true, wantDirection: "up",
		},
		{
			// A history that moved a lot gives a wide scale: the z alone would call a 90%
			// drop a warning (z −4.47); the gross change makes it critical.
			name:     "NinetyPercentDropAfterADoublingIsCritical",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{2000, 2000, 2000, 2000, 2000, 2000, 4000}, Value: 400},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "down", wantScale: "mean_abs_dev", wantZ: fp(-4.4685),
		},
		{
			// The z says nothing at all here (−1.49); the drop is still gross.
			name:     "NinetyPercentDropHiddenByALevelShiftIsCritical",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{8000, 8000, 8000, 8000, 16000, 16000, 16000}, Value: 1600},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "down", wantScale: "mean_abs_dev", wantZ: fp(-1.4891),
		},
		{
			// Back to the median after a drop: gross from the previous scan, not from the median.
			name:     "RestoredTableIsNotAGrossRise",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{2000, 2000, 2000, 2000, 2000, 2000, 400}, Value: 2000},
			wantEval: true, wantScale: "mean_abs_dev", wantZ: fp(0),
		},
		{
			name: "TunedMetricIsJudgedByTheZOnly",
			in: quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{8000, 8000, 8000, 8000, 16000, 16000, 16000}, Value: 1600,
				Threshold: 4.5, Tuned: true},
			wantEval: true, wantDirection: "down", wantScale: "mean_abs_dev", wantZ: fp(-1.4891),
		},
		{
			name: "SampledValueWhoseIntervalHoldsTheMedianIsNoAnomaly",
			in: quality.AnomalyInput{Metric: quality.MetricDistinctRatio, History: []float64{0.1, 0.1, 0.1, 0.1, 0.1}, Value: 0.1207,
				Interval: &[2]float64{0.09, 0.15}},
			wantEval: true, wantScale: "constant",
		},
		{
			name: "SampledValueWhoseIntervalLiesOutsideTheBandIsAnomaly",
			in: quality.AnomalyInput{Metric: quality.MetricDistinctRatio, History: []float64{0.1, 0.1, 0.1, 0.1, 0.1}, Value: 0.5,
				Interval: &[2]float64{0.45, 0.55}},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "up", wantScale: "constant",
		},
		{
			name:       "NaNValueNotJudged",
			in:         quality.AnomalyInput{Metric: quality.MetricVolume, History: steady, Value: math.NaN()},
			wantReason: "invalid_value",
		},
		{
			name:     "MADZeroFallsBackToMeanAbsoluteDeviation",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{100, 100, 100, 100, 130}, Value: 130},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityWarning, wantDirection: "up", wantScale: "mean_abs_dev", wantZ: fp(3.9894),
		},
		{
			name:     "ConstantHistoryFlagsDropAboveFloor",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{1000, 1000, 1000, 1000, 1000}, Value: 100},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "down", wantScale: "constant",
		},
		{
			name:     "ConstantHistoryIgnoresChangeBelowFloor",
			in:       quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{1000, 1000, 1000, 1000, 1000}, Value: 1005},
			wantEval: true, wantDirection: "up", wantScale: "constant",
		},
		{
			name:     "ConstantHistorySameValue",
			in:       quality.AnomalyInput{Metric: quality.MetricNullRate, History: []float64{0, 0, 0, 0, 0}, Value: 0},
			wantEval: true, wantScale: "constant",
		},
		{
			name:     "TinyNullRateWobbleBelowFloor",
			in:       quality.AnomalyInput{Metric: quality.MetricNullRate, History: []float64{0.0001, 0.0002, 0.0001, 0.0002, 0.0001}, Value: 0.002},
			wantEval: true, wantDirection: "up", wantScale: "mean_abs_dev", wantZ: fp(37.8999),
		},
		{
			name:     "FresherThanUsualIsNoAnomaly",
			in:       quality.AnomalyInput{Metric: quality.MetricFreshnessLag, History: []float64{3600, 3700, 3500, 3650, 3550}, Value: 60},
			wantEval: true, wantDirection: "down", wantScale: "mad", wantZ: fp(-47.7546),
		},
		{
			name:     "StalerThanUsualIsAnomaly",
			in:       quality.AnomalyInput{Metric: quality.MetricFreshnessLag, History: []float64{3600, 3700, 3500, 3650, 3550}, Value: 86400},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "up", wantScale: "mad", wantZ: fp(1116.972),
		},
		{
			name: "OnlyNewestWindowCounts",
			in: quality.AnomalyInput{Metric: quality.MetricVolume, Window: 5, Value: 10,
				History: []float64{10, 10, 10, 10, 10, 10, 1000, 1010, 990, 1005, 995}},
			wantEval: true, wantAnomaly: true, wantSeverity: quality.SeverityCritical, wantDirection: "down", wantScale: "mad", wantZ: fp(-133.551),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quality.DetectAnomaly(tt.in)
			if got.Evaluated != tt.wantEval || got.Reason != tt.wantReason {
				t.Fatalf("evaluated = %v (%q), want %v (%q)", got.Evaluated, got.Reason, tt.wantEval, tt.wantReason)
			}
			if got.Anomalous != tt.wantAnomaly || got.Severity != tt.wantSeverity {
				t.Errorf("anomaly = %v %q, want %v %q (z %v)", got.Anomalous, got.Severity, tt.wantAnomaly, tt.wantSeverity, got.Z)
			}
			if got.Direction != tt.wantDirection || got.Scale != tt.wantScale {
				t.Errorf("direction, scale = %q, %q, want %q, %q", got.Direction, got.Scale, tt.wantDirection, tt.wantScale)
			}
			switch {
			case tt.wantZ == nil && got.Z != nil:
				t.Errorf("z = %v, want nil", *got.Z)
			case tt.wantZ != nil && (got.Z == nil || math.Abs(*got.Z-*tt.wantZ) > 1e-3):
				t.Errorf("z = %v, want %v", nilOr(got.Z), *tt.wantZ)
			}
		})
	}
}

func TestDetectAnomalyReportsRobustStatistics(t *testing.T) {
	got := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{1000, 1010, 990, 1005, 995}, Value: 100})
	if got.Median != 1000 || got.MAD != 5 || got.Threshold != 3.5 || got.HistorySize != 5 || got.MinChange != 10 {
		t.Fatalf("got %+v", got)
	}
}

func TestAnomalyBandSaysWhenAMetricIsBack(t *testing.T) {
	drop := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{1000, 1000, 1000, 1000, 1000}, Value: 100})
	if !drop.Anomalous || drop.Band == nil || drop.Band.Low == nil || *drop.Band.Low != 990 || *drop.Band.High != 1010 {
		t.Fatalf("band %+v", drop.Band)
	}
	for _, tc := range []struct {
		value float64
		dir   string
		want  bool
	}{{100, "down", false}, {989, "down", false}, {990, "down", true}, {5000, "down", true}, {5000, "up", false}, {1010, "", true}, {1011, "", false}} {
		if got := drop.Band.Holds(tc.value, nil, tc.dir); got != tc.want {
			t.Errorf("Holds(%v, %q) = %v, want %v", tc.value, tc.dir, got, tc.want)
		}
	}
	if !drop.Band.Holds(900, &[2]float64{850, 995}, "down") {
		t.Error("an interval reaching into the band holds")
	}
	cold := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricNullRate, History: []float64{0.05}, Value: 0.5})
	if !cold.ColdStart || cold.Band == nil || cold.Band.Low != nil || math.Abs(*cold.Band.High-0.25) > 1e-12 {
		t.Fatalf("cold start band %+v", cold.Band)
	}
	fresh := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricFreshnessLag, History: []float64{3600, 3700, 3500, 3650, 3550}, Value: 86400})
	if fresh.Band.Low != nil || fresh.Band.High == nil {
		t.Fatalf("freshness band %+v", fresh.Band)
	}
}

// A volume change's severity grows with its size in both directions: a 90% drop is at
// least as severe as a 100% rise, whatever the history did before.
func TestVolumeSeverityFollowsMagnitude(t *testing.T) {
	histories := [][]float64{
		{1000, 1010, 990, 1005, 995},
		{1000, 1000, 1000, 1000, 1000},
		{1000, 1000, 1000, 1000, 1000, 2000},
		{1000, 1000, 1000, 2000, 2000, 2000},
		{1000, 1400, 700, 1300, 900, 1000},
	}
	rank := func(a quality.Anomaly) int {
		switch {
		case !a.Anomalous:
			return 0
		case a.Severity == quality.SeverityWarning:
			return 1
		}
		return 2
	}
	for _, h := range histories {
		prev := h[len(h)-1]
		rise := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricVolume, History: h, Value: 2 * prev})
		drop := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricVolume, History: h, Value: 0.1 * prev})
		if rank(drop) < rank(rise) || rank(drop) != 2 {
			t.Errorf("history %v: drop %v %s, rise %v %s", h, drop.Anomalous, drop.Severity, rise.Anomalous, rise.Severity)
		}
		// Below both the median and the previous scan, a larger drop is never milder.
		base := math.Min(prev, median(h))
		last := -1
		for _, f := range []float64{0.9, 0.7, 0.5, 0.3, 0.1, 0} {
			r := rank(quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricVolume, History: h, Value: f * base}))
			if r < last {
				t.Errorf("history %v: severity fell from %d to %d as the drop grew to %v%%", h, last, r, (1-f)*100)
			}
			last = r
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func nilOr(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
