package sqllineage_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

func TestEdgesGroupColumnMapBySource(t *testing.T) {
	res, err := sqllineage.Analyze(pg, `SELECT o.id, o.amount * 2 AS dbl, c.name FROM orders o
		JOIN customers c ON c.id = o.customer_id WHERE EXISTS (SELECT 1 FROM refunds r WHERE r.order_id = o.id)`, shopCatalog())
	if err != nil {
		t.Fatal(err)
	}
	want := []sqllineage.Edge{
		{Source: MustTable(t, "orders"), Columns: []sqllineage.ColumnPair{
			{From: "id", To: "id", Direct: true}, {From: "amount", To: "dbl"}}},
		{Source: MustTable(t, "customers"), Columns: []sqllineage.ColumnPair{{From: "name", To: "name", Direct: true}}},
		{Source: MustTable(t, "refunds"), FilterOnly: true},
	}
	if d := cmp.Diff(want, res.Edges()); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
}
