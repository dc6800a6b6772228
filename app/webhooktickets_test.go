package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/ticket"
)

const ticketSecret = "tracker-secret-0123456789"

func jiraEvent(key, category string, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"timestamp": at.UnixMilli(), "webhookEvent": "jira:issue_updated",
		"issue": map[string]any{"key": key, "fields": map[string]any{"status": map[string]any{"name": "Feito",
			"statusCategory": map[string]any{"key": category}}}}})
	return b
}

// postTicket sends an inbound event with a signature header ("Name: value" or "").
func postTicket(tb testing.TB, env *apptest.Env, integrationID string, body []byte, header string) *apptest.Response {
	tb.Helper()
	var headers []string
	if header != "" {
		headers = append(headers, header)
	}
	return env.Do(tb, http.MethodPost, "/api/v1/webhooks/tickets/"+integrationID, "", string(body), headers...)
}

func issueStatus(tb testing.TB, env *apptest.Env, id string) string {
	tb.Helper()
	var s string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT status FROM issues WHERE id = $1`, id).Scan(&s); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Must show 8: bad signature, unknown integration and missing secret all get the same
// 401 and change nothing; a valid event resolves the linked issue; its replay answers
// unchanged.
func TestInboundTicketEvents(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "tickets")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	member := env.MustSession(t, ws, vigia.RoleMember)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "clientes")
	issue := MustIssue(t, env, ws, ds, "anomaly", "critical", time.Now(), nil)
	integration := func(name, provider string) string {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/tickets/integrations", admin, map[string]any{"name": name, "provider": provider,
			"base_url": "https://" + name + ".example.net", "project": "OPS"})
		if r.Status != http.StatusCreated {
			t.Fatalf("integration: %d %s", r.Status, r.Body)
		}
		var out map[string]any
		r.JSON(t, &out)
		return out["id"].(string)
	}
	jira, noSecret := integration("jira", "jira"), integration("jira2", "jira")
	var sync map[string]any
	sr := env.Do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+jira+"/sync", admin,
		map[string]any{"webhook_secret": ticketSecret, "interval_min": 15, "comment": true, "transition": true})
	sr.JSON(t, &sync)
	if sr.Status != 200 || sync["webhook_path"] != "/api/v1/webhooks/tickets/"+jira || sync["webhook_secret_set"] != true ||
		strings.Contains(string(sr.Body), ticketSecret) {
		t.Fatalf("sync: %d %s", sr.Status, sr.Body)
	}
	lr := env.Do(t, http.MethodPost, "/api/v1/tickets/link", member, map[string]any{"issue_id": issue, "integration_id": jira,
		"key": "OPS-12", "url": "https://jira.example.net/browse/OPS-12"})
	if lr.Status != http.StatusCreated {
		t.Fatalf("link: %d %s", lr.Status, lr.Body)
	}

	done := jiraEvent("OPS-12", "done", time.Now())
	good := "X-Hub-Signature: sha256=" + ticket.SignTicketEvent(ticketSecret, done)

	t.Run("RefusalsAreIdenticalAndChangeNothing", func(t *testing.T) {
		cases := map[string]*apptest.Response{
			"BadSignature":       postTicket(t, env, jira, done, "X-Hub-Signature: sha256="+ticket.SignTicketEvent("wrong-secret-000000", done)),
			"NoSignature":        postTicket(t, env, jira, done, ""),
			"UnknownIntegration": postTicket(t, env, vigia.NewID(), done, good),
			"NotAnID":            postTicket(t, env, "nope", done, good),
			"NoSecret":           postTicket(t, env, noSecret, done, "X-Hub-Signature: sha256="+ticket.SignTicketEvent(ticketSecret, done)),
		}
		var first string
		for name, r := range cases {
			e := decodeError(t, r)
			detail := string(r.Body[:bytes.Index(r.Body, []byte(`"request_id"`))])
			if r.Status != http.StatusUnauthorized || e.Code != "signature_invalid" {
				t.Fatalf("%s: %d %s", name, r.Status, r.Body)
			}
			if first == "" {
				first = detail
			} else if detail != first {
				t.Fatalf("%s answers differently: %s vs %s", name, detail, first)
			}
		}
		if s := issueStatus(t, env, issue); s != "open" {
			t.Fatalf("issue %s after refused events", s)
		}
	})
	t.Run("StaleOrMissingTimestampIs400", func(t *testing.T) {
		old := jiraEvent("OPS-12", "done", time.Now().Add(-6*time.Minute))
		r := postTicket(t, env, jira, old, "X-Hub-Signature: sha256="+ticket.SignTicketEvent(ticketSecret, old))
		if e := decodeError(t, r); r.Status != http.StatusBadRequest || e.Code != "timestamp_invalid" {
			t.Fatalf("old: %d %s", r.Status, r.Body)
		}
		none := []byte(`{"issue":{"key":"OPS-12","fields":{"status":{"statusCategory":{"key":"done"}}}}}`)
		r = postTicket(t, env, jira, none, "X-Hub-Signature: sha256="+ticket.SignTicketEvent(ticketSecret, none))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("missing: %d %s", r.Status, r.Body)
		}
		if s := issueStatus(t, env, issue); s != "open" {
			t.Fatalf("issue %s", s)
		}
	})
	t.Run("TooLargeBeforeSignature", func(t *testing.T) {
		big := bytes.Repeat([]byte("x"), ticket.MaxInboundBody+1)
		r := postTicket(t, env, vigia.NewID(), big, "")
		if e := decodeError(t, r); r.Status != http.StatusRequestEntityTooLarge || e.Code != "payload_too_large" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("ValidEventResolvesAndReplayIsUnchanged", func(t *testing.T) {
		var out map[string]any
		r := postTicket(t, env, jira, done, good)
		r.JSON(t, &out)
		if r.Status != 200 || out["status"] != "applied" || issueStatus(t, env, issue) != "resolved" {
			t.Fatalf("valid: %d %s (issue %s)", r.Status, r.Body, issueStatus(t, env, issue))
		}
		var origin, note string
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT origin, note FROM issue_history WHERE issue_id = $1
			AND to_status = 'resolved'`, issue).Scan(&origin, &note); err != nil || origin != "ticket:jira:OPS-12" || note != "" {
			t.Fatalf("history origin %q note %q (%v)", origin, note, err)
		}
		r = postTicket(t, env, jira, done, good)
		r.JSON(t, &out)
		if r.Status != 200 || out["status"] != "unchanged" {
			t.Fatalf("replay: %d %s", r.Status, r.Body)
		}
		var audited int
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM activity_log WHERE workspace_id = $1
			AND action LIKE 'ticket_webhook.%' AND details::text NOT LIKE '%webhookEvent%'`, ws).Scan(&audited); err != nil || audited != 2 {
			t.Fatalf("audited %d results (%v), want 2 without the body", audited, err)
		}
	})
	t.Run("OtherAnswers", func(t *testing.T) {
		send := func(body []byte) string {
			t.Helper()
			var out map[string]any
			r := postTicket(t, env, jira, body, "X-Hub-Signature: sha256="+ticket.SignTicketEvent(ticketSecret, body))
			r.JSON(t, &out)
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			return out["status"].(string)
		}
		if s := send(jiraEvent("OPS-999", "done", time.Now())); s != "unknown_ticket" {
			t.Fatalf("unlinked ticket: %s", s)
		}
		if s := send(jiraEvent("OPS-12", "indeterminate", time.Now())); s != "ignored" {
			t.Fatalf("in progress: %s", s)
		}
		if s := send([]byte(fmt.Sprintf(`{"timestamp":%d,"webhookEvent":"comment_created"}`, time.Now().UnixMilli()))); s != "ignored" {
			t.Fatalf("no ticket state: %s", s)
		}
		if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE workspaces SET suspended = true WHERE id = $1`, ws); err != nil {
			t.Fatal(err)
		}
		defer env.DB.Pool().Exec(context.Background(), `UPDATE workspaces SET suspended = false WHERE id = $1`, ws)
		if s := send(jiraEvent("OPS-12", "done", time.Now())); s != "workspace_disabled" {
			t.Fatalf("suspended: %s", s)
		}
	})
	t.Run("LinearBareHexAndRuleIssueAwaitsVerification", func(t *testing.T) {
		linear := integration("linear", "linear")
		env.Do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+linear+"/sync", admin, map[string]any{"webhook_secret": ticketSecret})
		ruleIssue := MustIssue(t, env, ws, ds, "rule_failed", "warning", time.Now(), vigia.Ptr(vigia.NewID()))
		if r := env.Do(t, http.MethodPost, "/api/v1/tickets/link", admin, map[string]any{"issue_id": ruleIssue, "key": "OPS-7",
			"url": "https://linear.example.net/acme/issue/OPS-7/fix"}); r.Status != http.StatusCreated {
			t.Fatalf("link by host: %d %s", r.Status, r.Body)
		}
		body, _ := json.Marshal(map[string]any{"action": "update", "type": "Issue", "webhookTimestamp": time.Now().UnixMilli(),
			"data": map[string]any{"identifier": "OPS-7", "state": map[string]any{"type": "completed", "name": "Done"}}})
		var out map[string]any
		r := postTicket(t, env, linear, body, "Linear-Signature: "+ticket.SignTicketEvent(ticketSecret, body))
		r.JSON(t, &out)
		if r.Status != 200 || out["status"] != "applied" {
			t.Fatalf("linear: %d %s", r.Status, r.Body)
		}
		// Resolved by the ticket, the rule's issue stays its current one: the next scan that
		// evaluates the rule verifies it or reopens it.
		var status string
		var current, history bool
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT status, rule_current, EXISTS (SELECT 1 FROM issue_history h
			WHERE h.issue_id = i.id AND h.origin = 'ticket:linear:OPS-7' AND h.to_status = 'resolved') FROM issues i WHERE i.id = $1`,
			ruleIssue).Scan(&status, &current, &history); err != nil || status != "resolved" || !current || !history {
			t.Fatalf("rule issue: status %s, current %v, history %v (%v)", status, current, history, err)
		}
		if r := postTicket(t, env, linear, body, "Linear-Signature: sha256="+ticket.SignTicketEvent(ticketSecret, body)); r.Status != 401 {
			t.Fatalf("linear with a prefixed signature: %d", r.Status)
		}
	})
	t.Run("GenericProvider", func(t *testing.T) {
		generic := integration("interno", "generic")
		if r := env.Do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+generic+"/sync", admin, map[string]any{"comment": true}); r.Status != 400 {
			t.Fatalf("generic comment: %d %s", r.Status, r.Body)
		}
		env.Do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+generic+"/sync", admin, map[string]any{"webhook_secret": ticketSecret})
		other := MustIssue(t, env, ws, ds, "anomaly", "warning", time.Now(), nil)
		if r := env.Do(t, http.MethodPost, "/api/v1/tickets/link", admin, map[string]any{"issue_id": other, "integration_id": generic,
			"key": "INC-2041", "url": "https://interno.example.net/tickets/INC-2041"}); r.Status != http.StatusCreated {
			t.Fatalf("link: %d %s", r.Status, r.Body)
		}
		body := []byte(fmt.Sprintf(`{"ticket_key":"INC-2041","status_category":"done","timestamp":%d}`, time.Now().Unix()))
		var out map[string]any
		postTicket(t, env, generic, body, "X-Ticket-Signature: "+ticket.SignTicketEvent(ticketSecret, body)).JSON(t, &out)
		if out["status"] != "applied" || issueStatus(t, env, other) != "resolved" {
			t.Fatalf("generic: %v", out)
		}
	})
	t.Run("SyncAndLinkValidation", func(t *testing.T) {
		for _, c := range []struct {
			body map[string]any
			want int
		}{
			{map[string]any{"webhook_secret": "short"}, 422},
			{map[string]any{"interval_min": 4}, 422},
			{map[string]any{"interval_min": 1441}, 422},
			{map[string]any{"webhook_secret": ""}, 200},
		} {
			if r := env.Do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+noSecret+"/sync", admin, c.body); r.Status != c.want {
				t.Fatalf("%v: %d %s", c.body, r.Status, r.Body)
			}
		}
		if r := env.Do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+jira+"/sync", member, map[string]any{"interval_min": 30}); r.Status != 403 {
			t.Fatalf("member sync: %d", r.Status)
		}
		for _, c := range []struct{ key, url, code string }{
			{"OPS-13", "https://jira.example.net/browse/OPS-12", "key_mismatch"},
			{"DEV-12", "https://jira.example.net/browse/DEV-12", "project_mismatch"},
		} {
			r := env.Do(t, http.MethodPost, "/api/v1/tickets/link", admin, map[string]any{"issue_id": issue, "integration_id": jira,
				"key": c.key, "url": c.url})
			if r.Status != 422 || !strings.Contains(string(r.Body), c.code) {
				t.Fatalf("%s: %d %s", c.code, r.Status, r.Body)
			}
		}
		otherWS := env.MustSession(t, env.MustWorkspace(t, "other"), vigia.RoleAdmin)
		if r := env.Do(t, http.MethodPut, "/api/v1/notification-channels/tickets/"+jira+"/sync", otherWS, map[string]any{"interval_min": 30}); r.Status != 404 {
			t.Fatalf("other workspace sync: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPost, "/api/v1/tickets/link", otherWS, map[string]any{"issue_id": issue, "key": "OPS-12",
			"url": "https://jira.example.net/browse/OPS-12"}); r.Status != 422 && r.Status != 404 {
			t.Fatalf("other workspace link: %d", r.Status)
		}
	})
	t.Run("RateLimitComesFirst", func(t *testing.T) {
		id := vigia.NewID()
		var last *apptest.Response
		for range 121 {
			last = postTicket(t, env, id, []byte("{}"), "")
		}
		if e := decodeError(t, last); last.Status != http.StatusTooManyRequests || e.Code != "rate_limited" || last.Header.Get("Retry-After") == "" {
			t.Fatalf("121st request: %d %s", last.Status, last.Body)
		}
		big := bytes.Repeat([]byte("x"), ticket.MaxInboundBody+1)
		if r := postTicket(t, env, id, big, ""); r.Status != http.StatusTooManyRequests {
			t.Fatalf("over the limit a large body still gets %d, want 429 first", r.Status)
		}
	})
	if strings.Contains(env.Logs.String(), ticketSecret) {
		t.Fatal("the ticket webhook secret reached the logs")
	}
}
