package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

func edge(src, dst string, kind lineage.EdgeKind, origin string) lineage.RecordEdge {
	return lineage.RecordEdge{Edge: lineage.Edge{Source: src, Target: dst, Kind: kind, Origin: origin, ColumnLevel: true,
		Columns: []lineage.ColumnPair{{From: "id", To: "id", Direct: true}}}}
}

func sorted(s ...string) []string { slices.Sort(s); return s }

func edgeKey(e lineage.RecordEdge) string { return e.Source + ">" + e.Target + ":" + string(e.Kind) }

func TestLineageEdgesExposuresReach(t *testing.T) {
	f := newFx(t)
	s := f.db.Lineage()
	ws := f.workspace().WorkspaceID
	other := f.workspace().WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "a", "b", "c")
	a, b, c := "dataset:"+ds[0], "dataset:"+ds[1], "dataset:"+ds[2]
	f.must(s.UpsertEdges(f.ctx, ws, []lineage.RecordEdge{edge(a, b, lineage.KindParsed, "view"), edge(b, c, lineage.KindDBT, "dbt:p1"),
		edge(a, c, lineage.KindDBT, "dbt:p2")}))
	f.must(s.UpsertEdges(f.ctx, other, []lineage.RecordEdge{edge(a, b, lineage.KindParsed, "view")}))
	up := edge(a, b, lineage.KindParsed, "view")
	up.ColumnLevel, up.Columns, up.Notes = false, nil, []string{"unparsed"}
	f.must(s.UpsertEdges(f.ctx, ws, []lineage.RecordEdge{up})) // the same key updates

	all, err := s.EdgesTouching(f.ctx, ws, []string{a, b, c})
	f.must(err)
	// Ordered by source then target: dataset ids made in one millisecond need not sort in
	// the order they were made, so the expectation is sorted too.
	want := []string{a + ">" + b + ":parsed", a + ">" + c + ":dbt", b + ">" + c + ":dbt"}
	slices.Sort(want)
	if got := names(all, edgeKey); !slices.Equal(got, want) {
		t.Fatalf("all edges %v", got)
	}
	byKey := map[string]lineage.RecordEdge{}
	for _, e := range all {
		byKey[edgeKey(e)] = e
	}
	if ab := byKey[a+">"+b+":parsed"]; ab.ColumnLevel || len(ab.Columns) != 0 || !slices.Equal(ab.Notes, []string{"unparsed"}) ||
		len(byKey[b+">"+c+":dbt"].Columns) != 1 {
		t.Fatalf("edges read back %+v", all)
	}
	dbt, err := s.Edges(f.ctx, ws, lineage.KindDBT, "dbt:p1")
	f.must(err)
	anyDBT, _ := s.Edges(f.ctx, ws, lineage.KindDBT, "")
	touching, _ := s.EdgesTouching(f.ctx, ws, []string{c})
	if len(dbt) != 1 || dbt[0].Source != b || len(anyDBT) != 2 || len(touching) != 2 {
		t.Fatalf("by origin %v, any origin %v, touching %v", names(dbt, edgeKey), names(anyDBT, edgeKey), names(touching, edgeKey))
	}
	f.must(s.DeleteEdges(f.ctx, ws, []lineage.EdgeKey{{Source: a, Target: b, Kind: lineage.KindParsed}, {Source: a, Target: c, Kind: lineage.KindParsed}}))
	if all, _ = s.EdgesTouching(f.ctx, ws, []string{a, b, c}); len(all) != 2 {
		t.Fatalf("after deleting one edge %v", names(all, edgeKey))
	}
	if o, _ := s.EdgesTouching(f.ctx, other, []string{a, b, c}); len(o) != 1 {
		t.Fatalf("another workspace's edges changed: %v", names(o, edgeKey))
	}

	// Exposures: upsert by type and name; their datasets are their incoming edges.
	dash, err := s.UpsertExposure(f.ctx, ws, lineage.Exposure{Name: "Revenue", Type: "dashboard", URL: "https://bi/1", Owner: "ana", Origin: "dbt:p1"})
	f.must(err)
	again, err := s.UpsertExposure(f.ctx, ws, lineage.Exposure{Name: "Revenue", Type: "dashboard", URL: "https://bi/2", Owner: "bea", Origin: "dbt:p1"})
	f.must(err)
	nb, _ := s.UpsertExposure(f.ctx, ws, lineage.Exposure{Name: "Churn", Type: "notebook", Origin: "dbt:p2"})
	if again != dash {
		t.Fatalf("an exposure upserted twice has two ids")
	}
	f.must(s.UpsertEdges(f.ctx, ws, []lineage.RecordEdge{edge(c, "exposure:"+dash, lineage.KindDBT, "dbt:p1"), edge(b, "exposure:"+dash, lineage.KindDBT, "dbt:p1")}))
	ex, err := s.Exposures(f.ctx, ws, []string{dash, "nope", vigia.NewID()})
	f.must(err)
	if len(ex) != 1 || ex[dash].URL != "https://bi/2" || ex[dash].Owner != "bea" || !slices.Equal(ex[dash].DatasetIDs, sorted(b, c)) {
		t.Fatalf("exposures %+v", ex)
	}
	if ox, _ := s.Exposures(f.ctx, other, []string{dash}); len(ox) != 0 {
		t.Fatalf("another workspace reads the exposure")
	}
	list, err := s.ListExposures(f.ctx, ws)
	f.must(err)
	if got := names(list, func(e lineage.Exposure) string { return e.Name }); !slices.Equal(got, []string{"Churn", "Revenue"}) {
		t.Fatalf("exposures by name %v", got)
	}
	gone, err := s.DeleteExposures(f.ctx, ws, "dbt:p2", nil)
	f.must(err)
	if !slices.Equal(gone, []string{nb}) {
		t.Fatalf("deleted exposures %v", gone)
	}
	if gone, _ := s.DeleteExposures(f.ctx, ws, "dbt:p1", []string{dash}); len(gone) != 0 {
		t.Fatalf("a kept exposure was deleted")
	}

	// Reach: replaced as a whole, only the workspace's own datasets.
	f.must(s.SetReach(f.ctx, ws, map[string]int{ds[0]: 2, ds[1]: 1, "not-an-id": 3}))
	f.must(s.SetReach(f.ctx, ws, map[string]int{ds[0]: 5, ds[2]: 0}))
	foreign := f.tables(other, f.connection(other, "w"), "z")[0]
	f.must(s.SetReach(f.ctx, other, map[string]int{ds[0]: 9, foreign: 4}))
	r, err := s.Reach(f.ctx, ws, ds)
	f.must(err)
	if len(r) != 1 || r[ds[0]] != 5 {
		t.Fatalf("reach %v", r)
	}
}

func TestLineageDatasetsAndCatalog(t *testing.T) {
	f := newFx(t)
	s := f.db.Lineage()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	f.must(f.db.Connections().SetLineageIdentity(f.ctx, ws, conn, "postgres://db:5432", "dwh"))
	tables := []source.Table{
		{Schema: "public", Name: "orders", Kind: "table", Columns: []source.Column{{Name: "id", Position: 1, DataType: "int", PrimaryKey: true}, {Name: "total", Position: 2, DataType: "numeric"}}},
		{Schema: "public", Name: "orders_v", Kind: "view", ViewDefinition: "SELECT id FROM orders", DependsOnKnown: true,
			DependsOn: []source.TableName{{Schema: "public", Name: "orders"}}, Columns: []source.Column{{Name: "id", Position: 1, DataType: "int"}}},
		{Schema: "public", Name: "secret", Kind: "table"},
		{Schema: "public", Name: "old", Kind: "table"},
	}
	refs, err := f.db.Scans().SyncDatasets(f.ctx, ws, conn, tables, t0)
	f.must(err)
	ds := names(refs, func(r scan.DatasetRef) string { return r.ID })
	f.restrict(ws, ds[2:3])
	_, err = f.db.Scans().SyncDatasets(f.ctx, ws, conn, tables[:3], at(1)) // "old" is dropped
	f.must(err)

	info, err := s.DatasetInfos(f.ctx, member(ws), append(slices.Clone(ds), "not-an-id"), true)
	f.must(err)
	if len(info) != 3 || !info[ds[0]].Visible || info[ds[2]].Visible || info[ds[0]].Name != "public.orders" ||
		!slices.Equal(info[ds[0]].Columns, []string{"id", "total"}) || info[ds[1]].Kind != "view" {
		t.Fatalf("dataset infos %+v", info)
	}
	if oi, _ := s.DatasetInfos(f.ctx, f.workspace(), ds, false); len(oi) != 0 {
		t.Fatalf("another workspace's infos %+v", oi)
	}
	vis, err := s.VisibleDatasets(f.ctx, member(ws), []string{ds[0], ds[2], ds[3], vigia.NewID()})
	f.must(err)
	if !vis[ds[0]] || vis[ds[2]] || !vis[ds[3]] || len(vis) != 4 {
		t.Fatalf("visible datasets %v", vis)
	}

	cat, err := s.ConnectionDatasets(f.ctx, conn)
	f.must(err)
	if cat.WorkspaceID != ws || cat.Dialect != "postgres" || len(cat.Datasets) != 3 || cat.Datasets[1].ViewDefinition != "SELECT id FROM orders" ||
		!cat.Datasets[1].DependsOnKnown || len(cat.Datasets[1].DependsOn) != 1 || cat.Datasets[0].DependsOnKnown || !cat.Datasets[0].Columns[0].PrimaryKey {
		t.Fatalf("connection catalog %+v", cat)
	}
	f.fails(vigia.KindNotFound, "the catalog of no connection", func(ctx ctxT) error { _, err := s.ConnectionDatasets(ctx, vigia.NewID()); return err })
	if dropped, err := s.DroppedDatasets(f.ctx, conn); err != nil || !slices.Equal(dropped, []string{ds[3]}) {
		t.Fatalf("dropped %v %v", dropped, err)
	}
	f.must(s.SetLineageNotes(f.ctx, conn, map[string][]string{ds[1]: {"unresolved: x"}}))
	f.must(s.SetLineageNotes(f.ctx, conn, map[string][]string{ds[1]: {"unresolved: y"}, ds[0]: {}}))
	if info, _ = s.DatasetInfos(f.ctx, v, ds[:2], false); !slices.Equal(info[ds[1]].Notes, []string{"unresolved: y"}) || len(info[ds[0]].Notes) != 0 {
		t.Fatalf("notes %+v", info)
	}

	named, err := s.FindByName(f.ctx, ws)
	f.must(err)
	if len(named) != 3 || named[0].Table != "orders" || named[0].ConnectionName != "warehouse" || named[0].Database != "dwh" ||
		!slices.Equal(named[0].Namespaces, []string{"postgres://db:5432"}) {
		t.Fatalf("by name %+v", named)
	}
	wss, err := s.Workspaces(f.ctx)
	f.must(err)
	if !slices.Contains(wss, ws) {
		t.Fatalf("workspaces %v", wss)
	}

	// OpenLineage job state: a new job is locked empty, then stored.
	st, err := s.LockOpenLineageJobs(f.ctx, ws, []string{"job-b", "job-a"})
	f.must(err)
	if len(st) != 0 {
		t.Fatalf("state of new jobs %v", st)
	}
	f.must(s.PutOpenLineageJob(f.ctx, ws, "job-a", []byte(`{"runs":1}`)))
	st, _ = s.LockOpenLineageJobs(f.ctx, ws, []string{"job-a", "job-b"})
	if len(st) != 1 || string(st["job-a"]) != `{"runs": 1}` {
		t.Fatalf("stored job state %q", st)
	}
	if os, _ := s.LockOpenLineageJobs(f.ctx, f.workspace().WorkspaceID, []string{"job-a"}); len(os) != 0 {
		t.Fatalf("another workspace reads the job state")
	}
}

func TestLineageOutboxAndProjectionLock(t *testing.T) {
	f := newFx(t)
	s := f.db.Lineage()
	ws := f.workspace().WorkspaceID
	other := f.workspace().WorkspaceID
	for i := range 3 {
		f.must(s.AddOutbox(f.ctx, ws, lineage.Change{DeleteNodes: []string{string(rune('a' + i))}}))
	}
	f.must(s.AddOutbox(f.ctx, other, lineage.Change{DeleteNodes: []string{"z"}}))
	cs, last, err := s.TakeOutbox(f.ctx, ws, 2)
	f.must(err)
	if len(cs) != 2 || cs[0].DeleteNodes[0] != "a" || cs[1].DeleteNodes[0] != "b" {
		t.Fatalf("outbox, oldest first %+v", cs)
	}
	f.must(s.DropOutbox(f.ctx, ws, last))
	cs, _, _ = s.TakeOutbox(f.ctx, ws, 10)
	if len(cs) != 1 || cs[0].DeleteNodes[0] != "c" {
		t.Fatalf("outbox after dropping the applied rows %+v", cs)
	}
	if oc, _, _ := s.TakeOutbox(f.ctx, other, 10); len(oc) != 1 {
		t.Fatalf("another workspace's outbox %+v", oc)
	}

	// Inside a writer's transaction projection waits for the commit: fn does not run.
	ran := false
	f.must(s.WithProjectionLock(f.ctx, ws, func(context.Context) error { ran = true; return nil }))
	if ran {
		t.Fatal("projection ran inside the writer's transaction")
	}
	// Outside one it runs in its own transaction holding the workspace's lock (which
	// commits nothing here: fn only checks where it runs).
	f.must(s.WithProjectionLock(context.Background(), vigia.NewID(), func(ctx context.Context) error {
		_, ran = storeTx(ctx)
		return nil
	}))
	if !ran {
		t.Fatal("projection outside a transaction did not run in one")
	}
}

func TestLineageSnapshotsAndKnowledge(t *testing.T) {
	f := newFx(t)
	s := f.db.Lineage()
	v, conn, ds := f.warehouse("orders", "secret")
	ws := v.WorkspaceID
	tm := f.team(ws, "finance")
	dom := f.restrict(ws, ds[1:], tm)
	f.exec(`UPDATE domain_grants SET role = 'manager' WHERE domain_id = $1`, dom)
	if _, ok, err := s.LatestSnapshot(f.ctx, ws); ok || err != nil {
		t.Fatalf("a snapshot before any %v %v", ok, err)
	}
	body := lineage.SnapshotBody{Nodes: []lineage.KNode{{ID: "dataset:" + ds[0], Kind: lineage.NodeDataset, Name: "public.orders"},
		{ID: "dataset:" + ds[1], Kind: lineage.NodeDataset, Name: "public.secret"}},
		Edges: []lineage.KEdge{{Source: "dataset:" + ds[0], Target: "dataset:" + ds[1], Kind: "parsed"}}}
	var ids []string
	for i := range 4 {
		sn := lineage.Snapshot{ID: vigia.NewID(), WorkspaceID: ws, Trigger: "manual", Digest: "d", NodesCount: 2, EdgesCount: 1, Body: body, CreatedAt: at(i * 10)}
		f.must(s.InsertSnapshot(f.ctx, sn, 3)) // keeps the newest three
		ids = append(ids, sn.ID)
	}
	p, err := s.Snapshots(f.ctx, ws, vigia.Page{Limit: 2, Offset: 1})
	f.must(err)
	if p.Total != 3 || !slices.Equal(names(p.Items, func(s lineage.Snapshot) string { return s.ID }), []string{ids[2], ids[1]}) || p.Items[0].Body.Nodes != nil {
		t.Fatalf("snapshots newest first, without bodies %+v", p)
	}
	latest, ok, err := s.LatestSnapshot(f.ctx, ws)
	f.must(err)
	if !ok || latest.ID != ids[3] || len(latest.Body.Nodes) != 2 {
		t.Fatalf("latest %+v", latest)
	}
	if sn, err := s.SnapshotAt(f.ctx, ws, at(25)); err != nil || sn.ID != ids[2] {
		t.Fatalf("snapshot at 25 minutes %v %v", sn.ID, err)
	}
	f.fails(vigia.KindNotFound, "a snapshot before the first kept", func(ctx ctxT) error { _, err := s.SnapshotAt(ctx, ws, at(5)); return err })
	f.fails(vigia.KindNotFound, "a pruned snapshot", func(ctx ctxT) error { _, err := s.SnapshotByID(ctx, ws, ids[0]); return err })
	f.fails(vigia.KindNotFound, "another workspace's snapshot", func(ctx ctxT) error { _, err := s.SnapshotByID(ctx, f.workspace().WorkspaceID, ids[3]); return err })
	hidden, err := s.HiddenDatasets(f.ctx, member(ws))
	f.must(err)
	if !slices.Equal(hidden, []string{"dataset:" + ds[1]}) {
		t.Fatalf("hidden %v", hidden)
	}
	if h, _ := s.HiddenDatasets(f.ctx, member(ws, tm)); len(h) != 0 {
		t.Fatalf("hidden from a granted member %v", h)
	}
	counts, err := s.SnapshotCountsWithout(f.ctx, ws, []string{ids[3], ids[0]}, hidden)
	f.must(err)
	if len(counts) != 1 || counts[ids[3]] != [2]int{1, 0} {
		t.Fatalf("counts without the hidden %v", counts)
	}

	// Domain suggestions' reads live with the product store.
	ps := f.db.Products()
	links, err := ps.DomainLinks(f.ctx, ws)
	f.must(err)
	if links.Names[dom] == "" || !slices.Equal(links.ByDataset[ds[1]], []string{dom}) || len(links.Datasets) != 2 ||
		!strings.HasPrefix(links.Datasets[0].Name, "public.") {
		t.Fatalf("domain links %+v", links)
	}
	if m, _ := ps.ManagedDomains(f.ctx, ws, []string{tm}); !slices.Equal(m, []string{dom}) {
		t.Fatalf("managed domains %v", m)
	}
	if m, _ := ps.ManagedDomains(f.ctx, f.workspace().WorkspaceID, []string{tm}); len(m) != 0 {
		t.Fatalf("managed from another workspace %v", m)
	}

	// Knowledge providers: the connection, domain, rule, open issue and anomalous signal
	// of each dataset, scoped to the workspace.
	f.newRule(ws, ds[0], "not_null", "info", 1, ruleMinRows(1))
	issueID := f.issue(ws, conn, ds[0], "warning", 2, nil)
	f.result(ws, ds[0], f.newScan(ws, conn, 3), 3, 80, func(r *scan.DatasetResult) {
		r.Signals = []scan.Signal{{ID: vigia.NewID(), Kind: "anomaly", Metric: "volume", Anomalous: true}, {ID: vigia.NewID(), Kind: "anomaly", Metric: "null_rate", Anomalous: false}}
	})
	kinds := map[lineage.NodeKind][]string{}
	for _, p := range f.db.KnowledgeProviders(nil) {
		nodes, edges, err := p.Nodes(f.ctx, ws, ds)
		f.must(err)
		if len(edges) < len(nodes) {
			t.Fatalf("%v: %d nodes with %d edges", p.Kinds(), len(nodes), len(edges))
		}
		for _, n := range nodes {
			if !slices.Contains(p.Kinds(), n.Kind) {
				t.Fatalf("a provider of %v gave a %s node", p.Kinds(), n.Kind)
			}
			kinds[n.Kind] = append(kinds[n.Kind], n.Name)
		}
		// Connections, domains and rules are the graph's structure; issues and signals are not.
		if want := !slices.Contains(p.Kinds(), lineage.NodeIssue) && !slices.Contains(p.Kinds(), lineage.NodeSignal); p.Structural() != want {
			t.Fatalf("%v structural: %v", p.Kinds(), p.Structural())
		}
		if on, _, _ := p.Nodes(f.ctx, f.workspace().WorkspaceID, ds); len(on) != 0 {
			t.Fatalf("%v nodes for another workspace", p.Kinds())
		}
	}
	if !slices.Equal(kinds[lineage.NodeConnection], []string{"warehouse"}) || len(kinds[lineage.NodeDomain]) != 1 ||
		!slices.Equal(kinds[lineage.NodeRule], []string{"not_null rule"}) || len(kinds[lineage.NodeIssue]) != 1 ||
		!slices.Equal(kinds[lineage.NodeSignal], []string{"anomaly:volume"}) {
		t.Fatalf("knowledge nodes %v (issue %s)", kinds, issueID)
	}
}

// The incident area read whole, with the incident bodies webhooks read for issues.
func TestIncidentsAndTheirWebhookImpacts(t *testing.T) {
	f := newFx(t)
	s := f.db.Incidents()
	v, conn, ds := f.warehouse("orders", "secret")
	ws := v.WorkspaceID
	f.restrict(ws, ds[1:])
	i1 := f.issue(ws, conn, ds[0], "critical", 1, nil)
	i2 := f.issue(ws, conn, ds[1], "warning", 2, nil)
	open, err := s.OpenIssues(f.ctx, ws)
	f.must(err)
	if len(open) != 2 {
		t.Fatalf("open issues %+v", open)
	}
	if ref, err := s.IssueRef(f.ctx, v, i1); err != nil || ref.DatasetID != ds[0] || ref.Severity != "critical" {
		t.Fatalf("issue ref %+v %v", ref, err)
	}
	f.fails(vigia.KindNotFound, "a restricted issue's ref", func(ctx ctxT) error { _, err := s.IssueRef(ctx, member(ws), i2); return err })

	inc := func(root string, issues []string, n int) incident.Incident {
		return incident.Incident{ID: vigia.NewID(), WorkspaceID: ws, Status: "open", RootDatasetID: &root, Severity: "critical",
			IssueIDs: issues, DatasetIDs: []string{root}, Impact: lineage.Blast{Scope: "dataset", Nodes: []lineage.BlastNode{{}}}, CreatedAt: at(n), UpdatedAt: at(n)}
	}
	a, b := inc(ds[0], []string{i1}, 3), inc(ds[1], []string{i2}, 4)
	f.must(s.SaveIncident(f.ctx, a))
	f.must(s.SaveIncident(f.ctx, b))
	a.Status, a.ResolvedAt, a.UpdatedAt = "resolved", vigia.Ptr(at(5)), at(5)
	f.must(s.SaveIncident(f.ctx, a))
	f.fails(vigia.KindInternal, "a status the schema refuses", func(ctx ctxT) error {
		bad := b
		bad.Status = "closed"
		return s.SaveIncident(ctx, bad)
	})
	if o, _ := s.OpenIncidents(f.ctx, ws); len(o) != 1 || o[0].ID != b.ID {
		t.Fatalf("open incidents %+v", o)
	}
	l, err := s.Incidents(f.ctx, v, incidentFilter(nil, 10, 0))
	f.must(err)
	if l.Total != 2 || l.Items[0].ID != a.ID || l.Items[0].ResolvedAt == nil || len(l.Items[0].Impact.Nodes) != 1 {
		t.Fatalf("incidents, last updated first %+v", l)
	}
	if l, _ = s.Incidents(f.ctx, member(ws), incidentFilter(nil, 10, 0)); l.Total != 1 || l.Items[0].ID != a.ID {
		t.Fatalf("incidents a member sees %+v", l)
	}
	if l, _ = s.Incidents(f.ctx, v, incidentFilter(vigia.Ptr("open"), 1, 0)); l.Total != 1 || l.Items[0].ID != b.ID {
		t.Fatalf("open incidents page %+v", l)
	}
	f.fails(vigia.KindNotFound, "a restricted root's incident", func(ctx ctxT) error { _, err := s.IncidentByID(ctx, member(ws), b.ID); return err })
	f.fails(vigia.KindNotFound, "another workspace's incident", func(ctx ctxT) error { _, err := s.IncidentByID(ctx, f.workspace(), a.ID); return err })

	impacts, err := f.db.WebhookIncidents().ForIssues(f.ctx, ws, []string{i2, vigia.NewID()})
	f.must(err)
	if len(impacts) != 1 || impacts[0].ID != b.ID || *impacts[0].DownstreamCount != 1 || *impacts[0].ImpactScope != "dataset" {
		t.Fatalf("incidents of issues %+v", impacts)
	}
	if none, _ := f.db.WebhookIncidents().ForIssues(f.ctx, f.workspace().WorkspaceID, []string{i2}); len(none) != 0 {
		t.Fatalf("incidents of another workspace %+v", none)
	}
}

func incidentFilter(status *string, limit, offset int) incident.Filter {
	return incident.Filter{Status: status, Page: vigia.Page{Limit: limit, Offset: offset}}
}

// The rebuild reads the record in key-ordered pages and keeps its progress per
// workspace.
func TestLineageRebuildPagesAndProgress(t *testing.T) {
	f := newFx(t)
	s := f.db.Lineage()
	ws := f.workspace().WorkspaceID
	other := f.workspace().WorkspaceID
	ds := f.tables(ws, f.connection(ws, "warehouse"), "a", "b", "c", "d", "e")
	f.tables(other, f.connection(other, "w"), "z")
	n := func(i int) string { return "dataset:" + ds[i] }
	f.must(s.UpsertEdges(f.ctx, ws, []lineage.RecordEdge{edge(n(0), n(1), lineage.KindParsed, "view"),
		edge(n(1), n(2), lineage.KindDBT, "dbt:p"), edge(n(0), n(1), lineage.KindDBT, "dbt:p"), edge(n(3), n(4), lineage.KindDeclared, "f")}))
	f.must(s.UpsertEdges(f.ctx, other, []lineage.RecordEdge{edge(n(0), n(1), lineage.KindParsed, "view")}))
	_, err := s.UpsertExposure(f.ctx, ws, lineage.Exposure{Name: "painel", Type: "dashboard", Origin: "declared"})
	f.must(err)

	c, err := s.RecordCounts(f.ctx, ws)
	f.must(err)
	if c != (lineage.RecordCounts{Datasets: 5, Exposures: 1, Edges: 4}) {
		t.Fatalf("record counts %+v", c)
	}
	// Two pages of two datasets and one of one, in id order, none of the other workspace.
	var got []string
	after := ""
	for {
		page, err := s.DatasetNodesAfter(f.ctx, ws, after, 2)
		f.must(err)
		for _, nd := range page {
			if nd.Kind != lineage.NodeDataset || !strings.HasPrefix(nd.Name, "public.") {
				t.Fatalf("dataset node %+v", nd)
			}
			got = append(got, nd.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	if want := sorted(ds...); !slices.Equal(got, want) {
		t.Fatalf("dataset pages %v, want %v", got, want)
	}
	exps, err := s.ExposureNodesAfter(f.ctx, ws, "", 10)
	f.must(err)
	if len(exps) != 1 || !lineage.IsExposure(exps[0].ID) || exps[0].Type != "dashboard" {
		t.Fatalf("exposure nodes %+v", exps)
	}
	var keys []string
	var key lineage.EdgeKey
	for {
		page, err := s.EdgesAfter(f.ctx, ws, key, 3)
		f.must(err)
		for _, e := range page {
			keys = append(keys, edgeKey(lineage.RecordEdge{Edge: e}))
		}
		if len(page) < 3 {
			break
		}
		key = page[len(page)-1].Key()
	}
	if len(keys) != 4 || len(slices.Compact(slices.Sorted(slices.Values(keys)))) != 4 { // each edge once
		t.Fatalf("edge pages %v", keys)
	}

	if _, ok, err := s.RebuildState(f.ctx, ws); err != nil || ok {
		t.Fatalf("no rebuild yet: %v %v", ok, err)
	}
	st := lineage.RebuildState{WorkspaceID: ws, OutboxPosition: 42, Phase: lineage.RebuildEdges,
		Cursor: []string{n(0), n(1), "dbt"}, NodesWritten: 6, EdgesWritten: 1, Batches: 3, StartedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	f.must(s.PutRebuildState(f.ctx, st))
	back, ok, err := s.RebuildState(f.ctx, ws)
	f.must(err)
	if !ok || back.Phase != st.Phase || !slices.Equal(back.Cursor, st.Cursor) || back.OutboxPosition != 42 ||
		back.NodesWritten != 6 || back.EdgesWritten != 1 || back.Batches != 3 || !back.UpdatedAt.Equal(st.UpdatedAt) {
		t.Fatalf("rebuild state read back %+v", back)
	}
	if _, ok, _ := s.RebuildState(f.ctx, other); ok {
		t.Fatal("another workspace sees the rebuild")
	}
	st.Phase, st.Cursor = lineage.RebuildReach, nil
	f.must(s.PutRebuildState(f.ctx, st))
	if back, _, _ := s.RebuildState(f.ctx, ws); back.Phase != lineage.RebuildReach || len(back.Cursor) != 0 {
		t.Fatalf("rebuild state replaced %+v", back)
	}
	f.must(s.DeleteRebuildState(f.ctx, ws))
	if _, ok, _ := s.RebuildState(f.ctx, ws); ok {
		t.Fatal("rebuild state outlived its end")
	}

	f.must(s.AddOutbox(f.ctx, ws, lineage.Change{DeleteNodes: []string{"x"}}))
	_, last, err := s.TakeOutbox(f.ctx, ws, 10)
	f.must(err)
	if pos, err := s.OutboxPosition(f.ctx, ws); err != nil || pos != last {
		t.Fatalf("outbox position %d, want %d (%v)", pos, last, err)
	}
	if pos, err := s.OutboxPosition(f.ctx, vigia.NewID()); err != nil || pos != 0 {
		t.Fatalf("outbox position of an empty outbox %d (%v)", pos, err)
	}
}
