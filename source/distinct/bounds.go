package distinct

import (
	"math"
	"slices"
)

// singleFreqs is how many of the lowest frequencies (seen once, twice, ...) get a
// constraint of their own; higher frequencies are grouped in blocks that double in width.
const singleFreqs = 6

// gridDense is the multiplicity up to which every integer is a grid point; above it the
// grid grows geometrically by gridRatio up to the population.
const (
	gridDense = 40
	gridRatio = 1.12
)

// freqBlock is a range of sample frequencies [lo, hi] and how many values fell in it.
type freqBlock struct {
	lo, hi   int
	observed int
}

// blocks groups the sample's frequencies: 1..singleFreqs one by one, then ranges doubling
// in width up to the largest frequency seen, then one open range above it that nothing
// fell in: that empty range is what rules out heavy values the sample would have seen.
func (e *estimator) blocks() []freqBlock {
	maxSeen := 0
	for k := range e.s.Freq {
		maxSeen = max(maxSeen, k)
	}
	var out []freqBlock
	for j := 1; j <= singleFreqs; j++ {
		out = append(out, freqBlock{lo: j, hi: j})
	}
	lo := singleFreqs + 1
	for ; lo <= maxSeen; lo *= 2 {
		out = append(out, freqBlock{lo: lo, hi: 2*lo - 1})
	}
	out = append(out, freqBlock{lo: lo, hi: math.MaxInt})
	for k, fk := range e.s.Freq {
		for i := range out {
			if k >= out[i].lo && k <= out[i].hi {
				out[i].observed += fk
				break
			}
		}
	}
	return out
}

// model is what every set of constraints is written over, computed once per estimate:
// the sample's frequency blocks, the grid of multiplicities, and for each grid point the
// probability of each block.
type model struct {
	blocks []freqBlock
	grid   []float64
	probs  [][]float64 // probs[i][b]: a value occurring grid[i] times is seen in block b
}

func (e *estimator) model() *model {
	if e.m != nil {
		return e.m
	}
	m := &model{blocks: e.blocks(), grid: grid(e.bigN)}
	m.probs = make([][]float64, len(m.grid))
	for i, mult := range m.grid {
		m.probs[i] = blockProbs(mult, e.q, m.blocks)
	}
	e.m = m
	return m
}

// grid returns the multiplicities (rows per value) the confidence set is built on.
func grid(population float64) []float64 {
	var g []float64
	for m := 1.0; m <= math.Min(gridDense, population); m++ {
		g = append(g, m)
	}
	for m := gridDense * gridRatio; m < population; m *= gridRatio {
		g = append(g, math.Round(m))
	}
	if population > gridDense {
		g = append(g, population)
	}
	return slices.Compact(g)
}

// blockProbs returns, for a value occurring in m rows, the probability that a Bernoulli(q)
// row sample sees it a number of times in each block (sampling without replacement and
// Bernoulli sampling agree to first order at the sizes profiling uses).
func blockProbs(m, q float64, blocks []freqBlock) []float64 {
	out := make([]float64, len(blocks))
	mi := int(m)
	mean := m * q
	sd := math.Sqrt(mean * (1 - q))
	lo := max(1, int(math.Floor(mean-12*sd-2)))
	hi := min(mi, int(math.Ceil(mean+12*sd+2)))
	if lo > hi {
		return out
	}
	// log pmf at lo, then the ratio recurrence upwards.
	lgm, _ := math.Lgamma(m + 1)
	a, _ := math.Lgamma(float64(lo) + 1)
	b, _ := math.Lgamma(m - float64(lo) + 1)
	logp := lgm - a - b + float64(lo)*math.Log(q) + (m-float64(lo))*math.Log1p(-q)
	p := math.Exp(logp)
	odds := q / (1 - q)
	bi := 0
	for j := lo; j <= hi; j++ {
		for bi < len(blocks) && j > blocks[bi].hi {
			bi++
		}
		if bi == len(blocks) {
			break
		}
		if j >= blocks[bi].lo {
			out[bi] += p
		}
		p *= float64(mi-j) / float64(j+1) * odds
	}
	return out
}

// confidenceBounds returns the smallest and largest distinct count among the populations
// the sample cannot rule out at 95% (see the package comment), or false when the program
// has no solution (which only numerical trouble can cause) or the sampling rate is 1.
func (e *estimator) confidenceBounds() (lower, upper float64, ok bool) {
	blocks := e.model().blocks
	// Bonferroni over the block constraints: each two-sided at 0.05/len(blocks). (Adding
	// constraints on runs of blocks was tried: the wider per-constraint intervals it costs
	// outweigh what it rules out.)
	alpha := 0.05 / float64(len(blocks))
	return e.bounds(blocks, singles(len(blocks)), func(k int) (float64, float64) { return poissonInterval(k, alpha) })
}

// singles is one group per block.
func singles(n int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = []int{i}
	}
	return out
}

// likelyBounds is the range of distinct counts among the populations that fit the sample
// closely: every block within z standard deviations, z the smallest of 0.5, 1, 2, 3 that
// some population meets.
func (e *estimator) likelyBounds() (lower, upper float64, ok bool) {
	blocks := e.model().blocks
	for _, z := range []float64{0.5, 1, 2, 3} {
		lo, hi, ok := e.bounds(blocks, singles(len(blocks)), func(k int) (float64, float64) {
			sd := math.Sqrt(float64(k) + 1)
			return math.Max(0, float64(k)-z*sd), float64(k) + z*sd
		})
		if ok {
			return lo, hi, true
		}
	}
	return 0, 0, false
}

// bounds returns the smallest and largest distinct count over the histograms whose
// expected count in every group of blocks falls in band(observed count of the group).
func (e *estimator) bounds(blocks []freqBlock, groups [][]int, band func(k int) (float64, float64)) (lower, upper float64, ok bool) {
	if e.q >= 1 || e.q <= 0 {
		return 0, 0, false
	}
	// Variable y_m is the share of the population's rows held by values occurring m times:
	// that value count is h_m = N·y_m/m, and Σ y_m = 1 exactly (N is known).
	g, probs := e.model().grid, e.model().probs
	rows := []lpRow{{a: ones(len(g)), sense: eq, b: 1}}
	for _, group := range groups {
		observed := 0
		for _, bi := range group {
			observed += blocks[bi].observed
		}
		lo, hi := band(observed)
		a := make([]float64, len(g))
		for i, m := range g {
			for _, bi := range group {
				a[i] += e.bigN / m * probs[i][bi]
			}
		}
		scale := 1 / math.Max(hi, 1)
		for i := range a {
			a[i] *= scale
		}
		rows = append(rows, lpRow{a: a, sense: le, b: hi * scale})
		if lo > 0 {
			rows = append(rows, lpRow{a: a, sense: ge, b: lo * scale})
		}
	}
	t, feasible := newFeasible(len(g), rows)
	if !feasible {
		return 0, 0, false
	}
	obj := make([]float64, len(g))
	for i, m := range g {
		obj[i] = 1 / m
	}
	hiD, ok1 := t.maximize(obj)
	for i := range obj {
		obj[i] = -obj[i]
	}
	loD, ok2 := t.maximize(obj)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	return -loD * e.bigN, hiD * e.bigN, true
}

func ones(n int) []float64 {
	a := make([]float64, n)
	for i := range a {
		a[i] = 1
	}
	return a
}

// poissonInterval is the two-sided 1−alpha confidence interval of a Poisson mean given
// one observation k: exact (by bisection on the distribution function) up to k = 200,
// the Wilson–Hilferty form of the chi-square quantiles above.
func poissonInterval(k int, alpha float64) (lo, hi float64) {
	if k > 200 {
		z := normalQuantile(1 - alpha/2)
		kf := float64(k)
		lo = kf * math.Pow(1-1/(9*kf)-z/(3*math.Sqrt(kf)), 3)
		k1 := kf + 1
		hi = k1 * math.Pow(1-1/(9*k1)+z/(3*math.Sqrt(k1)), 3)
		return lo, hi
	}
	// hi: P(X ≤ k; λ) = alpha/2; lo: P(X ≥ k; λ) = alpha/2, i.e. P(X ≤ k−1; λ) = 1 − alpha/2.
	hi = bisect(func(l float64) bool { return poissonCDF(k, l) > alpha/2 }, float64(k), float64(k)+40+10*math.Sqrt(float64(k)+1))
	if k == 0 {
		return 0, hi
	}
	lo = bisect(func(l float64) bool { return poissonCDF(k-1, l) > 1-alpha/2 }, 0, float64(k))
	return lo, hi
}

// bisect returns the point in [a, b] where below turns from true to false.
func bisect(below func(float64) bool, a, b float64) float64 {
	for range 100 {
		mid := (a + b) / 2
		if below(mid) {
			a = mid
		} else {
			b = mid
		}
	}
	return (a + b) / 2
}

func poissonCDF(k int, lambda float64) float64 {
	if lambda <= 0 {
		return 1
	}
	term := math.Exp(-lambda)
	sum := term
	for i := 1; i <= k; i++ {
		term *= lambda / float64(i)
		sum += term
	}
	return math.Min(sum, 1)
}

// normalQuantile is the inverse of the standard normal distribution function (Acklam's
// rational approximation, relative error below 1.2e-9).
func normalQuantile(p float64) float64 {
	a := [6]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := [5]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := [6]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := [4]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	const pLow = 0.02425
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	case p < pLow:
		q := math.Sqrt(-2 * math.Log(p))
		return (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	case p > 1-pLow:
		q := math.Sqrt(-2 * math.Log(1-p))
		return -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	}
	q := p - 0.5
	r := q * q
	return (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q / (((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
}
