package connect_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/source"
)

// The profile's equi-depth quantiles are checked against each database's own answer on
// skewed data (log-normal-like amounts, power-law quantities, timestamps crowding
// towards the end of the year): percentile_cont where the database has it, sorted values
// read by OFFSET where it does not (SQLite).

// quantileProbs are the probabilities of the profile's cut points.
func quantileProbs() []float64 {
	out := make([]float64, source.QuantileCuts)
	for i := range out {
		out[i] = float64(i) / float64(source.QuantileCuts-1)
	}
	return out
}

// closeTo compares two quantiles relative to the column's spread.
func closeTo(got, want, spread float64) bool {
	return math.Abs(got-want) <= 1e-6*math.Max(1, spread)
}

func profileOf(t *testing.T, kind source.Kind, dsn, table string) *source.TableProfile {
	t.Helper()
	src := mustOpen(t, kind, dsn, source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := src.Profile(context.Background(), findTable(t, tables, table), source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func checkQuantiles(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != source.QuantileCuts || len(want) != source.QuantileCuts {
		t.Fatalf("%s: %d quantiles, the database %d (want %d)", what, len(got), len(want), source.QuantileCuts)
	}
	spread := want[len(want)-1] - want[0]
	for i := range got {
		if !closeTo(got[i], want[i], spread) {
			t.Errorf("%s: quantile %d/%d is %v, the database says %v", what, i, source.QuantileCuts-1, got[i], want[i])
		}
	}
	// Skewed data: the median sits well below the middle of the range.
	if mid := (want[0] + want[len(want)-1]) / 2; want[source.QuantileCuts/2] >= mid && !strings.Contains(what, "created") {
		t.Fatalf("%s: the fixture is not skewed (median %v, mid-range %v)", what, want[source.QuantileCuts/2], mid)
	}
}

func TestQuantilesMatchPostgresPercentileCont(t *testing.T) {
	fill := func(n int) string {
		return `SELECT g, round(exp(4 * random() * random())::numeric * 10, 2), 1 + floor(1000 * power(random(), 4))::int,
			timestamptz '2024-01-01 00:00:00+00' + interval '1 second' * floor(31536000 * sqrt(random()))
			FROM generate_series(1, ` + strconv.Itoa(n) + `) g`
	}
	dsn := newPostgres(t, `SELECT setseed(0.16)`,
		`CREATE TABLE small (id int PRIMARY KEY, amount numeric(12,2), qty int, created timestamptz)`,
		`INSERT INTO small `+fill(6000),
		`CREATE TABLE big (id int PRIMARY KEY, amount numeric(12,2), qty int, created timestamptz)`,
		`INSERT INTO big `+fill(120000), `ANALYZE`)
	_, db := reopen(t, "pgx", dsn)
	probs := make([]string, 0, source.QuantileCuts)
	for _, p := range quantileProbs() {
		probs = append(probs, strconv.FormatFloat(p, 'f', -1, 64))
	}
	truth := func(table, expr string) []float64 {
		var arr string
		if err := db.QueryRow(`SELECT percentile_cont(ARRAY[` + strings.Join(probs, ",") + `]) WITHIN GROUP (ORDER BY ` + expr + `)::text FROM ` + table).Scan(&arr); err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, s := range strings.Split(strings.Trim(arr, "{}"), ",") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f)
		}
		return out
	}
	cols := map[string]string{"amount": "amount", "qty": "qty", "created": "extract(epoch FROM created)"}

	// A table within the sample: the quantiles are the database's own.
	p := profileOf(t, source.Postgres, dsn, "small")
	for col, expr := range cols {
		checkQuantiles(t, "small."+col, findProfile(t, p, col).Quantiles, truth("small", expr))
	}
	if q := findProfile(t, p, "id").Quantiles; len(q) != source.QuantileCuts || q[0] != 1 || q[len(q)-1] != 6000 {
		t.Fatalf("id quantiles %v", q)
	}

	// A table larger than the sample: each cut point's rank in the whole table is within
	// a few points of its probability.
	p = profileOf(t, source.Postgres, dsn, "big")
	for col, expr := range cols {
		q := findProfile(t, p, col).Quantiles
		if len(q) != source.QuantileCuts {
			t.Fatalf("big.%s: %d quantiles", col, len(q))
		}
		for i, prob := range quantileProbs()[1 : source.QuantileCuts-1] {
			var below, at float64
			if err := db.QueryRow(`SELECT avg((`+expr+` < $1)::int), avg((`+expr+` <= $1)::int) FROM big`, q[i+1]).Scan(&below, &at); err != nil {
				t.Fatal(err)
			}
			// With ties (qty) the cut point covers a step of the CDF: prob must fall in it.
			if prob < below-0.03 || prob > at+0.03 {
				t.Errorf("big.%s: cut point %d (%v) holds ranks %.3f–%.3f of the table, want about %.2f", col, i+1, q[i+1], below, at, prob)
			}
		}
	}
}

func TestQuantilesMatchMariaDBPercentileCont(t *testing.T) {
	dsn, db := freshMySQL(t, "")
	var version string
	if err := db.QueryRow(`SELECT VERSION()`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToLower(version), "mariadb") {
		t.Skip("PERCENTILE_CONT is MariaDB's; server is " + version)
	}
	mustExec(t, db, `CREATE TABLE m (id int PRIMARY KEY, amount decimal(12,2), qty int, created datetime)`)
	insertSkewed(t, db, "m", 5000)
	for col, expr := range map[string]string{"amount": "amount", "qty": "qty", "created": "TIMESTAMPDIFF(SECOND, '2024-01-01 00:00:00', created)"} {
		var want []float64
		for _, prob := range quantileProbs() {
			var f float64
			q := fmt.Sprintf(`SELECT DISTINCT PERCENTILE_CONT(%v) WITHIN GROUP (ORDER BY %s) OVER () FROM m`, prob, expr)
			if prob == 1 {
				// percentile_cont(1) is the maximum; MariaDB 10.11 answers it wrongly
				// for large values (10,000,000 for seconds since 2024).
				q = `SELECT MAX(` + expr + `) FROM m`
			}
			if err := db.QueryRow(q).Scan(&f); err != nil {
				t.Fatal(err)
			}
			if col == "created" {
				// MariaDB's PERCENTILE_CONT answers within 8 integer digits: seconds since
				// 2024 fit, since 1970 do not.
				f += float64(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
			}
			want = append(want, f)
		}
		checkQuantiles(t, "mariadb m."+col, findProfile(t, profileOf(t, source.MySQL, dsn, "m"), col).Quantiles, want)
	}
}

func TestQuantilesMatchSQLiteSortedValues(t *testing.T) {
	path := newSQLite(t, `CREATE TABLE s (id INTEGER PRIMARY KEY, amount NUMERIC(12,2), qty INTEGER, created TIMESTAMP)`)
	_, db := reopen(t, "sqlite", path)
	insertSkewed(t, db, "s", 4000)
	n := queryInt(t, db, `SELECT count(*) FROM s`)
	p := profileOf(t, source.SQLite, path, "s")
	for col, expr := range map[string]string{"amount": "amount", "qty": "qty", "created": "CAST(strftime('%s', created) AS INTEGER)"} {
		var want []float64
		for _, prob := range quantileProbs() {
			// percentile_cont's definition over the database's own order: rank prob·(n-1).
			pos := prob * float64(n-1)
			lo := int64(math.Floor(pos))
			at := func(k int64) float64 {
				var f float64
				if err := db.QueryRow(`SELECT `+expr+` FROM s ORDER BY `+expr+` LIMIT 1 OFFSET ?`, k).Scan(&f); err != nil {
					t.Fatal(err)
				}
				return f
			}
			v := at(lo)
			if lo < n-1 {
				v += (pos - float64(lo)) * (at(lo+1) - v)
			}
			want = append(want, v)
		}
		checkQuantiles(t, "sqlite s."+col, findProfile(t, p, col).Quantiles, want)
	}
	if q := findProfile(t, p, "created").Quantiles; q == nil {
		t.Fatal("SQLite text timestamps give no quantiles")
	}

	// Depth basic reads the first rows: no sample of the distribution, no quantiles.
	src := mustOpen(t, source.SQLite, path, source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	basic, err := src.Profile(context.Background(), findTable(t, tables, "s"), source.ProfileRequest{Depth: source.DepthBasic})
	if err != nil {
		t.Fatal(err)
	}
	if basic.SampleMethod != source.SampleFirstRows || findProfile(t, basic, "amount").Quantiles != nil {
		t.Fatalf("depth basic (%s): quantiles %v", basic.SampleMethod, findProfile(t, basic, "amount").Quantiles)
	}
}

// insertSkewed writes n rows of skewed amounts, quantities and timestamps into table
// (id, amount, qty, created), the timestamps as 'YYYY-MM-DD HH:MM:SS' text.
func insertSkewed(t *testing.T, db *sql.DB, table string, n int) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO ` + table + ` VALUES (?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	x := uint64(16)
	rnd := func() float64 { // a small LCG: the fixture is the same on every run
		x = x*6364136223846793005 + 1442695040888963407
		return float64(x>>11) / (1 << 53)
	}
	for k := 1; k <= n; k++ {
		amount := math.Round(math.Exp(4*rnd()*rnd())*1000) / 100
		qty := 1 + int(math.Floor(1000*math.Pow(rnd(), 4)))
		created := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(math.Floor(31536000*math.Sqrt(rnd()))) * time.Second)
		if _, err := stmt.Exec(k, strconv.FormatFloat(amount, 'f', 2, 64), qty, created.Format("2006-01-02 15:04:05")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
