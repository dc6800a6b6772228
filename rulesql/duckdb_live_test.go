//go:build duckdb

package rulesql_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/vigia-data/vigia/rulesql"
)

// The DuckDB tests run with -tags duckdb (make test does): DuckDB is cgo and the rest
// of the package's tests must not link it. DuckDB runs in process, so nothing is
// skipped: every query of the duckdb dialect is run by DuckDB itself.

const duckSchema = `vigia "sales"`

func duckCustomSQL(schema string) string {
	return `SELECT COUNT(*) AS failing FROM ` + rulesql.QuoteIdent(rulesql.DuckDB, schema) +
		`."order ""items""" WHERE ` + oddCustomSQLWhere
}

// mustDuckDB opens an in-memory DuckDB database on one connection (each connection to
// an in-memory DuckDB opened by database/sql shares it, but one keeps the test simple).
func mustDuckDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	return db
}

// mustDuckDBOddTable creates the odd-names fixture in schema `vigia "sales"`, with a
// case-sensitive text column for the pattern rule and a TIMESTAMPTZ updated_at.
func mustDuckDBOddTable(tb testing.TB, db *sql.DB) {
	tb.Helper()
	mustExec(tb, db,
		`CREATE SCHEMA "vigia ""sales"""`,
		`CREATE TABLE "vigia ""sales"""."order ""items""" (
			id INTEGER PRIMARY KEY, "select ""x""" VARCHAR, status VARCHAR, email VARCHAR,
			amount DECIMAL(10,2), customer_id INTEGER, updated_at TIMESTAMPTZ, "we`+"`"+`ird" VARCHAR, "br]acket" INTEGER)`,
		`CREATE TABLE "vigia ""sales""".customers (id INTEGER PRIMARY KEY)`,
		`INSERT INTO "vigia ""sales""".customers VALUES (1), (2)`,
	)
	insert := `INSERT INTO "vigia ""sales"""."order ""items""" VALUES
		(?, ?, ?, ?, ?, ?, now() - to_hours(CAST(? AS BIGINT)), ?, ?)`
	for _, r := range oddRows() {
		mustInsert(tb, db, insert, r, hoursArg(r.ageHours))
	}
}

func TestDuckDBQueriesReturnTheFailingRows(t *testing.T) {
	db := mustDuckDB(t)
	mustDuckDBOddTable(t, db)
	assertFailingRows(t, db, rulesql.DuckDB, oddRules(duckSchema, duckCustomSQL(duckSchema)))
}

// TestDuckDBQueriesReturnTheFailingRowsOfParquetFiles runs the same rules on the fixture
// written to Parquet and read back through views in schema "files", the way a duckdb
// connection names its file datasets: types survive the round trip (TIMESTAMPTZ,
// DECIMAL), and so does every failing row.
func TestDuckDBQueriesReturnTheFailingRowsOfParquetFiles(t *testing.T) {
	db := mustDuckDB(t)
	mustDuckDBOddTable(t, db)
	dir := t.TempDir()
	items := filepath.Join(dir, "items.parquet")
	customers := filepath.Join(dir, "customers.parquet")
	lit := func(s string) string { return rulesql.QuoteString(rulesql.DuckDB, s) }
	mustExec(t, db,
		`COPY "vigia ""sales"""."order ""items""" TO `+lit(items)+` (FORMAT parquet)`,
		`COPY "vigia ""sales""".customers TO `+lit(customers)+` (FORMAT parquet)`,
		`CREATE SCHEMA files`,
		`CREATE VIEW files."order ""items""" AS SELECT * FROM read_parquet(`+lit(items)+`)`,
		`CREATE VIEW files.customers AS SELECT * FROM read_parquet(`+lit(customers)+`)`,
		`DROP SCHEMA "vigia ""sales""" CASCADE`,
	)
	assertFailingRows(t, db, rulesql.DuckDB, oddRules("files", duckCustomSQL("files")))
}

// TestDuckDBQueriesOfTheGoldenFixtureBindInDuckDB has DuckDB bind every query of both
// fixtures (EXPLAIN resolves names, types and functions without running them).
func TestDuckDBQueriesOfTheGoldenFixtureBindInDuckDB(t *testing.T) {
	ctx := context.Background()
	db := mustDuckDB(t)
	mustDuckDBOddTable(t, db)
	mustExec(t, db,
		`CREATE SCHEMA sales`,
		`CREATE TABLE sales.orders (id INTEGER, email VARCHAR, order_no VARCHAR, customer_id INTEGER,
			status VARCHAR, amount DOUBLE, updated_at TIMESTAMP)`,
		`CREATE TABLE sales.customers (id INTEGER)`,
	)
	for _, q := range allQueries(t, rulesql.DuckDB, duckSchema, duckCustomSQL(duckSchema)) {
		t.Run(q.name, func(t *testing.T) {
			rows, err := db.QueryContext(ctx, "EXPLAIN "+strings.TrimSuffix(strings.TrimSpace(q.sql), ";"))
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

// TestDuckDBCustomSQLCheckAcceptsWhatDuckDBRunsAndRefusesFileReads: the custom_sql gate
// accepts a count DuckDB runs, and refuses the file reads DuckDB would really perform (a
// string in FROM, read_csv), which are no business of a rule's count.
func TestDuckDBCustomSQLCheckAcceptsWhatDuckDBRunsAndRefusesFileReads(t *testing.T) {
	db := mustDuckDB(t)
	mustDuckDBOddTable(t, db)
	ok := duckCustomSQL(duckSchema)
	if good, reason := rulesql.CheckCountQuery(rulesql.DuckDB, ok); !good {
		t.Fatalf("refused %q: %s", ok, reason)
	}
	var n int
	if err := db.QueryRow(ok).Scan(&n); err != nil || n != 1 {
		t.Fatalf("DuckDB ran the accepted count: n=%d err=%v", n, err)
	}
	csv := filepath.Join(t.TempDir(), "secret.csv")
	lit := rulesql.QuoteString(rulesql.DuckDB, csv)
	mustExec(t, db, `COPY (SELECT 1 AS a UNION ALL SELECT 2) TO `+lit+` (HEADER)`)
	for _, q := range []string{
		`SELECT COUNT(*) FROM ` + lit + ` WHERE a > 0`,
		`SELECT COUNT(*) FROM read_csv(` + lit + `) WHERE a > 0`,
	} {
		if err := db.QueryRow(q).Scan(&n); err != nil || n != 2 {
			t.Fatalf("DuckDB read the file: n=%d err=%v", n, err)
		}
		if good, reason := rulesql.CheckCountQuery(rulesql.DuckDB, q); good || reason != rulesql.CheckForbiddenFunction {
			t.Errorf("check of a file read: ok=%v reason=%q", good, reason)
		}
	}
}
