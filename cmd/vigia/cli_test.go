package main

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/store/storetest"
)

// `vigia demo` builds the packs, scans them and prints an API token that works.
func TestDemoPrintsAWorkingToken(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "demo-test-key")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx := context.Background()
	var out, errb bytes.Buffer
	start := time.Now()
	if code := run(ctx, []string{"demo"}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	t.Logf("vigia demo took %s", time.Since(start).Round(time.Millisecond))
	tok := regexp.MustCompile(`svc_[0-9a-f]{48}`).FindString(out.String())
	if tok == "" {
		t.Fatalf("no token printed:\n%s", out.String())
	}
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	a, err := openApp(ctx, cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.DB.Close()
	srv := httptest.NewServer(a.Server().Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/datasets", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-Total-Count") == "0" {
		t.Fatalf("datasets with the demo token: %d, total %s", res.StatusCode, res.Header.Get("X-Total-Count"))
	}

	t.Run("NextScanFindsThePlantedTypeChange", func(t *testing.T) {
		out.Reset()
		if code := run(ctx, []string{"scan", "--workspace", "demo", "--connection", "demo-erp", "--wait"}, &out, &errb); code != 0 {
			t.Fatalf("scan: exit %d\n%s", code, errb.String())
		}
		var drift int
		if err := a.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM schema_changes WHERE change = 'type_change'`).Scan(&drift); err != nil || drift == 0 {
			t.Fatalf("no type change found on the second scan (%v)", err)
		}
	})

	t.Run("SyntheticPackOfTheERPConnection", func(t *testing.T) {
		out.Reset()
		errb.Reset()
		path := filepath.Join(t.TempDir(), "erp.sqlite")
		if code := run(ctx, []string{"synthetic", "pack", "--workspace", "demo", "--connection", "demo-erp", "--rows", "300", "--seed", "4",
			"--format", "sqlite", "-o", path}, &out, &errb); code != 0 {
			t.Fatalf("synthetic pack: exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), "generate 6/6 tables") || !strings.Contains(errb.String(), "evaluate 6/6 tables") {
			t.Fatalf("progress:\n%s", errb.String())
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n, problems int
		if err := db.QueryRow(`SELECT COUNT(*) FROM faturas`).Scan(&n); err != nil || n != 300 {
			t.Fatalf("faturas: %d %v", n, err)
		}
		if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&problems); err != nil || problems != 0 {
			t.Fatalf("foreign_key_check: %d %v", problems, err)
		}
		if code := run(ctx, []string{"synthetic", "pack", "--workspace", "demo", "-o", path}, &out, &errb); code == 0 {
			t.Fatal("a pack without a scope succeeded")
		}
	})
}

// `vigia scan --wait` prints plain progress lines off a terminal and exits non-zero when
// the scan fails.
func TestScanWaitExitStatus(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "scan-test-key")
	root := t.TempDir()
	t.Setenv("VIGIA_SQLITE_ROOT", root)
	ctx := context.Background()
	path := filepath.Join(root, "loja.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE encomendas (id INTEGER PRIMARY KEY, total NUMERIC, criada_em TIMESTAMP);
		INSERT INTO encomendas VALUES (1, 10.5, '2026-11-20 10:00:00'), (2, 20, '2026-11-21 09:00:00')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var out, errb bytes.Buffer
	mustRun := func(args ...string) string { return mustRunCLI(t, ctx, &out, &errb, args...) }
	mustRun("workspace", "create", "loja")
	mustRun("connection", "add", "--workspace", "loja", "--name", "loja", "--kind", "sqlite", "--dsn", path)
	got := mustRun("scan", "--workspace", "loja", "--connection", "loja", "--wait")
	if !strings.Contains(got, "succeeded: 1 datasets profiled") || !strings.Contains(got, "scan ") {
		t.Fatalf("output:\n%s", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(ctx, []string{"scan", "--workspace", "loja", "--connection", "loja", "--wait"}, &out, &errb); code == 0 {
		t.Fatalf("a failed scan exited 0:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "failed") {
		t.Fatalf("output:\n%s", out.String())
	}
}

// `vigia scan --wait` names each dataset it could not profile with its stable code and
// exits 4 (the scan finished, some datasets failed); the scan resource lists them.
func TestScanWaitNamesFailedDatasets(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "scan-fail-key")
	ctx := context.Background()
	admin, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := "cli_src_" + strings.ReplaceAll(vigia.NewUUID()[:8], "-", "")
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Skipf("postgres: %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	dsn := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	src, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`CREATE SCHEMA analytics`, `CREATE TABLE public.sales (id int PRIMARY KEY, amount numeric)`,
		`INSERT INTO public.sales SELECT g, g * 1.5 FROM generate_series(1, 50) g`,
		`CREATE MATERIALIZED VIEW analytics.sales_by_month AS SELECT count(*) AS n FROM public.sales WITH NO DATA`} {
		if _, err := src.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	src.Close()
	var out, errb bytes.Buffer
	mustRun := func(args ...string) string { return mustRunCLI(t, ctx, &out, &errb, args...) }
	mustRun("workspace", "create", name)
	mustRun("connection", "add", "--workspace", name, "--name", "dw", "--kind", "postgres", "--dsn", dsn, "--statement-timeout", "2m")
	out.Reset()
	errb.Reset()
	code := run(ctx, []string{"scan", "--workspace", name, "--connection", "dw", "--wait"}, &out, &errb)
	if code != exitDatasetsFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitDatasetsFailed, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "failed: analytics.sales_by_month (not_populated)") ||
		!strings.Contains(out.String(), "1 datasets profiled, 1 failed") {
		t.Fatalf("output does not name the failed dataset:\n%s", out.String())
	}
	// A DSN in no form the connector reads says which forms it accepts, never the DSN.
	errb.Reset()
	if code := run(ctx, []string{"connection", "add", "--workspace", name, "--name", "m", "--kind", "mysql", "--dsn", "mysql:/" + name}, &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "mysql://user:password@host:3306/database") || strings.Contains(errb.String(), name) {
		t.Fatalf("bad mysql DSN: exit %d\n%s", code, errb.String())
	}
}

// A demo whose SQLite file lies outside VIGIA_SQLITE_ROOT says why its scan failed and
// which root it expected, instead of "failed 0/0".
func TestDemoSaysWhyAScanFailed(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "demo-root-key")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx := context.Background()
	// The demo workspace is shared with the other demo test of this package (and sealed
	// with its key): start from none, and leave none.
	pool := storetest.MustDB(t).Pool()
	dropDemo := func() {
		if _, err := pool.Exec(ctx, `DELETE FROM workspaces WHERE name = 'demo'`); err != nil {
			t.Fatal(err)
		}
	}
	dropDemo()
	t.Cleanup(dropDemo)
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"demo", "--pack", "erp"}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	other := t.TempDir()
	t.Setenv("VIGIA_SQLITE_ROOT", other)
	out.Reset()
	errb.Reset()
	code := run(ctx, []string{"demo", "--pack", "erp"}, &out, &errb)
	if code != exitScanFailed || !strings.Contains(out.String(), "permission_denied") || !strings.Contains(out.String(), other) {
		t.Fatalf("demo with the files outside the root: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// mustRunCLI runs the command line and fails the test unless it exits 0; it returns
// what it printed, trimmed.
func mustRunCLI(t *testing.T, ctx context.Context, out, errb *bytes.Buffer, args ...string) string {
	t.Helper()
	out.Reset()
	if code := run(ctx, args, out, errb); code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
	}
	return strings.TrimSpace(out.String())
}
