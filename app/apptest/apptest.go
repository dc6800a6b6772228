// Package apptest runs the real Vigia handler stack on an httptest server over the test
// package's own database, with helpers to make workspaces, credentials and datasets.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/store/storetest"
)

// Env is a running Vigia.
type Env struct {
	App    *app.App
	DB     *store.DB
	Server *httptest.Server
	Logs   *SyncBuffer
	check  *contractCheck
}

// SyncBuffer is a goroutine-safe log sink tests can search.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends to the buffer.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// MustStart starts Vigia on the package's database; cfg may set rate limits.
func MustStart(tb testing.TB, cfg app.Config) *Env {
	tb.Helper()
	db := storetest.MustDB(tb)
	logs := &SyncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.BuildSHA == "" {
		cfg.BuildSHA = "1a2b3c4"
	}
	a, err := app.New(cfg, db, log)
	if err != nil {
		tb.Fatal(err)
	}
	server := a.Server()
	doc, err := server.OpenAPI()
	if err != nil {
		tb.Fatal(err)
	}
	c, err := contractFor(doc)
	if err != nil {
		tb.Fatal(err)
	}
	check := &contractCheck{next: server.Handler(), routes: server.Handler().(chi.Routes), contract: c}
	srv := httptest.NewServer(check)
	// Cleanups run last-in first-out: the report comes after the server closed, when
	// every response has been checked.
	tb.Cleanup(func() { check.report(tb) })
	tb.Cleanup(srv.Close)
	return &Env{App: a, DB: db, Server: srv, Logs: logs, check: check}
}

// MustWorkspace creates a workspace with a unique name and returns its id.
func (e *Env) MustWorkspace(tb testing.TB, prefix string) string {
	tb.Helper()
	w, err := e.App.Identity.CreateWorkspace(context.Background(), prefix+"-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		tb.Fatal(err)
	}
	return w.ID
}

// MustToken creates an API token in the workspace.
func (e *Env) MustToken(tb testing.TB, workspaceID string) string {
	tb.Helper()
	_, s, err := e.App.Identity.CreateAPIToken(context.Background(), workspaceID, "test", "test", nil)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// MustSession creates a person with role in the workspace and returns their session token.
func (e *Env) MustSession(tb testing.TB, workspaceID string, role vigia.Role) string {
	tb.Helper()
	_, s, err := e.App.Identity.CreateUser(context.Background(), workspaceID, role.String()+"-"+vigia.NewUUID()[:8]+"@example.pt", role)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// MustConnection inserts a connection row (no credentials needed for read tests).
func (e *Env) MustConnection(tb testing.TB, workspaceID, name string) string {
	tb.Helper()
	id := vigia.NewID()
	_, err := e.DB.Pool().Exec(context.Background(), `INSERT INTO connections (id, workspace_id, name, kind, dsn_encrypted)
		VALUES ($1, $2, $3, 'postgres', '\x00')`, id, workspaceID, name)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// MustDataset inserts a dataset with two columns and returns its id.
func (e *Env) MustDataset(tb testing.TB, workspaceID, connectionID, schema, table string) string {
	tb.Helper()
	id := vigia.NewID()
	ctx := context.Background()
	_, err := e.DB.Pool().Exec(ctx, `INSERT INTO datasets (id, workspace_id, connection_id, schema_name, table_name, kind, latest_score)
		VALUES ($1, $2, $3, $4, $5, 'table', 87.5)`, id, workspaceID, connectionID, schema, table)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = e.DB.Pool().Exec(ctx, `INSERT INTO dataset_columns (dataset_id, name, position, data_type, class, nullable, primary_key, profile)
		VALUES ($1, 'id', 1, 'integer', 'numeric', false, true, '{"null_count":0,"null_rate":0}'),
		       ($1, 'telefone', 2, 'text', 'text', true, false,
		        '{"null_count":3,"null_rate":0.03,"semantic":{"type":"phone_pt","estimated":true,"sample_size":100,"matches":97,"valid":97}}')`, id)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *Response) JSON(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Do sends a request with an optional bearer credential, body and headers
// ("Name: value").
func (e *Env) Do(tb testing.TB, method, path, credential string, body any, headers ...string) *Response {
	tb.Helper()
	_, _, r := e.send(tb, method, path, credential, body, headers)
	return r
}

// send is Do that also returns the request and the body it sent.
func (e *Env) send(tb testing.TB, method, path, credential string, body any, headers []string) (*http.Request, []byte, *Response) {
	tb.Helper()
	var sent []byte
	switch b := body.(type) {
	case nil:
	case string:
		sent = []byte(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		sent = j
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.Server.URL+path, bytes.NewReader(sent))
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if credential != "" {
		req.Header.Set("Authorization", "Bearer "+credential)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	res, err := e.Server.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return req, sent, &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// GraphQL posts a query and returns the decoded response.
func (e *Env) GraphQL(tb testing.TB, credential, query string, vars map[string]any) map[string]any {
	tb.Helper()
	r := e.Do(tb, http.MethodPost, "/graphql", credential, map[string]any{"query": query, "variables": vars})
	var out map[string]any
	r.JSON(tb, &out)
	return out
}
