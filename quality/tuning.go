package quality

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Tuning of anomaly thresholds.
const (
	ThresholdStep = 0.5  // added per anomaly ignored as expected
	MaxThreshold  = 10.0 // a threshold never rises above this
)

// NextThreshold is the threshold after ignoredAsExpected more anomalies of the metric
// were ignored as expected: current + 0.5 per ignore, capped at 10. A current value that
// is not positive means DefaultThreshold; one already above the cap stays as it is.
// Tuning never lowers a threshold.
func NextThreshold(current float64, ignoredAsExpected int) float64 {
	if current <= 0 || math.IsNaN(current) || math.IsInf(current, 0) {
		current = DefaultThreshold
	}
	if ignoredAsExpected <= 0 || current >= MaxThreshold {
		return current
	}
	return math.Min(MaxThreshold, current+ThresholdStep*float64(ignoredAsExpected))
}

// Tuning is the state of one metric of one column (empty for table metrics), as the
// /tuning read shows it.
type Tuning struct {
	Metric    Metric  `json:"metric"`
	Column    string  `json:"column,omitempty"`
	Threshold float64 `json:"threshold"`
	Silenced  bool    `json:"silenced"`
	Ignored   int     `json:"ignored"`
	Resolved  int     `json:"resolved"`
	// NextOnIgnore is the threshold the next ignore-as-expected would set.
	NextOnIgnore float64 `json:"next_on_ignore"`
	// TunedThreshold and TunedThresholdLabel are nil while the threshold is the
	// calibrated default.
	TunedThreshold      *float64 `json:"tuned_threshold"`
	TunedThresholdLabel *string  `json:"tuned_threshold_label"`
	// RetuneAwaitingApproval is a retune of the metric waiting for an administrator;
	// nil without one.
	RetuneAwaitingApproval *Retune `json:"retune_awaiting_approval"`
}

// Retune is a change of a metric's tuning that waits for an administrator's approval:
// silencing a metric whose threshold already is MaxThreshold and whose anomalies keep
// being ignored as expected.
type Retune struct {
	ID            string    `json:"id"`
	Action        string    `json:"action"`
	FromThreshold float64   `json:"from_threshold"`
	IssueID       *string   `json:"issue_id"`
	RequestedBy   string    `json:"requested_by"`
	RequestedAt   time.Time `json:"requested_at"`
}

// TuningFor returns the tuning of a metric whose anomalies were ignored as expected
// `ignored` times and resolved `resolved` times, starting from DefaultThreshold.
// Resolved anomalies were real problems: they are counted but change nothing. lang
// picks the label's language (see TunedThresholdLabel).
func TuningFor(metric Metric, column string, ignored, resolved int, silenced bool, lang string) Tuning {
	thr := NextThreshold(DefaultThreshold, ignored)
	t := Tuning{Metric: metric, Column: column, Threshold: thr, Silenced: silenced,
		Ignored: max(ignored, 0), Resolved: max(resolved, 0), NextOnIgnore: NextThreshold(thr, 1)}
	if thr != DefaultThreshold {
		tt := thr
		label := TunedThresholdLabel(DefaultThreshold, thr, t.Ignored, lang)
		t.TunedThreshold, t.TunedThresholdLabel = &tt, &label
	}
	return t
}

// TunedThresholdLabel describes a tuned threshold for people, e.g. in pt-PT
// "3.5 → 4.5 (2 ignorados como esperado)". lang is pt (default), en or es; thresholds
// are written with one decimal and a point, as the z scale is shown everywhere.
func TunedThresholdLabel(base, tuned float64, ignored int, lang string) string {
	var why string
	switch strings.ToLower(strings.SplitN(strings.SplitN(lang, "-", 2)[0], "_", 2)[0]) {
	case "en":
		why = fmt.Sprintf("%d ignored as expected", ignored)
	case "es":
		if ignored == 1 {
			why = "1 ignorada como esperada"
		} else {
			why = fmt.Sprintf("%d ignoradas como esperadas", ignored)
		}
	default:
		if ignored == 1 {
			why = "1 ignorado como esperado"
		} else {
			why = fmt.Sprintf("%d ignorados como esperado", ignored)
		}
	}
	return fmt.Sprintf("%.1f → %.1f (%s)", base, tuned, why)
}
