// Package ui serves Vigia's web app at /ui/: a TypeScript single-page app (search,
// dataset pages, the lineage graph, incidents, domains) bundled by esbuild with
// Cytoscape.js and dagre, embedded in the binary so it works with no internet and
// loads nothing from another origin. The app calls only the public REST API of the
// same origin with the caller's bearer token, so tenancy and visibility are the API's.
//
// dist/ is what ui/build.sh builds from web/ (sources and the lock file that pins
// esbuild, cytoscape and cytoscape-dagre); `build.sh --check` (run by `make verify`)
// fails when dist/ is stale. static/ holds the page. The app's words come from the
// API's message catalogue (keys ui.*), served at /ui/messages/{lang}.json.
package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/internal/webasset"
)

//go:embed dist static
var files embed.FS

// contentTypes names the only kinds of file served; anything else is not.
var contentTypes = map[string]string{
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".html": "text/html; charset=utf-8",
	".json": "application/json; charset=utf-8",
}

// ContentSecurityPolicy allows scripts, styles, images and requests from this origin
// only: no inline script or style, no other origin. data: and blob: images are the
// PNG export of the lineage graph.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Mount is where the app is served.
const Mount = "/ui"

// Handler serves the page at /ui/ (and /ui, redirected there), assets under
// /ui/assets/ and the catalogue's ui.* messages at /ui/messages/{lang}.json. It
// matches the full request path, so the router mounts it as
//
//	r.Get("/ui", h.ServeHTTP)
//	r.Get("/ui/*", h.ServeHTTP)
//
// Anything else under /ui/ is 404; methods other than GET and HEAD are 405.
func Handler(msgs *i18n.Catalog) http.Handler {
	if msgs == nil {
		var err error
		if msgs, err = i18n.New(); err != nil {
			// The catalogues are embedded: only a broken build gets here.
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "web app unavailable", http.StatusInternalServerError)
			})
		}
	}
	h := &handler{assets: loadAssets(), messages: map[string]*webasset.Asset{}}
	for _, lang := range []string{i18n.PT, i18n.EN, i18n.ES} {
		body, err := json.Marshal(msgs.Messages(lang, "ui."))
		if err != nil {
			continue
		}
		h.messages[lang] = webasset.New(body, contentTypes[".json"])
	}
	page, err := template.New("index.html").Funcs(template.FuncMap{"asset": h.assetURL}).ParseFS(files, "static/index.html")
	if err != nil {
		// The page is embedded and covered by the package's tests: only a broken
		// build gets here.
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "web app unavailable", http.StatusInternalServerError)
		})
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, pageData{Lang: i18n.PT, MessagesPrefix: Mount + "/messages/"}); err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "web app unavailable", http.StatusInternalServerError)
		})
	}
	h.page = buf.Bytes()
	return h
}

type handler struct {
	page     []byte
	assets   map[string]*webasset.Asset
	messages map[string]*webasset.Asset
}

type pageData struct {
	Lang           string
	MessagesPrefix string
}

func loadAssets() map[string]*webasset.Asset {
	assets := map[string]*webasset.Asset{}
	entries, err := fs.ReadDir(files, "dist")
	if err != nil {
		return assets
	}
	for _, e := range entries {
		ct, ok := contentTypes[path.Ext(e.Name())]
		if e.IsDir() || !ok {
			continue
		}
		body, err := fs.ReadFile(files, "dist/"+e.Name())
		if err != nil {
			continue
		}
		assets[e.Name()] = webasset.New(body, ct)
	}
	return assets
}

// assetURL is the template's `asset`: the versioned URL of an embedded file.
func (h *handler) assetURL(name string) string {
	a, ok := h.assets[name]
	if !ok {
		return Mount + "/assets/" + name
	}
	return Mount + "/assets/" + name + "?v=" + a.Version
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == Mount:
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.Redirect(w, r, Mount+"/", http.StatusMovedPermanently)
	case p == Mount+"/":
		h.servePage(w, r)
	case strings.HasPrefix(p, Mount+"/assets/"):
		h.serveAsset(w, r, h.assets[strings.TrimPrefix(p, Mount+"/assets/")])
	case strings.HasPrefix(p, Mount+"/messages/") && strings.HasSuffix(p, ".json"):
		h.serveAsset(w, r, h.messages[strings.TrimSuffix(strings.TrimPrefix(p, Mount+"/messages/"), ".json")])
	default:
		notFound(w)
	}
}

func notFound(w http.ResponseWriter) {
	setSecurityHeaders(w.Header())
	http.Error(w, http.StatusText(http.StatusNotFound), http.StatusNotFound)
}

func setSecurityHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	setSecurityHeaders(hdr)
	hdr.Set("Content-Type", contentTypes[".html"])
	// The page names the current asset versions, so it is revalidated every time.
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Content-Length", strconv.Itoa(len(h.page)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(h.page)
	}
}

func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request, a *webasset.Asset) {
	if a == nil {
		notFound(w)
		return
	}
	setSecurityHeaders(w.Header())
	a.Serve(w, r)
}
