package app_test

import (
	"net/http"
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
