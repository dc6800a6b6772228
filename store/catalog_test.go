package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

func datasetName(d catalog.Dataset) string { return d.Schema + "." + d.Table }

func TestCatalogFindDatasets(t *testing.T) {
	f := newFx(t)
	s := f.db.Catalog()
	v := f.workspace()
	ws := v.WorkspaceID
	wh, app := f.connection(ws, "warehouse"), f.connection(ws, "app")
	ds := f.tables(ws, wh, "orders", "customers", "order_items", "pay_100%")
	appDS := f.tables(ws, app, "users")
	f.exec(`UPDATE datasets SET queries_per_day = $2 WHERE id = $1`, ds[1], 50.0)
	f.exec(`UPDATE datasets SET queries_per_day = $2 WHERE id = $1`, appDS[0], 10.0)
	// The lineage projector's write: dataset_reach and the indexed sort key datasets.reach.
	f.must(f.db.Lineage().SetReach(f.ctx, ws, map[string]int{ds[2]: 7, ds[0]: 3}))
	tm := f.team(ws, "finance")
	f.restrict(ws, ds[3:], tm)
	other := f.workspace()
	f.tables(other.WorkspaceID, f.connection(other.WorkspaceID, "warehouse"), "orders")

	find := func(vw catalog.Viewer, flt catalog.DatasetFilter) ([]string, int) {
		t.Helper()
		if flt.Page.Limit == 0 {
			flt.Page.Limit = 50
		}
		l, err := s.FindDatasets(f.ctx, vw, flt)
		f.must(err)
		return names(l.Items, datasetName), l.Total
	}
	all := []string{"public.customers", "public.order_items", "public.orders", "public.pay_100%", "public.users"}
	if got, n := find(v, catalog.DatasetFilter{}); n != 5 || !slices.Equal(got, all) {
		t.Fatalf("by name: %v (%d)", got, n)
	}
	if got, n := find(member(ws), catalog.DatasetFilter{}); n != 4 || slices.Contains(got, "public.pay_100%") {
		t.Fatalf("a member outside the restricted domain: %v (%d)", got, n)
	}
	l, err := s.FindDatasets(f.ctx, member(ws, tm), catalog.DatasetFilter{Q: vigia.Ptr("pay"), Page: vigia.Page{Limit: 5}})
	f.must(err)
	if l.Total != 1 || len(l.Items[0].Grants) != 1 || l.Items[0].Grants[0].Role != "member" || !l.Items[0].Grants[0].Restricted {
		t.Fatalf("a granted member's restricted dataset %+v", l)
	}
	if got, _ := find(v, catalog.DatasetFilter{Q: vigia.Ptr("100%")}); !slices.Equal(got, []string{"public.pay_100%"}) {
		t.Fatalf("a search for a literal %%: %v", got)
	}
	if got, _ := find(v, catalog.DatasetFilter{Q: vigia.Ptr("order_")}); !slices.Equal(got, []string{"public.order_items"}) {
		t.Fatalf("a search for a literal _: %v", got)
	}
	if got, _ := find(v, catalog.DatasetFilter{Q: vigia.Ptr("PUBLIC.ORD")}); len(got) != 2 {
		t.Fatalf("a case-insensitive search on schema.table: %v", got)
	}
	if got, _ := find(v, catalog.DatasetFilter{ConnectionID: &app}); !slices.Equal(got, []string{"public.users"}) {
		t.Fatalf("by connection: %v", got)
	}
	if got, _ := find(v, catalog.DatasetFilter{Sort: catalog.SortUsage}); !slices.Equal(got[:2], []string{"public.customers", "public.users"}) {
		t.Fatalf("by usage: %v", got)
	}
	if got, _ := find(v, catalog.DatasetFilter{Sort: catalog.SortImpact}); !slices.Equal(got[:3], []string{"public.order_items", "public.orders", "public.customers"}) {
		t.Fatalf("by impact: %v", got)
	}
	var paged []string
	for off := 0; off < 5; off += 2 {
		got, n := find(v, catalog.DatasetFilter{Page: vigia.Page{Limit: 2, Offset: off}})
		if n != 5 {
			t.Fatalf("total %d on page at %d", n, off)
		}
		paged = append(paged, got...)
	}
	if !slices.Equal(paged, all) {
		t.Fatalf("pages: %v", paged)
	}
	if got, n := find(other, catalog.DatasetFilter{}); n != 1 || !slices.Equal(got, []string{"public.orders"}) {
		t.Fatalf("another workspace: %v", got)
	}
}

func TestCatalogDatasetDetail(t *testing.T) {
	f := newFx(t)
	s := f.db.Catalog()
	v, conn, ds := f.warehouse("orders", "secret", "gone")
	ws := v.WorkspaceID
	f.restrict(ws, ds[1:2])
	sc := f.newScan(ws, conn, 1)
	f.result(ws, ds[0], sc, 1, 88, nil)
	crit := f.issue(ws, conn, ds[0], "critical", 2, nil)
	warn := f.issue(ws, conn, ds[0], "warning", 3, nil)
	later := f.newScan(ws, conn, 4)
	f.must(f.db.Scans().RecordFailure(f.ctx, later, ws, ds[0], "timeout", at(9)))
	f.tables(ws, conn, "orders", "secret") // "gone" is dropped

	d, err := s.DatasetByID(f.ctx, v, ds[0])
	f.must(err)
	if d.ConnectionName != "warehouse" || d.WorkspaceCountry != "PT" || len(d.Columns) != 2 || d.Columns[0].Name != "id" ||
		d.Columns[1].Profile == nil || len(d.ScoreHistory) != 3 || d.ScoreHistory[2].ScanID != sc {
		t.Fatalf("detail %+v", d)
	}
	if got := names(d.Issues, func(i catalog.IssueSummary) string { return i.ID }); !slices.Equal(got, []string{crit, warn}) {
		t.Fatalf("open issues, critical first: %v", got)
	}
	if d.LastFailure == nil || d.LastFailure.Code != "timeout" || d.LastFailure.ScanID != later || *d.RowCount != 300 {
		t.Fatalf("last run %+v / %v", d.LastFailure, d.RowCount)
	}
	for what, fn := range map[string]func(ctx ctxT) error{
		"another workspace's dataset": func(ctx ctxT) error { _, err := s.DatasetByID(ctx, f.workspace(), ds[0]); return err },
		"a restricted dataset":        func(ctx ctxT) error { _, err := s.DatasetByID(ctx, member(ws), ds[1]); return err },
		"a dropped dataset":           func(ctx ctxT) error { _, err := s.DatasetByID(ctx, v, ds[2]); return err },
		"an unknown dataset":          func(ctx ctxT) error { _, err := s.DatasetByID(ctx, v, vigia.NewID()); return err },
	} {
		f.fails(vigia.KindNotFound, what, fn)
	}

	many, err := s.DatasetDetails(f.ctx, v, []string{ds[0], ds[1], ds[2], vigia.NewID()}, 2)
	f.must(err)
	if len(many) != 2 || len(many[ds[0]].ScoreHistory) != 2 || len(many[ds[0]].Issues) != 2 || len(many[ds[1]].Columns) != 2 ||
		many[ds[1]].ScoreHistory == nil || many[ds[0]].LastFailure == nil {
		t.Fatalf("details %+v", many)
	}
	if many, _ := s.DatasetDetails(f.ctx, member(ws), ds, 2); len(many) != 1 {
		t.Fatalf("details a member sees: %d", len(many))
	}
	if many, _ := s.DatasetDetails(f.ctx, f.workspace(), ds, 2); len(many) != 0 {
		t.Fatalf("details another workspace sees: %d", len(many))
	}
}
