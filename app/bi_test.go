package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

type biRefreshOut struct {
	ID         string   `json:"id"`
	Tool       string   `json:"tool"`
	RefreshID  string   `json:"refresh_id"`
	Status     string   `json:"status"`
	Datasets   []string `json:"datasets"`
	Unmatched  []string `json:"unmatched"`
	Dashboards []struct {
		Name string `json:"name"`
	} `json:"dashboards"`
}

type biIssueOut struct {
	ID         string         `json:"id"`
	DatasetID  string         `json:"dataset_id"`
	Type       string         `json:"type"`
	Subtype    *string        `json:"subtype"`
	Severity   string         `json:"severity"`
	Status     string         `json:"status"`
	Detections int            `json:"detections"`
	Details    map[string]any `json:"details"`
}

// The BI refresh feed (issue 19): refreshes of a Power BI dataset reading two
// warehouse datasets with two dashboards. The dashboards become exposures in lineage
// and in an issue's impact; a failed refresh opens one bi_refresh issue (failed) that a
// repeated report updates and a successful refresh resolves; a refresh missing past
// the learned cadence opens it as delayed through the periodic check, without a new
// report.
func TestBIRefreshFeed(t *testing.T) {
	clock := newTestClock()
	env := apptest.MustStart(t, app.Config{Clock: clock})
	ws := env.MustWorkspace(t, "bi")
	token := env.MustToken(t, ws)
	viewer := env.MustSession(t, ws, vigia.RoleViewer)
	conn := env.MustConnection(t, ws, "warehouse")
	orders := env.MustDataset(t, ws, conn, "sales", "orders")
	customers := env.MustDataset(t, ws, conn, "sales", "customers")
	if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE connections SET lineage_namespace = 'postgres://db:5432',
		lineage_database = 'shop' WHERE id = $1`, conn); err != nil {
		t.Fatal(err)
	}
	other := env.MustWorkspace(t, "bi-other")
	otherToken := env.MustToken(t, other)
	foreign := env.MustDataset(t, other, env.MustConnection(t, other, "wh"), "sales", "orders")

	base := clock.Now().Add(-3 * time.Hour).Truncate(time.Second)
	post := func(cred, refreshID, status string, hour int, datasets ...map[string]any) *apptest.Response {
		t.Helper()
		start := base.Add(time.Duration(hour) * time.Hour)
		body := map[string]any{"tool": "powerbi", "bi_dataset_id": "ds-42", "bi_dataset_name": "Sales model",
			"refresh_id": refreshID, "status": status, "started_at": start,
			"datasets":   datasets,
			"dashboards": []any{map[string]any{"id": "r1", "name": "Revenue board", "url": "https://app.powerbi.com/r1"}, map[string]any{"name": "Orders board"}}}
		if status != "running" {
			body["ended_at"] = start.Add(4 * time.Minute)
		}
		return env.Do(t, http.MethodPost, "/api/v1/bi/refreshes", cred, body)
	}
	byID := map[string]any{"dataset_id": orders}
	byOL := map[string]any{"namespace": "postgres://db:5432", "name": "shop.sales.customers"}
	issues := func(status string) []biIssueOut {
		t.Helper()
		var out []biIssueOut
		res := env.Do(t, http.MethodGet, "/api/v1/issues?type=bi_refresh&status="+status, token, nil)
		if res.Status != http.StatusOK {
			t.Fatalf("issues: %d %s", res.Status, res.Body)
		}
		res.JSON(t, &out)
		return out
	}
	issue := func(id string) biIssueOut {
		t.Helper()
		var out biIssueOut
		env.Do(t, http.MethodGet, "/api/v1/issues/"+id, token, nil).JSON(t, &out)
		return out
	}

	// An API token may report refreshes (a marked write); datasets by id or OpenLineage
	// naming, a name of no dataset listed.
	var rf biRefreshOut
	res := post(token, "rf-1", "success", 0, byID, byOL, map[string]any{"namespace": "s3://lake", "name": "x.csv"})
	if res.Status != http.StatusCreated {
		t.Fatalf("first refresh: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &rf)
	if rf.Tool != "powerbi" || len(rf.Datasets) != 2 || rf.Datasets[0] != orders || rf.Datasets[1] != customers ||
		len(rf.Unmatched) != 1 || rf.Unmatched[0] != "s3://lake/x.csv" || len(rf.Dashboards) != 2 {
		t.Fatalf("first refresh: %+v", rf)
	}
	// The dashboards are exposures of both datasets in lineage.
	var lin struct {
		Exposures []struct {
			Name   string `json:"name"`
			Type   string `json:"type"`
			Direct bool   `json:"direct"`
		} `json:"exposures"`
	}
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+customers+"/lineage", token, nil).JSON(t, &lin)
	names := map[string]bool{}
	for _, e := range lin.Exposures {
		if e.Type == "dashboard" && e.Direct {
			names[e.Name] = true
		}
	}
	if !names["Revenue board"] || !names["Orders board"] {
		t.Fatalf("lineage exposures of customers: %+v", lin)
	}

	if res = post(token, "rf-2", "success", 1, byID, byOL); res.Status != http.StatusCreated {
		t.Fatalf("second refresh: %d %s", res.Status, res.Body)
	}
	if got := issues("open"); len(got) != 0 {
		t.Fatalf("issues while healthy: %+v", got)
	}
	// A failed refresh: one bi_refresh issue, failed, on the first dataset read, with
	// the BI dataset and its dashboards in its details.
	if res = post(token, "rf-3", "failed", 2, byID, byOL); res.Status != http.StatusCreated {
		t.Fatalf("failed refresh: %d %s", res.Status, res.Body)
	}
	open := issues("open")
	if len(open) != 1 || open[0].Subtype == nil || *open[0].Subtype != "failed" || open[0].DatasetID != orders || open[0].Severity != "critical" {
		t.Fatalf("after a failed refresh: %+v", open)
	}
	failed := issue(open[0].ID)
	if failed.Details["bi_dataset_id"] != "ds-42" || failed.Details["bi_dataset_name"] != "Sales model" ||
		len(failed.Details["dashboards"].([]any)) != 2 || failed.Details["refresh_id"] != "rf-3" {
		t.Fatalf("failed issue details: %+v", failed.Details)
	}
	// Its impact lists the dashboards as exposures.
	var blast struct {
		ExposuresCount int `json:"exposures_count"`
		Exposures      []struct {
			Node string `json:"node"`
			Name string `json:"name"`
		} `json:"exposures"`
	}
	env.Do(t, http.MethodGet, "/api/v1/issues/"+failed.ID+"/impact", token, nil).JSON(t, &blast)
	if blast.ExposuresCount < 2 || !strings.Contains(func() string {
		var b strings.Builder
		for _, e := range blast.Exposures {
			b.WriteString(e.Node + ":" + e.Name + ";")
		}
		return b.String()
	}(), "exposure:Revenue board;") {
		t.Fatalf("issue impact: %+v", blast)
	}
	// The same failure reported again updates it; no second issue.
	if res = post(token, "rf-3", "failed", 2, byID, byOL); res.Status != http.StatusOK {
		t.Fatalf("failed refresh again: %d %s", res.Status, res.Body)
	}
	if open = issues("open"); len(open) != 1 || open[0].ID != failed.ID {
		t.Fatalf("after the repeated failure: %+v", open)
	}
	// The next successful refresh resolves it.
	if res = post(token, "rf-4", "success", 3, byID, byOL); res.Status != http.StatusCreated {
		t.Fatalf("fourth refresh: %d %s", res.Status, res.Body)
	}
	if got := issue(failed.ID); got.Status != "resolved" || len(issues("open")) != 0 {
		t.Fatalf("after a successful refresh: %+v", got)
	}

	// No refresh past 1.5 cadences (one hour): the periodic check opens a delayed issue.
	check := func() {
		t.Helper()
		if _, err := env.App.BI.CheckDelayed(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(base.Add(3*time.Hour + 80*time.Minute))
	check()
	if got := issues("open"); len(got) != 0 {
		t.Fatalf("within the cadence: %+v", got)
	}
	clock.Set(base.Add(3*time.Hour + 100*time.Minute))
	check()
	check()
	open = issues("open")
	if len(open) != 1 || open[0].ID == failed.ID || *open[0].Subtype != "delayed" || open[0].Severity != "warning" || open[0].Detections != 1 {
		t.Fatalf("past the cadence: %+v", open)
	}
	delayed := issue(open[0].ID)
	if delayed.Details["expected_by"] == nil || delayed.Details["refresh_id"] != "rf-4" {
		t.Fatalf("delayed details: %+v", delayed.Details)
	}
	// A refresh that starts does not resolve it; its success does.
	if res = post(token, "rf-5", "running", 5, byID, byOL); res.Status != http.StatusCreated {
		t.Fatalf("running refresh: %d %s", res.Status, res.Body)
	}
	if got := issue(delayed.ID); got.Status != "open" {
		t.Fatalf("while running: %+v", got)
	}
	if res = post(token, "rf-5", "success", 5, byID, byOL); res.Status != http.StatusOK {
		t.Fatalf("refresh done: %d %s", res.Status, res.Body)
	}
	if got := issue(delayed.ID); got.Status != "resolved" {
		t.Fatalf("after the late refresh succeeded: %+v", got)
	}

	// Lists and filters; another workspace sees nothing.
	var list []biRefreshOut
	res = env.Do(t, http.MethodGet, "/api/v1/bi/refreshes?limit=2&tool=powerbi&dataset_id="+customers, viewer, nil)
	res.JSON(t, &list)
	if res.Status != http.StatusOK || res.Header.Get("X-Total-Count") != "5" || len(list) != 2 || list[0].RefreshID != "rf-5" {
		t.Fatalf("refreshes: %d %s %s", res.Status, res.Header.Get("X-Total-Count"), res.Body)
	}
	res = env.Do(t, http.MethodGet, "/api/v1/bi/refreshes?status=failed", token, nil)
	if res.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("failed refreshes: %s", res.Body)
	}
	if res = env.Do(t, http.MethodGet, "/api/v1/bi/refreshes", otherToken, nil); res.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("another workspace's refreshes: %s", res.Body)
	}

	// Refused: another workspace's dataset (404), a viewer (403), bad fields (422
	// without echoing them); nothing is recorded.
	if res = post(token, "rf-x", "success", 6, map[string]any{"dataset_id": foreign}); res.Status != http.StatusNotFound {
		t.Fatalf("foreign dataset: %d %s", res.Status, res.Body)
	}
	if res = post(viewer, "rf-y", "success", 6, byID); res.Status != http.StatusForbidden {
		t.Fatalf("viewer: %d %s", res.Status, res.Body)
	}
	res = env.Do(t, http.MethodPost, "/api/v1/bi/refreshes", token, map[string]any{"tool": "excel-secret-tool", "bi_dataset_id": "d",
		"bi_dataset_name": "n", "refresh_id": "r", "status": "done", "started_at": base})
	if res.Status != http.StatusUnprocessableEntity || strings.Contains(string(res.Body), "excel-secret-tool") ||
		!strings.Contains(string(res.Body), `"tool"`) || !strings.Contains(string(res.Body), `"status"`) {
		t.Fatalf("bad fields: %d %s", res.Status, res.Body)
	}
	if res = env.Do(t, http.MethodGet, "/api/v1/bi/refreshes", token, nil); res.Header.Get("X-Total-Count") != "5" {
		t.Fatalf("refused reports were recorded: %s", res.Header.Get("X-Total-Count"))
	}
}
