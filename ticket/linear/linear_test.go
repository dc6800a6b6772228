package linear_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/vigia-data/vigia/ticket"
	"github.com/vigia-data/vigia/ticket/linear"
)

// Linear: Issue events with state types; linear.app base URLs call api.linear.app; the
// GraphQL API with the key as Authorization; rate limits are the integration's.
func TestLinearProvider(t *testing.T) {
	p := linear.Provider()
	if p.Name != ticket.ProviderLinear || p.Header != "Linear-Signature" || p.Prefix != "" {
		t.Fatalf("provider = %+v", p)
	}
	ev, ok := p.Parse([]byte(`{"type":"Issue","webhookTimestamp":1700000000000,"data":{"identifier":"eng-3","state":{"type":"canceled"}}}`))
	if !ok || !ev.Known || !ev.Closed || ev.Key != "ENG-3" {
		t.Fatalf("parse = %+v %v", ev, ok)
	}
	if ev, ok := p.Parse([]byte(`{"type":"Comment","webhookTimestamp":1,"data":{"identifier":"ENG-3"}}`)); !ok || ev.Known {
		t.Fatalf("comment event = %+v %v", ev, ok)
	}
	site := "https://acme.linear.app"
	if base, err := p.Base(ticket.Integration{BaseURL: &site}); err != nil || base != "https://api.linear.app" {
		t.Fatalf("Base(linear site) = %q, %v", base, err)
	}
	if base, err := p.Base(ticket.Integration{}); err != nil || base != "https://api.linear.app" {
		t.Fatalf("Base(none) = %q, %v", base, err)
	}

	var limited atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/graphql" || r.Header.Get("Authorization") != "key" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if limited.Load() {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"errors":[{"extensions":{"code":"RATELIMITED"}}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"issue":{"id":"abc","state":{"type":"completed"},"team":{"states":{"nodes":[]}}}}}`))
	}))
	defer srv.Close()
	base, err := p.Base(ticket.Integration{BaseURL: &srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	api := p.Open(srv.Client(), base, ticket.Credentials{Token: "key"})
	ctx := context.Background()
	if closed, err := api.Closed(ctx, "ENG-3"); err != nil || !closed {
		t.Fatalf("Closed = %v, %v", closed, err)
	}
	limited.Store(true)
	var te *ticket.Error
	if _, err := api.Closed(ctx, "ENG-3"); !errors.As(err, &te) || !te.Integration || te.Code != "http_429" {
		t.Fatalf("Closed when rate limited = %v", err)
	}
}
