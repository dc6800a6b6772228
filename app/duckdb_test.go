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

// TestDuckDBViewLineageToParquetFiles is must-show 3 through the real API and scan path:
// a DuckDB database file whose view joins two Parquet datasets of its directory by
// relative paths is scanned; the view profiles with DuckDB's own row count (its paths
// read in the database file's directory), the file sets it reads are datasets of schema
// files, and the view's parsed column lineage (REST lineage endpoint) reaches columns of
// both. A view naming its files by an absolute path inside the directory links the same
// way; one escaping the files root is refused (permission_denied, the scan's per-dataset
// failure) with no lineage, and the scan still succeeds. The database's declared foreign
// keys show on their columns.
func TestDuckDBViewLineageToParquetFiles(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	files := filepath.Join(root, "files")
	lake := filepath.Join(files, "shop")
	if err := os.MkdirAll(filepath.Join(lake, "orders"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.csv"), []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	escape, err := filepath.Rel(lake, filepath.Join(outside, "secret.csv"))
	if err != nil {
		t.Fatal(err)
	}
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root, FilesRoot: files})
	ws := env.MustWorkspace(t, "duckdb-views")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	ctx := app.AsAdmin(context.Background(), ws, "test")

	w, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	lit := func(p string) string { return "'" + filepath.Join(lake, p) + "'" }
	for _, s := range []string{
		`COPY (SELECT i AS id, i % 3 AS customer_id, i * 1.5 AS amount, 'paid' AS status FROM range(10) r(i)) TO ` + lit("orders/part-0.parquet") + ` (FORMAT parquet)`,
		`COPY (SELECT i + 10 AS id, i % 3 AS customer_id, i * 2.5 AS amount, 'void' AS status FROM range(5) r(i)) TO ` + lit("orders/part-1.parquet") + ` (FORMAT parquet)`,
		`COPY (SELECT i AS id, 'c' || i AS name, 'c' || i || '@mail.pt' AS email FROM range(3) r(i)) TO ` + lit("customers.parquet") + ` (FORMAT parquet)`,
		`ATTACH ` + lit("shop.duckdb") + ` AS shop`, `USE shop`, `SET file_search_path = '` + lake + `'`,
		`CREATE TABLE accounts (id INTEGER PRIMARY KEY, name VARCHAR)`,
		`CREATE TABLE payments (id INTEGER PRIMARY KEY, account_id INTEGER REFERENCES accounts (id))`,
		`CREATE VIEW revenue (order_id, customer, total) AS
			SELECT o.id, c.name, o.amount * 1.23
			FROM read_parquet('orders/*.parquet') AS o
			JOIN 'customers.parquet' AS c ON c.id = o.customer_id
			WHERE o.status <> 'void'`,
		`CREATE VIEW abs_orders AS SELECT id, amount FROM read_parquet(` + lit("orders/*.parquet") + `)`,
		`CREATE VIEW leaked AS SELECT * FROM read_csv('` + escape + `')`,
		`USE memory`, `DETACH shop`,
	} {
		if _, err := w.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "shop", "kind": "duckdb", "dsn": filepath.Join(lake, "shop.duckdb")})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var conn map[string]any
	r.JSON(t, &conn)
	connID := conn["id"].(string)
	r = env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": connID})
	if r.Status != 202 {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	sc, err := env.App.WaitScan(ctx, out["id"].(string), nil)
	if err != nil || sc.Status != scan.StatusSucceeded {
		t.Fatalf("scan %v: %+v", err, sc)
	}
	var list []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets?connection_id="+connID, tok, nil).JSON(t, &list)
	ids := map[string]string{}
	for _, d := range list {
		ids[d["schema"].(string)+"."+d["table"].(string)] = d["id"].(string)
	}
	for _, n := range []string{"main.revenue", "main.abs_orders", "main.leaked", "main.accounts", "main.payments", "files.orders", "files.customers.parquet"} {
		if ids[n] == "" {
			t.Fatalf("no dataset %s among %v", n, ids)
		}
	}
	if len(ids) != 7 {
		t.Fatalf("datasets %v", ids)
	}
	dataset := func(name string) map[string]any {
		t.Helper()
		var d map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+ids[name], tok, nil).JSON(t, &d)
		return d
	}
	if d := dataset("main.revenue"); d["row_count"] != float64(10) || d["last_failure"] != nil {
		t.Fatalf("revenue: rows %v, failure %v", d["row_count"], d["last_failure"])
	}
	if d := dataset("files.orders"); d["row_count"] != float64(15) {
		t.Fatalf("files.orders: rows %v", d["row_count"])
	}
	leaked := dataset("main.leaked")
	if f, _ := leaked["last_failure"].(map[string]any); f == nil || f["code"] != "permission_denied" {
		t.Fatalf("the view escaping the files root: failure %v", leaked["last_failure"])
	}
	// upstream answers the view's parsed upstream: dataset id → its column map as from→to.
	upstream := func(name string) map[string][]string {
		t.Helper()
		var l struct {
			Upstream []struct {
				ID        *string `json:"id"`
				EdgeKinds []string
				ColumnMap []struct {
					From, To string
				} `json:"column_map"`
			} `json:"upstream"`
		}
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+ids[name]+"/lineage", tok, nil).JSON(t, &l)
		got := map[string][]string{}
		for _, u := range l.Upstream {
			if u.ID == nil {
				continue
			}
			got[*u.ID] = []string{}
			for _, p := range u.ColumnMap {
				got[*u.ID] = append(got[*u.ID], p.From+"->"+p.To)
			}
		}
		return got
	}
	want := map[string][]string{
		ids["files.orders"]:            {"id->order_id", "amount->total"},
		ids["files.customers.parquet"]: {"name->customer"},
	}
	if got := upstream("main.revenue"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("revenue's upstream %v, want %v (files.orders %s, customers %s)", got, want, ids["files.orders"], ids["files.customers.parquet"])
	}
	if got, want := upstream("main.abs_orders"), map[string][]string{ids["files.orders"]: {"id->id", "amount->amount"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("abs_orders' upstream %v, want %v", got, want)
	}
	if got := upstream("main.leaked"); len(got) != 0 {
		t.Fatalf("the escaping view has lineage: %v", got)
	}
	var pay struct {
		Columns []struct {
			Name       string `json:"name"`
			References []struct {
				DatasetID *string `json:"dataset_id"`
				Column    *string `json:"column"`
			} `json:"references"`
		} `json:"columns"`
	}
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+ids["main.payments"], tok, nil).JSON(t, &pay)
	found := false
	for _, c := range pay.Columns {
		for _, ref := range c.References {
			found = found || c.Name == "account_id" && ref.DatasetID != nil && *ref.DatasetID == ids["main.accounts"] && ref.Column != nil && *ref.Column == "id"
		}
	}
	if !found {
		t.Fatalf("payments.account_id does not reference accounts.id: %+v", pay.Columns)
	}
}

// TestDuckDBParquetDemoPreset: a build with DuckDB offers each demo pack as Parquet files
// (GET /connections/presets, kind duckdb, DSN template a directory under the files root);
// the demo with format parquet writes the pack there, one Parquet file per table, adds
// it as a duckdb connection and scans it: each table's row count is the pack's own
// (counted in the pack's SQLite file). The preset's DSN is usable as is.
func TestDuckDBParquetDemoPreset(t *testing.T) {
	root := t.TempDir()
	files := filepath.Join(root, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root, FilesRoot: files})
	ws := env.MustWorkspace(t, "duckdb-presets")
	tok := env.MustToken(t, ws)
	var presets []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/connections/presets", tok, nil).JSON(t, &presets)
	dsn := ""
	for _, p := range presets {
		if p["key"] == "demo-erp-parquet" && p["kind"] == "duckdb" {
			dsn, _ = p["dsn_template"].(string)
		}
	}
	if dsn != filepath.Join(files, "demo", "erp") {
		t.Fatalf("no duckdb preset of the erp pack under the files root: %v", presets)
	}
	res, err := env.App.SeedDemo(context.Background(), app.DemoOptions{Workspace: "parquet-demo", Packs: []string{"erp"},
		Dir: filepath.Join(root, "demo"), Format: "parquet", FilesDir: app.ParquetDemoDir(files)})
	if err != nil {
		t.Fatal(err)
	}
	if sc := res.Scans["erp"]; sc.Status != scan.StatusSucceeded || sc.DatasetsFailed != 0 || sc.DatasetsDone == 0 {
		t.Fatalf("scan %+v", sc)
	}
	pack, err := sql.Open("sqlite", "file:"+filepath.Join(root, "demo", "demo-erp.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer pack.Close()
	var conns []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/connections", res.Token, nil).JSON(t, &conns)
	connID := ""
	for _, c := range conns {
		if c["name"] == "demo-erp-parquet" && c["kind"] == "duckdb" {
			connID = c["id"].(string)
		}
	}
	if connID == "" {
		t.Fatalf("connections %v", conns)
	}
	var ds []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets?limit=500&connection_id="+connID, res.Token, nil).JSON(t, &ds)
	rows, err := pack.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		want[n+".parquet"] = -1
	}
	rows.Close()
	for n := range want {
		var c int64
		if err := pack.QueryRow(`SELECT count(*) FROM "` + strings.TrimSuffix(n, ".parquet") + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		want[n] = c
	}
	if len(ds) != len(want) || len(want) == 0 {
		t.Fatalf("datasets %v, want one per table %v", ds, want)
	}
	for _, d := range ds {
		var detail map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+d["id"].(string), res.Token, nil).JSON(t, &detail)
		n := d["table"].(string)
		if d["schema"] != "files" || detail["row_count"] != float64(want[n]) || want[n] <= 0 {
			t.Fatalf("%s.%s: %v rows, the pack has %d", d["schema"], n, detail["row_count"], want[n])
		}
	}
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	if r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "erp-files", "kind": "duckdb", "dsn": dsn}); r.Status != 201 {
		t.Fatalf("the preset's DSN: %d %s", r.Status, r.Body)
	}
}
