package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
)

// targetsOut is the answer of GET /api/v1/tickets/integrations/{id}/targets.
type targetsOut struct {
	Targets []struct {
		Key        string         `json:"key"`
		Name       string         `json:"name"`
		IssueTypes []issueTypeOut `json:"issue_types"`
	} `json:"targets"`
	Truncated        bool          `json:"truncated"`
	DefaultProject   *string       `json:"default_project"`
	DefaultIssueType *issueTypeOut `json:"default_issue_type"`
}

type issueTypeOut struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Subtask bool   `json:"subtask"`
}

func targetsPath(id string) string { return "/api/v1/tickets/integrations/" + id + "/targets" }

// targets reads an integration's targets and requires 200.
func (r *recorder) targets(tb testing.TB, cred, id string) targetsOut {
	tb.Helper()
	res := r.do(tb, http.MethodGet, targetsPath(id), cred, nil)
	if res.Status != http.StatusOK {
		tb.Fatalf("targets: %d %s", res.Status, res.Body)
	}
	var out targetsOut
	res.JSON(tb, &out)
	if out.Targets == nil || bytes.Contains(res.Body, []byte(`"issue_types":null`)) {
		tb.Fatalf("targets or issue types are null: %s", res.Body)
	}
	return out
}

// targetsFail reads an integration's targets and requires status and code.
func (r *recorder) targetsFail(tb testing.TB, cred, id string, status int, code string) errorBody {
	tb.Helper()
	res := r.do(tb, http.MethodGet, targetsPath(id), cred, nil)
	var e errorBody
	res.JSON(tb, &e)
	if res.Status != status || e.Code != code {
		tb.Fatalf("targets: %d %s, want %d %s", res.Status, res.Body, status, code)
	}
	return e
}

func manyProjects(n int, first ...fakeProject) []fakeProject {
	ps := append([]fakeProject{}, first...)
	for i := len(ps); i < n; i++ {
		ps = append(ps, fakeProject{Key: fmt.Sprintf("P%03d", i), Name: fmt.Sprintf("Projeto %d", i),
			Types: []fakeIssueType{{ID: fmt.Sprint(20000 + i), Name: "Task"}}})
	}
	return ps
}

// Jira: projects with their issue types through the project search, with the API
// credentials; default_project is the integration's project when listed and
// default_issue_type that project's Task, else Bug, else its first type that is not
// a sub-task, else its first. The callers of the other integration reads may read
// them; another workspace's integration is 404; no credentials is 409; a failing
// provider is 502 without changing the polling state; more than 100 projects are
// cut at 100. The API token never comes back, nor reaches the logs.
func TestTicketTargetsJira(t *testing.T) {
	env, rec, _, _ := ticketEnv(t, 0)
	tracker := mustTracker(t)
	tracker.setProjects(
		fakeProject{Key: "DEV", Name: "Desenvolvimento", Types: []fakeIssueType{{"10000", "Epic", false}, {"10003", "Subtarefa", true},
			{"10001", "Story", false}, {"10002", "Task", false}}},
		fakeProject{Key: "OPS", Name: "Operações", Types: []fakeIssueType{{"10005", "Sub-task", true}, {"10006", "Story", false},
			{"10007", "Bug", false}}},
		fakeProject{Key: "EPX", Name: "Épicos", Types: []fakeIssueType{{"10010", "Sub-task", true}, {"10011", "Epic", false}}},
		fakeProject{Key: "SUB", Name: "Só sub-tarefas", Types: []fakeIssueType{{"10009", "Sub-task", true}}},
	)
	ws := env.MustWorkspace(t, "targets")
	admin, member, viewer, tok := env.MustSession(t, ws, vigia.RoleAdmin), env.MustSession(t, ws, vigia.RoleMember),
		env.MustSession(t, ws, vigia.RoleViewer), env.MustToken(t, ws)
	creds := map[string]any{"email": "bot@acme.example", "api_token": tokenMarker}
	id := rec.mustIntegration(t, admin, map[string]any{"name": "jira", "provider": "jira", "base_url": tracker.URL,
		"project": "ops", "credentials": creds})

	for name, cred := range map[string]string{"admin": admin, "member": member, "viewer": viewer, "token": tok} {
		out := rec.targets(t, cred, id)
		if len(out.Targets) != 4 || out.Truncated || out.Targets[1].Key != "OPS" || out.Targets[1].Name != "Operações" ||
			len(out.Targets[1].IssueTypes) != 3 || out.Targets[1].IssueTypes[0] != (issueTypeOut{"10005", "Sub-task", true}) ||
			out.Targets[0].IssueTypes[3] != (issueTypeOut{"10002", "Task", false}) {
			t.Fatalf("%s: targets %+v", name, out)
		}
		if out.DefaultProject == nil || *out.DefaultProject != "OPS" || out.DefaultIssueType == nil ||
			*out.DefaultIssueType != (issueTypeOut{"10007", "Bug", false}) {
			t.Fatalf("%s: defaults %v %+v", name, out.DefaultProject, out.DefaultIssueType)
		}
	}
	reqs := tracker.matching(http.MethodGet, "/rest/api/3/project/search")
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("bot@acme.example:"+tokenMarker))
	if len(reqs) != 4 || reqs[0].Path != "/rest/api/3/project/search?expand=issueTypes&maxResults=100" || reqs[0].Auth != want {
		t.Fatalf("project search requests %+v", reqs)
	}

	t.Run("ResponsesMatchTheOpenAPIDocument", func(t *testing.T) {
		doc := env.Document(t)
		bare := rec.mustIntegration(t, admin, map[string]any{"name": "oas", "provider": "jira", "base_url": tracker.URL})
		tracker.failNext(http.StatusInternalServerError)
		// 200 with defaults, 502 (the failure above), 200 again, and 409 without credentials.
		for _, c := range []struct {
			id     string
			status int
		}{{id, 502}, {id, 200}, {bare, 409}} {
			if r := doc.Do(t, http.MethodGet, targetsPath(c.id), tok, nil); r.Status != c.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, c.status)
			}
		}
	})

	t.Run("Defaults", func(t *testing.T) {
		for i, c := range []struct {
			project  any
			wantProj string
			wantType *issueTypeOut
		}{
			{"DEV", "DEV", &issueTypeOut{"10002", "Task", false}},    // Task before the others
			{"EPX", "EPX", &issueTypeOut{"10011", "Epic", false}},    // first type that is not a sub-task
			{"SUB", "SUB", &issueTypeOut{"10009", "Sub-task", true}}, // only sub-tasks: the first
			{"XYZ", "", nil}, // not among the targets
			{nil, "", nil},   // no project
		} {
			body := map[string]any{"name": fmt.Sprintf("jira-%d", i), "provider": "jira", "base_url": tracker.URL, "credentials": creds}
			if c.project != nil {
				body["project"] = c.project
			}
			out := rec.targets(t, member, rec.mustIntegration(t, admin, body))
			gotProj := ""
			if out.DefaultProject != nil {
				gotProj = *out.DefaultProject
			}
			if gotProj != c.wantProj || (out.DefaultIssueType == nil) != (c.wantType == nil) ||
				c.wantType != nil && *out.DefaultIssueType != *c.wantType {
				t.Fatalf("project %v: defaults %v %+v", c.project, out.DefaultProject, out.DefaultIssueType)
			}
		}
	})

	t.Run("WorkspaceScoped", func(t *testing.T) {
		other := env.MustWorkspace(t, "other")
		otherAdmin, otherTok := env.MustSession(t, other, vigia.RoleAdmin), env.MustToken(t, other)
		n := len(tracker.requests())
		var bodies []errorBody
		for _, c := range []struct{ id, cred string }{{id, otherAdmin}, {id, otherTok}, {vigia.NewID(), admin}, {"nope", admin}} {
			e := rec.targetsFail(t, c.cred, c.id, http.StatusNotFound, "not_found")
			e.RequestID = ""
			bodies = append(bodies, e)
		}
		if string(bodies[0].Detail) != string(bodies[2].Detail) {
			t.Fatalf("another workspace's integration answers unlike an unknown one: %s / %s", bodies[0].Detail, bodies[2].Detail)
		}
		if len(tracker.requests()) != n {
			t.Fatal("the provider was called for another workspace")
		}
	})

	t.Run("NoCredentials", func(t *testing.T) {
		bare := rec.mustIntegration(t, admin, map[string]any{"name": "sem-credenciais", "provider": "jira", "base_url": tracker.URL,
			"project": "OPS"})
		n := len(tracker.requests())
		rec.targetsFail(t, tok, bare, http.StatusConflict, "ticket_credentials_missing")
		// Credentials removed later: the same.
		if r := rec.do(t, http.MethodPut, "/api/v1/tickets/integrations/"+id+"/credentials", admin, map[string]any{"api_token": ""}); r.Status != 200 {
			t.Fatalf("remove credentials: %d %s", r.Status, r.Body)
		}
		rec.targetsFail(t, admin, id, http.StatusConflict, "ticket_credentials_missing")
		if len(tracker.requests()) != n {
			t.Fatal("the provider was called without credentials")
		}
		if r := rec.do(t, http.MethodPut, "/api/v1/tickets/integrations/"+id+"/credentials", admin, creds); r.Status != 200 {
			t.Fatalf("credentials: %d %s", r.Status, r.Body)
		}
	})

	t.Run("ProviderFailures", func(t *testing.T) {
		for code, reason := range map[int]string{500: "http_500", 503: "http_503", 401: "http_401", 403: "http_403", 429: "http_429",
			302: "redirect", 400: "http_400", 404: "not_found"} {
			tracker.failNext(code)
			e := rec.targetsFail(t, member, id, http.StatusBadGateway, "ticket_provider_failed")
			var detail string
			_ = json.Unmarshal(e.Detail, &detail)
			if !strings.Contains(detail, reason) || strings.Contains(detail, receiverHost) {
				t.Fatalf("%d: detail %q", code, detail)
			}
		}
		// A read is not polling: no back-off, no error on the integration.
		if st := rec.state(t, admin, id); st.LastError != nil || st.BackoffUntil != nil {
			t.Fatalf("a targets read changed the polling state: %+v", st)
		}
		if !strings.Contains(env.Logs.String(), "ticket_provider_failed") {
			t.Fatal("the 502 was not logged with its code")
		}
	})

	t.Run("AtMost100", func(t *testing.T) {
		tracker.setProjects(manyProjects(150, fakeProject{Key: "OPS", Name: "Operações", Types: []fakeIssueType{{"10007", "Bug", false}}})...)
		out := rec.targets(t, admin, id)
		if len(out.Targets) != 100 || !out.Truncated || out.Targets[99].Key != "P099" || out.DefaultProject == nil ||
			*out.DefaultProject != "OPS" || out.DefaultIssueType == nil || out.DefaultIssueType.ID != "10007" {
			t.Fatalf("%d targets, truncated %v, default %v", len(out.Targets), out.Truncated, out.DefaultProject)
		}
	})
	rec.requireNoMarker(t, tokenMarker)
}

// Linear: teams (first 100) over GraphQL with the API key, each with empty
// issue_types; the generic provider: GET {base}/targets as documented, 404 meaning no
// targets, more than 100 cut at 100. An address the anti-SSRF guard refuses when
// called (a name resolving to 127.0.0.1, not in the allowlist) is 502
// ticket_destination_refused and reaches nothing.
func TestTicketTargetsLinearAndGeneric(t *testing.T) {
	env, rec, _, _ := ticketEnv(t, 0)
	tracker := mustTracker(t)
	ws := env.MustWorkspace(t, "targets-lg")
	admin, tok := env.MustSession(t, ws, vigia.RoleAdmin), env.MustToken(t, ws)

	t.Run("LinearTeams", func(t *testing.T) {
		tracker.setProjects(fakeProject{Key: "ENG", Name: "Engenharia", Types: []fakeIssueType{{"x", "Task", false}}},
			fakeProject{Key: "OPS", Name: "Operações"})
		id := rec.mustIntegration(t, admin, map[string]any{"name": "linear", "provider": "linear", "base_url": tracker.URL,
			"project": "ENG", "credentials": map[string]any{"api_token": tokenMarker}})
		out := rec.targets(t, tok, id)
		if len(out.Targets) != 2 || out.Targets[0].Key != "ENG" || out.Targets[0].Name != "Engenharia" || out.Targets[1].Key != "OPS" ||
			len(out.Targets[0].IssueTypes) != 0 || out.Truncated {
			t.Fatalf("teams %+v", out)
		}
		if out.DefaultProject == nil || *out.DefaultProject != "ENG" || out.DefaultIssueType != nil {
			t.Fatalf("defaults %v %+v", out.DefaultProject, out.DefaultIssueType)
		}
		reqs := tracker.matching(http.MethodPost, "/graphql")
		if len(reqs) != 1 || reqs[0].Auth != tokenMarker || !strings.Contains(string(reqs[0].Body), "teams(first: 100)") {
			t.Fatalf("linear requests %+v", reqs)
		}
		tracker.setProjects(manyProjects(150)...)
		if out := rec.targets(t, tok, id); len(out.Targets) != 100 || !out.Truncated || out.DefaultProject != nil {
			t.Fatalf("%d teams, truncated %v, default %v", len(out.Targets), out.Truncated, out.DefaultProject)
		}
		tracker.failNext(http.StatusBadGateway)
		rec.targetsFail(t, tok, id, http.StatusBadGateway, "ticket_provider_failed")
	})

	t.Run("Generic", func(t *testing.T) {
		tracker.setProjects() // none: GET /targets answers 404
		id := rec.mustIntegration(t, admin, map[string]any{"name": "generic", "provider": "generic", "base_url": tracker.URL,
			"project": "INC", "credentials": map[string]any{"api_token": tokenMarker}})
		if out := rec.targets(t, tok, id); len(out.Targets) != 0 || out.Truncated || out.DefaultProject != nil || out.DefaultIssueType != nil {
			t.Fatalf("a tracker without targets: %+v", out)
		}
		tracker.setProjects(manyProjects(150, fakeProject{Key: "OPS", Name: "Operações"},
			fakeProject{Key: "INC", Name: "Incidentes", Types: []fakeIssueType{{"i1", "Incidente", false}, {"i2", "Tarefa", false}}})...)
		out := rec.targets(t, admin, id)
		if len(out.Targets) != 100 || !out.Truncated || out.Targets[1].Key != "INC" || len(out.Targets[1].IssueTypes) != 2 ||
			out.Targets[0].Name != "Operações" || len(out.Targets[0].IssueTypes) != 0 {
			t.Fatalf("%d targets, truncated %v: %+v", len(out.Targets), out.Truncated, out.Targets[:2])
		}
		if out.DefaultProject == nil || *out.DefaultProject != "INC" || out.DefaultIssueType == nil ||
			*out.DefaultIssueType != (issueTypeOut{"i2", "Tarefa", false}) {
			t.Fatalf("defaults %v %+v", out.DefaultProject, out.DefaultIssueType)
		}
		reqs := tracker.matching(http.MethodGet, "/targets")
		if len(reqs) != 2 || reqs[0].Path != "/targets" || reqs[0].Auth != "Bearer "+tokenMarker {
			t.Fatalf("generic requests %+v", reqs)
		}
		tracker.failNext(http.StatusServiceUnavailable)
		rec.targetsFail(t, tok, id, http.StatusBadGateway, "ticket_provider_failed")
	})

	t.Run("AntiSSRF", func(t *testing.T) {
		_, port, _ := strings.Cut(strings.TrimPrefix(tracker.URL, "https://"), ":")
		// Public when the credentials were checked, 127.0.0.1 when called (DNS rebinding).
		rebind := rec.mustIntegration(t, admin, map[string]any{"name": "rebind", "provider": "generic",
			"base_url": "https://" + rebindHost + ":" + port, "credentials": map[string]any{"api_token": tokenMarker}})
		// A literal loopback address, not in the allowlist, stored after the check.
		literal := rec.mustIntegration(t, admin, map[string]any{"name": "literal", "provider": "jira", "base_url": tracker.URL,
			"credentials": map[string]any{"email": "bot@acme.example", "api_token": tokenMarker}})
		if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE ticket_integrations SET base_url = $1 WHERE id = $2`,
			"https://127.0.0.1:"+port, literal); err != nil {
			t.Fatal(err)
		}
		n := len(tracker.requests())
		for _, id := range []string{rebind, literal} {
			e := rec.targetsFail(t, tok, id, http.StatusBadGateway, "ticket_destination_refused")
			if strings.Contains(string(e.Detail), port) || strings.Contains(string(e.Detail), "127.0.0.1") {
				t.Fatalf("the refusal names the address: %s", e.Detail)
			}
		}
		if len(tracker.requests()) != n {
			t.Fatal("a refused destination was reached")
		}
	})
	rec.requireNoMarker(t, tokenMarker)
}
