package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/rest"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/store/storetest"
)

func TestRESTAndGraphQLAgree(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "agree")
	tok := env.MustToken(t, ws)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "clientes")

	var rest map[string]any
	detailRes := env.Do(t, http.MethodGet, "/api/v1/datasets/"+ds, tok, nil)
	if detailRes.Status != 200 {
		t.Fatalf("detail: %d %s\n%s", detailRes.Status, detailRes.Body, env.Logs.String())
	}
	detailRes.JSON(t, &rest)
	out := env.GraphQL(t, tok, `query($id: ID!){ dataset(id: $id){ id name schema table connectionId connectionName kind
		costGuarded dataCountry latestScore accessRole country { effective source }
		columns { name position dataType nullable primaryKey semantic { type region estimated sampleSize } } } }`,
		map[string]any{"id": ds})
	if out["errors"] != nil {
		t.Fatalf("graphql errors: %v", out["errors"])
	}
	g := out["data"].(map[string]any)["dataset"].(map[string]any)
	pairs := map[string]string{"id": "id", "name": "name", "schema": "schema", "table": "table", "connection_id": "connectionId",
		"connection_name": "connectionName", "kind": "kind", "cost_guarded": "costGuarded", "data_country": "dataCountry",
		"latest_score": "latestScore", "access_role": "accessRole"}
	for r, q := range pairs {
		if fmt.Sprint(rest[r]) != fmt.Sprint(g[q]) {
			t.Errorf("%s: rest %v, graphql %v", r, rest[r], g[q])
		}
	}
	rc, gc := rest["country"].(map[string]any), g["country"].(map[string]any)
	if rc["effective"] != gc["effective"] || rc["source"] != gc["source"] {
		t.Errorf("country: rest %v graphql %v", rc, gc)
	}
	rcols, gcols := rest["columns"].([]any), g["columns"].([]any)
	if len(rcols) != 2 || len(gcols) != 2 {
		t.Fatalf("columns rest %d graphql %d", len(rcols), len(gcols))
	}
	for i := range rcols {
		r, q := rcols[i].(map[string]any), gcols[i].(map[string]any)
		if r["name"] != q["name"] || r["primary_key"] != q["primaryKey"] || r["data_type"] != q["dataType"] ||
			fmt.Sprint(r["semantic"] != nil) != fmt.Sprint(q["semantic"] != nil) {
			t.Errorf("column %d: rest %v graphql %v", i, r, q)
		}
	}
	if rcols[1].(map[string]any)["semantic"].(map[string]any)["type"] != "phone_pt" {
		t.Errorf("semantic not served: %v", rcols[1])
	}

	t.Run("GraphQLValidationErrorCarriesCode", func(t *testing.T) {
		out := env.GraphQL(t, tok, `{ datasets(limit: 501) { total } }`, nil)
		errs, _ := out["errors"].([]any)
		if len(errs) != 1 {
			t.Fatalf("errors %v", out)
		}
		ext := errs[0].(map[string]any)["extensions"].(map[string]any)
		if ext["code"] != "validation_error" || !strings.Contains(fmt.Sprint(ext["detail"]), "less_than_equal") {
			t.Fatalf("extensions %v", ext)
		}
	})
	t.Run("GraphQLWithoutTokenIs401", func(t *testing.T) {
		r := env.Do(t, http.MethodPost, "/graphql", "", map[string]any{"query": "{ datasets { total } }"})
		if r.Status != 401 || decodeError(t, r).Code != "auth_required" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
}

func TestOpenAPIDocument(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	r := env.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	doc, err := libopenapi.NewDocument(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi version %q", v)
	}
	val, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := val.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("document invalid: %s: %s", e.Message, e.Reason)
		}
		t.FailNow()
	}

	t.Run("ListsEveryRoute", func(t *testing.T) {
		var raw struct {
			Paths map[string]map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(r.Body, &raw); err != nil {
			t.Fatal(err)
		}
		routes := 0
		err := chi.Walk(env.App.Server().Handler().(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			if !strings.HasPrefix(route, "/api/v1/") {
				return nil
			}
			routes++
			if _, ok := raw.Paths[route][strings.ToLower(method)]; !ok {
				t.Errorf("%s %s is served but not documented", method, route)
			}
			return nil
		})
		if err != nil || routes < 5 {
			t.Fatalf("walk: %v (%d routes)", err, routes)
		}
		for _, op := range env.App.Server().Operations() {
			if _, ok := raw.Paths[op.Path][strings.ToLower(op.Method)]; !ok {
				t.Errorf("operation %s missing", op.ID)
			}
		}
	})

	t.Run("RealResponsesMatchTheDocument", func(t *testing.T) {
		ws := env.MustWorkspace(t, "oas")
		tok := env.MustToken(t, ws)
		ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "c"), "public", "t")
		doc := env.Document(t)
		for _, path := range []string{"/api/v1/datasets", "/api/v1/datasets/" + ds, "/api/v1/datasets?limit=501",
			"/api/v1/datasets/" + strings.Repeat("0", 8), "/api/v1/version", "/api/v1/health", "/api/v1/health/ready"} {
			doc.Do(t, http.MethodGet, path, tok, nil)
		}
	})
}

func TestVersion(t *testing.T) {
	env := apptest.MustStart(t, app.Config{BuildSHA: "9f8e7d6", Version: "1.2.3"})
	var v map[string]string
	env.Do(t, http.MethodGet, "/api/v1/version", "", nil).JSON(t, &v)
	if !regexp.MustCompile(`^[0-9a-f]{7}$`).MatchString(v["build_sha"]) || v["build_sha"] != "9f8e7d6" ||
		v["api_version"] != "1.88.0" || v["version"] != "1.2.3" {
		t.Fatalf("version %v", v)
	}
}

func TestRateLimits(t *testing.T) {
	env := apptest.MustStart(t, app.Config{RateLimitToken: 3, RateLimitIP: 1000, RateWindow: time.Hour})
	ws := env.MustWorkspace(t, "rl")
	tok := env.MustToken(t, ws)
	for i := 1; i <= 3; i++ {
		r := env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil)
		if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "3" ||
			r.Header.Get("X-RateLimit-Remaining") != fmt.Sprint(3-i) || r.Header.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("request %d: %d %v", i, r.Status, r.Header)
		}
	}
	r := env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil)
	e := decodeError(t, r)
	if r.Status != 429 || e.Code != "rate_limited" || e.RetryAfter == nil || *e.RetryAfter < 1 ||
		r.Header.Get("Retry-After") != fmt.Sprint(*e.RetryAfter) {
		t.Fatalf("got %d %s %v", r.Status, r.Body, r.Header)
	}
	t.Run("OtherTokenHasItsOwnLimit", func(t *testing.T) {
		if r := env.Do(t, http.MethodGet, "/api/v1/datasets", env.MustToken(t, ws), nil); r.Status != 200 {
			t.Fatalf("got %d", r.Status)
		}
	})
	t.Run("PerIP", func(t *testing.T) {
		ipEnv := apptest.MustStart(t, app.Config{RateLimitIP: 2, RateLimitProbe: 5, RateWindow: time.Hour})
		for i := 0; i < 2; i++ {
			if r := ipEnv.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil); r.Status != 200 {
				t.Fatalf("request %d: %d", i, r.Status)
			}
		}
		r := ipEnv.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil)
		if r.Status != 429 || decodeError(t, r).Code != "rate_limited" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		// The address has spent its limit; liveness, readiness and version still answer,
		// under their own bound.
		for _, path := range []string{"/api/v1/health/ready", "/api/v1/health", "/api/v1/version", "/api/v1/health/ready", "/api/v1/health/ready"} {
			if r := ipEnv.Do(t, http.MethodGet, path, "", nil); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "5" {
				t.Fatalf("%s after the per-IP limit: %d %v", path, r.Status, r.Header)
			}
		}
		if r := ipEnv.Do(t, http.MethodGet, "/api/v1/health/ready", "", nil); r.Status != 429 {
			t.Fatalf("probes are unbounded: %d", r.Status)
		}
		if r := ipEnv.Do(t, http.MethodGet, "/api/v1/datasets", "", nil); r.Status != 429 {
			t.Fatalf("probes reset the per-IP limit: %d", r.Status)
		}
	})
	t.Run("ForwardedAddressOnlyFromTrustedProxies", func(t *testing.T) {
		// Without trusted proxies every X-Forwarded-For is one client: the connection's.
		plain := apptest.MustStart(t, app.Config{RateLimitIP: 1, RateWindow: time.Hour})
		plain.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil, "X-Forwarded-For: 198.51.100.1")
		if r := plain.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil, "X-Forwarded-For: 198.51.100.2"); r.Status != 429 {
			t.Fatalf("an untrusted forwarding header was read: %d", r.Status)
		}
		// Behind a trusted proxy (the test client's loopback address) each forwarded
		// client has its own limit, and a spoofed first hop does not buy a new one.
		proxied := apptest.MustStart(t, app.Config{RateLimitIP: 1, RateWindow: time.Hour,
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
		for _, client := range []string{"198.51.100.1", "198.51.100.2"} {
			if r := proxied.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil, "X-Forwarded-For: "+client); r.Status != 200 {
				t.Fatalf("%s: %d", client, r.Status)
			}
		}
		if r := proxied.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil, "X-Forwarded-For: 203.0.113.50, 198.51.100.1"); r.Status != 429 {
			t.Fatalf("a spoofed hop bought a new limit: %d", r.Status)
		}
		fwd := apptest.MustStart(t, app.Config{RateLimitIP: 1, RateWindow: time.Hour, ForwardedHeader: rest.HeaderForwarded,
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
		for _, client := range []string{`for=198.51.100.1`, `for="[2001:db8::1]:4711"`} {
			if r := fwd.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil, "Forwarded: "+client); r.Status != 200 {
				t.Fatalf("%s: %d", client, r.Status)
			}
		}
	})
}

// proxy is a TCP proxy to Postgres that a test can cut and restore.
type proxy struct {
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
}

func TestReadinessFollowsTheDatabase(t *testing.T) {
	u := storetest.MustURL(t)
	cfg, err := pgxConfigHostPort(u)
	if err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, cfg)
	ctx := context.Background()
	db, err := store.Open(ctx, strings.Replace(u, cfg, px.addr, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := app.New(app.Config{}, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Server().Handler())
	defer srv.Close()
	ready := func() int {
		res, err := http.Get(srv.URL + "/api/v1/health/ready")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := ready(); s != 200 {
		t.Fatalf("ready before cut: %d", s)
	}
	px.cut()
	if s := ready(); s != 503 {
		t.Fatalf("ready while database unreachable: %d", s)
	}
	px.restore(t)
	// The pool may hand back one dead connection before reconnecting; a few tries are enough.
	got := 0
	for i := 0; i < 5 && got != 200; i++ {
		got = ready()
	}
	if got != 200 {
		t.Fatalf("ready after restore: %d", got)
	}
}

func pgxConfigHostPort(u string) (string, error) {
	m := regexp.MustCompile(`@([^/]+)/`).FindStringSubmatch(u)
	if m == nil {
		return "", fmt.Errorf("no host in database url")
	}
	return m[1], nil
}
