package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A deprecated operation keeps answering with Deprecation, Sunset and Link
// rel=deprecation, and the document marks it deprecated. The operation is deprecated as
// a changelog release announces it (read by the changelog's own parser), so the headers
// carry the announced dates.
func TestDeprecatedOperationSendsHeaders(t *testing.T) {
	releases, err := parseChangelog("## 9.9.9\n\n### Deprecated\n\n" +
		"- Operation `legacyHealth` (`GET /api/v1/legacy-health`) is deprecated since 2026-06-01; sunset\n  2027-05-31.\n")
	if err != nil {
		t.Fatal(err)
	}
	list, err := announcements(releases)
	if err != nil || len(list) != 1 {
		t.Fatalf("announcements %v %v", list, err)
	}
	a := list[0]
	s := New(Config{}, Deps{}, nil)
	s.register(operation{ID: a.ID, Method: a.Method, Path: a.Path, Tag: "health", Public: true, Response: HealthOut{},
		Deprecated: &deprecation{Since: a.Since, Sunset: a.Sunset, Link: "https://docs.example/CHANGELOG.md#999"}}, s.handleHealth)
	if p := checkAnnouncements(s.ops, list); len(p) > 0 {
		t.Fatalf("the operation is not deprecated as announced: %v", p)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/legacy-health", nil))
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	h := rec.Header()
	if len(h.Values("Link")) != 1 {
		t.Fatalf("Link sent %d times", len(h.Values("Link")))
	}
	if h.Get("Deprecation") != "@1780272000" || h.Get("Sunset") != "Mon, 31 May 2027 00:00:00 GMT" ||
		h.Get("Link") != `<https://docs.example/CHANGELOG.md#999>; rel="deprecation"; type="text/html"` {
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
	// A refusal before the handler (no credential: 401) is an answer of the deprecated
	// operation too, and the document declares the headers on it.
	s.register(operation{ID: "legacyDatasets", Method: http.MethodGet, Path: "/api/v1/legacy-datasets", Tag: "datasets",
		Response: HealthOut{}, Deprecated: &deprecation{Since: a.Since, Sunset: a.Sunset, Link: "https://docs.example/CHANGELOG.md#999"}},
		s.handleHealth)
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/legacy-datasets", nil))
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Deprecation") != "@1780272000" || len(rec.Header().Values("Link")) != 1 {
		t.Fatalf("refusal of a deprecated operation: %d %v", rec.Code, rec.Header())
	}
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/health", nil))
	if rec.Header().Get("Deprecation") != "" {
		t.Fatal("a live operation is marked deprecated")
	}
}
