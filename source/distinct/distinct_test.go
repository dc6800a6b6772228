package distinct_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/vigia-data/vigia/source/distinct"
)

func TestEstimateFrom(t *testing.T) {
	cases := []struct {
		name       string
		s          distinct.Sample
		population int64
		value      float64
		exact      bool
	}{
		{"uniqueSaturatesAtPopulation", distinct.Sample{N: 500, D: 500, Freq: map[int]int{1: 500}}, 5000, 5000, false},
		{"lowCardinalityIsSeen", distinct.Sample{N: 500, D: 5, Freq: map[int]int{100: 5}}, 5000, 5, false},
		{"wholeColumnIsExact", distinct.Sample{N: 500, D: 37, Freq: map[int]int{1: 3, 2: 4, 16: 30}}, 500, 37, true},
		{"emptySample", distinct.Sample{}, 1000, 0, true},
		{"singleValue", distinct.Sample{N: 1, D: 1, Freq: map[int]int{1: 1}}, 1000, 1000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := distinct.EstimateFrom(c.s, c.population)
			if got.Value != c.value || got.Exact != c.exact {
				t.Fatalf("EstimateFrom = %+v; want value %v exact %v", got, c.value, c.exact)
			}
			if got.Lower > got.Value || got.Upper < got.Value {
				t.Fatalf("value outside its interval: %+v", got)
			}
			if got.Lower < float64(c.s.D) || got.Upper > math.Max(float64(c.population), float64(c.s.D)) {
				t.Fatalf("interval outside [d, N]: %+v", got)
			}
		})
	}
}

// TestNearUniqueIntervalsWiden checks the case block samples and the delta method got
// wrong: a sample with (almost) no repeats does not tell a unique column from one whose
// values are 78% unique, so the interval must reach down that far.
func TestNearUniqueIntervalsWiden(t *testing.T) {
	const population = 5_000_000
	cases := []struct {
		name string
		s    distinct.Sample
	}{
		{"noRepeats", distinct.Sample{N: 10000, D: 10000, Freq: map[int]int{1: 10000}}},
		{"fiveRepeats", distinct.Sample{N: 10000, D: 9995, Freq: map[int]int{1: 9990, 2: 5}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := distinct.EstimateFrom(c.s, population)
			if got.Lower > 0.78*population || got.Upper < 0.99*population {
				t.Fatalf("EstimateFrom = %+v; want an interval from below 78%% to about 100%% of %d", got, population)
			}
			if got.Value < got.Lower || got.Value > got.Upper {
				t.Fatalf("value outside its interval: %+v", got)
			}
		})
	}
}

func TestFromHashes(t *testing.T) {
	s := distinct.FromHashes([]uint64{7, 1, 7, 3, 7, 3, 9})
	want := distinct.Sample{N: 7, D: 4, Freq: map[int]int{1: 2, 2: 1, 3: 1}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("FromHashes = %+v; want %+v", s, want)
	}
}

func TestFromCounts(t *testing.T) {
	s := distinct.FromCounts(map[string]int{"a": 1, "b": 1, "c": 2, "d": 5})
	want := distinct.Sample{N: 9, D: 4, Freq: map[int]int{1: 2, 2: 1, 5: 1}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("FromCounts = %+v; want %+v", s, want)
	}
}

// population builds a column of size n from a value generator.
func population(n int, value func(i int) int) []int {
	col := make([]int, n)
	for i := range col {
		col[i] = value(i)
	}
	return col
}

// coverage draws simple random samples without replacement and returns the share of
// intervals that hold the true distinct count and the mean relative error of the estimate.
func coverage(tb testing.TB, col []int, n, trials int, seed uint64) (covered float64, relErr float64) {
	tb.Helper()
	truth := map[int]struct{}{}
	for _, v := range col {
		truth[v] = struct{}{}
	}
	trueD := float64(len(truth))
	r := rand.New(rand.NewPCG(seed, 1))
	hits := 0
	for range trials {
		perm := r.Perm(len(col))[:n]
		counts := map[int]int{}
		for _, i := range perm {
			counts[col[i]]++
		}
		e := distinct.EstimateFrom(distinct.FromCounts(counts), int64(len(col)))
		if e.Lower <= trueD && trueD <= e.Upper {
			hits++
		}
		relErr += math.Abs(e.Value-trueD) / trueD
	}
	return float64(hits) / float64(trials), relErr / float64(trials)
}

func TestIntervalCoversTruthOnRandomSamples(t *testing.T) {
	const size, n, trials = 20000, 2000, 60
	zipf := func(s float64, imax uint64) []int {
		z := rand.NewZipf(rand.New(rand.NewPCG(7, 7)), s, 1, imax)
		return population(size, func(int) int { return int(z.Uint64()) })
	}
	cases := []struct {
		name        string
		col         []int
		minCoverage float64
		maxRelErr   float64
	}{
		{"unique", population(size, func(i int) int { return i }), 0.95, 0.01},
		{"fiveValues", population(size, func(i int) int { return i % 5 }), 0.95, 0.01},
		{"uniform1000", population(size, func(i int) int { return i % 1000 }), 0.90, 0.05},
		{"uniform10000", population(size, func(i int) int { return i % 10000 }), 0.90, 0.10},
		{"halfUniqueHalfFew", population(size, func(i int) int {
			if i%2 == 0 {
				return i
			}
			return -(i % 7)
		}), 0.90, 0.05},
		{"mostlyOneValue", population(size, func(i int) int {
			if i%10 == 0 {
				return i
			}
			return -1
		}), 0.90, 0.10},
		{"countsOneToHundred", func() []int {
			col := make([]int, 0, size)
			for v := 0; len(col) < size; v++ {
				for j := 0; j <= v%100 && len(col) < size; j++ {
					col = append(col, v)
				}
			}
			return col
		}(), 0.90, 0.25},
		// Heavy skew is where sample-based estimators are weakest (bias, not variance).
		{"zipf1.05", zipf(1.05, 50000), 0.90, 0.25},
		{"zipf1.2", zipf(1.2, 50000), 0.90, 0.25},
		{"zipf1.5", zipf(1.5, 5000), 0.90, 0.20},
		{"zipf2", zipf(2, 5000), 0.90, 0.25},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cov, rel := coverage(t, c.col, n, trials, 42)
			t.Logf("coverage %.2f, mean relative error %.3f", cov, rel)
			if cov < c.minCoverage {
				t.Errorf("coverage %.2f < %.2f", cov, c.minCoverage)
			}
			if rel > c.maxRelErr {
				t.Errorf("mean relative error %.3f > %.3f", rel, c.maxRelErr)
			}
		})
	}
}
