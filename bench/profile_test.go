package bench_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/source"
)

const adminDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// MustAdmin returns a connection to the local Postgres, skipping the test when there is none.
func MustAdmin(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", adminDSN)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		tb.Skipf("postgres not reachable: %v", err)
	}
	return db
}

// uniqueDatabase returns a fresh database name and drops that database when the test ends,
// whatever RunProfile left behind.
func uniqueDatabase(tb testing.TB, admin *sql.DB) string {
	tb.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	name := "vigia_bench_test_" + hex.EncodeToString(b)
	tb.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	return name
}

func databaseExists(tb testing.TB, admin *sql.DB, name string) bool {
	tb.Helper()
	var ok bool
	if err := admin.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok); err != nil {
		tb.Fatal(err)
	}
	return ok
}

func TestRunProfile(t *testing.T) {
	admin := MustAdmin(t)
	ctx := context.Background()

	t.Run("MeasuresEveryStepAndDropsItsDatabase", func(t *testing.T) {
		t.Parallel() // each subtest has its own database; much of the time is Postgres's
		name := uniqueDatabase(t, admin)
		var progress bytes.Buffer
		// A 1,000-row sample (5% of the table, still drawn by TABLESAMPLE) keeps the
		// in-memory sample work short under the race detector; the distinct estimates'
		// sample is one row in a hundred of the table, no fewer than the masks sample:
		// 1,000 rows, 5% of the table, drawn by random keys.
		rep, err := bench.RunProfile(ctx, bench.ProfileOptions{DSN: adminDSN, Database: name, Rows: 20000, Runs: 1, SampleSize: 1000}, &progress)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Rows != 20000 || rep.Columns != bench.ProfileColumns || !rep.Built {
			t.Fatalf("rows %d, columns %d, built %v", rep.Rows, rep.Columns, rep.Built)
		}
		for name, tm := range map[string]bench.Timing{
			"count": rep.CountStar, "hand": rep.HandAggregate, "hand, JIT off": rep.HandAggregateNoJIT,
			"per-column": rep.PerColumn, "profile": rep.Profile,
			"aggregate": rep.ProfileAggregate, "in-profile aggregate": rep.InProfileAggregate,
			"in-profile sample": rep.InProfileSample, "sample read": rep.SampleRead,
			"masks": rep.MasksSemantic, "distinct read": rep.DistinctSampleRead, "distinct": rep.DistinctEstimation,
			"exact": rep.ExactDistinct,
		} {
			if tm.Median <= 0 || len(tm.Runs) == 0 {
				t.Errorf("%s not measured: %+v", name, tm)
			}
		}
		// One aggregate, one page sample for the masks and one row-level sample for the
		// distinct estimates.
		if rep.ProfileStatements != 3 {
			t.Errorf("profile sent %d statements, want 3", rep.ProfileStatements)
		}
		if rep.SampleMethod != source.SampleTableSample || rep.SampleSize == 0 {
			t.Errorf("sample %d rows by %q", rep.SampleSize, rep.SampleMethod)
		}
		if rep.DistinctSampleMethod != source.SampleKeys || rep.DistinctSampleSize < 800 || rep.DistinctSampleSize > 1200 {
			t.Errorf("distinct sample %d rows by %q", rep.DistinctSampleSize, rep.DistinctSampleMethod)
		}
		if rep.PerColumnStatements <= bench.ProfileColumns {
			t.Errorf("per-column pattern sent %d statements", rep.PerColumnStatements)
		}
		if len(rep.Distinct) != bench.ProfileColumns {
			t.Fatalf("%d distinct checks, want %d", len(rep.Distinct), bench.ProfileColumns)
		}
		for _, c := range rep.Distinct {
			if c.True <= 0 || len(c.Estimates) != 1 {
				t.Errorf("column %s: true %d, %d estimates", c.Column, c.True, len(c.Estimates))
			}
		}
		want := map[string]int64{"id": 20000, "ukey": 20000, "is_active": 2, "category": 5, "status": 4}
		for _, c := range rep.Distinct {
			if w, ok := want[c.Column]; ok && c.True != w {
				t.Errorf("column %s: %d distinct, want %d", c.Column, c.True, w)
			}
		}
		if len(rep.Targets) != 5 {
			t.Fatalf("%d targets, want 5", len(rep.Targets))
		}

		var out bytes.Buffer
		rep.Print(&out)
		for _, s := range []string{"(a) SELECT count(*)", "profile / (b)", "profile / (c)", "masks+semantic / (a)",
			"distinct truth inside CI95", "customer_id", "phone"} {
			if !strings.Contains(out.String(), s) {
				t.Errorf("report lacks %q:\n%s", s, out.String())
			}
		}
		if !strings.Contains(out.String(), "PASS") && !strings.Contains(out.String(), "FAIL") {
			t.Errorf("report has no verdict:\n%s", out.String())
		}
		if strings.Contains(progress.String()+out.String(), "postgres://") {
			t.Error("the DSN leaked into the output")
		}
		if databaseExists(t, admin, name) {
			t.Error("the database the run created is still there without Keep")
		}
	})

	t.Run("ReusesAKeptTableOfTheSameRowCount", func(t *testing.T) {
		t.Parallel()
		name := uniqueDatabase(t, admin)
		o := bench.ProfileOptions{DSN: adminDSN, Database: name, Rows: 500, Runs: 1, Keep: true}
		first, err := bench.RunProfile(ctx, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		second, err := bench.RunProfile(ctx, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !first.Built || second.Built {
			t.Errorf("built first %v, second %v; want true, false", first.Built, second.Built)
		}
		o.Rows = 700
		third, err := bench.RunProfile(ctx, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !third.Built || third.Rows != 700 {
			t.Errorf("another row count: built %v, rows %d", third.Built, third.Rows)
		}
		// A table smaller than the sample is read whole: its distinct counts are exact.
		for _, c := range third.Distinct {
			if c.Inside != 1 || c.Estimates[0].Estimated {
				t.Errorf("column %s: inside %d, estimated %v", c.Column, c.Inside, c.Estimates[0].Estimated)
			}
		}
		if !databaseExists(t, admin, name) {
			t.Error("Keep dropped the database")
		}
	})
}

func TestRunProfileRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    bench.ProfileOptions
	}{
		{"OtherColumnCount", bench.ProfileOptions{Columns: 21}},
		{"NegativeRows", bench.ProfileOptions{Rows: -1}},
		{"NegativeRuns", bench.ProfileOptions{Runs: -2}},
		{"HugeSample", bench.ProfileOptions{SampleSize: 1 << 30}},
		{"SystemDatabase", bench.ProfileOptions{Database: "postgres"}},
		{"QuotedDatabase", bench.ProfileOptions{Database: `x"; DROP`}},
		{"UnparsableDSN", bench.ProfileOptions{DSN: "postgres://%zz", Database: "vigia_bench_never"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bench.RunProfile(context.Background(), tc.o, nil)
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), "%zz") {
				t.Errorf("the error shows the DSN: %v", err)
			}
		})
	}
}

// BenchmarkProfile5M runs the full profile benchmark (5,000,000 rows, 20 columns, medians
// of 3 runs) and prints its report. It takes minutes, so it runs only with VIGIA_BENCH=1;
// the table is kept in database vigia_bench so that the next run skips the build.
func BenchmarkProfile5M(b *testing.B) {
	if os.Getenv("VIGIA_BENCH") != "1" {
		b.Skip("set VIGIA_BENCH=1 to run the 5M-row profile benchmark (minutes)")
	}
	MustAdmin(b)
	var rep bench.ProfileReport
	for b.Loop() {
		var err error
		rep, err = bench.RunProfile(context.Background(), bench.ProfileOptions{DSN: adminDSN, Keep: true}, os.Stderr)
		if err != nil {
			b.Fatal(err)
		}
	}
	rep.Print(os.Stdout)
	b.ReportMetric(rep.ProfileVsHand, "profile/hand")
	b.ReportMetric(rep.ProfileVsPerColumn, "profile/per-column")
	b.ReportMetric(rep.RestVsHand, "sample-phase/hand")
	b.ReportMetric(rep.MasksVsCount, "masks/count")
	b.ReportMetric(rep.Profile.Median.Seconds(), "profile-s")
}
