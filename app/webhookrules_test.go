package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/oncall"
)

// userOf returns the user id behind a session token.
func userOf(tb testing.TB, env *apptest.Env, session string) string {
	tb.Helper()
	var id string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT user_id::text FROM sessions WHERE token_hash = sha256($1::bytea)`,
		session).Scan(&id); err != nil {
		tb.Fatal(err)
	}
	return id
}

// MustFinishedScan records a finished scan that opened the given issues (as a scan
// would), so that its alerts are dispatched.
func MustFinishedScan(tb testing.TB, env *apptest.Env, ws, connectionID string, issues ...string) string {
	tb.Helper()
	id := vigia.NewID()
	ctx := context.Background()
	// One transaction, as a real scan finishes: a dispatcher running meanwhile must not
	// see the finished scan before its issues.
	tx, err := env.DB.Pool().Begin(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO scans (id, workspace_id, connection_id, status, created_at, finished_at)
		VALUES ($1, $2, $3, 'succeeded', now(), now())`, id, ws, connectionID); err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE issues SET first_scan_id = $1, last_scan_id = $1 WHERE id = ANY($2::uuid[])`, id, issues); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		tb.Fatal(err)
	}
	return id
}

// The permission rules of the Notification channels table, team channels' visibility,
// tenancy and the in-app list's visibility.
func TestChannelPermissionRulesAndVisibility(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ctx := context.Background()
	ws := env.MustWorkspace(t, "perm")
	conn := env.MustConnection(t, ws, "pg")
	open := env.MustDataset(t, ws, conn, "public", "aberta")
	secret := env.MustDataset(t, ws, conn, "saude", "diagnosticos")
	domain, granted, plain := vigia.NewID(), vigia.NewID(), vigia.NewID()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := env.DB.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Saúde', true)`, domain, ws)
	exec(`INSERT INTO domain_datasets VALUES ($1, $2)`, domain, secret)
	exec(`INSERT INTO teams (id, workspace_id, name) VALUES ($1, $2, 'clinica'), ($3, $2, 'vendas')`, granted, ws, plain)
	exec(`INSERT INTO domain_grants (domain_id, team_id) VALUES ($1, $2)`, domain, granted)
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	seller := env.MustSession(t, ws, vigia.RoleMember) // in vendas: reads nothing restricted
	doctor := env.MustSession(t, ws, vigia.RoleMember) // in clinica: reads the restricted domain
	exec(`INSERT INTO team_members VALUES ($1, $2), ($3, $4)`, plain, userOf(t, env, seller), granted, userOf(t, env, doctor))
	tok := env.MustToken(t, ws)

	wsRcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	plainRcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	grantedRcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	create := func(cred string, body map[string]any) *apptest.Response {
		return env.Do(t, http.MethodPost, "/api/v1/notification-channels", cred, body)
	}
	chBody := func(name, url string, team *string) map[string]any {
		b := map[string]any{"name": name, "config": map[string]any{"webhook_url": url}}
		if team != nil {
			b["team_id"] = *team
		}
		return b
	}
	if r := create(seller, chBody("x", wsRcv.URL, nil)); r.Status != 403 || decodeError(t, r).Code != "forbidden" {
		t.Fatalf("member, no team, restricted domains exist: %d %s", r.Status, r.Body)
	}
	if r := create(seller, chBody("x", wsRcv.URL, &granted)); r.Status != 403 {
		t.Fatalf("member, a team that reads more than they do: %d", r.Status)
	}
	if r := create(seller, map[string]any{"name": "x", "team_id": plain, "config": map[string]any{"webhook_url": wsRcv.URL},
		"scope": map[string]any{"dataset_ids": []string{secret}}}); r.Status != 404 {
		t.Fatalf("member scoping an invisible dataset: %d", r.Status)
	}
	wsCh, _ := MustChannel(t, env, admin, chBody("workspace", wsRcv.URL, nil))
	plainCh, _ := MustChannel(t, env, seller, chBody("vendas", plainRcv.URL, &plain))
	grantedCh, _ := MustChannel(t, env, doctor, chBody("clinica", grantedRcv.URL, &granted))

	t.Run("PatchChecksBeforeAndAfter", func(t *testing.T) {
		if r := env.Do(t, http.MethodPatch, "/api/v1/notification-channels/"+plainCh, seller, map[string]any{"team_id": granted}); r.Status != 403 {
			t.Fatalf("as it will be: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPatch, "/api/v1/notification-channels/"+grantedCh, seller, map[string]any{"team_id": plain}); r.Status != 403 {
			t.Fatalf("as it is: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPatch, "/api/v1/notification-channels/"+plainCh, seller, map[string]any{"team_id": nil}); r.Status != 403 {
			t.Fatalf("to a workspace channel: %d", r.Status)
		}
		for _, op := range []struct{ method, path string }{{http.MethodDelete, ""}, {http.MethodPost, "/test"}, {http.MethodPatch, ""}} {
			var b any
			if op.method == http.MethodPatch {
				b = map[string]any{"name": "mine"}
			}
			if r := env.Do(t, op.method, "/api/v1/notification-channels/"+wsCh+op.path, seller, b); r.Status != 403 {
				t.Fatalf("%s%s on the workspace channel: %d", op.method, op.path, r.Status)
			}
		}
		r := env.Do(t, http.MethodPatch, "/api/v1/notification-channels/"+plainCh, seller, map[string]any{"name": "vendas 2",
			"event_kinds": []string{"alerts", "domain.verdict_changed"}, "min_severity": "critical"})
		var c map[string]any
		r.JSON(t, &c)
		if r.Status != 200 || c["name"] != "vendas 2" || fmt.Sprint(c["event_kinds"]) != "[alerts domain.verdict_changed]" ||
			c["team_id"] != plain || c["signed"] != true {
			t.Fatalf("allowed patch: %d %s", r.Status, r.Body)
		}
		r = env.Do(t, http.MethodPatch, "/api/v1/notification-channels/"+plainCh, seller, map[string]any{"min_severity": "warning"})
		r.JSON(t, &c)
		if fmt.Sprint(c["event_kinds"]) != "[alerts domain.verdict_changed]" {
			t.Fatalf("absent event_kinds did not keep the value: %v", c["event_kinds"])
		}
	})
	t.Run("OtherWorkspaceGets404", func(t *testing.T) {
		other := env.MustSession(t, env.MustWorkspace(t, "intruso"), vigia.RoleAdmin)
		unknown := vigia.NewID()
		for _, op := range []struct{ method, suffix string }{{http.MethodGet, ""}, {http.MethodPatch, ""}, {http.MethodDelete, ""},
			{http.MethodPost, "/test"}, {http.MethodPost, "/rotate-secret"}, {http.MethodGet, "/preview"}, {http.MethodGet, "/deliveries"}} {
			var b any
			if op.method == http.MethodPatch {
				b = map[string]any{"name": "x"}
			}
			a := env.Do(t, op.method, "/api/v1/notification-channels/"+wsCh+op.suffix, other, b)
			u := env.Do(t, op.method, "/api/v1/notification-channels/"+unknown+op.suffix, other, b)
			ea, eu := decodeError(t, a), decodeError(t, u)
			if a.Status != 404 || u.Status != 404 || string(ea.Detail) != string(eu.Detail) || ea.Code != eu.Code {
				t.Fatalf("%s %s: %d %s vs %d %s", op.method, op.suffix, a.Status, a.Body, u.Status, u.Body)
			}
		}
		var list []any
		r := env.Do(t, http.MethodGet, "/api/v1/notification-channels", other, nil)
		r.JSON(t, &list)
		if len(list) != 0 || r.Header.Get("X-Total-Count") != "0" {
			t.Fatalf("other workspace lists %s", r.Body)
		}
	})

	t.Run("TeamChannelsCarryOnlyWhatTheTeamReads", func(t *testing.T) {
		MustRunWorkers(t, env)
		onOpen := MustIssue(t, env, ws, open, "anomaly", "critical", time.Now(), nil)
		onSecret := MustIssue(t, env, ws, secret, "anomaly", "critical", time.Now(), nil)
		MustFinishedScan(t, env, ws, conn, onOpen, onSecret)
		settle(t, env, ws)
		count := func(rcv *hookReceiver) int {
			got := rcv.ofEvent("service.alerts")
			if len(got) != 1 {
				t.Fatalf("%d alerts deliveries", len(got))
			}
			return len(decodeBody(t, got[0].Body)["alerts"].([]any))
		}
		if w, p, g := count(wsRcv), count(plainRcv), count(grantedRcv); w != 2 || p != 1 || g != 2 {
			t.Fatalf("alerts per channel: workspace %d, vendas %d, clinica %d; want 2, 1, 2", w, p, g)
		}
		if strings.Contains(string(plainRcv.ofEvent("service.alerts")[0].Body), secret) {
			t.Fatal("the vendas channel carried the restricted dataset")
		}

		var items []map[string]any
		r := env.Do(t, http.MethodGet, "/api/v1/notifications", tok, nil)
		r.JSON(t, &items)
		if r.Header.Get("X-Total-Count") != "1" || len(items) != 1 || fmt.Sprint(items[0]["dataset_ids"]) != "["+open+"]" ||
			items[0]["issue_id"] != onOpen || items[0]["deliveries"] != float64(3) {
			t.Fatalf("token sees %s", r.Body)
		}
		r = env.Do(t, http.MethodGet, "/api/v1/notifications", doctor, nil, "Accept-Language: en")
		r.JSON(t, &items)
		if r.Header.Get("X-Total-Count") != "2" || !strings.HasPrefix(items[0]["title"].(string), "New alert on «") {
			t.Fatalf("granted member sees %s", r.Body)
		}

		var prev map[string]any
		env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+plainCh+"/preview?days=30", seller, nil).JSON(t, &prev)
		if prev["alerts"] != float64(1) || prev["deliveries"] != float64(1) || prev["days"] != float64(30) || prev["held"] != float64(0) {
			t.Fatalf("preview %v", prev)
		}
		if r := env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+plainCh+"/preview?days=400", seller, nil); r.Status != 422 {
			t.Fatalf("days 400: %d", r.Status)
		}
	})
}

// The rota escalates unacknowledged problems level by level, then to its team or as
// exhausted; weekly digests go once per slot.
func TestEscalationAndDigest(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ctx := context.Background()
	ws := env.MustWorkspace(t, "oncall")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	first, second := userOf(t, env, env.MustSession(t, ws, vigia.RoleMember)), userOf(t, env, env.MustSession(t, ws, vigia.RoleMember))
	team := vigia.NewID()
	if _, err := env.DB.Pool().Exec(ctx, `INSERT INTO teams (id, workspace_id, name) VALUES ($1, $2, 'sre')`, team, ws); err != nil {
		t.Fatal(err)
	}
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "pagamentos")
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	MustChannel(t, env, admin, map[string]any{"name": "oncall", "config": map[string]any{"webhook_url": rcv.URL}})

	if r := env.Do(t, http.MethodPut, "/api/v1/oncall/rota", env.MustSession(t, ws, vigia.RoleMember),
		map[string]any{"levels": []map[string]any{{"user_id": first, "minutes": 5}}}); r.Status != 403 {
		t.Fatalf("member sets the rota: %d", r.Status)
	}
	if r := env.Do(t, http.MethodPut, "/api/v1/oncall/rota", admin, map[string]any{"levels": []map[string]any{
		{"user_id": vigia.NewID(), "minutes": 5}}}); r.Status != 404 {
		t.Fatalf("unknown person: %d", r.Status)
	}
	r := env.Do(t, http.MethodPut, "/api/v1/oncall/rota", admin, map[string]any{"team_id": team, "levels": []map[string]any{
		{"user_id": first, "minutes": 5}, {"user_id": second, "minutes": 10}}})
	if r.Status != 200 {
		t.Fatalf("set rota: %d %s", r.Status, r.Body)
	}
	if _, err := env.DB.Pool().Exec(ctx, `UPDATE oncall_rotas SET created_at = now() - interval '1 day' WHERE workspace_id = $1`, ws); err != nil {
		t.Fatal(err)
	}
	issue := MustIssue(t, env, ws, ds, "anomaly", "critical", time.Now().Add(-20*time.Minute), nil)
	acked := MustIssue(t, env, ws, ds, "anomaly", "critical", time.Now().Add(-20*time.Minute), nil)
	MustIssue(t, env, ws, ds, "anomaly", "warning", time.Now().Add(-20*time.Minute), nil) // below the rota's severity
	if _, err := env.DB.Pool().Exec(ctx, `UPDATE issues SET status = 'acknowledged' WHERE id = $1`, acked); err != nil {
		t.Fatal(err)
	}
	// The workers (their escalation loop too) start once the rota and the issues are set
	// up: a loop run in the middle of the set-up saw a rota created just now.
	MustRunWorkers(t, env)
	// One escalator runs at a time over the whole database (an advisory lock; a call that
	// finds it taken does nothing), and this package's tests share one database: call
	// until the issue has gone up the rota to its team, then once more, which must send
	// nothing new.
	escalateUntil(t, env, "the issue to reach the team", func() bool { return escalation(t, env, issue) == "2 true" })
	if _, err := env.App.OnCall.Escalate(ctx); err != nil {
		t.Fatal(err)
	}
	settle(t, env, ws)
	got := rcv.ofEvent("service.escalation")
	if len(got) != 2 {
		t.Fatalf("%d escalation deliveries, want 2 (level 1, then the team)", len(got))
	}
	b1, b2 := decodeBody(t, got[0].Body), decodeBody(t, got[1].Body)
	if b1["params"].(map[string]any)["level"] == float64(2) {
		b1, b2 = b2, b1
	}
	requireKeys(t, b1, "escalation")
	e1, p1 := b1["escalation"].(map[string]any), b1["params"].(map[string]any)
	if b1["code"] != "escalation_level" || e1["issue_id"] != issue || e1["level"] != float64(1) || e1["user_id"] != second ||
		e1["exhausted"] != false || p1["level"] != float64(1) || p1["minutes_unacked"].(float64) < 19 || p1["issue_id"] != issue {
		t.Fatalf("level body %v", b1)
	}
	e2, p2 := b2["escalation"].(map[string]any), b2["params"].(map[string]any)
	if b2["code"] != "escalation_team" || e2["level"] != float64(2) || e2["user_id"] != nil || e2["exhausted"] != true ||
		p2["team_id"] != team {
		t.Fatalf("team body %v", b2)
	}

	t.Run("WithoutTeamTheRotaIsExhausted", func(t *testing.T) {
		env.Do(t, http.MethodPut, "/api/v1/oncall/rota", admin, map[string]any{"levels": []map[string]any{{"user_id": first, "minutes": 5}}})
		if _, err := env.DB.Pool().Exec(ctx, `UPDATE oncall_rotas SET created_at = now() - interval '1 day' WHERE workspace_id = $1`, ws); err != nil {
			t.Fatal(err)
		}
		lone := MustIssue(t, env, ws, ds, "schema_drift", "critical", time.Now().Add(-10*time.Minute), nil)
		escalateUntil(t, env, "the lone issue to exhaust the rota", func() bool { return escalation(t, env, lone) == "1 true" })
		settle(t, env, ws)
		var found bool
		for _, req := range rcv.ofEvent("service.escalation") {
			b := decodeBody(t, req.Body)
			if e := b["escalation"].(map[string]any); e["issue_id"] == lone {
				found = b["code"] == "escalation_exhausted" && e["exhausted"] == true && e["level"] == float64(0)
			}
		}
		if !found {
			t.Fatal("no escalation_exhausted for a rota without team")
		}
	})

	t.Run("WeeklyDigestOncePerSlot", func(t *testing.T) {
		digestRcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
		teamRcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
		wsCh, _ := MustChannel(t, env, admin, map[string]any{"name": "digest", "digest": true, "config": map[string]any{"webhook_url": digestRcv.URL},
			"event_kinds": []string{"domain.verdict_changed"}})
		teamCh, _ := MustChannel(t, env, admin, map[string]any{"name": "team digest", "digest": true, "team_id": team,
			"config": map[string]any{"webhook_url": teamRcv.URL}, "event_kinds": []string{"domain.verdict_changed"}})
		if _, err := env.DB.Pool().Exec(ctx, `UPDATE notification_channels SET created_at = now() - interval '8 days'
			WHERE id = ANY($1::uuid[])`, []string{wsCh, teamCh}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.DB.Pool().Exec(ctx, `UPDATE issues SET assignee_team_id = $1 WHERE id = $2`, team, issue); err != nil {
			t.Fatal(err)
		}
		// Tokens: one ends in the week after the slot (counted), one later, one revoked.
		var tz string
		if err := env.DB.Pool().QueryRow(ctx, `SELECT timezone FROM workspaces WHERE id = $1`, ws).Scan(&tz); err != nil {
			t.Fatal(err)
		}
		loc, err := time.LoadLocation(tz)
		if err != nil {
			t.Fatal(err)
		}
		slot := oncall.WeeklySlot(time.Now(), loc)
		for _, c := range []struct {
			days    int
			revoked bool
		}{{2, false}, {10, false}, {1, true}} {
			end := time.Now().Add(time.Hour)
			tk, _, err := env.App.Identity.CreateAPIToken(ctx, ws, "expiring", "test", &end)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := env.DB.Pool().Exec(ctx, `UPDATE api_tokens SET expires_at = $2,
				revoked_at = CASE WHEN $3 THEN now() END WHERE id = $1`, tk.ID, slot.AddDate(0, 0, c.days), c.revoked); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			if _, err := env.App.OnCall.SendDigests(ctx); err != nil {
				t.Fatal(err)
			}
		}
		settle(t, env, ws)
		d, td := digestRcv.ofEvent("service.digest"), teamRcv.ofEvent("service.digest")
		if len(d) != 1 || len(td) != 1 {
			t.Fatalf("digests %d and %d, want one each", len(d), len(td))
		}
		b := decodeBody(t, d[0].Body)
		requireKeys(t, b)
		if b["code"] != "digest_weekly" || fmt.Sprint(keysOf(b["params"].(map[string]any))) !=
			"[critical expiring_tokens healthy new_signals steward_proposals warning]" ||
			b["params"].(map[string]any)["expiring_tokens"] != float64(1) {
			t.Fatalf("digest %v", b)
		}
		tb := decodeBody(t, td[0].Body)
		tp := tb["params"].(map[string]any)
		if tb["code"] != "digest_team_weekly" || tp["team_id"] != team || tp["open"] != float64(1) || tp["critical"] != float64(1) {
			t.Fatalf("team digest %v", tb)
		}
	})
}

// The notification endpoints answer what their OpenAPI document says.
func TestNotificationResponsesMatchOpenAPI(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "oas-hooks")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	id, _ := MustChannel(t, env, admin, map[string]any{"name": "oas", "config": map[string]any{"webhook_url": rcv.URL}})
	env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+id+"/test", admin, nil)
	env.Do(t, http.MethodPost, "/api/v1/notification-mutes", admin, map[string]any{"scope": "workspace",
		"ends_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	env.Do(t, http.MethodPost, "/api/v1/tickets/integrations", admin, map[string]any{"name": "j", "provider": "jira"})
	env.Do(t, http.MethodPut, "/api/v1/oncall/rota", admin, map[string]any{"levels": []map[string]any{{"user_id": userOf(t, env, admin), "minutes": 5}}})
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "t")
	MustEvent(t, env, ws, "dataset.verdict_changed", "dataset", ds, "k1", map[string]any{"dataset_id": ds, "from": "pass", "to": "warn"})
	if _, err := env.App.Notify.Dispatch(context.Background()); err != nil {
		t.Fatal(err)
	}

	doc := env.Document(t)
	for _, path := range []string{"/api/v1/notification-channels", "/api/v1/notification-channels/" + id,
		"/api/v1/notification-channels/" + id + "/deliveries", "/api/v1/notification-channels/" + id + "/preview?days=7",
		"/api/v1/notifications", "/api/v1/notification-mutes", "/api/v1/oncall/rota", "/api/v1/tickets/integrations"} {
		if r := doc.Do(t, http.MethodGet, path, admin, nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
	}
}

// escalateUntil runs the escalator until done says the escalation stands where the test
// wants it; a run that finds another app's escalator holding the lock does nothing.
func escalateUntil(tb testing.TB, env *apptest.Env, what string, done func() bool) {
	tb.Helper()
	eventually(tb, what, func() bool {
		if _, err := env.App.OnCall.Escalate(context.Background()); err != nil {
			tb.Fatal(err)
		}
		return done()
	})
}

// escalation is "level exhausted" of an issue's escalation ("" before the first).
func escalation(tb testing.TB, env *apptest.Env, issueID string) string {
	tb.Helper()
	var got string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT coalesce((SELECT level::text || ' ' || exhausted::text
		FROM issue_escalations WHERE issue_id = $1), '')`, issueID).Scan(&got); err != nil {
		tb.Fatal(err)
	}
	return got
}
