package rulesql

import (
	"fmt"
	"strings"
	"unicode"
)

// Dialect is the SQL dialect a failing-rows query is written for.
type Dialect string

// The dialects of the failing-rows operation, in the contract's order.
const (
	Postgres   Dialect = "postgres"
	MySQL      Dialect = "mysql"
	MSSQL      Dialect = "mssql"
	BigQuery   Dialect = "bigquery"
	Snowflake  Dialect = "snowflake"
	Databricks Dialect = "databricks"
	SQLite     Dialect = "sqlite"
	// DuckDB is DuckDB's SQL: the Postgres-like grammar (double-quoted names, standard
	// string literals, $$ strings, nested comments) with its own functions.
	DuckDB Dialect = "duckdb"
)

// Dialects returns every supported dialect, in the contract's order.
func Dialects() []Dialect {
	return []Dialect{Postgres, MySQL, MSSQL, BigQuery, Snowflake, Databricks, SQLite, DuckDB}
}

// ParseDialect returns the dialect named exactly s (the contract's lowercase names).
func ParseDialect(s string) (Dialect, bool) {
	for _, d := range Dialects() {
		if string(d) == s {
			return d, true
		}
	}
	return "", false
}

func (d Dialect) valid() bool {
	_, ok := ParseDialect(string(d))
	return ok
}

// QuoteIdent quotes one identifier (a column, table, schema or catalog name) for d, so
// that any name, however odd, is read back as exactly that name. An unknown dialect
// gets the SQL standard's double quotes.
func QuoteIdent(d Dialect, name string) string {
	switch d {
	case MySQL, Databricks:
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	case BigQuery:
		// GoogleSQL quoted identifiers take the escape sequences of string literals;
		// a doubled backtick would end the identifier.
		return "`" + googleEscape(name, '`') + "`"
	case MSSQL:
		return "[" + strings.ReplaceAll(name, "]", "]]") + "]"
	default:
		return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
	}
}

// QuoteString quotes s as a string literal of d. MySQL, Snowflake, BigQuery and
// Databricks read backslash escapes inside literals, so backslashes are doubled there;
// a regular expression like \d therefore reaches the engine unchanged. MSSQL literals
// carry the N prefix so that characters outside the database code page survive. An
// unknown dialect gets the SQL standard's doubled quotes.
func QuoteString(d Dialect, s string) string {
	switch d {
	case MySQL, Snowflake:
		// The doubled quote is read the same with or without backslash escapes, so a
		// server in NO_BACKSLASH_ESCAPES mode still cannot be broken out of the literal.
		return backslashQuote(s, "''")
	case BigQuery:
		return "'" + googleEscape(s, '\'') + "'"
	case Databricks:
		return backslashQuote(s, `\'`)
	case MSSQL:
		return "N'" + strings.ReplaceAll(s, "'", "''") + "'"
	default:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
}

// backslashQuote quotes s for a dialect whose literals read backslash escapes: the
// backslash and NUL are escaped, and a single quote becomes quote.
func backslashQuote(s, quote string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(quote)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// googleEscape escapes s for a GoogleSQL (BigQuery) quoted string or identifier closed
// by quote. Quoted literals there may not hold a raw newline, so control characters
// become escapes too.
func googleEscape(s string, quote rune) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == quote:
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// tableRef is the quoted, qualified name of t. The catalog (BigQuery project, Snowflake
// database, Databricks Unity catalog) is only written where the dialect has one and a
// schema is set, since catalog.table is not a valid path anywhere.
func tableRef(d Dialect, t Table) string {
	parts := make([]string, 0, 3)
	if t.Catalog != "" && t.Schema != "" && (d == BigQuery || d == Snowflake || d == Databricks) {
		parts = append(parts, QuoteIdent(d, t.Catalog))
	}
	if t.Schema != "" {
		parts = append(parts, QuoteIdent(d, t.Schema))
	}
	parts = append(parts, QuoteIdent(d, t.Name))
	return strings.Join(parts, ".")
}

// commentSafe makes s safe to put in a line comment: every line terminator any of the
// dialects knows (and every other control character) becomes a space, so a name cannot
// end the comment and smuggle SQL onto the next line.
func commentSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
