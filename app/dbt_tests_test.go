package app_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// dbtRun posts a run_results.json fixture with the manifest fixture.
func dbtRun(t *testing.T, le *lineageEnv, runResults string) map[string]any {
	t.Helper()
	read := func(name string) json.RawMessage {
		b, err := os.ReadFile("testdata/dbt/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	body := map[string]any{"run_results": read(runResults), "manifest": read("manifest_v6.json")}
	r := le.env.Do(t, http.MethodPost, "/api/v1/integrations/dbt/run-results", le.tok, body)
	if r.Status != 200 {
		t.Fatalf("dbt run results %s: %d %s", runResults, r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	return out
}

type dbtRuleOut struct {
	ID             string  `json:"id"`
	DatasetID      string  `json:"dataset_id"`
	RuleType       string  `json:"rule_type"`
	DBTUniqueID    *string `json:"dbt_unique_id"`
	CurrentIssueID *string `json:"current_issue_id"`
	Params         struct {
		Column       string   `json:"column"`
		Columns      []string `json:"columns"`
		RefDatasetID string   `json:"ref_dataset_id"`
		RefColumn    string   `json:"ref_column"`
		DBTTest      string   `json:"dbt_test"`
	} `json:"params"`
	LastResult *struct {
		Status          string   `json:"status"`
		ScanID          *string  `json:"scan_id"`
		DBTInvocationID *string  `json:"dbt_invocation_id"`
		Observed        *float64 `json:"observed"`
	} `json:"last_result"`
}

type dbtIssueOut struct {
	ID        string         `json:"id"`
	DatasetID string         `json:"dataset_id"`
	Type      string         `json:"type"`
	Subtype   *string        `json:"subtype"`
	Status    string         `json:"status"`
	Details   map[string]any `json:"details"`
	History   []struct {
		ToStatus string `json:"to_status"`
		Origin   string `json:"origin"`
		Event    string `json:"event"`
	} `json:"history"`
}

// Must-show 2 of issue 19: a real-format run_results.json (schema v5) with one failing
// not_null test opens one issue on the tested model's dataset, carrying the test's
// unique_id; the next run (schema v6) with it passing resolves it; a failure after a
// person resolved the next issue, then a pass, verifies the resolution.
func TestDBTTestResultsBecomeRuleResultsAndIssues(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, shopDDL)
	le.fillShop(t)
	le.scan(t)
	orders, customers := le.ids["orders"], le.ids["customers"]
	const notNull = "test.shop.not_null_orders_customer_id.8a3f1c2d9e"

	run := dbtRun(t, le, "run_results_v5_fail.json")
	tests := run["tests"].(map[string]any)
	if tests["recorded"] != 4.0 || tests["unmatched"] != 0.0 || tests["issues_opened"] != 1.0 || tests["issues_resolved"] != 0.0 {
		t.Fatalf("first run: %v", run)
	}

	var rules []dbtRuleOut
	le.get(t, "/api/v1/rules?limit=100", le.tok, &rules)
	byUID := map[string]dbtRuleOut{}
	for _, r := range rules {
		if r.DBTUniqueID != nil {
			byUID[*r.DBTUniqueID] = r
		}
	}
	if len(byUID) != 4 {
		t.Fatalf("dbt rules: %+v", rules)
	}
	nn := byUID[notNull]
	if nn.RuleType != "not_null" || nn.DatasetID != orders || nn.Params.Column != "customer_id" || nn.CurrentIssueID == nil ||
		nn.LastResult == nil || nn.LastResult.Status != "failed" || nn.LastResult.ScanID != nil ||
		nn.LastResult.DBTInvocationID == nil || *nn.LastResult.DBTInvocationID != "7d1e0a52-9b3c-4f6e-8a21-5c4d3b2a1f01" ||
		nn.LastResult.Observed == nil || *nn.LastResult.Observed != 3 {
		t.Fatalf("not_null rule: %+v %+v", nn, nn.LastResult)
	}
	if u := byUID["test.shop.unique_customers_id.4b7e2a9c1f"]; u.RuleType != "unique" || u.DatasetID != customers ||
		len(u.Params.Columns) != 1 || u.Params.Columns[0] != "id" || u.LastResult == nil || u.LastResult.Status != "passed" || u.CurrentIssueID != nil {
		t.Fatalf("unique rule: %+v", u)
	}
	if rel := byUID["test.shop.relationships_orders_customer_id__id__ref_customers_.5c1d8e3b2a"]; rel.RuleType != "referential" ||
		rel.DatasetID != orders || rel.Params.RefDatasetID != customers || rel.Params.RefColumn != "id" {
		t.Fatalf("relationships rule: %+v", rel)
	}
	if s := byUID["test.shop.assert_positive_amount"]; s.RuleType != "dbt_test" || s.DatasetID != orders || s.Params.DBTTest != "" {
		t.Fatalf("singular test rule: %+v", s)
	}

	// One issue, on orders, carrying the test's unique_id; none on customers.
	var onOrders, onCustomers []dbtIssueOut
	le.get(t, "/api/v1/issues?type=rule&dataset_id="+orders, le.tok, &onOrders)
	le.get(t, "/api/v1/issues?type=rule&dataset_id="+customers, le.tok, &onCustomers)
	if len(onOrders) != 1 || len(onCustomers) != 0 || onOrders[0].ID != *nn.CurrentIssueID || onOrders[0].Status != "open" ||
		onOrders[0].Subtype == nil || *onOrders[0].Subtype != "not_null" {
		t.Fatalf("issues: orders %+v customers %+v", onOrders, onCustomers)
	}
	issueID := onOrders[0].ID
	var is dbtIssueOut
	le.get(t, "/api/v1/issues/"+issueID, le.tok, &is)
	if is.Details["dbt_unique_id"] != notNull || len(is.History) != 1 || is.History[0].Origin != "dbt:7d1e0a52-9b3c-4f6e-8a21-5c4d3b2a1f01" {
		t.Fatalf("issue: %+v", is)
	}

	// The same failing run again: the same issue, detected again; no second one.
	run = dbtRun(t, le, "run_results_v5_fail.json")
	if tests := run["tests"].(map[string]any); tests["issues_opened"] != 0.0 {
		t.Fatalf("repeated run: %v", run)
	}

	// The next run passes: the issue is resolved by it.
	run = dbtRun(t, le, "run_results_v6_pass.json")
	if tests := run["tests"].(map[string]any); tests["recorded"] != 4.0 || tests["issues_resolved"] != 1.0 || tests["issues_opened"] != 0.0 {
		t.Fatalf("passing run: %v", run)
	}
	le.get(t, "/api/v1/issues/"+issueID, le.tok, &is)
	last := is.History[len(is.History)-1]
	if is.Status != "resolved" || last.Event != "auto_resolved" || last.Origin != "dbt:a4c9e2d1-6f70-4b3a-9e8d-2c1b0a9f8e02" {
		t.Fatalf("after the passing run: %+v", is)
	}

	// A new failure opens a new issue; a person resolves it; the next passing run
	// verifies the resolution.
	dbtRun(t, le, "run_results_v5_fail.json")
	le.get(t, "/api/v1/issues?type=rule&status=open&dataset_id="+orders, le.tok, &onOrders)
	if len(onOrders) != 1 || onOrders[0].ID == issueID {
		t.Fatalf("second failure: %+v", onOrders)
	}
	second := onOrders[0].ID
	if r := env.Do(t, http.MethodPost, "/api/v1/issues/"+second+"/resolve", le.admin, nil); r.Status != 200 {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	dbtRun(t, le, "run_results_v6_pass.json")
	le.get(t, "/api/v1/issues/"+second, le.tok, &is)
	last = is.History[len(is.History)-1]
	if is.Status != "resolved" || last.Event != "verified" {
		t.Fatalf("verification: %+v", is)
	}
	le.get(t, "/api/v1/rules?limit=100", le.tok, &rules)
	for _, r := range rules {
		if r.DBTUniqueID != nil && *r.DBTUniqueID == notNull && (r.CurrentIssueID != nil || r.LastResult.Status != "passed") {
			t.Fatalf("not_null rule after verification: %+v", r)
		}
	}
}

// dbt model timings feed pipeline health (issue 19): each model result of a run with
// its manifest becomes a run of orchestrator dbt, pipeline the model's unique_id, run
// id the invocation id, writing the model's dataset; an error makes it failing.
func TestDBTModelTimingsFeedPipelineHealth(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, shopDDL)
	le.scan(t)
	orders, customers := le.ids["orders"], le.ids["customers"]

	health := func(id string) healthOut {
		t.Helper()
		var h healthOut
		le.get(t, "/api/v1/datasets/"+id+"/pipeline-health", le.tok, &h)
		return h
	}
	if h := health(orders); h.Status != "not_monitored" {
		t.Fatalf("before dbt: %+v", h)
	}
	models := func(run map[string]any) (float64, float64) {
		m := run["models"].(map[string]any)
		return m["recorded"].(float64), m["unmatched"].(float64)
	}
	if rec, un := models(dbtRun(t, le, "run_results_v5_fail.json")); rec != 2 || un != 0 {
		t.Fatalf("v5 models: %v %v", rec, un)
	}
	if rec, un := models(dbtRun(t, le, "run_results_v6_pass.json")); rec != 1 || un != 0 {
		t.Fatalf("v6 models: %v %v", rec, un)
	}
	h := health(orders)
	if h.Status != "healthy" || len(h.Pipelines) != 1 || h.Pipelines[0].Pipeline != "model.shop.orders" || h.Pipelines[0].Runs != 2 ||
		h.Pipelines[0].LastRun.RunID != "a4c9e2d1-6f70-4b3a-9e8d-2c1b0a9f8e02" || h.Pipelines[0].LastRun.Status != "success" {
		t.Fatalf("orders after two dbt runs: %+v", h)
	}
	if h := health(customers); h.Status != "healthy" || len(h.Pipelines) != 1 || h.Pipelines[0].Runs != 1 ||
		h.Pipelines[0].LastRun.RunID != "7d1e0a52-9b3c-4f6e-8a21-5c4d3b2a1f01" {
		t.Fatalf("customers: %+v", h)
	}
	var started struct {
		StartedAt time.Time  `json:"started_at"`
		EndedAt   *time.Time `json:"ended_at"`
	}
	var runs []json.RawMessage
	le.get(t, "/api/v1/orchestrator-runs?orchestrator=dbt&pipeline=model.shop.customers", le.tok, &runs)
	if len(runs) != 1 || json.Unmarshal(runs[0], &started) != nil || !started.StartedAt.Equal(time.Date(2026, 11, 24, 6, 0, 1, 0, time.UTC)) ||
		started.EndedAt == nil || !started.EndedAt.Equal(time.Date(2026, 11, 24, 6, 0, 2, 400e6, time.UTC)) {
		t.Fatalf("customers' run timings (compile start to execute end): %s", runs)
	}

	// A run where the orders model errors: its pipeline is failing with that run.
	b, err := os.ReadFile("testdata/dbt/run_results_v6_pass.json")
	if err != nil {
		t.Fatal(err)
	}
	failing := strings.Replace(strings.Replace(string(b), `"status": "success"`, `"status": "error"`, 1),
		"a4c9e2d1-6f70-4b3a-9e8d-2c1b0a9f8e02", "0b9e8d7c-6f70-4b3a-9e8d-2c1b0a9f8e03", 1)
	failing = strings.ReplaceAll(failing, "2026-11-25T", "2026-11-26T")
	if !strings.Contains(failing, `"status": "error"`) {
		t.Fatal("fixture: no model status to replace")
	}
	m, err := os.ReadFile("testdata/dbt/manifest_v6.json")
	if err != nil {
		t.Fatal(err)
	}
	r := env.Do(t, http.MethodPost, "/api/v1/integrations/dbt/run-results", le.tok,
		map[string]any{"run_results": json.RawMessage(failing), "manifest": json.RawMessage(m)})
	if r.Status != 200 {
		t.Fatalf("failing run: %d %s", r.Status, r.Body)
	}
	h = health(orders)
	if h.Status != "failing" || h.Pipelines[0].FailingRun == nil || h.Pipelines[0].FailingRun.RunID != "0b9e8d7c-6f70-4b3a-9e8d-2c1b0a9f8e03" ||
		h.Pipelines[0].ConsecutiveFailures != 1 || h.Pipelines[0].CadenceSeconds == nil || *h.Pipelines[0].CadenceSeconds != 86400 {
		t.Fatalf("orders after a model error: %+v", h)
	}
}

// dbt test results count in the next scan's score and verdict like the scan's own rule
// results (issue 19): a failing not_null test fails the dataset's verdict and lowers its
// score's completude; once it passes, the next scan's verdict no longer names it.
func TestDBTTestResultsCountInTheNextScan(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, shopDDL)
	le.fillShop(t)
	le.scan(t)
	orders := le.ids["orders"]
	type verdictOut struct {
		Verdict      string `json:"verdict"`
		FailingRules []struct {
			RuleID   string `json:"rule_id"`
			RuleType string `json:"rule_type"`
		} `json:"failing_rules"`
	}
	var before verdictOut
	le.get(t, "/api/v1/datasets/"+orders+"/verdict", le.tok, &before)
	if len(before.FailingRules) != 0 {
		t.Fatalf("before dbt: %+v", before)
	}

	dbtRun(t, le, "run_results_v5_fail.json")
	var rules []dbtRuleOut
	le.get(t, "/api/v1/rules?limit=100", le.tok, &rules)
	notNull := ""
	for _, r := range rules {
		if r.DBTUniqueID != nil && *r.DBTUniqueID == "test.shop.not_null_orders_customer_id.8a3f1c2d9e" {
			notNull = r.ID
		}
	}
	le.scan(t)
	var failing verdictOut
	le.get(t, "/api/v1/datasets/"+orders+"/verdict", le.tok, &failing)
	if failing.Verdict != "fail" || len(failing.FailingRules) != 1 || failing.FailingRules[0].RuleID != notNull || notNull == "" {
		t.Fatalf("after a failing dbt test and a scan: %+v (rule %s)", failing, notNull)
	}

	dbtRun(t, le, "run_results_v6_pass.json")
	le.scan(t)
	var passing verdictOut
	le.get(t, "/api/v1/datasets/"+orders+"/verdict", le.tok, &passing)
	if len(passing.FailingRules) != 0 {
		t.Fatalf("after the dbt test passed and a scan: %+v", passing)
	}
}

// The oldest artifact schema the issue names (run-results v4, dbt 1.2, a `dbt test`
// run): its failing not_null test opens the one issue on orders, its relationships test
// at severity warn passes (no issue), and a v6 run passing resolves the issue.
func TestDBTRunResultsV4(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, shopDDL)
	le.fillShop(t)
	le.scan(t)
	orders := le.ids["orders"]
	run := dbtRun(t, le, "run_results_v4_fail.json")
	if tests := run["tests"].(map[string]any); tests["recorded"] != 4.0 || tests["unmatched"] != 0.0 || tests["issues_opened"] != 1.0 {
		t.Fatalf("v4 run: %v", run)
	}
	var open []dbtIssueOut
	le.get(t, "/api/v1/issues?type=rule&status=open&dataset_id="+orders, le.tok, &open)
	if len(open) != 1 || open[0].Subtype == nil || *open[0].Subtype != "not_null" {
		t.Fatalf("open issues on orders: %+v", open)
	}
	var is dbtIssueOut
	le.get(t, "/api/v1/issues/"+open[0].ID, le.tok, &is)
	if is.Details["dbt_unique_id"] != "test.shop.not_null_orders_customer_id.8a3f1c2d9e" ||
		is.History[0].Origin != "dbt:3b9c7e1a-2d4f-4a8b-9c6e-1f0a2b3c4d5e" {
		t.Fatalf("issue: %+v", is)
	}
	var rules []dbtRuleOut
	le.get(t, "/api/v1/rules?limit=100", le.tok, &rules)
	for _, r := range rules {
		if r.DBTUniqueID != nil && *r.DBTUniqueID == "test.shop.relationships_orders_customer_id__id__ref_customers_.5c1d8e3b2a" &&
			(r.LastResult == nil || r.LastResult.Status != "passed" || r.CurrentIssueID != nil) {
			t.Fatalf("a warn result must pass: %+v", r)
		}
	}
	dbtRun(t, le, "run_results_v6_pass.json")
	le.get(t, "/api/v1/issues/"+open[0].ID, le.tok, &is)
	if is.Status != "resolved" {
		t.Fatalf("after a v6 pass: %+v", is)
	}
}
