package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia-data/vigia/app/apptest"
)

// tokenMarker is the API token of the ticket tests: it must never come back.
const tokenMarker = "TKNMARKER7f3a9c1e5b"

// testClock is a clock the test sets; every service of the app reads it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// trackerRequest is one request a fake tracker got.
type trackerRequest struct {
	Method, Path, Auth string
	Body               []byte
}

// fakeTracker is a TLS issue tracker on loopback, reached by name through the
// allowlist, speaking the three providers' APIs over one table of tickets: each key's
// status category (new, indeterminate, done). Keys in missing answer 404 (Linear: an
// "Entity not found" error); statuses in fail answer the next requests, in order.
type fakeTracker struct {
	URL     string // https://receiver.example.com:<port>
	mu      sync.Mutex
	state   map[string]string
	missing map[string]bool
	fail    []int
	got     []trackerRequest
	// projects are what target reads list: Jira's project search (one page of
	// maxResults), Linear's teams (first 100, keys and names) and the generic
	// GET /targets (everything; 404 while nil).
	projects []fakeProject
}

// fakeProject is a project (or team) of a fake tracker with its issue types.
type fakeProject struct {
	Key, Name string
	Types     []fakeIssueType
}

// fakeIssueType is an issue type of a fake project.
type fakeIssueType struct {
	ID, Name string
	Subtask  bool
}

func (f *fakeTracker) setProjects(ps ...fakeProject) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.projects = ps
}

func mustTracker(tb testing.TB) *fakeTracker {
	tb.Helper()
	f := &fakeTracker{state: map[string]string{}, missing: map[string]bool{}}
	ts := httptest.NewTLSServer(http.HandlerFunc(f.serve))
	tb.Cleanup(ts.Close)
	u, err := url.Parse(ts.URL)
	if err != nil {
		tb.Fatal(err)
	}
	f.URL = "https://" + net.JoinHostPort(receiverHost, u.Port())
	return f
}

func (f *fakeTracker) set(key, category string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state[key] = category
}

func (f *fakeTracker) category(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state[key]
}

func (f *fakeTracker) failNext(codes ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = append(f.fail, codes...)
}

func (f *fakeTracker) requests() []trackerRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// matching returns the requests of a method whose path contains part.
func (f *fakeTracker) matching(method, part string) []trackerRequest {
	var out []trackerRequest
	for _, r := range f.requests() {
		if r.Method == method && strings.Contains(r.Path, part) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeTracker) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, trackerRequest{Method: r.Method, Path: r.URL.RequestURI(), Auth: r.Header.Get("Authorization"), Body: body})
	if len(f.fail) > 0 {
		code := f.fail[0]
		f.fail = f.fail[1:]
		w.WriteHeader(code)
		return
	}
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, "/rest/api/3/issue/"):
		key, rest, _ := strings.Cut(strings.TrimPrefix(path, "/rest/api/3/issue/"), "/")
		if _, ok := f.state[key]; !ok || f.missing[key] {
			reply(http.StatusNotFound, map[string]any{"errorMessages": []string{"Issue does not exist"}})
			return
		}
		switch {
		case rest == "" && r.Method == http.MethodGet:
			reply(200, map[string]any{"key": key, "fields": map[string]any{"status": map[string]any{"name": "Whatever",
				"statusCategory": map[string]any{"key": f.state[key]}}}})
		case rest == "comment" && r.Method == http.MethodPost:
			reply(201, map[string]any{"id": "10001"})
		case rest == "transitions" && r.Method == http.MethodGet:
			reply(200, map[string]any{"transitions": []any{
				map[string]any{"id": "11", "name": "A fazer", "to": map[string]any{"statusCategory": map[string]any{"key": "new"}}},
				map[string]any{"id": "21", "name": "Em curso", "to": map[string]any{"statusCategory": map[string]any{"key": "indeterminate"}}},
				map[string]any{"id": "31", "name": "Feito", "to": map[string]any{"statusCategory": map[string]any{"key": "done"}}}}})
		case rest == "transitions" && r.Method == http.MethodPost:
			var in struct {
				Transition struct {
					ID string `json:"id"`
				} `json:"transition"`
			}
			_ = json.Unmarshal(body, &in)
			f.state[key] = map[string]string{"11": "new", "21": "indeterminate", "31": "done"}[in.Transition.ID]
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	case path == "/rest/api/3/project/search" && r.Method == http.MethodGet:
		start, _ := strconv.Atoi(r.URL.Query().Get("startAt"))
		size, _ := strconv.Atoi(r.URL.Query().Get("maxResults"))
		if size <= 0 {
			size = 50
		}
		end := min(start+size, len(f.projects))
		values := []any{}
		for _, p := range f.projects[min(start, end):end] {
			types := []any{}
			for _, it := range p.Types {
				types = append(types, map[string]any{"self": "https://x/" + it.ID, "id": it.ID, "name": it.Name, "subtask": it.Subtask,
					"description": "d"})
			}
			values = append(values, map[string]any{"id": "100" + p.Key, "key": p.Key, "name": p.Name, "issueTypes": types})
		}
		reply(200, map[string]any{"startAt": start, "maxResults": size, "total": len(f.projects), "isLast": end == len(f.projects),
			"values": values})
	case path == "/targets" && f.projects != nil:
		targets := []any{}
		for _, p := range f.projects {
			types := []any{}
			for _, it := range p.Types {
				types = append(types, map[string]any{"id": it.ID, "name": it.Name})
			}
			targets = append(targets, map[string]any{"key": p.Key, "name": p.Name, "issue_types": types})
		}
		reply(200, map[string]any{"targets": targets})
	case path == "/graphql":
		f.serveLinear(body, reply)
	case strings.HasPrefix(path, "/tickets/"):
		key := strings.TrimPrefix(path, "/tickets/")
		if _, ok := f.state[key]; !ok || f.missing[key] {
			reply(http.StatusNotFound, map[string]any{})
			return
		}
		reply(200, map[string]any{"status_category": map[string]string{"new": "todo", "indeterminate": "in_progress",
			"done": "done"}[f.state[key]]})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// serveLinear answers the four GraphQL operations Vigia sends Linear. Issue ids are
// "id-" + key; the team's states are s-unstarted, s-started and s-completed.
func (f *fakeTracker) serveLinear(body []byte, reply func(int, any)) {
	var in struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	_ = json.Unmarshal(body, &in)
	types := map[string]string{"new": "unstarted", "indeterminate": "started", "done": "completed"}
	switch {
	case strings.Contains(in.Query, "teams(first: 100)"):
		nodes := []any{}
		for _, p := range f.projects[:min(100, len(f.projects))] {
			nodes = append(nodes, map[string]any{"id": "team-" + p.Key, "key": p.Key, "name": p.Name})
		}
		reply(200, map[string]any{"data": map[string]any{"teams": map[string]any{"nodes": nodes,
			"pageInfo": map[string]any{"hasNextPage": len(f.projects) > 100}}}})
	case strings.Contains(in.Query, "commentCreate"):
		reply(200, map[string]any{"data": map[string]any{"commentCreate": map[string]any{"success": true}}})
	case strings.Contains(in.Query, "issueUpdate"):
		key := strings.TrimPrefix(in.Variables["id"].(string), "id-")
		f.state[key] = map[string]string{"s-unstarted": "new", "s-started": "indeterminate", "s-completed": "done"}[in.Variables["stateId"].(string)]
		reply(200, map[string]any{"data": map[string]any{"issueUpdate": map[string]any{"success": true}}})
	default:
		key, _ := in.Variables["id"].(string)
		if _, ok := f.state[key]; !ok || f.missing[key] {
			reply(200, map[string]any{"data": map[string]any{"issue": nil}, "errors": []any{map[string]any{
				"message": "Entity not found", "extensions": map[string]any{"code": "INVALID_INPUT"}}}})
			return
		}
		reply(200, map[string]any{"data": map[string]any{"issue": map[string]any{"id": "id-" + key,
			"state": map[string]any{"type": types[f.state[key]]},
			"team": map[string]any{"states": map[string]any{"nodes": []any{
				map[string]any{"id": "s-unstarted", "type": "unstarted"}, map[string]any{"id": "s-started", "type": "started"},
				map[string]any{"id": "s-completed", "type": "completed"}}}}}}})
	}
}

// recorder keeps every response body a test got, to prove a secret never came back.
type recorder struct {
	env    *apptest.Env
	mu     sync.Mutex
	bodies []string
}

func (r *recorder) do(tb testing.TB, method, path, cred string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	res := r.env.Do(tb, method, path, cred, body, headers...)
	r.mu.Lock()
	r.bodies = append(r.bodies, string(res.Body)+" "+strings.Join(flatHeader(res.Header), " "))
	r.mu.Unlock()
	return res
}

func flatHeader(h http.Header) []string {
	var out []string
	for k, vs := range h {
		out = append(out, k+": "+strings.Join(vs, ","))
	}
	return out
}

// requireNoMarker checks that marker is in no response, log line, activity row, job
// row, write-back or integration state.
func (r *recorder) requireNoMarker(tb testing.TB, marker string) {
	tb.Helper()
	r.mu.Lock()
	for _, b := range r.bodies {
		if strings.Contains(b, marker) {
			r.mu.Unlock()
			tb.Fatalf("the token came back in a response: %s", b)
		}
	}
	r.mu.Unlock()
	if strings.Contains(r.env.Logs.String(), marker) {
		tb.Fatal("the token reached the logs")
	}
	var n int
	if err := r.env.DB.Pool().QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM activity_log WHERE details::text LIKE '%' || $1 || '%' OR action LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM jobs WHERE args::text LIKE '%' || $1 || '%' OR coalesce(last_error, '') LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM ticket_writes WHERE coalesce(last_error, '') LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM ticket_integrations WHERE coalesce(last_error, '') LIKE '%' || $1 || '%'
		   OR position(convert_to($1, 'UTF8') IN coalesce(credentials_sealed, '')) > 0)`, marker).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	if n != 0 {
		tb.Fatalf("the token is stored in the clear in %d rows", n)
	}
}

// integrationState is what GET /api/v1/tickets/integrations/{id} says of polling.
type integrationState struct {
	CredentialsSet bool       `json:"credentials_set"`
	LastPollAt     *time.Time `json:"last_poll_at"`
	NextPollAt     *time.Time `json:"next_poll_at"`
	LastError      *string    `json:"last_error"`
	BackoffUntil   *time.Time `json:"backoff_until"`
	TicketErrors   int        `json:"ticket_errors"`
	PendingWrites  int        `json:"pending_writes"`
	FailedWrites   int        `json:"failed_writes"`
}

func (r *recorder) state(tb testing.TB, cred, id string) integrationState {
	tb.Helper()
	res := r.do(tb, http.MethodGet, "/api/v1/tickets/integrations/"+id, cred, nil)
	if res.Status != 200 {
		tb.Fatalf("get integration: %d %s", res.Status, res.Body)
	}
	var st integrationState
	res.JSON(tb, &st)
	return st
}

// mustIntegration creates an integration through the API and returns its id.
func (r *recorder) mustIntegration(tb testing.TB, admin string, body map[string]any) string {
	tb.Helper()
	res := r.do(tb, http.MethodPost, "/api/v1/tickets/integrations", admin, body)
	if res.Status != http.StatusCreated {
		tb.Fatalf("integration: %d %s", res.Status, res.Body)
	}
	var out map[string]any
	res.JSON(tb, &out)
	return out["id"].(string)
}

// mustLink links an issue to a ticket of an integration.
func (r *recorder) mustLink(tb testing.TB, cred, issueID, integrationID, key, ticketURL string) {
	tb.Helper()
	res := r.do(tb, http.MethodPost, "/api/v1/tickets/link", cred, map[string]any{"issue_id": issueID,
		"integration_id": integrationID, "key": key, "url": ticketURL})
	if res.Status != http.StatusCreated {
		tb.Fatalf("link %s: %d %s", key, res.Status, res.Body)
	}
}

// historyOrigins returns an issue's history origins of changes to status, oldest first.
func historyOrigins(tb testing.TB, env *apptest.Env, issueID, status string) []string {
	tb.Helper()
	rows, err := env.DB.Pool().Query(context.Background(), `SELECT origin FROM issue_history WHERE issue_id = $1 AND to_status = $2
		ORDER BY created_at, id`, issueID, status)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			tb.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// countRows runs a count query.
func countRows(tb testing.TB, env *apptest.Env, q string, args ...any) int {
	tb.Helper()
	var n int
	if err := env.DB.Pool().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
