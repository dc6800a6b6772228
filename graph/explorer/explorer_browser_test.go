package explorer_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigia-data/vigia/graph/explorer"
	"github.com/vigia-data/vigia/graph/explorer/explorertest"
	"github.com/vigia-data/vigia/internal/browsertest"
)

// fakeGraphQL stands in for Vigia's POST /graphql: it answers GraphiQL's schema
// introspection and, for a request bearing the expected token, one datasets list.
type fakeGraphQL struct {
	t             *testing.T
	token         string
	introspection []byte

	mu       sync.Mutex
	requests []seenRequest
}

// seenRequest is what the fake endpoint kept of one POST.
type seenRequest struct {
	Authorization string
	ContentType   string
	Query         string
}

func (f *fakeGraphQL) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Query string `json:"query"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"errors":[{"message":"bad json"}]}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, seenRequest{
		Authorization: r.Header.Get("Authorization"),
		ContentType:   r.Header.Get("Content-Type"),
		Query:         body.Query,
	})
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"message":"unauthenticated","extensions":{"code":"unauthenticated"}}]}`))
		return
	}
	if strings.Contains(body.Query, "__schema") {
		_, _ = w.Write(f.introspection)
		return
	}
	_, _ = w.Write([]byte(`{"data":{"datasets":[{"name":"public.clientes"}]}}`))
}

func (f *fakeGraphQL) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.requests...)
}

// newToken returns a token in the contract's format: svc_ + 48 lowercase hex.
func newToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "svc_" + hex.EncodeToString(b)
}

// startExplorerServer serves the explorer on GET /graphql and the fake endpoint
// on POST /graphql, as Vigia's router does.
func startExplorerServer(t *testing.T, token string) (*httptest.Server, *fakeGraphQL) {
	t.Helper()
	introspection, err := os.ReadFile(filepath.Join("testdata", "introspection.json"))
	require.NoError(t, err)
	fake := &fakeGraphQL{t: t, token: token, introspection: introspection}
	page := explorer.Handler("/graphql")
	mux := http.NewServeMux()
	mux.Handle("GET /graphql", page)
	mux.Handle("GET /graphql/assets/", page)
	mux.Handle("POST /graphql", fake)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, fake
}

func TestExplorerRunsQueryWithFragmentTokenInBrowser(t *testing.T) {
	b := browsertest.New(t)
	token := newToken(t)
	srv, fake := startExplorerServer(t, token)

	result, err := explorertest.RunQuery(b.Context(), srv.URL+"/graphql#token="+token, "{ datasets { name } }")
	require.NoError(t, err)
	require.Contains(t, result, "public.clientes")

	var ran *seenRequest
	for _, r := range fake.seen() {
		if strings.Contains(r.Query, "datasets") && !strings.Contains(r.Query, "__schema") {
			ran = &r
		}
	}
	require.NotNil(t, ran, "the fake endpoint never received the datasets query; saw %+v", fake.seen())
	require.Equal(t, "Bearer "+token, ran.Authorization)
	require.Equal(t, "application/json", ran.ContentType)

	t.Run("TokenLeavesTheAddressBar", func(t *testing.T) {
		var href string
		b.Eval(`location.href`, &href)
		require.Equal(t, srv.URL+"/graphql", href)
	})

	t.Run("TokenIsInTheHeadersEditor", func(t *testing.T) {
		var headers string
		b.Eval(`Array.from(document.querySelectorAll(".graphiql-editor-tool .CodeMirror"))
			.map(el => el.CodeMirror.getValue()).join("\n")`, &headers)
		require.Contains(t, headers, `"Authorization": "Bearer `+token+`"`)
	})

	t.Run("TokenIsNotStoredInTheBrowser", func(t *testing.T) {
		var stored string
		b.Eval(`JSON.stringify(Object.assign({}, localStorage, sessionStorage))`, &stored)
		require.NotContains(t, stored, token)
	})

	t.Run("SettingsDialogOpensWithinTheContentSecurityPolicy", func(t *testing.T) {
		// The dialog's scroll lock adds the one <style> element the policy allows
		// by nonce; a violation would show up in Problems below.
		b.Click(`button[aria-label="Open settings dialog"]`)
		b.WaitVisible(".graphiql-dialog")
		var locked bool
		b.Eval(`Array.from(document.querySelectorAll("style")).some(s => s.nonce !== "")`, &locked)
		require.True(t, locked, "no nonce-stamped <style> element: the scroll lock did not run")
		b.Eval(`document.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape", bubbles: true}))`, nil)
	})

	t.Run("PageReportsNoProblems", func(t *testing.T) {
		require.Empty(t, b.Problems())
	})

	t.Run("ScreenshotIsAPNG", func(t *testing.T) {
		shot := filepath.Join(t.TempDir(), "explorer.png")
		b.Screenshot(shot)
		data, err := os.ReadFile(shot)
		require.NoError(t, err)
		require.NotEmpty(t, data)
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		require.NoError(t, err)
		require.Equal(t, 1280, cfg.Width)
		if dir := os.Getenv("VIGIA_SCREENSHOT_DIR"); dir != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "graphql-explorer.png"), data, 0o644))
		}
	})
}

func TestExplorerWithoutTokenShowsUnauthenticatedInBrowser(t *testing.T) {
	b := browsertest.New(t)
	srv, fake := startExplorerServer(t, newToken(t))

	result, err := explorertest.RunQuery(b.Context(), srv.URL+"/graphql", "{ datasets { name } }")
	require.NoError(t, err)
	require.Contains(t, result, "unauthenticated")
	require.NotContains(t, result, "public.clientes")
	for _, r := range fake.seen() {
		require.Empty(t, r.Authorization)
	}
}
