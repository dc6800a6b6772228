package store_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/orchestrator"
)

func TestOrchestratorRuns(t *testing.T) {
	f := newFx(t)
	s := f.db.Orchestrators()
	ws := f.workspace().WorkspaceID
	other := f.workspace().WorkspaceID
	conn := f.connection(ws, "wh")
	ds := f.tables(ws, conn, "orders", "customers")
	foreign := f.tables(other, f.connection(other, "wh"), "orders")[0]
	put := func(ws, runID, status string, n int, inputs, outputs []string) (orchestrator.Run, bool) {
		t.Helper()
		end := at(n + 1)
		r, created, err := s.PutRun(f.ctx, admin(ws), orchestrator.Run{ID: vigia.NewID(), WorkspaceID: ws, Orchestrator: "airflow",
			Pipeline: "load_orders", RunID: runID, Status: status, StartedAt: at(n), EndedAt: &end, Inputs: inputs,
			Outputs: outputs, Unmatched: []string{}, Facets: json.RawMessage(`{"k": 1}`), ReceivedAt: at(n), UpdatedAt: at(n)})
		f.must(err)
		return r, created
	}
	first, created := put(ws, "r1", orchestrator.StatusRunning, 0, []string{ds[1]}, []string{ds[0]})
	if !created || first.Status != "running" || !slices.Equal(first.Outputs, []string{ds[0]}) || !slices.Equal(first.Inputs, []string{ds[1]}) {
		t.Fatalf("first report: created %v, %+v", created, first)
	}
	// The same run reported again replaces it, keeping its id; a foreign dataset id is
	// never linked.
	again, created := put(ws, "r1", orchestrator.StatusSuccess, 0, nil, []string{ds[0], foreign})
	if created || again.ID != first.ID || again.Status != "success" || len(again.Inputs) != 0 || !slices.Equal(again.Outputs, []string{ds[0]}) {
		t.Fatalf("second report: created %v, %+v", created, again)
	}
	put(ws, "r2", orchestrator.StatusFailed, 60, nil, []string{ds[0]})
	put(ws, "r3", orchestrator.StatusSuccess, 120, []string{ds[0]}, []string{ds[1]})
	put(other, "r1", orchestrator.StatusSuccess, 0, nil, []string{foreign})

	l, err := s.Runs(f.ctx, admin(ws), orchestrator.RunFilter{Page: vigia.Page{Limit: 2}})
	f.must(err)
	if l.Total != 3 || len(l.Items) != 2 || l.Items[0].RunID != "r3" || l.Items[1].RunID != "r2" {
		t.Fatalf("runs page: %d %+v", l.Total, names(l.Items, func(r orchestrator.Run) string { return r.RunID }))
	}
	failed := "failed"
	l, err = s.Runs(f.ctx, admin(ws), orchestrator.RunFilter{Status: &failed, Page: vigia.Page{Limit: 10}})
	f.must(err)
	if l.Total != 1 || l.Items[0].RunID != "r2" {
		t.Fatalf("failed runs: %+v", l)
	}
	l, err = s.Runs(f.ctx, admin(ws), orchestrator.RunFilter{DatasetID: &ds[1], Page: vigia.Page{Limit: 10}})
	f.must(err)
	if l.Total != 1 || l.Items[0].RunID != "r3" {
		t.Fatalf("runs of a dataset: %+v", l)
	}
	l, err = s.Runs(f.ctx, admin(ws), orchestrator.RunFilter{DatasetID: &foreign, Page: vigia.Page{Limit: 10}})
	f.must(err)
	if l.Total != 0 {
		t.Fatalf("another workspace's dataset: %+v", l)
	}
	// Runs link to the scan that profiled what they wrote next.
	profile := func(scanID string, seq, n int) {
		f.exec(`INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, columns, metrics, profiled_at)
			VALUES ($1, $2, $3, $4, 10, 'standard', '[]', '{}', $5)`, ds[0], scanID, ws, seq, at(n))
	}
	scan1, scan2 := f.newScan(ws, conn, 1), f.newScan(ws, conn, 2)
	profile(scan1, 1, 30)
	profile(scan2, 2, 200)
	for _, c := range []struct{ scan, run string }{{scan1, "r1"}, {scan2, "r2"}} {
		l, err = s.Runs(f.ctx, admin(ws), orchestrator.RunFilter{ScanID: &c.scan, Page: vigia.Page{Limit: 10}})
		f.must(err)
		if l.Total != 1 || l.Items[0].RunID != c.run || len(l.Items[0].NextScans) != 1 || l.Items[0].NextScans[0].ScanID != c.scan ||
			l.Items[0].NextScans[0].DatasetID != ds[0] {
			t.Fatalf("runs before scan %s: %+v", c.run, l)
		}
	}
	w, err := s.RunsWriting(f.ctx, admin(ws), []string{ds[0], ds[1], foreign}, 50)
	f.must(err)
	runID := func(r orchestrator.Run) string { return r.RunID }
	if got := names(w[ds[0]], runID); !slices.Equal(got, []string{"r2", "r1"}) || len(w) != 2 {
		t.Fatalf("runs writing orders: %v (%d datasets)", got, len(w))
	}
	if got := names(w[ds[1]], runID); !slices.Equal(got, []string{"r3"}) {
		t.Fatalf("runs writing customers: %v", got)
	}
	if w, _ = s.RunsWriting(f.ctx, admin(ws), []string{ds[0]}, 1); len(w[ds[0]]) != 1 || w[ds[0]][0].RunID != "r2" {
		t.Fatalf("latest run per pipeline: %+v", w)
	}
	if w, _ = s.RunsWriting(f.ctx, admin(other), []string{ds[0]}, 50); len(w) != 0 {
		t.Fatalf("another workspace's runs: %+v", w)
	}
	live, err := s.LiveDatasets(f.ctx, ws, []string{ds[0], foreign, ds[1]})
	f.must(err)
	if len(live) != 2 || !live[ds[0]] || !live[ds[1]] {
		t.Fatalf("live datasets: %v", live)
	}
	// A restricted dataset leaves the runs' lists, and filters, of those who cannot see it.
	f.restrict(ws, []string{ds[1]})
	l, err = s.Runs(f.ctx, member(ws), orchestrator.RunFilter{Page: vigia.Page{Limit: 10}})
	f.must(err)
	if l.Total != 3 || l.Items[0].RunID != "r3" || len(l.Items[0].Inputs) != 1 || len(l.Items[0].Outputs) != 0 {
		t.Fatalf("runs of a member: %+v", l.Items[0])
	}
	if l, _ = s.Runs(f.ctx, member(ws), orchestrator.RunFilter{DatasetID: &ds[1], Page: vigia.Page{Limit: 10}}); l.Total != 0 {
		t.Fatalf("filter by a restricted dataset: %+v", l)
	}
	if w, _ = s.RunsWriting(f.ctx, member(ws), []string{ds[1]}, 50); len(w[ds[1]]) != 1 || len(w[ds[1]][0].Outputs) != 0 {
		t.Fatalf("runs writing a restricted dataset, for a member: %+v", w)
	}
}

func admin(ws string) catalog.Viewer {
	return catalog.Viewer{WorkspaceID: ws, Admin: true, TeamIDs: []string{}}
}

// A writer's signal is written once per key with no scan; judged again it is left
// alone (no row rewritten), and it takes the pipeline issue when that opens. A signal
// with no scan and no writer is refused by the table itself.
func TestPipelineSignals(t *testing.T) {
	f := newFx(t)
	s := f.db.Orchestrators()
	ws := f.workspace().WorkspaceID
	ds := f.tables(ws, f.connection(ws, "wh"), "orders")[0]
	cadence := 3600.0
	sg := orchestrator.PipelineSignal{WorkspaceID: ws, DatasetID: ds, Orchestrator: "airflow", Pipeline: "load", RunID: "r4",
		Metric: orchestrator.MetricRunInterval, Observed: 6000, Baseline: &cadence, Threshold: 5400, Severity: "warning", At: at(1)}
	f.must(s.RecordPipelineSignal(f.ctx, sg))
	var ctid string
	if err := f.tx.QueryRow(f.ctx, `SELECT ctid::text FROM signals WHERE dataset_id = $1`, ds).Scan(&ctid); err != nil {
		t.Fatal(err)
	}
	sg.Observed, sg.At = 6060, at(2)
	f.must(s.RecordPipelineSignal(f.ctx, sg))
	var again string
	var issueID *string
	var scanID *string
	var source string
	var observed float64
	if err := f.tx.QueryRow(f.ctx, `SELECT ctid::text, issue_id::text, scan_id::text, source, observed FROM signals WHERE dataset_id = $1`, ds).
		Scan(&again, &issueID, &scanID, &source, &observed); err != nil {
		t.Fatal(err)
	}
	if n := f.count(`SELECT count(*) FROM signals WHERE dataset_id = $1`, ds); n != 1 || again != ctid || issueID != nil || scanID != nil ||
		source != "orchestrator" || observed != 6000 {
		t.Fatalf("judged again: %d rows, rewritten %v, issue %v, scan %v, source %s, observed %v", n, again != ctid, issueID, scanID, source, observed)
	}
	by := at(3)
	opened, err := s.RaisePipelineIssue(f.ctx, orchestrator.PipelineProblem{WorkspaceID: ws, DatasetID: ds, Orchestrator: "airflow",
		Pipeline: "load", Subtype: orchestrator.SubtypeLate, Severity: "warning", RunID: "r4", ExpectedBy: &by, At: at(3), Origin: "test"})
	f.must(err)
	f.must(s.RecordPipelineSignal(f.ctx, sg))
	var open string
	if err := f.tx.QueryRow(f.ctx, `SELECT id::text FROM issues WHERE dataset_id = $1 AND type = 'pipeline'`, ds).Scan(&open); err != nil || !opened {
		t.Fatalf("issue: %v %v", opened, err)
	}
	if err := f.tx.QueryRow(f.ctx, `SELECT issue_id::text FROM signals WHERE dataset_id = $1`, ds).Scan(&issueID); err != nil ||
		issueID == nil || *issueID != open {
		t.Fatalf("the signal does not name the issue: %v %v", issueID, err)
	}
	f.exec(`SAVEPOINT unnamed_writer`)
	if _, err := f.tx.Exec(f.ctx, `INSERT INTO signals (id, workspace_id, dataset_id, kind, metric, anomalous, created_at, source)
		VALUES ($1, $2, $3, 'pipeline', 'run_failures', true, now(), 'orchestrator')`, vigia.NewID(), ws, ds); err == nil ||
		!strings.Contains(err.Error(), "signals_pipeline_named") {
		t.Fatalf("a scan-less signal without its writer: %v", err)
	}
	f.exec(`ROLLBACK TO SAVEPOINT unnamed_writer`)
	f.exec(`SAVEPOINT scan_less_scan_signal`)
	if _, err := f.tx.Exec(f.ctx, `INSERT INTO signals (id, workspace_id, dataset_id, kind, metric, anomalous, created_at)
		VALUES ($1, $2, $3, 'anomaly', 'volume', true, now())`, vigia.NewID(), ws, ds); err == nil ||
		!strings.Contains(err.Error(), "signals_source_scan") {
		t.Fatalf("a scan signal without its scan: %v", err)
	}
	f.exec(`ROLLBACK TO SAVEPOINT scan_less_scan_signal`)
}
