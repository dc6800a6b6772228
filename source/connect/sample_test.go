package connect_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// newPostgres creates a fresh database holding stmts and returns its DSN.
func newPostgres(tb testing.TB, stmts ...string) string {
	tb.Helper()
	admin, err := sql.Open("pgx", pgAdminDSN)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	if err := admin.Ping(); err != nil {
		tb.Skipf("postgres not reachable: %v", err)
	}
	name := "src_test_" + randomSuffix(tb)
	mustExec(tb, admin, "CREATE DATABASE "+name)
	tb.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	dsn := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		mustExec(tb, db, s)
	}
	return dsn
}

// TestPostgresDistinctIsEstimatedOnRows checks the case a block sample gets wrong: a
// column clustered on disk (a load date, 500 consecutive rows a day) looks, in whole
// pages, like a column of few values. The distinct estimates come from a row-level
// sample of hashes — random keys where the table has an integer key, TABLESAMPLE
// BERNOULLI where it has none — and hold the truth; masks still come from pages.
func TestPostgresDistinctIsEstimatedOnRows(t *testing.T) {
	const rows, days = 200000, 400
	fill := `SELECT g, date '2020-01-01' + (g - 1) / 500, md5(g::text), (g * 7919) % 1000 FROM generate_series(1, 200000) g`
	dsn := newPostgres(t,
		`CREATE TABLE with_key (id bigint PRIMARY KEY, load_day date, ukey text, code integer)`,
		`INSERT INTO with_key `+fill,
		`CREATE TABLE without_key (id bigint, load_day date, ukey text, code integer)`,
		`INSERT INTO without_key `+fill,
		`ANALYZE`)
	rec := &recorder{}
	src := mustOpen(t, source.Postgres, dsn, source.Options{Recorder: rec})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table, method string
	}{{"with_key", source.SampleKeys}, {"without_key", source.SampleBernoulli}} {
		t.Run(c.table, func(t *testing.T) {
			rec.take()
			p, err := src.Profile(context.Background(), findTable(t, tables, c.table), source.ProfileRequest{SampleSize: 1000, DistinctSampleSize: 5000})
			if err != nil {
				t.Fatal(err)
			}
			if p.SampleMethod != source.SampleTableSample || p.DistinctSampleMethod != c.method {
				t.Fatalf("methods %s (masks), %s (distinct); want tablesample, %s", p.SampleMethod, p.DistinctSampleMethod, c.method)
			}
			if p.DistinctSampleSize < 4000 || p.DistinctSampleSize > 6000 {
				t.Errorf("distinct sample of %d rows; want about 5000", p.DistinctSampleSize)
			}
			for col, truth := range map[string]float64{"load_day": days, "ukey": rows, "code": 1000, "id": rows} {
				d := findProfile(t, p, col).Distinct
				if d == nil || !d.Estimated || d.SampleSize < 4000 {
					t.Fatalf("%s distinct %+v", col, d)
				}
				t.Logf("%s: %v [%v, %v] on %d values", col, d.Value, d.CI95[0], d.CI95[1], d.SampleSize)
				if truth < d.CI95[0] || truth > d.CI95[1] {
					t.Errorf("%s: interval %v does not hold the true %v", col, d.CI95, truth)
				}
			}
			if m := findProfile(t, p, "ukey").Masks; len(m) == 0 {
				t.Errorf("no masks")
			}
			log := rec.take()
			if len(log) != 3 || !strings.Contains(log[2].Statement, "hashtextextended") {
				for _, r := range log {
					t.Logf("%.200s", r.Statement)
				}
				t.Fatalf("%d statements; want the aggregate, the page sample and a sample of hashes", len(log))
			}
		})
	}
}

// TestSQLiteOneRowSampleFeedsBoth checks that without block sampling one row-level
// sample serves the distinct estimates whole and the masks on a random subset of about
// SampleSize of its rows.
func TestSQLiteOneRowSampleFeedsBoth(t *testing.T) {
	path := newSQLite(t, `CREATE TABLE t (id INTEGER PRIMARY KEY, email TEXT, grp INTEGER)`,
		`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 60000)
		 INSERT INTO t SELECT i, 'user' || (i % 20000) || '@exemplo.pt', i % 37 FROM g`)
	rec := &recorder{}
	src := mustOpen(t, source.SQLite, path, source.Options{Recorder: rec})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	p, err := src.Profile(context.Background(), tables[0], source.ProfileRequest{SampleSize: 500, DistinctSampleSize: 2500})
	if err != nil {
		t.Fatal(err)
	}
	if log := rec.take(); len(log) != 2 {
		t.Fatalf("%d statements; want the aggregate and one sample", len(log))
	}
	if p.DistinctSampleMethod != source.SampleKeys || p.SampleMethod != source.SampleKeys {
		t.Fatalf("methods %s, %s; want keys", p.SampleMethod, p.DistinctSampleMethod)
	}
	if p.DistinctSampleSize < 2000 || p.SampleSize < 300 || p.SampleSize > 700 {
		t.Fatalf("masks on %d rows, distinct on %d; want about 500 and 2500", p.SampleSize, p.DistinctSampleSize)
	}
	email := findProfile(t, p, "email")
	if email.Semantic == nil || email.Semantic.Type != "email" || email.Semantic.SampleSize != p.SampleSize || !email.Semantic.Estimated {
		t.Errorf("email semantic %+v", email.Semantic)
	}
	if d := email.Distinct; d == nil || d.SampleSize != p.DistinctSampleSize || 20000 < d.CI95[0] || 20000 > d.CI95[1] {
		t.Errorf("email distinct %+v", d)
	}
	if d := findProfile(t, p, "grp").Distinct; d == nil || d.CI95[0] > 37 || d.CI95[1] < 37 {
		t.Errorf("grp distinct %+v", d)
	}
}

// TestSampleSQLReplaysProfile checks the seam the benchmark replays the sample phase
// with: the statements are the ones Profile sends.
func TestSampleSQLReplaysProfile(t *testing.T) {
	table := source.Table{Schema: "public", Name: "t", Kind: source.TableKindTable, Columns: []source.Column{
		{Name: "id", DataType: "bigint", PrimaryKey: true}, {Name: "v", DataType: "text"}}}
	lo, hi := 1.0, 1e6
	p := &source.TableProfile{RowCount: 1_000_000, Columns: []source.ColumnProfile{{Name: "id", Min: &lo, Max: &hi}, {Name: "v"}}}
	masks, dist, err := connect.SampleSQL(source.Postgres, table, p, source.ProfileRequest{SampleSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(masks, "TABLESAMPLE SYSTEM") || !strings.Contains(dist, `hashtextextended("v"::text, 0)`) || !strings.Contains(dist, `WHERE "id" IN (`) {
		t.Fatalf("masks %q\ndistinct %.200q", masks, dist)
	}
	if _, _, err := connect.SampleSQL("nosuchkind", table, p, source.ProfileRequest{}); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

// TestPostgresSessionRunsWithoutJIT checks the session setting every profile statement
// runs under (see disableJIT).
func TestPostgresSessionRunsWithoutJIT(t *testing.T) {
	src := mustOpen(t, source.Postgres, newPostgres(t), source.Options{})
	n, ok, err := src.QueryInt(context.Background(), "SELECT CASE WHEN current_setting('jit') = 'off' THEN 1 ELSE 0 END")
	if err != nil || !ok || n != 1 {
		t.Fatalf("jit off = %d, %v, %v; want 1", n, ok, err)
	}
}
