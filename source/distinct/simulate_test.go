package distinct_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/vigia-data/vigia/source/distinct"
)

// A simulated population is given by its multiplicities: classes[m] values each occur in
// exactly m rows. Sampling it row by row with probability q (a Bernoulli row sample, what
// the connectors draw) gives each value a Binomial(m, q) count, so a sample's frequencies
// can be drawn class by class without building the rows: the benchmark's 5,000,000-row
// columns are simulated in microseconds.
type simPopulation struct {
	name    string
	classes map[int]int64
}

func (p simPopulation) rows() (n int64) {
	for m, f := range p.classes {
		n += int64(m) * f
	}
	return n
}

func (p simPopulation) distinct() (d int64) {
	for _, f := range p.classes {
		d += f
	}
	return d
}

// binomial draws Binomial(n, p): by geometric skips when few successes (or few failures)
// are expected, else by the normal approximation, which is exact enough at 30 and more.
func binomial(r *rand.Rand, n int64, p float64) int64 {
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	case p > 0.5:
		return n - binomial(r, n, 1-p)
	}
	mean := float64(n) * p
	if mean < 30 {
		lq := math.Log1p(-p)
		var k, pos int64
		for {
			skip := math.Floor(math.Log(1-r.Float64()) / lq)
			if skip >= float64(n-pos) {
				return k
			}
			pos += int64(skip) + 1
			if pos > n {
				return k
			}
			k++
		}
	}
	v := math.Round(mean + math.Sqrt(mean*(1-p))*r.NormFloat64())
	return int64(math.Max(0, math.Min(float64(n), v)))
}

// binomPMF returns P(X = k) for k = 0..m of Binomial(m, q), cut where the tail is negligible.
func binomPMF(m int, q float64) []float64 {
	out := make([]float64, 0, 8)
	lq, lp := math.Log(q), math.Log1p(-q)
	lgm, _ := math.Lgamma(float64(m + 1))
	sum := 0.0
	for k := 0; k <= m; k++ {
		a, _ := math.Lgamma(float64(k + 1))
		b, _ := math.Lgamma(float64(m - k + 1))
		v := math.Exp(lgm - a - b + float64(k)*lq + float64(m-k)*lp)
		out = append(out, v)
		sum += v
		if sum > 1-1e-12 && float64(k) > float64(m)*q {
			break
		}
	}
	return out
}

// sample draws the frequencies of a Bernoulli(q) row sample of the population.
func (p simPopulation) sample(r *rand.Rand, q float64) distinct.Sample {
	s := distinct.Sample{Freq: map[int]int{}}
	add := func(k int, c int64) {
		if k > 0 && c > 0 {
			s.Freq[k] += int(c)
			s.D += int(c)
			s.N += k * int(c)
		}
	}
	ms := make([]int, 0, len(p.classes))
	for m := range p.classes {
		ms = append(ms, m)
	}
	slices.Sort(ms)
	for _, m := range ms {
		f := p.classes[m]
		if f < 16 || float64(m)*q > 50 {
			for range f {
				add(int(binomial(r, int64(m), q)), 1)
			}
			continue
		}
		pmf := binomPMF(m, q)
		left, rest := f, 1.0
		for k, pk := range pmf {
			if left == 0 {
				break
			}
			c := left
			if k < len(pmf)-1 && rest > 0 {
				c = binomial(r, left, math.Min(1, pk/rest))
			}
			add(k, c)
			left -= c
			rest -= pk
		}
	}
	return s
}

// draws is a column of n rows whose values are drawn uniformly from k possible values (a
// hash modulo k, random keys): multiplicities are Poisson(n/k), the values never drawn
// do not exist.
func draws(name string, n int64, k int64) simPopulation {
	lambda := float64(n) / float64(k)
	cl := map[int]int64{}
	pm := math.Exp(-lambda)
	for m := 1; ; m++ {
		pm *= lambda / float64(m)
		c := int64(math.Round(float64(k) * pm))
		if c > 0 {
			cl[m] = c
		}
		if float64(m) > lambda && c == 0 {
			break
		}
	}
	return simPopulation{name, cl}
}

func uniform(name string, n int64, m int) simPopulation {
	return simPopulation{name, map[int]int64{m: n / int64(m)}}
}

// zipf is a column of about n rows over d values, the i-th in proportion to i^-s (at
// least one row each).
func zipf(name string, n int64, d int, s float64) simPopulation {
	h := 0.0
	for i := 1; i <= d; i++ {
		h += math.Pow(float64(i), -s)
	}
	cl := map[int]int64{}
	for i := 1; i <= d; i++ {
		m := max(1, int(math.Round(float64(n)*math.Pow(float64(i), -s)/h)))
		cl[m]++
	}
	return simPopulation{name, cl}
}

// geometric is a column whose values occur 1, 2, 3... times with geometrically falling
// frequency (mean multiplicity mean): a coefficient of variation near 1.
func geometric(name string, n int64, mean float64) simPopulation {
	p := 1 / mean
	d := float64(n) / mean
	cl := map[int]int64{}
	for m := 1; ; m++ {
		c := int64(math.Round(d * p * math.Pow(1-p, float64(m-1))))
		if c == 0 {
			break
		}
		cl[m] = c
	}
	return simPopulation{name, cl}
}

func mix(name string, parts ...simPopulation) simPopulation {
	cl := map[int]int64{}
	for _, p := range parts {
		for m, f := range p.classes {
			cl[m] += f
		}
	}
	return simPopulation{name, cl}
}

// simFamilies are the shapes of column the estimator must cover, at n rows: unique keys,
// values drawn at random from small to very large domains (near-unique, like phone
// numbers or timestamps with jitter, to many repeats, like customer ids), equal
// repetition, geometric and Zipf-like skew, a dominant value, low cardinality.
func simFamilies(n int64) []simPopulation {
	return []simPopulation{
		{"unique", map[int]int64{1: n}},
		draws("draws λ=0.05", n, n*20),
		draws("draws λ=0.125", n, n*8),
		draws("draws λ=0.5", n, n*2),
		draws("draws λ=1", n, n),
		draws("draws λ=2", n, n/2),
		draws("draws λ=5", n, n/5),
		draws("draws λ=25", n, n/25),
		draws("draws λ=300", n, n/300),
		uniform("each twice", n, 2),
		uniform("each 5 times", n, 5),
		uniform("each 25 times", n, 25),
		uniform("each 5000 times", n, 5000),
		geometric("geometric mean 3", n, 3),
		geometric("geometric mean 20", n, 20),
		zipf("zipf 1.0", n, int(n/5), 1.0),
		zipf("zipf 1.2", n, int(n/5), 1.2),
		zipf("zipf 1.5", n, int(n/10), 1.5),
		zipf("zipf 2.0", n, int(n/10), 2.0),
		mix("half one value, half unique", simPopulation{"", map[int]int64{int(n / 2): 1}}, simPopulation{"", map[int]int64{1: n / 2}}),
		mix("80% five values, 20% draws λ=0.5", simPopulation{"", map[int]int64{int(n * 8 / 50): 5}}, draws("", n/5, n/10)),
		{"five values 85/10/4/1", map[int]int64{int(n * 85 / 100): 1, int(n / 10): 1, int(n * 4 / 100): 1, int(n / 100): 1}},
	}
}

type simResult struct {
	coverage, medianRelErr, medianWidth float64
	low, high                           int // truths below the interval, above it
}

func simulate(p simPopulation, n int, trials int, seed uint64) simResult {
	r := rand.New(rand.NewPCG(seed, 99))
	rows := p.rows()
	truth := float64(p.distinct())
	q := math.Min(1, float64(n)/float64(rows))
	var res simResult
	errs := make([]float64, 0, trials)
	widths := make([]float64, 0, trials)
	for range trials {
		s := p.sample(r, q)
		e := distinct.EstimateFrom(s, rows)
		switch {
		case truth < e.Lower:
			res.low++
		case truth > e.Upper:
			res.high++
		}
		errs = append(errs, math.Abs(e.Value-truth)/truth)
		widths = append(widths, (e.Upper-e.Lower)/truth)
	}
	slices.Sort(errs)
	slices.Sort(widths)
	res.coverage = 1 - float64(res.low+res.high)/float64(trials)
	res.medianRelErr = errs[len(errs)/2]
	res.medianWidth = widths[len(widths)/2]
	return res
}

// TestSimulatedCoverage draws Bernoulli row samples from simulated columns of every shape
// the estimator must handle, at table sizes where the sample is a sliver of the column
// (0.2% to 2%) and where it is a good part of it (5%, 25%), and checks that the 95%
// interval holds the true count (the seeds are fixed: the outcome is deterministic).
// VIGIA_DISTINCT_SIM=1 prints every shape's coverage, error and interval width;
// VIGIA_DISTINCT_SIM_TRIALS sets the trials per shape (default 10).
func TestSimulatedCoverage(t *testing.T) {
	trials := 10
	verbose := os.Getenv("VIGIA_DISTINCT_SIM") == "1"
	if v, err := strconv.Atoi(os.Getenv("VIGIA_DISTINCT_SIM_TRIALS")); err == nil && v > 0 {
		trials = v
	}
	for _, cfg := range []struct {
		rows int64
		n    int
	}{{5_000_000, 10_000}, {5_000_000, 100_000}, {1_000_000, 20_000}, {200_000, 10_000}, {40_000, 10_000}} {
		for i, p := range simFamilies(cfg.rows) {
			res := simulate(p, cfg.n, trials, uint64(i+1))
			line := fmt.Sprintf("N=%d n=%d %-34s D=%-9d coverage %5.1f%% (low %d, high %d) median rel.err %5.1f%% median width %6.1f%%",
				cfg.rows, cfg.n, p.name, p.distinct(), 100*res.coverage, res.low, res.high, 100*res.medianRelErr, 100*res.medianWidth)
			if verbose {
				t.Log(line)
			}
			// At least nominal coverage: more than a tenth of the trials missing would be
			// far outside what a 95% interval allows.
			if res.low+res.high > trials/10 {
				t.Errorf("%s", line)
			}
		}
	}
}
