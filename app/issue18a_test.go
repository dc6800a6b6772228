package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/app"
)

// A weekly blackout window (every day around now, UTC) defers the connection's due
// scheduled scan until the window is gone, refuses a manual scan and a label-quality
// run with 409 blackout_active, and is validated (weekly and absolute at once, unknown
// day, equal times, unknown zone); its zone defaults to the connection's scan zone.
func TestWeeklyBlackoutDefersScheduledScansAndRefusesManualOnes(t *testing.T) {
	e := newWF(t, "blackout-weekly")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE pedidos (id integer PRIMARY KEY, estado text, classe text)`)
	src.exec(t, `INSERT INTO pedidos SELECT g, 'e' || (g % 3), CASE WHEN g % 4 = 0 THEN 'b' ELSE 'a' END FROM generate_series(1, 40) g`)
	conn := e.connect(t, "erp", "postgres", src.dsn)
	sc := e.scan(t, conn)
	ds := e.dataset(t, conn, "pedidos")
	path := "/api/v1/connections/" + conn + "/blackouts"
	days := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	now := time.Now().UTC()
	hhmm := func(t time.Time) string { return t.Format("15:04") }
	weekly := map[string]any{"weekdays": days, "start_time": hhmm(now.Add(-time.Hour)), "end_time": hhmm(now.Add(time.Hour)), "timezone": "UTC"}

	for name, w := range map[string]map[string]any{
		"BothKinds":   {"weekly": weekly, "starts_at": now.Format(time.RFC3339), "ends_at": now.Add(time.Hour).Format(time.RFC3339)},
		"UnknownDay":  {"weekly": map[string]any{"weekdays": []string{"funday"}, "start_time": "01:00", "end_time": "02:00"}},
		"EqualTimes":  {"weekly": map[string]any{"weekdays": []string{"mon"}, "start_time": "01:00", "end_time": "01:00"}},
		"UnknownZone": {"weekly": map[string]any{"weekdays": []string{"mon"}, "start_time": "01:00", "end_time": "02:00", "timezone": "Mars/Olympus"}},
		"Neither":     {"note": "x"},
	} {
		if r := e.Do(t, http.MethodPut, path, e.admin, map[string]any{"windows": []any{w}}); r.Status != 422 || strings.Contains(string(r.Body), "Mars") {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	// The connection's zone is the default.
	r := e.Do(t, http.MethodPut, path, e.admin, map[string]any{"windows": []any{
		map[string]any{"weekly": map[string]any{"weekdays": []string{"sat"}, "start_time": "22:00", "end_time": "02:00"}}}})
	if r.Status != 200 {
		t.Fatalf("default zone: %d %s", r.Status, r.Body)
	}
	connOut := e.get(t, "/api/v1/connections/"+conn, e.admin)
	list, _ := e.list(t, path, e.admin)
	if wk, _ := list[0]["weekly"].(map[string]any); wk == nil || wk["timezone"] != connOut["scan_timezone"] || wk["end_time"] != "02:00" {
		t.Fatalf("default zone: %v (connection %v)", list, connOut["scan_timezone"])
	}

	if r := e.Do(t, http.MethodPut, path, e.admin, map[string]any{"windows": []any{map[string]any{"weekly": weekly, "note": "lote"}}}); r.Status != 200 {
		t.Fatalf("put weekly: %d %s", r.Status, r.Body)
	}
	list, total := e.list(t, path, e.tok)
	if total != "1" {
		t.Fatalf("windows %v", list)
	}
	starts, _ := time.Parse(time.RFC3339, list[0]["starts_at"].(string))
	ends, _ := time.Parse(time.RFC3339, list[0]["ends_at"].(string))
	if starts.After(now) || !ends.After(now) || ends.Sub(starts) != 2*time.Hour {
		t.Fatalf("occurrence in force %s-%s around %s", starts, ends, now)
	}

	// A manual scan is refused, with the window's end and the stable code.
	r = e.Do(t, http.MethodPost, "/api/v1/scans", e.tok, map[string]any{"connection_id": conn})
	var refused map[string]any
	r.JSON(t, &refused)
	if r.Status != 409 || refused["code"] != "blackout_active" {
		t.Fatalf("manual scan in a window: %d %s", r.Status, r.Body)
	}
	// So is a label-quality analysis (the configuration ran before the window).
	e.exec(t, `INSERT INTO label_quality (dataset_id, workspace_id, label_column, feature_columns, updated_by, updated_at)
		VALUES ($1, $2, 'classe', '{estado}', 'test', now())`, ds, e.ws)
	if r := e.Do(t, http.MethodPost, "/api/v1/datasets/"+ds+"/label-quality/run", e.member, nil); r.Status != 409 || !strings.Contains(string(r.Body), "blackout_active") {
		t.Fatalf("label quality in a window: %d %s", r.Status, r.Body)
	}

	// The schedule is due (00:00 UTC has passed today) but waits for the window.
	zero, on, utc := 0, true, "UTC"
	if r := e.Do(t, http.MethodPatch, "/api/v1/connections/"+conn+"/schedule", e.admin,
		map[string]any{"hour": zero, "minute": zero, "enabled": on, "timezone": utc}); r.Status != 200 {
		t.Fatalf("schedule: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	scheduled := func() int {
		var n int
		if err := e.App.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM scans WHERE connection_id = $1 AND trigger = 'schedule'`, conn).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 2 {
		if _, err := e.App.Scans.EnqueueDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := scheduled(); n != 0 {
		t.Fatalf("scheduled scans queued during the window: %d", n)
	}
	// The window gone, the deferred schedule fires once.
	if r := e.Do(t, http.MethodPut, path, e.admin, map[string]any{"windows": []any{}}); r.Status != 200 {
		t.Fatalf("clear: %d", r.Status)
	}
	for range 2 {
		if _, err := e.App.Scans.EnqueueDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := scheduled(); n != 1 {
		t.Fatalf("scheduled scans after the window: %d", n)
	}
	_ = sc
}

// Label quality is analysed again after every scan that profiles a configured dataset:
// the stored result says trigger scan with the scan's id and counts what the source
// counts now; a retried consumer reads nothing again; the PII gate still blocks.
func TestLabelQualityAnalysedAgainAfterScans(t *testing.T) {
	e := newWF(t, "labels-after")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE treino (id integer PRIMARY KEY, plano text, idade integer, churn text)`)
	var rows []string
	for i := 1; i <= 120; i++ {
		rows = append(rows, fmt.Sprintf("(%d, '%s', %d, '%s')", i, []string{"basico", "pro", "max"}[i%3], 20+i%7, []string{"sim", "nao"}[i%2]))
	}
	src.exec(t, "INSERT INTO treino VALUES "+strings.Join(rows, ", "))
	conn := e.connect(t, "ml", "postgres", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "treino")
	path := "/api/v1/datasets/" + ds + "/label-quality"
	var out labelQualityOut
	if r := e.Do(t, http.MethodPut, path, e.member, map[string]any{"label_column": "churn", "feature_columns": []string{"plano", "idade"}}); r.Status != 200 {
		t.Fatalf("configure: %d %s", r.Status, r.Body)
	}
	var first struct {
		LastResult struct {
			Trigger string  `json:"trigger"`
			ScanID  *string `json:"scan_id"`
		} `json:"last_result"`
	}
	e.Do(t, http.MethodGet, path, e.tok, nil).JSON(t, &first)
	if first.LastResult.Trigger != "manual" || first.LastResult.ScanID != nil {
		t.Fatalf("manual result: %+v", first.LastResult)
	}

	// New rows, some unlabelled and some contradicting identical features.
	src.exec(t, `INSERT INTO treino SELECT g, 'pro', 21, CASE WHEN g % 5 = 0 THEN NULL WHEN g % 2 = 0 THEN 'sim' ELSE 'nao' END
		FROM generate_series(121, 180) g`)
	sc := e.scan(t, conn)
	var after struct {
		LastResult struct {
			Trigger        string  `json:"trigger"`
			ScanID         *string `json:"scan_id"`
			Rows           int64   `json:"rows"`
			UnlabelledRows int64   `json:"unlabelled_rows"`
			ConflictGroups int64   `json:"conflict_groups"`
			ConflictRows   int64   `json:"conflict_rows"`
		} `json:"last_result"`
	}
	e.Do(t, http.MethodGet, path, e.tok, nil).JSON(t, &after)
	lr := after.LastResult
	var rowsN, unlabelled, groups, groupRows int64
	if err := src.db.QueryRow(`SELECT count(*), count(*) - count(churn) FROM treino`).Scan(&rowsN, &unlabelled); err != nil {
		t.Fatal(err)
	}
	if err := src.db.QueryRow(`SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM treino WHERE churn IS NOT NULL
		GROUP BY plano, idade HAVING count(DISTINCT churn) > 1) x`).Scan(&groups, &groupRows); err != nil {
		t.Fatal(err)
	}
	if lr.Trigger != "scan" || lr.ScanID == nil || *lr.ScanID != sc.ID || lr.Rows != rowsN || lr.UnlabelledRows != unlabelled ||
		lr.ConflictGroups != groups || lr.ConflictRows != groupRows || rowsN != 180 {
		t.Fatalf("after the scan: %+v; source rows %d unlabelled %d conflicts %d/%d", lr, rowsN, unlabelled, groups, groupRows)
	}
	// A retry of the consumer for the same scan reads nothing again.
	src.exec(t, `DELETE FROM treino WHERE id > 150`)
	actx := app.AsAdmin(context.Background(), e.ws, "test")
	if err := e.App.LabelQuality.AfterScan(actx, e.ws, conn, sc.ID); err != nil {
		t.Fatal(err)
	}
	e.Do(t, http.MethodGet, path, e.tok, nil).JSON(t, &after)
	if after.LastResult.Rows != 180 {
		t.Fatalf("retry analysed again: %+v", after.LastResult)
	}
	// A PII label: the scan's consumer stores no result.
	e.exec(t, `UPDATE label_quality SET label_column = 'plano' WHERE dataset_id = $1`, ds)
	if r := e.Do(t, http.MethodPut, "/api/v1/datasets/"+ds+"/sensitivity/plano", e.member, map[string]any{"level": "pii"}); r.Status != 200 {
		t.Fatalf("sensitivity: %d %s", r.Status, r.Body)
	}
	e.scan(t, conn)
	e.Do(t, http.MethodGet, path, e.tok, nil).JSON(t, &out)
	if out.PIIGate.Status != "blocked" || out.LastResult != nil {
		t.Fatalf("pii label after a scan: %+v", out)
	}
}
