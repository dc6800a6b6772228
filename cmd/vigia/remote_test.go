package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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

// `vigia scan --server URL` with VIGIA_TOKEN scans through a running server with the
// generated client, as the local command does against DATABASE_URL; without a token, with
// a bad one or with --workspace it says why and exits non-zero, never printing the token.
func TestRemoteScanThroughTheClient(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "remote-test-key")
	root := t.TempDir()
	t.Setenv("VIGIA_SQLITE_ROOT", root)
	t.Setenv("VIGIA_URL", "")
	t.Setenv("VIGIA_TOKEN", "")
	ctx := context.Background()
	path := filepath.Join(root, "armazem.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE stock (id INTEGER PRIMARY KEY, artigo TEXT, quantidade INTEGER);
		INSERT INTO stock VALUES (1, 'parafuso', 10), (2, 'porca', 20)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var out, errb bytes.Buffer
	mustRun := func(args ...string) string { return mustRunCLI(t, ctx, &out, &errb, args...) }
	mustRun("workspace", "create", "armazem")
	mustRun("connection", "add", "--workspace", "armazem", "--name", "armazem", "--kind", "sqlite", "--dsn", path)
	token := regexp.MustCompile(`svc_[0-9a-f]{48}`).FindString(mustRun("token", "create", "--workspace", "armazem", "--name", "ci"))
	if token == "" {
		t.Fatal("no token")
	}

	// A running server with its workers, as vigia serve runs.
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
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = a.RunWorkers(wctx) }()
	defer func() { stop(); <-done }()

	fails := func(want string, args ...string) {
		t.Helper()
		out.Reset()
		errb.Reset()
		if code := run(ctx, args, &out, &errb); code == 0 || !strings.Contains(errb.String(), want) {
			t.Fatalf("%v: exit %d, want %q in\n%s", args, code, want, errb.String())
		}
		if strings.Contains(out.String()+errb.String(), "svc_") {
			t.Fatalf("%v printed a token", args)
		}
	}
	fails("VIGIA_TOKEN is not set", "scan", "--server", srv.URL, "--connection", "armazem")
	t.Setenv("VIGIA_TOKEN", "svc_"+strings.Repeat("0", 48))
	fails("401", "scan", "--server", srv.URL, "--connection", "armazem")
	t.Setenv("VIGIA_TOKEN", token)
	fails("--workspace is for a local database", "scan", "--server", srv.URL, "--workspace", "armazem", "--connection", "armazem")
	fails("not found on the server", "scan", "--server", srv.URL, "--connection", "no-such-connection")
	fails("want an http or https URL", "scan", "--server", "ftp://x", "--connection", "armazem")
	fails(`required flag(s) "workspace" not set`, "scan", "--connection", "armazem")

	t.Setenv("VIGIA_URL", srv.URL)
	got := mustRun("scan", "--connection", "armazem", "--wait")
	if !strings.Contains(got, "succeeded: 1 datasets profiled, 0 failed") {
		t.Fatalf("remote scan --wait:\n%s", got)
	}
	id := mustRun("scan", "--connection", "armazem")
	if !regexp.MustCompile(`^[0-9A-Za-z-]{20,}$`).MatchString(id) {
		t.Fatalf("remote scan prints %q, not the scan's id", id)
	}
	var n int
	if err := a.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM scans WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("scan %s not on the server (%v)", id, err)
	}

	// The datasets through the server are those the local command lists.
	remoteDS := mustRun("datasets", "--connection", "armazem")
	localDS := mustRun("datasets", "--connection", "armazem", "--server", "", "--workspace", "armazem")
	if !regexp.MustCompile(`^\S+ main\.stock armazem score=[0-9.]+$`).MatchString(remoteDS) || remoteDS != localDS {
		t.Fatalf("remote datasets %q, local %q", remoteDS, localDS)
	}
	if got := mustRun("datasets", "--q", "nothing-matches-this"); got != "" {
		t.Fatalf("a search matching nothing listed %q", got)
	}

	// The rules export through the server is the file the local command writes.
	rules := filepath.Join(root, "stock.yml")
	if err := os.WriteFile(rules, []byte("checks for main.stock:\n  - row_count > 0\n  - missing_count(artigo) = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun("rules", "import", "--workspace", "armazem", rules)
	errb.Reset()
	remoteRules := mustRun("rules", "export", "--dataset", "main.stock", "--format", "sodacl")
	remoteInfo := errb.String()
	errb.Reset()
	localRules := mustRun("rules", "export", "--dataset", "main.stock", "--format", "sodacl", "--server", "", "--workspace", "armazem")
	if !strings.Contains(remoteRules, "missing_count(artigo) = 0") || remoteRules != localRules ||
		!strings.Contains(remoteInfo, "exported 2 rules, 0 unsupported") || remoteInfo != errb.String() {
		t.Fatalf("remote export %q (%s), local %q (%s)", remoteRules, remoteInfo, localRules, errb.String())
	}
	if all := mustRun("rules", "export", "--format", "dbt"); !strings.Contains(all, "stock") {
		t.Fatalf("workspace export through the server:\n%s", all)
	}
	fails("not found on the server", "rules", "export", "--dataset", "main.nothing", "--format", "sodacl")

	// The trust decision through the server is the one the local command reads.
	var dataset string
	if err := a.DB.Pool().QueryRow(ctx, `SELECT id FROM datasets WHERE table_name = 'stock'`).Scan(&dataset); err != nil {
		t.Fatal(err)
	}
	remote := mustRun("trust", "decide", dataset, "--purpose", "bi")
	t.Logf("vigia trust decide: %s", remote)
	local := mustRun("trust", "decide", dataset, "--purpose", "bi", "--server", "", "--workspace", "armazem")
	if !regexp.MustCompile(`^`+dataset+` (trusted|caution|untrusted|unknown) verdict=\w+ reasons=\S+$`).MatchString(remote) || remote != local {
		t.Fatalf("remote decision %q, local %q", remote, local)
	}
	fails("not found or not visible", "trust", "decide", dataset, "01JX0000000000000000000000")
	fails("body.purpose", "trust", "decide", dataset, "--purpose", "nope")

	// The BI refresh feed through the server is the one the local command lists; the
	// dashboards' URLs are never printed.
	started := time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC)
	for i, st := range []string{"success", "failed"} {
		body, _ := json.Marshal(map[string]any{"tool": "powerbi", "bi_dataset_id": "sm-42", "bi_dataset_name": "Stock diário",
			"refresh_id": fmt.Sprintf("rf-%d", i), "status": st, "started_at": started.Add(time.Duration(i) * time.Hour),
			"datasets":   []any{map[string]any{"dataset_id": dataset}, map[string]any{"namespace": "s3://x", "name": "y.csv"}},
			"dashboards": []any{map[string]any{"id": "d1", "name": "Armazém", "url": "https://bi.example.com/d1?secret_marker=1"}}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/bi/refreshes", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("bi refresh %d: %d", i, res.StatusCode)
		}
	}
	remoteBI := mustRun("bi", "refreshes", "--dataset", "main.stock")
	localBI := mustRun("bi", "refreshes", "--dataset", "main.stock", "--server", "", "--workspace", "armazem")
	lines := strings.Split(remoteBI, "\n")
	if len(lines) != 2 || remoteBI != localBI || !strings.Contains(lines[0], `powerbi sm-42 "Stock diário" refresh=rf-1 failed started=2026-11-02T07:00:00Z`) ||
		!strings.Contains(lines[0], `datasets=1 unmatched=1 dashboards="Armazém"`) || !strings.Contains(lines[1], "refresh=rf-0 success") ||
		strings.Contains(remoteBI, "secret_marker") {
		t.Fatalf("remote bi refreshes %q, local %q", remoteBI, localBI)
	}
	if got := mustRun("bi", "refreshes", "--status", "failed", "--tool", "powerbi", "--bi-dataset", "sm-42", "--limit", "5"); !strings.Contains(got, "refresh=rf-1") ||
		strings.Contains(got, "refresh=rf-0") {
		t.Fatalf("filtered bi refreshes %q", got)
	}
	if got := mustRun("bi", "refreshes", "--tool", "tableau", "--server", "", "--workspace", "armazem"); got != "" {
		t.Fatalf("no tableau refresh, got %q", got)
	}
	fails("query.status", "bi", "refreshes", "--status", "done")
	fails("status", "bi", "refreshes", "--status", "done", "--server", "", "--workspace", "armazem")
	fails("--limit must be between 1 and 500", "bi", "refreshes", "--limit", "0")

	// Orchestrator runs are reported and listed through the server as locally (a marked
	// write an API token may make).
	report := []string{"orchestrator", "report", "--orchestrator", "Airflow", "--pipeline", "carga_stock", "--run-id", "r-1",
		"--started-at", "2026-11-03T06:00:00Z", "--ended-at", "2026-11-03T06:05:00Z", "--output", "main.stock"}
	errb.Reset()
	got = mustRun(append(report, "--status", "failed")...)
	if !strings.HasSuffix(got, "airflow carga_stock run=r-1 failed started=2026-11-03T06:00:00Z ended=2026-11-03T06:05:00Z inputs=0 outputs=1 unmatched=0") ||
		!strings.Contains(errb.String(), "recorded") {
		t.Fatalf("remote report %q (%s)", got, errb.String())
	}
	errb.Reset()
	mustRun(append(report, "--status", "success", "--server", "", "--workspace", "armazem")...)
	if !strings.Contains(errb.String(), "replaced the earlier report") {
		t.Fatalf("local report of the same run: %s", errb.String())
	}
	remoteRuns := mustRun("orchestrator", "runs", "--dataset", "main.stock")
	localRuns := mustRun("orchestrator", "runs", "--dataset", "main.stock", "--server", "", "--workspace", "armazem")
	if !strings.Contains(remoteRuns, "run=r-1 success") || strings.Count(remoteRuns, "\n") != 0 || remoteRuns != localRuns {
		t.Fatalf("remote runs %q, local %q", remoteRuns, localRuns)
	}
	if got := mustRun("orchestrator", "runs", "--status", "failed"); got != "" {
		t.Fatalf("no failed run, got %q", got)
	}
	fails("--started-at: want an RFC 3339 time", append(report, "--status", "failed", "--started-at", "yesterday")...)
	fails("body.status", "orchestrator", "report", "--orchestrator", "airflow", "--pipeline", "p", "--run-id", "x", "--status", "done",
		"--started-at", "2026-11-03T06:00:00Z")
	fails("not found on the server", append(report, "--status", "failed", "--input", "main.nothing")...)
}

// `vigia openapi --indent` (the copy client/ is generated from) is the served document,
// laid out one member per line.
func TestOpenAPIIndentIsTheSameDocument(t *testing.T) {
	ctx := context.Background()
	var plain, indented, errb bytes.Buffer
	if run(ctx, []string{"openapi"}, &plain, &errb) != 0 || run(ctx, []string{"openapi", "--indent"}, &indented, &errb) != 0 {
		t.Fatalf("openapi: %s", errb.String())
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, indented.Bytes()); err != nil {
		t.Fatal(err)
	}
	if compact.String() != strings.TrimSpace(plain.String()) || bytes.Count(indented.Bytes(), []byte("\n")) < 1000 {
		t.Fatal("the indented document differs from the served one")
	}
}
