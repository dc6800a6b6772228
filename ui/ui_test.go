package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/ui"
)

func serve(t *testing.T, method, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	msgs, err := i18n.New()
	require.NoError(t, err)
	h := ui.Handler(msgs)
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestPageHeadersAndAssets(t *testing.T) {
	rec := serve(t, http.MethodGet, "/ui/")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, ui.ContentSecurityPolicy, rec.Header().Get("Content-Security-Policy"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	body := rec.Body.String()
	require.NotContains(t, body, "<script>", "no inline script")
	require.NotContains(t, body, "style=", "no inline style")
	require.NotContains(t, body, "http://")
	require.NotContains(t, body, "https://")

	// Every asset the page names is served, immutable under its version.
	refs := regexp.MustCompile(`(?:src|href)="(/ui/assets/[^"]+)"`).FindAllStringSubmatch(body, -1)
	require.Len(t, refs, 2)
	for _, m := range refs {
		url := strings.ReplaceAll(m[1], "&amp;", "&")
		a := serve(t, http.MethodGet, url)
		require.Equal(t, http.StatusOK, a.Code, url)
		require.Equal(t, "public, max-age=31536000, immutable", a.Header().Get("Cache-Control"), url)
		require.Equal(t, "nosniff", a.Header().Get("X-Content-Type-Options"))
		require.NotEmpty(t, a.Body.Bytes())
		gz := serve(t, http.MethodGet, url, "Accept-Encoding", "gzip")
		require.Equal(t, "gzip", gz.Header().Get("Content-Encoding"), url)
		nm := serve(t, http.MethodGet, url, "If-None-Match", a.Header().Get("ETag"))
		require.Equal(t, http.StatusNotModified, nm.Code)
		// Without the version (or with an old one) nothing is pinned.
		old := serve(t, http.MethodGet, strings.Split(url, "?")[0]+"?v=0000")
		require.Equal(t, "no-cache", old.Header().Get("Cache-Control"))
	}
	require.Equal(t, http.StatusOK, serve(t, http.MethodGet, "/ui/assets/THIRD_PARTY_LICENSES.txt").Code)
}

func TestMessagesComeFromTheCatalogue(t *testing.T) {
	for lang, want := range map[string]string{"pt-PT": "Pesquisa", "en": "Search", "es": "Búsqueda"} {
		rec := serve(t, http.MethodGet, "/ui/messages/"+lang+".json")
		require.Equal(t, http.StatusOK, rec.Code)
		var m map[string]string
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m))
		require.Equal(t, want, m["ui.nav.search"])
		for k := range m {
			require.True(t, strings.HasPrefix(k, "ui."), k)
		}
	}
	// Every ui.* key exists in all three languages.
	var pt, en, es map[string]string
	for lang, into := range map[string]*map[string]string{"pt-PT": &pt, "en": &en, "es": &es} {
		require.NoError(t, json.Unmarshal(serve(t, http.MethodGet, "/ui/messages/"+lang+".json").Body.Bytes(), into))
	}
	require.Greater(t, len(pt), 100)
	for k := range pt {
		require.Contains(t, en, k)
		require.Contains(t, es, k)
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	for _, p := range []string{"/ui/x", "/ui/assets/nope.js", "/ui/assets/../ui.go", "/ui/messages/fr.json", "/ui/static/index.html", "/ui/dist/app.js"} {
		rec := serve(t, http.MethodGet, p)
		require.Equal(t, http.StatusNotFound, rec.Code, p)
		require.NotContains(t, rec.Body.String(), "nope", "no echo")
	}
	rec := serve(t, http.MethodPost, "/ui/")
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
	rec = serve(t, http.MethodGet, "/ui")
	require.Equal(t, http.StatusMovedPermanently, rec.Code)
	require.Equal(t, "/ui/", rec.Header().Get("Location"))
	head := serve(t, http.MethodHead, "/ui/")
	require.Equal(t, http.StatusOK, head.Code)
	require.Empty(t, head.Body.Bytes())
}

// Every word the app's sources ask for exists in the catalogue: the literal keys of
// t("...") calls, and for keys built from an API value, every value the API's
// enums allow.
func TestEveryWordTheAppUsesIsInTheCatalogue(t *testing.T) {
	var pt map[string]string
	require.NoError(t, json.Unmarshal(serve(t, http.MethodGet, "/ui/messages/pt-PT.json").Body.Bytes(), &pt))
	has := func(key string) bool { _, ok := pt[key]; return ok }
	files, err := filepath.Glob(filepath.Join("web", "src", "*.ts"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	literal := regexp.MustCompile(`\bt\("([a-z_.]+)"`)
	// ["search.col_name", ...].map((k) => ... t(k)): lists of keys.
	keyList := regexp.MustCompile(`\[((?:"[a-z_.]+",?\s*)+)\]\.map\(\(k\)`)
	// badge("verdict", value): t("verdict." + value).
	badge := regexp.MustCompile(`\bbadge\("([a-z_]+)"`)
	var prefixes []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range keyList.FindAllStringSubmatch(string(src), -1) {
			for _, k := range regexp.MustCompile(`"([a-z_.]+)"`).FindAllStringSubmatch(m[1], -1) {
				require.True(t, has("ui."+k[1]), "%s lists %s, not in the catalogue", f, k[1])
			}
		}
		for _, m := range badge.FindAllStringSubmatch(string(src), -1) {
			prefixes = append(prefixes, m[1]+".")
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			if strings.HasSuffix(m[1], ".") {
				prefixes = append(prefixes, m[1])
				continue
			}
			require.True(t, has("ui."+m[1]), "%s asks for %s, not in the catalogue", f, m[1])
		}
	}
	dynamic := map[string][]string{
		"verdict.":        {"pass", "warn", "fail", "unknown"},
		"decision.":       {"trusted", "caution", "untrusted", "unknown"},
		"severity.":       {"info", "warning", "critical"},
		"status.":         {"open", "acknowledged", "resolved", "ignored"},
		"kind.":           {"table", "view", "materialized_view", "external", "unknown"},
		"dimension.":      {"completude", "unicidade", "validade", "atualidade", "consistencia"},
		"purpose.":        {"agente", "rag", "treino", "bi", "ml"},
		"contract.":       {"valid", "violated"},
		"readiness.":      {"ready", "ready_with_warnings", "not_ready"},
		"domain.status.":  {"draft", "published", "deprecated"},
		"incident.scope.": {"column", "table", "none"},
		"edge.":           {"parsed", "declared", "dbt", "openlineage", "inferred"},
		"graph.dir.":      {"both", "upstream", "downstream"},
	}
	for _, p := range prefixes {
		values, ok := dynamic[p]
		require.True(t, ok, "the sources build keys from %q: list its values here", p)
		for _, v := range values {
			require.True(t, has("ui."+p+v), "%s%s is not in the catalogue", p, v)
		}
	}
}
