// Package explorer serves Vigia's GraphQL explorer: a GraphiQL page whose scripts
// and styles are embedded in the binary, so it works with no internet and loads
// nothing from another origin.
//
// The vendor files in dist/ are GraphiQL's, React's and ReactDOM's standalone
// builds, copied byte for byte by build.sh from the versions pinned in
// web/package-lock.json; static/ holds the page and the few lines that start
// GraphiQL. `build.sh --check` fails when dist/ is stale.
package explorer

import (
	"bytes"
	"crypto/rand"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia/internal/webasset"
)

// files holds the vendor builds (dist) and Vigia's own page, script and style (static).
//
//go:embed dist static
var files embed.FS

// DefaultQuery is the operation shown in a new explorer tab when the handler is
// not given another with WithDefaultQuery.
const DefaultQuery = `# Welcome to Vigia's GraphQL explorer.
#
# Sign in: open Headers below and add
#   {"Authorization": "Bearer svc_..."}
# or open this page as
#   /graphql#token=svc_...
# (the part after # never reaches the
# server and leaves the address bar).
#
# Run: Ctrl+Enter. Schema: Docs, left.

query Datasets {
  datasets(limit: 20) {
    total
    items {
      name
      latestScore
    }
  }
}
`

// contentTypes names the only kinds of file the handler serves; anything else in
// the embedded folders is not served.
var contentTypes = map[string]string{
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".html": "text/html; charset=utf-8",
}

// Option changes how Handler serves the explorer.
type Option func(*config)

type config struct {
	defaultQuery string
}

// WithDefaultQuery sets the operation shown in a new explorer tab.
func WithDefaultQuery(query string) Option {
	return func(c *config) { c.defaultQuery = query }
}

// Handler serves the explorer page at mount and its assets under mount+"/assets/".
// It matches the full request path, as chi passes it, so the lead's router mounts it as
//
//	h := explorer.Handler("/graphql")
//	r.Get("/graphql", h.ServeHTTP)
//	r.Get("/graphql/assets/*", h.ServeHTTP)
//
// The page posts operations to mount itself. Anything else under mount is 404, and
// methods other than GET and HEAD are 405.
func Handler(mount string, opts ...Option) http.Handler {
	cfg := config{defaultQuery: DefaultQuery}
	for _, opt := range opts {
		opt(&cfg)
	}
	mount = "/" + strings.Trim(mount, "/")
	assetsPrefix := strings.TrimSuffix(mount, "/") + "/assets/"
	h := &handler{
		mount:        mount,
		assetsPrefix: assetsPrefix,
		defaultQuery: cfg.defaultQuery,
		assets:       loadAssets(),
	}
	page, err := template.New("index.html").Funcs(template.FuncMap{"asset": h.assetURL}).ParseFS(files, "static/index.html")
	if err != nil {
		// The template is embedded and covered by the package's tests, so this
		// only happens to a broken build; answer 500 instead of panicking.
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "GraphQL explorer unavailable", http.StatusInternalServerError)
		})
	}
	h.page = page
	return h
}

type handler struct {
	mount        string
	assetsPrefix string
	defaultQuery string
	page         *template.Template
	assets       map[string]*webasset.Asset
}

// loadAssets indexes the served files of dist/ and static/ by base name.
func loadAssets() map[string]*webasset.Asset {
	assets := make(map[string]*webasset.Asset)
	for _, dir := range []string{"dist", "static"} {
		entries, err := fs.ReadDir(files, dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			ct, ok := contentTypes[path.Ext(e.Name())]
			if e.IsDir() || !ok || e.Name() == "index.html" {
				continue
			}
			body, err := fs.ReadFile(files, dir+"/"+e.Name())
			if err != nil {
				continue
			}
			assets[e.Name()] = webasset.New(body, ct)
		}
	}
	return assets
}

// assetURL is the page template's `asset` function: the URL of an embedded file,
// versioned so that it can be cached as immutable.
func (h *handler) assetURL(name string) string {
	a, ok := h.assets[name]
	if !ok {
		return h.assetsPrefix + name
	}
	return h.assetsPrefix + name + "?v=" + a.Version
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == h.mount || p == h.mount+"/":
		h.servePage(w, r)
	case strings.HasPrefix(p, h.assetsPrefix):
		h.serveAsset(w, r, strings.TrimPrefix(p, h.assetsPrefix))
	default:
		http.NotFound(w, r)
	}
}

// pageData is what the page template shows.
type pageData struct {
	Endpoint     string
	DefaultQuery string
	StyleNonce   string
	// Examples is the Examples menu's data (JSON).
	Examples string
}

// contentSecurityPolicy allows scripts, styles and requests only to this origin.
// The exceptions: data: fonts and images, which GraphiQL's stylesheet inlines, and
// one <style> element that GraphiQL's dialogs add, allowed by a per-response nonce.
func contentSecurityPolicy(styleNonce string) string {
	return "default-src 'none'; " +
		"script-src 'self'; " +
		"style-src 'self' 'nonce-" + styleNonce + "'; " +
		"img-src 'self' data:; " +
		"font-src 'self' data:; " +
		"connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	// rand.Text is base32, which is valid nonce syntax as it is.
	nonce := rand.Text()
	var buf bytes.Buffer
	err := h.page.Execute(&buf, pageData{Endpoint: h.mount, DefaultQuery: h.defaultQuery, StyleNonce: nonce,
		Examples: examplesJSON()})
	if err != nil {
		http.Error(w, "GraphQL explorer unavailable", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", contentTypes[".html"])
	hdr.Set("Content-Security-Policy", contentSecurityPolicy(nonce))
	// The nonce changes on every response, so the page must not be reused.
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := h.assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	a.Serve(w, r)
}
