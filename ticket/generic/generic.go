// Package generic is the ticket adapter of Vigia's generic tracker contract
// (docs/webhooks.md): GET {base}/tickets/{key} and GET {base}/targets with a bearer
// token, no writes, and the documented shape and signature of its events.
package generic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/vigia-data/vigia/ticket"
)

// Provider is the generic contract's adapter: X-Ticket-Signature with or without
// sha256=; timestamp in Unix seconds; status_category done means closed.
func Provider() ticket.Provider {
	return ticket.Provider{Name: ticket.ProviderGeneric, Header: "X-Ticket-Signature", Prefix: "*", Parse: parseEvent,
		Base: ticket.HTTPSBase, Open: func(client *http.Client, base string, c ticket.Credentials) ticket.API {
			return genericAPI{c: ticket.Caller{Client: client, Auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+c.Token) }}, base: base}
		}}
}

// genericAPI is Vigia's generic polling contract (docs/webhooks.md): GET
// {base}/tickets/{key} answers {"status_category": "todo" | "in_progress" | "done"}, with
// the token as a bearer. It has no writes.
type genericAPI struct {
	c    ticket.Caller
	base string
}

func (g genericAPI) Closed(ctx context.Context, key string) (bool, error) {
	var out struct {
		StatusCategory string `json:"status_category"`
	}
	if err := g.c.Call(ctx, http.MethodGet, g.base+"/tickets/"+url.PathEscape(key), nil, &out, 0); err != nil {
		return false, err
	}
	switch out.StatusCategory {
	case "todo", "in_progress":
		return false, nil
	case "done":
		return true, nil
	}
	return false, ticket.TicketFailure(ticket.CodeBadAnswer)
}

func (genericAPI) Comment(context.Context, string, string) error {
	return ticket.TicketFailure("write_unsupported")
}

func (genericAPI) Move(context.Context, string, bool) error {
	return ticket.TicketFailure("write_unsupported")
}

// Targets reads the generic contract's GET {base}/targets (docs/webhooks.md):
// {"targets": [{"key", "name", "issue_types": [{"id", "name"}]}]}. A tracker that
// answers 404 has no targets: the list is empty.
func (g genericAPI) Targets(ctx context.Context) ([]ticket.Target, bool, error) {
	var out struct {
		Targets *[]struct {
			Key        string `json:"key"`
			Name       string `json:"name"`
			IssueTypes []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"issue_types"`
		} `json:"targets"`
	}
	if err := g.c.Call(ctx, http.MethodGet, g.base+"/targets", nil, &out, 0); err != nil {
		var te *ticket.Error
		if errors.As(err, &te) && te.Code == ticket.CodeTicketNotFound {
			return []ticket.Target{}, false, nil
		}
		return nil, false, err
	}
	if out.Targets == nil {
		return nil, false, ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	targets := make([]ticket.Target, 0, min(len(*out.Targets), ticket.MaxTicketTargets+1))
	for _, tg := range *out.Targets {
		if tg.Key == "" {
			continue
		}
		types := make([]ticket.IssueType, 0, len(tg.IssueTypes))
		for _, it := range tg.IssueTypes {
			if it.ID != "" {
				types = append(types, ticket.IssueType{ID: it.ID, Name: it.Name})
			}
		}
		targets = append(targets, ticket.Target{Key: tg.Key, Name: tg.Name, IssueTypes: types})
	}
	return targets, false, nil
}

func parseEvent(body []byte) (ticket.Event, bool) {
	var ev struct {
		TicketKey      string `json:"ticket_key"`
		StatusCategory string `json:"status_category"`
		Timestamp      int64  `json:"timestamp"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return ticket.Event{}, false
	}
	st := ticket.Event{}
	if ev.Timestamp > 0 {
		st.Timestamp = time.Unix(ev.Timestamp, 0).UTC()
	}
	switch ev.StatusCategory {
	case "todo", "in_progress", "done":
		if ev.TicketKey != "" {
			st.Key, st.Known, st.Closed = ev.TicketKey, true, ev.StatusCategory == "done"
		}
	}
	return st, true
}
