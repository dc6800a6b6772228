package synthetic

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// sqliteSource writes stmts into a fresh SQLite file and opens it as a source.
func sqliteSource(t *testing.T, stmts ...string) source.Source {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	src, err := connect.Open(context.Background(), source.SQLite, path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// TestTimesAreComparedWhateverLayoutSQLiteStored checks the leak checks against a SQLite
// source that stores the same kind of time in several layouts (ISO with T and Z, Unix
// seconds, milliseconds, fractional seconds, plain): a generated row equal to a source
// row is a sample_leak, and a generated extreme equal to a rare real one an
// extreme_leak, whatever the stored text — where comparing the text missed them.
func TestTimesAreComparedWhateverLayoutSQLiteStored(t *testing.T) {
	src := sqliteSource(t,
		`CREATE TABLE ev (id INTEGER PRIMARY KEY, at TIMESTAMP NOT NULL, dia DATE NOT NULL, valor NUMERIC(8,2) NOT NULL)`,
		`INSERT INTO ev VALUES (1, '2024-05-01T10:00:00Z', '2024-05-01T00:00:00', 12.3),
			(2, 1714644000, '2024-05-02', 7),
			(3, 1714730400000, 1714730400, 8.25),
			(4, '2024-05-04 10:00:00.000', '2024-05-04', 9.5),
			(5, '2024-05-05 10:00:00', '2024-05-05', 10)`)
	mk := func(vals ...[]string) *Table {
		prof := &catalog.ColumnProfile{Distinct: &catalog.Estimate{Value: 5, SampleSize: 5}}
		minT, maxT := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), time.Date(2024, 5, 5, 10, 0, 0, 0, time.UTC)
		tp := &catalog.ColumnProfile{Distinct: &catalog.Estimate{Value: 5, SampleSize: 5}, MinTime: &minT, MaxTime: &maxT}
		tb := &Table{Name: "ev", Source: catalog.Dataset{Table: "ev"}, Rows: len(vals),
			Columns: []Column{{Name: "at", SQLType: TypeTimestamp, profile: tp}, {Name: "dia", SQLType: TypeDate, profile: prof},
				{Name: "valor", SQLType: TypeNumeric, Scale: 2, profile: prof}}}
		tb.Values, tb.Nulls = make([][]string, 3), make([][]bool, 3)
		for _, row := range vals {
			for c, v := range row {
				tb.Values[c] = append(tb.Values[c], v)
				tb.Nulls[c] = append(tb.Nulls[c], false)
			}
		}
		return tb
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		row  []string
	}{
		{"iso with T and Z", []string{"2024-05-01 10:00:00", "2024-05-01", "12.30"}},
		{"unix seconds", []string{"2024-05-02 10:00:00", "2024-05-02", "7.00"}},
		{"unix milliseconds", []string{"2024-05-03 10:00:00", "2024-05-03", "8.25"}},
		{"fractional seconds", []string{"2024-05-04 10:00:00", "2024-05-04", "9.50"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := mk([]string{"2023-01-01 00:00:00", "2023-01-01", "1.00"}, tc.row, []string{"2023-02-01 00:00:00", "2023-02-01", "2.00"})
			ev, err := checkPrivacy(ctx, src, tb, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ev.PrivacyVerdict != VerdictFail || ev.Findings[0].Key != KeySampleLeak || ev.Findings[0].Params["source_rows"] != int64(1) {
				t.Fatalf("a generated row equal to a source row: %+v", ev)
			}
		})
	}
	t.Run("no leak", func(t *testing.T) {
		tb := mk([]string{"2024-05-01 10:00:01", "2024-05-01", "12.30"}, []string{"2024-05-02 10:00:00", "2024-05-02", "7.01"})
		ev, err := checkPrivacy(ctx, src, tb, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ev.Findings {
			if f.Key == KeySampleLeak {
				t.Fatalf("rows one second or one cent away leak: %+v", ev)
			}
		}
	})
	t.Run("extreme", func(t *testing.T) {
		// The real minimum, stored as ISO text with T and Z, held by one row.
		tb := mk([]string{"2024-05-01 10:00:00", "2023-01-01", "1.00"}, []string{"2024-05-03 00:00:00", "2023-01-02", "2.00"})
		ev, err := checkPrivacy(ctx, src, tb, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range ev.Findings {
			if f.Key == KeyExtremeLeak && f.Params["column"] == "at" && f.Params["bound"] == "min" && f.Params["source_rows"] == int64(1) {
				found = true
			}
		}
		if !found {
			t.Fatalf("the real minimum time generated again: %+v", ev.Findings)
		}
	})
}

func TestCanonicalReadsTheSourcesText(t *testing.T) {
	ts, num, day := Column{SQLType: TypeTimestamp}, Column{SQLType: TypeNumeric}, Column{SQLType: TypeDate}
	for _, pair := range [][3]any{
		{ts, "2024-05-01 10:00:00", "2024-05-01T10:00:00Z"},
		{ts, "2024-05-01 10:00:00", "2024-05-01T12:00:00+02:00"},
		{ts, "2024-05-01 10:00:00", "2024-05-01 10:00:00+00"},
		{ts, "2024-05-01 10:00:00", "1714557600"},
		{num, "12.30", "12.3"},
		{num, "7", "7.00"},
		{day, "2024-05-01", "2024-05-01T00:00:00Z"},
	} {
		col := pair[0].(Column)
		if a, b := canonical(col, pair[1].(string)), canonical(col, pair[2].(string)); a != b {
			t.Errorf("%s: %q → %s, %q → %s", col.SQLType, pair[1], a, pair[2], b)
		}
	}
	if canonical(ts, "2024-05-01 10:00:00") == canonical(ts, "2024-05-01 10:00:01") {
		t.Fatal("two times a second apart are one")
	}
}

// countingSource counts the lookups and the values they carry.
type countingSource struct {
	source.Source
	lookups, values int
}

func (c *countingSource) QueryRows(ctx context.Context, stmt string, maxRows int) ([][]*string, error) {
	c.lookups++
	c.values += strings.Count(stmt, "@")
	return c.Source.QueryRows(ctx, stmt, maxRows)
}

// TestPersonalDataRedrawLooksUpOnlyNewValues: generated emails the source holds are drawn
// again and only the new values are looked up; a value a test hook injected stays and is
// the pii_leak count.
func TestPersonalDataRedrawLooksUpOnlyNewValues(t *testing.T) {
	src := &countingSource{Source: sqliteSource(t,
		`CREATE TABLE p (id INTEGER PRIMARY KEY, email TEXT)`,
		`INSERT INTO p VALUES (1, 'ana@real.pt'), (2, 'rui@real.pt'), (3, 'rui@real.pt'), (4, 'eva@real.pt')`)}
	col := Column{Name: "email", SQLType: TypeText, Semantic: "email", PII: true}
	tb := &Table{Name: "p", Source: catalog.Dataset{Table: "p"}, Columns: []Column{col}, Rows: 200}
	tb.Values, tb.Nulls = make([][]string, 1), make([][]bool, 1)
	generateColumn(tb, 0, 1, nil, []Injection{{Column: "email", Value: "rui@real.pt"}})
	tb.Values[0][1], tb.Values[0][2] = "ana@real.pt", "eva@real.pt" // drawn by chance: someone's
	found, err := redrawPII(context.Background(), src, tb, 1)
	if err != nil {
		t.Fatal(err)
	}
	if found[0] != 2 {
		t.Fatalf("pii_leak source rows %d, want 2 (the injected value, held by two rows)", found[0])
	}
	if tb.Values[0][0] != "rui@real.pt" || tb.Values[0][1] == "ana@real.pt" || tb.Values[0][2] == "eva@real.pt" {
		t.Fatalf("rows 0-2 after the redraw: %v", tb.Values[0][:3])
	}
	// Round 0 looks up the ~200 distinct values, round 1 only the two drawn again.
	if src.lookups != 2 || src.values > 202 {
		t.Fatalf("%d lookups carrying %d values", src.lookups, src.values)
	}
}

// TestPostgresTimesWithTimeZoneAreComparedAsInstants: a source whose DSN sets a session
// time zone still finds a generated UTC time equal to a timestamptz it holds.
func TestPostgresTimesWithTimeZoneAreComparedAsInstants(t *testing.T) {
	admin, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("i16_synth_tz_%d", time.Now().UnixNano())
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Skipf("no Postgres: %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`) })
	dsn := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`CREATE TABLE ev (id int PRIMARY KEY, at timestamptz NOT NULL, n int NOT NULL)`,
		`INSERT INTO ev VALUES (1, '2024-05-01 10:00:00+00', 1), (2, '2024-05-02 10:00:00+00', 2)`} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	src, err := connect.Open(context.Background(), source.Postgres, dsn+"&timezone=Asia/Tokyo", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	prof := &catalog.ColumnProfile{Distinct: &catalog.Estimate{Value: 2, SampleSize: 2}}
	tb := &Table{Name: "ev", Source: catalog.Dataset{Table: "ev", Schema: "public"}, Rows: 2,
		Columns: []Column{{Name: "at", SQLType: TypeTimestamp, DataType: "timestamp with time zone", profile: prof},
			{Name: "n", SQLType: TypeInteger, profile: prof}},
		Values: [][]string{{"2024-05-01 10:00:00", "2024-05-02 19:00:00"}, {"1", "2"}}, Nulls: [][]bool{{false, false}, {false, false}}}
	ev, err := checkPrivacy(context.Background(), src, tb, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Row 1 is the source's first row; row 2 is the second row's time in Tokyo, read as UTC: no match.
	if len(ev.Findings) == 0 || ev.Findings[0].Key != KeySampleLeak || ev.Findings[0].Params["source_rows"] != int64(1) {
		t.Fatalf("%+v", ev)
	}
}

// TestSampleLeakCountsOnlyRareCombinations: a generated row equal to a combination a
// whole group of source rows shares (KThreshold or more) singles nobody out; one equal to
// a combination held by fewer is a sample_leak counting those rows.
func TestSampleLeakCountsOnlyRareCombinations(t *testing.T) {
	src := sqliteSource(t,
		`CREATE TABLE l (id INTEGER PRIMARY KEY, qtd INTEGER NOT NULL, preco NUMERIC(8,2) NOT NULL)`,
		`INSERT INTO l (qtd, preco) VALUES (2, 9.99), (2, 9.99), (2, 9.99), (2, 9.99), (2, 9.99), (2, 9.99),
			(7, 123.45), (7, 123.45), (3, 1.5)`)
	prof := &catalog.ColumnProfile{Distinct: &catalog.Estimate{Value: 3, SampleSize: 9}}
	mk := func(rows ...[2]string) *Table {
		tb := &Table{Name: "l", Source: catalog.Dataset{Table: "l"}, Rows: len(rows),
			Columns: []Column{{Name: "qtd", SQLType: TypeInteger, profile: prof}, {Name: "preco", SQLType: TypeNumeric, Scale: 2, profile: prof}},
			Values:  [][]string{{}, {}}, Nulls: [][]bool{{}, {}}}
		for _, r := range rows {
			for c := range 2 {
				tb.Values[c] = append(tb.Values[c], r[c])
				tb.Nulls[c] = append(tb.Nulls[c], false)
			}
		}
		return tb
	}
	leak := func(tb *Table) int64 {
		ev, err := checkPrivacy(context.Background(), src, tb, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ev.Findings {
			if f.Key == KeySampleLeak {
				return f.Params["source_rows"].(int64)
			}
		}
		return 0
	}
	if n := leak(mk([2]string{"2", "9.99"}, [2]string{"4", "5.00"})); n != 0 {
		t.Fatalf("a combination six source rows share: sample_leak of %d rows", n)
	}
	if n := leak(mk([2]string{"2", "9.99"}, [2]string{"7", "123.45"}, [2]string{"3", "1.50"})); n != 3 {
		t.Fatalf("combinations held by two rows and by one: %d source rows, want 3", n)
	}

	// redrawRare draws the rare rows again (on one column) and leaves the others.
	tb := mk([2]string{"2", "9.99"}, [2]string{"7", "123.45"}, [2]string{"3", "1.50"}, [2]string{"4", "5.00"})
	left, err := redrawRare(context.Background(), src, tb, 1)
	if err != nil {
		t.Fatal(err)
	}
	if left == nil || *left != 0 || leak(tb) != 0 {
		t.Fatalf("after the redraw: %v rows left, table %v", left, tb.Values)
	}
	row := func(r int) [2]string { return [2]string{tb.Values[0][r], tb.Values[1][r]} }
	if row(0) != [2]string{"2", "9.99"} || row(3) != [2]string{"4", "5.00"} || row(1) == [2]string{"7", "123.45"} || row(2) == [2]string{"3", "1.50"} {
		t.Fatalf("rows after the redraw: %v", tb.Values)
	}
	if tb.Values[1][1] != "123.45" && tb.Values[0][1] != "7" {
		t.Fatalf("row 1 changed on both columns: %v", row(1))
	}
}
