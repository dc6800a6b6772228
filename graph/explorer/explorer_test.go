package explorer_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/vigia-data/vigia/graph/explorer"
)

// newRouter mounts the explorer the way Vigia's router does.
func newRouter(mount string, opts ...explorer.Option) http.Handler {
	h := explorer.Handler(mount, opts...)
	r := chi.NewRouter()
	r.Get(mount, h.ServeHTTP)
	r.Get(strings.TrimSuffix(mount, "/")+"/assets/*", h.ServeHTTP)
	return r
}

func get(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// assetRefs finds the src and href attributes of a page.
var assetRefs = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

func pageAssets(t *testing.T, body string) []string {
	t.Helper()
	var urls []string
	for _, m := range assetRefs.FindAllStringSubmatch(body, -1) {
		urls = append(urls, strings.ReplaceAll(m[1], "&amp;", "&"))
	}
	return urls
}

func TestPageIsServedWithStrictPolicy(t *testing.T) {
	rec := get(t, newRouter("/graphql"), "/graphql")

	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	csp := rec.Header().Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "script-src 'self';")
	require.Contains(t, csp, "connect-src 'self'")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "unsafe")

	body := rec.Body.String()
	require.Contains(t, body, "<title>Vigia — GraphQL explorer</title>")
	require.Contains(t, body, `data-endpoint="/graphql"`)
	require.Contains(t, body, "query Datasets")
	// The style nonce in the policy is the one the page hands to GraphiQL.
	nonce := regexp.MustCompile(`'nonce-([A-Za-z0-9+/=]+)'`).FindStringSubmatch(csp)
	require.Len(t, nonce, 2)
	require.Contains(t, body, `data-style-nonce="`+nonce[1]+`"`)
}

func TestPageLoadsOnlyLocalAssets(t *testing.T) {
	body := get(t, newRouter("/graphql"), "/graphql").Body.String()
	refs := pageAssets(t, body)
	require.Len(t, refs, 7) // favicon, 2 stylesheets, 4 scripts
	for _, ref := range refs {
		if ref == "data:," {
			continue // the empty favicon, so the browser asks the server for none
		}
		require.True(t, strings.HasPrefix(ref, "/graphql/assets/"), "page refers to %q", ref)
	}
}

func TestEveryPageAssetIsServedWithItsContentTypeAndLongCache(t *testing.T) {
	h := newRouter("/graphql")
	want := map[string]string{
		"graphiql.min.css":            "text/css; charset=utf-8",
		"explorer.css":                "text/css; charset=utf-8",
		"react.production.min.js":     "text/javascript; charset=utf-8",
		"react-dom.production.min.js": "text/javascript; charset=utf-8",
		"graphiql.min.js":             "text/javascript; charset=utf-8",
		"explorer.js":                 "text/javascript; charset=utf-8",
	}
	seen := map[string]bool{}
	for _, ref := range pageAssets(t, get(t, h, "/graphql").Body.String()) {
		if ref == "data:," {
			continue
		}
		name := strings.TrimPrefix(ref[:strings.Index(ref, "?")], "/graphql/assets/")
		t.Run(name, func(t *testing.T) {
			rec := get(t, h, ref)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, want[name], rec.Header().Get("Content-Type"))
			require.Equal(t, "public, max-age=31536000, immutable", rec.Header().Get("Cache-Control"))
			require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			require.NotEmpty(t, rec.Header().Get("ETag"))
			require.Empty(t, rec.Header().Get("Content-Encoding"))
			require.NotZero(t, rec.Body.Len())
		})
		seen[name] = true
	}
	require.Len(t, seen, len(want))
}

func TestLicencesAreServedAsText(t *testing.T) {
	rec := get(t, newRouter("/graphql"), "/graphql/assets/THIRD_PARTY_LICENSES.txt")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/plain; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Contains(t, rec.Body.String(), "MIT")
}

func TestAssetIsGzippedForBrowsersThatAcceptIt(t *testing.T) {
	h := newRouter("/graphql")
	plain := get(t, h, "/graphql/assets/graphiql.min.js")
	rec := get(t, h, "/graphql/assets/graphiql.min.js", "Accept-Encoding", "br, gzip")

	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
	require.Equal(t, "Accept-Encoding", rec.Header().Get("Vary"))
	require.NotEqual(t, plain.Header().Get("ETag"), rec.Header().Get("ETag"))
	require.Less(t, rec.Body.Len(), plain.Body.Len())
	zr, err := gzip.NewReader(rec.Body)
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.True(t, bytes.Equal(plain.Body.Bytes(), unzipped))

	refused := get(t, h, "/graphql/assets/graphiql.min.js", "Accept-Encoding", "gzip;q=0")
	require.Empty(t, refused.Header().Get("Content-Encoding"))
}

func TestAssetAnswers304ForItsETag(t *testing.T) {
	h := newRouter("/graphql")
	etag := get(t, h, "/graphql/assets/explorer.js").Header().Get("ETag")
	rec := get(t, h, "/graphql/assets/explorer.js", "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, rec.Code)
	require.Zero(t, rec.Body.Len())
}

func TestAssetWithoutCurrentVersionIsRevalidated(t *testing.T) {
	h := newRouter("/graphql")
	for _, target := range []string{"/graphql/assets/explorer.js", "/graphql/assets/explorer.js?v=000000000000"} {
		rec := get(t, h, target)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"), target)
	}
}

func TestUnknownPathsAre404(t *testing.T) {
	h := explorer.Handler("/graphql")
	for _, target := range []string{
		"/graphql/assets/nope.js",
		"/graphql/assets/../explorer.go",
		"/graphql/assets/index.html",
		"/graphql/other",
		"/elsewhere",
	} {
		rec := get(t, h, target)
		require.Equal(t, http.StatusNotFound, rec.Code, target)
	}
}

func TestOtherMethodsAre405(t *testing.T) {
	h := explorer.Handler("/graphql")
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{}`))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
}

func TestHeadAnswersHeadersWithoutBody(t *testing.T) {
	h := explorer.Handler("/graphql")
	for _, target := range []string{"/graphql", "/graphql/assets/explorer.js"} {
		req := httptest.NewRequest(http.MethodHead, target, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, target)
		require.NotEmpty(t, rec.Header().Get("Content-Length"), target)
		require.Zero(t, rec.Body.Len(), target)
	}
}

func TestNonceChangesOnEveryResponse(t *testing.T) {
	h := explorer.Handler("/graphql")
	first := get(t, h, "/graphql").Header().Get("Content-Security-Policy")
	second := get(t, h, "/graphql").Header().Get("Content-Security-Policy")
	require.NotEqual(t, first, second)
}

func TestMountDecidesPageAndAssetPaths(t *testing.T) {
	tests := []struct {
		mount, page, asset string
	}{
		{"/graphql", "/graphql", "/graphql/assets/explorer.js"},
		{"graphql/", "/graphql", "/graphql/assets/explorer.js"},
		{"/api/graphql", "/api/graphql", "/api/graphql/assets/explorer.js"},
		{"/", "/", "/assets/explorer.js"},
	}
	for _, tt := range tests {
		t.Run(tt.mount, func(t *testing.T) {
			h := explorer.Handler(tt.mount)
			page := get(t, h, tt.page)
			require.Equal(t, http.StatusOK, page.Code)
			require.Contains(t, page.Body.String(), `src="`+tt.asset+`?v=`)
			require.Equal(t, http.StatusOK, get(t, h, tt.asset).Code)
		})
	}
}

func TestDefaultQueryCanBeReplaced(t *testing.T) {
	h := explorer.Handler("/graphql", explorer.WithDefaultQuery(`{ workspace { name } } # "quoted" <b>`))
	body := get(t, h, "/graphql").Body.String()
	require.Contains(t, body, `data-default-query="{ workspace { name } } # &#34;quoted&#34; &lt;b&gt;"`)
	require.NotContains(t, body, "query Datasets")
}
