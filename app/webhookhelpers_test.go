package app_test

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/scan"
)

// hookBound caps every wait of the webhook tests so that a broken delivery fails the
// test instead of hanging it; no test asserts on how long anything takes, except the
// retry schedule the contract fixes (±10%), checked on the receiver's own clock.
const hookBound = 90 * time.Second

// Names the test certificate of httptest covers; the allowlist admits the first two.
const (
	receiverHost = "receiver.example.com"
	otherHost    = "other.example.com"
	rebindHost   = "rebind.example.com"
)

// hookRequest is one request a receiver got.
type hookRequest struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// hookReceiver is an HTTPS receiver on loopback, reached by name through the allowlist.
type hookReceiver struct {
	URL   string // https://<name>:<port>/hook?token=...
	mu    sync.Mutex
	got   []hookRequest
	reply func(n int, w http.ResponseWriter, r *http.Request)
}

// MustReceiver starts a TLS receiver answering with reply (given the request's
// 1-based number).
func MustReceiver(tb testing.TB, name string, reply func(n int, w http.ResponseWriter, r *http.Request)) *hookReceiver {
	tb.Helper()
	h := &hookReceiver{reply: reply}
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, hookRequest{At: time.Now(), Header: r.Header.Clone(), Body: body})
		n := len(h.got)
		h.mu.Unlock()
		h.reply(n, w, r)
	}))
	tb.Cleanup(ts.Close)
	u, err := url.Parse(ts.URL)
	if err != nil {
		tb.Fatal(err)
	}
	h.URL = "https://" + net.JoinHostPort(name, u.Port()) + "/hook?token=" + urlMarker
	return h
}

func status(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func (h *hookReceiver) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// ofEvent returns the requests of one event type.
func (h *hookReceiver) ofEvent(event string) []hookRequest {
	var out []hookRequest
	for _, r := range h.requests() {
		if r.Header.Get("X-Service-Event") == event {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits, bounded, until the receiver got at least n requests of event ("" for any).
func (h *hookReceiver) waitFor(tb testing.TB, event string, n int) []hookRequest {
	tb.Helper()
	var got []hookRequest
	eventually(tb, "receiver requests", func() bool {
		if event == "" {
			got = h.requests()
		} else {
			got = h.ofEvent(event)
		}
		return len(got) >= n
	})
	return got
}

// urlMarker sits in every receiver URL's query: it must never come back.
const urlMarker = "URLSECRET5150"

// testResolver answers names from fixed tables; a name with several answers gives the
// i-th on its i-th lookup and the last one after (the DNS-rebinding attacker).
type testResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newTestResolver() *testResolver {
	return &testResolver{calls: map[string]int{}, answers: map[string][][]string{
		receiverHost: {{"127.0.0.1"}},
		otherHost:    {{"127.0.0.1"}},
		rebindHost:   {{"93.184.216.34"}, {"127.0.0.1"}},
	}}
}

func (r *testResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	seq, ok := r.answers[name]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[name], len(seq)-1)
	r.calls[name]++
	var out []net.IPAddr
	for _, a := range seq[i] {
		out = append(out, net.IPAddr{IP: net.IP(netip.MustParseAddr(a).AsSlice())})
	}
	return out, nil
}

// testCA trusts the certificate every httptest TLS server presents.
func testCA(tb testing.TB) *x509.CertPool {
	tb.Helper()
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	defer ts.Close()
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return pool
}

// webhookConfig admits the two receiver names, trusts the test CA and dispatches often.
func webhookConfig(tb testing.TB) app.Config {
	return app.Config{SecretKey: "webhook-test-key", WebhookAllowHosts: []string{receiverHost, otherHost},
		WebhookResolver: newTestResolver(), WebhookRootCAs: testCA(tb), WebhookDispatchEvery: 100 * time.Millisecond,
		PublicURL: "https://vigia.example.com", JobHeartbeat: time.Second, JobStaleAfter: 5 * time.Second}
}

// MustRunWorkers runs env's workers until the returned stop is called (or the test ends).
func MustRunWorkers(tb testing.TB, env *apptest.Env) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := env.App.RunWorkers(ctx); err != nil {
			tb.Errorf("workers: %v", err)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(hookBound):
				tb.Errorf("workers did not stop")
			}
		})
	}
	tb.Cleanup(stop)
	return stop
}

// eventually waits, bounded, until cond holds.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(hookBound)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// MustChannel creates a channel and returns its id and signing secret.
func MustChannel(tb testing.TB, env *apptest.Env, cred string, body map[string]any) (string, string) {
	tb.Helper()
	r := env.Do(tb, http.MethodPost, "/api/v1/notification-channels", cred, body)
	if r.Status != http.StatusCreated {
		tb.Fatalf("create channel: %d %s", r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(tb, &out)
	return out["id"].(string), out["signing_secret"].(string)
}

// MustEvent inserts an outbox row as the feature that owns the change would.
func MustEvent(tb testing.TB, env *apptest.Env, workspaceID, typ, subjectType, subjectID, key string, payload map[string]any) string {
	tb.Helper()
	id := vigia.NewID()
	p, err := json.Marshal(payload)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := env.DB.Pool().Exec(context.Background(), `INSERT INTO events (id, workspace_id, type, subject_type, subject_id,
		idempotency_key, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
		id, workspaceID, typ, subjectType, subjectID, key, p); err != nil {
		tb.Fatal(err)
	}
	return id
}

// MustIssue inserts an issue on a dataset, opened at created.
func MustIssue(tb testing.TB, env *apptest.Env, workspaceID, datasetID, typ, severity string, created time.Time, ruleID *string) string {
	tb.Helper()
	id := vigia.NewID()
	// The metric is the id, so that several open anomalies of a dataset may coexist.
	if _, err := env.DB.Pool().Exec(context.Background(), `INSERT INTO issues (id, workspace_id, dataset_id, type, severity,
		status, title, rule_id, rule_current, metric, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'open', $6, $7, $7::uuid IS NOT NULL, $9, $8, $8)`,
		id, workspaceID, datasetID, typ, severity, "Problema de teste em "+typ, ruleID, created, "m"+id); err != nil {
		tb.Fatal(err)
	}
	return id
}

// decodeBody parses a delivery body.
func decodeBody(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("delivery body is not JSON: %v", err)
	}
	return m
}

// keysOf returns a map's keys, sorted.
func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// baseKeys are the body fields every event carries.
var baseKeys = []string{"alerts", "body", "code", "event", "incidents", "occurred_at", "params", "title", "workspace_id"}

// requireKeys checks a body has exactly the base fields plus extra.
func requireKeys(tb testing.TB, body map[string]any, extra ...string) {
	tb.Helper()
	want := append(slices.Clone(baseKeys), extra...)
	slices.Sort(want)
	if got := keysOf(body); !slices.Equal(got, want) {
		tb.Fatalf("body fields %v, want %v", got, want)
	}
}

// MustListen opens a TCP listener on 127.0.0.1 that the test closes.
func MustListen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln
}

// requireAcceptedNothing proves ln accepted no connection so far without waiting on a
// clock: it dials a sentinel and checks that the first connection in the (FIFO) accept
// queue is the sentinel itself.
func requireAcceptedNothing(tb testing.TB, ln net.Listener) {
	tb.Helper()
	sentinel, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatalf("dial sentinel: %v", err)
	}
	defer sentinel.Close()
	conn, err := ln.Accept()
	if err != nil {
		tb.Fatalf("accept: %v", err)
	}
	defer conn.Close()
	if conn.RemoteAddr().String() != sentinel.LocalAddr().String() {
		tb.Fatalf("a connection reached the listener before the sentinel")
	}
}

// sqliteScans is a workspace with a SQLite connection of tables of 200 rows (id, total,
// criado_em), an admin session and an API token: the material of the tests where scans
// change verdicts.
type sqliteScans struct {
	env            *apptest.Env
	ws, admin, tok string
	ctx            context.Context
	src            *sql.DB
	connectionID   string
}

// newSQLiteScans starts a server with the webhook test configuration and builds the
// workspace and its connection over file (in the SQLite root) holding tables.
func newSQLiteScans(t *testing.T, prefix, file string, tables ...string) *sqliteScans {
	t.Helper()
	root := t.TempDir()
	cfg := webhookConfig(t)
	cfg.SQLiteRoot = root
	f := &sqliteScans{env: apptest.MustStart(t, cfg)}
	f.ws = f.env.MustWorkspace(t, prefix)
	f.admin, f.tok = f.env.MustSession(t, f.ws, vigia.RoleAdmin), f.env.MustToken(t, f.ws)
	f.ctx = app.AsAdmin(context.Background(), f.ws, "test")
	path := filepath.Join(root, file)
	src, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	f.src = src
	now := time.Now().UTC()
	for _, table := range tables {
		f.exec(t, `CREATE TABLE `+table+` (id INTEGER PRIMARY KEY, total REAL NOT NULL, criado_em TIMESTAMP NOT NULL)`)
		for i := 1; i <= 200; i++ {
			f.exec(t, `INSERT INTO `+table+` VALUES (?, ?, ?)`, i, float64(i%50)+0.5, now.Add(-time.Duration(i)*time.Minute))
		}
	}
	r := f.env.Do(t, http.MethodPost, "/api/v1/connections", f.admin, map[string]any{"name": prefix, "kind": "sqlite", "dsn": path})
	if r.Status != http.StatusCreated {
		t.Fatalf("connection: %d %s", r.Status, r.Body)
	}
	var conn map[string]any
	r.JSON(t, &conn)
	f.connectionID = conn["id"].(string)
	return f
}

// exec runs a statement on the source.
func (f *sqliteScans) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := f.src.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// scan triggers a scan through the API with the token, waits for it to succeed and
// returns its id.
func (f *sqliteScans) scan(t *testing.T) string {
	t.Helper()
	r := f.env.Do(t, http.MethodPost, "/api/v1/scans", f.tok, map[string]any{"connection_id": f.connectionID})
	var out map[string]any
	r.JSON(t, &out)
	sc, err := f.env.App.WaitScan(f.ctx, out["id"].(string), nil)
	if err != nil || sc.Status != scan.StatusSucceeded {
		t.Fatalf("scan: %v %+v", err, sc)
	}
	return sc.ID
}

// datasetID finds the one dataset whose name matches q.
func (f *sqliteScans) datasetID(t *testing.T, q string) string {
	t.Helper()
	var ds []map[string]any
	f.env.Do(t, http.MethodGet, "/api/v1/datasets?q="+q, f.tok, nil).JSON(t, &ds)
	if len(ds) != 1 {
		t.Fatalf("datasets %v", ds)
	}
	return ds[0]["id"].(string)
}
