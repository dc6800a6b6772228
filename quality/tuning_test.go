package quality_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vigia-data/vigia/quality"
)

func TestNextThreshold(t *testing.T) {
	tests := []struct {
		name    string
		current float64
		ignored int
		want    float64
	}{
		{"NoIgnoreKeepsThreshold", 3.5, 0, 3.5},
		{"OneIgnoreAddsHalf", 3.5, 1, 4},
		{"TwoIgnoresAddOne", 3.5, 2, 4.5},
		{"CappedAtTen", 3.5, 100, 10},
		{"AtCapStays", 10, 1, 10},
		{"AboveCapNeverLowered", 12, 1, 12},
		{"ZeroMeansDefault", 0, 1, 4},
		{"NegativeIgnoresChangeNothing", 5, -3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quality.NextThreshold(tt.current, tt.ignored); got != tt.want {
				t.Fatalf("NextThreshold(%v, %d) = %v, want %v", tt.current, tt.ignored, got, tt.want)
			}
		})
	}
}

func TestTuningFor(t *testing.T) {
	label := "3.5 → 4.5 (2 ignorados como esperado)"
	tests := []struct {
		name    string
		ignored int
		lang    string
		want    quality.Tuning
	}{
		{
			name: "UntunedHasNoLabel", ignored: 0,
			want: quality.Tuning{Metric: "null_rate", Column: "email", Threshold: 3.5, Resolved: 1, NextOnIgnore: 4},
		},
		{
			name: "TwoIgnoresTuneToFourAndHalf", ignored: 2, lang: "pt-PT",
			want: quality.Tuning{Metric: "null_rate", Column: "email", Threshold: 4.5, Ignored: 2, Resolved: 1, NextOnIgnore: 5,
				TunedThreshold: fp(4.5), TunedThresholdLabel: &label},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quality.TuningFor(quality.MetricNullRate, "email", tt.ignored, 1, false, tt.lang)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("tuning (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTunedThresholdLabel(t *testing.T) {
	tests := []struct {
		name    string
		tuned   float64
		ignored int
		lang    string
		want    string
	}{
		{"PortugueseByDefault", 4.5, 2, "", "3.5 → 4.5 (2 ignorados como esperado)"},
		{"PortugueseSingular", 4, 1, "pt", "3.5 → 4.0 (1 ignorado como esperado)"},
		{"English", 4.5, 2, "en-GB", "3.5 → 4.5 (2 ignored as expected)"},
		{"Spanish", 4.5, 2, "es", "3.5 → 4.5 (2 ignoradas como esperadas)"},
		{"GermanFallsBackToPortuguese", 4.5, 2, "de", "3.5 → 4.5 (2 ignorados como esperado)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quality.TunedThresholdLabel(3.5, tt.tuned, tt.ignored, tt.lang); got != tt.want {
				t.Fatalf("label = %q, want %q", got, tt.want)
			}
		})
	}
}
