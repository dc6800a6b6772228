package sqllineage_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

// MustRef parses "table.column" or "schema.table.column" into a ColumnRef.
func MustRef(tb testing.TB, s string) sqllineage.ColumnRef {
	tb.Helper()
	parts := strings.Split(s, ".")
	switch len(parts) {
	case 2:
		return sqllineage.ColumnRef{Table: sqllineage.TableRef{Name: parts[0]}, Column: parts[1]}
	case 3:
		return sqllineage.ColumnRef{Table: sqllineage.TableRef{Schema: parts[0], Name: parts[1]}, Column: parts[2]}
	}
	tb.Fatalf("bad column reference %q", s)
	return sqllineage.ColumnRef{}
}

// MustTable parses "table" or "schema.table".
func MustTable(tb testing.TB, s string) sqllineage.TableRef {
	tb.Helper()
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return sqllineage.TableRef{Schema: s[:i], Name: s[i+1:]}
	}
	return sqllineage.TableRef{Name: s}
}

// col describes an expected output column: from holds "table.column" strings.
type col struct {
	name     string
	direct   bool
	resolved bool
	from     []string
}

// copied is a resolved plain copy of one column.
func copied(name, from string) col {
	return col{name: name, direct: true, resolved: true, from: []string{from}}
}

// copiedEach is a column that is, in each branch of a set operation, a plain copy of
// one of the given columns.
func copiedEach(name string, from ...string) col {
	return col{name: name, direct: true, resolved: true, from: from}
}

// derived is a resolved column computed from the given columns (none for literals).
func derived(name string, from ...string) col { return col{name: name, resolved: true, from: from} }

// unresolved is a column with a reference that could not be attributed.
func unresolved(name string, from ...string) col { return col{name: name, from: from} }

// want is what a case expects; nil slices are not checked.
type want struct {
	columns     []col
	sources     []string
	filters     []string // compared as a set
	unresolved  []string // compared as a set; nil means "must be empty"
	columnLevel *bool
}

// Check compares res with w and reports every difference.
func (w want) Check(tb testing.TB, res sqllineage.Result) {
	tb.Helper()
	if w.columns != nil {
		var wantCols []sqllineage.OutputColumn
		for _, c := range w.columns {
			oc := sqllineage.OutputColumn{Name: c.name, Direct: c.direct, Resolved: c.resolved}
			for _, f := range c.from {
				oc.From = append(oc.From, MustRef(tb, f))
			}
			wantCols = append(wantCols, oc)
		}
		if d := cmp.Diff(wantCols, res.Columns, cmpopts.EquateEmpty()); d != "" {
			tb.Errorf("columns (-want +got):\n%s", d)
		}
	}
	if w.sources != nil {
		var ws []sqllineage.TableRef
		for _, s := range w.sources {
			ws = append(ws, MustTable(tb, s))
		}
		if d := cmp.Diff(ws, res.Sources, cmpopts.EquateEmpty()); d != "" {
			tb.Errorf("sources (-want +got):\n%s", d)
		}
	}
	if w.filters != nil {
		var wf []string
		for _, f := range w.filters {
			wf = append(wf, MustRef(tb, f).String())
		}
		var gf []string
		for _, f := range res.FilterColumns {
			gf = append(gf, f.String())
		}
		slices.Sort(wf)
		slices.Sort(gf)
		if d := cmp.Diff(wf, gf, cmpopts.EquateEmpty()); d != "" {
			tb.Errorf("filter columns (-want +got):\n%s", d)
		}
	}
	wu := slices.Clone(w.unresolved)
	gu := slices.Clone(res.Unresolved)
	slices.Sort(wu)
	slices.Sort(gu)
	if d := cmp.Diff(wu, gu, cmpopts.EquateEmpty()); d != "" {
		tb.Errorf("unresolved reasons (-want +got):\n%s", d)
	}
	wantLevel := true
	if w.columnLevel != nil {
		wantLevel = *w.columnLevel
	}
	if res.ColumnLevel != wantLevel {
		tb.Errorf("ColumnLevel = %v, want %v", res.ColumnLevel, wantLevel)
	}
}

func ptr[T any](v T) *T { return &v }

// shopCatalog is the example source: orders and customers, plus the orders_enriched
// view's columns, under the unqualified names Postgres prints for the search path and
// under schema shop, as MySQL and MariaDB always qualify.
func shopCatalog() sqllineage.MapCatalog {
	orders := []string{"id", "customer_id", "amount", "status", "created_at"}
	customers := []string{"id", "name", "country", "segment"}
	enriched := []string{"order_id", "created_at", "customer_name", "amount", "size_band"}
	return sqllineage.MapCatalog{
		"orders":               orders,
		"customers":            customers,
		"orders_enriched":      enriched,
		"shop.orders":          orders,
		"shop.customers":       customers,
		"shop.orders_enriched": enriched,
		`select "x"`:           {"id", "odd \"col\"", "Amount"},
		"shop.select \"x\"":    {"id", "odd `col", "Amount"},
		"sales.orders":         orders,
	}
}
