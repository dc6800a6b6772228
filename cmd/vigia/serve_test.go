package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
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

// On SIGTERM (ctx cancelled) serve fails readiness first, keeps answering in-flight
// and new requests during the drain delay, then exits cleanly.
func TestServeDrainsOnSignal(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_DRAIN_SECONDS", "2")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuf{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", addr}, &bytes.Buffer{}, logs) }()

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
