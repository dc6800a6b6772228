package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
)

// A dataset in a domain without an owner whose lineage neighbour's domain has one gets
// an owner suggestion after a scan; accepting sets the owner on its domain, dismissing
// keeps it dismissed, and one whose domain got an owner meanwhile is refused on accept
// and withdrawn at the next scan.
func TestOwnerSuggestionsForDatasetsWithoutOne(t *testing.T) {
	e := newWF(t, "ownsug")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE vendas (id integer PRIMARY KEY, total numeric(10,2))`)
	src.exec(t, `INSERT INTO vendas VALUES (1, 10), (2, 20), (3, 30)`)
	for _, v := range []string{"vendas_grandes", "vendas_pequenas", "vendas_medias", "vendas_soltas"} {
		src.exec(t, `CREATE VIEW `+v+` AS SELECT id, total FROM vendas WHERE total > 15`)
	}
	conn := e.connect(t, "loja", "postgres", src.dsn)
	e.scan(t, conn)
	base := e.dataset(t, conn, "vendas")
	grandes, pequenas, medias, soltas := e.dataset(t, conn, "vendas_grandes"), e.dataset(t, conn, "vendas_pequenas"),
		e.dataset(t, conn, "vendas_medias"), e.dataset(t, conn, "vendas_soltas")
	domain := func(name string, owner *string, ids ...string) string {
		t.Helper()
		body := map[string]any{"name": name, "dataset_ids": ids}
		if owner != nil {
			body["owner_name"] = *owner
		}
		r := e.Do(t, http.MethodPost, "/api/v1/domains", e.admin, body)
		if r.Status != 201 {
			t.Fatalf("domain %s: %d %s", name, r.Status, r.Body)
		}
		var d map[string]any
		r.JSON(t, &d)
		return d["id"].(string)
	}
	owner := "Equipa Comercial"
	domain("Vendas", &owner, base)
	relatorios, operacoes, financas := domain("Relatórios", nil, grandes), domain("Operações", nil, pequenas), domain("Finanças", nil, medias)
	e.scan(t, conn)

	for id, dom := range map[string]string{grandes: relatorios, pequenas: operacoes, medias: financas} {
		list := e.suggestions(t, "?category=owner&dataset_id="+id)
		sg := findSuggestion(list, "owner:"+dom)
		if len(list) != 1 || sg == nil || sg.Category != "owner" || sg.Status != "open" || sg.Params["owner_name"] != owner ||
			sg.Params["domain_id"] != dom || sg.Params["votes"].(float64) != 1 || sg.Params["total_links"].(float64) != 1 {
			t.Fatalf("owner suggestions of %s: %+v", id, list)
		}
		from, _ := sg.Params["from_domains"].([]any)
		if len(from) != 1 || from[0].(map[string]any)["domain_name"] != "Vendas" {
			t.Fatalf("from_domains %+v", sg.Params["from_domains"])
		}
	}
	// The owned dataset, and one without a domain (a domain suggestion's case), get none.
	for _, id := range []string{base, soltas} {
		if l := e.suggestions(t, "?category=owner&dataset_id="+id); len(l) != 0 {
			t.Fatalf("owner suggestion for %s: %+v", id, l)
		}
	}
	if findSuggestion(e.suggestions(t, "?category=domain&dataset_id="+soltas), "owner:"+relatorios) != nil {
		t.Fatal("owner suggestion among domain ones")
	}
	var dd struct {
		Suggestions []suggestionOut `json:"suggestions"`
	}
	e.Do(t, http.MethodGet, "/api/v1/datasets/"+grandes, e.viewer, nil).JSON(t, &dd)
	sgG := findSuggestion(dd.Suggestions, "owner:"+relatorios)
	if sgG == nil {
		t.Fatalf("detail suggestions %+v", dd.Suggestions)
	}

	// Another workspace cannot see or decide it; a member without a grant on the domain
	// cannot set its owner (the domain update's permission), and nothing changes.
	other := e.MustWorkspace(t, "ownsug-other")
	otherAdmin := e.MustSession(t, other, vigia.RoleAdmin)
	for _, path := range []string{"/api/v1/suggestions/" + sgG.ID, "/api/v1/suggestions/" + sgG.ID + "/accept"} {
		method := http.MethodGet
		if path != "/api/v1/suggestions/"+sgG.ID {
			method = http.MethodPost
		}
		if r := e.Do(t, method, path, otherAdmin, nil); r.Status != 404 {
			t.Fatalf("other workspace %s: %d %s", path, r.Status, r.Body)
		}
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sgG.ID+"/accept", e.member, nil); r.Status != 403 {
		t.Fatalf("member accept: %d %s", r.Status, r.Body)
	}
	if d := e.get(t, "/api/v1/domains/"+relatorios, e.admin); d["owner_name"] != nil {
		t.Fatalf("owner set by a refused accept: %v", d["owner_name"])
	}

	// Accepting sets the owner on the domain.
	r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sgG.ID+"/accept", e.admin, nil)
	var acc suggestionOut
	r.JSON(t, &acc)
	if r.Status != 200 || acc.Status != "accepted" {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	if d := e.get(t, "/api/v1/domains/"+relatorios, e.admin); d["owner_name"] != owner {
		t.Fatalf("domain owner after accept: %v", d["owner_name"])
	}

	// Dismissing.
	sgP := findSuggestion(e.suggestions(t, "?category=owner&dataset_id="+pequenas), "owner:"+operacoes)
	r = e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sgP.ID+"/dismiss", e.member, nil)
	if r.Status != 200 {
		t.Fatalf("dismiss: %d %s", r.Status, r.Body)
	}
	if d := e.get(t, "/api/v1/domains/"+operacoes, e.admin); d["owner_name"] != nil {
		t.Fatalf("dismiss set an owner: %v", d["owner_name"])
	}

	// Finanças gets an owner elsewhere: the accept is refused, the next scan withdraws it.
	sgM := findSuggestion(e.suggestions(t, "?category=owner&dataset_id="+medias), "owner:"+financas)
	if r := e.Do(t, http.MethodPatch, "/api/v1/domains/"+financas, e.admin, map[string]any{"owner_name": "Equipa Financeira"}); r.Status != 200 {
		t.Fatalf("patch owner: %d %s", r.Status, r.Body)
	}
	r = e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sgM.ID+"/accept", e.admin, nil)
	if r.Status != 409 || !strings.Contains(string(r.Body), "suggestion_no_longer_holds") {
		t.Fatalf("stale accept: %d %s", r.Status, r.Body)
	}
	if d := e.get(t, "/api/v1/domains/"+financas, e.admin); d["owner_name"] != "Equipa Financeira" {
		t.Fatalf("stale accept changed the owner: %v", d["owner_name"])
	}

	e.scan(t, conn)
	if l := e.suggestions(t, "?category=owner&dataset_id="+medias); len(l) != 0 {
		t.Fatalf("not withdrawn: %+v", l)
	}
	if l := e.suggestions(t, "?category=owner&dataset_id="+grandes); len(l) != 1 || l[0].Status != "accepted" {
		t.Fatalf("accepted one after rescan: %+v", l)
	}
	if l := e.suggestions(t, "?category=owner&dataset_id="+pequenas); len(l) != 1 || l[0].Status != "dismissed" {
		t.Fatalf("dismissed one after rescan: %+v", l)
	}
}
