package app_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// A writer failing three runs in a row opens one pipeline issue (failing, critical) on
// the dataset it writes; a fourth failure updates it; the next successful run resolves
// it. Other datasets (those it reads) get none.
func TestFailingPipelineOpensOneIssue(t *testing.T) {
	clock := newTestClock()
	env := apptest.MustStart(t, app.Config{Clock: clock})
	ws := env.MustWorkspace(t, "pipeline-issues")
	token := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "warehouse")
	orders := env.MustDataset(t, ws, conn, "sales", "orders")
	customers := env.MustDataset(t, ws, conn, "sales", "customers")
	base := clock.Now().Add(-6 * time.Hour).Truncate(time.Second)
	post := func(runID, status string, hour int) {
		t.Helper()
		start := base.Add(time.Duration(hour) * time.Hour)
		res := env.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", token, map[string]any{
			"orchestrator": "dagster", "pipeline": "orders_job", "run_id": runID, "status": status,
			"started_at": start, "ended_at": start.Add(time.Minute),
			"inputs":  []any{map[string]any{"dataset_id": customers}},
			"outputs": []any{map[string]any{"dataset_id": orders}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("run %s: %d %s", runID, res.Status, res.Body)
		}
	}
	open := func(dataset string) []biIssueOut {
		t.Helper()
		var out []biIssueOut
		env.Do(t, http.MethodGet, "/api/v1/issues?type=pipeline&status=open&dataset_id="+dataset, token, nil).JSON(t, &out)
		return out
	}
	post("r1", "success", 0)
	post("r2", "failed", 1)
	post("r3", "failed", 2)
	if got := open(orders); len(got) != 0 {
		t.Fatalf("two failures: %+v", got)
	}
	post("r4", "aborted", 3)
	got := open(orders)
	if len(got) != 1 || got[0].Subtype == nil || *got[0].Subtype != "failing" || got[0].Severity != "critical" || got[0].Detections != 1 {
		t.Fatalf("three failures: %+v", got)
	}
	var is biIssueOut
	env.Do(t, http.MethodGet, "/api/v1/issues/"+got[0].ID, token, nil).JSON(t, &is)
	if is.Details["pipeline"] != "orders_job" || is.Details["orchestrator"] != "dagster" || is.Details["run_id"] != "r4" ||
		is.Details["consecutive_failures"] != 3.0 {
		t.Fatalf("failing issue details: %+v", is.Details)
	}
	post("r5", "failed", 4)
	if again := open(orders); len(again) != 1 || again[0].ID != got[0].ID || again[0].Detections != 2 {
		t.Fatalf("a fourth failure: %+v", again)
	}
	if other := open(customers); len(other) != 0 {
		t.Fatalf("issues on the dataset it reads: %+v", other)
	}
	post("r6", "success", 5)
	env.Do(t, http.MethodGet, "/api/v1/issues/"+got[0].ID, token, nil).JSON(t, &is)
	if is.Status != "resolved" || len(open(orders)) != 0 {
		t.Fatalf("after a successful run: %+v", is)
	}
}

// pipelineSignalOut is a signal as GET /signals lists it.
type pipelineSignalOut struct {
	ID        string   `json:"id"`
	DatasetID string   `json:"dataset_id"`
	ScanID    *string  `json:"scan_id"`
	Source    string   `json:"source"`
	Kind      string   `json:"kind"`
	Metric    string   `json:"metric"`
	Method    string   `json:"method"`
	Observed  *float64 `json:"observed"`
	Baseline  *float64 `json:"baseline"`
	Threshold *float64 `json:"threshold"`
	Severity  *string  `json:"severity"`
	Anomalous bool     `json:"anomalous"`
	IssueID   *string  `json:"issue_id"`
	Pipeline  *struct {
		Orchestrator string `json:"orchestrator"`
		Pipeline     string `json:"pipeline"`
		RunID        string `json:"run_id"`
	} `json:"pipeline"`
}

// pipelineSignals lists the pipeline signals of a dataset, newest first.
func pipelineSignals(t *testing.T, env *apptest.Env, cred, datasetID string) []pipelineSignalOut {
	t.Helper()
	res := env.Do(t, http.MethodGet, "/api/v1/signals?type=pipeline&dataset_id="+datasetID, cred, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("signals: %d %s", res.Status, res.Body)
	}
	var out []pipelineSignalOut
	res.JSON(t, &out)
	if res.Header.Get("X-Total-Count") != strconv.Itoa(len(out)) {
		t.Fatalf("signals total %s for %d items", res.Header.Get("X-Total-Count"), len(out))
	}
	return out
}

// Issue 19: a failing writer is a signal of the dataset it writes, one per failed run,
// with no scan and naming the pipeline and the run; the signal raised past the issue
// threshold names the pipeline issue. Healthy runs raise none, the dataset it reads gets
// none, another workspace sees none; GraphQL lists the same.
func TestFailingWriterBecomesASignal(t *testing.T) {
	clock := newTestClock()
	env := apptest.MustStart(t, app.Config{Clock: clock})
	ws := env.MustWorkspace(t, "pipeline-signals")
	token := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "warehouse")
	orders := env.MustDataset(t, ws, conn, "sales", "orders")
	customers := env.MustDataset(t, ws, conn, "sales", "customers")
	otherToken := env.MustToken(t, env.MustWorkspace(t, "pipeline-signals-other"))
	base := clock.Now().Add(-6 * time.Hour).Truncate(time.Second)
	post := func(runID, status string, hour int) {
		t.Helper()
		start := base.Add(time.Duration(hour) * time.Hour)
		res := env.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", token, map[string]any{
			"orchestrator": "prefect", "pipeline": "load_orders", "run_id": runID, "status": status,
			"started_at": start, "ended_at": start.Add(time.Minute),
			"inputs":  []any{map[string]any{"dataset_id": customers}},
			"outputs": []any{map[string]any{"dataset_id": orders}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("run %s: %d %s", runID, res.Status, res.Body)
		}
	}
	post("r1", "success", 0)
	if got := pipelineSignals(t, env, token, orders); len(got) != 0 {
		t.Fatalf("a healthy writer raised signals: %+v", got)
	}
	post("r2", "failed", 1)
	got := pipelineSignals(t, env, token, orders)
	if len(got) != 1 {
		t.Fatalf("one failed run: %+v", got)
	}
	s := got[0]
	if s.ScanID != nil || s.Source != "orchestrator" || s.Kind != "pipeline" || s.Metric != "run_failures" || s.Method != "pipeline_health" ||
		s.Observed == nil || *s.Observed != 1 || s.Threshold == nil || *s.Threshold != 3 || s.Severity == nil || *s.Severity != "warning" ||
		!s.Anomalous || s.IssueID != nil || s.Pipeline == nil || s.Pipeline.Orchestrator != "prefect" || s.Pipeline.Pipeline != "load_orders" ||
		s.Pipeline.RunID != "r2" || s.DatasetID != orders {
		t.Fatalf("failing writer signal: %+v", s)
	}
	// Judging the writers again (the minutely check) raises nothing new.
	if _, err := env.App.Orchestrators.CheckPipelines(context.Background()); err != nil {
		t.Fatal(err)
	}
	if again := pipelineSignals(t, env, token, orders); len(again) != 1 {
		t.Fatalf("the check raised the same signal again: %+v", again)
	}
	post("r3", "failed", 2)
	post("r4", "aborted", 3)
	got = pipelineSignals(t, env, token, orders)
	if len(got) != 3 || got[0].Pipeline.RunID != "r4" || *got[0].Observed != 3 || *got[0].Severity != "critical" || got[0].IssueID == nil {
		t.Fatalf("three failed runs: %+v", got)
	}
	var open []biIssueOut
	env.Do(t, http.MethodGet, "/api/v1/issues?type=pipeline&status=open&dataset_id="+orders, token, nil).JSON(t, &open)
	if len(open) != 1 || open[0].ID != *got[0].IssueID || got[1].IssueID != nil {
		t.Fatalf("the third signal names the pipeline issue %+v: %+v", open, got)
	}
	if other := pipelineSignals(t, env, token, customers); len(other) != 0 {
		t.Fatalf("signals on the dataset it reads: %+v", other)
	}
	// Filters: by metric, and the scan signals' metrics exclude them.
	res := env.Do(t, http.MethodGet, "/api/v1/signals?metric=run_failures", token, nil)
	if res.Status != http.StatusOK || res.Header.Get("X-Total-Count") != "3" {
		t.Fatalf("metric filter: %d %s", res.Status, res.Header.Get("X-Total-Count"))
	}
	if res := env.Do(t, http.MethodGet, "/api/v1/signals?type=anomaly", token, nil); res.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("anomaly filter: %s", res.Body)
	}
	if res := env.Do(t, http.MethodGet, "/api/v1/signals?metric=run_failure", token, nil); res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("unknown metric: %d", res.Status)
	}
	// Tenancy: another workspace lists none, even with this dataset's id.
	for _, q := range []string{"", "?dataset_id=" + orders} {
		if res := env.Do(t, http.MethodGet, "/api/v1/signals"+q, otherToken, nil); res.Status != http.StatusOK || res.Header.Get("X-Total-Count") != "0" {
			t.Fatalf("another workspace's signals%s: %d %s", q, res.Status, res.Body)
		}
	}

	// GraphQL lists the same signals with the same fields.
	out := env.GraphQL(t, token, `query($d: ID!) { signals(datasetId: $d, type: ["pipeline"]) { total items { id scanId source kind metric
		method observed threshold severity issueId pipeline { orchestrator pipeline runId } } } }`, map[string]any{"d": orders})
	if out["errors"] != nil {
		t.Fatalf("graphql: %v", out["errors"])
	}
	page := out["data"].(map[string]any)["signals"].(map[string]any)
	items := page["items"].([]any)
	first := items[0].(map[string]any)
	p := first["pipeline"].(map[string]any)
	if page["total"] != 3.0 || len(items) != 3 || first["id"] != got[0].ID || first["scanId"] != nil || first["source"] != "orchestrator" ||
		first["metric"] != "run_failures" || first["issueId"] != *got[0].IssueID || p["orchestrator"] != "prefect" || p["runId"] != "r4" {
		t.Fatalf("graphql signals: %v", page)
	}
	out = env.GraphQL(t, otherToken, `query($d: ID!) { signals(datasetId: $d) { total } }`, map[string]any{"d": orders})
	if out["errors"] != nil || out["data"].(map[string]any)["signals"].(map[string]any)["total"] != 0.0 {
		t.Fatalf("graphql, another workspace: %v", out)
	}
}
