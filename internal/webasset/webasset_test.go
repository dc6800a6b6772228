package webasset_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/internal/webasset"
)

func TestServeCachesByVersionAndCompressesWhenItPays(t *testing.T) {
	body := []byte(strings.Repeat("body { color: black; }\n", 200))
	a := webasset.New(body, "text/css; charset=utf-8")
	if len(a.Version) != 16 {
		t.Fatalf("version %q", a.Version)
	}
	get := func(url string, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, url, nil)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		a.Serve(w, r)
		return w
	}
	w := get("/x.css?v="+a.Version, map[string]string{"Accept-Encoding": "br, gzip"})
	if w.Code != 200 || w.Header().Get("Cache-Control") != webasset.Immutable || w.Header().Get("Content-Encoding") != "gzip" ||
		w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("Vary") != "Accept-Encoding" {
		t.Fatalf("versioned gzip answer: %d %v", w.Code, w.Header())
	}
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(zr); !bytes.Equal(got, body) {
		t.Fatal("the gzip body is not the asset")
	}
	gzETag := w.Header().Get("ETag")

	w = get("/x.css?v=old", map[string]string{"Accept-Encoding": "gzip;q=0"})
	if w.Code != 200 || w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("Content-Encoding") != "" ||
		!bytes.Equal(w.Body.Bytes(), body) || w.Header().Get("ETag") == gzETag {
		t.Fatalf("old version, gzip refused: %d %v", w.Code, w.Header())
	}
	w = get("/x.css", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": `W/"other", ` + gzETag})
	if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("Content-Encoding") != "" {
		t.Fatalf("revalidation: %d %v", w.Code, w.Header())
	}
	r := httptest.NewRequest(http.MethodHead, "/x.css", nil)
	hw := httptest.NewRecorder()
	a.Serve(hw, r)
	if hw.Code != 200 || hw.Body.Len() != 0 || hw.Header().Get("Content-Length") != "4600" {
		t.Fatalf("HEAD: %d %v", hw.Code, hw.Header())
	}
	// A small file is never compressed.
	small := webasset.New([]byte("x"), "text/plain")
	sw := httptest.NewRecorder()
	sr := httptest.NewRequest(http.MethodGet, "/s.txt", nil)
	sr.Header.Set("Accept-Encoding", "gzip")
	small.Serve(sw, sr)
	if sw.Header().Get("Content-Encoding") != "" || sw.Body.String() != "x" {
		t.Fatalf("small file: %v", sw.Header())
	}
}
