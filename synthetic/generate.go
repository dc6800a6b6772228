package synthetic

import (
	"cmp"
	"encoding/hex"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/source"
)

// SQL types of generated columns, as schema.sql and the SQLite pack declare them.
const (
	TypeInteger   = "INTEGER"
	TypeNumeric   = "NUMERIC"
	TypeText      = "TEXT"
	TypeDate      = "DATE"
	TypeTimestamp = "TIMESTAMP"
	TypeBoolean   = "BOOLEAN"
)

// Column is a generated column: what the catalog says of the source column, reduced to
// what generation and the schema need.
type Column struct {
	Name       string
	Class      string
	DataType   string
	SQLType    string
	Scale      int // decimals of a NUMERIC column
	Nullable   bool
	PrimaryKey bool
	Unique     bool
	Semantic   string
	Region     string
	// Ref is the parent of a foreign key inside the same pack; nil otherwise.
	Ref *Ref
	// PII and QuasiIdentifier say how the privacy evaluation treats the column.
	PII             bool
	QuasiIdentifier bool
	profile         *catalog.ColumnProfile
}

// Ref is a foreign key to a generated parent table.
type Ref struct {
	Table  string // pack name of the parent
	Column string
	// Group names a composite foreign key (its constraint) the column is part of: every
	// column of the group takes its value from one parent row, so each child row holds a
	// key tuple the parent has. "" for a single-column key.
	Group string
	// NullRate is a composite key's share of rows without a parent (all its columns
	// NULL): the first column's profile null rate when every column of the key is
	// nullable, else 0.
	NullRate float64
	// Distinct: the key covers the child's whole primary key, so child rows take distinct
	// parent rows.
	Distinct bool
}

// Table is one generated table, column-major: Values[c][r] is row r of column c, and
// Nulls[c][r] marks a NULL.
type Table struct {
	DatasetID    string
	ConnectionID string
	Name         string // name in the pack (the source table's name, or schema_table on a clash)
	Source       catalog.Dataset
	Columns      []Column
	Values       [][]string
	Nulls        [][]bool
	Rows         int
	// injected marks, per column, the rows a test hook wrote (never redrawn).
	injected map[int]bool
}

// Value returns row r of column c and whether it is NULL.
func (t *Table) Value(c, r int) (string, bool) { return t.Values[c][r], t.Nulls[c][r] }

// Injection makes the generator write value in row 0 of every column named Column: a
// test hook that forces a reuse the privacy evaluation must catch. Never set in
// production.
type Injection struct {
	Column string
	Value  string
}

// seedFor derives the PRNG of one column from the request's seed and the column's
// identity (dataset name and column name), so that adding a column or a table never
// shifts the values of the others.
func seedFor(seed int64, parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// piiTypes are the semantic types of personal data: a generated value of one of them
// found in the source is a pii_leak.
var piiTypes = map[string]bool{"email": true, "phone": true, "phone_pt": true, "nif_pt": true, "iban": true}

// quasiNames are column names (or name parts) of quasi-identifiers, the fallback where
// no sensitivity decides: attributes that
// single people out in combination (birth dates, sex, age, postal area).
var quasiNames = []string{"nascimento", "birth", "dob", "idade", "age", "genero", "gender", "sexo", "sex", "codigo_postal", "postal", "zip"}

func isQuasi(c catalog.Column) bool {
	if c.Profile != nil && c.Profile.Semantic != nil && c.Profile.Semantic.Type == "postal_code_pt" {
		return true
	}
	n := strings.ToLower(c.Name)
	for _, q := range quasiNames {
		if n == q || strings.HasPrefix(n, q+"_") || strings.HasSuffix(n, "_"+q) || strings.Contains(n, "_"+q+"_") ||
			(len(q) > 4 && strings.Contains(n, q)) {
			return true
		}
	}
	return false
}

// Sensitivity levels the quasi-identifiers read (package sensitivity's).
const (
	levelPublic   = "public"
	levelInternal = "internal"
	levelPII      = "pii"
)

// quasiIdentifier decides whether a column is a quasi-identifier, from its sensitivity
// first. A column a person set pii is one unless it is a direct identifier (a key, a
// unique column, or a personal-data type the pii_leak check covers: email, phone, NIF,
// IBAN); one a person set public or internal is not. An automatic pii level is one for
// the attributes people are grouped by — a postal code, or a number or a time such as a
// birth date —, not for text that is pii by its name (names, addresses: direct
// identifiers). Without a sensitivity, or otherwise, the name and semantic-type
// heuristic (isQuasi) decides.
func quasiIdentifier(c catalog.Column, s *Sensitivity) bool {
	if s != nil {
		switch {
		case s.Manual && s.Level == levelPII:
			return !directIdentifier(c)
		case s.Manual && (s.Level == levelPublic || s.Level == levelInternal):
			return false
		case s.Level == levelPII && !directIdentifier(c):
			if c.Class == source.ClassNumeric || c.Class == source.ClassTemporal ||
				(c.Profile != nil && c.Profile.Semantic != nil && c.Profile.Semantic.Type == "postal_code_pt") {
				return true
			}
		}
	}
	return isQuasi(c)
}

// directIdentifier reports whether a column identifies a row on its own.
func directIdentifier(c catalog.Column) bool {
	if c.PrimaryKey || c.Unique {
		return true
	}
	return c.Profile != nil && c.Profile.Semantic != nil && piiTypes[c.Profile.Semantic.Type]
}

// columnsOf converts the catalog's columns to generated ones; sens gives their
// sensitivity by name (nil: unknown).
func columnsOf(d catalog.Dataset, sens map[string]Sensitivity) []Column {
	out := make([]Column, 0, len(d.Columns))
	for _, c := range d.Columns {
		var cs *Sensitivity
		if s, ok := sens[c.Name]; ok {
			cs = &s
		}
		col := Column{Name: c.Name, Class: c.Class, DataType: c.DataType, Nullable: c.Nullable && !c.PrimaryKey, PrimaryKey: c.PrimaryKey,
			Unique: c.Unique || c.PrimaryKey, profile: c.Profile, QuasiIdentifier: quasiIdentifier(c, cs)}
		col.SQLType, col.Scale = sqlType(c)
		if c.Profile != nil && c.Profile.Semantic != nil {
			col.Semantic, col.Region = c.Profile.Semantic.Type, c.Profile.Semantic.Region
			col.PII = piiTypes[col.Semantic]
			if col.Semantic == "date_as_text" || col.Semantic == "uuid" || col.Class != source.ClassText {
				// Only text columns get the value generators of a semantic type.
				col.Semantic = orText(col)
			}
		}
		out = append(out, col)
	}
	return out
}

func orText(c Column) string {
	if c.Class == source.ClassText {
		return c.Semantic
	}
	return ""
}

// sqlType maps a source type to the pack's portable type and scale.
func sqlType(c catalog.Column) (string, int) {
	t := strings.ToLower(c.DataType)
	switch c.Class {
	case source.ClassNumeric:
		if strings.Contains(t, "int") || strings.Contains(t, "serial") {
			return TypeInteger, 0
		}
		if i := strings.Index(t, ","); i > 0 {
			if j := strings.Index(t[i:], ")"); j > 0 {
				if s, err := strconv.Atoi(strings.TrimSpace(t[i+1 : i+j])); err == nil && s >= 0 && s <= 12 {
					if s == 0 {
						return TypeInteger, 0
					}
					return TypeNumeric, s
				}
			}
		}
		return TypeNumeric, 2
	case source.ClassTemporal:
		if t == "date" {
			return TypeDate, 0
		}
		return TypeTimestamp, 0
	case source.ClassBoolean:
		return TypeBoolean, 0
	}
	return TypeText, 0
}

// generateColumn fills column c of t. parents gives the generated values of the key
// columns t's foreign keys point to (by refKey).
func generateColumn(t *Table, c int, seed int64, parents map[string][]string, inject []Injection) {
	col := t.Columns[c]
	n := t.Rows
	rng := seedFor(seed, t.Source.Name(), col.Name)
	vals := make([]string, n)
	nulls := make([]bool, n)
	p := col.profile
	nullRate := 0.0
	if p != nil && col.Nullable {
		nullRate = p.NullRate
	}
	switch {
	case col.Ref != nil && col.Ref.Group != "":
		// A composite key: the group's own generator draws the same parent rows for every
		// column of the group (and the same NULL rows), so each row's tuple is a parent's.
		keys := parents[refKey(col.Ref.Table, col.Ref.Column)]
		grng := seedFor(seed, t.Source.Name(), "\x00fk", col.Ref.Group)
		var perm []int
		if col.Ref.Distinct {
			perm = grng.Perm(len(keys))
		}
		for i := range vals {
			if len(keys) == 0 || (col.Ref.NullRate > 0 && grng.Float64() < col.Ref.NullRate) {
				nulls[i] = true
				continue
			}
			j := 0
			if i < len(perm) {
				j = perm[i]
			} else {
				j = grng.IntN(len(keys))
			}
			vals[i] = keys[j]
		}
	case col.PrimaryKey && col.SQLType == TypeInteger:
		for i := range vals {
			vals[i] = strconv.Itoa(i + 1)
		}
	case col.Ref != nil:
		keys := parents[refKey(col.Ref.Table, col.Ref.Column)]
		for i := range vals {
			if len(keys) == 0 || (nullRate > 0 && rng.Float64() < nullRate) {
				nulls[i] = true
				continue
			}
			vals[i] = keys[rng.IntN(len(keys))]
		}
	default:
		gen := valueGenerator(col, rng)
		if col.Unique {
			seen := make(map[string]bool, n)
			for i := range vals {
				v := gen()
				for try := 0; seen[v] && try < 20; try++ {
					v = gen()
				}
				if seen[v] {
					v = uniqueSuffix(col, v, i)
				}
				seen[v] = true
				vals[i] = v
			}
			break
		}
		pool := distinctPool(col, n, nullRate, gen)
		pick := func() string { return pool[rng.IntN(len(pool))] }
		if snap := snapToPool(col, pool, gen); snap != nil {
			pick = snap
		}
		for i := range vals {
			if nullRate > 0 && rng.Float64() < nullRate {
				nulls[i] = true
				continue
			}
			if pool != nil {
				vals[i] = pick()
			} else {
				vals[i] = gen()
			}
		}
	}
	for _, in := range inject {
		if in.Column == col.Name && n > 0 {
			vals[0], nulls[0] = in.Value, false
			if t.injected == nil {
				t.injected = map[int]bool{}
			}
			t.injected[c] = true
		}
	}
	t.Values[c], t.Nulls[c] = vals, nulls
}

// distinctPool draws the values a low-cardinality column repeats: as many as the
// profile's distinct ratio gives for n rows. nil means every row draws a fresh value.
func distinctPool(col Column, n int, nullRate float64, gen func() string) []string {
	p := col.profile
	if p == nil || p.Distinct == nil || col.SQLType == TypeBoolean {
		return nil
	}
	nonNull := float64(p.SampleSize)
	if p.Distinct.SampleSize > 0 {
		nonNull = float64(p.Distinct.SampleSize)
	}
	if nonNull <= 0 {
		return nil
	}
	ratio := math.Min(1, p.Distinct.Value/nonNull)
	if ratio >= 0.9 {
		return nil
	}
	// Below about 1000 distinct values the count itself is the column's cardinality
	// (categories, codes): keep it; above, keep the ratio.
	k := int(math.Round(p.Distinct.Value))
	if k > 1000 {
		k = int(math.Ceil(ratio * float64(n) * (1 - nullRate)))
	}
	k = max(1, min(k, n))
	pool := make([]string, 0, k)
	seen := map[string]bool{}
	for tries := 0; len(pool) < k && tries < 4*k; tries++ {
		v := gen()
		if !seen[v] {
			seen[v] = true
			pool = append(pool, v)
		}
	}
	return pool
}

// snapToPool returns, for a numeric or temporal column with quantiles, a draw that
// keeps the distribution across a pool of few values: a value drawn from the quantiles,
// replaced by the nearest pool value (a pool picked uniformly would give a value held by
// a fifth of the rows the same share as one held by a single row). nil otherwise.
func snapToPool(col Column, pool []string, gen func() string) func() string {
	if len(pool) == 0 || quantilesOf(col.profile) == nil {
		return nil
	}
	parse := parseNumber
	switch col.SQLType {
	case TypeInteger, TypeNumeric:
	case TypeDate, TypeTimestamp:
		parse = func(s string) (float64, bool) { return parseTime(col, s) }
	default:
		return nil
	}
	type point struct {
		x float64
		v string
	}
	pts := make([]point, 0, len(pool))
	for _, v := range pool {
		x, ok := parse(v)
		if !ok {
			return nil
		}
		pts = append(pts, point{x, v})
	}
	slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.x, b.x) })
	return func() string {
		x, ok := parse(gen())
		if !ok {
			return pts[0].v
		}
		i := sort.Search(len(pts), func(i int) bool { return pts[i].x >= x })
		switch {
		case i == len(pts):
			i--
		case i > 0 && x-pts[i-1].x < pts[i].x-x:
			i--
		}
		return pts[i].v
	}
}

func uniqueSuffix(col Column, v string, i int) string {
	switch col.SQLType {
	case TypeInteger, TypeNumeric:
		return strconv.Itoa(1_000_000_000 + i)
	}
	return v + "-" + strconv.Itoa(i)
}

// valueGenerator returns the generator of one column's values from its profile.
func valueGenerator(col Column, rng *rand.Rand) func() string {
	p := col.profile
	switch col.SQLType {
	case TypeInteger, TypeNumeric:
		return numberGenerator(col, rng)
	case TypeDate, TypeTimestamp:
		lo, hi := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		if p != nil && p.MinTime != nil && p.MaxTime != nil && !p.MaxTime.Before(*p.MinTime) {
			lo, hi = p.MinTime.UTC(), p.MaxTime.UTC()
		}
		step := time.Second
		layout := "2006-01-02 15:04:05"
		if col.SQLType == TypeDate {
			step, layout = 24*time.Hour, "2006-01-02"
			lo, hi = lo.Truncate(step), hi.Truncate(step)
		}
		span := int64(hi.Sub(lo) / step)
		first, last := int64(0), span
		if span > 20 {
			// The real extremes stay out where they may single out a few rows.
			lowCommon, highCommon := commonExtremes(p)
			if !lowCommon {
				first++
			}
			if !highCommon {
				last--
			}
		}
		if q := quantilesOf(p); q != nil {
			// Drawn from the profile's equi-depth quantiles (Unix seconds), then kept
			// within the range.
			base := float64(lo.Unix())
			sec := step.Seconds()
			return func() string {
				k := int64(math.Round((drawQuantile(q, rng) - base) / sec))
				k = max(first, min(last, k))
				return lo.Add(time.Duration(k) * step).Format(layout)
			}
		}
		return func() string {
			return lo.Add(time.Duration(first+rng.Int64N(last-first+1)) * step).Format(layout)
		}
	case TypeBoolean:
		return func() string { return strconv.FormatBool(rng.IntN(2) == 0) }
	}
	if strings.Contains(strings.ToLower(col.DataType), "uuid") {
		return func() string { return uuidFrom(rng) }
	}
	return textGenerator(col, rng)
}

func numberGenerator(col Column, rng *rand.Rand) func() string {
	p := col.profile
	lo, hi := 0.0, 1000.0
	if p != nil && p.Min != nil && p.Max != nil {
		lo, hi = p.Min.Float64(), p.Max.Float64()
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	q := quantilesOf(p)
	if q != nil && (p.Min == nil || p.Max == nil) {
		lo, hi = q[0], q[len(q)-1]
	}
	// The real extremes stay out where they may single out a few rows: unless the
	// quantiles show one shared by at least a twentieth of the sample.
	lowCommon, highCommon := commonExtremes(p)
	if col.SQLType == TypeInteger {
		a, b := int64(math.Ceil(lo)), int64(math.Floor(hi))
		if b-a > 20 {
			if !lowCommon {
				a++
			}
			if !highCommon {
				b--
			}
		}
		if b < a {
			b = a
		}
		if q != nil {
			return func() string {
				v := int64(math.Round(drawQuantile(q, rng)))
				return strconv.FormatInt(max(a, min(b, v)), 10)
			}
		}
		return func() string { return strconv.FormatInt(a+rng.Int64N(b-a+1), 10) }
	}
	unit := math.Pow10(-col.Scale)
	if hi-lo > 20*unit {
		if !lowCommon {
			lo += unit
		}
		if !highCommon {
			hi -= unit
		}
	}
	if q != nil {
		return func() string {
			v := max(lo, min(hi, drawQuantile(q, rng)))
			return strconv.FormatFloat(v, 'f', col.Scale, 64)
		}
	}
	return func() string {
		v := lo + rng.Float64()*(hi-lo)
		return strconv.FormatFloat(v, 'f', col.Scale, 64)
	}
}

// quantilesOf is the profile's equi-depth quantiles when it has a usable set (at least
// two cut points, ascending); nil otherwise.
func quantilesOf(p *catalog.ColumnProfile) []float64 {
	if p == nil || len(p.Quantiles) < 2 {
		return nil
	}
	for i := 1; i < len(p.Quantiles); i++ {
		if !(p.Quantiles[i] >= p.Quantiles[i-1]) || math.IsInf(p.Quantiles[i], 0) {
			return nil
		}
	}
	return p.Quantiles
}

// drawQuantile draws a value by the inverse of the distribution the quantiles describe:
// a bucket between two cut points (each holding the same share of the values), then a
// point inside it, uniformly.
func drawQuantile(q []float64, rng *rand.Rand) float64 {
	u := rng.Float64() * float64(len(q)-1)
	i := min(int(u), len(q)-2)
	return q[i] + (u-float64(i))*(q[i+1]-q[i])
}

// commonExtremes reports whether the profile's quantiles show the least (greatest)
// value shared by a whole bucket — at least a twentieth of the sample and at least
// KThreshold sampled rows —, so that generating it singles nobody out.
func commonExtremes(p *catalog.ColumnProfile) (low, high bool) {
	q := quantilesOf(p)
	if q == nil {
		return false, false
	}
	rows := p.SampleSize
	if p.Distinct != nil && p.Distinct.SampleSize > 0 {
		rows = p.Distinct.SampleSize
	}
	if float64(rows)/float64(len(q)-1) < KThreshold {
		return false, false
	}
	n := len(q)
	return q[1] == q[0], q[n-2] == q[n-1]
}

// exampleDomains are the domains RFC 2606 reserves for examples.
var exampleDomains = []string{"example.com", "example.net", "example.org"}

func textGenerator(col Column, rng *rand.Rand) func() string {
	switch col.Semantic {
	case "email":
		return func() string {
			return "u" + strconv.FormatUint(rng.Uint64()>>24, 36) + "@" + exampleDomains[rng.IntN(len(exampleDomains))]
		}
	case "nif_pt":
		return func() string { return demo.ValidNIF(rng) }
	case "iban":
		return func() string { return demo.ValidIBANPT(rng) }
	case "postal_code_pt":
		return func() string { return demo.PostalCodePT(rng) }
	case "phone_pt":
		return func() string { return demo.PTMobile(rng) }
	case "phone":
		if col.Region == "" || strings.EqualFold(col.Region, "PT") {
			return func() string { return demo.PTMobile(rng) }
		}
		return func() string { return phoneIn(col.Region, rng) }
	case "uuid":
		return func() string { return uuidFrom(rng) }
	case "date_as_text":
		iso := false
		if p := col.profile; p != nil && len(p.Masks) > 0 && strings.HasPrefix(p.Masks[0].Mask, "9999-") {
			iso = true
		}
		lo := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
		return func() string {
			d := lo.AddDate(0, 0, rng.IntN(3650))
			if iso {
				return d.Format("2006-01-02")
			}
			return d.Format("02/01/2006")
		}
	}
	masks := usableMasks(col.profile)
	if len(masks) > 0 {
		total := 0
		for _, m := range masks {
			total += m.Count
		}
		return func() string {
			k := rng.IntN(total)
			for _, m := range masks {
				if k < m.Count {
					return fromMask(m.Mask, rng)
				}
				k -= m.Count
			}
			return fromMask(masks[0].Mask, rng)
		}
	}
	minL, maxL := 4, 16
	if p := col.profile; p != nil && p.MinLength != nil && p.MaxLength != nil {
		minL, maxL = max(*p.MinLength, 1), max(*p.MaxLength, 1)
		if p.AvgLength != nil {
			// Most values sit around the average length, within the range.
			avg := int(math.Round(*p.AvgLength))
			minL, maxL = max(minL, avg-avg/4), min(maxL, max(avg+avg/4, minL))
		}
	}
	return func() string { return words(minL+rng.IntN(maxL-minL+1), rng) }
}

// usableMasks are the profile's masks that describe a whole value (not cut).
func usableMasks(p *catalog.ColumnProfile) []catalog.Mask {
	if p == nil {
		return nil
	}
	var out []catalog.Mask
	for _, m := range p.Masks {
		if m.Count > 0 && !strings.HasSuffix(m.Mask, "…") && m.Mask != "" {
			out = append(out, m)
		}
	}
	return out
}

const letters = "abcdefghijklmnopqrstuvwxyz"

// fromMask draws a value of a mask: every 9 a digit, every A a letter, every other
// character kept.
func fromMask(mask string, rng *rand.Rand) string {
	var b strings.Builder
	b.Grow(len(mask))
	first := true
	for _, r := range mask {
		switch r {
		case '9':
			b.WriteByte(byte('0' + rng.IntN(10)))
		case 'A':
			c := letters[rng.IntN(len(letters))]
			if first {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			first = false
			continue
		default:
			b.WriteRune(r)
		}
		first = r == ' '
	}
	return b.String()
}

// words writes n characters of lowercase pseudo-words.
func words(n int, rng *rand.Rand) string {
	b := make([]byte, n)
	for i := range b {
		if i > 0 && i < n-1 && b[i-1] != ' ' && rng.IntN(7) == 0 {
			b[i] = ' '
			continue
		}
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

func uuidFrom(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// phonePlans are national number shapes of a few regions' mobile plans: prefix and
// length of the national significant number.
var phonePlans = map[string]struct {
	cc, prefix string
	length     int
}{
	"ES": {"34", "6", 9}, "FR": {"33", "6", 9}, "GB": {"44", "7400", 10}, "DE": {"49", "151", 11},
	"BR": {"55", "119", 11}, "US": {"1", "2015550", 10}, "IT": {"39", "33", 10},
}

// phoneIn returns a phone number of region's plan in international form; a region
// without a known plan gets a Portuguese mobile number with its calling code.
func phoneIn(region string, rng *rand.Rand) string {
	plan, ok := phonePlans[strings.ToUpper(region)]
	if !ok {
		return "+351" + demo.PTMobile(rng)
	}
	var b strings.Builder
	b.WriteString("+" + plan.cc + plan.prefix)
	for i := len(plan.prefix); i < plan.length; i++ {
		b.WriteByte(byte('0' + rng.IntN(10)))
	}
	return b.String()
}
