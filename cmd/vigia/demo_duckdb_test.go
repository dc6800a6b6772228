//go:build duckdb

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/store/storetest"
)

// `vigia demo --pack erp --format parquet` (a build with DuckDB) writes the pack as
// Parquet files under VIGIA_FILES_ROOT/demo/erp, scans them as a duckdb connection and
// prints a token, in one command.
func TestDuckDBDemoParquetCommand(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "demo-test-key")
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--pack", "erp", "--format", "parquet"}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "svc_") || strings.Contains(out.String(), "could not be profiled") {
		t.Fatalf("output:\n%s", out.String())
	}
	files, err := filepath.Glob(filepath.Join(data, "vigia", "files", "demo", "erp", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Parquet files: %v %v", files, err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
