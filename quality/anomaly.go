package quality

import (
	"math"
	"sort"
)

// Metric is a number the scans of a dataset track over time.
type Metric string

// Metrics with anomaly detection.
const (
	MetricVolume        Metric = "volume"         // row count
	MetricNullRate      Metric = "null_rate"      // nulls / rows of one column, 0-1
	MetricFreshnessLag  Metric = "freshness_lag"  // seconds between the scan and the newest row
	MetricDistinctRatio Metric = "distinct_ratio" // distinct / non-null rows of one column, 0-1
)

// Anomaly detection defaults.
const (
	DefaultThreshold  = 3.5 // classic absolute robust-z scale: 3.5 is the calibrated value without tuning
	DefaultMinHistory = 5   // previous scans needed before a metric is judged
	DefaultWindow     = 30  // newest previous scans used
)

// Scales of a robust z.
const (
	ScaleMAD        = "mad"          // 0.6745 × (x − median) / MAD
	ScaleMeanAbsDev = "mean_abs_dev" // MAD is 0: (x − median) / (1.2533 × mean |x − median|)
	ScaleConstant   = "constant"     // the history never moved: no z, only the change floor
)

// Reasons an anomaly was not evaluated.
const (
	ReasonFewPoints   = "insufficient_history" // fewer usable points than MinHistory
	ReasonInvalidData = "invalid_value"        // this scan's value is NaN or infinite
)

// Directions of an anomaly.
const (
	DirectionUp   = "up"
	DirectionDown = "down"
)

// AnomalyInput is a metric's history over the dataset's own previous scans and this
// scan's value.
type AnomalyInput struct {
	Metric Metric
	// History holds the previous scans' values, oldest first; NaN and infinite values
	// are skipped.
	History []float64
	Value   float64
	// Threshold is the |z| above which the value is an anomaly; 0 means DefaultThreshold
	// (see NextThreshold for the tuned one).
	Threshold float64
	// MinHistory is the number of usable points needed; 0 means DefaultMinHistory.
	MinHistory int
	// Window keeps only the newest Window points; 0 means DefaultWindow.
	Window int
	// MinChange is the smallest |x − median| ever reported; 0 means MetricMinChange.
	MinChange float64
}

// Anomaly is the judgement of one metric in one scan.
type Anomaly struct {
	Evaluated bool   `json:"evaluated"`
	Reason    string `json:"reason,omitempty"` // why it was not evaluated
	Anomalous bool   `json:"anomaly"`
	// Z is the robust z; nil when the history is constant (ScaleConstant) or the
	// metric was not evaluated.
	Z           *float64 `json:"z"`
	Median      float64  `json:"median"`
	MAD         float64  `json:"mad"`
	Scale       string   `json:"scale,omitempty"`
	Direction   string   `json:"direction,omitempty"`
	Severity    Severity `json:"severity,omitempty"` // set when Anomalous
	Threshold   float64  `json:"threshold"`
	MinChange   float64  `json:"min_change"`
	HistorySize int      `json:"history_size"`
}

// MetricMinChange is the smallest change of a metric worth an anomaly, whatever its z:
// it keeps a near-constant history from turning noise into alerts.
//
//	volume          1% of the median, at least 1 row
//	null_rate       0.005 (half a percentage point)
//	distinct_ratio  0.01
//	freshness_lag   10% of the median, at least 300 seconds
//	other metrics   1% of |median|
func MetricMinChange(m Metric, median float64) float64 {
	switch m {
	case MetricVolume:
		return math.Max(1, 0.01*math.Abs(median))
	case MetricNullRate:
		return 0.005
	case MetricDistinctRatio:
		return 0.01
	case MetricFreshnessLag:
		return math.Max(300, 0.1*math.Abs(median))
	}
	return 0.01 * math.Abs(median)
}

// oneSidedUp reports whether only a rise of the metric is a problem: fresher data than
// usual is good news.
func oneSidedUp(m Metric) bool { return m == MetricFreshnessLag }

// DetectAnomaly judges this scan's value of a metric against its history with a robust
// z-score:
//
//	z = 0.6745 × (x − median) / MAD
//
// where MAD is the median absolute deviation from the median. When MAD is 0 (more than
// half the history is one value) the scale falls back to 1.2533 × the mean absolute
// deviation from the median; when that is 0 too the history is constant, z is
// undefined, and any change of at least MinChange is an anomaly.
//
// The value is an anomaly when |z| > Threshold and |x − median| ≥ MinChange; its
// severity is critical when |z| ≥ 2 × Threshold (constant history: when the change is
// at least 10 × MinChange), else warning. freshness_lag is one-sided: only a rise is
// an anomaly. With fewer than MinHistory usable points nothing is judged.
func DetectAnomaly(in AnomalyInput) Anomaly {
	thr := in.Threshold
	if thr <= 0 || math.IsNaN(thr) {
		thr = DefaultThreshold
	}
	minHist := in.MinHistory
	if minHist <= 0 {
		minHist = DefaultMinHistory
	}
	window := in.Window
	if window <= 0 {
		window = DefaultWindow
	}
	hist := make([]float64, 0, len(in.History))
	for _, v := range in.History {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			hist = append(hist, v)
		}
	}
	if len(hist) > window {
		hist = hist[len(hist)-window:]
	}
	out := Anomaly{Threshold: thr, HistorySize: len(hist)}
	if math.IsNaN(in.Value) || math.IsInf(in.Value, 0) {
		out.Reason = ReasonInvalidData
		return out
	}
	if len(hist) < minHist {
		out.Reason = ReasonFewPoints
		return out
	}
	out.Evaluated = true
	med := median(hist)
	devs := make([]float64, len(hist))
	var sumDev float64
	for i, v := range hist {
		devs[i] = math.Abs(v - med)
		sumDev += devs[i]
	}
	mad := median(devs)
	out.Median, out.MAD = med, mad
	out.MinChange = in.MinChange
	if out.MinChange <= 0 {
		out.MinChange = MetricMinChange(in.Metric, med)
	}

	diff := in.Value - med
	switch {
	case diff > 0:
		out.Direction = DirectionUp
	case diff < 0:
		out.Direction = DirectionDown
	}
	bigEnough := math.Abs(diff) >= out.MinChange
	if oneSidedUp(in.Metric) && diff < 0 {
		bigEnough = false
	}

	var z float64
	switch {
	case mad > 0:
		out.Scale = ScaleMAD
		z = 0.6745 * diff / mad
	case sumDev > 0:
		out.Scale = ScaleMeanAbsDev
		z = diff / (1.2533 * sumDev / float64(len(hist)))
	default:
		out.Scale = ScaleConstant
		if bigEnough && diff != 0 {
			out.Anomalous = true
			out.Severity = SeverityWarning
			if math.Abs(diff) >= 10*out.MinChange {
				out.Severity = SeverityCritical
			}
		}
		return out
	}
	zr := roundTo(z, 4)
	out.Z = &zr
	if bigEnough && math.Abs(z) > thr {
		out.Anomalous = true
		out.Severity = SeverityWarning
		if math.Abs(z) >= 2*thr {
			out.Severity = SeverityCritical
		}
	}
	return out
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func roundTo(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
