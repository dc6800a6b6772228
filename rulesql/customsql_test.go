package rulesql_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vigia-data/vigia/rulesql"
)

func TestCustomSQLCountBecomesItsRowQuery(t *testing.T) {
	cases := []struct {
		name string
		d    rulesql.Dialect
		in   string
		want string // without the header line
	}{
		{"plain", rulesql.Postgres,
			"SELECT COUNT(*) FROM t WHERE a < 0",
			"SELECT *\nFROM t WHERE a < 0\nLIMIT 10;\n"},
		{"countOneAliasSemicolonTrailingComment", rulesql.Postgres,
			"select count(1) as failing from t where a < 0; -- negative amounts",
			"SELECT *\nfrom t where a < 0\nLIMIT 10;\n"},
		{"bareAlias", rulesql.SQLite,
			`SELECT COUNT(*) "n" FROM t WHERE a IS NULL`,
			"SELECT *\nFROM t WHERE a IS NULL\nLIMIT 10;\n"},
		{"leadingCommentKept", rulesql.Postgres,
			"-- orphans\nSELECT COUNT(*) FROM t WHERE a < 0",
			"-- orphans\nSELECT *\nFROM t WHERE a < 0\nLIMIT 10;\n"},
		{"lineCommentInsideKeptLimitOnOwnLine", rulesql.Postgres,
			"SELECT COUNT(*) FROM t -- GROUP BY a\nWHERE a < 0",
			"SELECT *\nFROM t -- GROUP BY a\nWHERE a < 0\nLIMIT 10;\n"},
		{"withClause", rulesql.Postgres,
			"WITH x AS (SELECT a FROM t GROUP BY a) SELECT COUNT(*) FROM x WHERE a > 1",
			"WITH x AS (SELECT a FROM t GROUP BY a) SELECT *\nFROM x WHERE a > 1\nLIMIT 10;\n"},
		{"groupedSubqueryInWhere", rulesql.MySQL,
			"SELECT COUNT(*) FROM t WHERE id IN (SELECT id FROM u GROUP BY id HAVING COUNT(*) > 1)",
			"SELECT *\nFROM t WHERE id IN (SELECT id FROM u GROUP BY id HAVING COUNT(*) > 1)\nLIMIT 10;\n"},
		{"keywordsInStringsAndQuotedNames", rulesql.Postgres,
			`SELECT COUNT(*) FROM "GROUP" WHERE note = 'x GROUP BY y' AND "limit" > 0`,
			"SELECT *\nFROM \"GROUP\" WHERE note = 'x GROUP BY y' AND \"limit\" > 0\nLIMIT 10;\n"},
		{"postgresDollarQuote", rulesql.Postgres,
			"SELECT COUNT(*) FROM t WHERE a = $q$ GROUP BY $q$",
			"SELECT *\nFROM t WHERE a = $q$ GROUP BY $q$\nLIMIT 10;\n"},
		{"postgresEscapeString", rulesql.Postgres,
			`SELECT COUNT(*) FROM t WHERE a = E'it\'s GROUP BY'`,
			"SELECT *\nFROM t WHERE a = E'it\\'s GROUP BY'\nLIMIT 10;\n"},
		{"mysqlBackslashAgreedByBothModes", rulesql.MySQL,
			`SELECT COUNT(*) FROM t WHERE a REGEXP '\\d'`,
			"SELECT *\nFROM t WHERE a REGEXP '\\\\d'\nLIMIT 10;\n"},
		{"mysqlArithmeticNotComment", rulesql.MySQL,
			"SELECT COUNT(*) FROM t WHERE a--1 > 0",
			"SELECT *\nFROM t WHERE a--1 > 0\nLIMIT 10;\n"},
		{"mssqlTop", rulesql.MSSQL,
			"SELECT COUNT(*) FROM [dbo].[t] WHERE [a] < 0",
			"SELECT TOP (10) *\nFROM [dbo].[t] WHERE [a] < 0;\n"},
		{"snowflakeSlashComment", rulesql.Snowflake,
			"SELECT COUNT(*) FROM t WHERE a < 0 // it's a GROUP BY note",
			"SELECT *\nFROM t WHERE a < 0\nLIMIT 10;\n"},
		{"bigqueryHashComment", rulesql.BigQuery,
			"SELECT COUNT(*) FROM `p.d.t` WHERE a < 0 # GROUP BY a",
			"SELECT *\nFROM `p.d.t` WHERE a < 0\nLIMIT 10;\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: rulesql.Table{Name: "t"}, SQL: c.in}
			sql, ok, reason, err := rulesql.FailingRowsSQL(r, c.d, 10)
			if err != nil || !ok {
				t.Fatalf("ok=%v reason=%q err=%v", ok, reason, err)
			}
			_, body, _ := cutLine(sql)
			if diff := cmp.Diff(c.want, body); diff != "" {
				t.Errorf("row query (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCustomSQLThatIsNotAPlainCountHasNoRowQuery(t *testing.T) {
	cases := []struct {
		name string
		d    rulesql.Dialect
		in   string
	}{
		{"groupBy", rulesql.Postgres, "SELECT COUNT(*) FROM t GROUP BY a"},
		{"having", rulesql.Postgres, "SELECT COUNT(*) FROM t HAVING COUNT(*) > 1"},
		{"countDistinct", rulesql.Postgres, "SELECT COUNT(DISTINCT a) FROM t"},
		{"countColumn", rulesql.Postgres, "SELECT COUNT(a) FROM t"},
		{"sum", rulesql.Postgres, "SELECT SUM(CASE WHEN a < 0 THEN 1 ELSE 0 END) FROM t"},
		{"filter", rulesql.Postgres, "SELECT COUNT(*) FILTER (WHERE a < 0) FROM t"},
		{"twoColumns", rulesql.Postgres, "SELECT COUNT(*), 1 FROM t"},
		{"union", rulesql.Postgres, "SELECT COUNT(*) FROM t UNION ALL SELECT COUNT(*) FROM u"},
		{"limit", rulesql.Postgres, "SELECT COUNT(*) FROM t LIMIT 1"},
		{"twoStatements", rulesql.Postgres, "SELECT COUNT(*) FROM t; SELECT 1"},
		{"noFrom", rulesql.Postgres, "SELECT COUNT(*)"},
		{"notSelect", rulesql.Postgres, "VALUES (1)"},
		{"selectOne", rulesql.Postgres, "SELECT 1"},
		{"writingCTE", rulesql.Postgres, "WITH d AS (DELETE FROM t RETURNING *) SELECT COUNT(*) FROM d"},
		{"unterminatedString", rulesql.Postgres, "SELECT COUNT(*) FROM t WHERE a = 'x"},
		{"unterminatedComment", rulesql.Postgres, "SELECT COUNT(*) FROM t /* where"},
		{"unbalanced", rulesql.Postgres, "SELECT COUNT(*) FROM t WHERE (a"},
		{"mysqlBackslashAmbiguous", rulesql.MySQL, `SELECT COUNT(*) FROM t WHERE a = 'x\' GROUP BY a -- '`},
		{"mysqlExecutableComment", rulesql.MySQL, "SELECT COUNT(*) FROM t /*! GROUP BY a */"},
		{"snowflakeIdentifierHasNoBackslash", rulesql.Snowflake, `SELECT COUNT(*) FROM t WHERE "a\" GROUP BY "b" > 0`},
		{"bigqueryTripleQuote", rulesql.BigQuery, `SELECT COUNT(*) FROM t WHERE a = '''x'''`},
		{"sqliteNestedComment", rulesql.SQLite, "SELECT COUNT(*) FROM t /* /* */ WHERE a */"},
		{"snowflakeSlashCommentHidesNoQuote", rulesql.Snowflake, "SELECT COUNT(*) FROM t // it's\nGROUP BY a -- '"},
		{"qualify", rulesql.Snowflake, "SELECT COUNT(*) FROM t QUALIFY ROW_NUMBER() OVER (ORDER BY a) = 1"},
		{"topInMSSQL", rulesql.MSSQL, "SELECT TOP 1 COUNT(*) FROM t"},
		{"empty", rulesql.Postgres, "-- nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: rulesql.Table{Name: "t"}, SQL: c.in}
			sql, ok, reason, err := rulesql.FailingRowsSQL(r, c.d, 10)
			if err != nil || ok || reason != rulesql.ReasonCustomSQLNotRowLevel {
				t.Errorf("got ok=%v reason=%q err=%v:\n%s", ok, reason, err, sql)
			}
		})
	}
}

func cutLine(s string) (line, rest string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func TestCustomSQLWrittenForAnotherDialectHasNoRowQuery(t *testing.T) {
	r := rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: rulesql.Table{Name: "t"},
		SQL: "SELECT COUNT(*) FROM t WHERE a < 0", SQLDialect: rulesql.Postgres}
	if _, ok, reason, err := rulesql.FailingRowsSQL(r, rulesql.MSSQL, 10); err != nil || ok || reason != rulesql.ReasonCustomSQLNotRowLevel {
		t.Errorf("mssql: ok=%v reason=%q err=%v", ok, reason, err)
	}
	if _, ok, _, err := rulesql.FailingRowsSQL(r, rulesql.Postgres, 10); err != nil || !ok {
		t.Errorf("postgres: ok=%v err=%v", ok, err)
	}
}
