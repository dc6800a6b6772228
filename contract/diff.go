package contract

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/rule"
)

// Kinds of a contract change.
const (
	ChangeAdded   = "added"
	ChangeRemoved = "removed"
	ChangeChanged = "changed"
)

// Bumps of a version.
const (
	BumpInitial = "initial"
	BumpMajor   = "major"
	BumpMinor   = "minor"
)

// Change is one difference between two contracts: a property (column) added, removed or
// changed in one field, or a quality check added, removed or changed; Breaking says
// whether it breaks what the contract promised.
type Change struct {
	Kind     string
	Property string // the column; "" for a table-level quality check
	Field    string // physicalType, logicalType, required, unique, primaryKey, classification, quality
	Before   any
	After    any
	Quality  string // the check's identity (rule type and columns) for quality changes
	Breaking bool
}

// Diff lists what changed from one contract to another, columns in the order of the
// newer contract (removed ones last, by name), then table-level quality checks.
// Breaking (a major version): a column removed, its type narrowed or changed to an
// incompatible one, a required flag added, a quality check added or tightened. The rest
// is compatible (minor): a column added, a type widened, a flag dropped, a check removed
// or loosened, a classification changed.
func Diff(from, to Document) []Change {
	out := []Change{}
	fromT, toT := from.Table(), to.Table()
	before := map[string]Property{}
	for _, p := range fromT.Properties {
		before[p.Name] = p
	}
	seen := map[string]bool{}
	for _, p := range toT.Properties {
		seen[p.Name] = true
		prev, ok := before[p.Name]
		if !ok {
			out = append(out, Change{Kind: ChangeAdded, Property: p.Name, After: p.PhysicalType})
			continue
		}
		if !sameType(prev.PhysicalType, p.PhysicalType) {
			out = append(out, Change{Kind: ChangeChanged, Property: p.Name, Field: "physicalType", Before: prev.PhysicalType,
				After: p.PhysicalType, Breaking: !Widens(prev.PhysicalType, p.PhysicalType)})
		} else if prev.LogicalType != p.LogicalType {
			out = append(out, Change{Kind: ChangeChanged, Property: p.Name, Field: "logicalType", Before: prev.LogicalType,
				After: p.LogicalType, Breaking: true})
		}
		flag := func(field string, a, b, breaksWhenAdded bool) {
			if a != b {
				out = append(out, Change{Kind: ChangeChanged, Property: p.Name, Field: field, Before: a, After: b, Breaking: b && breaksWhenAdded})
			}
		}
		flag("required", prev.Required, p.Required, true)
		flag("unique", prev.Unique, p.Unique, false)
		flag("primaryKey", prev.PrimaryKey, p.PrimaryKey, false)
		if prev.Classification != p.Classification {
			out = append(out, Change{Kind: ChangeChanged, Property: p.Name, Field: "classification", Before: prev.Classification, After: p.Classification})
		}
		out = append(out, diffQuality(p.Name, prev.Quality, p.Quality)...)
	}
	var removed []string
	for name := range before {
		if !seen[name] {
			removed = append(removed, name)
		}
	}
	sort.Strings(removed)
	for _, name := range removed {
		out = append(out, Change{Kind: ChangeRemoved, Property: name, Before: before[name].PhysicalType, Breaking: true})
	}
	out = append(out, diffQuality("", fromT.Quality, toT.Quality)...)
	return out
}

// BumpOf is the version bump a list of changes takes: major when one breaks.
func BumpOf(changes []Change) string {
	for _, c := range changes {
		if c.Breaking {
			return BumpMajor
		}
	}
	return BumpMinor
}

// ChangeSummary is a one-line change summary: counts of added, removed and changed columns
// and quality checks.
func ChangeSummary(changes []Change) string {
	if len(changes) == 0 {
		return "no changes"
	}
	var added, removed, changed, breaking int
	for _, c := range changes {
		switch c.Kind {
		case ChangeAdded:
			added++
		case ChangeRemoved:
			removed++
		default:
			changed++
		}
		if c.Breaking {
			breaking++
		}
	}
	return fmt.Sprintf("%d added, %d removed, %d changed (%d breaking)", added, removed, changed, breaking)
}

// qualityKey identifies a quality check: Vigia's rule type and columns, else its rule or name.
func qualityKey(q Quality) string {
	if impl, ok := q.VigiaRule(); ok {
		cols := []string{}
		if c, ok := impl.Params["column"].(string); ok {
			cols = append(cols, c)
		}
		if cs, ok := impl.Params["columns"].([]any); ok {
			for _, c := range cs {
				if s, ok := c.(string); ok {
					cols = append(cols, s)
				}
			}
		}
		return impl.RuleType + "(" + strings.Join(cols, ",") + ")"
	}
	if q.Rule != "" {
		return q.Rule
	}
	return q.Type + ":" + q.Name
}

func diffQuality(property string, from, to []Quality) []Change {
	var out []Change
	before := map[string]Quality{}
	for _, q := range from {
		before[qualityKey(q)] = q
	}
	seen := map[string]bool{}
	for _, q := range to {
		k := qualityKey(q)
		seen[k] = true
		prev, ok := before[k]
		if !ok {
			out = append(out, Change{Kind: ChangeAdded, Property: property, Field: "quality", Quality: k, Breaking: true})
			continue
		}
		if tighter, changed := compareQuality(prev, q); changed {
			out = append(out, Change{Kind: ChangeChanged, Property: property, Field: "quality", Quality: k, Breaking: tighter})
		}
	}
	var removed []string
	for k := range before {
		if !seen[k] {
			removed = append(removed, k)
		}
	}
	sort.Strings(removed)
	for _, k := range removed {
		out = append(out, Change{Kind: ChangeRemoved, Property: property, Field: "quality", Quality: k})
	}
	return out
}

// compareQuality says whether a check changed and whether the change tightens it: a
// lower allowance (max_failing, max_orphan_pct, max_age_hours), a higher min_rows,
// fewer accepted values, a narrower range, another pattern or query. Checks Vigia does
// not run compare as a whole; any change of one counts as tightening.
func compareQuality(a, b Quality) (tighter, changed bool) {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) == string(jb) {
		return false, false
	}
	ia, okA := a.VigiaRule()
	ib, okB := b.VigiaRule()
	if !okA || !okB {
		return true, true
	}
	pa, pb := ia.Params, ib.Params
	num := func(m map[string]any, k string) (float64, bool) {
		v, ok := m[k].(float64)
		return v, ok
	}
	lower := func(k string, def float64) bool {
		x, okA := num(pa, k)
		y, okB := num(pb, k)
		if !okA {
			x = def
		}
		if !okB {
			y = def
		}
		return y < x
	}
	switch {
	case lower("max_failing", 0), lower("max_orphan_pct", 0), lower("max_age_hours", 1e18):
		return true, true
	}
	if x, ok := num(pa, "min_rows"); ok {
		if y, ok := num(pb, "min_rows"); ok && y > x {
			return true, true
		}
	}
	if lo, ok := num(pb, "min"); ok {
		if was, ok := num(pa, "min"); !ok || lo > was {
			return true, true
		}
	}
	if hi, ok := num(pb, "max"); ok {
		if was, ok := num(pa, "max"); !ok || hi < was {
			return true, true
		}
	}
	if fmt.Sprint(pa["pattern"]) != fmt.Sprint(pb["pattern"]) || fmt.Sprint(pa["sql"]) != fmt.Sprint(pb["sql"]) {
		return true, true
	}
	if va, ok := pa["values"].([]any); ok {
		vb, _ := pb["values"].([]any)
		have := map[string]bool{}
		for _, v := range vb {
			have[fmt.Sprint(v)] = true
		}
		for _, v := range va {
			if !have[fmt.Sprint(v)] {
				return true, true
			}
		}
	}
	if ia.RuleType == rule.TypeReferential && fmt.Sprint(pa["ref_column"]) != fmt.Sprint(pb["ref_column"]) {
		return true, true
	}
	return false, true
}

// normType is a physical type in a comparable form: lower case, single spaces.
func normType(t string) string {
	return strings.Join(strings.Fields(strings.ToLower(t)), " ")
}

func sameType(a, b string) bool { return normType(a) == normType(b) }

var (
	lengthRE  = regexp.MustCompile(`^(character varying|varchar|character|char|nvarchar|nchar|varbinary|binary)\s*\((\d+)\)$`)
	numericRE = regexp.MustCompile(`^(numeric|decimal)\s*\((\d+)\s*(?:,\s*(\d+))?\)$`)
)

// integerRank orders the integer types by width; 0 for a type that is not one.
func integerRank(t string) int {
	t = normType(t)
	t = strings.TrimSuffix(t, " unsigned")
	if i := strings.Index(t, "("); i > 0 && !strings.HasPrefix(t, "tinyint(1)") {
		t = t[:i]
	}
	switch t {
	case "tinyint":
		return 1
	case "smallint", "int2":
		return 2
	case "mediumint":
		return 3
	case "integer", "int", "int4", "serial":
		return 4
	case "bigint", "int8", "bigserial":
		return 5
	}
	return 0
}

// Widens reports whether a column of type from keeps every value when its type becomes
// to: a wider integer, a longer or unbounded text, a numeric with at least as many
// integer and fractional digits, real to double precision. Any other change narrows
// or converts, and breaks the contract.
func Widens(from, to string) bool {
	a, b := normType(from), normType(to)
	if a == b {
		return true
	}
	if ra := integerRank(a); ra > 0 {
		if rb := integerRank(b); rb > 0 {
			return rb >= ra
		}
		return b == "numeric" || b == "decimal"
	}
	textual := func(t string) bool {
		return t == "text" || t == "character varying" || t == "varchar" || t == "longtext"
	}
	if m := lengthRE.FindStringSubmatch(a); m != nil {
		n, _ := strconv.Atoi(m[2])
		if textual(b) && !strings.Contains(m[1], "binary") {
			return true
		}
		if m2 := lengthRE.FindStringSubmatch(b); m2 != nil && isText(m[1]) == isText(m2[1]) {
			n2, _ := strconv.Atoi(m2[2])
			return n2 >= n
		}
		return false
	}
	if a == "character varying" || a == "varchar" {
		return b == "text" || b == "longtext"
	}
	if m := numericRE.FindStringSubmatch(a); m != nil {
		p, _ := strconv.Atoi(m[2])
		s, _ := strconv.Atoi(m[3])
		if b == "numeric" || b == "decimal" {
			return true
		}
		if m2 := numericRE.FindStringSubmatch(b); m2 != nil {
			p2, _ := strconv.Atoi(m2[2])
			s2, _ := strconv.Atoi(m2[3])
			return s2 >= s && p2-s2 >= p-s
		}
		return false
	}
	return (a == "real" || a == "float4" || a == "float") && (b == "double precision" || b == "float8" || b == "double")
}

func isText(base string) bool { return !strings.Contains(base, "binary") }

// Version is a contract version number MAJOR.MINOR.PATCH.
type Version struct{ Major, Minor, Patch int }

var versionRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$`)

// ParseVersion reads MAJOR.MINOR.PATCH; KindInvalid at loc otherwise.
func ParseVersion(s string, loc ...string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, vigia.Invalid(vigia.Field("value_error", map[string]any{"pattern": "MAJOR.MINOR.PATCH"}, loc...))
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	c, _ := strconv.Atoi(m[3])
	return Version{a, b, c}, nil
}

// String is MAJOR.MINOR.PATCH.
func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// IsZero reports whether no version was ever accepted.
func (v Version) IsZero() bool { return v == Version{} }

// Next is the version after v for a bump: the first accepted contract is 1.0.0.
func (v Version) Next(bump string) Version {
	switch {
	case v.IsZero():
		return Version{Major: 1}
	case bump == BumpMajor:
		return Version{Major: v.Major + 1}
	}
	return Version{Major: v.Major, Minor: v.Minor + 1}
}
