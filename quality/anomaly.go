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
	DefaultMinHistory = 5   // previous scans needed before the robust model judges a metric
	DefaultWindow     = 30  // newest previous scans used
)

// Gross changes: fixed thresholds that need no model. They judge a metric from its second
// scan on, while the robust model lacks history (cold start), and afterwards keep a
// gross change from hiding behind a history that moved a lot (see DetectAnomaly).
const (
	GrossVolumeDrop    = 0.5  // the row count halved (or worse): −50%, a table emptied included
	GrossVolumeRise    = 2.0  // the row count doubled (or more): +100%
	GrossNullRateJump  = 0.20 // a column's null rate up by more than 20 percentage points
	grossEpsilonFactor = 1e-9
)

// Scales of a robust z.
const (
	ScaleMAD        = "mad"          // 0.6745 × (x − median) / MAD
	ScaleMeanAbsDev = "mean_abs_dev" // MAD is 0: (x − median) / (1.2533 × mean |x − median|)
	ScaleConstant   = "constant"     // the history never moved: no z, only the change floor
)

// Methods that flag an anomaly.
const (
	MethodRobustZ = "robust_z"     // the robust z-score over the metric's own history
	MethodGross   = "gross_change" // a fixed threshold: the change is gross whatever the history
)

// Reasons an anomaly was not evaluated.
const (
	ReasonFewPoints   = "insufficient_history" // no history at all (or, for the robust model, fewer points than MinHistory)
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
	// are skipped. Its last point is the previous scan's value.
	History []float64
	Value   float64
	// Interval is the 95% confidence interval of Value when it was measured on a
	// sample (an estimated distinct ratio); nil for an exact value.
	Interval *[2]float64
	// Threshold is the |z| above which the value is an anomaly; 0 means DefaultThreshold
	// (see NextThreshold for the tuned one).
	Threshold float64
	// Tuned is true when the team tuned the metric's threshold by ignoring its anomalies
	// as expected: the fixed gross-change thresholds no longer apply to it.
	Tuned bool
	// MinHistory is the number of usable points the robust model needs; 0 means
	// DefaultMinHistory.
	MinHistory int
	// Window keeps only the newest Window points; 0 means DefaultWindow.
	Window int
	// MinChange is the smallest |x − median| ever reported; 0 means MetricMinChange.
	MinChange float64
}

// Band is the range of values a metric may take without being an anomaly, as judged
// against the history of one scan; a nil end is unbounded (freshness lag may always
// fall).
type Band struct {
	Low  *float64 `json:"low"`
	High *float64 `json:"high"`
}

// Anomaly is the judgement of one metric in one scan.
type Anomaly struct {
	Evaluated bool   `json:"evaluated"`
	Reason    string `json:"reason,omitempty"` // why it was not evaluated
	// ColdStart is true while the history is too short for the robust model: only the
	// gross-change thresholds judged the value.
	ColdStart bool `json:"cold_start,omitempty"`
	Anomalous bool `json:"anomaly"`
	// Method is what flagged the anomaly (robust_z or gross_change); empty when none did.
	Method string `json:"method,omitempty"`
	// Z is the robust z; nil when the history is constant (ScaleConstant), during a
	// cold start, or when the metric was not evaluated.
	Z      *float64 `json:"z"`
	Median float64  `json:"median"`
	MAD    float64  `json:"mad"`
	// Previous is the previous scan's value (the last point of the history).
	Previous  *float64 `json:"previous,omitempty"`
	Scale     string   `json:"scale,omitempty"`
	Direction string   `json:"direction,omitempty"`
	Severity  Severity `json:"severity,omitempty"` // set when Anomalous
	Threshold float64  `json:"threshold"`
	MinChange float64  `json:"min_change"`
	// Judged is the value the judgement used: Value, or for a value measured on a
	// sample the point of its interval nearest the median (see DetectAnomaly).
	Judged      float64 `json:"judged"`
	HistorySize int     `json:"history_size"`
	// Band is the expected range this scan judged against; nil when not evaluated.
	Band *Band `json:"band,omitempty"`
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

// GrossChange reports whether going from ref to value is a gross change of the metric,
// whatever its history: the row count halved or worse (a table emptied included) or
// doubled or more, by at least the metric's change floor; a column's null rate up by
// more than 20 percentage points. Other metrics have no gross change. A row count
// growing from 0 is a table being filled, not a problem.
func GrossChange(m Metric, ref, value float64) bool {
	switch m {
	case MetricVolume:
		if ref <= 0 || math.Abs(value-ref) < MetricMinChange(m, ref) {
			return false
		}
		eps := grossEpsilonFactor * ref
		return value <= GrossVolumeDrop*ref+eps || value >= GrossVolumeRise*ref-eps
	case MetricNullRate:
		return value-ref > GrossNullRateJump+grossEpsilonFactor
	}
	return false
}

// grossBand narrows b to the values that are no gross change from the median.
func grossBand(m Metric, med float64, b *Band) {
	lower := func(v float64) {
		if b.Low == nil || v > *b.Low {
			b.Low = &v
		}
	}
	upper := func(v float64) {
		if b.High == nil || v < *b.High {
			b.High = &v
		}
	}
	switch m {
	case MetricVolume:
		if med > 0 {
			lower(GrossVolumeDrop * med)
			upper(GrossVolumeRise * med)
		}
	case MetricNullRate:
		upper(med + GrossNullRateJump)
	}
}

// Holds reports whether value lies on the expected side of the band for an anomaly of
// direction dir (down: at or above Low; up: at or below High; no direction: inside).
// An interval (a sampled value) holds when any of it does.
func (b Band) Holds(value float64, interval *[2]float64, dir string) bool {
	lo, hi := value, value
	if interval != nil && interval[0] <= interval[1] {
		lo, hi = math.Min(lo, interval[0]), math.Max(hi, interval[1])
	}
	okLow := b.Low == nil || hi >= *b.Low
	okHigh := b.High == nil || lo <= *b.High
	switch dir {
	case DirectionDown:
		return okLow
	case DirectionUp:
		return okHigh
	}
	return okLow && okHigh
}

// DetectAnomaly judges this scan's value of a metric against its history.
//
// With at least MinHistory usable points, the robust model: a robust z-score
//
//	z = 0.6745 × (x − median) / MAD
//
// where MAD is the median absolute deviation from the median. When MAD is 0 (more than
// half the history is one value) the scale falls back to 1.2533 × the mean absolute
// deviation from the median; when that is 0 too the history is constant, z is
// undefined, and any change of at least MinChange is an anomaly. The value is an
// anomaly when |z| > Threshold and |x − median| ≥ MinChange; its severity is critical
// when |z| ≥ 2 × Threshold (constant history: when the change is at least 10 ×
// MinChange), else warning.
//
// Gross changes (GrossChange) are anomalies whatever the z, and critical: a change that
// is gross both from the median and from the previous scan's value, so that a table
// restored to its usual size, or one that stays at a new size, is not flagged again. With
// 1 to MinHistory−1 points (a cold start) only they judge the value. They do not apply
// to a metric whose threshold was tuned.
//
// A value measured on a sample is judged at the point of its interval nearest the
// median (the median itself when the interval holds it): it is an anomaly only when the
// whole interval lies outside the expected band, so the same true value never flaps
// with sampling noise.
//
// freshness_lag is one-sided: only a rise is an anomaly. With no usable history nothing
// is judged.
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
	out := Anomaly{Threshold: thr, HistorySize: len(hist), Judged: in.Value}
	if math.IsNaN(in.Value) || math.IsInf(in.Value, 0) {
		out.Reason = ReasonInvalidData
		return out
	}
	if len(hist) == 0 {
		out.Reason = ReasonFewPoints
		return out
	}
	out.Evaluated = true
	med := median(hist)
	prev := hist[len(hist)-1]
	out.Median, out.Previous = med, &prev
	x := in.Value
	if iv := in.Interval; iv != nil && iv[0] <= iv[1] && !math.IsNaN(iv[0]) && !math.IsNaN(iv[1]) {
		x = math.Min(math.Max(med, iv[0]), iv[1])
	}
	out.Judged = x
	out.MinChange = in.MinChange
	if out.MinChange <= 0 {
		out.MinChange = MetricMinChange(in.Metric, med)
	}
	diff := x - med
	switch {
	case diff > 0:
		out.Direction = DirectionUp
	case diff < 0:
		out.Direction = DirectionDown
	}
	gross := !in.Tuned && GrossChange(in.Metric, med, x) && GrossChange(in.Metric, prev, x)
	flag := func(method string, sev Severity) {
		out.Anomalous, out.Method, out.Severity = true, method, sev
	}
	band := &Band{}
	if len(hist) < minHist {
		out.ColdStart = true
		if !in.Tuned {
			grossBand(in.Metric, med, band)
		}
		if oneSidedUp(in.Metric) {
			band.Low = nil
		}
		out.Band = band
		if gross {
			flag(MethodGross, SeverityCritical)
		}
		return out
	}

	devs := make([]float64, len(hist))
	var sumDev float64
	for i, v := range hist {
		devs[i] = math.Abs(v - med)
		sumDev += devs[i]
	}
	mad := median(devs)
	out.MAD = mad
	bigEnough := math.Abs(diff) >= out.MinChange
	if oneSidedUp(in.Metric) && diff < 0 {
		bigEnough = false
	}
	var sigma float64 // the scale of one z unit in the metric's own units
	switch {
	case mad > 0:
		out.Scale, sigma = ScaleMAD, mad/0.6745
	case sumDev > 0:
		out.Scale, sigma = ScaleMeanAbsDev, 1.2533*sumDev/float64(len(hist))
	default:
		out.Scale = ScaleConstant
	}
	w := math.Max(thr*sigma, out.MinChange)
	lo, hi := med-w, med+w
	band.Low, band.High = &lo, &hi
	if !in.Tuned {
		grossBand(in.Metric, med, band)
	}
	if oneSidedUp(in.Metric) {
		band.Low = nil
	}
	out.Band = band

	if out.Scale == ScaleConstant {
		if bigEnough && diff != 0 {
			sev := SeverityWarning
			if math.Abs(diff) >= 10*out.MinChange {
				sev = SeverityCritical
			}
			flag(MethodRobustZ, sev)
		}
	} else {
		z := diff / sigma
		zr := roundTo(z, 4)
		out.Z = &zr
		if bigEnough && math.Abs(z) > thr {
			sev := SeverityWarning
			if math.Abs(z) >= 2*thr {
				sev = SeverityCritical
			}
			flag(MethodRobustZ, sev)
		}
	}
	if gross && (!out.Anomalous || out.Severity != SeverityCritical) {
		flag(MethodGross, SeverityCritical)
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

// RecoveryScans is how many scans in a row must find an anomaly's metric back inside
// the band its issue was opened against before the scan resolves the issue.
const RecoveryScans = 2
