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
	mustRun := func(args ...string) string {
		t.Helper()
		out.Reset()
		if code := run(ctx, args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
		}
		return strings.TrimSpace(out.String())
	}
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
