// Package jira is the ticket adapter of Jira Cloud: its REST API v3 (status, comments,
// transitions, projects with their issue types), authenticated with HTTP Basic (account
// email and API token), and the shape and signature of its webhook events.
package jira

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vigia-data/vigia/ticket"
)

// Provider is Jira's adapter: X-Hub-Signature: sha256=<hex>; timestamp in ms; the
// status category key done means closed.
func Provider() ticket.Provider {
	return ticket.Provider{Name: ticket.ProviderJira, Header: "X-Hub-Signature", Prefix: "sha256=", Parse: parseEvent,
		Base: ticket.HTTPSBase, Open: func(client *http.Client, base string, c ticket.Credentials) ticket.API {
			return jiraAPI{c: ticket.Caller{Client: client, Auth: func(r *http.Request) { r.SetBasicAuth(c.Email, c.Token) }}, base: base}
		}}
}

// jiraAPI is Jira Cloud's REST API v3, authenticated with HTTP Basic (email, API token).
type jiraAPI struct {
	c    ticket.Caller
	base string
}

func (j jiraAPI) issueURL(key, suffix string) string {
	return j.base + "/rest/api/3/issue/" + url.PathEscape(key) + suffix
}

// category returns the ticket's status category key (new, indeterminate, done).
func (j jiraAPI) category(ctx context.Context, key string) (string, error) {
	var out struct {
		Fields struct {
			Status *struct {
				StatusCategory *struct {
					Key string `json:"key"`
				} `json:"statusCategory"`
			} `json:"status"`
		} `json:"fields"`
	}
	if err := j.c.Call(ctx, http.MethodGet, j.issueURL(key, "?fields=status"), nil, &out, 0); err != nil {
		return "", err
	}
	if out.Fields.Status == nil || out.Fields.Status.StatusCategory == nil || out.Fields.Status.StatusCategory.Key == "" {
		return "", ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	return out.Fields.Status.StatusCategory.Key, nil
}

func (j jiraAPI) Closed(ctx context.Context, key string) (bool, error) {
	cat, err := j.category(ctx, key)
	return cat == "done", err
}

// Comment posts the text as an Atlassian Document Format paragraph.
func (j jiraAPI) Comment(ctx context.Context, key, text string) error {
	body := map[string]any{"body": map[string]any{"type": "doc", "version": 1, "content": []any{
		map[string]any{"type": "paragraph", "content": []any{map[string]any{"type": "text", "text": text}}}}}}
	return j.c.Call(ctx, http.MethodPost, j.issueURL(key, "/comment"), body, nil, 0)
}

// Move takes the first transition whose target's status category is done (close) or,
// to reopen, new, else indeterminate.
func (j jiraAPI) Move(ctx context.Context, key string, close bool) error {
	cat, err := j.category(ctx, key)
	if err != nil {
		return err
	}
	if (cat == "done") == close {
		return nil
	}
	var out struct {
		Transitions []struct {
			ID string `json:"id"`
			To struct {
				StatusCategory struct {
					Key string `json:"key"`
				} `json:"statusCategory"`
			} `json:"to"`
		} `json:"transitions"`
	}
	if err := j.c.Call(ctx, http.MethodGet, j.issueURL(key, "/transitions"), nil, &out, 0); err != nil {
		return err
	}
	want := []string{"done"}
	if !close {
		want = []string{"new", "indeterminate"}
	}
	for _, w := range want {
		for _, tr := range out.Transitions {
			if tr.ID != "" && tr.To.StatusCategory.Key == w {
				return j.c.Call(ctx, http.MethodPost, j.issueURL(key, "/transitions"),
					map[string]any{"transition": map[string]any{"id": tr.ID}}, nil, 0)
			}
		}
	}
	return ticket.TicketFailure(ticket.CodeNoTransition)
}

// Targets reads Jira's projects with their issue types (project search, one page of
// ticket.MaxTicketTargets).
func (j jiraAPI) Targets(ctx context.Context) ([]ticket.Target, bool, error) {
	var out struct {
		Values *[]struct {
			Key        string `json:"key"`
			Name       string `json:"name"`
			IssueTypes []struct {
				ID      string `json:"id"`
				Name    string `json:"name"`
				Subtask bool   `json:"subtask"`
			} `json:"issueTypes"`
		} `json:"values"`
		IsLast *bool `json:"isLast"`
		Total  int   `json:"total"`
	}
	u := j.base + "/rest/api/3/project/search?expand=issueTypes&maxResults=100"
	if err := j.c.Call(ctx, http.MethodGet, u, nil, &out, 0); err != nil {
		return nil, false, err
	}
	if out.Values == nil {
		return nil, false, ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	targets := make([]ticket.Target, 0, min(len(*out.Values), ticket.MaxTicketTargets+1))
	for _, p := range *out.Values {
		if p.Key == "" {
			continue
		}
		types := make([]ticket.IssueType, 0, len(p.IssueTypes))
		for _, it := range p.IssueTypes {
			if it.ID != "" {
				types = append(types, ticket.IssueType{ID: it.ID, Name: it.Name, Subtask: it.Subtask})
			}
		}
		targets = append(targets, ticket.Target{Key: p.Key, Name: p.Name, IssueTypes: types})
	}
	truncated := out.IsLast != nil && !*out.IsLast || out.Total > ticket.MaxTicketTargets
	return targets, truncated, nil
}

func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func parseEvent(body []byte) (ticket.Event, bool) {
	var ev struct {
		Timestamp int64 `json:"timestamp"`
		Issue     *struct {
			Key    string `json:"key"`
			Fields struct {
				Status *struct {
					StatusCategory *struct {
						Key string `json:"key"`
					} `json:"statusCategory"`
				} `json:"status"`
			} `json:"fields"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return ticket.Event{}, false
	}
	st := ticket.Event{}
	if ev.Timestamp > 0 {
		st.Timestamp = millis(ev.Timestamp)
	}
	if ev.Issue != nil && ev.Issue.Key != "" && ev.Issue.Fields.Status != nil && ev.Issue.Fields.Status.StatusCategory != nil {
		st.Key = strings.ToUpper(ev.Issue.Key)
		st.Known = true
		st.Closed = ev.Issue.Fields.Status.StatusCategory.Key == "done"
	}
	return st, true
}
