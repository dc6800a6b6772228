package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/scan"
)

func TestIncidentsSaveListAndHide(t *testing.T) {
	f := newFx(t)
	s := f.db.Incidents()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "secret")
	f.restrict(ws, ds[1:])
	a := f.issue(ws, conn, ds[0], "critical", 1, func(ni *scan.NewIssue) { ni.Column = "amount" })
	b := f.issue(ws, conn, ds[1], "warning", 2, nil)

	open, err := s.OpenIssues(f.ctx, ws)
	f.must(err)
	if got := names(open, func(o incident.OpenIssue) string { return o.ID + "/" + o.DatasetID + "/" + o.Severity }); len(got) != 2 ||
		!slices.Contains(got, a+"/"+ds[0]+"/critical") || !slices.Contains(got, b+"/"+ds[1]+"/warning") {
		t.Fatalf("open issues %v", got)
	}
	if other, err := s.OpenIssues(f.ctx, f.workspace().WorkspaceID); err != nil || len(other) != 0 {
		t.Fatalf("another workspace's open issues %v %v", other, err)
	}

	// Two incidents, one rooted at a dataset members cannot see.
	impact := lineage.Blast{Scope: "column", Columns: []string{"amount"}, Nodes: []lineage.BlastNode{{ID: ds[1], Hops: 1, Parent: ds[0], Impact: "column",
		ViaColumns: []string{"amount"}}}, Issues: map[string]string{a: ds[0]}}
	scanID := f.newScan(ws, conn, 3)
	seen := incident.Incident{ID: vigia.NewID(), WorkspaceID: ws, Status: incident.Open, RootDatasetID: &ds[0], Severity: "critical",
		IssueIDs: []string{a}, DatasetIDs: []string{ds[0]}, ScanID: &scanID, Impact: impact, CreatedAt: at(3), UpdatedAt: at(3)}
	hidden := incident.Incident{ID: vigia.NewID(), WorkspaceID: ws, Status: incident.Open, RootDatasetID: &ds[1], Severity: "warning",
		IssueIDs: []string{b}, DatasetIDs: []string{ds[1]}, Impact: lineage.Blast{Scope: "none"}, CreatedAt: at(4), UpdatedAt: at(4)}
	f.must(s.SaveIncident(f.ctx, seen))
	f.must(s.SaveIncident(f.ctx, hidden))

	got, err := s.IncidentByID(f.ctx, v, seen.ID)
	f.must(err)
	if got.Status != incident.Open || got.Severity != "critical" || !slices.Equal(got.IssueIDs, []string{a}) || *got.ScanID != scanID ||
		got.Impact.Scope != "column" || len(got.Impact.Nodes) != 1 || got.Impact.Nodes[0].Parent != ds[0] || got.Impact.Issues[a] != ds[0] {
		t.Fatalf("stored incident %+v", got)
	}
	list := func(vw catalogViewer, status *string) ([]string, int) {
		t.Helper()
		l, err := s.Incidents(f.ctx, vw, incident.Filter{Status: status, Page: vigia.Page{Limit: 10}})
		f.must(err)
		return names(l.Items, func(i incident.Incident) string { return i.ID }), l.Total
	}
	if ids, n := list(v, nil); n != 2 || !slices.Equal(ids, []string{hidden.ID, seen.ID}) {
		t.Fatalf("an admin's incidents, newest first: %v of %d", ids, n)
	}
	if ids, n := list(member(ws), nil); n != 1 || !slices.Equal(ids, []string{seen.ID}) {
		t.Fatalf("a member's incidents: %v of %d", ids, n)
	}
	f.fails(vigia.KindNotFound, "a restricted root's incident as a member", func(ctx ctxT) error {
		_, err := s.IncidentByID(ctx, member(ws), hidden.ID)
		return err
	})
	f.fails(vigia.KindNotFound, "another workspace's incident", func(ctx ctxT) error {
		_, err := s.IncidentByID(ctx, f.workspace(), seen.ID)
		return err
	})

	// Resolving updates in place; open incidents and the status filter follow.
	seen.Status, seen.UpdatedAt, seen.ResolvedAt = incident.Resolved, at(5), vigia.Ptr(at(5))
	f.must(s.SaveIncident(f.ctx, seen))
	stillOpen, err := s.OpenIncidents(f.ctx, ws)
	f.must(err)
	if ids := names(stillOpen, func(i incident.Incident) string { return i.ID }); !slices.Equal(ids, []string{hidden.ID}) {
		t.Fatalf("open incidents after resolving: %v", ids)
	}
	resolved := incident.Resolved
	if ids, n := list(v, &resolved); n != 1 || !slices.Equal(ids, []string{seen.ID}) {
		t.Fatalf("resolved incidents: %v of %d", ids, n)
	}

	// An issue's reference, only when its dataset is visible.
	ref, err := s.IssueRef(f.ctx, v, a)
	f.must(err)
	if ref.DatasetID != ds[0] || ref.Column != "amount" || ref.Severity != "critical" {
		t.Fatalf("issue ref %+v", ref)
	}
	f.fails(vigia.KindNotFound, "a restricted dataset's issue as a member", func(ctx ctxT) error {
		_, err := s.IssueRef(ctx, member(ws), b)
		return err
	})
}
