package app_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// Issue 20, S4: GET /datasets/{id} reads everything in one round trip
// (App.DatasetDetail); what it answers is what the services answer one read at a time
// (Trust.DatasetDetail and Suggestions.Open), for a dataset with a score history, a profile, an open issue, an
// open suggestion, a failing writer and a grant on its restricted domain; a dataset of a
// restricted domain without a grant, another workspace's and an unknown id are not found
// by both; and a change shows on the next read (nothing of the detail is cached).
func TestDatasetDetailOneReadMatchesTheServices(t *testing.T) {
	clock := newTestClock()
	env := apptest.MustStart(t, app.Config{Clock: clock})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "detailread")
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "pg")
	orders := env.MustDataset(t, ws, conn, "sales", "orders")
	hidden := env.MustDataset(t, ws, conn, "hr", "salaries")
	other := env.MustWorkspace(t, "detailread-other")
	foreign := env.MustDataset(t, other, env.MustConnection(t, other, "pg"), "sales", "orders")
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := env.DB.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	now := clock.Now()
	scan := vigia.NewID()
	exec(`INSERT INTO scans (id, workspace_id, connection_id, status, created_at) VALUES ($1, $2, $3, 'succeeded', $4)`, scan, ws, conn, now.Add(-2*time.Hour))
	exec(`INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at)
		VALUES ($1, $2, $3, 1, 87.5, '{"dimensions": {"completeness": 90, "validity": 85}}', $4)`, orders, scan, ws, now.Add(-2*time.Hour))
	exec(`UPDATE datasets SET latest_score = 87.5, last_scan_at = $2 WHERE id = $1`, orders, now.Add(-2*time.Hour))
	exec(`INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, columns, metrics, profiled_at, row_count_exact)
		VALUES ($1, $2, $3, 1, 1200, 'standard', '[]', '{}', $4, true)`, orders, scan, ws, now.Add(-2*time.Hour))
	exec(`INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at)
		VALUES ($1, $2, $3, 'anomaly', 'critical', 'open', 'Row count dropped', $4, $4)`, vigia.NewID(), ws, orders, now.Add(-time.Hour))
	exec(`INSERT INTO suggestions (id, workspace_id, dataset_id, category, signature, column_name, status, params, created_at, updated_at)
		VALUES ($1, $2, $3, 'rule', 'not_null:id', 'id', 'open', '{"column": "id"}', $4, $4)`, vigia.NewID(), ws, orders, now.Add(-time.Hour))
	// Two failed runs of the pipeline writing orders: a failing writer (a trust blocker).
	for i, runID := range []string{"r1", "r2"} {
		start := now.Add(time.Duration(i-3) * time.Hour).Truncate(time.Second)
		r := env.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", tok, map[string]any{
			"orchestrator": "Airflow", "pipeline": "load_orders", "run_id": runID, "status": "failed",
			"started_at": start, "ended_at": start.Add(5 * time.Minute), "outputs": []any{map[string]any{"dataset_id": orders}}})
		if r.Status != http.StatusCreated {
			t.Fatalf("run %s: %d %s", runID, r.Status, r.Body)
		}
	}
	// A restricted domain holds hidden: the token (no team) never sees it, a member of a
	// team sees it once the team has a grant on the domain.
	dom, team := vigia.NewID(), vigia.NewID()
	exec(`INSERT INTO teams (id, workspace_id, name, created_at) VALUES ($1, $2, 'finance', $3)`, team, ws, now)
	exec(`INSERT INTO domains (id, workspace_id, name, restricted, created_at, updated_at) VALUES ($1, $2, 'People', true, $3, $3)`, dom, ws, now)
	exec(`INSERT INTO domain_datasets (domain_id, dataset_id) VALUES ($1, $2)`, dom, hidden)

	token := vigia.Principal{WorkspaceID: ws, TokenID: vigia.NewID(), Role: vigia.RoleViewer, ReadOnly: true}
	admin := vigia.Principal{WorkspaceID: ws, UserID: vigia.NewID(), TokenID: vigia.NewID(), Role: vigia.RoleAdmin}
	member := vigia.Principal{WorkspaceID: ws, UserID: vigia.NewID(), TokenID: vigia.NewID(), Role: vigia.RoleViewer, TeamIDs: []string{team}}
	same := func(what string, p vigia.Principal, id string) {
		t.Helper()
		pctx := vigia.WithPrincipal(ctx, p)
		want, werr := env.App.Trust.DatasetDetail(pctx, id)
		var wantSg any
		if werr == nil {
			sgs, err := env.App.Suggestions.Open(pctx, id)
			if err != nil {
				t.Fatalf("%s: suggestions: %v", what, err)
			}
			wantSg = sgs
		}
		got, gotSg, gerr := env.App.DatasetDetail(pctx, id)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: the services answer %v, the one read %v", what, werr, gerr)
		}
		if werr != nil {
			if !vigia.IsKind(werr, vigia.KindNotFound) || !vigia.IsKind(gerr, vigia.KindNotFound) {
				t.Fatalf("%s: %v, %v", what, werr, gerr)
			}
			return
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s: the one read differs:\n services %+v\n one read %+v", what, want, got)
		}
		if !reflect.DeepEqual(wantSg, any(gotSg)) {
			t.Fatalf("%s: suggestions differ:\n services %+v\n one read %+v", what, wantSg, gotSg)
		}
	}
	same("orders, token", token, orders)
	same("orders, admin", admin, orders)
	same("hidden, token", token, hidden)
	same("hidden, admin", admin, hidden)
	exec(`INSERT INTO domain_grants (domain_id, team_id, role) VALUES ($1, $2, 'member')`, dom, team)
	same("hidden, member of a granted team", member, hidden)
	same("another workspace's", token, foreign)
	same("unknown", token, vigia.NewID())
	same("not an id", token, "orders")

	// The detail's facts are not trivially empty: the critical issue blocks, the score
	// history, profile and suggestion are there (the failing writer weighs in decisions,
	// not in the score the brief shows).
	d, sgs, err := env.App.DatasetDetail(vigia.WithPrincipal(ctx, token), orders)
	if err != nil {
		t.Fatal(err)
	}
	if d.Trust == nil || len(d.Trust.Blockers) != 1 || len(d.ScoreHistory) != 1 || len(d.Issues) != 1 || d.RowCount == nil || len(sgs) != 1 {
		t.Fatalf("detail: trust %+v, history %d, issues %d, rows %v, suggestions %d", d.Trust, len(d.ScoreHistory), len(d.Issues), d.RowCount, len(sgs))
	}
	// Over HTTP: a change is on the next read; the hidden dataset and another
	// workspace's are 404 to the token.
	var out struct {
		Issues      []struct{ ID string } `json:"issues"`
		Suggestions []struct{ ID string } `json:"suggestions"`
	}
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+orders, tok, nil).JSON(t, &out)
	if len(out.Issues) != 1 || len(out.Suggestions) != 1 {
		t.Fatalf("before the change: %+v", out)
	}
	exec(`UPDATE issues SET status = 'resolved' WHERE dataset_id = $1`, orders)
	exec(`UPDATE suggestions SET status = 'dismissed' WHERE dataset_id = $1`, orders)
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+orders, tok, nil).JSON(t, &out)
	if len(out.Issues) != 0 || len(out.Suggestions) != 0 {
		t.Fatalf("after the change: %+v", out)
	}
	for _, id := range []string{hidden, foreign} {
		if r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+id, tok, nil); r.Status != http.StatusNotFound {
			t.Fatalf("GET %s: %d", id, r.Status)
		}
	}
}
