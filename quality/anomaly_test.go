package quality_test

import (
	"math"
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
			name:       "FourPointsAreNotEnough",
			in:         quality.AnomalyInput{Metric: quality.MetricVolume, History: steady[:4], Value: 0},
			wantReason: "insufficient_history",
		},
		{
			name:       "NaNHistoryPointsDoNotCount",
			in:         quality.AnomalyInput{Metric: quality.MetricVolume, History: []float64{1, 2, math.NaN(), 3, 4}, Value: 0},
			wantReason: "insufficient_history",
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

func nilOr(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
