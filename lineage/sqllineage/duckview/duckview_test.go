//go:build duckdb

package duckview_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/lineage/sqllineage"
	"github.com/vigia-data/vigia/lineage/sqllineage/duckview"
	"github.com/vigia-data/vigia/source"
)

// filesCatalog is what discovery reports for the files of the test directory: the
// datasets source.FileDatasetName names, in schema files.
func filesCatalog() lineage.ViewCatalog {
	return lineage.ViewCatalog{Schema: "main", Tables: map[string][]string{
		source.FilesSchema + "." + source.FileDatasetName("orders/part-0.parquet"): {"id", "customer_id", "amount", "status"},
		source.FilesSchema + "." + source.FileDatasetName("customers.parquet"):     {"id", "name", "email"},
	}}
}

// mustParquetViewSQL writes two Parquet datasets (a directory of parts and a single
// file), creates in a DuckDB database a view that joins them by relative paths (the
// database's file_search_path is the directory, as a duckdb connection sets it), and
// returns the view's text as duckdb_views() reports it.
func mustParquetViewSQL(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "orders"), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", filepath.Join(dir, "shop.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	lit := func(p string) string { return "'" + filepath.Join(dir, p) + "'" }
	for _, s := range []string{
		`COPY (SELECT i AS id, i % 3 AS customer_id, i * 1.5 AS amount, 'paid' AS status FROM range(10) r(i)) TO ` + lit("orders/part-0.parquet") + ` (FORMAT parquet)`,
		`COPY (SELECT i + 10 AS id, i % 3 AS customer_id, i * 2.5 AS amount, 'void' AS status FROM range(5) r(i)) TO ` + lit("orders/part-1.parquet") + ` (FORMAT parquet)`,
		`COPY (SELECT i AS id, 'c' || i AS name, 'c' || i || '@mail.pt' AS email FROM range(3) r(i)) TO ` + lit("customers.parquet") + ` (FORMAT parquet)`,
		`SET file_search_path = ` + "'" + dir + "'",
		`CREATE VIEW revenue (order_id, customer, total) AS
			SELECT o.id, c.name, o.amount * 1.23
			FROM read_parquet('orders/*.parquet') AS o
			JOIN 'customers.parquet' AS c ON c.id = o.customer_id
			WHERE o.status <> 'void'`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM revenue`).Scan(&n); err != nil || n != 10 {
		t.Fatalf("the view reads the files: n=%d err=%v", n, err)
	}
	var text string
	if err := db.QueryRow(`SELECT sql FROM duckdb_views() WHERE view_name = 'revenue'`).Scan(&text); err != nil {
		t.Fatal(err)
	}
	return text
}

// Must-show 3: a DuckDB view joining two Parquet datasets has parsed column lineage to
// both, read by DuckDB's own parser from the text DuckDB keeps for the view.
func TestViewJoiningTwoParquetDatasetsHasColumnLineageToBoth(t *testing.T) {
	text := mustParquetViewSQL(t)
	got, err := duckview.New().Analyze("duckdb", text, filesCatalog())
	if err != nil {
		t.Fatal(err)
	}
	want := lineage.ViewLineage{
		Columns:     []string{"order_id", "customer", "total"},
		ColumnLevel: true,
		Edges: []lineage.ViewEdge{
			{Source: lineage.TableName{Schema: "files", Name: "orders"}, Columns: []lineage.ColumnPair{
				{From: "id", To: "order_id", Direct: true}, {From: "amount", To: "total"}}},
			{Source: lineage.TableName{Schema: "files", Name: "customers.parquet"}, Columns: []lineage.ColumnPair{
				{From: "name", To: "customer", Direct: true}}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lineage differs (-want +got):\n%s\nview text:\n%s", diff, text)
	}
}

func analyze(t *testing.T, p *duckview.Parser, sql string, cat lineage.ViewCatalog) lineage.ViewLineage {
	t.Helper()
	got, err := p.Analyze("duckdb", sql, cat)
	if err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	return got
}

func TestDuckDBViewShapes(t *testing.T) {
	p := duckview.New()
	cat := lineage.ViewCatalog{Schema: "main", Tables: map[string][]string{
		"main.t": {"a", "b", "c", "l"}, "main.u": {"a", "z"}, "files.sales": {"a", "amount", "year"},
	}}
	for _, c := range []struct {
		name, sql  string
		cols       []string
		edges      map[string][]lineage.ColumnPair
		unresolved []string
	}{
		{"starExcludeReplace", `SELECT * EXCLUDE (b) REPLACE (c + 1 AS c) FROM t`,
			[]string{"a", "c", "l"}, map[string][]lineage.ColumnPair{"t": {
				{From: "a", To: "a", Direct: true}, {From: "c", To: "c"}, {From: "l", To: "l", Direct: true}}}, nil},
		{"cteUnionWindow", `CREATE OR REPLACE VIEW "my ""v""" AS WITH x AS (SELECT a, b FROM t UNION ALL SELECT a, z FROM u)
			SELECT a, sum(b) OVER (PARTITION BY a) AS s FROM x`,
			[]string{"a", "s"}, map[string][]lineage.ColumnPair{
				"t": {{From: "a", To: "a", Direct: true}, {From: "b", To: "s"}},
				"u": {{From: "a", To: "a", Direct: true}, {From: "z", To: "s"}}}, nil},
		{"lambdaParamsAreNotColumns", `SELECT list_transform(l, x -> x + a) AS m FROM t`,
			[]string{"m"}, map[string][]lineage.ColumnPair{"t": {{From: "l", To: "m"}, {From: "a", To: "m"}}}, nil},
		{"hivePartitionedGlob", `SELECT year, sum(amount) AS total FROM read_parquet('sales/*/*.parquet', hive_partitioning = true) GROUP BY year`,
			[]string{"year", "total"}, map[string][]lineage.ColumnPair{"files.sales": {
				{From: "year", To: "year", Direct: true}, {From: "amount", To: "total"}}}, nil},
		{"scalarAndExistsSubqueries", `SELECT a, (SELECT max(z) FROM u WHERE u.a = t.a) AS mz FROM t WHERE EXISTS (SELECT 1 FROM u)`,
			[]string{"a", "mz"}, map[string][]lineage.ColumnPair{
				"t": {{From: "a", To: "a", Direct: true}},
				"u": {{From: "z", To: "mz"}}}, nil},
		{"fileOutsideTheConnection", `SELECT * FROM read_csv('/etc/passwd')`,
			[]string{}, map[string][]lineage.ColumnPair{}, []string{"star_unknown_table"}},
		{"dynamicSQL", `SELECT * FROM query('SELECT a FROM t')`,
			[]string{}, map[string][]lineage.ColumnPair{}, []string{"star_unknown_table", "dynamic_sql"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := analyze(t, p, c.sql, cat)
			cols := append([]string{}, got.Columns...)
			if diff := cmp.Diff(c.cols, cols); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			edges := map[string][]lineage.ColumnPair{}
			for _, e := range got.Edges {
				if len(e.Columns) > 0 {
					key := e.Source.Name // unqualified names stay as the SQL wrote them
					if e.Source.Schema != "" {
						key = e.Source.Schema + "." + key
					}
					edges[key] = e.Columns
				}
			}
			if diff := cmp.Diff(c.edges, edges); diff != "" {
				t.Errorf("edges (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.unresolved, got.Unresolved); diff != "" {
				t.Errorf("unresolved (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnalyzeErrorsNeverQuoteTheSQL(t *testing.T) {
	p := duckview.New()
	for _, c := range []struct {
		sql  string
		want error
	}{
		{"SELEC secret_value FROM t", sqllineage.ErrUnparsable},
		{"CREATE TABLE secret_value (a INT)", sqllineage.ErrNotAQuery},
		{"DELETE FROM t WHERE a = 'secret_value'", sqllineage.ErrUnparsable},
	} {
		_, err := p.Analyze("duckdb", c.sql, lineage.ViewCatalog{})
		if !errors.Is(err, c.want) {
			t.Errorf("%q: err = %v, want %v", c.sql, err, c.want)
		}
		if err != nil && contains(err.Error(), "secret_value") {
			t.Errorf("error quotes the SQL: %v", err)
		}
	}
	if _, err := p.Analyze("postgres", "SELECT 1", lineage.ViewCatalog{}); !errors.Is(err, sqllineage.ErrUnsupportedDialect) {
		t.Errorf("postgres: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) > 0 && len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestCheckCountWithDuckDBsParser(t *testing.T) {
	p := duckview.New()
	tbl := source.Table{Schema: "files", Name: "sales"}
	allowed := map[string]bool{"count": true, "regexp_matches": true, "lower": true}
	for _, c := range []struct{ name, sql, want string }{
		{"rehearsal", `SELECT count(*) FROM "files"."sales" WHERE "email" IS NOT NULL AND NOT regexp_matches("email", '^[a-z]+$')`, ""},
		{"otherTable", `SELECT count(*) FROM files.customers`, "unknown_table"},
		{"fileString", `SELECT count(*) FROM 'secret.csv'`, "unknown_table"},
		{"fileReader", `SELECT count(*) FROM read_csv('secret.csv')`, "forbidden"},
		{"notAllowed", `SELECT count(*) FROM files.sales WHERE upper(email) = 'X'`, "function_not_allowed"},
		{"notSelect", `DELETE FROM files.sales`, "not_select"},
		{"twoStatements", `SELECT count(*) FROM files.sales; SELECT 1`, "not_select"},
		{"unparsable", `SELEC count(*) FROM files.sales`, "not_select"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := p.CheckCount("duckdb", c.sql, tbl, allowed)
			if err != nil || got != c.want {
				t.Errorf("CheckCount = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestCheckDDLWithDuckDBsParser(t *testing.T) {
	p := duckview.New()
	for _, c := range []struct {
		name, sql string
		want      error
	}{
		{"addColumn", `ALTER TABLE "sales"."orders" ADD COLUMN "note" VARCHAR`, nil},
		{"indexAndNotNull", `CREATE UNIQUE INDEX "orders_no" ON "sales"."orders" ("order_no"); ALTER TABLE "sales"."orders" ALTER COLUMN "id" SET NOT NULL;`, nil},
		{"createTable", `CREATE TABLE "sales"."codes" ("code" VARCHAR PRIMARY KEY, "label" VARCHAR)`, nil},
		{"syntax", `ALTER TABLE "sales"."orders" ADD COLUM "note" VARCHAR`, sqllineage.ErrUnparsable},
		{"foreignKeyDuckDBCannotAdd", `ALTER TABLE "sales"."orders" ADD CONSTRAINT fk FOREIGN KEY ("customer_id") REFERENCES "sales"."customers" ("id")`, sqllineage.ErrNotDDL},
		{"drop", `DROP TABLE "sales"."orders"`, sqllineage.ErrNotDDL},
		{"ddlThenSelect", `ALTER TABLE t ADD COLUMN x INT; SELECT 1`, sqllineage.ErrNotDDL},
		{"empty", `-- nothing`, sqllineage.ErrNotDDL},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := p.CheckDDL("duckdb", c.sql)
			if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
				t.Errorf("CheckDDL = %v, want %v", err, c.want)
			}
		})
	}
}
