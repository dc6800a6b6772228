//go:build !duckdb

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Without the duckdb build tag, `vigia bench profile --engine duckdb` says the build has no
// DuckDB, and touches nothing.
func TestBenchProfileDuckDBNotBuiltIn(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bench", "profile", "--engine", "duckdb", "--dsn", "postgres://nobody@127.0.0.1:1/x",
		"--dir", t.TempDir() + "/never"}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "this build of vigia has no DuckDB") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	code = run(context.Background(), []string{"bench", "profile", "--engine", "oracle"}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--engine must be postgres or duckdb") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
