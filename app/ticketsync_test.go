package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/ticket"
)

// ticketEnv starts Vigia with the webhook test configuration and the test's clock.
func ticketEnv(t *testing.T, batch int) (*apptest.Env, *recorder, *testClock, app.Config) {
	t.Helper()
	cfg := webhookConfig(t)
	clock := newTestClock()
	cfg.Clock, cfg.TicketPollBatch = clock, batch
	env := apptest.MustStart(t, cfg)
	return env, &recorder{env: env}, clock, cfg
}

// Polling reads ticket state through the provider's API with the sealed credentials,
// resolves the issue of a closed ticket as the inbound webhook does, sends a ticket
// answering 404 to the end of the queue while the others are still read, and a second
// poll changes nothing.
func TestTicketPollingJira(t *testing.T) {
	env, rec, clock, _ := ticketEnv(t, 2)
	tracker := mustTracker(t)
	ws := env.MustWorkspace(t, "poll")
	admin, member := env.MustSession(t, ws, vigia.RoleAdmin), env.MustSession(t, ws, vigia.RoleMember)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "encomendas")
	id := rec.mustIntegration(t, admin, map[string]any{"name": "jira", "provider": "jira", "base_url": tracker.URL,
		"project": "OPS", "credentials": map[string]any{"email": "bot@acme.example", "api_token": tokenMarker}})
	// OPS-3 is linked first (first in the queue) and answers 404; OPS-1 is closed.
	gone, closed, open := MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil),
		MustIssue(t, env, ws, ds, "anomaly", "critical", clock.Now(), nil), MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil)
	tracker.set("OPS-1", "done")
	tracker.set("OPS-2", "indeterminate")
	for _, l := range []struct{ issue, key string }{{gone, "OPS-3"}, {closed, "OPS-1"}, {open, "OPS-2"}} {
		clock.Set(clock.Now().Add(time.Second)) // links are queued in the order they were made
		rec.mustLink(t, member, l.issue, id, l.key, tracker.URL+"/browse/"+l.key)
	}
	ctx := context.Background()
	sync := func() {
		t.Helper()
		if err := env.App.Tickets.SyncTickets(ctx, id); err != nil {
			t.Fatalf("sync: %v", err)
		}
	}
	gets := func() []string {
		var keys []string
		for _, r := range tracker.matching(http.MethodGet, "/rest/api/3/issue/") {
			keys = append(keys, strings.TrimSuffix(strings.TrimPrefix(r.Path, "/rest/api/3/issue/"), "?fields=status"))
		}
		return keys
	}

	t0 := clock.Now()
	sync()
	if got := gets(); !slices.Equal(got, []string{"OPS-3", "OPS-1"}) {
		t.Fatalf("first poll read %v, want the queue's first two (batch of 2)", got)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("bot@acme.example:"+tokenMarker))
	for _, r := range tracker.requests() {
		if r.Auth != want {
			t.Fatalf("request without the integration's credentials: %q", r.Auth)
		}
	}
	if s := issueStatus(t, env, closed); s != "resolved" {
		t.Fatalf("closed ticket's issue is %s", s)
	}
	if got := historyOrigins(t, env, closed, "resolved"); !slices.Equal(got, []string{"ticket:jira:OPS-1"}) {
		t.Fatalf("history origins %v", got)
	}
	if n := countRows(t, env, `SELECT count(*) FROM activity_log WHERE workspace_id = $1 AND action = 'ticket_poll.applied'
		AND actor = 'ticket:jira' AND details->>'key' = 'OPS-1'`, ws); n != 1 {
		t.Fatalf("%d audit rows of the poll, want 1", n)
	}
	st := rec.state(t, admin, id)
	if !st.CredentialsSet || st.LastPollAt == nil || !st.LastPollAt.Equal(t0) || st.NextPollAt == nil ||
		!st.NextPollAt.Equal(t0.Add(15*time.Minute)) || st.LastError != nil || st.BackoffUntil != nil || st.TicketErrors != 1 {
		t.Fatalf("state after the first poll: %+v", st)
	}

	// Not due yet: nothing is read.
	sync()
	if n := len(tracker.requests()); n != 2 {
		t.Fatalf("a poll before next_poll_at sent %d requests", n-2)
	}
	// Next poll: OPS-2 (never read) comes before OPS-3, which went to the end of the
	// queue; OPS-1's issue is resolved and is not read again.
	clock.Set(t0.Add(15 * time.Minute))
	sync()
	if got := gets(); !slices.Equal(got[2:], []string{"OPS-2", "OPS-3"}) {
		t.Fatalf("second poll read %v, want OPS-2 then OPS-3", got[2:])
	}
	if s := issueStatus(t, env, open); s != "open" {
		t.Fatalf("open ticket's issue is %s", s)
	}
	if got := historyOrigins(t, env, closed, "resolved"); len(got) != 1 {
		t.Fatalf("the second poll changed the resolved issue: %v", got)
	}
	if n := countRows(t, env, `SELECT count(*) FROM activity_log WHERE workspace_id = $1 AND action LIKE 'ticket_poll.%'`, ws); n != 1 {
		t.Fatalf("%d poll audit rows after the second poll, want 1", n)
	}
	// The change came from the ticket: nothing is written back to it.
	if posts := tracker.matching(http.MethodPost, ""); len(posts) != 0 {
		t.Fatalf("a change from the ticket was written back: %+v", posts)
	}
	if n := countRows(t, env, `SELECT count(*) FROM ticket_writes WHERE integration_id = $1`, id); n != 0 {
		t.Fatalf("%d write-backs for a change that came from the ticket", n)
	}
	rec.requireNoMarker(t, tokenMarker)
}

// A provider failure delays the whole integration: the first wait is the polling
// interval, each further failure doubles it up to 6 hours, a restart keeps it, and a
// good run resets it. An anti-SSRF refusal counts the same.
func TestTicketPollingBackoff(t *testing.T) {
	env, rec, clock, cfg := ticketEnv(t, 0)
	tracker := mustTracker(t)
	ws := env.MustWorkspace(t, "backoff")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "faturas")
	id := rec.mustIntegration(t, admin, map[string]any{"name": "interno", "provider": "generic", "base_url": tracker.URL})
	if r := rec.do(t, http.MethodPut, "/api/v1/tickets/integrations/"+id+"/credentials", admin,
		map[string]any{"api_token": tokenMarker}); r.Status != 200 {
		t.Fatalf("credentials: %d %s", r.Status, r.Body)
	}
	issue := MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil)
	tracker.set("INC-7", "indeterminate")
	rec.mustLink(t, admin, issue, id, "INC-7", tracker.URL+"/tickets/INC-7")
	ctx := context.Background()
	sync := func(a *app.App) {
		t.Helper()
		if err := a.Tickets.SyncTickets(ctx, id); err != nil {
			t.Fatalf("sync: %v", err)
		}
	}
	due := func() bool {
		t.Helper()
		ds, err := env.DB.Webhooks().DueTicketSyncs(ctx, clock.Now(), 100)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ds, func(d ticket.DueSync) bool { return d.ID == id })
	}

	tracker.failNext(429, 500, 503, 401, 500, 500, 502)
	wants := []struct {
		code string
		wait time.Duration
	}{
		{"http_429", 15 * time.Minute}, {"http_500", 30 * time.Minute}, {"http_503", time.Hour}, {"http_401", 2 * time.Hour},
		{"http_500", 4 * time.Hour}, {"http_500", 6 * time.Hour}, {"http_502", 6 * time.Hour},
	}
	for i, w := range wants {
		now := clock.Now()
		if !due() {
			t.Fatalf("run %d: the integration is not due", i)
		}
		sync(env.App)
		st := rec.state(t, admin, id)
		if st.LastError == nil || *st.LastError != w.code || st.BackoffUntil == nil || !st.BackoffUntil.Equal(now.Add(w.wait)) ||
			st.NextPollAt == nil || st.NextPollAt.Before(*st.BackoffUntil) {
			t.Fatalf("run %d: state %+v, want %s and a wait of %s", i, st, w.code, w.wait)
		}
		// While it waits, nothing is sent, and the scheduler leaves it alone.
		n := len(tracker.requests())
		clock.Set(st.BackoffUntil.Add(-time.Second))
		sync(env.App)
		if len(tracker.requests()) != n || due() {
			t.Fatalf("run %d: a request was sent during the back-off", i)
		}
		clock.Set(*st.BackoffUntil)
	}
	if r := tracker.requests()[0]; r.Auth != "Bearer "+tokenMarker || r.Path != "/tickets/INC-7" {
		t.Fatalf("generic poll: %s with %q", r.Path, r.Auth)
	}

	// A restarted app reads the back-off from the database.
	st := rec.state(t, admin, id)
	clock.Set(st.BackoffUntil.Add(-time.Minute))
	restarted, err := app.New(cfg, env.DB, slog.New(slog.NewJSONHandler(env.Logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	n := len(tracker.requests())
	sync(restarted)
	if len(tracker.requests()) != n {
		t.Fatal("the restarted app ignored the back-off")
	}
	// A good run resets it.
	clock.Set(*st.BackoffUntil)
	sync(restarted)
	st = rec.state(t, admin, id)
	now := clock.Now()
	if st.LastError != nil || st.BackoffUntil != nil || st.LastPollAt == nil || !st.LastPollAt.Equal(now) ||
		st.NextPollAt == nil || !st.NextPollAt.Equal(now.Add(15*time.Minute)) {
		t.Fatalf("state after a good run: %+v", st)
	}
	if countRows(t, env, `SELECT backoff_seconds FROM ticket_integrations WHERE id = $1`, id) != 0 {
		t.Fatal("the wait was not reset")
	}
	clock.Set(now.Add(15 * time.Minute))
	tracker.failNext(500)
	sync(restarted)
	if st := rec.state(t, admin, id); !st.BackoffUntil.Equal(clock.Now().Add(15 * time.Minute)) {
		t.Fatalf("after a reset the first wait is the interval again: %+v", st)
	}

	t.Run("AntiSSRF", func(t *testing.T) {
		_, port, _ := strings.Cut(strings.TrimPrefix(tracker.URL, "https://"), ":")
		// An address the allowlist does not name is refused when the credentials are set.
		for base, code := range map[string]string{"https://127.0.0.1:" + port: "destination_refused", "http://" + receiverHost: "url_scheme"} {
			other := rec.mustIntegration(t, admin, map[string]any{"name": "x-" + vigia.NewUUID()[:6], "provider": "generic", "base_url": base})
			r := rec.do(t, http.MethodPut, "/api/v1/tickets/integrations/"+other+"/credentials", admin, map[string]any{"api_token": tokenMarker})
			if r.Status != 422 || !strings.Contains(string(r.Body), code) {
				t.Fatalf("%s: %d %s", base, r.Status, r.Body)
			}
		}
		// A name that resolves to a public address when checked and to loopback when
		// called (DNS rebinding) is refused by the dialer: the integration backs off.
		rebind := rec.mustIntegration(t, admin, map[string]any{"name": "rebind", "provider": "generic",
			"base_url": "https://" + rebindHost + ":" + port, "credentials": map[string]any{"api_token": tokenMarker}})
		rec.mustLink(t, admin, MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil), rebind, "INC-9",
			"https://"+rebindHost+"/tickets/INC-9")
		n := len(tracker.requests())
		if err := env.App.Tickets.SyncTickets(ctx, rebind); err != nil {
			t.Fatal(err)
		}
		st := rec.state(t, admin, rebind)
		if st.LastError == nil || *st.LastError != "destination_refused" || st.BackoffUntil == nil || len(tracker.requests()) != n {
			t.Fatalf("rebinding: %+v", st)
		}
	})
	rec.requireNoMarker(t, tokenMarker)
}

// Changes made in the service are written back through the job queue: resolving posts
// one comment and one transition to a done status, reopening a comment and a transition
// back; tickets outside the project, integrations without a project and changes that
// came from the ticket get nothing. The API token never comes back.
func TestTicketWriteBackJira(t *testing.T) {
	env, rec, clock, _ := ticketEnv(t, 0)
	tracker := mustTracker(t)
	ws := env.MustWorkspace(t, "writeback")
	admin, member, tok := env.MustSession(t, ws, vigia.RoleAdmin), env.MustSession(t, ws, vigia.RoleMember), env.MustToken(t, ws)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "clientes")
	id := rec.mustIntegration(t, admin, map[string]any{"name": "jira", "provider": "jira", "base_url": tracker.URL, "project": "OPS"})

	t.Run("AdminOnlyAndWorkspaceScoped", func(t *testing.T) {
		body := map[string]any{"email": "bot@acme.example", "api_token": tokenMarker}
		for name, cred := range map[string]string{"token": tok, "member": member} {
			if r := rec.do(t, http.MethodPut, "/api/v1/tickets/integrations/"+id+"/credentials", cred, body); r.Status != 403 {
				t.Fatalf("%s credentials: %d", name, r.Status)
			}
		}
		if r := rec.do(t, http.MethodPost, "/api/v1/tickets/integrations", tok, map[string]any{"name": "t", "provider": "jira",
			"credentials": body}); r.Status != 403 {
			t.Fatalf("token create: %d", r.Status)
		}
		other := env.MustWorkspace(t, "other")
		otherAdmin, otherTok := env.MustSession(t, other, vigia.RoleAdmin), env.MustToken(t, other)
		for _, c := range []struct {
			method, path, cred string
			body               any
		}{
			{http.MethodGet, "/api/v1/tickets/integrations/" + id, otherTok, nil},
			{http.MethodGet, "/api/v1/tickets/integrations/" + id, otherAdmin, nil},
			{http.MethodPut, "/api/v1/tickets/integrations/" + id + "/credentials", otherAdmin, body},
			{http.MethodGet, "/api/v1/tickets/integrations/" + vigia.NewID(), admin, nil},
			{http.MethodGet, "/api/v1/tickets/integrations/nope", admin, nil},
			{http.MethodPut, "/api/v1/tickets/integrations/nope/credentials", admin, body},
		} {
			if r := rec.do(t, c.method, c.path, c.cred, c.body); r.Status != 404 {
				t.Fatalf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
			}
		}
		for _, b := range []map[string]any{{"api_token": tokenMarker}, {"email": "not-an-email", "api_token": tokenMarker}} {
			if r := rec.do(t, http.MethodPut, "/api/v1/tickets/integrations/"+id+"/credentials", admin, b); r.Status != 422 {
				t.Fatalf("jira credentials %v: %d %s", b, r.Status, r.Body)
			}
		}
		r := rec.do(t, http.MethodPut, "/api/v1/tickets/integrations/"+id+"/credentials", admin, body)
		var out map[string]any
		r.JSON(t, &out)
		if r.Status != 200 || out["credentials_set"] != true {
			t.Fatalf("credentials: %d %s", r.Status, r.Body)
		}
		if n := countRows(t, env, `SELECT count(*) FROM activity_log WHERE workspace_id = $1 AND action = 'ticket_integration.credentials'
			AND details->>'credentials_set' = 'true'`, ws); n != 1 {
			t.Fatalf("%d audit rows of the credentials", n)
		}
	})
	if r := rec.do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+id+"/sync", admin,
		map[string]any{"webhook_secret": ticketSecret, "comment": true, "transition": true}); r.Status != 200 {
		t.Fatalf("sync settings: %d %s", r.Status, r.Body)
	}
	// A second integration without a project writes to no ticket.
	noProject := rec.mustIntegration(t, admin, map[string]any{"name": "jira-all", "provider": "jira", "base_url": tracker.URL,
		"credentials": map[string]any{"email": "bot@acme.example", "api_token": tokenMarker}})

	resolved, outside, fromTicket, unscoped := MustIssue(t, env, ws, ds, "anomaly", "critical", clock.Now(), nil),
		MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil), MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil),
		MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil)
	for key, cat := range map[string]string{"OPS-10": "indeterminate", "OPS-12": "indeterminate", "DEV-5": "indeterminate", "ABC-1": "new"} {
		tracker.set(key, cat)
	}
	rec.mustLink(t, member, resolved, id, "OPS-10", tracker.URL+"/browse/OPS-10")
	rec.mustLink(t, member, fromTicket, id, "OPS-12", tracker.URL+"/browse/OPS-12")
	rec.mustLink(t, member, unscoped, noProject, "ABC-1", tracker.URL+"/browse/ABC-1")
	// A link to another project's ticket (made before the project was set, say): reads
	// only, never writes.
	if _, err := env.DB.Pool().Exec(context.Background(), `INSERT INTO ticket_links (id, workspace_id, integration_id, issue_id,
		ticket_key, ticket_url, created_at) VALUES ($1, $2, $3, $4, 'DEV-5', $5, now())`, vigia.NewID(), ws, id, outside,
		tracker.URL+"/browse/DEV-5"); err != nil {
		t.Fatal(err)
	}
	MustRunWorkers(t, env)

	writes := func(status string) int {
		return countRows(t, env, `SELECT count(*) FROM ticket_writes WHERE workspace_id = $1 AND status = $2`, ws, status)
	}
	act := func(issueID, action string) {
		t.Helper()
		if r := rec.do(t, http.MethodPost, "/api/v1/issues/"+issueID+"/"+action, member, nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", action, r.Status, r.Body)
		}
	}
	act(resolved, "resolve")
	eventually(t, "the resolve write-back", func() bool { return writes("done") == 1 })
	comments := tracker.matching(http.MethodPost, "/rest/api/3/issue/OPS-10/comment")
	moves := tracker.matching(http.MethodPost, "/rest/api/3/issue/OPS-10/transitions")
	if len(comments) != 1 || len(moves) != 1 || !strings.Contains(string(moves[0].Body), `"31"`) || tracker.category("OPS-10") != "done" {
		t.Fatalf("resolve wrote %d comments and %d transitions (%s)", len(comments), len(moves), tracker.category("OPS-10"))
	}
	var adf struct {
		Body struct {
			Type    string `json:"type"`
			Content []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"body"`
	}
	if err := json.Unmarshal(comments[0].Body, &adf); err != nil || adf.Body.Type != "doc" || len(adf.Body.Content) != 1 ||
		len(adf.Body.Content[0].Content) != 1 {
		t.Fatalf("comment body is not ADF: %s", comments[0].Body)
	}
	// The workspace's locale is pt-PT: the comment names the title and the new status.
	if text := adf.Body.Content[0].Content[0].Text; !strings.Contains(text, "Problema de teste em anomaly") || !strings.Contains(text, "resolvido") {
		t.Fatalf("comment text %q", text)
	}

	act(resolved, "reopen")
	eventually(t, "the reopen write-back", func() bool { return writes("done") == 2 })
	moves = tracker.matching(http.MethodPost, "/rest/api/3/issue/OPS-10/transitions")
	if n := len(tracker.matching(http.MethodPost, "/rest/api/3/issue/OPS-10/comment")); n != 2 || len(moves) != 2 ||
		!strings.Contains(string(moves[1].Body), `"11"`) || tracker.category("OPS-10") != "new" {
		t.Fatalf("reopen: %d comments, %d transitions, ticket %s", n, len(moves), tracker.category("OPS-10"))
	}

	// Outside the project, without a project, and from the ticket: nothing is written.
	act(outside, "resolve")
	act(unscoped, "ignore")
	body := jiraEvent("OPS-12", "done", time.Now())
	if r := postTicket(t, env, id, body, "X-Hub-Signature: sha256="+ticket.SignTicketEvent(ticketSecret, body)); r.Status != 200 {
		t.Fatalf("inbound: %d %s", r.Status, r.Body)
	}
	if s := issueStatus(t, env, fromTicket); s != "resolved" {
		t.Fatalf("inbound event left the issue %s", s)
	}
	// A last change on OPS-10 proves the queue has moved past the others.
	act(resolved, "resolve")
	eventually(t, "the last write-back", func() bool { return writes("done") == 3 })
	for _, key := range []string{"DEV-5", "ABC-1", "OPS-12"} {
		if posts := tracker.matching(http.MethodPost, "/"+key+"/"); len(posts) != 0 {
			t.Fatalf("%s received %d writes", key, len(posts))
		}
	}
	if n := countRows(t, env, `SELECT count(*) FROM ticket_writes WHERE workspace_id = $1`, ws); n != 3 {
		t.Fatalf("%d write-backs, want the three changes of OPS-10", n)
	}
	if st := rec.state(t, admin, id); st.PendingWrites != 0 || st.FailedWrites != 0 || st.LastError != nil {
		t.Fatalf("integration state %+v", st)
	}
	rec.requireNoMarker(t, tokenMarker)
}

// Linear: polling reads state.type through GraphQL with the API key, and write-back
// creates a comment and moves the issue to a completed, then an unstarted, state.
// A failing write is recorded on the integration.
func TestTicketLinearPollAndWriteBack(t *testing.T) {
	env, rec, clock, _ := ticketEnv(t, 0)
	tracker := mustTracker(t)
	ws := env.MustWorkspace(t, "linear")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "pedidos")
	id := rec.mustIntegration(t, admin, map[string]any{"name": "linear", "provider": "linear", "base_url": tracker.URL,
		"project": "ENG", "credentials": map[string]any{"api_token": tokenMarker}})
	if r := rec.do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+id+"/sync", admin,
		map[string]any{"transition": true}); r.Status != 200 {
		t.Fatalf("sync settings: %d %s", r.Status, r.Body)
	}
	polled, written := MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil), MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil)
	tracker.set("ENG-1", "done")
	tracker.set("ENG-2", "indeterminate")
	rec.mustLink(t, admin, polled, id, "ENG-1", "https://linear.app/acme/issue/ENG-1/x")
	rec.mustLink(t, admin, written, id, "ENG-2", "https://linear.app/acme/issue/ENG-2/y")
	ctx := context.Background()
	sync := func() {
		t.Helper()
		if err := env.App.Tickets.SyncTickets(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	sync()
	if s := issueStatus(t, env, polled); s != "resolved" || !slices.Equal(historyOrigins(t, env, polled, "resolved"), []string{"ticket:linear:ENG-1"}) {
		t.Fatalf("linear poll: issue %s", s)
	}
	if r := tracker.requests()[0]; r.Auth != tokenMarker || !strings.Contains(string(r.Body), "ENG-") {
		t.Fatalf("linear request: %q %s", r.Auth, r.Body)
	}
	if r := rec.do(t, http.MethodPost, "/api/v1/issues/"+written+"/resolve", admin, nil); r.Status != 200 {
		t.Fatalf("resolve: %d", r.Status)
	}
	sync()
	if tracker.category("ENG-2") != "done" || len(tracker.matching(http.MethodPost, "/graphql")) == 0 {
		t.Fatalf("ENG-2 is %s after the resolve write-back", tracker.category("ENG-2"))
	}
	var mutations []string
	for _, r := range tracker.matching(http.MethodPost, "/graphql") {
		if b := string(r.Body); strings.Contains(b, "mutation") {
			mutations = append(mutations, b)
		}
	}
	if len(mutations) != 2 || !strings.Contains(mutations[0], "commentCreate") || !strings.Contains(mutations[0], `"issueId":"id-ENG-2"`) ||
		!strings.Contains(mutations[1], `"stateId":"s-completed"`) {
		t.Fatalf("mutations %v", mutations)
	}
	if r := rec.do(t, http.MethodPost, "/api/v1/issues/"+written+"/reopen", admin, nil); r.Status != 200 {
		t.Fatalf("reopen: %d", r.Status)
	}
	sync()
	if tracker.category("ENG-2") != "new" {
		t.Fatalf("ENG-2 is %s after the reopen write-back", tracker.category("ENG-2"))
	}
	// The ticket disappears: its write fails on its own, the integration does not back off.
	tracker.mu.Lock()
	tracker.missing["ENG-2"] = true
	tracker.mu.Unlock()
	if r := rec.do(t, http.MethodPost, "/api/v1/issues/"+written+"/resolve", admin, nil); r.Status != 200 {
		t.Fatalf("resolve: %d", r.Status)
	}
	sync()
	if st := rec.state(t, admin, id); st.FailedWrites != 1 || st.PendingWrites != 0 || st.BackoffUntil != nil {
		t.Fatalf("state after a failed write: %+v", st)
	}
	if n := countRows(t, env, `SELECT count(*) FROM ticket_writes WHERE integration_id = $1 AND status = 'failed'
		AND last_error = 'ticket_not_found'`, id); n != 1 {
		t.Fatalf("%d failed writes with ticket_not_found", n)
	}
	rec.requireNoMarker(t, tokenMarker)
}

// The generic provider's polling contract, as documented: GET {base}/tickets/{key}.
func TestTicketGenericContractExample(t *testing.T) {
	var gotAuth, gotPath string
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.EscapedPath()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status_category":"done","ticket_key":"INC:2041"}`))
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL)
	env, rec, clock, _ := ticketEnv(t, 0)
	ws := env.MustWorkspace(t, "generic")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "t")
	base := "https://" + otherHost + ":" + u.Port() + "/api"
	id := rec.mustIntegration(t, admin, map[string]any{"name": "g", "provider": "generic", "base_url": base,
		"credentials": map[string]any{"api_token": tokenMarker}})
	issue := MustIssue(t, env, ws, ds, "anomaly", "warning", clock.Now(), nil)
	rec.mustLink(t, admin, issue, id, "INC:2041", base+"/tickets/INC:2041")
	if err := env.App.Tickets.SyncTickets(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if gotPath != "/api/tickets/INC:2041" || gotAuth != "Bearer "+tokenMarker || issueStatus(t, env, issue) != "resolved" {
		t.Fatalf("generic: %s %q, issue %s", gotPath, gotAuth, issueStatus(t, env, issue))
	}
}

// Scans write back too: a failed verification reopens the ticket, a passing one
// verifies the resolution (the ticket is already closed: a comment, no transition).
func TestTicketWriteBackFromScans(t *testing.T) {
	root := t.TempDir()
	cfg := webhookConfig(t)
	cfg.SQLiteRoot = root
	env := apptest.MustStart(t, cfg)
	ws := env.MustWorkspace(t, "scanwb")
	e := &wfEnv{Env: env, ws: ws, admin: env.MustSession(t, ws, vigia.RoleAdmin), member: env.MustSession(t, ws, vigia.RoleMember),
		viewer: env.MustSession(t, ws, vigia.RoleViewer), tok: env.MustToken(t, ws), root: root}
	rec := &recorder{env: env}
	tracker := mustTracker(t)
	id, conn, _, _, src := ruleIssue(t, e)
	integration := rec.mustIntegration(t, e.admin, map[string]any{"name": "jira", "provider": "jira", "base_url": tracker.URL,
		"project": "OPS", "credentials": map[string]any{"email": "bot@acme.example", "api_token": tokenMarker}})
	if r := rec.do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+integration+"/sync", e.admin,
		map[string]any{"transition": true}); r.Status != 200 {
		t.Fatalf("sync settings: %d %s", r.Status, r.Body)
	}
	tracker.set("OPS-20", "indeterminate")
	rec.mustLink(t, e.member, id, integration, "OPS-20", tracker.URL+"/browse/OPS-20")
	sync := func() {
		t.Helper()
		if err := env.App.Tickets.SyncTickets(context.Background(), integration); err != nil {
			t.Fatal(err)
		}
	}
	changes := func() []string {
		t.Helper()
		rows, err := env.DB.Pool().Query(context.Background(), `SELECT change || ':' || status || ':' || split_part(origin, ':', 1)
			FROM ticket_writes WHERE integration_id = $1 ORDER BY seq`, integration)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	if r := rec.do(t, http.MethodPost, "/api/v1/issues/"+id+"/resolve", e.member, nil); r.Status != 200 {
		t.Fatalf("resolve: %d", r.Status)
	}
	e.scan(t, conn) // the rule still fails: the scan reopens the issue
	sync()
	if tracker.category("OPS-20") != "new" || issueStatus(t, env, id) != "open" {
		t.Fatalf("after a failed verification the ticket is %s", tracker.category("OPS-20"))
	}
	if r := rec.do(t, http.MethodPost, "/api/v1/issues/"+id+"/resolve", e.member, nil); r.Status != 200 {
		t.Fatalf("resolve: %d", r.Status)
	}
	src.exec(t, `UPDATE contas SET iban = 'z' WHERE iban IS NULL`)
	e.scan(t, conn) // the rule passes: the resolution is verified
	sync()
	got := changes()
	if !slices.Equal(got, []string{"resolved:done:user", "reopened:done:scan", "resolved:done:user", "verified:done:scan"}) {
		t.Fatalf("write-backs %v", got)
	}
	if n := len(tracker.matching(http.MethodPost, "/OPS-20/comment")); n != 4 {
		t.Fatalf("%d comments, want one per change", n)
	}
	// close, reopen, close; the verification finds the ticket closed already.
	if n := len(tracker.matching(http.MethodPost, "/OPS-20/transitions")); n != 3 || tracker.category("OPS-20") != "done" {
		t.Fatalf("%d transitions, ticket %s", n, tracker.category("OPS-20"))
	}
	rec.requireNoMarker(t, tokenMarker)
}
