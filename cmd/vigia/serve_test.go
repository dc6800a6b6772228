package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia-data/vigia/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startServe runs `vigia serve` on a free local port; cancel stands for SIGTERM, done
// receives the exit status.
func startServe(t *testing.T) (addr string, cancel context.CancelFunc, logs *syncBuf, done chan int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuf{}
	done = make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", addr}, &bytes.Buffer{}, logs) }()
	return addr, cancel, logs, done
}

// On SIGTERM (ctx cancelled) serve fails readiness first, keeps answering in-flight
// and new requests during the drain delay, then exits cleanly.
func TestServeDrainsOnSignal(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_DRAIN_SECONDS", "2")
	addr, cancel, logs, done := startServe(t)

	get := func(path string) int {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	up := false
	for i := 0; i < 100 && !up; i++ {
		up = get("/api/v1/health/ready") == 200
		if !up {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !up {
		t.Fatalf("server never became ready; logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"vigia listening"`) || !strings.Contains(logs.String(), addr) {
		t.Fatalf("serve does not log where it listens:\n%s", logs.String())
	}
	cancel()
	draining := false
	for i := 0; i < 50 && !draining; i++ {
		draining = get("/api/v1/health/ready") == 503
		if !draining {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !draining {
		t.Fatal("readiness did not fail after the signal")
	}
	if s := get("/api/v1/health"); s != 200 {
		t.Fatalf("liveness during drain: %d", s)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit status %d; logs:\n%s", code, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not exit")
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatalf("no clean stop in logs:\n%s", logs.String())
	}
}

// The CLI prints a token of the contract's form, stores only its hash, and revokes it.
func TestTokenCommands(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	ctx := context.Background()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"workspace", "create", "acme-cli"}, &out, &errb); code != 0 {
		t.Fatalf("workspace create: %d %s", code, errb.String())
	}
	out.Reset()
	if code := run(ctx, []string{"token", "create", "--workspace", "acme-cli"}, &out, &errb); code != 0 {
		t.Fatalf("token create: %d %s", code, errb.String())
	}
	tok := strings.TrimSpace(out.String())
	if len(tok) != 52 || !strings.HasPrefix(tok, "svc_") {
		t.Fatalf("token %q", tok)
	}
	out.Reset()
	if code := run(ctx, []string{"token", "revoke", "--workspace", "acme-cli", "--token", tok}, &out, &errb); code != 0 {
		t.Fatalf("token revoke: %d %s", code, errb.String())
	}
	if code := run(ctx, []string{"token", "revoke", "--workspace", "acme-cli", "--token", tok}, &out, &errb); code == 0 {
		t.Fatal("revoking twice succeeded")
	}
	if strings.Contains(errb.String(), tok) {
		t.Fatal("the token was echoed in an error")
	}
	out.Reset()
	if code := run(ctx, []string{"openapi"}, &out, &errb); code != 0 || !strings.Contains(out.String(), `"openapi":"3.1.0"`) {
		t.Fatalf("openapi: %d %.100s", code, out.String())
	}
	// The printed document is the whole API, every feature's routes included.
	for _, path := range []string{"/api/v1/datasets/{dataset_id}/lineage", "/api/v1/domains/suggestions", "/api/v1/knowledge/graph",
		"/api/v1/tickets/integrations/{integration_id}/targets", "/api/v1/domains/{domain_id}/verdict"} {
		if !strings.Contains(out.String(), `"`+path+`"`) {
			t.Errorf("vigia openapi leaves out %s", path)
		}
	}
}

// Load across the SIGTERM drain drops nothing. The clients act as a load balancer does:
// they keep using their open keep-alive connections, and once readiness fails they open
// no new ones. Every request sent on a connection gets its answer: during the drain each
// answer carries Connection: close, so connections end after a response, never while a
// request is on its way.
func TestServeDrainDropsNothingUnderLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_DRAIN_SECONDS", "2")
	t.Setenv("VIGIA_RATE_LIMIT_IP", "1000000")
	addr, cancel, logs, done := startServe(t)
	defer cancel()
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	ready := func() bool {
		res, err := probe.Get("http://" + addr + "/api/v1/health/ready")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	}
	for i := 0; i < 100 && !ready(); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if !ready() {
		t.Fatalf("server never became ready; logs:\n%s", logs.String())
	}

	var outOfRotation atomic.Bool
	errOutOfRotation := errors.New("out of rotation")
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8,
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			if outOfRotation.Load() {
				return nil, errOutOfRotation
			}
			return dialer.DialContext(ctx, network, a)
		}}}
	var answered, answeredDuringDrain, dropped atomic.Int64
	var mu sync.Mutex
	var drops []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// POST is not retried by the client on a broken connection: a cut shows.
				res, err := client.Post("http://"+addr+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
				if err != nil {
					if errors.Is(err, errOutOfRotation) {
						return
					}
					dropped.Add(1)
					mu.Lock()
					drops = append(drops, err.Error())
					mu.Unlock()
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				answered.Add(1)
				if res.Header.Get("Connection") == "close" || res.Close {
					answeredDuringDrain.Add(1)
				}
			}
		}()
	}
	// The load balancer's health check.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !outOfRotation.Load() {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if !ready() {
				outOfRotation.Store(true)
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not exit")
	}
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit status %d; logs:\n%s", code, logs.String())
	}
	if dropped.Load() != 0 {
		t.Fatalf("%d of %d requests dropped across the drain: %v", dropped.Load(), answered.Load()+dropped.Load(), drops)
	}
	if answered.Load() < 20 || answeredDuringDrain.Load() == 0 {
		t.Fatalf("too little load across the drain: %d answered, %d while draining", answered.Load(), answeredDuringDrain.Load())
	}
	t.Logf("%d requests answered, %d during the drain, none dropped", answered.Load(), answeredDuringDrain.Load())
}

// Without VIGIA_SECRET_KEY a command says once, in words on stderr, that the development
// key is in use; stdout keeps only what scripts read, and no JSON warning is printed.
func TestDevelopmentKeyNoticeInWords(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"workspace", "create", "devkey"}, &out, &errb); code != 0 {
		t.Fatalf("workspace create: %d %s", code, errb.String())
	}
	if !regexp.MustCompile(`^[0-9a-f-]{36}\n$`).MatchString(out.String()) {
		t.Fatalf("stdout is not just the id: %q", out.String())
	}
	if n := strings.Count(errb.String(), "VIGIA_SECRET_KEY is not set"); n != 1 || !strings.HasPrefix(errb.String(), "vigia: warning: ") {
		t.Fatalf("the notice is said %d times:\n%s", n, errb.String())
	}
	if strings.Contains(errb.String(), `"level":"WARN"`) {
		t.Fatalf("a JSON warning is printed:\n%s", errb.String())
	}
}

// Errors on the command line name the object, say why in words and give the stable
// code; nothing the person typed as a secret is repeated.
func TestCommandErrorsNameObjectAndReason(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "cli-errors-key")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	t.Setenv("LANG", "en_GB.UTF-8")
	ctx := context.Background()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"workspace", "create", "cli-errors"}, &out, &errb); code != 0 {
		t.Fatalf("workspace create: %d %s", code, errb.String())
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--workspace", "no-such-workspace", "--connection", "x"},
			`vigia: workspace "no-such-workspace": Resource not found. (not_found)`},
		{[]string{"connection", "add", "--workspace", "cli-errors", "--name", "down", "--kind", "postgres",
			"--dsn", "postgres://u:s3cret-pw@127.0.0.1:1/db?sslmode=disable&connect_timeout=5"},
			`vigia: connection "down": dsn: Could not connect to the source: the host did not answer or the address is refused (check host, port and firewall). (connection_failed: unreachable)`},
		{[]string{"scan", "--workspace", "cli-errors", "--connection", "no-such-connection"},
			`vigia: scan of connection "no-such-connection": Resource not found. (not_found)`},
	}
	for _, tc := range cases {
		errb.Reset()
		if code := run(ctx, tc.args, &out, &errb); code == 0 {
			t.Fatalf("%v succeeded", tc.args)
		}
		if got := strings.TrimSpace(errb.String()); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.args, got, tc.want)
		}
		if strings.Contains(errb.String(), "s3cret-pw") {
			t.Fatalf("a secret was echoed: %s", errb.String())
		}
	}
}
