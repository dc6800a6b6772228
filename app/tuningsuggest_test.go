package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// A not_null rule failing every scan by the same 3 rows of 1000 gets, after the third
// scan, one rule_tolerance suggestion (max_failing 3, what the source counts); no
// second one at the next scan; accepting it updates the rule through the rules' service
// and the next scan passes. Anomalies of a metric ignored again and again (their
// history seeded as the issue workflow leaves it) get an anomaly_threshold proposal just
// above the largest ignored |z|; accepting raises the metric's threshold; a viewer may not.
func TestTuningSuggestionsFromScans(t *testing.T) {
	e := newWF(t, "tuning")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE faturas (id integer PRIMARY KEY, nif text, total numeric)`)
	src.exec(t, `INSERT INTO faturas SELECT g, CASE WHEN g IN (10, 500, 990) THEN NULL ELSE lpad(g::text, 9, '5') END, g * 1.5
		FROM generate_series(1, 1000) g`)
	conn := e.connect(t, "faturacao", "postgres", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "faturas")
	rl := e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "not_null", "severity": "warning", "params": map[string]any{"column": "nif"}})
	ruleID := rl["id"].(string)
	tuning := func() []suggestionOut { return e.suggestions(t, "?category=tuning&dataset_id="+ds) }
	e.scan(t, conn)
	e.scan(t, conn)
	if got := tuning(); findSuggestion(got, "rule_tolerance:"+ruleID) != nil {
		t.Fatalf("proposed after two failing scans: %+v", got)
	}
	e.scan(t, conn)
	e.scan(t, conn)
	got := tuning()
	sg := findSuggestion(got, "rule_tolerance:"+ruleID)
	var nulls int
	if err := src.db.QueryRow(`SELECT count(*) FROM faturas WHERE nif IS NULL`).Scan(&nulls); err != nil {
		t.Fatal(err)
	}
	if sg == nil || len(got) != 1 || sg.Params["param"] != "max_failing" || sg.Params["proposed"] != float64(nulls) || sg.Params["rows"] != 1000.0 {
		t.Fatalf("tolerance suggestion: %+v (source nulls %d)", got, nulls)
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sg.ID+"/accept", e.viewer, nil); r.Status != 403 {
		t.Fatalf("viewer accept: %d", r.Status)
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sg.ID+"/accept", e.member, nil); r.Status != 200 {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	after := e.get(t, "/api/v1/rules/"+ruleID, e.admin)
	if p, _ := after["params"].(map[string]any); p["max_failing"] != float64(nulls) {
		t.Fatalf("rule after accept: %v", after)
	}
	e.scan(t, conn)
	after = e.get(t, "/api/v1/rules/"+ruleID, e.admin)
	if lr, _ := after["last_result"].(map[string]any); lr["status"] != "passed" {
		t.Fatalf("rule after the next scan: %v", after["last_result"])
	}
	if got := tuning(); len(got) != 1 || got[0].Status != "accepted" {
		t.Fatalf("after accepting: %+v", got)
	}

	// Anomalies of row_count ignored four times (|z| up to 6.2), resolved once.
	ctx := context.Background()
	for i, z := range []float64{4.1, 6.2, 5.0, 4.4, 7.5} {
		status, reason := "ignored", any(nil)
		if i == 4 {
			status = "resolved"
		}
		if i == 0 {
			reason = "expected"
		}
		details, _ := json.Marshal(map[string]any{"z": z, "threshold": 3.5, "observed": 1000})
		if _, err := e.App.DB.Pool().Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, metric,
			details, resolution_reason, created_at, updated_at, resolved_at) VALUES (gen_random_uuid(), $1, $2, 'anomaly', 'warning', $3,
			'anomalia', 'row_count', $4, $5, now(), now(), now())`, e.ws, ds, status, details, reason); err != nil {
			t.Fatal(err)
		}
	}
	e.scan(t, conn)
	th := findSuggestion(tuning(), "anomaly_threshold:row_count:")
	if th == nil || th.Params["proposed_threshold"] != 6.5 || th.Params["ignored"] != 4.0 || th.Params["resolved"] != 1.0 {
		t.Fatalf("threshold suggestion: %+v", tuning())
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+th.ID+"/accept", e.member, nil); r.Status != 200 {
		t.Fatalf("accept threshold: %d %s", r.Status, r.Body)
	}
	var thr float64
	if err := e.App.DB.Pool().QueryRow(ctx, `SELECT threshold FROM anomaly_tuning WHERE dataset_id = $1 AND metric = 'row_count'`, ds).Scan(&thr); err != nil || thr != 6.5 {
		t.Fatalf("threshold %v %v", thr, err)
	}
	e.scan(t, conn)
	if n := len(tuning()); n != 2 {
		t.Fatalf("suggestions after another scan: %d", n)
	}
}
