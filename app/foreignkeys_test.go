package app_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/vigia-data/vigia/app"
)

// Declared foreign keys on each engine: discovery reads them, the dataset detail shows
// them on their columns, catalog.Service.DeclaredForeignKeys answers them for other
// features, and the knowledge graph joins the datasets with references edges.
func TestDeclaredForeignKeysOnColumnsAndInTheGraph(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			e := newWF(t, "fk-"+kind)
			src := newSource(t, kind, e.root)
			src.exec(t, `CREATE TABLE clientes (id integer PRIMARY KEY, nome varchar(40))`)
			src.exec(t, `CREATE TABLE linhas (fatura integer, n integer, PRIMARY KEY (fatura, n))`)
			src.exec(t, `CREATE TABLE notas (id integer PRIMARY KEY, cliente_id integer, fatura integer, n integer,
				CONSTRAINT notas_cliente FOREIGN KEY (cliente_id) REFERENCES clientes (id),
				CONSTRAINT notas_linha FOREIGN KEY (fatura, n) REFERENCES linhas (fatura, n))`)
			src.exec(t, `INSERT INTO clientes VALUES (1, 'a')`)
			conn := e.connect(t, "erp", kind, src.dsn)
			e.scan(t, conn)
			notas, clientes, linhas := e.dataset(t, conn, "notas"), e.dataset(t, conn, "clientes"), e.dataset(t, conn, "linhas")

			var d struct {
				Columns []struct {
					Name       string `json:"name"`
					References []struct {
						Constraint  string  `json:"constraint"`
						DatasetID   *string `json:"dataset_id"`
						DatasetName *string `json:"dataset_name"`
						Column      *string `json:"column"`
						Restricted  bool    `json:"restricted"`
					} `json:"references"`
				} `json:"columns"`
			}
			e.Do(t, http.MethodGet, "/api/v1/datasets/"+notas, e.viewer, nil).JSON(t, &d)
			refs := map[string]string{}
			for _, c := range d.Columns {
				for _, r := range c.References {
					if r.DatasetID == nil || r.Column == nil || r.DatasetName == nil || r.Restricted {
						t.Fatalf("reference of %s: %+v", c.Name, r)
					}
					refs[c.Name] = *r.DatasetID + "." + *r.Column
				}
				if c.References == nil {
					t.Fatalf("column %s: references null", c.Name)
				}
			}
			want := map[string]string{"cliente_id": clientes + ".id", "fatura": linhas + ".fatura", "n": linhas + ".n"}
			if len(refs) != 3 || refs["cliente_id"] != want["cliente_id"] || refs["fatura"] != want["fatura"] || refs["n"] != want["n"] {
				t.Fatalf("references %v, want %v", refs, want)
			}

			fks, err := e.App.Catalog.DeclaredForeignKeys(app.AsAdmin(context.Background(), e.ws, "test"), notas)
			if err != nil || len(fks) != 2 {
				t.Fatalf("DeclaredForeignKeys: %v %+v", err, fks)
			}
			for _, fk := range fks {
				if fk.RefDatasetID == nil || (len(fk.Columns) == 2) != (*fk.RefDatasetID == linhas) || len(fk.Columns) != len(fk.RefColumns) {
					t.Fatalf("key %+v", fk)
				}
				if kind != "sqlite" && !slices.Contains([]string{"notas_cliente", "notas_linha"}, fk.Name) {
					t.Fatalf("constraint name %q", fk.Name)
				}
			}
			if fks, err := e.App.Catalog.DeclaredForeignKeys(app.AsAdmin(context.Background(), e.ws, "test"), clientes); err != nil || len(fks) != 0 {
				t.Fatalf("clientes: %v %+v", err, fks)
			}
			other := newWF(t, "fk-other-"+kind)
			if _, err := other.App.Catalog.DeclaredForeignKeys(app.AsAdmin(context.Background(), other.ws, "test"), notas); err == nil {
				t.Fatal("another workspace read the keys")
			}

			var g struct {
				Edges []struct{ Source, Target, Kind string } `json:"edges"`
			}
			// Declared keys are join paths, not lineage: the workspace graph joins every
			// pair; a focus shows those among the datasets its lineage walk reached.
			e.Do(t, http.MethodGet, "/api/v1/knowledge/graph", e.viewer, nil).JSON(t, &g)
			var got []string
			for _, ed := range g.Edges {
				if ed.Kind == "references" {
					got = append(got, ed.Source+">"+ed.Target)
				}
			}
			slices.Sort(got)
			exp := []string{"dataset:" + notas + ">dataset:" + clientes, "dataset:" + notas + ">dataset:" + linhas}
			slices.Sort(exp)
			if !slices.Equal(got, exp) {
				t.Fatalf("references edges %v, want %v", got, exp)
			}

			// The single-column key drives a referential-rule suggestion; accepting it
			// creates the rule against the referenced dataset. The composite key does not.
			rules := e.suggestions(t, "?category=rule&dataset_id="+notas)
			sg := findSuggestion(rules, "referential:cliente_id")
			if sg == nil || sg.Params["ref_dataset_id"] != clientes || sg.Params["ref_column"] != "id" ||
				findSuggestion(rules, "referential:fatura") != nil || findSuggestion(rules, "referential:n") != nil {
				t.Fatalf("rule suggestions %+v", rules)
			}
			// The dataset detail carries its open suggestions.
			detailSuggestions := func() []string {
				var dd struct {
					Suggestions []suggestionOut `json:"suggestions"`
				}
				e.Do(t, http.MethodGet, "/api/v1/datasets/"+notas, e.viewer, nil).JSON(t, &dd)
				var sigs []string
				for _, s := range dd.Suggestions {
					if s.Status != "open" || s.DatasetID != notas {
						t.Fatalf("detail suggestion %+v", s)
					}
					sigs = append(sigs, s.Signature)
				}
				return sigs
			}
			if !slices.Contains(detailSuggestions(), "referential:cliente_id") {
				t.Fatalf("detail suggestions %v", detailSuggestions())
			}
			r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sg.ID+"/accept", e.member, nil)
			if r.Status != 200 {
				t.Fatalf("accept: %d %s", r.Status, r.Body)
			}
			var acc suggestionOut
			r.JSON(t, &acc)
			rl := e.get(t, "/api/v1/rules/"+*acc.Impact.RuleID, e.member)
			params, _ := rl["params"].(map[string]any)
			if rl["rule_type"] != "referential" || params["ref_dataset_id"] != clientes || params["ref_column"] != "id" || params["column"] != "cliente_id" {
				t.Fatalf("rule %v", rl)
			}
			if slices.Contains(detailSuggestions(), "referential:cliente_id") {
				t.Fatal("an accepted suggestion is still on the detail")
			}
			// The rule now exists: the next scan proposes it no more.
			e.scan(t, conn)
			for _, s := range e.suggestions(t, "?category=rule&dataset_id="+notas) {
				if s.Signature == "referential:cliente_id" && s.Status == "open" {
					t.Fatalf("proposed again: %+v", s)
				}
			}
		})
	}
}
