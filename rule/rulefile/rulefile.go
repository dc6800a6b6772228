// Package rulefile reads and writes data-quality rules as the files other tools keep
// them in — dbt property files with generic tests, SodaCL checks files and Great
// Expectations suites — so rules can live in a team's repository and CI. It is pure:
// rules are named by table and column, nothing here knows a database or a workspace.
// The rule service resolves names to datasets and decides what is created.
//
// Every format expresses some rules and not others; what a format cannot say is
// listed (Output.Unsupported) and named in the file's header, never dropped silently.
// A referential rule whose reference table the reader cannot see comes without that
// table (Rule.Ref nil) and is exported as unsupported (reference_not_visible), so no
// export ever names it.
package rulefile

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Formats.
const (
	FormatDBT    = "dbt"
	FormatSodaCL = "sodacl"
	FormatGX     = "gx"
)

// Formats lists the formats.
func Formats() []string { return []string{FormatDBT, FormatSodaCL, FormatGX} }

// Rule types, as the rule package names them.
const (
	TypeNotNull        = "not_null"
	TypeUnique         = "unique"
	TypeAcceptedValues = "accepted_values"
	TypePattern        = "pattern"
	TypeRange          = "range"
	TypeReferential    = "referential"
	TypeFreshness      = "freshness"
	TypeRowCountMin    = "row_count_min"
	TypeCustomSQL      = "custom_sql"
)

// Severities as the rule package names them.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// Reasons a rule is not exported (stable codes, in X-Rules-Unsupported-Types' sense
// the types are rule types; these say why).
const (
	// UnsupportedNoEquivalent: the format has no check of this kind.
	UnsupportedNoEquivalent = "no_equivalent"
	// UnsupportedThresholdCount: the format cannot allow a number of failing rows.
	UnsupportedThresholdCount = "threshold_count"
	// UnsupportedThresholdPercent: the format cannot allow a percentage of orphans.
	UnsupportedThresholdPercent = "threshold_percent"
	// UnsupportedReferenceNotVisible: the reference dataset is invisible to the reader.
	UnsupportedReferenceNotVisible = "reference_not_visible"
)

// Table names a dataset: schema and table.
type Table struct {
	Schema string
	Name   string
}

// String is schema.table (the table alone without a schema).
func (t Table) String() string {
	if t.Schema == "" {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// Rule is one rule as a file carries it. Params follow the rule package's: which are
// set depends on Type.
type Rule struct {
	// ID is the rule's id on export (named in the header when unsupported).
	ID       string
	Table    Table
	Type     string
	Name     string
	Severity string // empty when the file does not say
	Column   string
	Columns  []string
	Values   []string
	Pattern  string
	Min, Max *float64
	// Ref is a referential rule's reference table; nil on export when the reader cannot
	// see it.
	Ref          *Table
	RefColumn    string
	MaxOrphanPct *float64
	MaxAgeHours  *float64
	MinRows      *int64
	SQL          string
	MaxFailing   *int64
}

// failing is the rule's allowance of failing rows (0 when unset).
func (r Rule) failing() int64 {
	if r.MaxFailing == nil {
		return 0
	}
	return *r.MaxFailing
}

// keyColumns are the columns the rule reads on its own table.
func (r Rule) keyColumns() []string {
	if len(r.Columns) > 0 {
		return r.Columns
	}
	if r.Column != "" {
		return []string{r.Column}
	}
	return nil
}

// Unsupported is a rule a format cannot express, and why.
type Unsupported struct {
	RuleID string
	Type   string
	Table  Table
	Reason string
}

// Output is an encoded file.
type Output struct {
	Format      string
	Body        []byte
	Exported    int
	Unsupported []Unsupported
}

// UnsupportedTypes are the distinct rule types left out, sorted.
func (o Output) UnsupportedTypes() []string {
	var out []string
	for _, u := range o.Unsupported {
		if !slices.Contains(out, u.Type) {
			out = append(out, u.Type)
		}
	}
	slices.Sort(out)
	return out
}

// ContentType is the media type of a format's file.
func ContentType(format string) string {
	if format == FormatGX {
		return "application/json"
	}
	return "application/yaml"
}

// Encode writes the rules of the tables in format. Tables without rules are written
// too where the format has a place for them. GX takes exactly one table (a suite is
// one data asset's); it returns ok false for an unknown format or a GX export of
// several tables.
func Encode(format string, tables []Table, rules []Rule) (Output, bool) {
	switch format {
	case FormatDBT:
		return encodeDBT(tables, rules), true
	case FormatSodaCL:
		return encodeSodaCL(tables, rules), true
	case FormatGX:
		if len(tables) != 1 {
			return Output{}, false
		}
		return encodeGX(tables[0], rules), true
	}
	return Output{}, false
}

// byTable groups rules by table, in the order of tables.
func byTable(tables []Table, rules []Rule) [][]Rule {
	out := make([][]Rule, len(tables))
	for _, r := range rules {
		for i, t := range tables {
			if t == r.Table {
				out[i] = append(out[i], r)
				break
			}
		}
	}
	return out
}

// header writes the comment lines at the top of a YAML export.
func header(b *bytes.Buffer, format string, exported int, unsupported []Unsupported) {
	b.WriteString("# Vigia rules export (" + format + "): " + strconv.Itoa(exported) + " exported, " +
		strconv.Itoa(len(unsupported)) + " unsupported\n")
	for _, u := range unsupported {
		b.WriteString("# unsupported: rule " + commentSafe(u.RuleID) + " (" + commentSafe(u.Type) + ") on " +
			commentSafe(u.Table.String()) + ": " + u.Reason + "\n")
	}
}

// commentSafe keeps a name on its comment line.
func commentSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s)
}

// yamlText renders a string as a YAML scalar: plain when that reads back as the same
// string, else double-quoted (JSON's escapes are YAML's).
func yamlText(s string) string {
	if plainSafe(s) {
		return s
	}
	return jsonText(s)
}

func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// plainSafe is a conservative test for a plain YAML scalar: letters, digits and a few
// punctuation marks, not starting with an indicator, and not a word YAML reads as
// another type.
func plainSafe(s string) bool {
	if s == "" || s != strings.TrimSpace(s) {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r == '.' || r == '-' || r == '(' || r == ')' || r == ' ' || r == '=' || r == '<' || r == '>' ||
			r == ',' || r == '/' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !ok {
			return false
		}
		if i == 0 && (r == '-' || r == '.' || r == '<' || r == '>' || r == '=' || r == ',' || r == '(' || r == ')' || r >= '0' && r <= '9') {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
		return false
	}
	return true
}

// formatNumber writes a float the shortest way that reads back the same.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// minutes is an age in hours as whole minutes and whether it is exact.
func minutes(hours float64) (int64, bool) {
	m := hours * 60
	r := math.Round(m)
	return int64(r), math.Abs(m-r) < 1e-9
}

// ageText writes an age in hours as minutes (SodaCL's and dbt's unit here), or seconds
// when minutes are not whole.
func ageText(hours float64) (int64, string) {
	if m, exact := minutes(hours); exact {
		return m, "m"
	}
	return int64(math.Max(1, math.Round(hours*3600))), "s"
}
