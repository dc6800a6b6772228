package connect_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// newSQLite creates a database file in a temporary directory and runs stmts on it.
func newSQLite(tb testing.TB, stmts ...string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "t.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		mustExec(tb, db, s)
	}
	return path
}

func mustOpen(tb testing.TB, kind source.Kind, dsn string, opts source.Options) source.Source {
	tb.Helper()
	src, err := connect.Open(context.Background(), kind, dsn, opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { src.Close() })
	return src
}

func TestSQLiteViewDefinitionIsTheSelect(t *testing.T) {
	path := newSQLite(t,
		`CREATE TABLE t (a INTEGER, b TEXT)`,
		`CREATE VIEW "as" AS SELECT a AS x FROM t`,
		`CREATE VIEW v2 (c1, c2) AS SELECT a, b FROM t WHERE b = 'as'`,
		`CREATE VIRTUAL TABLE docs USING fts5(body)`,
	)
	src := mustOpen(t, source.SQLite, path, source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := findTable(t, tables, "as").ViewDefinition; got != "SELECT a AS x FROM t" {
		t.Errorf(`view "as": %q`, got)
	}
	v2 := findTable(t, tables, "v2")
	if v2.ViewDefinition != "SELECT a, b FROM t WHERE b = 'as'" || len(v2.Columns) != 2 || v2.Columns[0].Name != "c1" {
		t.Errorf("v2: %+v", v2)
	}
	if k := findTable(t, tables, "docs").Kind; k != source.TableKindExternal {
		t.Errorf("virtual table kind %s", k)
	}
}

func TestSQLiteOpenNeverCreatesOrEscapes(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	_, err := connect.Open(context.Background(), source.SQLite, missing, source.Options{})
	if !source.IsReason(err, source.ReasonNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, statErr := os.Stat(missing); !errors.Is(statErr, os.ErrNotExist) {
		t.Fatalf("Open created the file")
	}
	inside := newSQLite(t, `CREATE TABLE t (a INTEGER)`)
	root := filepath.Dir(inside)
	mustOpen(t, source.SQLite, inside, source.Options{SQLiteRoot: root})
	outside := newSQLite(t, `CREATE TABLE t (a INTEGER)`)
	if _, err := connect.Open(context.Background(), source.SQLite, outside, source.Options{SQLiteRoot: root}); !source.IsReason(err, source.ReasonPermission) {
		t.Errorf("file outside the root: %v", err)
	}
	link := filepath.Join(root, "link.db")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if _, err := connect.Open(context.Background(), source.SQLite, link, source.Options{SQLiteRoot: root}); !source.IsReason(err, source.ReasonPermission) {
		t.Errorf("symlink leaving the root: %v", err)
	}
	if _, err := connect.Open(context.Background(), source.SQLite, "file:"+inside+"?mode=rwc&_pragma=writable_schema(1)", source.Options{}); err != nil {
		t.Errorf("file: URI: %v", err)
	}
}

func TestSQLiteEmptyTableHasExactZeroDistinct(t *testing.T) {
	path := newSQLite(t, `CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, at DATETIME)`)
	src := mustOpen(t, source.SQLite, path, source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := src.Profile(context.Background(), findTable(t, tables, "t"), source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if p.RowCount != 0 || p.SampleSize != 0 || p.SampleMethod != "none" || p.LatestTimestamp != nil {
		t.Fatalf("profile %+v", p)
	}
	for _, c := range p.Columns {
		if c.NullCount != 0 || c.Min != nil || c.MinLength != nil || c.Distinct == nil || c.Distinct.Value != 0 || c.Distinct.Estimated {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
}

func TestFreshnessColumnLooksRecent(t *testing.T) {
	cases := []struct {
		name, ddl, insert, want string
	}{
		{"updatedBeatsCreated",
			`CREATE TABLE t (id INTEGER, created_at DATETIME, updated_at DATETIME, birth_date DATE)`,
			`INSERT INTO t VALUES (1, '2024-01-01 00:00:00', '2024-03-01 00:00:00', '2030-01-01')`, "updated_at"},
		{"onlyTemporalColumn",
			`CREATE TABLE t (id INTEGER, dia DATE)`,
			`INSERT INTO t VALUES (1, '2024-05-05')`, "dia"},
		{"latestOfUnnamedNotInFuture",
			`CREATE TABLE t (id INTEGER, data_a DATE, data_b DATE, data_c DATE)`,
			`INSERT INTO t VALUES (1, '2024-01-01', '2024-02-01', '2999-01-01')`, "data_b"},
		{"noTemporalColumn",
			`CREATE TABLE t (id INTEGER, name TEXT)`,
			`INSERT INTO t VALUES (1, 'x')`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := mustOpen(t, source.SQLite, newSQLite(t, c.ddl, c.insert), source.Options{})
			tables, err := src.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			p, err := src.Profile(context.Background(), tables[0], source.ProfileRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if p.FreshnessColumn != c.want || (c.want == "") != (p.LatestTimestamp == nil) {
				t.Fatalf("freshness %q %v; want %q", p.FreshnessColumn, p.LatestTimestamp, c.want)
			}
		})
	}
}

func TestSQLiteWideTableProfiles(t *testing.T) {
	var cols []string
	for i := 0; i < 600; i++ {
		cols = append(cols, `"c`+strings.Repeat("x", i/26)+string(rune('a'+i%26))+`" TEXT`)
	}
	path := newSQLite(t, `CREATE TABLE w (`+strings.Join(cols, ", ")+`)`, `INSERT INTO w (ca) VALUES ('a'), ('b'), (NULL)`)
	rec := &recorder{}
	src := mustOpen(t, source.SQLite, path, source.Options{Recorder: rec})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := src.Profile(context.Background(), tables[0], source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if p.RowCount != 3 || p.Columns[0].NullCount != 1 || p.Columns[599].NullCount != 3 || p.Columns[0].Distinct.Value != 2 {
		t.Fatalf("wide profile: rows %d, c0 %+v", p.RowCount, p.Columns[0])
	}
}

func TestOperationIsRecorded(t *testing.T) {
	rec := &recorder{}
	src := mustOpen(t, source.SQLite, newSQLite(t, `CREATE TABLE t (a INTEGER)`), source.Options{Recorder: rec})
	ctx := context.Background()
	tables, err := src.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Discover(source.WithOperation(ctx, source.OpScan)); err != nil {
		t.Fatal(err)
	}
	if err := src.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Profile(ctx, tables[0], source.ProfileRequest{Operation: source.OpTest}); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, r := range rec.take() {
		ops = append(ops, r.Operation)
	}
	// open, discover (columns, foreign keys, indexes), the same as scan, ping, profile (empty table: aggregate only)
	want := "test discover discover discover scan scan scan test test"
	if strings.Join(ops, " ") != want {
		t.Fatalf("operations %v; want %s", ops, want)
	}
}

func TestClosedSourceRefuses(t *testing.T) {
	src, err := connect.Open(context.Background(), source.SQLite, newSQLite(t, `CREATE TABLE t (a INTEGER)`), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := src.Ping(context.Background()); !source.IsReason(err, source.ReasonClosed) {
		t.Fatalf("Ping after Close: %v", err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCanceledContextIsReported(t *testing.T) {
	src := mustOpen(t, source.SQLite, newSQLite(t, `CREATE TABLE t (a INTEGER)`), source.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := src.Ping(ctx)
	if !source.IsReason(err, source.ReasonCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping with canceled context: %v", err)
	}
}

// TestDialIsUsedForEveryConnection checks the Dial option carries network connections,
// and that a dialer's refusal comes back as unreachable without its message.
func TestDialIsUsedForEveryConnection(t *testing.T) {
	for _, c := range []struct {
		kind source.Kind
		dsn  string
	}{
		{source.Postgres, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"},
		{source.MySQL, "root@tcp(127.0.0.1:3306)/"},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			dials := 0
			var d net.Dialer
			src, err := connect.Open(context.Background(), c.kind, c.dsn, source.Options{
				Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
					dials++
					return d.DialContext(ctx, network, addr)
				},
			})
			if err != nil {
				t.Skipf("%s not reachable: %v", c.kind, err)
			}
			src.Close()
			if dials == 0 {
				t.Fatalf("Dial never called")
			}
			_, err = connect.Open(context.Background(), c.kind, c.dsn, source.Options{
				StatementTimeout: 2 * time.Second,
				Dial: func(context.Context, string, string) (net.Conn, error) {
					return nil, errors.New("refused " + marker)
				},
			})
			if !source.IsReason(err, source.ReasonUnreachable) || strings.Contains(err.Error(), marker) {
				t.Fatalf("refusing dialer: %v", err)
			}
		})
	}
}

// TestSQLiteRegexp checks the REGEXP function Vigia's SQLite connections carry: a search
// (not a full match), case-sensitive, numbers read as text, NULL for a NULL operand, and
// an error (not a silent false) for a pattern that does not compile.
func TestSQLiteRegexp(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var search, anchored, upper, number int
	var null sql.NullInt64
	if err := db.QueryRow(`SELECT 'xabc' REGEXP 'ab', 'xabc' REGEXP '^ab', 'ABC' REGEXP '^[a-z]+$', 1234 REGEXP '^12', NULL REGEXP 'a'`).
		Scan(&search, &anchored, &upper, &number, &null); err != nil {
		t.Fatal(err)
	}
	if search != 1 || anchored != 0 || upper != 0 || number != 1 || null.Valid {
		t.Fatalf("search %d anchored %d upper %d number %d null %v", search, anchored, upper, number, null)
	}
	if err := db.QueryRow(`SELECT 'a' REGEXP '('`).Scan(&search); err == nil {
		t.Fatal("an invalid pattern matched nothing silently")
	}
}
