//go:build duckdb

package duckdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
	"github.com/vigia-data/vigia/source/connect/duckdb"
)

// writer is an unconfined DuckDB the tests write their files with, and ask for the
// reference answers.
func writer(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// connectOpen opens root as a duckdb source with the default limits.
func connectOpen(root string) (source.Source, error) {
	return connect.Open(context.Background(), source.DuckDB, root, source.Options{FilesRoot: root})
}

func open(t *testing.T, root, path string) source.Source {
	t.Helper()
	s, err := connect.Open(context.Background(), source.DuckDB, path, source.Options{FilesRoot: root,
		Files: source.FilesLimits{MemoryLimit: "256MB", Threads: 1, TempDirectory: filepath.Join(root, ".tmp")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func find(t *testing.T, tables []source.Table, schema, name string) source.Table {
	t.Helper()
	for _, tb := range tables {
		if tb.Schema == schema && tb.Name == name {
			return tb
		}
	}
	t.Fatalf("no %s.%s among %d tables", schema, name, len(tables))
	return source.Table{}
}

// salesDir writes a hive-partitioned Parquet dataset: 3 years × 2 files, with a null spike
// in customer_email and a pattern break in code in year=2025.
func salesDir(t *testing.T, w *sql.DB, dir string) {
	t.Helper()
	for y := 2023; y <= 2025; y++ {
		p := filepath.Join(dir, "sales", fmt.Sprintf("year=%d", y))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < 2; f++ {
			email := "'c' || i || '@example.pt'"
			code := "'PT-' || lpad(CAST(i % 10000 AS VARCHAR), 4, '0')"
			if y == 2025 && f == 1 {
				email = "CASE WHEN i % 2 = 0 THEN NULL ELSE 'c' || i || '@example.pt' END"
				code = "'X' || (i % 97)"
			}
			exec(t, w, fmt.Sprintf(`COPY (SELECT i + %d AS id, CAST(i %% 500 AS DOUBLE) / 4 AS amount,
 TIMESTAMP '%d-01-01' + INTERVAL (i %% 300) DAY AS sold_at, %s AS customer_email, %s AS code
 FROM range(%d) AS r(i)) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 1000)`,
				y*100000+f*10000, y, email, code, 2500+f*500, filepath.Join(p, fmt.Sprintf("part-%d.parquet", f))))
		}
	}
}

// TestParquetDirectory is must-show 1 at the connector: a hive-partitioned Parquet
// directory is one dataset with its partition column flagged; the profile's row count,
// null counts and min/max equal DuckDB's own answers on the files.
func TestParquetDirectory(t *testing.T) {
	root := t.TempDir()
	w := writer(t)
	salesDir(t, w, root)
	s := open(t, root, root)
	tables, err := s.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 {
		t.Fatalf("%d datasets, want 1 (sales)", len(tables))
	}
	sales := find(t, tables, source.FilesSchema, "sales")
	if sales.Kind != source.TableKindTable {
		t.Fatalf("kind %s", sales.Kind)
	}
	var parts []string
	for _, c := range sales.Columns {
		if c.Partition {
			parts = append(parts, c.Name)
		}
	}
	if strings.Join(parts, ",") != "year" {
		t.Fatalf("partition columns %v", parts)
	}
	p, err := s.Profile(context.Background(), sales, source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	glob := "read_parquet('" + filepath.Join(root, "sales", "**", "*.parquet") + "', hive_partitioning = true)"
	var rows int64
	if err := w.QueryRow("SELECT count(*) FROM " + glob).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if p.RowCount != rows || rows != 3*(2500+3000) {
		t.Fatalf("row count %d, DuckDB says %d", p.RowCount, rows)
	}
	for _, cp := range p.Columns {
		var nulls int64
		if err := w.QueryRow(`SELECT count(*) - count("` + cp.Name + `") FROM ` + glob).Scan(&nulls); err != nil {
			t.Fatal(err)
		}
		if cp.NullCount != nulls {
			t.Fatalf("%s: %d nulls, DuckDB says %d", cp.Name, cp.NullCount, nulls)
		}
		switch cp.Class {
		case source.ClassNumeric:
			var lo, hi string
			if err := w.QueryRow(`SELECT CAST(min("`+cp.Name+`") AS VARCHAR), CAST(max("`+cp.Name+`") AS VARCHAR) FROM `+glob).Scan(&lo, &hi); err != nil {
				t.Fatal(err)
			}
			if cp.Min == nil || cp.Max == nil || !sameNumber(string(*cp.Min), lo) || !sameNumber(string(*cp.Max), hi) {
				t.Fatalf("%s: min/max %v/%v, DuckDB says %s/%s", cp.Name, cp.Min, cp.Max, lo, hi)
			}
		case source.ClassTemporal:
			var lo, hi time.Time
			if err := w.QueryRow(`SELECT min("`+cp.Name+`"), max("`+cp.Name+`") FROM `+glob).Scan(&lo, &hi); err != nil {
				t.Fatal(err)
			}
			if cp.MinTime == nil || !cp.MinTime.Equal(lo) || !cp.MaxTime.Equal(hi) {
				t.Fatalf("%s: min/max %v/%v, DuckDB says %v/%v", cp.Name, cp.MinTime, cp.MaxTime, lo, hi)
			}
		}
	}
	email := column(t, p, "customer_email")
	if email.NullCount != 1500 {
		t.Fatalf("the planted null spike: %d nulls", email.NullCount)
	}
	if email.Semantic == nil || email.Semantic.Type != "email" {
		t.Fatalf("customer_email semantic %+v", email.Semantic)
	}
	if email.Distinct == nil {
		t.Fatal("no distinct estimate")
	}
}

// sameNumber compares two decimal texts by value (DuckDB prints 0.0 where the profile's exact
// decimal text of the same double is 0).
func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

func column(t *testing.T, p *source.TableProfile, name string) source.ColumnProfile {
	t.Helper()
	for _, c := range p.Columns {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no column %s", name)
	return source.ColumnProfile{}
}

// TestCSVSemanticTypes is must-show 2: a CSV with a header and mixed formats profiles with
// semantic types like a table.
func TestCSVSemanticTypes(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("nif,email,joined,amount\n")
	for i := 0; i < 600; i++ {
		joined := fmt.Sprintf("2024-%02d-%02d", i%12+1, i%28+1)
		if i%3 == 0 {
			joined = fmt.Sprintf("%02d/%02d/2024", i%28+1, i%12+1)
		}
		amount := fmt.Sprintf("%d.%02d", i, i%100)
		if i%5 == 0 {
			amount = fmt.Sprintf("%d,%02d", i, i%100)
		}
		fmt.Fprintf(&b, "%s,cliente%d@correio.pt,%s,\"%s\"\n", demo.ValidNIF(r), i, joined, amount)
	}
	if err := os.WriteFile(filepath.Join(root, "clientes.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, root, root)
	tables, err := s.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tb := find(t, tables, source.FilesSchema, "clientes.csv")
	p, err := s.Profile(context.Background(), tb, source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if p.RowCount != 600 {
		t.Fatalf("rows %d", p.RowCount)
	}
	nif, email := column(t, p, "nif"), column(t, p, "email")
	if nif.Semantic == nil || nif.Semantic.Type != "nif_pt" || nif.Semantic.Valid != nif.Semantic.Matches {
		t.Fatalf("nif semantic %+v", nif.Semantic)
	}
	if email.Semantic == nil || email.Semantic.Type != "email" {
		t.Fatalf("email semantic %+v", email.Semantic)
	}
	if j := column(t, p, "joined"); j.Class != source.ClassText || len(j.Masks) < 2 {
		t.Fatalf("mixed date formats: class %s, masks %+v", j.Class, j.Masks)
	}
}

// TestConfinement is must-show 4's refusal: a path outside the files root, a symbolic link
// leading out of it and a missing root are permission_denied; a missing path not_found.
func TestConfinement(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x.csv"), []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		path, root, reason string
	}{
		{outside, root, source.ReasonPermission},
		{filepath.Join(outside, "x.csv"), root, source.ReasonPermission},
		{filepath.Join(root, "link"), root, source.ReasonPermission},
		{filepath.Join(root, "..", filepath.Base(outside)), root, source.ReasonPermission},
		{root, "", source.ReasonPermission},
		{filepath.Join(root, "missing"), root, source.ReasonNotFound},
		{root + "?access_mode=read_write", root, source.ReasonInvalidDSN},
		{":memory:", root, source.ReasonInvalidDSN},
	} {
		_, err := connect.Open(ctx, source.DuckDB, c.path, source.Options{FilesRoot: c.root})
		if !source.IsReason(err, c.reason) {
			t.Fatalf("%s under %q: %v, want %s", c.path, c.root, err, c.reason)
		}
		if err != nil && strings.Contains(err.Error(), root) {
			t.Fatalf("the error names the path: %v", err)
		}
	}
}

// TestEngineConfined checks the session: the directory's files are readable, files
// elsewhere are not (even by an absolute path in a statement), the settings are those
// asked and locked.
func TestEngineConfined(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{root, outside} {
		if err := os.WriteFile(filepath.Join(d, "x.csv"), []byte("a\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, root, root)
	ctx := context.Background()
	if n, _, err := s.QueryInt(ctx, "SELECT count(*) FROM read_csv('"+filepath.Join(root, "x.csv")+"')"); err != nil || n != 1 {
		t.Fatalf("a file in the directory: %d %v", n, err)
	}
	if _, _, err := s.QueryInt(ctx, "SELECT count(*) FROM read_csv('"+filepath.Join(outside, "x.csv")+"')"); !source.IsReason(err, source.ReasonPermission) {
		t.Fatalf("a file outside: %v", err)
	}
	if _, _, err := s.QueryInt(ctx, "SELECT count(*) FROM read_csv('"+root+"/../"+filepath.Base(outside)+"/x.csv')"); !source.IsReason(err, source.ReasonPermission) {
		t.Fatalf("a file outside through ..: %v", err)
	}
	if _, _, err := s.QueryInt(ctx, "SELECT count(*) FROM (SELECT set_config('enable_external_access', 'true'))"); err == nil {
		t.Fatal("configuration not locked")
	}
	rows, err := s.QueryRows(ctx, "SELECT current_setting('memory_limit'), current_setting('threads')", 1)
	if err != nil {
		t.Fatal(err)
	}
	if *rows[0][1] != "1" || !strings.HasPrefix(*rows[0][0], "244") { // 256MB = 244.1 MiB
		t.Fatalf("settings %s %s", *rows[0][0], *rows[0][1])
	}
}

// TestStatementTimeout: a statement past the timeout is interrupted (timeout), and the
// connection still answers after it.
func TestStatementTimeout(t *testing.T) {
	root := t.TempDir()
	s, err := connect.Open(context.Background(), source.DuckDB, root, source.Options{FilesRoot: root, StatementTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	_, _, err = s.QueryInt(context.Background(), "SELECT count(*) FROM range(100000000000) AS a(i) WHERE i % 7 = 3")
	if !source.IsReason(err, source.ReasonTimeout) {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestDatabaseFile: a DuckDB database file opens read-only; its tables keep their schema,
// keys and foreign keys, its views come with their SELECT for lineage (dialect duckdb).
// Its views' relative paths resolve in the database file's directory (never the process's
// working directory), absolute ones are named relatively for lineage, a view may read a
// file elsewhere under the files root but not outside it (permission_denied), and the file
// sets its views read in its directory are datasets of schema files.
func TestDatabaseFile(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	lake := filepath.Join(root, "lake")
	w := writer(t)
	salesDir(t, w, lake)
	for _, f := range []struct{ dir, name string }{{filepath.Join(root, "other"), "x.csv"}, {outside, "secret.csv"}, {lake, "unused.csv"}} {
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.dir, f.name), []byte("a\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	escape, err := filepath.Rel(lake, filepath.Join(outside, "secret.csv"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(lake, "shop.duckdb")
	w.SetMaxOpenConns(1)
	exec(t, w, "SET file_search_path = '"+lake+"'", "ATTACH '"+file+"' AS shop", "USE shop",
		"CREATE TABLE shop.main.customers (id INTEGER PRIMARY KEY, email VARCHAR UNIQUE, born DATE)",
		"INSERT INTO shop.main.customers SELECT i, 'c' || i || '@x.pt', DATE '1980-01-01' + CAST(i AS INTEGER) FROM range(100) AS r(i)",
		"CREATE TABLE shop.main.orders (id INTEGER PRIMARY KEY, region VARCHAR, customer_id INTEGER REFERENCES customers (id))",
		"CREATE TABLE lines (invoice INTEGER, n INTEGER, PRIMARY KEY (n, invoice))",
		"CREATE TABLE notes (id INTEGER, n INTEGER, invoice INTEGER, CONSTRAINT notes_line FOREIGN KEY (n, invoice) REFERENCES lines (n, invoice))",
		"CREATE VIEW shop.main.big_sales AS SELECT id, amount FROM read_parquet('"+filepath.Join(lake, "sales", "**", "*.parquet")+"') WHERE amount > 100",
		"CREATE VIEW shop.main.relative_sales AS SELECT id FROM read_parquet('sales/**/*.parquet')",
		"CREATE VIEW shop.main.over_view AS SELECT count(*) AS n FROM relative_sales",
		"CREATE SCHEMA shop.analytics",
		"CREATE VIEW shop.analytics.by_customer AS SELECT c.email, s.amount FROM read_parquet('sales/*/*.parquet', hive_partitioning = true) AS s JOIN customers AS c ON c.id = s.id % 100",
		"CREATE VIEW shop.main.sibling AS SELECT * FROM '../other/x.csv'",
		"CREATE VIEW shop.main.escaping AS SELECT * FROM read_csv('"+escape+"')",
		// The test's working directory has doc.go; the database's directory has not.
		"CREATE VIEW shop.main.working_dir AS SELECT * FROM read_csv('doc.go', header = false)",
		"USE memory", "DETACH shop")
	s := open(t, root, file)
	if s.Dialect() != "duckdb" {
		t.Fatalf("dialect %s", s.Dialect())
	}
	ctx := context.Background()
	tables, err := s.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cust := find(t, tables, "main", "customers")
	if !cust.Columns[0].PrimaryKey || !cust.Columns[1].Unique || cust.Columns[2].Class != source.ClassTemporal {
		t.Fatalf("columns %+v", cust.Columns)
	}
	orders := find(t, tables, "main", "orders")
	wantFK := []source.ForeignKey{{Name: "orders_customer_id_id_fkey", Columns: []string{"customer_id"},
		References: source.TableName{Schema: "main", Name: "customers"}, RefColumns: []string{"id"}}}
	if fmt.Sprint(orders.ForeignKeys) != fmt.Sprint(wantFK) || len(cust.ForeignKeys) != 0 {
		t.Fatalf("foreign keys %+v / %+v", orders.ForeignKeys, cust.ForeignKeys)
	}
	notes := find(t, tables, "main", "notes")
	if len(notes.ForeignKeys) != 1 || fmt.Sprint(notes.ForeignKeys[0].Columns, notes.ForeignKeys[0].RefColumns) != "[n invoice] [n invoice]" ||
		notes.ForeignKeys[0].References.Name != "lines" {
		t.Fatalf("composite foreign key %+v", notes.ForeignKeys)
	}
	v := find(t, tables, "main", "big_sales")
	if v.Kind != source.TableKindView || !strings.HasPrefix(v.ViewDefinition, "SELECT") || !strings.Contains(v.ViewDefinition, "read_parquet('sales/**/*.parquet')") {
		t.Fatalf("the view naming its files absolutely, for lineage: %s %q", v.Kind, v.ViewDefinition)
	}
	if rel := find(t, tables, "main", "relative_sales"); !strings.Contains(rel.ViewDefinition, "read_parquet('sales/**/*.parquet')") {
		t.Fatalf("view %q", rel.ViewDefinition)
	}
	var names []string
	for _, tb := range tables {
		if tb.Schema == source.FilesSchema {
			names = append(names, tb.Name)
			if tb.Kind != source.TableKindTable {
				t.Fatalf("file dataset %s of kind %s", tb.Name, tb.Kind)
			}
		}
	}
	if fmt.Sprint(names) != "[sales]" {
		t.Fatalf("file datasets %v, want the one its views read in its directory", names)
	}
	glob := "read_parquet('" + filepath.Join(lake, "sales", "**", "*.parquet") + "')"
	count := func(q string) int64 {
		t.Helper()
		var n int64
		if err := w.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		stmt string
		want int64
	}{
		{`SELECT count(*) FROM "main"."big_sales"`, count("SELECT count(*) FROM " + glob + " WHERE amount > 100")},
		{`SELECT count(*) FROM "main"."relative_sales"`, count("SELECT count(*) FROM " + glob)},
		{`SELECT n FROM "main"."over_view"`, count("SELECT count(*) FROM " + glob)},
		{`SELECT count(*) FROM "analytics"."by_customer" WHERE email IS NOT NULL`, count("SELECT count(*) FROM " + glob)},
		{`SELECT count(*) FROM "files"."sales"`, count("SELECT count(*) FROM " + glob)},
		{`SELECT count(*) FROM "main"."sibling"`, 1},
		{`SELECT count(*) FROM "main"."customers"`, 100},
	} {
		if n, _, err := s.QueryInt(ctx, c.stmt); err != nil || n != c.want || n == 0 {
			t.Fatalf("%s: %d %v, want %d", c.stmt, n, err, c.want)
		}
	}
	for _, q := range []string{`SELECT count(*) FROM "main"."escaping"`, `SELECT count(*) FROM "main"."working_dir"`} {
		if _, _, err := s.QueryInt(ctx, q); !source.IsReason(err, source.ReasonPermission) {
			t.Fatalf("%s: %v, want permission_denied", q, err)
		}
	}
	p, err := s.Profile(ctx, cust, source.ProfileRequest{})
	if err != nil || p.RowCount != 100 {
		t.Fatalf("profile %+v %v", p, err)
	}
	p, err = s.Profile(ctx, find(t, tables, "main", "relative_sales"), source.ProfileRequest{})
	if err != nil || p.RowCount != count("SELECT count(*) FROM "+glob) {
		t.Fatalf("profile of the view over relative paths %+v %v", p, err)
	}
	if _, err := s.QueryRows(ctx, "DELETE FROM main.customers RETURNING id", 200); err == nil {
		t.Fatal("the database file is writable")
	}
}

// TestDatabaseFileWithItsOwnFilesSchema: a database with a schema named files keeps its
// names; the files its views read are no datasets then, and still read in its directory.
func TestDatabaseFileWithItsOwnFilesSchema(t *testing.T) {
	root := t.TempDir()
	w := writer(t)
	w.SetMaxOpenConns(1)
	file := filepath.Join(root, "own.duckdb")
	exec(t, w, "COPY (SELECT 1 AS a UNION ALL SELECT 2) TO '"+filepath.Join(root, "x.parquet")+"' (FORMAT parquet)",
		"SET file_search_path = '"+root+"'", "ATTACH '"+file+"' AS own", "USE own",
		"CREATE SCHEMA files", "CREATE TABLE files.t AS SELECT 42 AS v",
		"CREATE VIEW files.x AS SELECT a FROM 'x.parquet'", "USE memory", "DETACH own")
	s := open(t, root, file)
	tables, err := s.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || find(t, tables, "files", "t").Kind != source.TableKindTable || find(t, tables, "files", "x").Kind != source.TableKindView {
		t.Fatalf("tables %+v", tables)
	}
	for q, want := range map[string]int64{`SELECT v FROM "files"."t"`: 42, `SELECT count(*) FROM "files"."x"`: 2} {
		if n, _, err := s.QueryInt(context.Background(), q); err != nil || n != want {
			t.Fatalf("%s: %d %v", q, n, err)
		}
	}
}

func TestEngineVersion(t *testing.T) {
	w := writer(t)
	var v string
	if err := w.QueryRow("SELECT version()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(duckdb.Version, "DuckDB "+v+")") {
		t.Fatalf("Version %q, engine %s", duckdb.Version, v)
	}
}
