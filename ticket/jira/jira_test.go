package jira_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/vigia-data/vigia/ticket"
	"github.com/vigia-data/vigia/ticket/jira"
)

// Jira: events in ms with the status category key; Basic authentication; Move takes the
// transition whose target category is done.
func TestJiraProvider(t *testing.T) {
	p := jira.Provider()
	if p.Name != ticket.ProviderJira || p.Header != "X-Hub-Signature" || p.Prefix != "sha256=" {
		t.Fatalf("provider = %+v", p)
	}
	ev, ok := p.Parse([]byte(`{"timestamp":1700000000000,"issue":{"key":"ops-7","fields":{"status":{"statusCategory":{"key":"done"}}}}}`))
	if !ok || !ev.Known || !ev.Closed || ev.Key != "OPS-7" || ev.Timestamp.UnixMilli() != 1700000000000 {
		t.Fatalf("parse = %+v %v", ev, ok)
	}
	if ev, ok := p.Parse([]byte(`{"timestamp":1}`)); !ok || ev.Known {
		t.Fatalf("event without an issue = %+v %v", ev, ok)
	}

	var moved atomic.Value
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, ok := r.BasicAuth(); !ok || u != "me@example.com" || pw != "tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.Method + " " + r.URL.Path {
		case "GET /rest/api/3/issue/OPS-7":
			_, _ = w.Write([]byte(`{"fields":{"status":{"statusCategory":{"key":"indeterminate"}}}}`))
		case "GET /rest/api/3/issue/OPS-7/transitions":
			_, _ = w.Write([]byte(`{"transitions":[{"id":"11","to":{"statusCategory":{"key":"new"}}},{"id":"31","to":{"statusCategory":{"key":"done"}}}]}`))
		case "POST /rest/api/3/issue/OPS-7/transitions":
			var body struct {
				Transition struct {
					ID string `json:"id"`
				} `json:"transition"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			moved.Store(body.Transition.ID)
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	base, err := p.Base(ticket.Integration{BaseURL: &srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	api := p.Open(srv.Client(), base, ticket.Credentials{Email: "me@example.com", Token: "tok"})
	ctx := context.Background()
	if closed, err := api.Closed(ctx, "OPS-7"); err != nil || closed {
		t.Fatalf("Closed = %v, %v", closed, err)
	}
	if err := api.Move(ctx, "OPS-7", true); err != nil || moved.Load() != "31" {
		t.Fatalf("Move = %v, transition %v", err, moved.Load())
	}
	plain := "http://jira.example.com"
	if _, err := p.Base(ticket.Integration{BaseURL: &plain}); err == nil {
		t.Fatal("Base accepted http")
	}
}
