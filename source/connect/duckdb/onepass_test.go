//go:build duckdb

package duckdb_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

type queryLog struct {
	mu    sync.Mutex
	stmts []string
}

func (l *queryLog) Record(_ context.Context, q source.QueryRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, q.Statement)
}

func (l *queryLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.stmts
	l.stmts = nil
	return out
}

// TestParquetMetadataAnswers checks what the Parquet footers answer without a scan against
// DuckDB's own scan of the same files: the row count the one-pass profile plans with, and
// the per-row-group min/max of a numeric and a temporal column.
func TestParquetMetadataAnswers(t *testing.T) {
	root := t.TempDir()
	w := writer(t)
	salesDir(t, w, root)
	glob := filepath.Join(root, "sales", "**", "*.parquet")
	var metaRows, rows int64
	if err := w.QueryRow("SELECT sum(num_rows) FROM parquet_file_metadata(['" + glob + "'])").Scan(&metaRows); err != nil {
		t.Fatal(err)
	}
	if err := w.QueryRow("SELECT count(*) FROM read_parquet('" + glob + "', hive_partitioning = true)").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if metaRows != rows || rows != 3*(2500+3000) {
		t.Fatalf("metadata says %d rows, count(*) %d", metaRows, rows)
	}
	for _, c := range []struct{ col, typ string }{{"id", "BIGINT"}, {"amount", "DOUBLE"}, {"sold_at", "TIMESTAMP"}} {
		var metaMin, metaMax, scanMin, scanMax string
		if err := w.QueryRow(`SELECT CAST(min(CAST(stats_min_value AS `+c.typ+`)) AS VARCHAR), CAST(max(CAST(stats_max_value AS `+c.typ+`)) AS VARCHAR)
 FROM parquet_metadata(['`+glob+`']) WHERE path_in_schema = '`+c.col+`'`).Scan(&metaMin, &metaMax); err != nil {
			t.Fatal(err)
		}
		if err := w.QueryRow(`SELECT CAST(min("`+c.col+`") AS VARCHAR), CAST(max("`+c.col+`") AS VARCHAR) FROM read_parquet('`+glob+`')`).Scan(&scanMin, &scanMax); err != nil {
			t.Fatal(err)
		}
		if metaMin != scanMin || metaMax != scanMax {
			t.Fatalf("%s: metadata min/max %s/%s, scan %s/%s", c.col, metaMin, metaMax, scanMin, scanMax)
		}
	}
}

// TestParquetProfileOnePass: a Parquet dataset larger than the sample is profiled in one
// read of its rows (the footers' row count, then one aggregate that also draws the
// samples), with the figures DuckDB itself gives and samples of the planned sizes; a CSV
// dataset keeps the aggregate and a separate Bernoulli sample.
func TestParquetProfileOnePass(t *testing.T) {
	root := t.TempDir()
	w := writer(t)
	salesDir(t, w, root)
	exec(t, w, "COPY (SELECT i AS id, 'c' || i || '@example.pt' AS email FROM range(30000) AS r(i)) TO '"+
		filepath.Join(root, "people.csv")+"' (FORMAT csv, HEADER)")
	log := &queryLog{}
	s, err := connect.Open(context.Background(), source.DuckDB, root, source.Options{FilesRoot: root, Recorder: log,
		Files: source.FilesLimits{MemoryLimit: "256MB", Threads: 1, TempDirectory: filepath.Join(root, ".tmp")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	tables, err := s.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sales := find(t, tables, source.FilesSchema, "sales")
	log.take()
	p, err := s.Profile(context.Background(), sales, source.ProfileRequest{SampleSize: 4000})
	if err != nil {
		t.Fatal(err)
	}
	stmts := log.take()
	if len(stmts) != 2 || !strings.Contains(stmts[0], "parquet_file_metadata") || !strings.Contains(stmts[1], "FILTER") ||
		strings.Contains(stmts[1], "USING SAMPLE") {
		t.Fatalf("statements %q, want the footers' row count then one aggregate drawing the samples", stmts)
	}
	if p.RowCount != 16500 {
		t.Fatalf("row count %d", p.RowCount)
	}
	// Bernoulli at 4000/16500 for the masks and the distinct hashes (the distinct sample's
	// default size on so small a table is the sample size): sizes within ±15 %, the masks
	// drawn on the same per-row number as the hashes.
	if p.SampleMethod != source.SampleBernoulli || p.SampleSize < 3400 || p.SampleSize > 4600 {
		t.Fatalf("masks sample %d (%s)", p.SampleSize, p.SampleMethod)
	}
	if p.DistinctSampleMethod != source.SampleBernoulli || p.DistinctSampleSize < 3400 || p.DistinctSampleSize > 4600 {
		t.Fatalf("distinct sample %d (%s)", p.DistinctSampleSize, p.DistinctSampleMethod)
	}
	glob := "read_parquet('" + filepath.Join(root, "sales", "**", "*.parquet") + "', hive_partitioning = true)"
	for _, cp := range p.Columns {
		var nulls int64
		var truth float64
		if err := w.QueryRow(`SELECT count(*) - count("`+cp.Name+`"), count(DISTINCT "`+cp.Name+`") FROM `+glob).Scan(&nulls, &truth); err != nil {
			t.Fatal(err)
		}
		if cp.NullCount != nulls {
			t.Fatalf("%s: %d nulls, DuckDB says %d", cp.Name, cp.NullCount, nulls)
		}
		if cp.Distinct == nil || !cp.Distinct.Estimated || cp.Distinct.CI95[0] > truth || cp.Distinct.CI95[1] < truth {
			t.Fatalf("%s: distinct %+v, exact %v", cp.Name, cp.Distinct, truth)
		}
		if len(cp.Masks) == 0 {
			t.Fatalf("%s: no masks", cp.Name)
		}
	}
	if c := column(t, p, "customer_email"); c.Semantic == nil || c.Semantic.Type != "email" {
		t.Fatalf("customer_email semantic %+v", c.Semantic)
	}
	if c := column(t, p, "amount"); len(c.Quantiles) != source.QuantileCuts || c.Quantiles[0] < 0 || c.Quantiles[len(c.Quantiles)-1] > 124.75 {
		t.Fatalf("amount quantiles %v", c.Quantiles)
	}

	people := find(t, tables, source.FilesSchema, "people.csv")
	if _, err := s.Profile(context.Background(), people, source.ProfileRequest{SampleSize: 4000}); err != nil {
		t.Fatal(err)
	}
	stmts = log.take()
	if len(stmts) != 2 || strings.Contains(stmts[0], "parquet_file_metadata") || !strings.Contains(stmts[1], "USING SAMPLE") {
		t.Fatalf("CSV statements %q, want the aggregate then a Bernoulli sample", stmts)
	}
	if err := os.RemoveAll(filepath.Join(root, ".tmp")); err != nil {
		t.Fatal(err)
	}
}
