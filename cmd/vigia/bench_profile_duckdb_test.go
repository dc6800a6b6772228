//go:build duckdb

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `vigia bench profile --engine duckdb` end to end on a small table: the Parquet file is
// written, every measurement reported, both engines agree; nothing is kept without --keep.
func TestBenchProfileDuckDB(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bench", "profile", "--engine", "duckdb", "--rows", "30000", "--runs", "1",
		"--database", "vigia_bench_cmd_duckdb", "--keep=false", "--dir", dir, "--memory-limit", "256MB", "--threads", "1"}, &out, &errb)
	if code != 0 && code != 4 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	text := out.String()
	for _, want := range []string{"30,000 rows x 20 columns as Parquet", "(a) SELECT count(*)", "(b) hand-written DuckDB aggregate",
		"(d) Source.Profile via the duckdb connector", "(p) Source.Profile of the same rows in Postgres", "memory_limit 256MB",
		"parquet_file_metadata", "20/20 columns agree PASS"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s\n%s", want, text, errb.String())
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.parquet")); len(files) != 0 {
		t.Fatalf("left %v without --keep", files)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
