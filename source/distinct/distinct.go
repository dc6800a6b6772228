// Package distinct estimates the number of distinct values of a column from a sample of
// its rows, with a 95% confidence interval.
//
// # Method
//
// Notation: n non-null values sampled out of N non-null values in the table (q = n/N),
// d distinct values seen, f_k the number of values seen exactly k times.
//
// The estimator is a hybrid in the manner of Haas, Naughton, Seshadri & Stokes (VLDB 1995):
// a chi-square test on the sample frequencies (statistic Σ f_k·(k − n/d)²/(n/d) against the
// 97.5% quantile with d − 1 degrees of freedom, Wilson–Hilferty approximation) decides
// whether the values look equally frequent.
//
// Low skew: the Chao1 lower-bound estimator corrected for sampling without replacement
// from a finite population (Chao & Lin 2012, Biometrics 68:912–921),
//
//	D̂ = d + f1² / ( (n/(n−1))·2·f2 + (q/(1−q))·f1 ).
//
// High skew: Shlosser's estimator (Shlosser 1981), which Haas et al. found the most
// accurate when a few values dominate and many are rare,
//
//	D̂ = d + f1 · Σ_k (1−q)^k f_k / Σ_k k·q·(1−q)^(k−1) f_k.
//
// Both saturate at the two ends profiling cares about: a near-unique column (f1 ≈ n) gives
// ≈ n/q = N, and a column whose every value was seen several times (f1 = 0) gives d. The
// result is clamped to [d, N]; a sample holding the whole column is exact.
//
// The 95% interval follows Chao (1987): the variance of D̂ comes from the delta method,
// treating the f_k as multinomial with D̂ cells (cov(f_i, f_j) = f_i(1 − f_i/D̂) when i = j,
// −f_i·f_j/D̂ otherwise), and the undetected part T = D̂ − d is taken as log-normal:
// [d + T/K, d + T·K] with K = exp(1.96·√ln(1 + var/T²)). Under high skew the error is
// mostly bias, not variance — Chao1 is a lower bound and Shlosser overshoots on small
// domains — so the interval runs from the Chao–Lin lower limit to the Shlosser upper limit.
// When nothing was seen once (T = 0) the upper limit is Chao's bound for that case, with
// P = e^(−n/d): d/(1−P) + 1.96·√(d·P/(1−P)). Intervals never go below d nor above N.
//
// The interval assumes a simple random sample. Block samples (Postgres TABLESAMPLE SYSTEM)
// are close to one for tables whose physical order is unrelated to the column, and
// under-cover for columns clustered on disk (a date column loaded in order).
package distinct

import "math"

// z95 is the two-sided 95% normal quantile.
const z95 = 1.959963984540054

// The methods an Estimate can come from.
const (
	MethodExact    = "exact"    // the sample held the whole column
	MethodChaoLin  = "chao_lin" // low skew
	MethodShlosser = "shlosser" // high skew
)

// Sample is what the estimator needs to know about a sample of one column.
type Sample struct {
	N    int         // non-null values sampled (n)
	D    int         // distinct values among them (d)
	Freq map[int]int // Freq[k] = number of values seen exactly k times (f_k)
}

// Estimate is a distinct count with its 95% confidence interval.
type Estimate struct {
	Value        float64
	Lower, Upper float64
	Exact        bool   // the sample held every non-null value of the column
	Method       string // MethodExact, MethodChaoLin or MethodShlosser
}

// FromCounts builds a Sample from the number of times each distinct value was seen.
func FromCounts[K comparable](counts map[K]int) Sample {
	s := Sample{Freq: make(map[int]int)}
	for _, c := range counts {
		if c <= 0 {
			continue
		}
		s.N += c
		s.D++
		s.Freq[c]++
	}
	return s
}

// Exact returns the estimate for a sample that holds the whole column.
func Exact(d int) Estimate {
	v := float64(d)
	return Estimate{Value: v, Lower: v, Upper: v, Exact: true, Method: MethodExact}
}

// EstimateFrom estimates the distinct values of a column with population non-null values
// from a sample of it. A population not larger than the sample means the sample is the
// column, and the count is exact.
func EstimateFrom(s Sample, population int64) Estimate {
	if s.N <= 0 || s.D <= 0 {
		return Exact(0)
	}
	if population <= int64(s.N) {
		return Exact(s.D)
	}
	e := estimator{s: s, n: float64(s.N), d: float64(s.D), bigN: float64(population)}
	e.q = e.n / e.bigN
	e.f1, e.f2 = float64(s.Freq[1]), float64(s.Freq[2])
	skewed := e.skewed()
	method := MethodChaoLin
	if skewed {
		method = MethodShlosser
	}
	if e.f1 == 0 {
		return e.noSingletons(method)
	}
	chao, chaoLo, chaoHi := e.chaoLin()
	value, lower, upper := chao, chaoLo, chaoHi
	if skewed {
		var shl float64
		shl, _, upper = e.shlosser()
		value = shl
		lower = math.Min(chaoLo, shl)
		upper = math.Max(upper, value)
	}
	return Estimate{
		Value:  math.Round(e.clamp(value)),
		Lower:  math.Floor(e.clamp(lower)),
		Upper:  math.Ceil(e.clamp(upper)),
		Method: method,
	}
}

type estimator struct {
	s             Sample
	n, d, bigN, q float64
	f1, f2        float64
}

func (e *estimator) clamp(v float64) float64 {
	if math.IsNaN(v) || v > e.bigN {
		return e.bigN
	}
	return math.Max(v, e.d)
}

// skewed is the chi-square test of equal frequencies on the sample.
func (e *estimator) skewed() bool {
	if e.s.D < 2 {
		return false
	}
	mean := e.n / e.d
	u := 0.0
	for k, fk := range e.s.Freq {
		dev := float64(k) - mean
		u += float64(fk) * dev * dev / mean
	}
	df := e.d - 1
	// Wilson–Hilferty approximation of the 97.5% chi-square quantile.
	crit := df * math.Pow(1-2/(9*df)+z95*math.Sqrt(2/(9*df)), 3)
	return u > crit
}

// interval is the log-normal interval around value given its variance.
func (e *estimator) interval(value, variance float64) (lower, upper float64) {
	value = e.clamp(value)
	t := value - e.d
	if t <= 0 || variance <= 0 || math.IsNaN(variance) {
		return value, value
	}
	k := math.Exp(z95 * math.Sqrt(math.Log(1+variance/(t*t))))
	return e.d + t/k, e.d + t*k
}

// deltaVariance is Σ g_k² f_k − (Σ g_k f_k)²/value for the gradient g of the estimator
// with respect to each f_k, the multinomial delta method.
func (e *estimator) deltaVariance(value float64, grad func(k int) float64) float64 {
	sq, lin := 0.0, 0.0
	for k, fk := range e.s.Freq {
		g, f := grad(k), float64(fk)
		sq += g * g * f
		lin += g * f
	}
	return sq - lin*lin/value
}

func (e *estimator) chaoLin() (value, lower, upper float64) {
	a := 2.0 // 2·n/(n−1), with n = 1 read as 2
	if e.n > 1 {
		a = 2 * e.n / (e.n - 1)
	}
	b := e.q / (1 - e.q)
	den := a*e.f2 + b*e.f1
	value = e.d + e.f1*e.f1/den
	g1 := 1 + (2*a*e.f1*e.f2+b*e.f1*e.f1)/(den*den)
	g2 := 1 - a*e.f1*e.f1/(den*den)
	variance := e.deltaVariance(value, func(k int) float64 {
		switch k {
		case 1:
			return g1
		case 2:
			return g2
		}
		return 1
	})
	lower, upper = e.interval(value, variance)
	return value, lower, upper
}

func (e *estimator) shlosser() (value, lower, upper float64) {
	p := 1 - e.q
	num, den := 0.0, 0.0
	for k, fk := range e.s.Freq {
		f := float64(fk)
		num += math.Pow(p, float64(k)) * f
		den += float64(k) * e.q * math.Pow(p, float64(k-1)) * f
	}
	value = e.d + e.f1*num/den
	variance := e.deltaVariance(value, func(k int) float64 {
		kk := float64(k)
		g := 1 + e.f1*(math.Pow(p, kk)*den-num*kk*e.q*math.Pow(p, kk-1))/(den*den)
		if k == 1 {
			g += num / den
		}
		return g
	})
	lower, upper = e.interval(value, variance)
	return value, lower, upper
}

// noSingletons is the case where every value seen was seen at least twice: the estimate is
// the values seen, and the interval reaches as far as an undetected remainder can given
// how many draws found nothing new.
func (e *estimator) noSingletons(method string) Estimate {
	p := math.Exp(-e.n / e.d)
	upper := e.d
	if p > 0 {
		upper = e.d/(1-p) + z95*math.Sqrt(e.d*p/(1-p))
	}
	return Estimate{Value: e.d, Lower: e.d, Upper: math.Ceil(e.clamp(upper)), Method: method}
}
