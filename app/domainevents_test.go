package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
)

// A scan that changes a member dataset's verdict, and so its domain's aggregated verdict,
// sends one service.domain.verdict_changed (the domain variant of verdict_change) to the
// channels that ask for it; a scan that changes nothing sends nothing new. A critical
// issue of a member dataset passing its resolution target notifies the channels of the
// domain's consumers once (service.alerts, code consumer_sla_breached), whatever their
// event kinds and scope.
func TestDomainVerdictAndConsumerSLANotices(t *testing.T) {
	f := newSQLiteScans(t, "domainev", "vendas.db", "encomendas", "clientes")
	env, ws, admin, tok := f.env, f.ws, f.admin, f.tok
	scanNow := func() string { return f.scan(t) }
	datasetID := func(name string) string { return f.datasetID(t, name) }

	domainRcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	consumerRcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	MustChannel(t, env, admin, map[string]any{"name": "domínios", "config": map[string]any{"webhook_url": domainRcv.URL},
		"event_kinds": []string{"domain.verdict_changed"}})
	// The consumer's channel asks for no alerts, and only for rule issues: the consumer
	// notice reaches it regardless of event kinds and scope.
	consumerChannel, _ := MustChannel(t, env, admin, map[string]any{"name": "consumidor", "config": map[string]any{"webhook_url": consumerRcv.URL},
		"event_kinds": []string{"policy.violation_opened"}, "scope": map[string]any{"issue_types": []string{"rule"}}})
	MustRunWorkers(t, env)

	scanNow() // the baseline
	encomendas, clientes := datasetID("encomendas"), datasetID("clientes")
	r := env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Vendas", "dataset_ids": []string{encomendas, clientes}})
	if r.Status != http.StatusCreated {
		t.Fatalf("domain: %d %s", r.Status, r.Body)
	}
	var dom map[string]any
	r.JSON(t, &dom)
	domain := dom["id"].(string)
	if r := env.Do(t, http.MethodPost, "/api/v1/domains/"+domain+"/consumers", admin,
		map[string]any{"name": "Painel de vendas", "kind": "external", "channel_id": consumerChannel}); r.Status != http.StatusCreated {
		t.Fatalf("consumer: %d %s", r.Status, r.Body)
	}
	var before map[string]any
	env.Do(t, http.MethodGet, "/api/v1/domains/"+domain+"/verdict", tok, nil).JSON(t, &before)

	f.exec(t, `ALTER TABLE encomendas DROP COLUMN total`)
	flip := scanNow()
	settle(t, env, ws)

	var after map[string]any
	env.Do(t, http.MethodGet, "/api/v1/domains/"+domain+"/verdict", tok, nil).JSON(t, &after)
	if before["verdict"] == after["verdict"] {
		t.Fatalf("the domain verdict did not change: %v → %v", before["verdict"], after["verdict"])
	}
	got := domainRcv.ofEvent("service.domain.verdict_changed")
	if len(got) != 1 || len(domainRcv.requests()) != 1 {
		t.Fatalf("domain receiver got %d domain events, %d requests; want 1", len(got), len(domainRcv.requests()))
	}
	b := decodeBody(t, got[0].Body)
	requireKeys(t, b, "idempotency_key", "verdict_change")
	vc := b["verdict_change"].(map[string]any)
	changed, _ := vc["datasets_changed"].([]any)
	if b["code"] != "domain_verdict_changed" || vc["domain_id"] != domain || vc["domain_name"] != "Vendas" || vc["scan_id"] != flip ||
		vc["from"] != before["verdict"] || vc["to"] != after["verdict"] || len(changed) != 1 ||
		changed[0].(map[string]any)["dataset_id"] != encomendas || got[0].Header.Get("Idempotency-Key") != b["idempotency_key"] {
		t.Fatalf("body %v", b)
	}
	if n := len(consumerRcv.requests()); n != 0 {
		t.Fatalf("the consumer channel got %d deliveries before any SLA breach", n)
	}

	// The same state scanned again changes no verdict: nothing new.
	scanNow()
	settle(t, env, ws)
	if n := len(domainRcv.requests()); n != 1 {
		t.Fatalf("a scan that changed nothing sent %d more", n-1)
	}

	// A critical issue of a member dataset open for 30 hours passes the 24-hour target.
	issueID := vigia.NewID()
	created := time.Now().UTC().Add(-30 * time.Hour)
	// One transaction: the workers' SLA timers must not see the issue without its history.
	tx, err := env.DB.Pool().Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(context.Background(), `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at)
		VALUES ($1, $2, $3, 'schema_drift', 'critical', 'open', 'Coluna removida', $4, $4)`, issueID, ws, clientes, created); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `INSERT INTO issue_history (id, issue_id, workspace_id, to_status, origin, event, created_at)
		VALUES ($1, $2, $3, 'open', 'scan:s', 'opened', $4)`, vigia.NewID(), issueID, ws, created); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second run finds nothing new to notify
		if _, err := env.App.Issues.MarkSLABreaches(context.Background()); err != nil {
			t.Fatal(err)
		}
		settle(t, env, ws)
	}
	notices := consumerRcv.ofEvent("service.alerts")
	if len(notices) != 1 || len(consumerRcv.requests()) != 1 {
		t.Fatalf("consumer channel: %d alerts, %d requests; want 1", len(notices), len(consumerRcv.requests()))
	}
	nb := decodeBody(t, notices[0].Body)
	params := nb["params"].(map[string]any)
	if nb["code"] != "consumer_sla_breached" || params["domain_id"] != domain || params["issues"] != 1.0 {
		t.Fatalf("notice %v", nb)
	}
	if n := len(domainRcv.requests()); n != 1 {
		t.Fatalf("the domain channel, not a consumer, got the notice too (%d requests)", n)
	}
}
