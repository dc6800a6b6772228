package rulesql

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia"
)

// The rule types FailingRowsSQL knows.
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

// The stable reasons FailingRowsSQL gives when a rule has no row-level query; the REST
// layer answers 204 with the reason in a header.
const (
	ReasonRowCountMin          = "row_count_min"                  // a dataset-wide count: no row fails on its own
	ReasonStreamRule           = "stream_rule"                    // evaluated on a stream: no table to query
	ReasonValueListTooLong     = "value_list_too_long"            // accepted_values over MaxValues values
	ReasonCustomSQLNotRowLevel = "custom_sql_not_row_level"       // the custom SQL is not a plain COUNT over rows
	ReasonUnsupportedRule      = "unsupported_rule"               // a rule type without a translation
	ReasonPatternUnsupported   = "pattern_unsupported_in_dialect" // the dialect has no regular expressions (SQL Server)
)

const (
	// MaxValues is the longest accepted_values list written out as a NOT IN list.
	MaxValues = 500
	// MaxLimit is the largest row limit; FailingRowsSQL clamps to 1..MaxLimit.
	MaxLimit = 1000
	// MaxAgeSeconds is the largest freshness age, the widest second offset every
	// dialect's date arithmetic takes (a 32-bit integer, about 68 years).
	MaxAgeSeconds = math.MaxInt32
)

// ErrInvalidRule is wrapped by the error FailingRowsSQL returns for a rule that lacks
// what its type needs (no column, no bounds, an empty list). Rules are validated when
// they are saved, so this is a fault of ours, not of the caller.
var ErrInvalidRule = errors.New("rulesql: invalid rule")

// Table names a table of a source.
type Table struct {
	// Catalog is the BigQuery project, Snowflake database or Databricks catalog; it is
	// written only for those dialects and only when Schema is set.
	Catalog string
	Schema  string
	Name    string
}

// Rule is the part of a data-quality rule a failing-rows query needs.
type Rule struct {
	Type    string // one of the Type constants
	Table   Table
	Columns []string // unique may have several; the other types use Columns[0]
	Values  []string // accepted_values
	Pattern string   // pattern: a regular expression that a valid value contains
	// Min and Max are the inclusive bounds of a range rule; either may be nil.
	Min, Max *float64
	// RefTable and RefColumn are the referenced key of a referential rule.
	RefTable  Table
	RefColumn string
	// MaxAgeSeconds is the freshness limit; Columns[0] is the timestamp column.
	MaxAgeSeconds int64
	// SQL is the custom_sql query: a SELECT returning the failing COUNT.
	SQL string
	// SQLDialect is the dialect SQL is written in, when known (the source's). The
	// text is never translated, so another dialect gets no query; empty means unknown,
	// and the text is then read in the dialect asked for.
	SQLDialect Dialect
	// Stream marks a rule evaluated on a stream of records rather than on a table; it
	// has no table to query.
	Stream bool
}

// FailingRowsSQL returns a query, in dialect d, that lists up to limit rows failing r.
// The query is for the user to run: Vigia never runs it, and it holds no source value,
// only names and the rule's own parameters. When no row-level query exists, ok is false
// and reason is one of the Reason constants. It returns a KindInvalid error if d is not
// a dialect, and an internal error wrapping ErrInvalidRule if r lacks what its type
// needs. limit is clamped to 1..MaxLimit.
func FailingRowsSQL(r Rule, d Dialect, limit int) (sql string, ok bool, reason string, err error) {
	if !d.valid() {
		return "", false, "", vigia.Invalid(vigia.FieldError{Type: "enum", Loc: []string{"dialect"}})
	}
	if r.Stream {
		return "", false, ReasonStreamRule, nil
	}
	g := gen{d: d, limit: min(max(limit, 1), MaxLimit), r: r}
	var q query
	switch r.Type {
	case TypeRowCountMin:
		return "", false, ReasonRowCountMin, nil
	case TypeAcceptedValues:
		if len(r.Values) > MaxValues {
			return "", false, ReasonValueListTooLong, nil
		}
		q, err = g.acceptedValues()
	case TypePattern:
		if d == MSSQL {
			return "", false, ReasonPatternUnsupported, nil
		}
		q, err = g.pattern()
	case TypeNotNull:
		q, err = g.notNull()
	case TypeUnique:
		q, err = g.unique()
	case TypeRange:
		q, err = g.rangeRule()
	case TypeReferential:
		q, err = g.referential()
	case TypeFreshness:
		q, err = g.freshness()
	case TypeCustomSQL:
		if r.Table.Name == "" || strings.TrimSpace(r.SQL) == "" {
			return "", false, "", invalidRule("custom_sql needs a table and a query")
		}
		if r.SQLDialect != "" && r.SQLDialect != d {
			return "", false, ReasonCustomSQLNotRowLevel, nil
		}
		body, rowLevel := rewriteCount(d, r.SQL, g.limit)
		if !rowLevel {
			return "", false, ReasonCustomSQLNotRowLevel, nil
		}
		return g.header() + body, true, "", nil
	default:
		return "", false, ReasonUnsupportedRule, nil
	}
	if err != nil {
		return "", false, "", err
	}
	return g.header() + g.render(q), true, "", nil
}

func invalidRule(why string) error {
	return &vigia.Error{
		Kind: vigia.KindInternal, Code: vigia.CodeInternal, Key: "error.internal",
		Err: fmt.Errorf("%w: %s", ErrInvalidRule, why),
	}
}

// gen writes the query of one rule in one dialect.
type gen struct {
	d     Dialect
	limit int
	r     Rule
}

// query is a SELECT before rendering: the row limit and the dialect's way of writing
// it are added by render.
type query struct {
	sel   string   // select list
	from  string   // FROM clause body, possibly several lines
	where []string // conditions joined by AND
	order string   // ORDER BY list, or empty
}

func (g gen) header() string {
	return "-- Vigia failing rows: rule " + g.r.Type + " on " + commentSafe(tableRef(g.d, g.r.Table)) +
		" (dialect " + string(g.d) + ")\n"
}

func (g gen) render(q query) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	if g.d == MSSQL {
		b.WriteString("TOP (" + strconv.Itoa(g.limit) + ") ")
	}
	b.WriteString(q.sel)
	b.WriteString("\nFROM ")
	b.WriteString(q.from)
	for i, w := range q.where {
		if i == 0 {
			b.WriteString("\nWHERE ")
		} else {
			b.WriteString("\n  AND ")
		}
		b.WriteString(w)
	}
	if q.order != "" {
		b.WriteString("\nORDER BY ")
		b.WriteString(q.order)
	}
	if g.d != MSSQL {
		b.WriteString("\nLIMIT " + strconv.Itoa(g.limit))
	}
	b.WriteString(";\n")
	return b.String()
}

func (g gen) ident(name string) string { return QuoteIdent(g.d, name) }

// table returns the rule's quoted table, or an error when it has no name.
func (g gen) table() (string, error) {
	if g.r.Table.Name == "" {
		return "", invalidRule(g.r.Type + " needs a table")
	}
	return tableRef(g.d, g.r.Table), nil
}

// column returns the rule's table and its first column, quoted.
func (g gen) column() (table, col string, err error) {
	table, err = g.table()
	if err != nil {
		return "", "", err
	}
	if len(g.r.Columns) == 0 || g.r.Columns[0] == "" {
		return "", "", invalidRule(g.r.Type + " needs a column")
	}
	return table, g.ident(g.r.Columns[0]), nil
}

func (g gen) notNull() (query, error) {
	t, c, err := g.column()
	if err != nil {
		return query{}, err
	}
	return query{sel: "*", from: t, where: []string{c + " IS NULL"}}, nil
}

// unique lists every row whose key occurs more than once, duplicates next to each
// other. A key with a NULL part is never a duplicate, as with a UNIQUE constraint; the
// join on equality drops such rows, the subquery's filter only saves work. A join is
// used rather than COUNT(*) OVER because it adds no column that could clash with the
// table's own, and BigQuery cannot partition a window by a FLOAT64 key.
func (g gen) unique() (query, error) {
	t, err := g.table()
	if err != nil {
		return query{}, err
	}
	var keys []string
	seen := map[string]bool{}
	for _, c := range g.r.Columns {
		if c == "" {
			return query{}, invalidRule("unique has an empty column name")
		}
		if !seen[c] {
			seen[c] = true
			keys = append(keys, g.ident(c))
		}
	}
	if len(keys) == 0 {
		return query{}, invalidRule("unique needs a column")
	}
	notNull := make([]string, len(keys))
	on := make([]string, len(keys))
	order := make([]string, len(keys))
	for i, k := range keys {
		notNull[i] = k + " IS NOT NULL"
		on[i] = "dup." + k + " = t." + k
		order[i] = "t." + k
	}
	list := strings.Join(keys, ", ")
	from := t + " AS t\nJOIN (\n" +
		"  SELECT " + list + "\n" +
		"  FROM " + t + "\n" +
		"  WHERE " + strings.Join(notNull, " AND ") + "\n" +
		"  GROUP BY " + list + "\n" +
		"  HAVING COUNT(*) > 1\n" +
		") AS dup\n  ON " + strings.Join(on, " AND ")
	return query{sel: "t.*", from: from, order: strings.Join(order, ", ")}, nil
}

// acceptedValues compares the column with the list as the engine compares them (the
// column's collation, implicit casts); NULL is not a value and never fails.
func (g gen) acceptedValues() (query, error) {
	t, c, err := g.column()
	if err != nil {
		return query{}, err
	}
	if len(g.r.Values) == 0 {
		return query{}, invalidRule("accepted_values needs values")
	}
	lits := make([]string, len(g.r.Values))
	for i, v := range g.r.Values {
		lits[i] = QuoteString(g.d, v)
	}
	return query{sel: "*", from: t, where: []string{
		c + " IS NOT NULL",
		c + " NOT IN (" + strings.Join(lits, ", ") + ")",
	}}, nil
}

// pattern lists values that contain no match of the pattern (search, not full match:
// anchor the pattern with ^ and $ to test the whole value), case-sensitively in every
// dialect. Each engine reads the pattern in its own regular-expression flavour.
func (g gen) pattern() (query, error) {
	t, c, err := g.column()
	if err != nil {
		return query{}, err
	}
	if g.r.Pattern == "" {
		return query{}, invalidRule("pattern needs a pattern")
	}
	p := QuoteString(g.d, g.r.Pattern)
	var cond string
	switch g.d {
	case Postgres:
		// !~ takes text only; the cast lets a pattern test a number or a date too.
		cond = "CAST(" + c + " AS text) !~ " + p
	case MySQL:
		// REGEXP follows the column's collation, which is usually case-insensitive
		// (MySQL and MariaDB alike); the inline flag makes it case-sensitive as in the
		// other dialects, and both ICU and PCRE read it.
		cond = c + " NOT REGEXP " + QuoteString(g.d, "(?-i)"+g.r.Pattern)
	case BigQuery:
		cond = "NOT REGEXP_CONTAINS(CAST(" + c + " AS STRING), " + p + ")"
	case Snowflake:
		// REGEXP_LIKE anchors the pattern at both ends; REGEXP_INSTR searches, like
		// the other dialects.
		cond = "REGEXP_INSTR(" + c + ", " + p + ") = 0"
	case Databricks:
		cond = "NOT (" + c + " RLIKE " + p + ")"
	case SQLite:
		// REGEXP calls the function regexp(pattern, value), which SQLite leaves to the
		// application: Vigia's connections register one (Go regular expressions, see
		// source/connect), and the sqlite3 shell has its own.
		cond = c + " NOT REGEXP " + p
	case DuckDB:
		// DuckDB's !~ is a full match (regexp_full_match); regexp_matches searches, as
		// in the other dialects, with RE2 and case-sensitively. The cast lets a pattern
		// test a number or a date too.
		cond = "NOT regexp_matches(CAST(" + c + " AS VARCHAR), " + p + ")"
	}
	return query{sel: "*", from: t, where: []string{c + " IS NOT NULL", cond}}, nil
}

// rangeRule lists values outside the inclusive bounds.
func (g gen) rangeRule() (query, error) {
	t, c, err := g.column()
	if err != nil {
		return query{}, err
	}
	lo, hi := g.r.Min, g.r.Max
	if lo == nil && hi == nil {
		return query{}, invalidRule("range needs a bound")
	}
	if lo != nil && !finite(*lo) || hi != nil && !finite(*hi) {
		return query{}, invalidRule("range bounds must be finite")
	}
	if lo != nil && hi != nil && *lo > *hi {
		return query{}, invalidRule("range min is above max")
	}
	var out []string
	if lo != nil {
		out = append(out, c+" < "+number(*lo))
	}
	if hi != nil {
		out = append(out, c+" > "+number(*hi))
	}
	cond := out[0]
	if len(out) == 2 {
		cond = "(" + out[0] + " OR " + out[1] + ")"
	}
	return query{sel: "*", from: t, where: []string{c + " IS NOT NULL", cond}}, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// number writes f as a numeric literal every dialect reads: plain decimals in the usual
// range, exponent notation only for very large or very small magnitudes.
func number(f float64) string {
	if a := math.Abs(f); a != 0 && (a >= 1e21 || a < 1e-6) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// referential lists rows whose non-NULL value has no match in the referenced column.
// The rule's own rows come out once each even when the reference has duplicates,
// since only unmatched rows are kept.
func (g gen) referential() (query, error) {
	t, c, err := g.column()
	if err != nil {
		return query{}, err
	}
	if g.r.RefTable.Name == "" || g.r.RefColumn == "" {
		return query{}, invalidRule("referential needs a reference table and column")
	}
	rc := g.ident(g.r.RefColumn)
	from := t + " AS t\nLEFT JOIN " + tableRef(g.d, g.r.RefTable) + " AS ref\n  ON ref." + rc + " = t." + c
	return query{sel: "t.*", from: from, where: []string{"t." + c + " IS NOT NULL", "ref." + rc + " IS NULL"}}, nil
}

// freshness lists rows whose timestamp is older than now minus the allowed age.
func (g gen) freshness() (query, error) {
	t, c, err := g.column()
	if err != nil {
		return query{}, err
	}
	n := g.r.MaxAgeSeconds
	if n <= 0 || n > MaxAgeSeconds {
		return query{}, invalidRule("freshness age out of range")
	}
	s := strconv.FormatInt(n, 10)
	var cond string
	switch g.d {
	case Postgres, DuckDB:
		// DuckDB reads the same: now() is the transaction's TIMESTAMP WITH TIME ZONE.
		cond = c + " < now() - interval '" + s + " seconds'"
	case MySQL:
		cond = c + " < NOW() - INTERVAL " + s + " SECOND"
	case MSSQL:
		// UTC, so that datetimeoffset columns compare right; datetime2 is read as UTC.
		cond = c + " < DATEADD(second, -" + s + ", SYSUTCDATETIME())"
	case BigQuery:
		cond = c + " < TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL " + s + " SECOND)"
	case Snowflake:
		cond = c + " < DATEADD(second, -" + s + ", CURRENT_TIMESTAMP())"
	case Databricks:
		cond = c + " < current_timestamp() - INTERVAL " + s + " SECONDS"
	case SQLite:
		// SQLite keeps times as text; datetime() brings ISO 8601 variants (T separator,
		// zone suffix, fractions) to one UTC form so that they compare as times.
		cond = "datetime(" + c + ") < datetime('now', '-" + s + " seconds')"
	}
	return query{sel: "*", from: t, where: []string{cond}}, nil
}
