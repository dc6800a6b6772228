package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A deprecated operation keeps answering with Deprecation, Sunset and Link
// rel=deprecation, and the document marks it deprecated.
func TestDeprecatedOperationSendsHeaders(t *testing.T) {
	s := New(Config{}, Deps{}, nil)
	since := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sunset := time.Date(2027, 5, 31, 0, 0, 0, 0, time.UTC)
	s.register(operation{ID: "legacyHealth", Method: http.MethodGet, Path: "/api/v1/legacy-health", Tag: "health", Public: true,
		Response: HealthOut{}, Deprecated: &deprecation{Since: since, Sunset: sunset, Link: "https://docs.example/changelog#legacy"}},
		s.handleHealth)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/legacy-health", nil))
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	h := rec.Header()
	if h.Get("Deprecation") != "@1780272000" || h.Get("Sunset") != "Mon, 31 May 2027 00:00:00 GMT" ||
		h.Get("Link") != `<https://docs.example/changelog#legacy>; rel="deprecation"; type="text/html"` {
		t.Fatalf("headers %v", h)
	}
	doc, err := s.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]struct {
			Deprecated bool `json:"deprecated"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if !d.Paths["/api/v1/legacy-health"]["get"].Deprecated {
		t.Fatal("document does not mark the operation deprecated")
	}
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/health", nil))
	if rec.Header().Get("Deprecation") != "" {
		t.Fatal("a live operation is marked deprecated")
	}
}
