package rulesql

import (
	"strings"
)

// CountSQL returns a statement, in dialect d, that counts the rows FailingRowsSQL would
// list, without a row limit: what a scan runs to evaluate the rule on the source. It
// covers the row-level types not_null, unique, accepted_values (whatever the length of
// the list), pattern, range and referential; for the others ok is false with
// ReasonUnsupportedRule (freshness, row_count_min and custom_sql are measured
// differently), and pattern where the dialect has no regular expressions gives
// ReasonPatternUnsupported. Errors are those of FailingRowsSQL.
func CountSQL(r Rule, d Dialect) (sql string, ok bool, reason string, err error) {
	if !d.valid() {
		return "", false, "", invalidRule("unknown dialect")
	}
	g := gen{d: d, limit: MaxLimit, r: r}
	var q query
	switch r.Type {
	case TypeNotNull:
		q, err = g.notNull()
	case TypeUnique:
		q, err = g.unique()
	case TypeAcceptedValues:
		q, err = g.acceptedValues()
	case TypePattern:
		if d == MSSQL {
			return "", false, ReasonPatternUnsupported, nil
		}
		q, err = g.pattern()
	case TypeRange:
		q, err = g.rangeRule()
	case TypeReferential:
		q, err = g.referential()
	default:
		return "", false, ReasonUnsupportedRule, nil
	}
	if err != nil {
		return "", false, "", err
	}
	var b strings.Builder
	b.WriteString("SELECT COUNT(*)\nFROM ")
	b.WriteString(q.from)
	for i, w := range q.where {
		if i == 0 {
			b.WriteString("\nWHERE ")
		} else {
			b.WriteString("\n  AND ")
		}
		b.WriteString(w)
	}
	return b.String(), true, "", nil
}

// TableRef returns the quoted, qualified name of t in dialect d.
func TableRef(d Dialect, t Table) string { return tableRef(d, t) }

// Reasons CheckCountQuery refuses a custom_sql text.
const (
	CheckUnreadable        = "unreadable"           // the text cannot be split into tokens with certainty
	CheckNotSelect         = "not_select"           // it is not a SELECT (or WITH ... SELECT)
	CheckSeveralStatements = "several_statements"   // more than one statement
	CheckWrites            = "writes"               // a keyword that writes, locks or changes session state
	CheckForbiddenFunction = "function_not_allowed" // a function that reads files or other databases
)

// keywordsNotReadOnly write or lock even inside a SELECT: SELECT ... INTO a table or a
// file, FOR UPDATE or LOCK IN SHARE MODE locks, SET changes the session. The statement
// must start with SELECT or WITH, so statement-level keywords need no entry here.
var keywordsNotReadOnly = map[string]bool{"INTO": true, "SET": true, "LOCK": true, "OUTFILE": true, "DUMPFILE": true}

// functionsNotAllowed read files of the database server or reach other databases; a
// rule's count has no business with them, whatever the connection's privileges.
var functionsNotAllowed = map[string]bool{"LOAD_FILE": true, "PG_READ_FILE": true, "PG_READ_BINARY_FILE": true,
	"PG_LS_DIR": true, "PG_STAT_FILE": true, "LO_IMPORT": true, "LO_EXPORT": true, "LO_GET": true, "DBLINK": true,
	"DBLINK_EXEC": true, "DBLINK_CONNECT": true, "PG_SLEEP": true, "PG_SLEEP_FOR": true, "PG_SLEEP_UNTIL": true,
	"SLEEP": true, "BENCHMARK": true, "READFILE": true, "WRITEFILE": true, "LOAD_EXTENSION": true, "EDIT": true,
	"PG_TERMINATE_BACKEND": true, "PG_CANCEL_BACKEND": true, "SET_CONFIG": true, "CURRENT_SETTING": true,
	"PG_ADVISORY_LOCK": true, "GET_LOCK": true, "SYS_EXEC": true, "SYS_EVAL": true,
	// DuckDB reads files and other databases through table functions, and runs SQL
	// given as text through query and query_table.
	"READ_CSV": true, "READ_CSV_AUTO": true, "READ_PARQUET": true, "PARQUET_SCAN": true, "READ_JSON": true,
	"READ_JSON_AUTO": true, "READ_NDJSON": true, "READ_NDJSON_AUTO": true, "READ_JSON_OBJECTS": true,
	"READ_NDJSON_OBJECTS": true, "READ_TEXT": true, "READ_BLOB": true, "GLOB": true, "SNIFF_CSV": true,
	"PARQUET_METADATA": true, "PARQUET_SCHEMA": true, "PARQUET_FILE_METADATA": true, "PARQUET_KV_METADATA": true,
	"READ_XLSX": true, "SQLITE_SCAN": true, "POSTGRES_SCAN": true, "MYSQL_SCAN": true, "ICEBERG_SCAN": true,
	"DELTA_SCAN": true, "GETENV": true, "QUERY": true, "QUERY_TABLE": true, "DUCKDB_SECRETS": true}

// CheckCountQuery reports whether sqlText, read in dialect d, is one read-only query: a
// single SELECT (a WITH clause may come first, a trailing semicolon is allowed) without
// a keyword that writes, locks or changes the session, and without a function that reads
// server files, other databases or sleeps. It is the gate for custom_sql rules, whose
// text Vigia runs on the source; the scan also runs it in a read-only transaction. When
// ok is false, reason is one of the Check constants. The lexer refuses what it cannot
// read with certainty, so the check errs on refusing. In DuckDB a string in a FROM list
// ('data.csv') reads a file, like read_csv: it is refused as a forbidden function.
func CheckCountQuery(d Dialect, sqlText string) (ok bool, reason string) {
	if !d.valid() {
		return false, CheckUnreadable
	}
	toks, good := lex(d, sqlText)
	if !good {
		return false, CheckUnreadable
	}
	if n := len(toks); n > 0 && toks[n-1].kind == tokPunct && toks[n-1].text == ";" {
		toks = toks[:n-1]
	}
	if len(toks) == 0 {
		return false, CheckNotSelect
	}
	if !isWord(toks[0], "SELECT") && !isWord(toks[0], "WITH") {
		return false, CheckNotSelect
	}
	depth, sawSelect := 0, false
	// inFrom[depth] is set while the tokens at that depth are a FROM list (DuckDB).
	inFrom := map[int]bool{}
	for i, t := range toks {
		switch t.kind {
		case tokQuoted:
			if d == DuckDB && inFrom[depth] && t.text[0] == '\'' && i > 0 &&
				(isWord(toks[i-1], "FROM") || isWord(toks[i-1], "JOIN") || toks[i-1].kind == tokPunct && toks[i-1].text == ",") {
				return false, CheckForbiddenFunction
			}
		case tokPunct:
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				inFrom[depth] = false
				depth--
				if depth < 0 {
					return false, CheckUnreadable
				}
			case ";":
				return false, CheckSeveralStatements
			}
		case tokWord:
			up := strings.ToUpper(t.text)
			if keywordsWriting[up] || keywordsNotReadOnly[up] {
				return false, CheckWrites
			}
			if up == "FOR" && i+1 < len(toks) && toks[i+1].kind == tokWord {
				switch strings.ToUpper(toks[i+1].text) {
				case "UPDATE", "SHARE", "NO", "KEY":
					return false, CheckWrites
				}
			}
			if functionsNotAllowed[up] && i+1 < len(toks) && toks[i+1].kind == tokPunct && toks[i+1].text == "(" {
				return false, CheckForbiddenFunction
			}
			if depth == 0 && up == "SELECT" {
				sawSelect = true
			}
			switch up {
			case "FROM":
				inFrom[depth] = true
			case "SELECT", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "QUALIFY", "WINDOW", "UNION", "EXCEPT", "INTERSECT":
				inFrom[depth] = false
			}
		}
	}
	if depth != 0 {
		return false, CheckUnreadable
	}
	if !sawSelect {
		return false, CheckNotSelect
	}
	return true, ""
}
