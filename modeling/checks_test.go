package modeling_test

import (
	"strings"
	"testing"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/lineage/sqllineage"
	"github.com/vigia-data/vigia/modeling"
	"github.com/vigia-data/vigia/rulesql"
)

func checks(fs []modeling.Finding) map[string]modeling.Finding {
	out := map[string]modeling.Finding{}
	for _, f := range fs {
		out[f.Check] = f
	}
	return out
}

func TestChecksAndTheirFixesInEachDialect(t *testing.T) {
	rows := int64(10)
	exact := true
	clientes := catalog.Dataset{ID: "a", Schema: "public", Table: "clientes", Kind: "table", RowCount: &rows, RowCountExact: &exact,
		Columns: []catalog.Column{
			{Name: "NomeCliente", Class: "text", DataType: "text", Nullable: true, Profile: &catalog.ColumnProfile{NullCount: 1}},
			{Name: "loja_id", Class: "text", DataType: "varchar(10)", Nullable: true, Profile: &catalog.ColumnProfile{}},
			{Name: "criado", Class: "text", DataType: "text", Nullable: true,
				Profile: &catalog.ColumnProfile{Masks: []catalog.Mask{{Mask: "9999-99-99", Count: 10}}}},
		}}
	lojas := catalog.Dataset{ID: "b", Schema: "public", Table: "lojas", Kind: "table",
		Columns: []catalog.Column{{Name: "loja_id", Class: "numeric", DataType: "integer", PrimaryKey: true}}}
	vendas := catalog.Dataset{ID: "c", Schema: "public", Table: "vendas", Kind: "table",
		Columns: []catalog.Column{{Name: "id", PrimaryKey: true, Class: "numeric", DataType: "integer"}, {Name: "loja_id", Class: "numeric", DataType: "integer"}}}
	all := []catalog.Dataset{clientes, lojas, vendas}
	p := sqllineage.Parser{}
	for _, d := range []rulesql.Dialect{rulesql.Postgres, rulesql.MySQL, rulesql.SQLite} {
		got := checks(modeling.Check(modeling.Table{Dataset: clientes, Dialect: d}, all))
		want := []string{"naming", "no_key", "all_nullable", "date_as_text", "type_mismatch"}
		if d == rulesql.SQLite {
			want = []string{"naming", "no_key"} // no ALTER COLUMN, ISO text dates, no fixed types
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", d, got, want)
		}
		for _, c := range want {
			f, ok := got[c]
			if !ok {
				t.Fatalf("%s: no %s in %v", d, c, got)
			}
			if f.DDL != "" {
				if err := p.CheckDDL(string(d), f.DDL); err != nil {
					t.Errorf("%s %s: %q: %v", d, c, f.DDL, err)
				}
			}
		}
		if n := got["naming"]; !strings.Contains(n.DDL, "nome_cliente") || n.Columns[0] != "NomeCliente" {
			t.Errorf("%s naming %+v", d, n)
		}
		if d != rulesql.SQLite {
			if tm := got["type_mismatch"]; tm.Columns[0] != "loja_id" || !strings.Contains(tm.DDL, "integer") {
				t.Errorf("%s type_mismatch %+v", d, tm)
			}
			if an := got["all_nullable"]; len(an.Columns) != 2 || an.Columns[0] != "loja_id" || an.Columns[1] != "criado" {
				t.Errorf("%s all_nullable %+v", d, an)
			}
		}
		// The reference tables with keys and numbers are fine; a view is never checked.
		if fs := modeling.Check(modeling.Table{Dataset: lojas, Dialect: d}, all); len(fs) != 0 {
			t.Errorf("%s lojas %+v", d, fs)
		}
		v := clientes
		v.Kind = "view"
		if fs := modeling.Check(modeling.Table{Dataset: v, Dialect: d}, all); len(fs) != 0 {
			t.Errorf("%s view %+v", d, fs)
		}
	}
}

func TestBreachesUnderTheTargets(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	bs, unknown := modeling.Breaches(modeling.ScanDataset{
		Dimensions: map[string]*float64{"completude": f(80), "validade": f(99), "unicidade": nil},
		Targets: map[string]modeling.Target{"completude": {Value: 90, DomainIDs: []string{"d1"}}, "validade": {Value: 95},
			"unicidade": {Value: 50}}})
	if len(bs) != 1 || bs[0].Dimension != "completude" || bs[0].Observed != 80 || bs[0].Target != 90 || bs[0].DomainIDs[0] != "d1" {
		t.Fatalf("breaches %+v", bs)
	}
	if len(unknown) != 1 || unknown[0] != "unicidade" {
		t.Fatalf("unknown %v", unknown)
	}
}
