package app_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
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

// Issue 18 (declared relationships): a knowledge-graph focus follows references edges
// in both directions, hop by hop, even where no lineage joins the datasets (the key
// columns are named *_ref, which lineage does not infer as x_id keys); the datasets
// it reaches that way carry props reached_by=references (join paths, not lineage), and
// snapshots and their diffs carry the references edges.
func TestKnowledgeGraphFocusFollowsReferences(t *testing.T) {
	e := newWF(t, "fk-focus")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE regioes (id integer PRIMARY KEY, nome varchar(40))`)
	src.exec(t, `CREATE TABLE clientes (id integer PRIMARY KEY, nome varchar(40), regiao_ref integer REFERENCES regioes (id))`)
	src.exec(t, `CREATE TABLE linhas (fatura integer, n integer, PRIMARY KEY (fatura, n))`)
	src.exec(t, `CREATE TABLE notas (id integer PRIMARY KEY, cliente_ref integer REFERENCES clientes (id), fatura integer, n integer,
		FOREIGN KEY (fatura, n) REFERENCES linhas (fatura, n))`)
	src.exec(t, `CREATE TABLE avulsa (id integer PRIMARY KEY)`)
	conn := e.connect(t, "erp", "postgres", src.dsn)
	e.scan(t, conn)
	regioes, clientes, linhas, notas, avulsa := e.dataset(t, conn, "regioes"), e.dataset(t, conn, "clientes"),
		e.dataset(t, conn, "linhas"), e.dataset(t, conn, "notas"), e.dataset(t, conn, "avulsa")

	type node struct {
		ID    string         `json:"id"`
		Kind  string         `json:"kind"`
		Props map[string]any `json:"props"`
	}
	type graph struct {
		Nodes []node                                  `json:"nodes"`
		Edges []struct{ Source, Target, Kind string } `json:"edges"`
	}
	focus := func(id string, hops int) (map[string]node, []string) {
		t.Helper()
		r := e.Do(t, http.MethodGet, fmt.Sprintf("/api/v1/knowledge/graph?focus=dataset:%s&hops=%d", id, hops), e.viewer, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("focus: %d %s", r.Status, r.Body)
		}
		var g graph
		r.JSON(t, &g)
		nodes := map[string]node{}
		for _, n := range g.Nodes {
			if n.Kind == "dataset" {
				nodes[strings.TrimPrefix(n.ID, "dataset:")] = n
			}
		}
		var edges []string
		for _, ed := range g.Edges {
			if ed.Kind == "feeds" {
				t.Fatalf("lineage edge between tables that only declare keys: %+v", ed)
			}
			if ed.Kind == "references" {
				edges = append(edges, strings.TrimPrefix(ed.Source, "dataset:")+">"+strings.TrimPrefix(ed.Target, "dataset:"))
			}
		}
		slices.Sort(edges)
		return nodes, edges
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }

	// One hop from clientes: the region it references and the notes that reference it.
	nodes, edges := focus(clientes, 1)
	if len(nodes) != 3 || nodes[regioes].ID == "" || nodes[notas].ID == "" || nodes[linhas].ID != "" || nodes[avulsa].ID != "" {
		t.Fatalf("focus clientes hops=1: nodes %v", nodes)
	}
	if !slices.Equal(edges, sorted(clientes+">"+regioes, notas+">"+clientes)) {
		t.Fatalf("focus clientes hops=1: edges %v", edges)
	}
	for _, id := range []string{regioes, notas} {
		if nodes[id].Props["reached_by"] != "references" {
			t.Fatalf("node %s not marked as a join path: %+v", id, nodes[id])
		}
	}
	if nodes[clientes].Props["reached_by"] != nil {
		t.Fatalf("the focus itself marked: %+v", nodes[clientes])
	}
	// Two hops: through notas to the composite key's linhas.
	nodes, edges = focus(clientes, 2)
	if len(nodes) != 4 || nodes[linhas].ID == "" || nodes[avulsa].ID != "" {
		t.Fatalf("focus clientes hops=2: nodes %v", nodes)
	}
	if !slices.Equal(edges, sorted(clientes+">"+regioes, notas+">"+clientes, notas+">"+linhas)) {
		t.Fatalf("focus clientes hops=2: edges %v", edges)
	}
	// A table without keys has only itself.
	if nodes, edges = focus(avulsa, 3); len(nodes) != 1 || len(edges) != 0 {
		t.Fatalf("focus avulsa: %v %v", nodes, edges)
	}

	// Snapshots carry the references edges; a key declared later shows in the diff.
	snap := func() string {
		t.Helper()
		r := e.Do(t, http.MethodPost, "/api/v1/knowledge/graph/snapshot", e.admin, nil)
		if r.Status != http.StatusCreated && r.Status != http.StatusOK { // 200: a scan's snapshot already holds this graph
			t.Fatalf("snapshot: %d %s", r.Status, r.Body)
		}
		var s struct {
			ID string `json:"id"`
		}
		r.JSON(t, &s)
		return s.ID
	}
	first := snap()
	src.exec(t, `CREATE TABLE pagamentos (id integer PRIMARY KEY, nota_ref integer REFERENCES notas (id))`)
	e.scan(t, conn)
	pagamentos := e.dataset(t, conn, "pagamentos")
	second := snap()
	r := e.Do(t, http.MethodGet, "/api/v1/knowledge/graph/diff?from="+first+"&to="+second, e.viewer, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("diff: %d %s", r.Status, r.Body)
	}
	var d struct {
		AddedEdges []struct{ Source, Target, Kind string } `json:"added_edges"`
		ByKind     map[string]struct {
			Added   int `json:"added"`
			Removed int `json:"removed"`
		} `json:"by_kind"`
	}
	r.JSON(t, &d)
	var added []string
	for _, ed := range d.AddedEdges {
		if ed.Kind == "references" {
			added = append(added, ed.Source+">"+ed.Target)
		}
	}
	if d.ByKind["references"].Added != 1 || d.ByKind["references"].Removed != 0 ||
		!slices.Equal(added, []string{"dataset:" + pagamentos + ">dataset:" + notas}) {
		t.Fatalf("diff: %s", r.Body)
	}
	if nodes, _ = focus(clientes, 2); nodes[pagamentos].ID == "" {
		t.Fatalf("focus clientes hops=2 after the new key: %v", nodes)
	}
}
