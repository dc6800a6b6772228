package rulesql_test

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser"

	"github.com/vigia-data/vigia/rulesql"
)

func TestCountSQLParsesAndHasNoLimit(t *testing.T) {
	p := parser.New()
	for _, nr := range append(goldenRules(), oddRules("vigia_db", mysqlCustomSQL("vigia_db"))...) {
		for _, d := range []rulesql.Dialect{rulesql.Postgres, rulesql.MySQL} {
			q, ok, reason, err := rulesql.CountSQL(nr.rule, d)
			if err != nil {
				t.Fatalf("%s %s: %v", nr.name, d, err)
			}
			switch nr.rule.Type {
			case rulesql.TypeFreshness, rulesql.TypeRowCountMin, rulesql.TypeCustomSQL:
				if ok || reason != rulesql.ReasonUnsupportedRule {
					t.Errorf("%s %s: ok %v reason %q", nr.name, d, ok, reason)
				}
				continue
			}
			if !ok || !strings.HasPrefix(q, "SELECT COUNT(*)\nFROM ") || strings.Contains(q, "LIMIT") {
				t.Errorf("%s %s: %q", nr.name, d, q)
				continue
			}
			if d == rulesql.Postgres {
				if _, err := pg_query.Parse(q); err != nil {
					t.Errorf("%s: postgres parse: %v\n%s", nr.name, err, q)
				}
			} else if _, err := p.ParseOneStmt(q, "", ""); err != nil {
				t.Errorf("%s: mysql parse: %v\n%s", nr.name, err, q)
			}
		}
	}
}

func TestCountSQLCountsLongValueLists(t *testing.T) {
	vals := make([]string, rulesql.MaxValues+1)
	for i := range vals {
		vals[i] = itoa(i)
	}
	r := rulesql.Rule{Type: rulesql.TypeAcceptedValues, Table: rulesql.Table{Name: "t"}, Columns: []string{"c"}, Values: vals}
	if _, ok, reason, _ := rulesql.FailingRowsSQL(r, rulesql.Postgres, 10); ok || reason != rulesql.ReasonValueListTooLong {
		t.Fatalf("failing rows: ok %v %s", ok, reason)
	}
	if q, ok, _, err := rulesql.CountSQL(r, rulesql.Postgres); err != nil || !ok || !strings.Contains(q, "'500'") {
		t.Fatalf("count: %v %v", ok, err)
	}
}

func TestCountSQLHasNoPatternWithoutRegex(t *testing.T) {
	r := rulesql.Rule{Type: rulesql.TypePattern, Table: rulesql.Table{Name: "t"}, Columns: []string{"c"}, Pattern: "^a"}
	if _, ok, reason, err := rulesql.CountSQL(r, rulesql.MSSQL); err != nil || ok || reason != rulesql.ReasonPatternUnsupported {
		t.Fatalf("ok %v reason %q err %v", ok, reason, err)
	}
}

func TestCheckCountQuery(t *testing.T) {
	cases := []struct {
		name   string
		d      rulesql.Dialect
		sql    string
		reason string // "" = accepted
	}{
		{"PlainCount", rulesql.Postgres, "SELECT COUNT(*) FROM t WHERE x < 0", ""},
		{"TrailingSemicolon", rulesql.MySQL, "select count(*) from t where x < 0;", ""},
		{"WithClause", rulesql.Postgres, "WITH a AS (SELECT id FROM t) SELECT COUNT(*) FROM a", ""},
		{"GroupedIsStillReadOnly", rulesql.SQLite, "SELECT COUNT(*) FROM (SELECT k FROM t GROUP BY k HAVING COUNT(*) > 1)", ""},
		{"KeywordInAStringIsFine", rulesql.Postgres, "SELECT COUNT(*) FROM t WHERE note = 'delete me; now'", ""},
		{"QuotedColumnNamedUpdate", rulesql.Postgres, `SELECT COUNT(*) FROM t WHERE "update" IS NULL`, ""},
		{"Empty", rulesql.Postgres, "  ", rulesql.CheckNotSelect},
		{"Delete", rulesql.Postgres, "DELETE FROM t", rulesql.CheckNotSelect},
		{"TwoStatements", rulesql.MySQL, "SELECT 1; SELECT 2", rulesql.CheckSeveralStatements},
		{"DataModifyingCTE", rulesql.Postgres, "WITH d AS (DELETE FROM t RETURNING 1) SELECT COUNT(*) FROM d", rulesql.CheckWrites},
		{"SelectInto", rulesql.Postgres, "SELECT COUNT(*) INTO copy FROM t", rulesql.CheckWrites},
		{"IntoOutfile", rulesql.MySQL, "SELECT COUNT(*) FROM t INTO OUTFILE '/tmp/x'", rulesql.CheckWrites},
		{"ForUpdate", rulesql.Postgres, "SELECT COUNT(*) FROM (SELECT * FROM t FOR UPDATE) s", rulesql.CheckWrites},
		{"ReadsServerFiles", rulesql.Postgres, "SELECT COUNT(*) FROM t WHERE pg_read_file('/etc/passwd') <> ''", rulesql.CheckForbiddenFunction},
		{"LoadFile", rulesql.MySQL, "SELECT COUNT(*) FROM t WHERE LOAD_FILE('/etc/passwd') IS NOT NULL", rulesql.CheckForbiddenFunction},
		{"Sleeps", rulesql.MySQL, "SELECT COUNT(*) FROM t WHERE SLEEP(100) = 0", rulesql.CheckForbiddenFunction},
		{"UnterminatedQuote", rulesql.Postgres, "SELECT COUNT(*) FROM t WHERE x = 'open", rulesql.CheckUnreadable},
		{"ExecutableComment", rulesql.MySQL, "SELECT COUNT(*) FROM t /*!50000 UNION SELECT 1 */", rulesql.CheckUnreadable},
		{"UnbalancedParens", rulesql.Postgres, "SELECT COUNT(*) FROM (SELECT 1", rulesql.CheckUnreadable},
		{"CommentHidesNothing", rulesql.Postgres, "SELECT COUNT(*) FROM t -- ; DROP TABLE t", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, reason := rulesql.CheckCountQuery(c.d, c.sql)
			if ok != (c.reason == "") || reason != c.reason {
				t.Fatalf("got ok %v reason %q; want %q", ok, reason, c.reason)
			}
		})
	}
}

func TestCheckCountQueryRefusesDuckDBFileReads(t *testing.T) {
	for _, c := range []struct{ name, sql, reason string }{
		{"plain", `SELECT COUNT(*) FROM files."sales" WHERE amount < 0`, ""},
		{"stringInWhere", `SELECT COUNT(*) FROM t WHERE a = 'x.csv'`, ""},
		{"stringInJoinCondition", `SELECT COUNT(*) FROM t JOIN u ON t.a = u.a AND u.b IN ('x', 'y')`, ""},
		{"dollarString", `SELECT COUNT(*) FROM t WHERE a = $x$it's$x$`, ""},
		{"nestedComment", `SELECT COUNT(*) FROM t /* a /* b */ GROUP BY a */ WHERE a > 0`, ""},
		{"readParquet", `SELECT COUNT(*) FROM read_parquet('s/*.parquet') WHERE a IS NULL`, rulesql.CheckForbiddenFunction},
		{"readCSVAuto", `SELECT COUNT(*) FROM t WHERE a IN (SELECT a FROM read_csv_auto('/etc/passwd'))`, rulesql.CheckForbiddenFunction},
		{"bareFile", `SELECT COUNT(*) FROM 'data.csv' WHERE a IS NULL`, rulesql.CheckForbiddenFunction},
		{"bareFileJoined", `SELECT COUNT(*) FROM t JOIN '/etc/x.parquet' AS f ON f.a = t.a`, rulesql.CheckForbiddenFunction},
		{"bareFileInList", `SELECT COUNT(*) FROM t, 'x.json' WHERE a > 0`, rulesql.CheckForbiddenFunction},
		{"bareFileInSubquery", `SELECT COUNT(*) FROM t WHERE a IN (SELECT a FROM 'x.csv')`, rulesql.CheckForbiddenFunction},
		{"queryText", `SELECT COUNT(*) FROM query('SELECT 1')`, rulesql.CheckForbiddenFunction},
		{"getenv", `SELECT COUNT(*) FROM t WHERE a = getenv('HOME')`, rulesql.CheckForbiddenFunction},
		{"copy", `COPY t TO 'x.csv'`, rulesql.CheckNotSelect},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, reason := rulesql.CheckCountQuery(rulesql.DuckDB, c.sql)
			if ok != (c.reason == "") || reason != c.reason {
				t.Errorf("ok=%v reason=%q, want %q", ok, reason, c.reason)
			}
		})
	}
}
