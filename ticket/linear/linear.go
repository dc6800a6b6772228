// Package linear is the ticket adapter of Linear: its GraphQL API (issue state,
// comments, state changes, teams), authenticated with an API key, and the shape and
// signature of its webhook events.
package linear

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vigia-data/vigia/ticket"
)

// endpoint is Linear's GraphQL API, used unless the integration's base URL names
// another host than linear.app.
const endpoint = "https://api.linear.app"

// Provider is Linear's adapter: Linear-Signature: <hex>; webhookTimestamp in ms; state
// types completed and canceled mean closed.
func Provider() ticket.Provider {
	return ticket.Provider{Name: ticket.ProviderLinear, Header: "Linear-Signature", Prefix: "", Parse: parseEvent,
		Base: base, Open: func(client *http.Client, base string, c ticket.Credentials) ticket.API {
			return linearAPI{c: ticket.Caller{Client: client, Auth: func(r *http.Request) { r.Header.Set("Authorization", c.Token) }},
				endpoint: base + "/graphql"}
		}}
}

// base is where calls go: integrations whose base URL is Linear's own site (or unset)
// call api.linear.app; another host is called over https only.
func base(t ticket.Integration) (string, error) {
	if t.BaseURL == nil {
		return endpoint, nil
	}
	if u, err := url.Parse(*t.BaseURL); err == nil {
		h := strings.ToLower(u.Hostname())
		if h == "linear.app" || strings.HasSuffix(h, ".linear.app") {
			return endpoint, nil
		}
	}
	return ticket.HTTPSBase(t)
}

// linearAPI is Linear's GraphQL API, authenticated with an API key.
type linearAPI struct {
	c        ticket.Caller
	endpoint string
}

// linearIssue is what Linear says of an issue: its id, state type and its team's states.
type linearIssue struct {
	ID    string `json:"id"`
	State *struct {
		Type string `json:"type"`
	} `json:"state"`
	Team *struct {
		States struct {
			Nodes []struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"nodes"`
		} `json:"states"`
	} `json:"team"`
}

// graphQL posts a query; GraphQL errors are told apart: authentication and rate limits
// are the integration's, an issue Linear does not find is the ticket's. Linear answers
// some of them with 400, which is read as a GraphQL answer too.
func (l linearAPI) graphQL(ctx context.Context, query string, vars map[string]any, data any) error {
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Extensions struct {
				Code string `json:"code"`
				Type string `json:"type"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if err := l.c.Call(ctx, http.MethodPost, l.endpoint, map[string]any{"query": query, "variables": vars}, &out, http.StatusBadRequest); err != nil {
		return err
	}
	for _, e := range out.Errors {
		kind := strings.ToUpper(e.Extensions.Code + " " + e.Extensions.Type)
		switch {
		case strings.Contains(kind, "RATELIMIT"):
			return ticket.IntegrationFailure("http_429")
		case strings.Contains(kind, "AUTHENTICATION"), strings.Contains(kind, "FORBIDDEN"):
			return ticket.IntegrationFailure("http_401")
		}
	}
	if len(out.Data) == 0 || string(out.Data) == "null" {
		if len(out.Errors) > 0 {
			return ticket.TicketFailure(ticket.CodeTicketNotFound)
		}
		return ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	if err := json.Unmarshal(out.Data, data); err != nil {
		return ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	return nil
}

const linearIssueQuery = `query VigiaIssue($id: String!) { issue(id: $id) { id state { type } team { states { nodes { id type } } } } }`

func (l linearAPI) issue(ctx context.Context, key string) (linearIssue, error) {
	var data struct {
		Issue *linearIssue `json:"issue"`
	}
	if err := l.graphQL(ctx, linearIssueQuery, map[string]any{"id": key}, &data); err != nil {
		return linearIssue{}, err
	}
	if data.Issue == nil {
		return linearIssue{}, ticket.TicketFailure(ticket.CodeTicketNotFound)
	}
	if data.Issue.ID == "" || data.Issue.State == nil {
		return linearIssue{}, ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	return *data.Issue, nil
}

func linearClosed(stateType string) bool { return stateType == "completed" || stateType == "canceled" }

func (l linearAPI) Closed(ctx context.Context, key string) (bool, error) {
	is, err := l.issue(ctx, key)
	if err != nil {
		return false, err
	}
	return linearClosed(is.State.Type), nil
}

// Comment creates a comment on the issue.
func (l linearAPI) Comment(ctx context.Context, key, text string) error {
	is, err := l.issue(ctx, key)
	if err != nil {
		return err
	}
	var data struct {
		CommentCreate struct {
			Success bool `json:"success"`
		} `json:"commentCreate"`
	}
	if err := l.graphQL(ctx, `mutation VigiaComment($issueId: String!, $body: String!) { commentCreate(input: {issueId: $issueId, body: $body}) { success } }`,
		map[string]any{"issueId": is.ID, "body": text}, &data); err != nil {
		return err
	}
	if !data.CommentCreate.Success {
		return ticket.TicketFailure(ticket.CodeProviderError)
	}
	return nil
}

// Move sets the first state of the issue's team of type completed (close) or, to
// reopen, unstarted, else backlog, else triage.
func (l linearAPI) Move(ctx context.Context, key string, close bool) error {
	is, err := l.issue(ctx, key)
	if err != nil {
		return err
	}
	if linearClosed(is.State.Type) == close {
		return nil
	}
	if is.Team == nil {
		return ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	want := []string{"completed"}
	if !close {
		want = []string{"unstarted", "backlog", "triage"}
	}
	stateID := ""
	for _, w := range want {
		for _, n := range is.Team.States.Nodes {
			if stateID == "" && n.ID != "" && n.Type == w {
				stateID = n.ID
			}
		}
	}
	if stateID == "" {
		return ticket.TicketFailure(ticket.CodeNoTransition)
	}
	var data struct {
		IssueUpdate struct {
			Success bool `json:"success"`
		} `json:"issueUpdate"`
	}
	if err := l.graphQL(ctx, `mutation VigiaMove($id: String!, $stateId: String!) { issueUpdate(id: $id, input: {stateId: $stateId}) { success } }`,
		map[string]any{"id": is.ID, "stateId": stateID}, &data); err != nil {
		return err
	}
	if !data.IssueUpdate.Success {
		return ticket.TicketFailure(ticket.CodeProviderError)
	}
	return nil
}

const linearTeamsQuery = `query VigiaTeams { teams(first: 100) { nodes { id key name } pageInfo { hasNextPage } } }`

// Targets reads Linear's teams (first ticket.MaxTicketTargets); teams have no issue types.
func (l linearAPI) Targets(ctx context.Context) ([]ticket.Target, bool, error) {
	var data struct {
		Teams *struct {
			Nodes []struct {
				Key  string `json:"key"`
				Name string `json:"name"`
			} `json:"nodes"`
			PageInfo struct {
				HasNextPage bool `json:"hasNextPage"`
			} `json:"pageInfo"`
		} `json:"teams"`
	}
	if err := l.graphQL(ctx, linearTeamsQuery, map[string]any{}, &data); err != nil {
		return nil, false, err
	}
	if data.Teams == nil {
		return nil, false, ticket.TicketFailure(ticket.CodeBadAnswer)
	}
	targets := make([]ticket.Target, 0, min(len(data.Teams.Nodes), ticket.MaxTicketTargets+1))
	for _, n := range data.Teams.Nodes {
		if n.Key != "" {
			targets = append(targets, ticket.Target{Key: n.Key, Name: n.Name, IssueTypes: []ticket.IssueType{}})
		}
	}
	return targets, data.Teams.PageInfo.HasNextPage, nil
}

func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func parseEvent(body []byte) (ticket.Event, bool) {
	var ev struct {
		Type             string `json:"type"`
		WebhookTimestamp int64  `json:"webhookTimestamp"`
		Data             *struct {
			Identifier string `json:"identifier"`
			State      *struct {
				Type string `json:"type"`
			} `json:"state"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return ticket.Event{}, false
	}
	st := ticket.Event{}
	if ev.WebhookTimestamp > 0 {
		st.Timestamp = millis(ev.WebhookTimestamp)
	}
	if ev.Type == "Issue" && ev.Data != nil && ev.Data.Identifier != "" && ev.Data.State != nil {
		st.Key = strings.ToUpper(ev.Data.Identifier)
		st.Known = true
		st.Closed = ev.Data.State.Type == "completed" || ev.Data.State.Type == "canceled"
	}
	return st, true
}
