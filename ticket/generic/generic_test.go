package generic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vigia-data/vigia/ticket"
	"github.com/vigia-data/vigia/ticket/generic"
)

// The generic contract: events in Unix seconds with status_category; GET
// {base}/tickets/{key} with the bearer token; a 404 on /targets is no targets; no writes.
func TestGenericProvider(t *testing.T) {
	p := generic.Provider()
	if p.Name != ticket.ProviderGeneric || p.Header != "X-Ticket-Signature" || p.Prefix != "*" {
		t.Fatalf("provider = %+v", p)
	}
	ev, ok := p.Parse([]byte(`{"ticket_key":"OPS-1","status_category":"done","timestamp":1700000000}`))
	if !ok || !ev.Known || !ev.Closed || ev.Key != "OPS-1" || ev.Timestamp.Unix() != 1700000000 {
		t.Fatalf("parse done = %+v %v", ev, ok)
	}
	if ev, ok := p.Parse([]byte(`{"ticket_key":"OPS-1","status_category":"weird","timestamp":1}`)); !ok || ev.Known {
		t.Fatalf("unknown category = %+v %v", ev, ok)
	}
	if _, ok := p.Parse([]byte(`not json`)); ok {
		t.Fatal("parse accepted a body that is not JSON")
	}

	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/tickets/OPS-1":
			_, _ = w.Write([]byte(`{"status_category":"done"}`))
		case "/tickets/OPS-2":
			_, _ = w.Write([]byte(`{"status_category":"in_progress"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	api := p.Open(srv.Client(), srv.URL, ticket.Credentials{Token: "tok"})
	ctx := context.Background()
	if closed, err := api.Closed(ctx, "OPS-1"); err != nil || !closed {
		t.Fatalf("Closed(OPS-1) = %v, %v", closed, err)
	}
	if closed, err := api.Closed(ctx, "OPS-2"); err != nil || closed {
		t.Fatalf("Closed(OPS-2) = %v, %v", closed, err)
	}
	var te *ticket.Error
	if _, err := api.Closed(ctx, "OPS-3"); !errors.As(err, &te) || te.Code != ticket.CodeTicketNotFound || te.Integration {
		t.Fatalf("Closed(OPS-3) = %v", err)
	}
	if targets, more, err := api.Targets(ctx); err != nil || more || len(targets) != 0 {
		t.Fatalf("Targets = %v, %v, %v", targets, more, err)
	}
	if err := api.Comment(ctx, "OPS-1", "x"); !errors.As(err, &te) || te.Code != "write_unsupported" {
		t.Fatalf("Comment = %v", err)
	}
	bad := p.Open(srv.Client(), srv.URL, ticket.Credentials{Token: "wrong"})
	if _, err := bad.Closed(ctx, "OPS-1"); !errors.As(err, &te) || !te.Integration || te.Code != "http_401" {
		t.Fatalf("Closed with a refused token = %v", err)
	}
}
