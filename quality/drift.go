package quality

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// ColumnShape is a column as the catalog declares it.
type ColumnShape struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Position int    `json:"position"` // 1-based ordinal in the table; 0 when unknown
}

// TypeChange is a column whose declared type changed.
type TypeChange struct {
	Column string `json:"column"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Widening is true when every old value still fits the new type (a longer varchar,
	// int to bigint, varchar to text): the change is still structural, but only a warning.
	Widening bool `json:"widening"`
}

// Rename reasons.
const (
	RenameByName     = "similar_name"  // same type and a similar name
	RenameByPosition = "same_position" // same type at the same ordinal
)

// RenameSuggestion pairs a dropped and an added column that are probably one column
// renamed.
type RenameSuggestion struct {
	From       string  `json:"from"`
	To         string  `json:"to"`
	Type       string  `json:"type"`
	Similarity float64 `json:"similarity"` // name similarity 0-1
	Reason     string  `json:"reason"`
}

// Drift is the difference between two column lists of a dataset.
type Drift struct {
	Added       []ColumnShape      `json:"added"`
	Dropped     []ColumnShape      `json:"dropped"`
	TypeChanged []TypeChange       `json:"type_changed"`
	Renames     []RenameSuggestion `json:"suggested_renames"`
	// Severity is critical when a column was dropped or changed to a type that does not
	// hold every old value, warning for added columns or widening changes only, empty
	// when nothing changed.
	Severity Severity `json:"severity,omitempty"`
	// Structural is true when a column was dropped or changed type: the schema_drift
	// issue then counts in consistencia only in the scan that detects it.
	Structural bool `json:"structural"`
}

// Changed reports whether the two column lists differ at all.
func (d Drift) Changed() bool {
	return len(d.Added)+len(d.Dropped)+len(d.TypeChanged) > 0
}

// RenameSimilarity is the name similarity from which a dropped and an added column of
// the same type are suggested as a rename. "cust_name" → "customer_name" (abbreviated
// token) and "created" → "created_at" pass; "first_name" → "last_name" does not.
const RenameSimilarity = 0.7

// DiffColumns compares the columns of the previous scan with this scan's. Columns are
// matched by exact name; types are compared after NormalizeType, so a catalog spelling
// "int4" for "integer" is no change. A dropped and an added column of the same type are
// suggested as a rename when they sit at the same ordinal, or when NameSimilarity
// reaches RenameSimilarity; each column takes part in at most one suggestion, best
// first. Suggested renames are still reported as dropped and added: a consumer reading
// the old name breaks either way. Results are ordered by position, then name.
func DiffColumns(prev, curr []ColumnShape) Drift {
	d := Drift{Added: []ColumnShape{}, Dropped: []ColumnShape{}, TypeChanged: []TypeChange{}, Renames: []RenameSuggestion{}}
	prevBy := make(map[string]ColumnShape, len(prev))
	for _, c := range prev {
		if _, dup := prevBy[c.Name]; !dup {
			prevBy[c.Name] = c
		}
	}
	currBy := make(map[string]ColumnShape, len(curr))
	for _, c := range curr {
		if _, dup := currBy[c.Name]; dup {
			continue
		}
		currBy[c.Name] = c
		p, ok := prevBy[c.Name]
		if !ok {
			d.Added = append(d.Added, c)
			continue
		}
		from, to := NormalizeType(p.Type), NormalizeType(c.Type)
		if from != to {
			d.TypeChanged = append(d.TypeChanged, TypeChange{Column: c.Name, From: p.Type, To: c.Type, Widening: isWidening(from, to)})
		}
	}
	for name, c := range prevBy {
		if _, ok := currBy[name]; !ok {
			d.Dropped = append(d.Dropped, c)
		}
	}
	sortShapes(d.Added)
	sortShapes(d.Dropped)
	sort.SliceStable(d.TypeChanged, func(i, j int) bool {
		a, b := currBy[d.TypeChanged[i].Column], currBy[d.TypeChanged[j].Column]
		return lessShape(a, b)
	})
	d.Renames = suggestRenames(d.Dropped, d.Added)

	critical := len(d.Dropped) > 0
	for _, tc := range d.TypeChanged {
		if !tc.Widening {
			critical = true
		}
	}
	d.Structural = len(d.Dropped) > 0 || len(d.TypeChanged) > 0
	switch {
	case critical:
		d.Severity = SeverityCritical
	case d.Changed():
		d.Severity = SeverityWarning
	}
	return d
}

func sortShapes(cs []ColumnShape) {
	sort.SliceStable(cs, func(i, j int) bool { return lessShape(cs[i], cs[j]) })
}

func lessShape(a, b ColumnShape) bool {
	if a.Position != b.Position {
		return a.Position < b.Position
	}
	return a.Name < b.Name
}

// renameSide is a column prepared once for the pairwise rename search.
type renameSide struct {
	shape  ColumnShape
	typ    string
	name   []rune
	tokens []string
}

func prepareSides(cs []ColumnShape) []renameSide {
	out := make([]renameSide, len(cs))
	for i, c := range cs {
		out[i] = renameSide{shape: c, typ: NormalizeType(c.Type), name: []rune(squash(c.Name)), tokens: tokens(c.Name)}
	}
	return out
}

func suggestRenames(dropped, added []ColumnShape) []RenameSuggestion {
	type cand struct {
		from, to ColumnShape
		sim      float64
		rank     float64
		reason   string
	}
	var cands []cand
	froms, tos := prepareSides(dropped), prepareSides(added)
	var buf levBuf
	for _, f := range froms {
		for _, t := range tos {
			if f.typ != t.typ {
				continue
			}
			sim := similarity(f.name, t.name, f.tokens, t.tokens, &buf)
			samePos := f.shape.Position > 0 && f.shape.Position == t.shape.Position
			switch {
			case samePos:
				// The same ordinal is the footprint of ALTER ... RENAME: it outranks
				// any name resemblance.
				cands = append(cands, cand{f.shape, t.shape, sim, 2 + sim, RenameByPosition})
			case sim >= RenameSimilarity:
				cands = append(cands, cand{f.shape, t.shape, sim, sim, RenameByName})
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.rank != b.rank {
			return a.rank > b.rank
		}
		if a.from.Name != b.from.Name {
			return a.from.Name < b.from.Name
		}
		return a.to.Name < b.to.Name
	})
	usedFrom, usedTo := map[string]bool{}, map[string]bool{}
	out := []RenameSuggestion{}
	for _, c := range cands {
		if usedFrom[c.from.Name] || usedTo[c.to.Name] {
			continue
		}
		usedFrom[c.from.Name], usedTo[c.to.Name] = true, true
		out = append(out, RenameSuggestion{From: c.from.Name, To: c.to.Name, Type: c.to.Type,
			Similarity: round2(c.sim), Reason: c.reason})
	}
	return out
}

// NameSimilarity scores how alike two column names are, 0-1: the better of
//
//   - 1 − Levenshtein distance / longer length, on the names lower-cased with
//     separators (_ - space .) removed, and
//   - the Dice coefficient of their tokens (split at separators, case changes and
//     digits), where two tokens match when equal or when one, at least 3 letters long,
//     begins the other (cust ~ customer).
func NameSimilarity(a, b string) float64 {
	var buf levBuf
	return similarity([]rune(squash(a)), []rune(squash(b)), tokens(a), tokens(b), &buf)
}

func similarity(na, nb []rune, ta, tb []string, buf *levBuf) float64 {
	if len(na) == 0 && len(nb) == 0 {
		return 1
	}
	lev := 1 - float64(buf.distance(na, nb))/float64(max(len(na), len(nb)))
	return max(lev, tokenDice(ta, tb))
}

func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == '_' || r == '-' || r == ' ' || r == '.' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tokens splits a name at separators, lower→upper case changes and letter/digit
// boundaries: "customerName2" → customer, name, 2.
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case len(cur) > 0 && unicode.IsUpper(r) && unicode.IsLower(prev),
			len(cur) > 0 && unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

func tokenDice(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	used := make([]bool, len(b))
	matched := 0
	for _, x := range a {
		for j, y := range b {
			if !used[j] && tokensMatch(x, y) {
				used[j] = true
				matched++
				break
			}
		}
	}
	return 2 * float64(matched) / float64(len(a)+len(b))
}

func tokensMatch(x, y string) bool {
	if x == y {
		return true
	}
	if len(x) > len(y) {
		x, y = y, x
	}
	return len(x) >= 3 && strings.HasPrefix(y, x)
}

// levBuf holds the two rows of a Levenshtein computation, reused across pairs.
type levBuf struct{ prev, cur []int }

func (l *levBuf) distance(a, b []rune) int {
	if cap(l.prev) < len(b)+1 {
		l.prev, l.cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	prev, cur := l.prev[:len(b)+1], l.cur[:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// typeAliases maps catalog spellings of one type to one name.
var typeAliases = map[string]string{
	"int": "integer", "int4": "integer", "integer": "integer", "mediumint": "mediumint",
	"int2": "smallint", "smallint": "smallint", "tinyint": "tinyint",
	"int8": "bigint", "bigint": "bigint",
	"float4": "real", "real": "real", "float": "double precision",
	"float8": "double precision", "double": "double precision", "double precision": "double precision",
	"bool": "boolean", "boolean": "boolean",
	"varchar": "varchar", "character varying": "varchar", "nvarchar": "varchar",
	"char": "char", "character": "char", "bpchar": "char", "nchar": "char",
	"decimal": "numeric", "numeric": "numeric",
	"timestamptz": "timestamptz", "timestamp with time zone": "timestamptz",
	"timestamp": "timestamp", "timestamp without time zone": "timestamp", "datetime": "timestamp",
	"timetz": "timetz", "time with time zone": "timetz",
	"time": "time", "time without time zone": "time",
	"string": "text",
}

// integer display widths (MySQL int(11)) say nothing about the values a column holds.
var integerTypes = map[string]int{"tinyint": 1, "smallint": 2, "mediumint": 3, "integer": 4, "bigint": 5}

// NormalizeType returns a canonical spelling of a declared column type: lower case,
// single spaces, aliases folded (int4 → integer, character varying → varchar,
// timestamp with time zone → timestamptz, decimal → numeric, ...), integer display
// widths dropped, and type parameters written "(a,b)".
func NormalizeType(t string) string {
	t = strings.Join(strings.Fields(strings.ToLower(t)), " ")
	base, params, rest := t, "", ""
	if i := strings.IndexByte(t, '('); i >= 0 {
		if j := strings.IndexByte(t[i:], ')'); j >= 0 {
			base = strings.TrimSpace(t[:i])
			params = strings.ReplaceAll(t[i+1:i+j], " ", "")
			rest = strings.TrimSpace(t[i+j+1:])
		}
	}
	if rest == "" {
		for _, suffix := range []string{" zerofill", " unsigned"} {
			if strings.HasSuffix(base, suffix) {
				base, rest = strings.TrimSuffix(base, suffix), strings.TrimSpace(suffix+" "+rest)
			}
		}
	}
	// "timestamp(3) with time zone": the zone words belong to the base.
	if rest != "" && (strings.HasPrefix(rest, "with") || strings.HasPrefix(rest, "without")) {
		base, rest = base+" "+rest, ""
	}
	if a, ok := typeAliases[base]; ok {
		base = a
	}
	if _, ok := integerTypes[base]; ok {
		params = ""
	}
	out := base
	if params != "" {
		out += "(" + params + ")"
	}
	if rest != "" {
		out += " " + rest
	}
	return out
}

// isWidening reports whether every value of type from fits type to (both normalized).
func isWidening(from, to string) bool {
	fb, fp, fr := splitType(from)
	tb, tp, tr := splitType(to)
	if fr != tr {
		return false
	}
	if fi, ok := integerTypes[fb]; ok {
		if ti, ok := integerTypes[tb]; ok {
			return ti > fi
		}
		return tb == "numeric" && len(tp) == 0
	}
	switch {
	case fb == "real" && tb == "double precision":
		return true
	case fb == "varchar" && tb == "text", fb == "char" && tb == "text":
		return true
	case fb == "char" && tb == "varchar":
		return len(tp) == 0 || len(fp) == 1 && tp[0] >= fp[0]
	case fb != tb:
		return false
	}
	if fb == "numeric" {
		// numeric(p,s): neither integer digits (p−s) nor decimals (s) may shrink;
		// numeric(p) is numeric(p,0) and a bare numeric is unbounded.
		fn, tn := numericBounds(fp), numericBounds(tp)
		switch {
		case tn == nil:
			return fn != nil
		case fn == nil:
			return false
		}
		return tn[1] >= fn[1] && tn[0]-tn[1] >= fn[0]-fn[1]
	}
	// A length or precision bound: dropping it or raising it widens.
	switch {
	case len(tp) == 0:
		return len(fp) > 0
	case len(fp) == 1 && len(tp) == 1:
		return tp[0] > fp[0]
	}
	return false
}

func numericBounds(p []int) []int {
	switch len(p) {
	case 1:
		return []int{p[0], 0}
	case 2:
		return p
	}
	return nil
}

func splitType(t string) (base string, params []int, rest string) {
	base = t
	i := strings.IndexByte(t, '(')
	if i < 0 {
		return base, nil, ""
	}
	j := strings.IndexByte(t, ')')
	if j < i {
		return base, nil, ""
	}
	base, rest = t[:i], strings.TrimSpace(t[j+1:])
	for _, p := range strings.Split(t[i+1:j], ",") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return t, nil, ""
		}
		params = append(params, n)
	}
	return base, params, rest
}
