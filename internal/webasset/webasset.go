// Package webasset serves embedded static files under versioned URLs, for the GraphQL
// explorer and the web app: gzip when the client takes it and it pays, an ETag per
// encoding, a year's immutable cache under the current version and revalidation
// otherwise. The caller sets its own security headers before Serve.
package webasset

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Immutable is the cache policy of an asset under its current version.
const Immutable = "public, max-age=31536000, immutable"

// Asset is one embedded file.
type Asset struct {
	Body        []byte
	ContentType string
	// Version is derived from the body: the query parameter v that pins it.
	Version string

	gzipOnce sync.Once
	gzipped  []byte
}

// New returns the asset of body with its content type; its version is the first 8
// bytes of the body's SHA-256, in hex.
func New(body []byte, contentType string) *Asset {
	sum := sha256.Sum256(body)
	return &Asset{Body: body, ContentType: contentType, Version: hex.EncodeToString(sum[:8])}
}

// Serve answers GET or HEAD for the asset (304 on a matching If-None-Match).
func (a *Asset) Serve(w http.ResponseWriter, r *http.Request) {
	body, etag := a.Body, `"`+a.Version+`"`
	hdr := w.Header()
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		if gz := a.gzip(); gz != nil {
			body, etag = gz, `"`+a.Version+`-gzip"`
			hdr.Set("Content-Encoding", "gzip")
		}
	}
	hdr.Set("Content-Type", a.ContentType)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Vary", "Accept-Encoding")
	hdr.Set("ETag", etag)
	if r.URL.Query().Get("v") == a.Version {
		hdr.Set("Cache-Control", Immutable)
	} else {
		// An old or missing version must not pin today's bytes under that URL.
		hdr.Set("Cache-Control", "no-cache")
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		hdr.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// gzip returns the asset compressed, or nil when compressing does not pay.
func (a *Asset) gzip() []byte {
	a.gzipOnce.Do(func() {
		if len(a.Body) < 1024 {
			return
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return
		}
		if _, err := zw.Write(a.Body); err != nil {
			return
		}
		if err := zw.Close(); err != nil {
			return
		}
		if buf.Len() < len(a.Body) {
			a.gzipped = buf.Bytes()
		}
	})
	return a.gzipped
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip, honouring an
// explicit q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, found := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !found {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}

// etagMatches reports whether an If-None-Match header names etag (or is "*").
func etagMatches(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == etag || candidate == "*" {
			return true
		}
	}
	return false
}
