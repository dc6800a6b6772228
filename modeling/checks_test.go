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

// The checks of keys, width, repeating groups and layers, with fixes the dialects'
// parsers accept.
func TestLayerIndexWidthAndRepeatingGroups(t *testing.T) {
	wide := catalog.Dataset{ID: "w", ConnectionID: "k", Schema: "dw", Table: "fct_vendas", Kind: "table"}
	for i := range modeling.WideTableColumns + 1 {
		wide.Columns = append(wide.Columns, catalog.Column{Name: "c" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "_" + string(rune('a'+i/26)), Class: "numeric", DataType: "integer"})
	}
	wide.Columns[0].PrimaryKey, wide.Columns[0].Indexed = true, true
	ref := "x"
	contactos := catalog.Dataset{ID: "c", ConnectionID: "k", Schema: "dw", Table: "contactos", Kind: "table",
		Columns: []catalog.Column{
			{Name: "id", PrimaryKey: true, Indexed: true, Class: "numeric", DataType: "integer"},
			{Name: "cliente_id", Class: "numeric", DataType: "integer"},
			{Name: "telefone1", Class: "text", DataType: "varchar(20)"}, {Name: "telefone2", Class: "text", DataType: "varchar(20)"},
			{Name: "telefone_3", Class: "text", DataType: "varchar(20)"}, {Name: "morada1", Class: "text", DataType: "text"},
		},
		ForeignKeys: []catalog.ForeignKey{{Name: "fk", Columns: []string{"cliente_id"}, RefSchema: "dw", RefTable: "dim_clientes", RefColumns: []string{"id"}, RefDatasetID: &ref}}}
	dim := catalog.Dataset{ID: "d", ConnectionID: "k", Schema: "dw", Table: "dim_clientes", Kind: "table",
		Columns: []catalog.Column{{Name: "id", PrimaryKey: true, Indexed: true, Class: "numeric", DataType: "integer"}}}
	all := []catalog.Dataset{wide, contactos, dim, {ID: "e", ConnectionID: "k", Schema: "dw", Table: "stg_eventos", Kind: "table"}}
	p := sqllineage.Parser{}
	for _, d := range []rulesql.Dialect{rulesql.Postgres, rulesql.MySQL, rulesql.SQLite} {
		got := checks(modeling.Check(modeling.Table{Dataset: contactos, Dialect: d}, all))
		for _, c := range []string{"layer_prefix", "unindexed_key", "denormalized"} {
			f, ok := got[c]
			if !ok {
				t.Fatalf("%s: no %s in %v", d, c, got)
			}
			if f.DDL == "" {
				t.Fatalf("%s %s: no fix", d, c)
			}
			if err := p.CheckDDL(string(d), f.DDL); err != nil {
				t.Errorf("%s %s: %q: %v", d, c, f.DDL, err)
			}
		}
		if f := got["denormalized"]; strings.Join(f.Columns, ",") != "telefone1,telefone2,telefone_3" || !strings.Contains(f.DDL, "contactos_telefone") {
			t.Errorf("%s denormalized %+v", d, f)
		}
		if f := got["unindexed_key"]; strings.Join(f.Columns, ",") != "cliente_id" {
			t.Errorf("%s unindexed %+v", d, f)
		}
		if f := got["layer_prefix"]; !strings.Contains(f.DDL, "dim_contactos") && !strings.Contains(f.DDL, "fct_contactos") && !strings.Contains(f.DDL, "stg_contactos") {
			t.Errorf("%s layer %+v", d, f)
		}
		w := checks(modeling.Check(modeling.Table{Dataset: wide, Dialect: d}, all))
		if _, ok := w["wide_table"]; !ok || w["wide_table"].Suggestion != "split_table" {
			t.Errorf("%s: wide %v", d, w)
		}
		if _, ok := w["layer_prefix"]; ok {
			t.Errorf("%s: a prefixed table got layer_prefix", d)
		}
		// Indexed keys, two numbered columns, a schema without layers: nothing.
		contactos2 := contactos
		contactos2.Columns = append([]catalog.Column{}, contactos.Columns[:2]...)
		contactos2.Columns[1].Indexed = true
		contactos2.Columns = append(contactos2.Columns, catalog.Column{Name: "morada1"}, catalog.Column{Name: "morada2"})
		if got := checks(modeling.Check(modeling.Table{Dataset: contactos2, Dialect: d}, []catalog.Dataset{contactos2})); len(got) != 0 {
			t.Errorf("%s: %v", d, got)
		}
	}
}
