package app_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// settle dispatches now and waits until the workspace has no pending delivery, so that
// what the receivers got is final.
func settle(tb testing.TB, env *apptest.Env, ws string) {
	tb.Helper()
	if _, err := env.App.Notify.Dispatch(context.Background()); err != nil {
		tb.Fatal(err)
	}
	eventually(tb, "deliveries to finish", func() bool {
		var n int
		err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries
			WHERE workspace_id = $1 AND status = 'pending'`, ws).Scan(&n)
		return err == nil && n == 0
	})
}

func countDeliveries(tb testing.TB, env *apptest.Env, ws string) int {
	tb.Helper()
	var n int
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE workspace_id = $1`, ws).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// Must show 6: a scan that flips a dataset's verdict sends one
// service.dataset.verdict_changed per subscribed channel with the same Idempotency-Key;
// rerunning sends nothing new; a muted dataset's alerts are held and listed.
func TestScanVerdictChangeReachesSubscribedChannels(t *testing.T) {
	f := newSQLiteScans(t, "verdict", "loja.db", "pedidos", "faturas")
	env, ws, admin, tok := f.env, f.ws, f.admin, f.tok
	exec := func(q string) { f.exec(t, q) }
	scanNow := func() string { return f.scan(t) }
	datasetID := func(name string) string { return f.datasetID(t, name) }
	conn := map[string]any{"id": f.connectionID}

	both := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	verdictOnly := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	alertsOnly := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	MustChannel(t, env, admin, map[string]any{"name": "both", "config": map[string]any{"webhook_url": both.URL, "locale": "es"},
		"event_kinds": []string{"alerts", "dataset.verdict_changed"}})
	MustChannel(t, env, admin, map[string]any{"name": "verdict", "config": map[string]any{"webhook_url": verdictOnly.URL},
		"event_kinds": []string{"dataset.verdict_changed"}})
	MustChannel(t, env, admin, map[string]any{"name": "alerts", "config": map[string]any{"webhook_url": alertsOnly.URL}})
	MustRunWorkers(t, env)

	scanNow() // the baseline: the first snapshot emits nothing
	pedidos, faturas := datasetID("pedidos"), datasetID("faturas")
	mr := env.Do(t, http.MethodPost, "/api/v1/notification-mutes", admin, map[string]any{"scope": "dataset", "dataset_id": faturas,
		"ends_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "reason": "migração"})
	if mr.Status != http.StatusCreated {
		t.Fatalf("mute: %d %s", mr.Status, mr.Body)
	}
	exec(`ALTER TABLE pedidos DROP COLUMN total`)
	exec(`ALTER TABLE faturas DROP COLUMN total`)
	flip := scanNow()
	settle(t, env, ws)

	a, b := both.ofEvent("service.dataset.verdict_changed"), verdictOnly.ofEvent("service.dataset.verdict_changed")
	if len(a) != 1 || len(b) != 1 || len(alertsOnly.ofEvent("service.dataset.verdict_changed")) != 0 {
		t.Fatalf("verdict deliveries: both %d, verdict-only %d, alerts-only %d; want 1, 1, 0", len(a), len(b),
			len(alertsOnly.ofEvent("service.dataset.verdict_changed")))
	}
	var key string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT idempotency_key FROM events WHERE workspace_id = $1
		AND subject_id = $2 AND type = 'dataset.verdict_changed'`, ws, pedidos).Scan(&key); err != nil {
		t.Fatal(err)
	}
	bodyA, bodyB := decodeBody(t, a[0].Body), decodeBody(t, b[0].Body)
	for _, got := range []string{a[0].Header.Get("Idempotency-Key"), b[0].Header.Get("Idempotency-Key"),
		bodyA["idempotency_key"].(string), bodyB["idempotency_key"].(string)} {
		if got != key || len(key) != 64 {
			t.Fatalf("idempotency key %q, want %q on every channel", got, key)
		}
	}
	if a[0].Header.Get("X-Service-Delivery") == b[0].Header.Get("X-Service-Delivery") {
		t.Fatal("two channels share a delivery id")
	}
	requireKeys(t, bodyA, "idempotency_key", "verdict_change")
	vc := bodyA["verdict_change"].(map[string]any)
	wantVC := []string{"connection_id", "dataset_id", "dataset_name", "from", "scan_id", "score", "to", "trust_url", "verdict"}
	if got := keysOf(vc); !slices.Equal(got, wantVC) || vc["dataset_id"] != pedidos || vc["to"] != "fail" || vc["verdict"] != "fail" ||
		vc["from"] == "fail" || vc["scan_id"] != flip || vc["connection_id"] != conn["id"] ||
		vc["trust_url"] != "https://vigia.example.com/api/v1/datasets/"+pedidos+"/trust-facts" {
		t.Fatalf("verdict_change %v", vc)
	}
	params := bodyA["params"].(map[string]any)
	if bodyA["code"] != "dataset_verdict_changed" || params["dataset_id"] != pedidos || params["to"] != "fail" || params["from"] != vc["from"] {
		t.Fatalf("code/params %v %v", bodyA["code"], params)
	}
	if !strings.Contains(bodyA["title"].(string), "veredicto") || strings.Contains(bodyB["title"].(string), "veredicto") {
		t.Fatalf("titles not in the channel's language: %q / %q", bodyA["title"], bodyB["title"])
	}

	alertsA, alertsC := both.ofEvent("service.alerts"), alertsOnly.ofEvent("service.alerts")
	if len(alertsA) != 1 || len(alertsC) != 1 {
		t.Fatalf("alerts deliveries %d, %d; want 1 each", len(alertsA), len(alertsC))
	}
	alertBody := decodeBody(t, alertsC[0].Body)
	requireKeys(t, alertBody)
	items := alertBody["alerts"].([]any)
	// The scan grouped the drift into an incident (lineage): the alert travels with it.
	incidents := alertBody["incidents"].([]any)
	if len(items) != 1 || len(incidents) != 1 || alertBody["code"] != "alerts_new" ||
		fmt.Sprint(alertBody["params"]) != "map[alerts:1 count:1 incidents:1]" {
		t.Fatalf("alerts body %s", alertsC[0].Body)
	}
	inc := incidents[0].(map[string]any)
	if fmt.Sprint(inc["alert_ids"]) != fmt.Sprint([]any{items[0].(map[string]any)["id"]}) ||
		fmt.Sprint(inc["issue_ids"]) != fmt.Sprint([]any{items[0].(map[string]any)["issue_id"]}) || inc["impact_scope"] == nil {
		t.Fatalf("incident %v", inc)
	}
	item := items[0].(map[string]any)
	var driftIssue string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT id::text FROM issues WHERE dataset_id = $1 AND type = 'schema_drift'`,
		pedidos).Scan(&driftIssue); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(item); !slices.Equal(got, []string{"id", "issue_id", "severity", "title"}) || item["issue_id"] != driftIssue ||
		item["severity"] != "critical" || alertsC[0].Header.Get("Idempotency-Key") != "" {
		t.Fatalf("alert item %v", item)
	}

	t.Run("MutedDatasetIsHeldAndListed", func(t *testing.T) {
		for _, rcv := range []*hookReceiver{both, verdictOnly, alertsOnly} {
			for _, req := range rcv.requests() {
				if strings.Contains(string(req.Body), faturas) {
					t.Fatalf("a delivery names the muted dataset: %s", req.Body)
				}
			}
		}
		var list []map[string]any
		lr := env.Do(t, http.MethodGet, "/api/v1/notifications", tok, nil)
		lr.JSON(t, &list)
		held := map[string]bool{}
		for _, n := range list {
			ids := fmt.Sprint(n["dataset_ids"])
			switch {
			case strings.Contains(ids, faturas):
				if n["held"] != true || len(n["mute_ids"].([]any)) != 1 || n["deliveries"] != float64(0) {
					t.Fatalf("muted item %v", n)
				}
				held[n["event"].(string)] = true
			case strings.Contains(ids, pedidos) && n["event"] == "service.dataset.verdict_changed":
				if n["held"] != false || n["deliveries"] != float64(2) || n["title"] == "" {
					t.Fatalf("pedidos verdict item %v", n)
				}
			}
		}
		if !held["service.alerts"] || !held["service.dataset.verdict_changed"] {
			t.Fatalf("held items listed: %v\n%s", held, lr.Body)
		}
		var onlyHeld []map[string]any
		env.Do(t, http.MethodGet, "/api/v1/notifications?held=true", tok, nil).JSON(t, &onlyHeld)
		if len(onlyHeld) != 2 {
			t.Fatalf("held filter: %d items", len(onlyHeld))
		}
	})

	t.Run("RerunningSendsNothingNew", func(t *testing.T) {
		before, sent := countDeliveries(t, env, ws), len(both.requests())+len(verdictOnly.requests())+len(alertsOnly.requests())
		scanNow()
		settle(t, env, ws)
		if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE events SET dispatched_at = NULL WHERE workspace_id = $1`, ws); err != nil {
			t.Fatal(err)
		}
		if _, err := env.DB.Pool().Exec(context.Background(), `DELETE FROM webhook_scan_alerts WHERE scan_id = $1`, flip); err != nil {
			t.Fatal(err)
		}
		settle(t, env, ws)
		after := len(both.requests()) + len(verdictOnly.requests()) + len(alertsOnly.requests())
		if got := countDeliveries(t, env, ws); got != before || after != sent {
			t.Fatalf("deliveries %d → %d, sends %d → %d: a rerun sent something", before, got, sent, after)
		}
	})
}

// Every outbox event type becomes its exact part 6 body and code.
func TestOutboxEventBodies(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "bodies")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	bg := context.Background()
	conn := env.MustConnection(t, ws, "pg")
	ds := env.MustDataset(t, ws, conn, "public", "clientes")
	domain := vigia.NewID()
	if _, err := env.DB.Pool().Exec(bg, `INSERT INTO domains (id, workspace_id, name) VALUES ($1, $2, 'Vendas')`, domain, ws); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.Pool().Exec(bg, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, ds); err != nil {
		t.Fatal(err)
	}
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	chID, _ := MustChannel(t, env, admin, map[string]any{"name": "all", "config": map[string]any{"webhook_url": rcv.URL},
		"event_kinds": []string{"alerts", "dataset.verdict_changed", "policy.violation_opened", "policy.violation_resolved", "domain.verdict_changed"}})
	MustRunWorkers(t, env)
	scanID := vigia.NewID()
	one := func(event string) map[string]any {
		t.Helper()
		got := rcv.waitFor(t, event, 1)
		if len(got) != 1 {
			t.Fatalf("%s: %d deliveries", event, len(got))
		}
		b := decodeBody(t, got[0].Body)
		if got[0].Header.Get("X-Service-Event") != b["event"] {
			t.Fatalf("X-Service-Event %q, body %v", got[0].Header.Get("X-Service-Event"), b["event"])
		}
		if delivery.IsStateEvent(event) != (got[0].Header.Get("Idempotency-Key") != "") ||
			b["idempotency_key"] != nil && b["idempotency_key"] != got[0].Header.Get("Idempotency-Key") {
			t.Fatalf("%s Idempotency-Key %q, body %v", event, got[0].Header.Get("Idempotency-Key"), b["idempotency_key"])
		}
		return b
	}

	t.Run("DomainVerdictChanged", func(t *testing.T) {
		MustEvent(t, env, ws, "domain.verdict_changed", "domain", domain, event.IdempotencyKey(domain, scanID, "domain.verdict_changed", ""),
			map[string]any{"domain_id": domain, "from": "pass", "to": "warn", "scan_id": scanID,
				"datasets_changed": []map[string]any{{"dataset_id": ds, "dataset_name": "public.clientes"}}})
		b := one("service.domain.verdict_changed")
		requireKeys(t, b, "idempotency_key", "verdict_change")
		vc := b["verdict_change"].(map[string]any)
		if fmt.Sprint(keysOf(vc)) != "[datasets_changed domain_id domain_name from scan_id to trust_url]" || vc["domain_name"] != "Vendas" ||
			fmt.Sprint(vc["datasets_changed"]) != fmt.Sprintf("[map[dataset_id:%s dataset_name:public.clientes]]", ds) ||
			b["code"] != "domain_verdict_changed" || fmt.Sprint(b["params"]) != fmt.Sprintf("map[domain_id:%s from:pass to:warn]", domain) {
			t.Fatalf("body %v", b)
		}
	})
	t.Run("PolicyViolationOpenedAndResolved", func(t *testing.T) {
		for _, typ := range []string{"policy.violation_opened", "policy.violation_resolved"} {
			MustEvent(t, env, ws, typ, "dataset", ds, event.IdempotencyKey(ds, scanID, typ, "pii_retention_max_age"),
				map[string]any{"dataset_id": ds, "scan_id": scanID, "rule": "pii_retention_max_age", "label": "Retenção de dados pessoais",
					"severity": "critical", "source": "domain:Vendas", "source_domain": "Vendas", "verdict": "fail", "score": 55.0})
			b := one("service." + typ)
			requireKeys(t, b, "idempotency_key", "policy_violation")
			pv := b["policy_violation"].(map[string]any)
			if fmt.Sprint(keysOf(pv)) != "[connection_id dataset_id dataset_name label rule scan_id score severity source source_domain trust_url verdict]" ||
				pv["connection_id"] != conn || pv["dataset_name"] != "public.clientes" || pv["source"] != "domain:Vendas" ||
				b["code"] != strings.ReplaceAll(typ, ".", "_") ||
				fmt.Sprint(b["params"]) != fmt.Sprintf("map[dataset_id:%s rule:pii_retention_max_age severity:critical verdict:fail]", ds) {
				t.Fatalf("%s body %v", typ, b)
			}
		}
	})
	t.Run("IssueSLABreached", func(t *testing.T) {
		issue := MustIssue(t, env, ws, ds, "anomaly", "critical", time.Now().Add(-5*time.Hour), nil)
		breached := time.Now().UTC().Truncate(time.Second)
		MustEvent(t, env, ws, "issue.sla_breached", "issue", issue, "sla:"+issue,
			map[string]any{"issue_id": issue, "severity": "critical", "target_hours": 4, "breached_at": breached})
		b := one("service.issue.sla_breached")
		requireKeys(t, b, "sla_breach")
		sb := b["sla_breach"].(map[string]any)
		if sb["issue_id"] != issue || sb["severity"] != "critical" || sb["target_hours"] != float64(4) ||
			sb["breached_at"] != breached.Format(time.RFC3339) || b["code"] != "issue_sla_breached" ||
			fmt.Sprint(b["params"]) != fmt.Sprintf("map[issue_id:%s target_hours:4]", issue) {
			t.Fatalf("body %v", b)
		}
	})
	t.Run("ConsumerUntrustedRead", func(t *testing.T) {
		consumer := vigia.NewID()
		payload := map[string]any{"consumer_id": consumer, "consumer_name": "agente-faturas", "consumer_kind": "agent",
			"purpose": "rag", "decision": "untrusted", "run_ref": "run-7", "datasets": []map[string]any{{"dataset_id": ds, "dataset_name": "public.clientes"}}}
		MustEvent(t, env, ws, "consumer.untrusted_read", "consumer", consumer, "read:1", payload)
		b := one("service.consumer.untrusted_read")
		requireKeys(t, b, "consumer_read")
		cr := b["consumer_read"].(map[string]any)
		if fmt.Sprint(keysOf(cr)) != "[consumer_id consumer_kind consumer_name datasets decision purpose run_ref]" || cr["run_ref"] != "run-7" ||
			b["code"] != "consumer_untrusted_read" ||
			fmt.Sprint(b["params"]) != fmt.Sprintf("map[consumer_id:%s consumer_kind:agent datasets:1]", consumer) {
			t.Fatalf("body %v", b)
		}
		MustEvent(t, env, ws, "consumer.untrusted_read", "consumer", consumer, "read:1-replay", payload)
		settle(t, env, ws)
		if n := len(rcv.ofEvent("service.consumer.untrusted_read")); n != 1 {
			t.Fatalf("a replay of the same run_ref sent %d notices", n)
		}
	})
	t.Run("ConsumerSLANotice", func(t *testing.T) {
		MustEvent(t, env, ws, "domain.consumer_sla_breached", "domain", domain, "sla:"+domain,
			map[string]any{"domain_id": domain, "issues": 2, "channel_ids": []string{chID}})
		got := rcv.waitFor(t, "service.alerts", 1)
		b := decodeBody(t, got[len(got)-1].Body)
		requireKeys(t, b)
		if b["code"] != "consumer_sla_breached" || fmt.Sprint(b["params"]) != fmt.Sprintf("map[domain_id:%s issues:2]", domain) {
			t.Fatalf("body %v", b)
		}
	})
	t.Run("MutesOfProblemTypesHoldPolicyNotVerdict", func(t *testing.T) {
		r := env.Do(t, http.MethodPost, "/api/v1/notification-mutes", admin, map[string]any{"scope": "issue_types",
			"issue_types": []string{"policy_violation"}, "ends_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		if r.Status != http.StatusCreated {
			t.Fatalf("mute: %d %s", r.Status, r.Body)
		}
		scan2 := vigia.NewID()
		MustEvent(t, env, ws, "policy.violation_opened", "dataset", ds, event.IdempotencyKey(ds, scan2, "policy.violation_opened", "r2"),
			map[string]any{"dataset_id": ds, "scan_id": scan2, "rule": "r2", "severity": "warning", "verdict": "warn"})
		MustEvent(t, env, ws, "dataset.verdict_changed", "dataset", ds, event.IdempotencyKey(ds, scan2, "dataset.verdict_changed", ""),
			map[string]any{"dataset_id": ds, "from": "pass", "to": "warn", "scan_id": scan2})
		MustEvent(t, env, ws, "domain.verdict_changed", "domain", domain, event.IdempotencyKey(domain, scan2, "domain.verdict_changed", ""),
			map[string]any{"domain_id": domain, "from": "warn", "to": "fail", "scan_id": scan2})
		settle(t, env, ws)
		if len(rcv.ofEvent("service.policy.violation_opened")) != 1 || len(rcv.ofEvent("service.dataset.verdict_changed")) != 1 ||
			len(rcv.ofEvent("service.domain.verdict_changed")) != 2 {
			t.Fatal("a problem-type mute must hold the policy event and nothing else")
		}
		r = env.Do(t, http.MethodPost, "/api/v1/notification-mutes", admin, map[string]any{"scope": "workspace",
			"ends_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		if r.Status != http.StatusCreated {
			t.Fatalf("workspace mute: %d", r.Status)
		}
		scan3 := vigia.NewID()
		MustEvent(t, env, ws, "domain.verdict_changed", "domain", domain, event.IdempotencyKey(domain, scan3, "domain.verdict_changed", ""),
			map[string]any{"domain_id": domain, "from": "fail", "to": "pass", "scan_id": scan3})
		settle(t, env, ws)
		if len(rcv.ofEvent("service.domain.verdict_changed")) != 2 {
			t.Fatal("a workspace mute must hold the domain verdict")
		}
	})
}

// The workspace's consumer notices stop at 20 an hour; the one that reaches the cap
// says so.
func TestConsumerNoticeCap(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "cap")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "t")
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	MustChannel(t, env, admin, map[string]any{"name": "c", "config": map[string]any{"webhook_url": rcv.URL}})
	MustRunWorkers(t, env)
	for i := range 22 {
		consumer := vigia.NewID()
		MustEvent(t, env, ws, "consumer.untrusted_read", "consumer", consumer, fmt.Sprint("read:", i), map[string]any{
			"consumer_id": consumer, "consumer_name": fmt.Sprint("agente-", i), "consumer_kind": "agent", "purpose": "rag",
			"decision": "untrusted", "datasets": []map[string]any{{"dataset_id": ds, "dataset_name": "public.t"}}})
	}
	settle(t, env, ws)
	got := rcv.ofEvent("service.consumer.untrusted_read")
	if len(got) != 20 {
		t.Fatalf("%d notices, want the cap of 20", len(got))
	}
	capped := 0
	for _, r := range got {
		if p := decodeBody(t, r.Body)["params"].(map[string]any); p["warnings_cap"] != nil {
			capped++
			if p["warnings_cap"] != float64(20) {
				t.Fatalf("warnings_cap %v", p["warnings_cap"])
			}
		}
	}
	if capped != 1 {
		t.Fatalf("%d notices carry warnings_cap, want exactly the one that reached the cap", capped)
	}
}
