package ticket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/webhook/delivery"
)

// Limits of a call to a ticket provider.
const (
	// ticketCallTimeout bounds one request to a provider.
	ticketCallTimeout = 15 * time.Second
	// maxTicketAnswer bounds what is read of a provider's answer.
	maxTicketAnswer = 1 << 20
	// linearEndpoint is Linear's GraphQL API, used unless the integration's base URL
	// names another host than linear.app.
	linearEndpoint = "https://api.linear.app"
)

// Stable codes of ticket-level failures (the ticket goes to the end of the polling
// queue, the write fails); the other codes (http_429, http_401, http_5xx, timeout,
// destination_refused…) are the integration's and delay it.
const (
	CodeTicketNotFound = "ticket_not_found"
	CodeBadAnswer      = "bad_answer"
	CodeNoTransition   = "no_transition"
	CodeProviderError  = "provider_error"
)

// ticketError is a failed call to a ticket provider. Code is stable and never holds a
// URL, a key, a token or a message of the provider. Integration is true when the
// failure is the whole integration's (429, refused credentials, the provider down or
// unreachable, an anti-SSRF refusal) rather than one ticket's.
type ticketError struct {
	Code        string
	Integration bool
}

func (e *ticketError) Error() string { return "ticket provider: " + e.Code }

func integrationFailure(code string) *ticketError { return &ticketError{Code: code, Integration: true} }

func ticketFailure(code string) *ticketError { return &ticketError{Code: code} }

// ticketAPI is what polling, write-back and the targets read ask of a provider.
type ticketAPI interface {
	// Closed reports whether the ticket's status category is done.
	Closed(ctx context.Context, key string) (bool, error)
	// Comment posts a plain-text comment on the ticket.
	Comment(ctx context.Context, key, text string) error
	// Move closes (close true) or reopens the ticket; a ticket already there is left alone.
	Move(ctx context.Context, key string, close bool) error
	// Targets lists where tickets can be created, as the provider sent them (one page
	// of MaxTicketTargets asked for; Service.Targets keeps the first MaxTicketTargets),
	// and whether the provider says it has more.
	Targets(ctx context.Context) (targets []Target, truncated bool, err error)
}

// apiCredentials are an integration's sealed API credentials: Jira's account email and
// API token, Linear's API key or the generic provider's bearer token (Token).
type apiCredentials struct {
	Email string `json:"email,omitempty"`
	Token string `json:"token"`
}

// apiBase is the base URL calls go to: https only. Linear integrations whose base URL is
// Linear's own site (or unset) call api.linear.app.
func apiBase(t Integration) (string, error) {
	if t.Provider == ProviderLinear {
		if t.BaseURL == nil {
			return linearEndpoint, nil
		}
		if u, err := url.Parse(*t.BaseURL); err == nil {
			h := strings.ToLower(u.Hostname())
			if h == "linear.app" || strings.HasSuffix(h, ".linear.app") {
				return linearEndpoint, nil
			}
		}
	}
	if t.BaseURL == nil {
		return "", integrationFailure("base_url_missing")
	}
	u, err := url.Parse(*t.BaseURL)
	if err != nil || u.Host == "" {
		return "", integrationFailure("url_invalid")
	}
	if u.Scheme != "https" {
		return "", integrationFailure("url_scheme")
	}
	return strings.TrimRight(*t.BaseURL, "/"), nil
}

// newTicketAPI returns the provider's client over the guarded HTTP client.
func newTicketAPI(client *http.Client, t Integration, c apiCredentials) (ticketAPI, error) {
	base, err := apiBase(t)
	if err != nil {
		return nil, err
	}
	caller := apiCaller{client: client}
	switch t.Provider {
	case ProviderJira:
		caller.auth = func(r *http.Request) { r.SetBasicAuth(c.Email, c.Token) }
		return jiraAPI{c: caller, base: base}, nil
	case ProviderLinear:
		caller.auth = func(r *http.Request) { r.Header.Set("Authorization", c.Token) }
		return linearAPI{c: caller, endpoint: base + "/graphql"}, nil
	default:
		caller.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+c.Token) }
		return genericAPI{c: caller, base: base}, nil
	}
}

// apiCaller sends JSON requests and classifies failures.
type apiCaller struct {
	client *http.Client
	auth   func(*http.Request)
}

// call sends a request and decodes a 2xx answer (or, with also, an answer of that
// status) into out. Errors are *ticketError or the context's.
func (c apiCaller) call(ctx context.Context, method, u string, body, out any, also int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return ticketFailure(CodeBadAnswer)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, ticketCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return integrationFailure("url_invalid")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Vigia-Tickets/1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.auth(req)
	res, err := c.client.Do(req)
	if err != nil {
		if parent := context.Cause(ctx); parent != nil && !errors.Is(parent, context.DeadlineExceeded) {
			return parent // shutting down: not the provider's failure
		}
		return integrationFailure(strings.ReplaceAll(delivery.ErrorText(err), " ", "_"))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxTicketAnswer))
	if err != nil {
		return integrationFailure("connection_dropped")
	}
	switch code := res.StatusCode; {
	case code >= 200 && code <= 299, code == also:
	case code >= 300 && code <= 399:
		return integrationFailure("redirect")
	case code == http.StatusTooManyRequests, code == http.StatusUnauthorized, code == http.StatusForbidden, code >= 500:
		return integrationFailure("http_" + strconv.Itoa(code))
	case code == http.StatusNotFound:
		return ticketFailure(CodeTicketNotFound)
	default:
		return ticketFailure("http_" + strconv.Itoa(code))
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 && res.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return ticketFailure(CodeBadAnswer)
	}
	return nil
}

// jiraAPI is Jira Cloud's REST API v3, authenticated with HTTP Basic (email, API token).
type jiraAPI struct {
	c    apiCaller
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
	if err := j.c.call(ctx, http.MethodGet, j.issueURL(key, "?fields=status"), nil, &out, 0); err != nil {
		return "", err
	}
	if out.Fields.Status == nil || out.Fields.Status.StatusCategory == nil || out.Fields.Status.StatusCategory.Key == "" {
		return "", ticketFailure(CodeBadAnswer)
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
	return j.c.call(ctx, http.MethodPost, j.issueURL(key, "/comment"), body, nil, 0)
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
	if err := j.c.call(ctx, http.MethodGet, j.issueURL(key, "/transitions"), nil, &out, 0); err != nil {
		return err
	}
	want := []string{"done"}
	if !close {
		want = []string{"new", "indeterminate"}
	}
	for _, w := range want {
		for _, tr := range out.Transitions {
			if tr.ID != "" && tr.To.StatusCategory.Key == w {
				return j.c.call(ctx, http.MethodPost, j.issueURL(key, "/transitions"),
					map[string]any{"transition": map[string]any{"id": tr.ID}}, nil, 0)
			}
		}
	}
	return ticketFailure(CodeNoTransition)
}

// linearAPI is Linear's GraphQL API, authenticated with an API key.
type linearAPI struct {
	c        apiCaller
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
	if err := l.c.call(ctx, http.MethodPost, l.endpoint, map[string]any{"query": query, "variables": vars}, &out, http.StatusBadRequest); err != nil {
		return err
	}
	for _, e := range out.Errors {
		kind := strings.ToUpper(e.Extensions.Code + " " + e.Extensions.Type)
		switch {
		case strings.Contains(kind, "RATELIMIT"):
			return integrationFailure("http_429")
		case strings.Contains(kind, "AUTHENTICATION"), strings.Contains(kind, "FORBIDDEN"):
			return integrationFailure("http_401")
		}
	}
	if len(out.Data) == 0 || string(out.Data) == "null" {
		if len(out.Errors) > 0 {
			return ticketFailure(CodeTicketNotFound)
		}
		return ticketFailure(CodeBadAnswer)
	}
	if err := json.Unmarshal(out.Data, data); err != nil {
		return ticketFailure(CodeBadAnswer)
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
		return linearIssue{}, ticketFailure(CodeTicketNotFound)
	}
	if data.Issue.ID == "" || data.Issue.State == nil {
		return linearIssue{}, ticketFailure(CodeBadAnswer)
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
		return ticketFailure(CodeProviderError)
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
		return ticketFailure(CodeBadAnswer)
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
		return ticketFailure(CodeNoTransition)
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
		return ticketFailure(CodeProviderError)
	}
	return nil
}

// genericAPI is Vigia's generic polling contract (docs/webhooks.md): GET
// {base}/tickets/{key} answers {"status_category": "todo" | "in_progress" | "done"}, with
// the token as a bearer. It has no writes.
type genericAPI struct {
	c    apiCaller
	base string
}

func (g genericAPI) Closed(ctx context.Context, key string) (bool, error) {
	var out struct {
		StatusCategory string `json:"status_category"`
	}
	if err := g.c.call(ctx, http.MethodGet, g.base+"/tickets/"+url.PathEscape(key), nil, &out, 0); err != nil {
		return false, err
	}
	switch out.StatusCategory {
	case "todo", "in_progress":
		return false, nil
	case "done":
		return true, nil
	}
	return false, ticketFailure(CodeBadAnswer)
}

func (genericAPI) Comment(context.Context, string, string) error {
	return ticketFailure("write_unsupported")
}

func (genericAPI) Move(context.Context, string, bool) error {
	return ticketFailure("write_unsupported")
}
