package rulesql_test

import (
	"context"
	"database/sql"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
	_ "modernc.org/sqlite"

	"github.com/vigia-data/vigia/rulesql"
)

// generated is one generated query with the name of the rule it came from.
type generated struct{ name, sql string }

// allQueries generates every query of the golden fixture and of the odd-names fixture
// in dialect d; rules without a query in d are left out.
func allQueries(tb testing.TB, d rulesql.Dialect, oddSchema, oddCustomSQL string) []generated {
	tb.Helper()
	var out []generated
	for _, set := range [][]namedRule{goldenRules(), oddRules(oddSchema, oddCustomSQL)} {
		for _, nr := range set {
			sql, ok, _, err := rulesql.FailingRowsSQL(nr.rule, d, 100)
			if err != nil {
				tb.Fatalf("%s: %v", nr.name, err)
			}
			if ok {
				out = append(out, generated{nr.name, sql})
			}
		}
	}
	return out
}

func TestPostgresQueriesParseWithThePostgresParser(t *testing.T) {
	for _, q := range allQueries(t, rulesql.Postgres, pgSchema, pgCustomSQL()) {
		t.Run(q.name, func(t *testing.T) {
			res, err := pg_query.Parse(q.sql)
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, q.sql)
			}
			if n := len(res.Stmts); n != 1 {
				t.Fatalf("%d statements, want 1", n)
			}
			if res.Stmts[0].Stmt.GetSelectStmt() == nil {
				t.Errorf("not a SELECT:\n%s", q.sql)
			}
		})
	}
}

func TestMySQLQueriesParseWithTheTiDBParser(t *testing.T) {
	p := parser.New()
	for _, q := range allQueries(t, rulesql.MySQL, "vigia_db", mysqlCustomSQL("vigia_db")) {
		t.Run(q.name, func(t *testing.T) {
			if _, err := p.ParseOneStmt(q.sql, "", ""); err != nil {
				t.Errorf("parse: %v\n%s", err, q.sql)
			}
		})
	}
}

func TestSQLiteQueriesCompileInARealSQLite(t *testing.T) {
	ctx := context.Background()
	db := mustSQLite(t)
	// The golden fixture's schema "sales" is an attached database.
	mustExec(t, db,
		`ATTACH DATABASE ':memory:' AS sales`,
		`CREATE TABLE sales.orders (id integer, email text, order_no text, customer_id integer,
			status text, amount numeric, updated_at text)`,
		`CREATE TABLE sales.customers (id integer)`,
	)
	for _, q := range allQueries(t, rulesql.SQLite, "main", sqliteCustomSQL()) {
		t.Run(q.name, func(t *testing.T) {
			rows, err := db.QueryContext(ctx, "EXPLAIN "+q.sql)
			if err != nil {
				t.Fatalf("EXPLAIN: %v\n%s", err, q.sql)
			}
			defer rows.Close()
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				t.Errorf("EXPLAIN: %v\n%s", err, q.sql)
			}
		})
	}
}

// mustSQLite opens an in-memory SQLite database with the odd-names fixture. One
// connection, since every connection to :memory: is a database of its own.
func mustSQLite(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	mustExec(tb, db,
		`CREATE TABLE "order ""items""" (
			id integer PRIMARY KEY, "select ""x""" text, status text, email text,
			amount numeric, customer_id integer, updated_at text, "we`+"`"+`ird" text, "br]acket" integer)`,
		`CREATE TABLE customers (id integer PRIMARY KEY)`,
	)
	return db
}

func mustExec(tb testing.TB, db *sql.DB, stmts ...string) {
	tb.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(context.Background(), s); err != nil {
			tb.Fatalf("%v\n%s", err, s)
		}
	}
}
