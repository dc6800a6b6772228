//go:build duckdb

package app_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source/connect/duckdb"
)

// TestDuckDBParquetDirectoryScan is must-show 1 through the real scan path: a directory of
// hive-partitioned Parquet files is one dataset (files.sales, its partition column
// flagged); its row count and null counts are DuckDB's own answers; a partition written
// with a null spike is raised as an anomaly issue on the next scan. A path outside the
// files root is refused, and /connections/types reports the driver built in.
func TestDuckDBParquetDirectoryScan(t *testing.T) {
	root := t.TempDir()
	files := filepath.Join(root, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root, FilesRoot: files})
	ws := env.MustWorkspace(t, "duckdb-scan")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	ctx := app.AsAdmin(context.Background(), ws, "test")

	w, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// writePart writes one partition file of 2000 rows; nullEvery > 0 empties the e-mail of
	// one row in nullEvery.
	part := 0
	writePart := func(nullEvery int) {
		t.Helper()
		dir := filepath.Join(files, "sales", fmt.Sprintf("day=%02d", part+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		email := "'c' || i || '@example.pt'"
		if nullEvery > 0 {
			email = fmt.Sprintf("CASE WHEN i %% %d = 0 THEN NULL ELSE 'c' || i || '@example.pt' END", nullEvery)
		}
		stmt := fmt.Sprintf(`COPY (SELECT %d * 10000 + i AS id, (i %% 300) / 4 AS amount, %s AS customer_email
 FROM range(2000) AS r(i)) TO '%s' (FORMAT parquet)`, part, email, filepath.Join(dir, "part-0.parquet"))
		if _, err := w.Exec(stmt); err != nil {
			t.Fatal(err)
		}
		part++
	}
	writePart(0)

	types := env.Do(t, http.MethodGet, "/api/v1/connections/types", tok, nil)
	if !strings.Contains(string(types.Body), `"kind":"duckdb"`) || !strings.Contains(string(types.Body), duckdb.Version) {
		t.Fatalf("types: %s", types.Body)
	}
	outside := t.TempDir()
	if r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "out", "kind": "duckdb", "dsn": outside}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "connection_failed") || !strings.Contains(string(r.Body), "não a pode ler") ||
		strings.Contains(string(r.Body), outside) {
		// validation.connection_failed.permission_denied in the default language, pt-PT.
		t.Fatalf("a path outside the files root: %d %s", r.Status, r.Body)
	}
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "lake", "kind": "duckdb", "dsn": files})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var conn map[string]any
	r.JSON(t, &conn)
	connID := conn["id"].(string)
	scanNow := func() {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": connID})
		if r.Status != 202 {
			t.Fatalf("trigger: %d %s", r.Status, r.Body)
		}
		var out map[string]any
		r.JSON(t, &out)
		sc, err := env.App.WaitScan(ctx, out["id"].(string), nil)
		if err != nil || sc.Status != scan.StatusSucceeded {
			t.Fatalf("scan %v: %+v", err, sc)
		}
	}
	scanNow()
	var ds []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets?connection_id="+connID, tok, nil).JSON(t, &ds)
	if len(ds) != 1 || ds[0]["schema"] != "files" || ds[0]["table"] != "sales" {
		t.Fatalf("datasets: %v", ds)
	}
	id := ds[0]["id"].(string)
	// Steady days, then one with a null spike in customer_email.
	for i := 0; i < 5; i++ {
		writePart(0)
		scanNow()
	}
	writePart(3)
	scanNow()

	var d map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+id, tok, nil).JSON(t, &d)
	glob := "read_parquet('" + filepath.Join(files, "sales", "**", "*.parquet") + "', hive_partitioning = true)"
	var rows, nulls int64
	if err := w.QueryRow("SELECT count(*), count(*) - count(customer_email) FROM "+glob).Scan(&rows, &nulls); err != nil {
		t.Fatal(err)
	}
	cols := map[string]map[string]any{}
	for _, c := range d["columns"].([]any) {
		cols[c.(map[string]any)["name"].(string)] = c.(map[string]any)
	}
	if p := cols["customer_email"]["profile"].(map[string]any); p["null_count"].(float64) != float64(nulls) || nulls != 667 {
		t.Fatalf("customer_email profile %v, DuckDB says %d nulls", p, nulls)
	}
	if d["row_count"] != float64(rows) || d["row_count_exact"] != true || rows != 14000 {
		t.Fatalf("row count %v (exact %v), DuckDB says %d", d["row_count"], d["row_count_exact"], rows)
	}
	if _, ok := cols["day"]; !ok {
		t.Fatalf("no partition column day: %v", cols)
	}
	var issues []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/issues?limit=500&dataset_id="+id, tok, nil).JSON(t, &issues)
	found := false
	for _, is := range issues {
		found = found || is["type"] == "anomaly" && is["subtype"] == "null_rate" && is["status"] == "open"
	}
	if !found {
		t.Fatalf("no null_rate anomaly: %v", issues)
	}
}
