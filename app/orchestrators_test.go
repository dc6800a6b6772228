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
)

type runOut struct {
	ID        string   `json:"id"`
	RunID     string   `json:"run_id"`
	Status    string   `json:"status"`
	Outputs   []string `json:"outputs"`
	Inputs    []string `json:"inputs"`
	Unmatched []string `json:"unmatched"`
}

type healthOut struct {
	DatasetID string `json:"dataset_id"`
	Status    string `json:"status"`
	Pipelines []struct {
		Pipeline            string  `json:"pipeline"`
		Status              string  `json:"status"`
		LastRun             runOut  `json:"last_run"`
		FailingRun          *runOut `json:"failing_run"`
		ConsecutiveFailures int     `json:"consecutive_failures"`
		CadenceSeconds      *int64  `json:"cadence_seconds"`
		Runs                int     `json:"runs"`
	} `json:"pipelines"`
}

// Must-show 1 of issue 19: three runs of a job writing a dataset, the third failing,
// make its pipeline health failing with that run; a run missing past the learned
// cadence makes it late. Datasets are named by id or by OpenLineage naming.
func TestOrchestratorRunsAndPipelineHealth(t *testing.T) {
	clock := newTestClock()
	env := apptest.MustStart(t, app.Config{Clock: clock})
	ws := env.MustWorkspace(t, "orch")
	token := env.MustToken(t, ws)
	viewer := env.MustSession(t, ws, vigia.RoleViewer)
	conn := env.MustConnection(t, ws, "warehouse")
	orders := env.MustDataset(t, ws, conn, "sales", "orders")
	customers := env.MustDataset(t, ws, conn, "sales", "customers")
	if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE connections SET lineage_namespace = 'postgres://db:5432',
		lineage_database = 'shop' WHERE id = $1`, conn); err != nil {
		t.Fatal(err)
	}
	other := env.MustWorkspace(t, "orch-other")
	otherToken := env.MustToken(t, other)
	foreign := env.MustDataset(t, other, env.MustConnection(t, other, "wh"), "sales", "orders")

	// Not monitored before any run.
	var h healthOut
	res := env.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/pipeline-health", token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("health: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &h)
	if h.Status != "not_monitored" || len(h.Pipelines) != 0 {
		t.Fatalf("before runs: %+v", h)
	}

	base := clock.Now().Add(-3 * time.Hour).Truncate(time.Second)
	post := func(cred, runID, status string, hour int, outputs ...map[string]any) *apptest.Response {
		t.Helper()
		start := base.Add(time.Duration(hour) * time.Hour)
		return env.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", cred, map[string]any{
			"orchestrator": "Airflow", "pipeline": "load_orders", "run_id": runID, "status": status,
			"started_at": start, "ended_at": start.Add(5 * time.Minute),
			"inputs":  []any{map[string]any{"dataset_id": customers}},
			"outputs": outputs, "facets": map[string]any{"nominalTime": map[string]any{"nominalStartTime": start}},
		})
	}
	byID := map[string]any{"dataset_id": orders}
	byOL := map[string]any{"namespace": "postgres://db:5432", "name": "shop.sales.orders"}
	var run runOut
	// An API token may report runs (a marked write).
	res = post(token, "run-1", "success", 0, byID)
	if res.Status != http.StatusCreated {
		t.Fatalf("first run: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &run)
	if len(run.Outputs) != 1 || run.Outputs[0] != orders || len(run.Inputs) != 1 || run.Inputs[0] != customers {
		t.Fatalf("first run: %+v", run)
	}
	// The OpenLineage naming finds the same dataset; a name of no dataset is listed.
	res = post(token, "run-2", "success", 1, byOL, map[string]any{"namespace": "s3://exports", "name": "orders.csv"})
	if res.Status != http.StatusCreated {
		t.Fatalf("second run: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &run)
	if len(run.Outputs) != 1 || run.Outputs[0] != orders || len(run.Unmatched) != 1 || run.Unmatched[0] != "s3://exports/orders.csv" {
		t.Fatalf("second run: %+v", run)
	}
	res = post(token, "run-3", "running", 2, byID)
	if res.Status != http.StatusCreated {
		t.Fatalf("third run started: %d %s", res.Status, res.Body)
	}
	// The same run reported again is replaced: 200.
	res = post(token, "run-3", "failed", 2, byID)
	if res.Status != http.StatusOK {
		t.Fatalf("third run failed: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &run)
	failed := run

	env.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/pipeline-health", token, nil).JSON(t, &h)
	if h.Status != "failing" || len(h.Pipelines) != 1 || h.Pipelines[0].FailingRun == nil || h.Pipelines[0].FailingRun.ID != failed.ID ||
		h.Pipelines[0].ConsecutiveFailures != 1 || h.Pipelines[0].CadenceSeconds == nil || *h.Pipelines[0].CadenceSeconds != 3600 ||
		h.Pipelines[0].Runs != 3 {
		t.Fatalf("after a failed run: %+v", h)
	}
	// The trust decision's reasons name the failing pipeline and its run.
	reason := func(code string) map[string]any {
		t.Helper()
		var d struct {
			Reasons []struct {
				Code      string         `json:"code"`
				MessagePT string         `json:"message_pt"`
				Params    map[string]any `json:"params"`
			} `json:"reasons"`
		}
		res := env.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/trust-decision", token, nil)
		if res.Status != http.StatusOK {
			t.Fatalf("trust decision: %d %s", res.Status, res.Body)
		}
		res.JSON(t, &d)
		for _, r := range d.Reasons {
			if r.Code == code {
				if !strings.Contains(r.MessagePT, "load_orders") {
					t.Fatalf("%s does not name the pipeline: %q", code, r.MessagePT)
				}
				return r.Params
			}
		}
		t.Fatalf("no %s reason in %s", code, res.Body)
		return nil
	}
	if p := reason("pipeline_failing"); p["run_id"] != "run-3" || p["pipeline"] != "load_orders" || p["orchestrator"] != "airflow" {
		t.Fatalf("failing reason: %v", p)
	}
	// The job recovers, then misses its next run past 1.5 cadences: late.
	if res = post(token, "run-4", "success", 3, byID); res.Status != http.StatusCreated {
		t.Fatalf("fourth run: %d %s", res.Status, res.Body)
	}
	clock.Set(base.Add(3*time.Hour + 80*time.Minute))
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/pipeline-health", token, nil).JSON(t, &h)
	if h.Status != "healthy" {
		t.Fatalf("within the cadence: %+v", h)
	}
	clock.Set(base.Add(3*time.Hour + 100*time.Minute))
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/pipeline-health", token, nil).JSON(t, &h)
	if h.Status != "late" || h.Pipelines[0].Status != "late" || h.Pipelines[0].LastRun.RunID != "run-4" {
		t.Fatalf("past the cadence: %+v", h)
	}
	if p := reason("pipeline_late"); p["run_id"] != "run-4" || p["expected_by"] == nil {
		t.Fatalf("late reason: %v", p)
	}
	// One failure and a lateness under two cadences open no issue; past two cadences the
	// periodic check opens the dataset's pipeline issue (late), without a new run.
	pipelineIssues := func() []biIssueOut {
		t.Helper()
		if _, err := env.App.Orchestrators.CheckPipelines(context.Background()); err != nil {
			t.Fatal(err)
		}
		var out []biIssueOut
		env.Do(t, http.MethodGet, "/api/v1/issues?type=pipeline&status=open&dataset_id="+orders, token, nil).JSON(t, &out)
		return out
	}
	if got := pipelineIssues(); len(got) != 0 {
		t.Fatalf("pipeline issues under the thresholds: %+v", got)
	}
	// Both the failed run and the missed one are signals of the dataset, with no scan:
	// late says how long since the last start against the learned cadence.
	sigs := pipelineSignals(t, env, token, orders)
	if len(sigs) != 2 || sigs[0].Metric != "run_interval" || sigs[0].Pipeline == nil || sigs[0].Pipeline.RunID != "run-4" ||
		sigs[0].Pipeline.Pipeline != "load_orders" || sigs[0].ScanID != nil || sigs[0].Observed == nil || *sigs[0].Observed != 6000 ||
		sigs[0].Baseline == nil || *sigs[0].Baseline != 3600 || sigs[0].Threshold == nil || *sigs[0].Threshold != 5400 ||
		sigs[0].IssueID != nil || sigs[1].Metric != "run_failures" || sigs[1].Pipeline == nil || sigs[1].Pipeline.RunID != "run-3" {
		t.Fatalf("pipeline signals: %+v", sigs)
	}
	clock.Set(base.Add(3*time.Hour + 130*time.Minute))
	got := pipelineIssues()
	if len(got) != 1 || got[0].Subtype == nil || *got[0].Subtype != "late" || got[0].Severity != "warning" {
		t.Fatalf("pipeline issues past two cadences: %+v", got)
	}
	// Still one late signal for the missed run, now naming the issue it opened.
	if again := pipelineSignals(t, env, token, orders); len(again) != 2 || again[0].ID != sigs[0].ID || again[0].IssueID == nil ||
		*again[0].IssueID != got[0].ID {
		t.Fatalf("pipeline signals past two cadences: %+v", again)
	}

	// Lists, filters and paging.
	res = env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?limit=2", viewer, nil)
	var runs []runOut
	res.JSON(t, &runs)
	if res.Status != http.StatusOK || res.Header.Get("X-Total-Count") != "4" || len(runs) != 2 || runs[0].RunID != "run-4" {
		t.Fatalf("runs: %d %s %s", res.Status, res.Header.Get("X-Total-Count"), res.Body)
	}
	res = env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?status=failed&orchestrator=airflow&pipeline=load_orders&dataset_id="+orders, token, nil)
	res.JSON(t, &runs)
	if res.Header.Get("X-Total-Count") != "1" || runs[0].ID != failed.ID {
		t.Fatalf("failed runs: %s", res.Body)
	}
	res = env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?dataset_id="+customers+"&offset=3", token, nil)
	res.JSON(t, &runs)
	if res.Header.Get("X-Total-Count") != "4" || len(runs) != 1 {
		t.Fatalf("runs reading customers: %s %s", res.Header.Get("X-Total-Count"), res.Body)
	}
	// No scan profiled what they wrote yet: no run is the one that changed a scan's view.
	res = env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?scan_id="+vigia.NewID(), token, nil)
	if res.Status != http.StatusOK || res.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("runs before a scan: %d %s", res.Status, res.Body)
	}
	// Another workspace sees none of them.
	res = env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs", otherToken, nil)
	if res.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("another workspace's runs: %s", res.Body)
	}

	// Tenancy: another workspace's dataset is 404, in the path and in the body, and
	// nothing is recorded.
	if res = env.Do(t, http.MethodGet, "/api/v1/datasets/"+foreign+"/pipeline-health", token, nil); res.Status != http.StatusNotFound {
		t.Fatalf("foreign health: %d", res.Status)
	}
	if res = post(token, "run-x", "success", 4, map[string]any{"dataset_id": foreign}); res.Status != http.StatusNotFound {
		t.Fatalf("foreign output: %d %s", res.Status, res.Body)
	}
	if res = post(token, "run-x", "success", 4, map[string]any{"dataset_id": "not-an-id"}); res.Status != http.StatusNotFound {
		t.Fatalf("bad id output: %d %s", res.Status, res.Body)
	}
	// A viewer's session may not record runs.
	if res = post(viewer, "run-y", "success", 4, byID); res.Status != http.StatusForbidden {
		t.Fatalf("viewer: %d %s", res.Status, res.Body)
	}
	res = env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?status=failed", token, nil)
	if res.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("refused reports were recorded: %s", res.Body)
	}
	env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs", token, nil).JSON(t, &runs)
	if len(runs) != 4 {
		t.Fatalf("refused reports were recorded: %d runs", len(runs))
	}

	// Bad input: 422 with every field's loc, never echoing what was sent.
	type item struct {
		Type string   `json:"type"`
		Loc  []string `json:"loc"`
	}
	var bad struct {
		Code   string `json:"code"`
		Detail []item `json:"detail"`
	}
	cases := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"missing fields", map[string]any{"orchestrator": "airflow"}, []string{"[body pipeline]", "[body run_id]", "[body status]", "[body started_at]"}},
		{"bad status and order", map[string]any{"orchestrator": "air flow", "pipeline": "p", "run_id": "r", "status": "SECRETSTATUS",
			"started_at": base, "ended_at": base.Add(-time.Hour)}, []string{"[body orchestrator]", "[body status]", "[body ended_at]"}},
		{"both names", map[string]any{"orchestrator": "dbt", "pipeline": "p", "run_id": "r", "status": "success", "started_at": base,
			"outputs": []any{map[string]any{"dataset_id": orders, "namespace": "x", "name": "y"}, map[string]any{"namespace": "x"}}},
			[]string{"[body outputs 0]", "[body outputs 1 name]"}},
		{"facets not an object", map[string]any{"orchestrator": "dbt", "pipeline": "p", "run_id": "r", "status": "success",
			"started_at": base, "facets": []any{"SECRETFACET"}}, []string{"[body facets]"}},
	}
	for _, c := range cases {
		res = env.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", token, c.body)
		if res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d %s", c.name, res.Status, res.Body)
		}
		res.JSON(t, &bad)
		var locs []string
		for _, it := range bad.Detail {
			locs = append(locs, fmt.Sprint(it.Loc))
		}
		if bad.Code != "validation_error" || fmt.Sprint(locs) != fmt.Sprint(c.want) {
			t.Fatalf("%s: %s %v", c.name, bad.Code, locs)
		}
		for _, secret := range []string{"SECRETSTATUS", "SECRETFACET", "air flow"} {
			if strings.Contains(string(res.Body), secret) {
				t.Fatalf("%s: the answer echoes %q", c.name, secret)
			}
		}
	}
	for _, q := range []string{"limit=0", "limit=501", "offset=-1", "status=done"} {
		if res = env.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?"+q, token, nil); res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d", q, res.Status)
		}
	}
}

// A run that wrote a dataset links to the scan that profiled it next: the scan that saw
// what the run changed.
func TestOrchestratorRunLinksToTheScanThatFollowed(t *testing.T) {
	e := newWF(t, "orch-scan")
	src := newSource(t, "sqlite", e.root)
	src.exec(t, `CREATE TABLE encomendas (id INTEGER PRIMARY KEY, total REAL)`)
	src.exec(t, `INSERT INTO encomendas VALUES (1, 10.5), (2, 20)`)
	conn := e.connect(t, "loja", "sqlite", src.dsn)
	before := e.scan(t, conn)
	ds := e.dataset(t, conn, "encomendas")
	end := time.Now().UTC()
	res := e.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", e.tok, map[string]any{"orchestrator": "dagster", "pipeline": "load",
		"run_id": "r1", "status": "success", "started_at": end.Add(-time.Minute), "ended_at": end,
		"outputs": []any{map[string]any{"dataset_id": ds}}})
	var run struct {
		ID        string `json:"id"`
		NextScans []struct {
			DatasetID string `json:"dataset_id"`
			ScanID    string `json:"scan_id"`
		} `json:"next_scans"`
	}
	res.JSON(t, &run)
	if res.Status != http.StatusCreated || len(run.NextScans) != 0 {
		t.Fatalf("run: %d %s", res.Status, res.Body)
	}
	// The next scan finds a null total: its issue's incident names the run before it.
	if r := e.Do(t, http.MethodPost, "/api/v1/rules", e.admin, map[string]any{"dataset_id": ds, "rule_type": "not_null",
		"severity": "critical", "params": map[string]any{"column": "total"}}); r.Status != http.StatusCreated {
		t.Fatalf("rule: %d %s", r.Status, r.Body)
	}
	src.exec(t, `INSERT INTO encomendas VALUES (3, NULL)`)
	after := e.scan(t, conn)
	var runs []struct {
		ID        string `json:"id"`
		NextScans []struct {
			DatasetID string `json:"dataset_id"`
			ScanID    string `json:"scan_id"`
		} `json:"next_scans"`
	}
	res = e.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?scan_id="+after.ID, e.viewer, nil)
	res.JSON(t, &runs)
	if res.Status != http.StatusOK || len(runs) != 1 || runs[0].ID != run.ID || len(runs[0].NextScans) != 1 ||
		runs[0].NextScans[0].ScanID != after.ID || runs[0].NextScans[0].DatasetID != ds {
		t.Fatalf("runs before the scan: %d %s", res.Status, res.Body)
	}
	if res = e.Do(t, http.MethodGet, "/api/v1/orchestrator-runs?scan_id="+before.ID, e.viewer, nil); res.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("runs before the earlier scan: %s", res.Body)
	}

	// The incident of the scan's issue shows the run that changed what it saw.
	var incidents []struct {
		ID        string   `json:"id"`
		ScanID    *string  `json:"scan_id"`
		DatasetID []string `json:"dataset_ids"`
		ChangedBy []struct {
			ID        string `json:"id"`
			RunID     string `json:"run_id"`
			Pipeline  string `json:"pipeline"`
			Status    string `json:"status"`
			DatasetID string `json:"dataset_id"`
		} `json:"changed_by"`
	}
	res = e.Do(t, http.MethodGet, "/api/v1/incidents", e.viewer, nil)
	res.JSON(t, &incidents)
	if res.Status != http.StatusOK || len(incidents) != 1 || incidents[0].ScanID == nil || *incidents[0].ScanID != after.ID ||
		len(incidents[0].ChangedBy) != 1 || incidents[0].ChangedBy[0].ID != run.ID || incidents[0].ChangedBy[0].RunID != "r1" ||
		incidents[0].ChangedBy[0].Pipeline != "load" || incidents[0].ChangedBy[0].Status != "success" || incidents[0].ChangedBy[0].DatasetID != ds {
		t.Fatalf("incidents: %d %s", res.Status, res.Body)
	}
	var one map[string]any
	e.Do(t, http.MethodGet, "/api/v1/incidents/"+incidents[0].ID, e.tok, nil).JSON(t, &one)
	if cb, _ := one["changed_by"].([]any); len(cb) != 1 || cb[0].(map[string]any)["id"] != run.ID {
		t.Fatalf("incident: %v", one)
	}
	out := e.GraphQL(t, e.tok, `{ incidents { items { id changedBy { id orchestrator pipeline runId status datasetId } } } }`, nil)
	if out["errors"] != nil {
		t.Fatalf("graphql: %v", out["errors"])
	}
	items := out["data"].(map[string]any)["incidents"].(map[string]any)["items"].([]any)
	cb := items[0].(map[string]any)["changedBy"].([]any)
	if len(items) != 1 || len(cb) != 1 || cb[0].(map[string]any)["runId"] != "r1" || cb[0].(map[string]any)["orchestrator"] != "dagster" {
		t.Fatalf("graphql incidents: %v", items)
	}
	// Another workspace sees no incident, hence no run.
	other := e.MustToken(t, e.MustWorkspace(t, "orch-scan-other"))
	if res = e.Do(t, http.MethodGet, "/api/v1/incidents/"+incidents[0].ID, other, nil); res.Status != http.StatusNotFound {
		t.Fatalf("another workspace's incident: %d", res.Status)
	}
}
