package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/store/storetest"
)

// A scan killed with SIGKILL midway resumes after a restart and finishes; no dataset
// ever shows a partial result.
func TestScanSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real server")
	}
	dbURL := storetest.MustURL(t)
	bin := filepath.Join(t.TempDir(), "vigia")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	srcURL := slowSource(t)
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "VIGIA_SECRET_KEY=crash-test-key", "VIGIA_JOB_STALE_SECONDS=3",
		"VIGIA_DRAIN_SECONDS=1", "XDG_DATA_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("vigia %v: %v\n%s", args, err, errb.String())
		}
		return strings.TrimSpace(out.String())
	}
	cli("workspace", "create", "crash")
	tok := cli("token", "create", "--workspace", "crash")
	connID := cli("connection", "add", "--workspace", "crash", "--name", "slow", "--kind", "postgres", "--dsn", srcURL)

	addr := freeAddr(t)
	var logs *syncBuffer
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin, "serve", "--addr", addr)
		cmd.Env = env
		logs = &syncBuffer{}
		cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			if res, err := http.Get("http://" + addr + "/api/v1/health/ready"); err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					return cmd
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatal("server did not start")
		return nil
	}
	api := func(method, path string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		if body == nil {
			b = nil
		}
		req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return out
	}

	server := start()
	sc := api(http.MethodPost, "/api/v1/scans", map[string]any{"connection_id": connID})
	scanID, _ := sc["id"].(string)
	if scanID == "" {
		t.Fatalf("trigger: %v", sc)
	}
	// Wait until the worker is inside the slow view, with the fast table already saved.
	inSlow := false
	for i := 0; i < 300 && !inSlow; i++ {
		s := api(http.MethodGet, "/api/v1/scans/"+scanID, nil)
		done, _ := s["datasets_done"].(float64)
		inSlow = s["current_dataset"] == "public.slow_view" && done >= 1
		if !inSlow {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !inSlow {
		t.Fatal("scan never reached the slow view")
	}
	if err := server.Process.Kill(); err != nil { // SIGKILL: no cleanup at all
		t.Fatal(err)
	}
	_ = server.Wait()

	ctx := context.Background()
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	assertWhole := func(when string) {
		t.Helper()
		var profiles, scores, verdicts int
		err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM dataset_profiles WHERE scan_id = $1),
			(SELECT count(*) FROM scores WHERE scan_id = $1), (SELECT count(*) FROM verdicts WHERE scan_id = $1)`, scanID).
			Scan(&profiles, &scores, &verdicts)
		if err != nil {
			t.Fatal(err)
		}
		if profiles != scores || scores != verdicts {
			t.Fatalf("%s: partial results: %d profiles, %d scores, %d verdicts", when, profiles, scores, verdicts)
		}
		var orphans int
		err = db.QueryRow(ctx, `SELECT count(*) FROM datasets d WHERE d.last_scan_at IS NOT NULL AND NOT EXISTS
			(SELECT 1 FROM dataset_profiles p WHERE p.dataset_id = d.id AND p.profiled_at = d.last_scan_at)`).Scan(&orphans)
		if err != nil || orphans != 0 {
			t.Fatalf("%s: %d datasets show a score without its profile (%v)", when, orphans, err)
		}
	}
	var status string
	var slowProfiled bool
	if err := db.QueryRow(ctx, `SELECT s.status, EXISTS (SELECT 1 FROM dataset_profiles p JOIN datasets d ON d.id = p.dataset_id
		WHERE p.scan_id = s.id AND d.table_name = 'slow_view') FROM scans s WHERE s.id = $1`, scanID).Scan(&status, &slowProfiled); err != nil {
		t.Fatal(err)
	}
	if status != "running" || slowProfiled {
		t.Fatalf("after kill: status %s, slow view profiled %v", status, slowProfiled)
	}
	assertWhole("after kill")
	// The dead worker's statement goes on running on the source: its process died, its
	// query did not.
	label := "vigia scan " + scanID + " 1"
	running := func() bool {
		t.Helper()
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`, label).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if !running() {
		t.Fatal("the killed worker's profile query is not running on the source")
	}
	killed := time.Now()

	server = start()
	defer func() { _ = server.Process.Signal(os.Interrupt); _ = server.Wait() }()
	var final map[string]any
	for i := 0; i < 600; i++ {
		final = api(http.MethodGet, "/api/v1/scans/"+scanID, nil)
		if final["status"] == "succeeded" || final["status"] == "failed" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if final["status"] != "succeeded" || final["attempt"].(float64) < 2 || final["datasets_done"].(float64) != 3 {
		t.Fatalf("after restart: %v", final)
	}
	// The takeover cancelled it, long before the seconds it had left.
	if !strings.Contains(logs.String(), "cancelled the previous attempt's statements") {
		t.Fatalf("the takeover did not cancel the dead attempt's statement (%s after the kill); server log:\n%s", time.Since(killed), logs.String())
	}
	assertWhole("after restart")
	var perDataset int
	if err := db.QueryRow(ctx, `SELECT max(n) FROM (SELECT count(*) n FROM dataset_profiles WHERE scan_id = $1 GROUP BY dataset_id) x`,
		scanID).Scan(&perDataset); err != nil || perDataset != 1 {
		t.Fatalf("a dataset was profiled %d times by one scan (%v)", perDataset, err)
	}
}

// slowSource makes a Postgres source with two fast tables and a view that takes
// seconds to profile.
func slowSource(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("src_crash_%d", time.Now().UnixNano()%1_000_000)
	admin, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a, _ := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
		_, _ = a.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		a.Close()
	})
	u := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE a_fast AS SELECT g AS id, 'x' || g AS label FROM generate_series(1, 500) g`,
		`CREATE TABLE z_fast AS SELECT g AS id, now() - g * interval '1 minute' AS created_at FROM generate_series(1, 500) g`,
		// 8 s a statement: longer than a takeover takes, so the dead attempt's statement
		// is still running when the next attempt starts.
		`CREATE FUNCTION slow_id(i int) RETURNS int LANGUAGE sql AS $$ SELECT pg_sleep(0.008); SELECT i $$`,
		`CREATE VIEW slow_view AS SELECT slow_id(g) AS id FROM generate_series(1, 1000) g`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return u
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a goroutine-safe buffer a child process writes its log to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
