package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/jobs"
)

// The rule, issue and team operations answer what the OpenAPI document says, 204s and
// text bodies included.
func TestWorkflowResponsesMatchTheDocument(t *testing.T) {
	e := newWF(t, "oas-workflow")
	src := newSource(t, "sqlite", e.root)
	src.exec(t, `CREATE TABLE t (id INTEGER PRIMARY KEY, estado TEXT)`)
	src.exec(t, `INSERT INTO t VALUES (1, NULL), (2, 'a')`)
	conn := e.connect(t, "s", "sqlite", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "t")
	rule := e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "not_null", "params": map[string]any{"column": "estado"}})
	count := e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "row_count_min", "params": map[string]any{"min_rows": 5}})
	e.scan(t, conn)
	items, _ := e.list(t, "/api/v1/issues", e.tok)
	if len(items) == 0 {
		t.Fatal("no issue")
	}
	issueID := items[0]["id"].(string)
	if r := e.Do(t, http.MethodPost, "/api/v1/teams", e.admin, map[string]any{"name": "t"}); r.Status != 201 {
		t.Fatalf("team: %d", r.Status)
	}

	doc := e.Document(t)
	for _, c := range []struct{ method, path, cred string }{
		{http.MethodGet, "/api/v1/rules", e.tok},
		{http.MethodGet, "/api/v1/rules/" + rule["id"].(string), e.tok},
		{http.MethodGet, "/api/v1/rules/" + rule["id"].(string) + "/failing-rows.sql?dialect=mssql", e.tok},
		{http.MethodGet, "/api/v1/rules/" + count["id"].(string) + "/failing-rows.sql", e.tok},
		{http.MethodGet, "/api/v1/rules/" + rule["id"].(string) + "/failing-rows.sql?limit=0", e.tok},
		{http.MethodGet, "/api/v1/issues?status=open", e.tok},
		{http.MethodGet, "/api/v1/issues/" + issueID, e.tok},
		{http.MethodGet, "/api/v1/issues/" + issueID + "/explanation", e.tok},
		{http.MethodGet, "/api/v1/issues/board", e.tok},
		{http.MethodGet, "/api/v1/issues/sla-report?period=2026-11&group_by=team", e.tok},
		{http.MethodGet, "/api/v1/workspace/sla-targets", e.tok},
		{http.MethodGet, "/api/v1/teams", e.tok},
		{http.MethodGet, "/api/v1/datasets/" + ds + "/tuning", e.tok},
		{http.MethodPost, "/api/v1/issues/" + issueID + "/acknowledge", e.member},
		{http.MethodPost, "/api/v1/issues/" + issueID + "/acknowledge", e.member},
		{http.MethodPost, "/api/v1/issues/" + issueID + "/resolve", e.tok},
	} {
		doc.Do(t, c.method, c.path, c.cred, nil)
	}
}

// The SLA timers run as a job on the queue, as the workers run them.
func TestSLATimersRunAsAJob(t *testing.T) {
	e := newWF(t, "sla-job")
	ctx := context.Background()
	// The package's tests share one database: a run the workers of an earlier test queued
	// and did not reach before they stopped would be a duplicate here.
	if _, err := e.DB.Pool().Exec(ctx, `UPDATE jobs SET status = 'cancelled' WHERE kind = $1 AND status IN ('available', 'running')`,
		issue.SLAJobKind); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Jobs.Enqueue(ctx, issue.SLAJobKind, struct{}{}, jobs.EnqueueOpts{UniqueKey: "sla-timers", MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Jobs.Enqueue(ctx, issue.SLAJobKind, struct{}{}, jobs.EnqueueOpts{UniqueKey: "sla-timers"}); err == nil {
		t.Fatal("a second queued run was accepted")
	}
	ran, err := e.App.Jobs.RunOne(ctx, issue.SLAJobKind)
	if err != nil || !ran {
		t.Fatalf("ran %v (%v)", ran, err)
	}
	var status string
	if err := e.DB.Pool().QueryRow(ctx, `SELECT status FROM jobs WHERE kind = $1 ORDER BY created_at DESC LIMIT 1`, issue.SLAJobKind).Scan(&status); err != nil || status != "succeeded" {
		t.Fatalf("job %s (%v)", status, err)
	}
}
