package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/scan"
)

// The policy itself: pii_retention_max_age needs max_age_days (no default), only an
// admin sets it, another workspace's domain is 404.
func TestDataPolicyValidation(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "policy")
	admin, member := env.MustSession(t, ws, vigia.RoleAdmin), env.MustSession(t, ws, vigia.RoleMember)

	r := env.Do(t, http.MethodGet, "/api/v1/workspace/data-policy", member, nil)
	mustStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `"rules":[]`) || !strings.Contains(string(r.Body), `"updated_at":null`) {
		t.Fatalf("empty policy: %s", r.Body)
	}
	r = env.Do(t, http.MethodPut, "/api/v1/workspace/data-policy", admin, map[string]any{"rules": []any{map[string]any{"rule": "pii_retention_max_age"}}})
	mustStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), `"type":"missing"`) || !strings.Contains(string(r.Body), `"max_age_days"`) {
		t.Fatalf("no max_age_days: %s", r.Body)
	}
	r = env.Do(t, http.MethodPut, "/api/v1/workspace/data-policy", admin, map[string]any{"rules": []any{map[string]any{"rule": "retain_forever_xyz", "max_age_days": 3}}})
	mustStatus(t, r, http.StatusUnprocessableEntity)
	if strings.Contains(string(r.Body), "retain_forever_xyz") {
		t.Fatalf("422 echoes the input: %s", r.Body)
	}
	body := map[string]any{"rules": []any{map[string]any{"rule": "pii_retention_max_age", "max_age_days": 30}}}
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/data-policy", member, body), http.StatusForbidden)
	r = env.Do(t, http.MethodPut, "/api/v1/workspace/data-policy", admin, body)
	mustStatus(t, r, http.StatusOK)
	r = env.Do(t, http.MethodGet, "/api/v1/workspace/data-policy", member, nil)
	if !strings.Contains(string(r.Body), `"max_age_days":30`) || !strings.Contains(string(r.Body), `"severity":"warning"`) {
		t.Fatalf("saved policy: %s", r.Body)
	}
	mustStatus(t, env.Do(t, http.MethodGet, "/api/v1/domains/"+vigia.NewID()+"/data-policy", member, nil), http.StatusNotFound)
}

// Must-show 3: pii_retention_max_age of 30 days on a Postgres table holding personal
// data with rows older than that opens one violation (and its issue) and sends one
// policy.violation_opened to the channel that asked for it; deleting the old rows and
// scanning again sends policy.violation_resolved.
func TestPIIRetentionViolationOpensAndResolves(t *testing.T) {
	cfg := webhookConfig(t)
	env := apptest.MustStart(t, cfg)
	ws := env.MustWorkspace(t, "retention")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	ctx := app.AsAdmin(context.Background(), ws, "test")

	src := newSource(t, "postgres", "")
	src.exec(t, `CREATE TABLE pessoas (id integer PRIMARY KEY, email text NOT NULL, criado_em timestamptz NOT NULL)`)
	now := time.Now().UTC()
	for i := 1; i <= 120; i++ {
		at := now.Add(-time.Duration(i) * time.Hour) // recent
		if i > 100 {
			at = now.AddDate(0, 0, -40-i%5) // 20 rows older than 30 days
		}
		src.exec(t, `INSERT INTO pessoas VALUES ($1, $2, $3)`, i, fmt.Sprintf("pessoa%d@exemplo.pt", i), at)
	}
	src.exec(t, `CREATE TABLE medidas (id integer PRIMARY KEY, valor integer NOT NULL, criado_em timestamptz NOT NULL)`)
	src.exec(t, `INSERT INTO medidas SELECT g, g, now() - interval '400 days' FROM generate_series(1, 50) g`)
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "crm", "kind": "postgres", "dsn": src.dsn})
	mustStatus(t, r, http.StatusCreated)
	var conn map[string]any
	r.JSON(t, &conn)
	connID := conn["id"].(string)

	asked := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	alertsOnly := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	MustChannel(t, env, admin, map[string]any{"name": "policies", "config": map[string]any{"webhook_url": asked.URL, "locale": "en"},
		"event_kinds": []string{"policy.violation_opened", "policy.violation_resolved"}})
	MustChannel(t, env, admin, map[string]any{"name": "alerts", "config": map[string]any{"webhook_url": alertsOnly.URL}})
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/data-policy", admin,
		map[string]any{"rules": []any{map[string]any{"rule": "pii_retention_max_age", "max_age_days": 30, "severity": "critical"}}}), http.StatusOK)
	MustRunWorkers(t, env)

	scanNow := func() string {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/scans", admin, map[string]any{"connection_id": connID})
		mustStatus(t, r, http.StatusAccepted)
		var out map[string]any
		r.JSON(t, &out)
		sc, err := env.App.WaitScan(ctx, out["id"].(string), nil)
		if err != nil || sc.Status != scan.StatusSucceeded {
			t.Fatalf("scan: %v %+v", err, sc)
		}
		return sc.ID
	}
	var pessoas, medidas string
	active := func() (n int, issueStatus string) {
		t.Helper()
		err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*), coalesce(max(i.status), '')
			FROM policy_violations v LEFT JOIN issues i ON i.id = v.issue_id
			WHERE v.workspace_id = $1 AND v.resolved_at IS NULL`, ws).Scan(&n, &issueStatus)
		if err != nil {
			t.Fatal(err)
		}
		return n, issueStatus
	}

	first := scanNow()
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT
		(SELECT id::text FROM datasets WHERE workspace_id = $1 AND table_name = 'pessoas'),
		(SELECT id::text FROM datasets WHERE workspace_id = $1 AND table_name = 'medidas')`, ws).Scan(&pessoas, &medidas); err != nil {
		t.Fatal(err)
	}
	// One violation: pessoas holds e-mails older than 30 days; medidas has old rows and no
	// personal data.
	if n, st := active(); n != 1 || st != "open" {
		t.Fatalf("after the first scan: %d active violations, issue %q; want 1, open", n, st)
	}
	var violated string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT dataset_id::text FROM policy_violations WHERE workspace_id = $1`, ws).Scan(&violated); err != nil || violated != pessoas {
		t.Fatalf("violation on %s (%v), want pessoas %s", violated, err, pessoas)
	}
	settle(t, env, ws)
	opened := asked.ofEvent("service.policy.violation_opened")
	if len(opened) != 1 || len(alertsOnly.ofEvent("service.policy.violation_opened")) != 0 {
		t.Fatalf("opened deliveries: asked %d, alerts-only %d; want 1, 0", len(opened), len(alertsOnly.ofEvent("service.policy.violation_opened")))
	}
	b := decodeBody(t, opened[0].Body)
	pv, _ := b["policy_violation"].(map[string]any)
	if b["code"] != "policy_violation_opened" || pv == nil || pv["dataset_id"] != pessoas || pv["rule"] != "pii_retention_max_age" ||
		pv["severity"] != "critical" || pv["source"] != "workspace" || pv["scan_id"] != first || pv["connection_id"] != connID ||
		pv["dataset_name"] == nil || pv["verdict"] == nil || !strings.HasSuffix(fmt.Sprint(pv["trust_url"]), "/datasets/"+pessoas+"/trust-facts") {
		t.Fatalf("opened body: %s", opened[0].Body)
	}
	if strings.Contains(string(opened[0].Body), "exemplo.pt") {
		t.Fatalf("a source value in the delivery: %s", opened[0].Body)
	}

	// The active violation's critical issue makes the dataset untrusted.
	var issueID string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT issue_id::text FROM policy_violations WHERE workspace_id = $1`, ws).Scan(&issueID); err != nil {
		t.Fatal(err)
	}
	decision := func() (string, string) {
		t.Helper()
		r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+pessoas+"/trust-decision", admin, nil)
		mustStatus(t, r, http.StatusOK)
		var d map[string]any
		r.JSON(t, &d)
		return fmt.Sprint(d["decision"]), string(r.Body)
	}
	if d, body := decision(); d != "untrusted" || !strings.Contains(body, issueID) {
		t.Fatalf("trust decision with an active critical violation: %s", body)
	}

	// A second scan with the same rows opens nothing new and sends nothing; its verdict
	// counts the standing violation.
	scanNow()
	settle(t, env, ws)
	if n, _ := active(); n != 1 || len(asked.ofEvent("service.policy.violation_opened")) != 1 {
		t.Fatalf("a repeated scan: %d active, %d opened deliveries", n, len(asked.ofEvent("service.policy.violation_opened")))
	}
	var verdict string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT verdict FROM verdicts WHERE dataset_id = $1 ORDER BY seq DESC LIMIT 1`, pessoas).Scan(&verdict); err != nil || verdict != "fail" {
		t.Fatalf("verdict with a standing critical violation: %q %v", verdict, err)
	}

	// Deleting the old rows and scanning again resolves it.
	src.exec(t, `DELETE FROM pessoas WHERE criado_em < now() - interval '30 days'`)
	last := scanNow()
	if n, _ := active(); n != 0 {
		t.Fatalf("after deleting the old rows: %d active violations", n)
	}
	var issueStatus string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT i.status FROM policy_violations v JOIN issues i ON i.id = v.issue_id
		WHERE v.workspace_id = $1`, ws).Scan(&issueStatus); err != nil || issueStatus != "resolved" {
		t.Fatalf("issue %q %v, want resolved", issueStatus, err)
	}
	settle(t, env, ws)
	resolved := asked.ofEvent("service.policy.violation_resolved")
	if len(resolved) != 1 || len(alertsOnly.ofEvent("service.policy.violation_resolved")) != 0 {
		t.Fatalf("resolved deliveries: %d, alerts-only %d", len(resolved), len(alertsOnly.ofEvent("service.policy.violation_resolved")))
	}
	if d, body := decision(); d == "untrusted" && strings.Contains(body, issueID) {
		t.Fatalf("trust decision still counts the resolved violation: %s", body)
	}
	rb := decodeBody(t, resolved[0].Body)
	rpv, _ := rb["policy_violation"].(map[string]any)
	if rb["code"] != "policy_violation_resolved" || rpv == nil || rpv["dataset_id"] != pessoas || rpv["scan_id"] != last {
		t.Fatalf("resolved body: %s", resolved[0].Body)
	}
	if medidas == "" {
		t.Fatal("medidas was not discovered")
	}
}
