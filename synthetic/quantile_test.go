package synthetic

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// skewed draws n log-normal-like amounts (most small, a long tail).
func skewed(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Round(math.Exp(4*r.Float64()*r.Float64())*1000) / 100
	}
	return out
}

func tableOf(col Column, n int, seed int64) *Table {
	t := &Table{Name: "t", Source: catalog.Dataset{Table: "t"}, Columns: []Column{col}, Rows: n}
	t.Values, t.Nulls = make([][]string, 1), make([][]bool, 1)
	generateColumn(t, 0, seed, nil, nil)
	return t
}

// TestGeneratedNumbersFollowTheProfilesQuantiles: values generated from a skewed
// column's quantiles have about the same quantiles, and the utility's marginal
// component (1 − KS distance over the quantiles) is high; the same profile with uniform
// values within its range (what generation did before quantiles) scores low.
func TestGeneratedNumbersFollowTheProfilesQuantiles(t *testing.T) {
	src := skewed(5000, 7)
	q := connect.Quantiles(append([]float64(nil), src...), source.QuantileCuts)
	lo, hi := vigia.Decimal(strconv.FormatFloat(q[0], 'f', 2, 64)), vigia.Decimal(strconv.FormatFloat(q[len(q)-1], 'f', 2, 64))
	prof := &catalog.ColumnProfile{Min: &lo, Max: &hi, Quantiles: q, Distinct: &catalog.Estimate{Value: 4800, SampleSize: 5000}}
	col := Column{Name: "valor", SQLType: TypeNumeric, Scale: 2, profile: prof}

	tb := tableOf(col, 20000, 1)
	var got []float64
	for _, v := range tb.Values[0] {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		if f <= q[0] || f >= q[len(q)-1] {
			t.Fatalf("generated %v: a real extreme (or beyond) of [%v, %v]", f, q[0], q[len(q)-1])
		}
		got = append(got, f)
	}
	gq := connect.Quantiles(got, source.QuantileCuts)
	spread := q[len(q)-1] - q[0]
	for i := 1; i < len(q)-1; i++ {
		if math.Abs(gq[i]-q[i]) > 0.02*spread {
			t.Errorf("quantile %d: generated %.2f, profile %.2f", i, gq[i], q[i])
		}
	}
	if ks := ksOverQuantiles(tb, 0, q, parseNumber); ks > 0.03 {
		t.Fatalf("KS distance %.3f of values drawn from the quantiles", ks)
	}
	comps, _, _ := utility(tb, nil)
	if comps[ComponentMarginals] < 97 {
		t.Fatalf("marginals %v", comps)
	}

	// Uniform within [min, max]: the range is right, the shape is not.
	uni := &Table{Name: "t", Columns: []Column{col}, Rows: 20000, Values: [][]string{make([]string, 20000)}, Nulls: [][]bool{make([]bool, 20000)}}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range uni.Values[0] {
		uni.Values[0][i] = strconv.FormatFloat(q[0]+r.Float64()*spread, 'f', 2, 64)
	}
	if ks := ksOverQuantiles(uni, 0, q, parseNumber); ks < 0.3 {
		t.Fatalf("KS distance %.3f of uniform values against a skewed profile", ks)
	}
	comps, _, _ = utility(uni, nil)
	if comps[ComponentMarginals] > 70 {
		t.Fatalf("uniform values score marginals %v", comps)
	}
}

// TestCommonExtremesMayBeGenerated: a quantity whose least value is a fifth of the rows
// (ties in the quantiles) is generated with that value about as often; a rare maximum
// stays out.
func TestCommonExtremesMayBeGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	src := make([]float64, 5000)
	for i := range src {
		src[i] = 1 + math.Floor(1000*math.Pow(r.Float64(), 4))
	}
	q := connect.Quantiles(append([]float64(nil), src...), source.QuantileCuts)
	if q[1] != q[0] {
		t.Fatalf("fixture: the least value is not common: %v", q)
	}
	lo, hi := vigia.Decimal(strconv.FormatFloat(q[0], 'f', -1, 64)), vigia.Decimal(strconv.FormatFloat(q[len(q)-1], 'f', -1, 64))
	col := Column{Name: "qty", SQLType: TypeInteger, profile: &catalog.ColumnProfile{Min: &lo, Max: &hi, Quantiles: q,
		Distinct: &catalog.Estimate{Value: 300, SampleSize: 5000}}}
	tb := tableOf(col, 20000, 2)
	ones, top := 0, 0
	for _, v := range tb.Values[0] {
		switch v {
		case "1":
			ones++
		case strconv.FormatFloat(q[len(q)-1], 'f', -1, 64):
			top++
		}
	}
	srcOnes := 0
	for _, v := range src {
		if v == 1 {
			srcOnes++
		}
	}
	if share, want := float64(ones)/20000, float64(srcOnes)/5000; math.Abs(share-want) > 0.05 {
		t.Fatalf("value 1: %.3f of generated rows, %.3f of the source", share, want)
	}
	if top != 0 {
		t.Fatalf("the rare maximum generated %d times", top)
	}
	if ks := ksOverQuantiles(tb, 0, q, parseNumber); ks > 0.05 {
		t.Fatalf("KS %.3f", ks)
	}
}

func TestGeneratedTimesFollowTheProfilesQuantiles(t *testing.T) {
	// Times crowding towards the end of a year.
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(5, 5))
	src := make([]float64, 5000)
	for i := range src {
		src[i] = float64(base.Unix()) + math.Floor(31536000*math.Sqrt(r.Float64()))
	}
	q := connect.Quantiles(append([]float64(nil), src...), source.QuantileCuts)
	minT, maxT := time.Unix(int64(q[0]), 0).UTC(), time.Unix(int64(q[len(q)-1]), 0).UTC()
	col := Column{Name: "at", SQLType: TypeTimestamp, profile: &catalog.ColumnProfile{MinTime: &minT, MaxTime: &maxT, Quantiles: q,
		Distinct: &catalog.Estimate{Value: 5000, SampleSize: 5000}}}
	tb := tableOf(col, 20000, 3)
	if ks := ksOverQuantiles(tb, 0, q, func(s string) (float64, bool) { return parseTime(col, s) }); ks > 0.03 {
		t.Fatalf("KS %.3f", ks)
	}
	late := 0
	for _, v := range tb.Values[0] {
		if v >= "2024-07-01" {
			late++
		}
	}
	// sqrt-skewed: P(after mid-year) = 1 − 0.5² ≈ 0.71 (uniform would give 0.5).
	if share := float64(late) / 20000; share < 0.66 || share > 0.76 {
		t.Fatalf("%.3f of generated times in the second half", share)
	}
}
