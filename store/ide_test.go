package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia/ide"
)

func TestIDEDatasetsNamed(t *testing.T) {
	f := newFx(t)
	s := f.db.IDE()
	v := f.workspace()
	ws := v.WorkspaceID
	other := f.workspace().WorkspaceID
	wh := f.tables(ws, f.connection(ws, "wh"), "orders", "Orders_Archive")
	rep := f.tables(ws, f.connection(ws, "replica"), "ORDERS")
	f.tables(other, f.connection(other, "wh"), "orders")
	ids := func(cs []ide.Candidate) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	pub := "PUBLIC"
	got, err := s.DatasetsNamed(f.ctx, v, &pub, "Orders")
	f.must(err)
	if !slices.Equal(ids(got), []string{rep[0], wh[0]}) || got[0].ConnectionName != "replica" || got[1].Table != "orders" {
		t.Fatalf("by schema and table: %+v", got)
	}
	if got, _ = s.DatasetsNamed(f.ctx, v, nil, "orders_archive"); !slices.Equal(ids(got), []string{wh[1]}) {
		t.Fatalf("by table: %+v", got)
	}
	nope := "sales"
	if got, _ = s.DatasetsNamed(f.ctx, v, &nope, "orders"); len(got) != 0 {
		t.Fatalf("another schema: %+v", got)
	}
	// A restricted dataset is found only by those who may see it.
	f.restrict(ws, []string{rep[0]})
	if got, _ = s.DatasetsNamed(f.ctx, member(ws), nil, "orders"); !slices.Equal(ids(got), []string{wh[0]}) {
		t.Fatalf("restricted: %+v", got)
	}
}
