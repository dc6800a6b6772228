package synthetic

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/source/semantic"
)

// Utility components and their weights (docs/synthetic.md gives the formulas). A
// component no column of the table measures is left out and the others' weights are
// scaled to sum 100 again.
const (
	ComponentMarginals       = "marginals"
	ComponentNullRate        = "null_rate"
	ComponentDistinctRatio   = "distinct_ratio"
	ComponentLengths         = "lengths"
	ComponentPatternMasks    = "pattern_masks"
	ComponentSemanticValid   = "semantic_validity"
	ComponentReferentialInts = "referential_integrity"
)

var baseWeights = map[string]float64{
	ComponentMarginals: 30, ComponentNullRate: 15, ComponentDistinctRatio: 15, ComponentLengths: 10,
	ComponentPatternMasks: 10, ComponentSemanticValid: 10, ComponentReferentialInts: 10,
}

// utility scores a generated table against its profile: each component 0-100 (the mean
// over the columns it measures), the weights of the measured components (sum 100) and
// the weighted score.
func utility(t *Table, pack map[string]*Table) (map[string]float64, map[string]float64, float64) {
	sums := map[string]float64{}
	counts := map[string]int{}
	add := func(k string, v float64) {
		sums[k] += math.Max(0, math.Min(1, v))
		counts[k]++
	}
	for c, col := range t.Columns {
		p := col.profile
		if p == nil {
			continue
		}
		nonNull := 0
		for r := 0; r < t.Rows; r++ {
			if !t.Nulls[c][r] {
				nonNull++
			}
		}
		if t.Rows > 0 {
			add(ComponentNullRate, 1-math.Abs(float64(t.Rows-nonNull)/float64(t.Rows)-expectedNullRate(col)))
		}
		if col.Ref != nil {
			parent := pack[col.Ref.Table]
			add(ComponentReferentialInts, referential(t, c, parent))
			continue
		}
		if nonNull == 0 {
			continue
		}
		if want, ok := expectedDistinctRatio(col, nonNull); ok {
			distinct := map[string]bool{}
			for r := 0; r < t.Rows; r++ {
				if !t.Nulls[c][r] {
					distinct[t.Values[c][r]] = true
				}
			}
			add(ComponentDistinctRatio, 1-math.Abs(float64(len(distinct))/float64(nonNull)-want))
		}
		switch col.SQLType {
		case TypeInteger, TypeNumeric:
			if q := quantilesOf(p); q != nil && !col.PrimaryKey {
				add(ComponentMarginals, 1-ksOverQuantiles(t, c, q, parseNumber))
			} else if p.Min != nil && p.Max != nil && !col.PrimaryKey {
				lo, hi, _ := numericRange(t, c)
				add(ComponentMarginals, rangeFidelity(t, c, p.Min.Float64(), p.Max.Float64(), lo, hi, parseNumber))
			}
		case TypeDate, TypeTimestamp:
			if q := quantilesOf(p); q != nil {
				add(ComponentMarginals, 1-ksOverQuantiles(t, c, q, func(s string) (float64, bool) { return parseTime(col, s) }))
			} else if p.MinTime != nil && p.MaxTime != nil {
				lo, hi, _ := textRange(t, c)
				parse := func(s string) (float64, bool) { return parseTime(col, s) }
				l, _ := parse(lo)
				h, _ := parse(hi)
				add(ComponentMarginals, rangeFidelity(t, c, float64(p.MinTime.Unix()), float64(p.MaxTime.Unix()), l, h, parse))
			}
		case TypeText:
			if p.MinLength != nil && p.MaxLength != nil {
				add(ComponentLengths, lengthFidelity(t, c, *p.MinLength, *p.MaxLength, p.AvgLength))
			}
			if col.Semantic != "" {
				add(ComponentSemanticValid, semanticValidity(t, c))
			} else if masks := usableMasks(p); len(masks) > 0 {
				add(ComponentPatternMasks, maskCoverage(t, c, masks, p))
			}
		}
	}
	weights := map[string]float64{}
	total := 0.0
	// In a fixed order: a sum of floats in map order may differ in its last digit from
	// one request to the next.
	names := slices.Sorted(maps.Keys(baseWeights))
	for _, k := range names {
		if counts[k] > 0 {
			total += baseWeights[k]
		}
	}
	components := map[string]float64{}
	score := 0.0
	for _, k := range names {
		w := baseWeights[k]
		if counts[k] == 0 {
			continue
		}
		weights[k] = round2(w * 100 / total)
		components[k] = round2(100 * sums[k] / float64(counts[k]))
		score += w / total * components[k]
	}
	return components, weights, round2(score)
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func expectedNullRate(col Column) float64 {
	if !col.Nullable || col.profile == nil {
		return 0
	}
	return col.profile.NullRate
}

// expectedDistinctRatio is the distinct ratio the profile gives for nonNull generated
// values: the profile's ratio, or for a column of at most 1000 distinct values (a
// cardinality, not a ratio) the share those values fill of nonNull draws.
func expectedDistinctRatio(col Column, nonNull int) (float64, bool) {
	if col.Unique {
		return 1, true
	}
	p := col.profile
	if p.Distinct == nil || col.SQLType == TypeBoolean {
		return 0, false
	}
	sampled := float64(p.Distinct.SampleSize)
	if sampled <= 0 {
		return 0, false
	}
	ratio := math.Min(1, p.Distinct.Value/sampled)
	if ratio >= 0.9 {
		return ratio, true
	}
	k := math.Round(p.Distinct.Value)
	if k > 1000 {
		return ratio, true
	}
	// Drawing nonNull times among k values leaves k(1-(1-1/k)^n) distinct ones.
	n := float64(nonNull)
	return math.Min(1, k*(1-math.Pow(1-1/k, n))/n), true
}

func parseNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func parseTime(col Column, s string) (float64, bool) {
	layout := "2006-01-02 15:04:05"
	if col.SQLType == TypeDate {
		layout = "2006-01-02"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return 0, false
	}
	return float64(t.Unix()), true
}

// ksOverQuantiles is the Kolmogorov–Smirnov distance between the generated values'
// distribution and the one the profile's equi-depth quantiles q describe, measured at
// the cut points: at each distinct cut value x the profile puts between the first and
// the last probability of the cut points equal to x below or at x (a tie is a step of
// its distribution), and the generated values put the share of them below x and at or
// below x; the distance is the largest gap. 0 is the same distribution, 1 none alike.
func ksOverQuantiles(t *Table, c int, q []float64, parse func(string) (float64, bool)) float64 {
	vals := make([]float64, 0, t.Rows)
	for r := 0; r < t.Rows; r++ {
		if t.Nulls[c][r] {
			continue
		}
		if v, ok := parse(t.Values[c][r]); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return 1
	}
	slices.Sort(vals)
	n := float64(len(vals))
	step := 1 / float64(len(q)-1)
	ks := 0.0
	for i := 0; i < len(q); {
		j := i
		for j+1 < len(q) && q[j+1] == q[i] {
			j++
		}
		x := q[i]
		below := float64(sort.SearchFloat64s(vals, x)) / n // share < x
		atOrBelow := float64(upperBound(vals, x)) / n      // share ≤ x
		// The profile's CDF just below x is at least (i-1)·step (and at most i·step) and
		// at x it is between j·step and (j+1)·step: compare with the nearest of each.
		ks = math.Max(ks, gap(below, float64(max(i-1, 0))*step, float64(i)*step))
		ks = math.Max(ks, gap(atOrBelow, float64(j)*step, math.Min(1, float64(j+1)*step)))
		i = j + 1
	}
	return math.Min(1, ks)
}

// gap is how far v lies outside [lo, hi].
func gap(v, lo, hi float64) float64 {
	switch {
	case v < lo:
		return lo - v
	case v > hi:
		return v - hi
	}
	return 0
}

// upperBound is the number of sorted values ≤ x.
func upperBound(vals []float64, x float64) int {
	return sort.Search(len(vals), func(i int) bool { return vals[i] > x })
}

// rangeFidelity is half the share of generated values inside the profile's range and
// half the share of that range the generated values span.
func rangeFidelity(t *Table, c int, pmin, pmax, gmin, gmax float64, parse func(string) (float64, bool)) float64 {
	inside, n := 0, 0
	for r := 0; r < t.Rows; r++ {
		if t.Nulls[c][r] {
			continue
		}
		n++
		if v, ok := parse(t.Values[c][r]); ok && v >= pmin && v <= pmax {
			inside++
		}
	}
	if n == 0 {
		return 0
	}
	coverage := 1.0
	if pmax > pmin {
		coverage = math.Min(1, (gmax-gmin)/(pmax-pmin))
	}
	return 0.5*float64(inside)/float64(n) + 0.5*coverage
}

// lengthFidelity is half the share of generated lengths inside the profile's range and
// half the closeness of the average lengths.
func lengthFidelity(t *Table, c, minL, maxL int, avg *float64) float64 {
	inside, n, sum := 0, 0, 0
	for r := 0; r < t.Rows; r++ {
		if t.Nulls[c][r] {
			continue
		}
		l := utf8.RuneCountInString(t.Values[c][r])
		n++
		sum += l
		if l >= minL && l <= maxL {
			inside++
		}
	}
	if n == 0 {
		return 0
	}
	closeness := 1.0
	if avg != nil && *avg > 0 {
		closeness = 1 - math.Abs(float64(sum)/float64(n)-*avg) / *avg
	}
	return 0.5*float64(inside)/float64(n) + 0.5*math.Max(0, closeness)
}

// maskCoverage is the share of generated values whose mask is one of the profile's, over
// the share of the sample those masks cover.
func maskCoverage(t *Table, c int, masks []catalog.Mask, p *catalog.ColumnProfile) float64 {
	set := map[string]bool{}
	covered := 0
	for _, m := range masks {
		set[m.Mask] = true
		covered += m.Count
	}
	in, n := 0, 0
	var buf []byte
	for r := 0; r < t.Rows; r++ {
		if t.Nulls[c][r] {
			continue
		}
		n++
		buf = semantic.AppendMask(buf[:0], t.Values[c][r])
		if set[string(buf)] {
			in++
		}
	}
	if n == 0 {
		return 0
	}
	// The masks counted a sample of the non-null values; its size is the distinct
	// estimate's sample when known.
	share := 1.0
	if p.Distinct != nil && p.Distinct.SampleSize >= covered && p.Distinct.SampleSize > 0 {
		share = float64(covered) / float64(p.Distinct.SampleSize)
	}
	if share <= 0 {
		return 0
	}
	return math.Min(1, float64(in)/float64(n)/share)
}

// semanticValidity is the share of generated values valid for the column's semantic
// type, by the same validators the scans use.
func semanticValidity(t *Table, c int) float64 {
	col := t.Columns[c]
	valid, n := 0, 0
	for r := 0; r < t.Rows; r++ {
		if t.Nulls[c][r] {
			continue
		}
		n++
		if ValidFor(col.Semantic, col.Region, t.Values[c][r]) {
			valid++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(valid) / float64(n)
}

// ValidFor reports whether v is a valid value of a semantic type (region for phone).
func ValidFor(typ, region, v string) bool {
	switch typ {
	case "email":
		return semantic.IsEmail(v)
	case "nif_pt":
		return semantic.ValidNIF(v)
	case "iban":
		return semantic.ValidIBAN(v)
	case "postal_code_pt":
		return semantic.IsPostalCodePT(v)
	case "phone_pt":
		_, ok := semantic.CheckPhonePT(v, "PT")
		return ok
	case "phone":
		if region == "" {
			region = "PT"
		}
		return semantic.IsPhone(v, region)
	case "uuid":
		return semantic.IsUUID(v)
	case "date_as_text":
		_, ok := semantic.CheckDateText(v)
		return ok
	}
	return true
}

// referential is the share of a foreign key's non-null values that reference a
// generated parent row; for a column of a composite key, the share of the rows whose
// whole tuple (no NULL in it) is a parent row's key.
func referential(t *Table, c int, parent *Table) float64 {
	if parent == nil {
		return 0
	}
	// The child's columns of the key (one, or a composite key's group) and the parent's.
	var cols, pcols []int
	for i, col := range t.Columns {
		if i == c || (col.Ref != nil && t.Columns[c].Ref.Group != "" && col.Ref.Group == t.Columns[c].Ref.Group) {
			pc := slices.IndexFunc(parent.Columns, func(p Column) bool { return p.Name == col.Ref.Column })
			if pc < 0 {
				return 0
			}
			cols, pcols = append(cols, i), append(pcols, pc)
		}
	}
	tuple := func(tb *Table, idx []int, r int) (string, bool) {
		var b strings.Builder
		for _, i := range idx {
			if tb.Nulls[i][r] {
				return "", false
			}
			b.WriteString(tb.Values[i][r])
			b.WriteByte(0)
		}
		return b.String(), true
	}
	keys := map[string]bool{}
	for r := 0; r < parent.Rows; r++ {
		if k, ok := tuple(parent, pcols, r); ok {
			keys[k] = true
		}
	}
	ok, n := 0, 0
	for r := 0; r < t.Rows; r++ {
		k, full := tuple(t, cols, r)
		if !full {
			continue
		}
		n++
		if keys[k] {
			ok++
		}
	}
	if n == 0 {
		return 1
	}
	return float64(ok) / float64(n)
}
