package connect_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// newPostgres creates a fresh database holding stmts and returns its DSN.
func newPostgres(tb testing.TB, stmts ...string) string {
	tb.Helper()
	dsn, db := freshPostgres(tb)
	for _, s := range stmts {
		mustExec(tb, db, s)
	}
	return dsn
}

// newMySQL creates a fresh MariaDB/MySQL database holding stmts and returns its DSN.
func newMySQL(tb testing.TB, stmts ...string) string {
	tb.Helper()
	dsn, db := freshMySQL(tb, "")
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
	lo, hi := vigia.Decimal("1"), vigia.Decimal("1000000")
	p := &source.TableProfile{RowCount: 1_000_000, Columns: []source.ColumnProfile{{Name: "id", Min: &lo, Max: &hi}, {Name: "v"}}}
	masks, dist, err := connect.SampleSQL(source.Postgres, table, p, source.ProfileRequest{SampleSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(masks, "TABLESAMPLE SYSTEM") || !strings.Contains(dist, `hashtextextended("v", 0)`) || !strings.Contains(dist, `WHERE "id" IN (`) {
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

// TestDistinctHashesWholeValues checks that the distinct estimates see values whole: two
// long texts that share their first sampleValueMax characters are two values, and so are
// two bigints that hashint8extended would fold onto the same 32 bits (i·2³² + i folds to
// 0 for every i). Both on a table read whole (exact) and on a sample (estimated).
func TestDistinctHashesWholeValues(t *testing.T) {
	const rows = 5000
	prefix := strings.Repeat("x", 300)
	pg := newPostgres(t,
		`CREATE TABLE wide (folded bigint, long_text text, amount numeric(10,2), ratio real, flag boolean, born date)`,
		`INSERT INTO wide SELECT (g::bigint << 32) | g, '`+prefix+`' || g, g / 100.0, g::real, g % 2 = 0, date '2000-01-01' + g
		 FROM generate_series(1, 5000) g`,
		`ANALYZE`)
	lite := newSQLite(t, `CREATE TABLE wide (folded INTEGER, long_text TEXT, amount REAL, ratio REAL, flag INTEGER, born TEXT)`,
		`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 5000)
		 INSERT INTO wide SELECT (i << 32) | i, '`+prefix+`' || i, i / 100.0, i * 1.0, i % 2 = 0, date('2000-01-01', '+' || i || ' days') FROM g`)
	maria := newMySQL(t, `CREATE TABLE wide (folded bigint, long_text text, amount decimal(10,2), ratio double, flag boolean, born date)`,
		`CREATE TABLE digits (d int)`, `INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)`,
		`INSERT INTO wide SELECT (i << 32) | i, CONCAT('`+prefix+`', i), i / 100.0, i, i % 2 = 0, DATE_ADD('2000-01-01', INTERVAL i DAY)
		 FROM (SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d AS i FROM digits a, digits b, digits c, digits e) g WHERE i <= 5000`)
	truth := map[string]float64{"folded": rows, "long_text": rows, "amount": rows, "ratio": rows, "flag": 2, "born": rows}
	for _, c := range []struct {
		kind source.Kind
		dsn  string
	}{{source.Postgres, pg}, {source.SQLite, lite}, {source.MySQL, maria}} {
		t.Run(string(c.kind), func(t *testing.T) {
			src := mustOpen(t, c.kind, c.dsn, source.Options{})
			tables, err := src.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, sample := range []int{10000, 500} {
				p, err := src.Profile(context.Background(), findTable(t, tables, "wide"), source.ProfileRequest{SampleSize: sample, DistinctSampleSize: 2500})
				if err != nil {
					t.Fatal(err)
				}
				for col, want := range truth {
					d := findProfile(t, p, col).Distinct
					if d == nil {
						t.Fatalf("sample %d: %s has no distinct estimate", sample, col)
					}
					if sample >= rows && (d.Estimated || d.Value != want) {
						t.Errorf("table read whole: %s distinct %+v, want exactly %v", col, d, want)
					}
					if sample < rows && (want < d.CI95[0] || want > d.CI95[1]) {
						t.Errorf("sample of %d: %s interval %v does not hold the true %v", p.DistinctSampleSize, col, d.CI95, want)
					}
				}
			}
		})
	}
}

// TestPostgresInfiniteDatesGiveFiniteExtremes checks that a date or timestamp column
// holding infinity or -infinity reports the extremes among its finite values, asked in a
// statement of their own only when an infinity came back from the aggregate.
func TestPostgresInfiniteDatesGiveFiniteExtremes(t *testing.T) {
	dsn := newPostgres(t,
		`CREATE TABLE validade (id int PRIMARY KEY, ate date, desde timestamptz, criado timestamp)`,
		`INSERT INTO validade VALUES (1, 'infinity', '-infinity', '2024-01-01 10:00'), (2, '2030-06-30', '2020-01-01 00:00+00', '2024-03-01 10:00'),
		 (3, '2025-01-31', 'infinity', '2024-02-01 10:00'), (4, NULL, '2021-05-05 12:00+00', NULL)`)
	rec := &recorder{}
	src := mustOpen(t, source.Postgres, dsn, source.Options{Recorder: rec})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	p, err := src.Profile(context.Background(), findTable(t, tables, "validade"), source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) string { return s[:10] }
	for col, want := range map[string][2]string{"ate": {"2025-01-31", "2030-06-30"}, "desde": {"2020-01-01", "2021-05-05"}, "criado": {"2024-01-01", "2024-03-01"}} {
		c := findProfile(t, p, col)
		if c.MinTime == nil || c.MaxTime == nil || day(c.MinTime.Format("2006-01-02")) != want[0] || day(c.MaxTime.Format("2006-01-02")) != want[1] {
			t.Errorf("%s: min %v max %v, want %v", col, c.MinTime, c.MaxTime, want)
		}
	}
	log := rec.take()
	if len(log) < 2 || !strings.Contains(log[1].Statement, "isfinite") || strings.Contains(log[0].Statement, "isfinite") ||
		strings.Contains(log[1].Statement, `"criado"`) {
		for _, r := range log {
			t.Logf("%.300s", r.Statement)
		}
		t.Fatalf("want the aggregate without filters, then the finite extremes of ate and desde only")
	}
}

// TestRescanningAnUnchangedTableMeasuresTheSame checks deterministic sampling: two
// profiles of an unchanged table draw the same sample (the same keys; TABLESAMPLE
// REPEATABLE on Postgres; RAND(seed) on MariaDB) and report the same distinct estimates
// and masks, so that a metric measured on a sample does not move between scans of
// unchanged data. Another table draws another sample.
func TestRescanningAnUnchangedTableMeasuresTheSame(t *testing.T) {
	fill := `SELECT g, md5((g % 30000)::text), (g * 7919) % 5000 FROM generate_series(1, 120000) g`
	pg := newPostgres(t,
		`CREATE TABLE with_key (id bigint PRIMARY KEY, ukey text, code integer)`, `INSERT INTO with_key `+fill,
		`CREATE TABLE without_key (id bigint, ukey text, code integer)`, `INSERT INTO without_key `+fill, `ANALYZE`)
	my := newMySQL(t, `CREATE TABLE without_key (id bigint, ukey varchar(40), code integer)`,
		`INSERT INTO without_key SELECT seq, md5(seq % 20000), (seq * 7919) % 5000 FROM seq_1_to_60000`)
	cases := []struct {
		kind         source.Kind
		dsn, table   string
		method       string
		sampleStatem int // the statement that draws the distinct sample
	}{
		{source.Postgres, pg, "with_key", source.SampleKeys, 2},
		{source.Postgres, pg, "without_key", source.SampleBernoulli, 2},
		{source.MySQL, my, "without_key", source.SampleBernoulli, 1},
	}
	for _, c := range cases {
		t.Run(string(c.kind)+"/"+c.table, func(t *testing.T) {
			rec := &recorder{}
			src := mustOpen(t, c.kind, c.dsn, source.Options{Recorder: rec})
			tables, err := src.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tbl := findTable(t, tables, c.table)
			req := source.ProfileRequest{SampleSize: 1000, DistinctSampleSize: 4000}
			var stmts []string
			var estimates []map[string]source.Estimate
			for range 2 {
				rec.take()
				p, err := src.Profile(context.Background(), tbl, req)
				if err != nil {
					t.Fatal(err)
				}
				if p.DistinctSampleMethod != c.method {
					t.Fatalf("distinct sample method %s; want %s", p.DistinctSampleMethod, c.method)
				}
				log := rec.take()
				if len(log) <= c.sampleStatem {
					t.Fatalf("%d statements", len(log))
				}
				stmts = append(stmts, log[c.sampleStatem].Statement)
				est := map[string]source.Estimate{}
				for _, col := range []string{"ukey", "code"} {
					d := findProfile(t, p, col).Distinct
					if d == nil || !d.Estimated {
						t.Fatalf("%s distinct %+v", col, d)
					}
					est[col] = *d
				}
				estimates = append(estimates, est)
			}
			if estimates[0]["ukey"] != estimates[1]["ukey"] || estimates[0]["code"] != estimates[1]["code"] {
				t.Fatalf("the same table measured twice: %+v then %+v", estimates[0], estimates[1])
			}
			if c.method == source.SampleKeys && stmts[0] != stmts[1] {
				t.Fatal("the key sample drew other keys on an unchanged table")
			}
		})
	}
	a := connect.SampleSeed(source.Table{Schema: "public", Name: "with_key"})
	b := connect.SampleSeed(source.Table{Schema: "public", Name: "without_key"})
	if a == b || a != connect.SampleSeed(source.Table{Schema: "public", Name: "with_key"}) {
		t.Fatalf("seeds %d, %d", a, b)
	}
}
