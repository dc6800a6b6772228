package app_test

import (
	"net/http"
	"testing"
)

// A dataset without a domain whose lineage neighbour belongs to one gets a domain
// suggestion (on the list and on its detail); once it joins the domain the next scan
// retires the suggestion.
func TestDomainSuggestionsForDatasetsWithoutOne(t *testing.T) {
	e := newWF(t, "domsug")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE vendas (id integer PRIMARY KEY, total numeric(10,2))`)
	src.exec(t, `INSERT INTO vendas VALUES (1, 10), (2, 20)`)
	src.exec(t, `CREATE VIEW vendas_grandes AS SELECT id, total FROM vendas WHERE total > 15`)
	conn := e.connect(t, "loja", "postgres", src.dsn)
	e.scan(t, conn)
	base, view := e.dataset(t, conn, "vendas"), e.dataset(t, conn, "vendas_grandes")
	r := e.Do(t, http.MethodPost, "/api/v1/domains", e.admin, map[string]any{"name": "Vendas", "dataset_ids": []string{base}})
	if r.Status != 201 {
		t.Fatalf("domain: %d %s", r.Status, r.Body)
	}
	var dom map[string]any
	r.JSON(t, &dom)
	domID := dom["id"].(string)
	e.scan(t, conn)
	list := e.suggestions(t, "?category=domain&dataset_id="+view)
	sg := findSuggestion(list, "domain:"+domID)
	if sg == nil || sg.Category != "domain" || sg.Params["domain_name"] != "Vendas" || sg.Params["votes"].(float64) < 1 {
		t.Fatalf("domain suggestions %+v", list)
	}
	if l := e.suggestions(t, "?category=domain&dataset_id="+base); len(l) != 0 {
		t.Fatalf("a dataset with a domain got %+v", l)
	}
	var dd struct {
		Suggestions []suggestionOut `json:"suggestions"`
	}
	e.Do(t, http.MethodGet, "/api/v1/datasets/"+view, e.viewer, nil).JSON(t, &dd)
	if findSuggestion(dd.Suggestions, "domain:"+domID) == nil {
		t.Fatalf("detail suggestions %+v", dd.Suggestions)
	}
	// Accepting adds the dataset to the domain; no new proposal follows.
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sg.ID+"/accept", e.admin, nil); r.Status != 200 {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	d := e.get(t, "/api/v1/domains/"+domID, e.admin)
	members, _ := d["dataset_ids"].([]any)
	if len(members) != 2 {
		t.Fatalf("domain members after accept: %v", d["dataset_ids"])
	}
	e.scan(t, conn)
	for _, s := range e.suggestions(t, "?category=domain&dataset_id="+view) {
		if s.Status == "open" {
			t.Fatalf("proposed again after joining: %+v", s)
		}
	}
}
