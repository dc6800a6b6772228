package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

func TestScansLifecycle(t *testing.T) {
	f := newFx(t)
	s := f.db.Scans()
	ws := f.workspace().WorkspaceID
	other := f.workspace().WorkspaceID
	conn := f.connection(ws, "warehouse")
	if _, ok, err := s.ActiveScanForConnection(f.ctx, conn); err != nil || ok {
		t.Fatalf("an active scan before any: %v, %v", ok, err)
	}
	ids := []string{f.newScan(ws, conn, 1), f.newScan(ws, conn, 2), f.newScan(ws, conn, 3)}
	f.fails(vigia.KindNotFound, "a scan of a connection that does not exist", func(ctx ctxT) error {
		return s.CreateScan(ctx, scan.Scan{ID: vigia.NewID(), WorkspaceID: ws, ConnectionID: vigia.NewID(), Status: "queued", Trigger: "manual", CreatedAt: t0})
	})
	f.fails(vigia.KindConflict, "the same scan id twice", func(ctx ctxT) error {
		return s.CreateScan(ctx, scan.Scan{ID: ids[0], WorkspaceID: ws, ConnectionID: conn, Status: "queued", Trigger: "manual", CreatedAt: t0})
	})

	p1, err := s.Scans(f.ctx, ws, vigia.Page{Limit: 2})
	f.must(err)
	p2, err := s.Scans(f.ctx, ws, vigia.Page{Limit: 2, Offset: 2})
	f.must(err)
	id := func(s scan.Scan) string { return s.ID }
	if p1.Total != 3 || !slices.Equal(append(names(p1.Items, id), names(p2.Items, id)...), []string{ids[2], ids[1], ids[0]}) {
		t.Fatalf("scans newest first: total %d", p1.Total)
	}
	if p1.Items[0].ConnectionName != "warehouse" || p1.Items[0].RequestedBy != "tester" {
		t.Fatalf("listed scan %+v", p1.Items[0])
	}
	if l, _ := s.Scans(f.ctx, other, vigia.Page{Limit: 10}); l.Total != 0 || len(l.Items) != 0 {
		t.Fatalf("another workspace lists %d scans", l.Total)
	}
	f.fails(vigia.KindNotFound, "another workspace's scan", func(ctx ctxT) error { _, err := s.ScanByID(ctx, other, ids[0]); return err })
	f.fails(vigia.KindNotFound, "an unknown scan for the worker", func(ctx ctxT) error { _, err := s.ScanForRun(ctx, vigia.NewID()); return err })

	if n, err := s.CountActiveScans(f.ctx, ws); err != nil || n != 3 {
		t.Fatalf("active scans %d, %v", n, err)
	}
	if a, ok, err := s.ActiveScanForConnection(f.ctx, conn); err != nil || !ok || a.ID != ids[2] {
		t.Fatalf("newest active scan %v %v %v", a.ID, ok, err)
	}

	f.must(s.SetScanJob(f.ctx, ids[0], "job-1"))
	run, err := s.MarkRunning(f.ctx, ids[0], at(10))
	f.must(err)
	run, err = s.MarkRunning(f.ctx, ids[0], at(11)) // a retry counts the attempt and keeps the start
	f.must(err)
	if run.Status != "running" || run.Attempt != 2 || !run.StartedAt.Equal(at(10)) {
		t.Fatalf("running scan %+v", run)
	}
	f.must(s.UpdateProgress(f.ctx, ids[0], 5, 3, 1, vigia.Ptr("public.orders")))
	got, err := s.ScanByID(f.ctx, ws, ids[0])
	f.must(err)
	if got.DatasetsTotal != 5 || got.DatasetsDone != 3 || got.DatasetsFailed != 1 || *got.CurrentDataset != "public.orders" {
		t.Fatalf("progress %+v", got)
	}
	f.must(s.FinishScan(f.ctx, ids[0], "failed", vigia.Ptr("source_unreachable"), at(12)))
	f.must(s.FinishScan(f.ctx, ids[1], "cancelled", nil, at(12)))
	f.must(s.FinishScan(f.ctx, ids[2], "succeeded", nil, at(12)))
	got, _ = s.ScanByID(f.ctx, ws, ids[0])
	if got.Status != "failed" || *got.ErrorCode != "source_unreachable" || !got.FinishedAt.Equal(at(12)) || got.CurrentDataset != nil {
		t.Fatalf("finished scan %+v", got)
	}
	if n, _ := s.CountActiveScans(f.ctx, ws); n != 0 {
		t.Fatalf("%d active scans after all finished", n)
	}
	f.fails(vigia.KindInternal, "a status the contract does not know", func(ctx ctxT) error {
		return s.FinishScan(ctx, ids[0], "exploded", nil, at(13))
	})
	if c, _ := f.db.Connections().ConnectionByRef(f.ctx, ws, conn); c.LastScanStatus == nil || *c.LastScanStatus != "succeeded" {
		t.Fatalf("the connection's last scan status %v", c.LastScanStatus)
	}
}

func TestScanSyncDatasets(t *testing.T) {
	f := newFx(t)
	s := f.db.Scans()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ids := f.tables(ws, conn, "orders", "customers")
	reads := int64(1000)
	refs, err := s.SyncDatasets(f.ctx, ws, conn, []source.Table{
		{Schema: "public", Name: "orders", Kind: "table", Reads: &reads, Columns: []source.Column{{Name: "other", Position: 1, DataType: "text"}}},
		{Schema: "public", Name: "orders_v", Kind: "view", ViewDefinition: "SELECT * FROM orders",
			DependsOn: []source.TableName{{Schema: "public", Name: "orders"}}, DependsOnKnown: true},
	}, at(5))
	f.must(err)
	if len(refs) != 2 || refs[0].ID != ids[0] || refs[1].Kind != "view" {
		t.Fatalf("synced refs %+v", refs)
	}
	// A known dataset keeps its columns until its next profile; the vanished one is dropped.
	d, err := f.db.Catalog().DatasetByID(f.ctx, v, ids[0])
	f.must(err)
	if got := names(d.Columns, func(c catalogColumn) string { return c.Name }); !slices.Equal(got, []string{"id", "name"}) {
		t.Fatalf("columns of a known dataset after discovery: %v", got)
	}
	f.fails(vigia.KindNotFound, "a dropped dataset", func(ctx ctxT) error { _, err := f.db.Catalog().DatasetByID(ctx, v, ids[1]); return err })
	if c, _ := f.db.Connections().ConnectionByRef(f.ctx, ws, conn); c.DatasetsCount != 2 {
		t.Fatalf("live datasets %d", c.DatasetsCount)
	}
	// It comes back with the same id when discovered again.
	back := f.tables(ws, conn, "customers")
	if back[0] != ids[1] {
		t.Fatalf("a rediscovered dataset has a new id")
	}
	f.fails(vigia.KindInternal, "a kind the schema refuses", func(ctx ctxT) error {
		_, err := s.SyncDatasets(ctx, ws, conn, []source.Table{{Schema: "public", Name: "x", Kind: "synonym"}}, at(6))
		return err
	})
}

func TestScanResultsAndReads(t *testing.T) {
	f := newFx(t)
	s := f.db.Scans()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders")[0]
	st, err := s.PrevState(f.ctx, ds)
	f.must(err)
	if st.Seq != 0 || st.Score != nil || st.Verdict != nil || len(st.History) != 0 {
		t.Fatalf("state before a profile %+v", st)
	}
	if _, ok, err := s.LatestProfile(f.ctx, ds); ok || err != nil {
		t.Fatalf("a profile before any: %v %v", ok, err)
	}
	if _, ok, err := s.LatestVerdict(f.ctx, ds); ok || err != nil {
		t.Fatalf("a verdict before any: %v %v", ok, err)
	}
	sc1, sc2 := f.newScan(ws, conn, 1), f.newScan(ws, conn, 2)
	f.must(s.RecordFailure(f.ctx, sc1, ws, ds, "timeout", at(1)))
	f.must(s.RecordFailure(f.ctx, sc1, ws, ds, "permission_denied", at(1))) // an attempt again replaces it
	fl, err := s.ScanFailures(f.ctx, v, sc1)
	f.must(err)
	if len(fl) != 1 || fl[0].Code != "permission_denied" || fl[0].Name != "public.orders" {
		t.Fatalf("failures %+v", fl)
	}
	f.result(ws, ds, sc1, 1, 80, nil)
	if fl, _ := s.ScanFailures(f.ctx, v, sc1); len(fl) != 0 {
		t.Fatalf("a saved result leaves its failure: %+v", fl)
	}
	anomaly := vigia.NewID()
	added := "text"
	f.result(ws, ds, sc2, 2, 70, func(r *scan.DatasetResult) {
		r.Columns = append(r.Columns, source.Column{Name: "email", Position: 3, DataType: "text", Class: "text"})
		r.NewIssues = []scan.NewIssue{{ID: anomaly, Type: "anomaly", Severity: "warning", Title: "t", Metric: "volume"}}
		r.SchemaChanges = []scan.SchemaChange{{Change: "add", Column: "email", ToType: &added}}
		r.Signals = []scan.Signal{{ID: vigia.NewID(), Kind: "anomaly", Metric: "volume", Observed: vigia.Ptr(200.0), Anomalous: true, IssueID: &anomaly, CI95: &[2]float64{1, 2}}}
		r.Events = []scan.Event{{ID: vigia.NewID(), Type: "issue.opened", SubjectType: "issue", SubjectID: anomaly, IdempotencyKey: "k1", Payload: map[string]any{"a": 1}},
			{ID: vigia.NewID(), Type: "issue.opened", SubjectType: "issue", SubjectID: anomaly, IdempotencyKey: "k1", Payload: map[string]any{}}}
	})
	if n := f.count(`SELECT count(*) FROM events WHERE workspace_id = $1`, ws); n != 1 {
		t.Fatalf("an idempotency key twice gives %d events", n)
	}
	f.fails(vigia.KindConflict, "the same scan's result twice", func(ctx ctxT) error {
		return s.SaveDatasetResult(ctx, scan.DatasetResult{DatasetID: ds, WorkspaceID: ws, ScanID: sc2, Seq: 3, At: at(3),
			Profile: &source.TableProfile{}, Metrics: scan.Metrics{}})
	})
	if ok, err := s.HasProfile(f.ctx, ds, sc2); err != nil || !ok {
		t.Fatalf("has profile %v %v", ok, err)
	}
	if ok, _ := s.HasProfile(f.ctx, ds, f.newScan(ws, conn, 4)); ok {
		t.Fatal("a profile for a scan that saved none")
	}

	st, err = s.PrevState(f.ctx, ds)
	f.must(err)
	if st.Seq != 2 || len(st.Columns) != 3 || len(st.History) != 2 || st.History[0]["volume"] != 100 || *st.Score.Score != 70 ||
		len(st.Issues) != 1 || st.Issues[0].ID != anomaly {
		t.Fatalf("state after two profiles %+v", st)
	}
	p, ok, err := s.LatestProfile(f.ctx, ds)
	f.must(err)
	if !ok || p.ScanID != sc2 || p.RowCount != 200 || !p.RowCountExact || len(p.Columns) != 3 || p.Columns[1].Profile.NullRate != 0.01 {
		t.Fatalf("latest profile %+v", p)
	}
	scores, err := s.LatestScores(f.ctx, ds, 5)
	f.must(err)
	if len(scores) != 2 || scores[0].Seq != 2 || *scores[1].Score.Score != 80 {
		t.Fatalf("scores newest first %+v", scores)
	}
	hist, err := s.MetricHistory(f.ctx, ds, 1)
	f.must(err)
	if len(hist) != 1 || hist[0]["volume"] != 200 {
		t.Fatalf("last metric %+v", hist)
	}
	vr, ok, err := s.LatestVerdict(f.ctx, ds)
	f.must(err)
	if !ok || vr.ScanID != sc2 || vr.Result.Verdict != "pass" {
		t.Fatalf("latest verdict %+v", vr)
	}
	ch, err := s.SchemaChanges(f.ctx, ds)
	f.must(err)
	if len(ch) != 1 || ch[0].Column != "email" || *ch[0].ToType != "text" {
		t.Fatalf("schema changes %+v", ch)
	}
	open, err := s.OpenIssues(f.ctx, ds)
	f.must(err)
	if len(open) != 1 || open[0].ID != anomaly || open[0].Status != "open" {
		t.Fatalf("open issues %+v", open)
	}
	d, err := f.db.Catalog().DatasetByID(f.ctx, v, ds)
	f.must(err)
	if *d.LatestScore != 70 || len(d.Columns) != 3 || len(d.ScoreHistory) != 2 || *d.RowCount != 200 || len(d.Issues) != 1 {
		t.Fatalf("dataset after two scans %+v", d)
	}
	f.fails(vigia.KindConflict, "a second open anomaly on the same metric", func(ctx ctxT) error {
		return s.SaveDatasetResult(ctx, scan.DatasetResult{DatasetID: ds, WorkspaceID: ws, ScanID: f.newScan(ws, conn, 5), Seq: 5, At: at(5),
			Profile: &source.TableProfile{Depth: "basic"}, Metrics: scan.Metrics{}, Verdict: scanVerdictPass(),
			NewIssues: []scan.NewIssue{{ID: vigia.NewID(), Type: "anomaly", Severity: "warning", Title: "t", Metric: "volume"}}})
	})
}

func TestScanSignals(t *testing.T) {
	f := newFx(t)
	s := f.db.Scans()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "secret")
	tm := f.team(ws, "finance")
	f.restrict(ws, ds[1:], tm)
	for i, d := range []string{ds[0], ds[0], ds[1]} {
		sc := f.newScan(ws, conn, i+1)
		kind, metric := "anomaly", "volume"
		if i == 1 {
			kind, metric = "schema_drift", "schema"
		}
		f.result(ws, d, sc, i+1, 90, func(r *scan.DatasetResult) {
			r.Signals = []scan.Signal{{ID: vigia.NewID(), Kind: kind, Metric: metric, Anomalous: i == 0}}
		})
	}
	list := func(vw catalogViewer, q scan.SignalQuery) []string {
		t.Helper()
		if q.Page.Limit == 0 {
			q.Page.Limit = 10
		}
		l, err := s.Signals(f.ctx, vw, q)
		f.must(err)
		return names(l.Items, func(sg scan.Signal) string { return sg.Metric + "@" + sg.DatasetName })
	}
	if got := list(v, scan.SignalQuery{}); !slices.Equal(got, []string{"volume@public.secret", "schema@public.orders", "volume@public.orders"}) {
		t.Fatalf("signals newest first: %v", got)
	}
	if got := list(member(ws), scan.SignalQuery{}); !slices.Equal(got, []string{"schema@public.orders", "volume@public.orders"}) {
		t.Fatalf("a member outside the restricted domain sees %v", got)
	}
	if got := list(member(ws, tm), scan.SignalQuery{Kinds: []string{"anomaly"}}); len(got) != 2 {
		t.Fatalf("anomalies a granted member sees: %v", got)
	}
	if got := list(v, scan.SignalQuery{DatasetID: &ds[0], Metrics: []string{"schema"}}); !slices.Equal(got, []string{"schema@public.orders"}) {
		t.Fatalf("by dataset and metric: %v", got)
	}
	if got := list(v, scan.SignalQuery{Since: vigia.Ptr(at(2)), Until: vigia.Ptr(at(3))}); !slices.Equal(got, []string{"schema@public.orders"}) {
		t.Fatalf("by time: %v", got)
	}
	if got := list(v, scan.SignalQuery{Page: vigia.Page{Limit: 1, Offset: 2}}); !slices.Equal(got, []string{"volume@public.orders"}) {
		t.Fatalf("last page: %v", got)
	}
	if got := list(f.workspace(), scan.SignalQuery{}); len(got) != 0 {
		t.Fatalf("another workspace sees %v", got)
	}
}

func TestScanClaimDueSchedules(t *testing.T) {
	f := newFx(t)
	s := f.db.Connections()
	ws := f.workspace().WorkspaceID
	due := f.connection(ws, "due")
	later := f.connection(ws, "later")
	f.connection(ws, "off")
	lisbon, err := s.ConnectionByRef(f.ctx, ws, due)
	f.must(err)
	lisbon.ScanTimezone, lisbon.Schedule = "Europe/Lisbon", connection.Schedule{Enabled: true, Hour: vigia.Ptr(8), Minute: 30}
	f.must(s.UpdateSchedule(f.ctx, lisbon))
	newYork, _ := s.ConnectionByRef(f.ctx, ws, later)
	newYork.ScanTimezone, newYork.Schedule = "America/New_York", connection.Schedule{Enabled: true, Hour: vigia.Ptr(8), Minute: 0}
	f.must(s.UpdateSchedule(f.ctx, newYork))
	// t0 is 09:00 UTC: 09:00 in Lisbon (due), 04:00 in New York (not yet).
	claimed, err := f.db.Scans().ClaimDueSchedules(f.ctx, t0)
	f.must(err)
	if len(claimed) != 1 || claimed[0].ConnectionID != due || claimed[0].WorkspaceID != ws {
		t.Fatalf("claimed %+v", claimed)
	}
	if again, _ := f.db.Scans().ClaimDueSchedules(f.ctx, at(60)); len(again) != 0 {
		t.Fatalf("claimed twice the same local day: %+v", again)
	}
	// 13:00 UTC is 08:00 in New York; at 09:00 UTC the next day Lisbon is due again.
	next, _ := f.db.Scans().ClaimDueSchedules(f.ctx, at(4*60))
	tomorrow, _ := f.db.Scans().ClaimDueSchedules(f.ctx, at(24*60))
	if len(next) != 1 || next[0].ConnectionID != later || len(tomorrow) != 1 || tomorrow[0].ConnectionID != due {
		t.Fatalf("later claims %+v, next day %+v", next, tomorrow)
	}
}
