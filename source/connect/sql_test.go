package connect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

func TestNormalizeStatement(t *testing.T) {
	cases := []struct {
		kind     source.Kind
		in, want string
	}{
		{source.Postgres, "SELECT  a,\n\tb FROM t WHERE x = 'secret' AND y = 42", "SELECT a, b FROM t WHERE x = ? AND y = ?"},
		{source.Postgres, `SELECT "select ""x""" FROM "s"."t" LIMIT 1000`, `SELECT "select ""x""" FROM "s"."t" LIMIT ?`},
		{source.Postgres, "SELECT 'it''s', E'a\\'b', $$dollar$$, $tag$x$tag$, $1", "SELECT ?, ?, ?, ?, $1"},
		{source.Postgres, "SELECT 1.5e10, .5, 0x1F, -- comment 'x'\n c /* 'y' */ FROM t", "SELECT ?, ?, ?, c FROM t"},
		{source.Postgres, "SELECT x FROM t TABLESAMPLE SYSTEM (0.25) LIMIT 20000", "SELECT x FROM t TABLESAMPLE SYSTEM (?) LIMIT ?"},
		{source.Postgres, "SELECT x FROM t WHERE id IN (1, 2, 3, 4)", "SELECT x FROM t WHERE id IN (?, ...)"},
		{source.Postgres, `SELECT 'C:\', 'secret'`, "SELECT ?, ?"},
		{source.MySQL, "SET STATEMENT max_statement_time=30 FOR SELECT `cod``igo` FROM `t` WHERE a = 'it\\'s secret'", "SET STATEMENT max_statement_time=? FOR SELECT `cod``igo` FROM `t` WHERE a = ?"},
		{source.MySQL, "SELECT /*+ MAX_EXECUTION_TIME(30000) */ a FROM t", "SELECT a FROM t"},
		{source.SQLite, "SELECT (random() & 1048575) < 2097 FROM t1", "SELECT (random() & ?) < ? FROM t1"},
		{source.SQLite, "SELECT x FROM t WHERE n = X'0A0B'", "SELECT x FROM t WHERE n = ?"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := connect.NormalizeStatement(c.kind, c.in); got != c.want {
				t.Fatalf("NormalizeStatement =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func fixtureTable() source.Table {
	return source.Table{Schema: "s", Name: `we"ird` + "`t", Kind: source.TableKindTable, Columns: []source.Column{
		{Name: "id", DataType: "integer", Class: source.ClassNumeric, PrimaryKey: true},
		{Name: colSegment, DataType: "text", Class: source.ClassText},
		{Name: colCode, DataType: "integer", Class: source.ClassNumeric},
		{Name: "quando", DataType: "timestamp", Class: source.ClassTemporal},
		{Name: "ok", DataType: "boolean", Class: source.ClassBoolean},
		{Name: "doc", DataType: "json", Class: source.ClassOther},
	}}
}

func TestProfileSQLIsOneAggregate(t *testing.T) {
	for _, kind := range source.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			std, err := connect.ProfileSQL(kind, fixtureTable(), source.ProfileRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(std) != 1 {
				t.Fatalf("%d statements", len(std))
			}
			q := std[0]
			if strings.Count(q, "count(*)") != 1 || strings.Contains(q, "DISTINCT") || strings.Contains(q, "LIMIT") {
				t.Errorf("standard: %s", q)
			}
			lower := strings.ToLower(q)
			for _, bad := range []string{`min("select`, "min(`select", `max("select`, "max(`select", `min("doc`, "min(`doc", `min("ok`, "min(`ok"} {
				if strings.Contains(lower, bad) {
					t.Errorf("min/max of a non-numeric column (%s): %s", bad, q)
				}
			}
			deep, _ := connect.ProfileSQL(kind, fixtureTable(), source.ProfileRequest{Depth: source.DepthDeep})
			// id, segment, code, quando and ok; never the json column.
			if n := strings.Count(deep[0], "count(DISTINCT"); n != 5 {
				t.Errorf("deep has %d count(DISTINCT): %s", n, deep[0])
			}
			basic, _ := connect.ProfileSQL(kind, fixtureTable(), source.ProfileRequest{Depth: source.DepthBasic})
			if !strings.Contains(basic[0], "LIMIT 1000) AS") || strings.Contains(basic[0], "DISTINCT") {
				t.Errorf("basic: %s", basic[0])
			}
		})
	}
	if _, err := connect.ProfileSQL("oracle", fixtureTable(), source.ProfileRequest{}); !source.IsReason(err, source.ReasonUnsupported) {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestProfileSQLSplitsVeryWideTables(t *testing.T) {
	tb := source.Table{Name: "wide"}
	for i := 0; i < 600; i++ {
		tb.Columns = append(tb.Columns, source.Column{Name: "c" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + strings.Repeat("0", i/26), Class: source.ClassText})
	}
	stmts, err := connect.ProfileSQL(source.Postgres, tb, source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 3 {
		t.Fatalf("%d statements for 2400 expressions", len(stmts))
	}
}

func TestValidateDSN(t *testing.T) {
	cases := []struct {
		kind  source.Kind
		dsn   string
		valid bool
	}{
		{source.Postgres, "postgres://u:p@db.example.com:5432/app?sslmode=require", true},
		{source.Postgres, "host=db.example.com user=u password=p dbname=app", true},
		{source.Postgres, "postgres://u:" + marker + "@[::1", false},
		{source.Postgres, "host=x passfile=/etc/" + marker, false},
		{source.Postgres, "host=x sslkey=/etc/" + marker, false},
		{source.Postgres, "host=x service=" + marker, false},
		{source.Postgres, "host=x options='-c statement_timeout=0'", false},
		{source.MySQL, "u:p@tcp(db.example.com:3306)/app", true},
		{source.MySQL, "u:" + marker + "@tcp(db.example.com:3306", false},
		{source.SQLite, "/var/data/app.db", true},
		{source.SQLite, "file:/var/data/app.db?mode=rwc", true},
		{source.SQLite, "file:relative.db", true},
		{source.SQLite, ":memory:", false},
		{source.SQLite, "file://" + marker + "/app.db", false},
		{source.SQLite, "", false},
		{"oracle", "x", false},
	}
	for _, c := range cases {
		t.Run(string(c.kind)+"_"+c.dsn, func(t *testing.T) {
			err := connect.ValidateDSN(c.kind, c.dsn)
			if c.valid {
				if err != nil {
					t.Fatalf("ValidateDSN: %v", err)
				}
				return
			}
			var se *source.Error
			if !errors.As(err, &se) || (se.Reason != source.ReasonInvalidDSN && se.Reason != source.ReasonUnsupported) {
				t.Fatalf("ValidateDSN = %v; want invalid_dsn", err)
			}
			if strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), "example") || strings.Contains(err.Error(), "/etc") {
				t.Fatalf("error echoes the DSN: %v", err)
			}
		})
	}
}
