package app_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// alertsNaming returns the service.alerts requests whose alerts name issueID.
func alertsNaming(tb testing.TB, rcv *hookReceiver, issueID string) []hookRequest {
	tb.Helper()
	var out []hookRequest
	for _, r := range rcv.ofEvent("service.alerts") {
		for _, a := range decodeBody(tb, r.Body)["alerts"].([]any) {
			if a.(map[string]any)["issue_id"] == issueID {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

func notificationHeld(tb testing.TB, env *apptest.Env, ws, issueID string) (held bool, mutes, deliveries int) {
	tb.Helper()
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT held, cardinality(mute_ids), deliveries FROM notifications
		WHERE workspace_id = $1 AND source_key = 'alert:' || $2`, ws, issueID).Scan(&held, &mutes, &deliveries); err != nil {
		tb.Fatalf("notification of issue %s: %v", issueID, err)
	}
	return held, mutes, deliveries
}

// Issue 19: an issue opened outside a scan (here a failing dbt not_null test) reaches
// the alerts channels that cover its dataset as one signed service.alerts delivery,
// once; a channel scoped elsewhere gets nothing; a failed BI refresh is alerted the same
// way; a muted dataset's alert is held.
func TestDBTIssueAlertsReachWebhookChannels(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	le := newLineageEnv(t, env, shopDDL)
	le.fillShop(t)
	le.scan(t)
	orders, customers := le.ids["orders"], le.ids["customers"]

	onOrders := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	onCustomers := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	_, secret := MustChannel(t, env, le.admin, map[string]any{"name": "orders", "config": map[string]any{"webhook_url": onOrders.URL},
		"scope": map[string]any{"dataset_ids": []string{orders}}})
	MustChannel(t, env, le.admin, map[string]any{"name": "customers", "config": map[string]any{"webhook_url": onCustomers.URL},
		"scope": map[string]any{"dataset_ids": []string{customers}}})
	MustRunWorkers(t, env)
	settle(t, env, le.ws) // whatever the baseline scan sent is final

	before := time.Now().Unix()
	dbtRun(t, le, "run_results_v5_fail.json")
	var open []dbtIssueOut
	le.get(t, "/api/v1/issues?type=rule&status=open&dataset_id="+orders, le.tok, &open)
	if len(open) != 1 {
		t.Fatalf("open dbt issues on orders: %+v", open)
	}
	issueID := open[0].ID
	settle(t, env, le.ws)

	got := alertsNaming(t, onOrders, issueID)
	if len(got) != 1 || len(alertsNaming(t, onCustomers, issueID)) != 0 {
		t.Fatalf("alerts naming the dbt issue: orders channel %d, customers channel %d; want 1, 0",
			len(got), len(alertsNaming(t, onCustomers, issueID)))
	}
	h := got[0].Header
	ts, err := strconv.ParseInt(h.Get("X-Service-Timestamp"), 10, 64)
	if err != nil || ts < before-1 {
		t.Fatalf("timestamp %q", h.Get("X-Service-Timestamp"))
	}
	if err := delivery.Verify(secret, h.Get("X-Service-Signature"), ts, got[0].Body, time.Now(), 0); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	b := decodeBody(t, got[0].Body)
	requireKeys(t, b)
	alerts := b["alerts"].([]any)
	a := alerts[0].(map[string]any)
	if b["code"] != "alerts_new" || len(alerts) != 1 || a["severity"] == "info" || a["title"] == "" || a["id"] == "" {
		t.Fatalf("alerts body %s", got[0].Body)
	}
	if strings.Contains(string(got[0].Body), urlMarker) {
		t.Fatal("the body names the receiver URL")
	}
	if held, _, n := notificationHeld(t, env, le.ws, issueID); held || n != 1 {
		t.Fatalf("notification: held %v deliveries %d; want false, 1", held, n)
	}

	// The same failing run again detects the same issue: no second alert.
	dbtRun(t, le, "run_results_v5_fail.json")
	settle(t, env, le.ws)
	if n := len(alertsNaming(t, onOrders, issueID)); n != 1 {
		t.Fatalf("repeated run: %d deliveries naming the issue, want 1", n)
	}

	// A failed BI refresh reading orders opens a bi_refresh issue: alerted the same way.
	start := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)
	if r := env.Do(t, http.MethodPost, "/api/v1/bi/refreshes", le.tok, map[string]any{"tool": "powerbi", "bi_dataset_id": "ds-7",
		"bi_dataset_name": "Vendas", "refresh_id": "rf-1", "status": "failed", "started_at": start, "ended_at": start.Add(time.Minute),
		"datasets": []any{map[string]any{"dataset_id": orders}}}); r.Status != http.StatusCreated {
		t.Fatalf("bi refresh: %d %s", r.Status, r.Body)
	}
	var biOpen []dbtIssueOut
	le.get(t, "/api/v1/issues?type=bi_refresh&status=open&dataset_id="+orders, le.tok, &biOpen)
	if len(biOpen) != 1 {
		t.Fatalf("open bi_refresh issues: %+v", biOpen)
	}
	settle(t, env, le.ws)
	if a, c := len(alertsNaming(t, onOrders, biOpen[0].ID)), len(alertsNaming(t, onCustomers, biOpen[0].ID)); a != 1 || c != 0 {
		t.Fatalf("alerts naming the bi_refresh issue: orders %d, customers %d; want 1, 0", a, c)
	}

	// Orders muted: the next failure's alert is held, listed, and sent nowhere.
	mr := env.Do(t, http.MethodPost, "/api/v1/notification-mutes", le.admin, map[string]any{"scope": "dataset", "dataset_id": orders,
		"ends_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "reason": "carga"})
	if mr.Status != http.StatusCreated {
		t.Fatalf("mute: %d %s", mr.Status, mr.Body)
	}
	dbtRun(t, le, "run_results_v6_pass.json")
	dbtRun(t, le, "run_results_v5_fail.json")
	le.get(t, "/api/v1/issues?type=rule&status=open&dataset_id="+orders, le.tok, &open)
	if len(open) != 1 || open[0].ID == issueID {
		t.Fatalf("a new failure must open a new issue: %+v", open)
	}
	muted := open[0].ID
	settle(t, env, le.ws)
	if held, mutes, n := notificationHeld(t, env, le.ws, muted); !held || mutes != 1 || n != 0 {
		t.Fatalf("muted notification: held %v mutes %d deliveries %d; want true, 1, 0", held, mutes, n)
	}
	if len(alertsNaming(t, onOrders, muted)) != 0 || len(alertsNaming(t, onCustomers, muted)) != 0 {
		t.Fatal("a muted dataset's alert was delivered")
	}
	var heldList []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/notifications?held=true", le.tok, nil).JSON(t, &heldList)
	listed := false
	for _, n := range heldList {
		if n["event"] == "service.alerts" && strings.Contains(strings.Join(anyStrings(n["dataset_ids"]), ","), orders) {
			listed = true
		}
	}
	if !listed {
		t.Fatalf("held alert not listed: %v", heldList)
	}
}

func anyStrings(v any) []string {
	var out []string
	xs, _ := v.([]any)
	for _, x := range xs {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// Issue 19: every issue opened outside a scan is alerted, like a scan's: a contract
// version accepted against columns the dataset lacks (contract), a reconciliation check
// run on demand that finds groups differing (reconciliation), and a writer failing three
// runs in a row (pipeline) each reach the alerts channel once, signed, naming the issue.
// Issues a scan opens (modeling, slo_breach and the after-scan checks) ride the
// finished scan's alerts.
func TestIssuesOpenedOutsideScansReachAlertChannels(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	le := newLineageEnv(t, env, shopDDL+`CREATE TABLE orders_copy (id int PRIMARY KEY, customer_id int, amount numeric(12,2), status text,
		created_at timestamptz);`)
	le.fillShop(t)
	le.src.exec(t, `INSERT INTO orders_copy SELECT * FROM orders`)
	le.src.exec(t, `UPDATE orders_copy SET amount = amount + 500 WHERE id = 7`)
	le.scan(t)
	orders, copyID, customers := le.ids["orders"], le.ids["orders_copy"], le.ids["customers"]

	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	_, secret := MustChannel(t, env, le.admin, map[string]any{"name": "all", "config": map[string]any{"webhook_url": rcv.URL}})
	MustRunWorkers(t, env)
	settle(t, env, le.ws) // whatever the baseline scan sent is final

	alertedOnce := func(t *testing.T, typ, datasetID string) {
		t.Helper()
		var open []dbtIssueOut
		le.get(t, "/api/v1/issues?type="+typ+"&status=open&dataset_id="+datasetID, le.tok, &open)
		if len(open) != 1 {
			t.Fatalf("open %s issues: %+v", typ, open)
		}
		settle(t, env, le.ws)
		got := alertsNaming(t, rcv, open[0].ID)
		if len(got) != 1 {
			t.Fatalf("%s issue: %d service.alerts naming it, want 1", typ, len(got))
		}
		ts, err := strconv.ParseInt(got[0].Header.Get("X-Service-Timestamp"), 10, 64)
		if err != nil {
			t.Fatalf("timestamp %q", got[0].Header.Get("X-Service-Timestamp"))
		}
		if err := delivery.Verify(secret, got[0].Header.Get("X-Service-Signature"), ts, got[0].Body, time.Now(), 0); err != nil {
			t.Fatalf("%s alert signature: %v", typ, err)
		}
		b := decodeBody(t, got[0].Body)
		requireKeys(t, b)
		a := b["alerts"].([]any)[0].(map[string]any)
		if b["code"] != "alerts_new" || a["severity"] != "critical" || a["title"] == "" {
			t.Fatalf("%s alert body %s", typ, got[0].Body)
		}
		if held, _, n := notificationHeld(t, env, le.ws, open[0].ID); held || n != 1 {
			t.Fatalf("%s notification: held %v deliveries %d; want false, 1", typ, held, n)
		}
	}

	t.Run("ReconciliationRunOnDemand", func(t *testing.T) {
		r := env.Do(t, http.MethodPost, "/api/v1/reconcile/checks", le.admin, map[string]any{"name": "orders vs copy",
			"dataset_id": orders, "other_id": copyID, "group_by": []string{"status"}, "sum_columns": []string{"amount"}})
		if r.Status != http.StatusCreated {
			t.Fatalf("create check: %d %s", r.Status, r.Body)
		}
		var c struct{ ID string }
		r.JSON(t, &c)
		if r := env.Do(t, http.MethodPost, "/api/v1/reconcile/checks/"+c.ID+"/run", le.admin, nil); r.Status != http.StatusOK {
			t.Fatalf("run: %d %s", r.Status, r.Body)
		}
		alertedOnce(t, "reconciliation", orders)
		// Run again: the same issue detected again, no second alert.
		if r := env.Do(t, http.MethodPost, "/api/v1/reconcile/checks/"+c.ID+"/run", le.admin, nil); r.Status != http.StatusOK {
			t.Fatalf("run again: %d %s", r.Status, r.Body)
		}
		alertedOnce(t, "reconciliation", orders)
	})

	t.Run("ContractVersionAccepted", func(t *testing.T) {
		base := "/api/v1/datasets/" + customers + "/contract"
		var doc map[string]any
		r := env.Do(t, http.MethodGet, base, le.tok, nil, "Accept: application/json")
		if r.Status != http.StatusOK {
			t.Fatalf("observed contract: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &doc)
		// The contract promises a column the table does not have.
		obj := doc["schema"].([]any)[0].(map[string]any)
		props := obj["properties"].([]any)
		ghost := map[string]any{}
		for k, v := range props[0].(map[string]any) {
			ghost[k] = v
		}
		ghost["name"] = "coluna_fantasma"
		delete(ghost, "id")
		obj["properties"] = append(props, ghost)
		r = env.Do(t, http.MethodPost, base+"/proposals", le.admin, map[string]any{"origin": "document", "document": doc})
		if r.Status != http.StatusCreated {
			t.Fatalf("proposal: %d %s", r.Status, r.Body)
		}
		var p struct{ ID string }
		r.JSON(t, &p)
		if r := env.Do(t, http.MethodPost, base+"/proposals/"+p.ID+"/accept", le.admin, nil); r.Status != http.StatusOK {
			t.Fatalf("accept: %d %s", r.Status, r.Body)
		}
		alertedOnce(t, "contract", customers)
	})

	t.Run("PipelineFailingThreeTimes", func(t *testing.T) {
		start := time.Now().Add(-4 * time.Hour).UTC().Truncate(time.Second)
		for i, st := range []string{"failed", "failed", "aborted"} {
			at := start.Add(time.Duration(i) * time.Hour)
			if r := env.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", le.tok, map[string]any{"orchestrator": "airflow",
				"pipeline": "load_orders", "run_id": "run-" + strconv.Itoa(i), "status": st, "started_at": at, "ended_at": at.Add(time.Minute),
				"outputs": []any{map[string]any{"dataset_id": orders}}}); r.Status != http.StatusCreated {
				t.Fatalf("run %d: %d %s", i, r.Status, r.Body)
			}
		}
		alertedOnce(t, "pipeline", orders)
	})
}
