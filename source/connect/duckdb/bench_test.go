//go:build duckdb

package duckdb_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/vigia-data/vigia/source"
)

// BenchmarkParquetProfile compares, on one Parquet file of VIGIA_BENCH_ROWS rows (default
// 1,000,000; the figure is 5,000,000) shaped like the bench table, Source.Profile at
// depth standard (the footers' row count, then one scan computing the aggregate and drawing
// the samples) with a hand-written DuckDB
// aggregate of the same statistics (count, null counts, min/max, text lengths, approximate
// distinct counts) in the same run. Report the ratio of the two ns/op:
//
//	go test -tags duckdb -run '^$' -bench ParquetProfile -benchtime 5x ./source/connect/duckdb/
func BenchmarkParquetProfile(b *testing.B) {
	rows := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("VIGIA_BENCH_ROWS")); err == nil && v > 0 {
		rows = v
	}
	root := b.TempDir()
	w := writer(b)
	if _, err := w.Exec(fmt.Sprintf(`COPY (SELECT i AS id, 'c' || (i %% 200000) || '@example.pt' AS email,
 CASE WHEN i %% 50 = 0 THEN NULL ELSE (i * 7919) %% 100000 / 100.0 END AS amount,
 TIMESTAMP '2024-01-01' + INTERVAL (i %% 86400) SECOND AS created_at,
 'PT' || lpad(CAST(i %% 1000000 AS VARCHAR), 7, '0') AS code, i %% 7 = 0 AS flag
 FROM range(%d) AS r(i)) TO '%s' (FORMAT parquet)`, rows, filepath.Join(root, "bench.parquet"))); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s, err := connectOpen(root)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tables, err := s.Discover(ctx)
	if err != nil || len(tables) != 1 {
		b.Fatalf("%v %d", err, len(tables))
	}
	hand := `SELECT count(*), count(id), min(id), max(id), count(email), min(length(email)), max(length(email)), avg(length(email)),
 count(amount), min(amount), max(amount), count(created_at), min(created_at), max(created_at),
 count(code), min(length(code)), max(length(code)), avg(length(code)), count(flag),
 approx_count_distinct(id), approx_count_distinct(email), approx_count_distinct(amount), approx_count_distinct(created_at),
 approx_count_distinct(code) FROM "files"."bench.parquet"`
	b.Run("profile", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Profile(ctx, tables[0], source.ProfileRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand_aggregate", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.QueryRows(ctx, hand, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
