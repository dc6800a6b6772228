package app_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

type kbEntryOut struct {
	ID    string   `json:"id"`
	Kind  string   `json:"kind"`
	Title string   `json:"title"`
	Tags  []string `json:"tags"`
	Links []struct {
		DatasetID string  `json:"dataset_id"`
		Column    *string `json:"column"`
	} `json:"links"`
	Outdated    bool     `json:"outdated"`
	AIGenerated bool     `json:"ai_generated"`
	AIModel     *string  `json:"ai_model"`
	Score       *float64 `json:"score"`
}

type kbEnv struct {
	env    *apptest.Env
	member string
	token  string
}

func (k kbEnv) post(t *testing.T, body map[string]any) kbEntryOut {
	t.Helper()
	res := k.env.Do(t, http.MethodPost, "/api/v1/knowledge", k.member, body)
	if res.Status != http.StatusCreated {
		t.Fatalf("create %v: %d %s", body["title"], res.Status, res.Body)
	}
	var e kbEntryOut
	res.JSON(t, &e)
	return e
}

func (k kbEnv) search(t *testing.T, query string) ([]kbEntryOut, string) {
	t.Helper()
	res := k.env.Do(t, http.MethodGet, "/api/v1/knowledge?"+query, k.token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("search %s: %d %s", query, res.Status, res.Body)
	}
	var out []kbEntryOut
	res.JSON(t, &out)
	return out, res.Header.Get("X-Total-Count")
}

func titles(es []kbEntryOut) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Title)
	}
	return out
}

// Must-show 4 of issue 18: an entry holding a NIF is gated (gate:pii, outdated) and
// reactivating it while the NIF is there is a 422 with the contract's code; the gate tag
// cannot be set or cleared by hand. Search in Portuguese finds an entry by an accented
// word written without accents; the hybrid search's total is the fused list size.
func TestKnowledgePIIGateAndHybridSearch(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "kb")
	k := kbEnv{env: env, member: env.MustSession(t, ws, vigia.RoleMember), token: env.MustToken(t, ws)}
	conn := env.MustConnection(t, ws, "warehouse")
	orders := env.MustDataset(t, ws, conn, "sales", "orders")

	analysis := k.post(t, map[string]any{"kind": "note", "title": "Análise de retenção",
		"body":  "A análise mensal de retenção usa as encomendas pagas; a migração do ERP mudou a definição de cliente ativo.",
		"links": []any{map[string]any{"dataset_id": orders}}})
	if analysis.AIGenerated || analysis.AIModel != nil || analysis.Outdated || len(analysis.Tags) != 0 {
		t.Fatalf("plain note: %+v", analysis)
	}
	k.post(t, map[string]any{"kind": "note", "title": "Shipping delays", "body": "Carrier feeds arrive late on Mondays."})
	k.post(t, map[string]any{"kind": "term", "title": "Cliente ativo", "body": "Cliente com pelo menos uma compra nos últimos 90 dias."})

	// Portuguese full-text without accents: "analise" and "migracao" find the accented words.
	for _, q := range []string{"analise", "migracao ERP", "ANÁLISE"} {
		got, total := k.search(t, "q="+url.QueryEscape(q))
		if len(got) == 0 || got[0].ID != analysis.ID || got[0].Score == nil || *got[0].Score <= 0 {
			t.Fatalf("q=%s: %v", q, titles(got))
		}
		if total != "1" && q != "migracao ERP" {
			t.Fatalf("q=%s: total %s for %v", q, total, titles(got))
		}
	}
	// A stemmed Portuguese form ("ativos") matches through the portuguese configuration, and
	// the fused list names both entries holding the word; the total is the fused list size.
	got, total := k.search(t, "q=clientes+ativos")
	if !slices.Contains(titles(got), "Cliente ativo") || !slices.Contains(titles(got), "Análise de retenção") || total != "2" {
		t.Fatalf("clientes ativos: %v total %s", titles(got), total)
	}
	// A typo is found by trigram similarity alone.
	got, _ = k.search(t, "q=retencao+mensall")
	if len(got) == 0 || got[0].ID != analysis.ID {
		t.Fatalf("trigram: %v", titles(got))
	}
	// A page past the end keeps the fused total.
	got, total = k.search(t, "q=clientes+ativos&offset=5")
	if len(got) != 0 || total != "2" {
		t.Fatalf("past the end: %v total %s", titles(got), total)
	}
	if got, _ := k.search(t, "q=analise&dataset_id="+orders); len(got) != 1 {
		t.Fatalf("by dataset: %v", titles(got))
	}

	// The PII gate.
	gated := k.post(t, map[string]any{"kind": "note", "title": "Reclamação do cliente",
		"body": "O cliente com NIF 123456789 pediu a correção da morada.", "tags": []any{"suporte"}})
	if !gated.Outdated || !slices.Contains(gated.Tags, "gate:pii") || !slices.Contains(gated.Tags, "suporte") {
		t.Fatalf("gated entry: %+v", gated)
	}
	// It leaves searches unless outdated entries are asked for.
	if got, _ := k.search(t, "q=reclamacao"); len(got) != 0 {
		t.Fatalf("gated entry searched: %v", titles(got))
	}
	if got, _ := k.search(t, "q=reclamacao&include_outdated=true"); len(got) != 1 || got[0].ID != gated.ID {
		t.Fatalf("include_outdated: %v", titles(got))
	}
	patch := func(id string, body map[string]any) *apptest.Response {
		t.Helper()
		return env.Do(t, http.MethodPatch, "/api/v1/knowledge/"+id, k.member, body)
	}
	res := patch(gated.ID, map[string]any{"outdated": false})
	if res.Status != http.StatusUnprocessableEntity || !strings.Contains(string(res.Body), `"service_knowledge_reactivate_contains_pii"`) ||
		strings.Contains(string(res.Body), "123456789") {
		t.Fatalf("reactivate with the NIF: %d %s", res.Status, res.Body)
	}
	// Tags cannot remove the gate, nor add it to another entry.
	res = patch(gated.ID, map[string]any{"tags": []any{"suporte", "morada"}})
	var e kbEntryOut
	res.JSON(t, &e)
	if res.Status != http.StatusOK || !slices.Contains(e.Tags, "gate:pii") || !slices.Contains(e.Tags, "morada") || !e.Outdated {
		t.Fatalf("tags without the gate: %d %s", res.Status, res.Body)
	}
	res = patch(analysis.ID, map[string]any{"tags": []any{"gate:pii", "retencao"}})
	res.JSON(t, &e)
	if res.Status != http.StatusOK || slices.Contains(e.Tags, "gate:pii") || e.Outdated {
		t.Fatalf("gate added by hand: %d %s", res.Status, res.Body)
	}
	// Stored as the service left it: the gate is in the database, the analysis is clean.
	var dbTags []string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT tags FROM kb_entries WHERE id = $1`, gated.ID).Scan(&dbTags); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dbTags, "gate:pii") {
		t.Fatalf("stored tags: %v", dbTags)
	}
	// With the NIF gone, reactivation runs the gate again and clears it.
	res = patch(gated.ID, map[string]any{"body": "O cliente pediu a correção da morada (ver ticket).", "outdated": false})
	res.JSON(t, &e)
	if res.Status != http.StatusOK || slices.Contains(e.Tags, "gate:pii") || e.Outdated {
		t.Fatalf("reactivated: %d %s", res.Status, res.Body)
	}
	if got, _ := k.search(t, "q=reclamacao"); len(got) != 1 {
		t.Fatalf("reactivated entry not searched: %v", titles(got))
	}
	// New personal data in an edit gates the entry again.
	res = patch(gated.ID, map[string]any{"body": "Contacto: ana.silva@example.pt"})
	res.JSON(t, &e)
	if res.Status != http.StatusOK || !slices.Contains(e.Tags, "gate:pii") || !e.Outdated {
		t.Fatalf("edited with an e-mail: %d %s", res.Status, res.Body)
	}

	// Tokens read but do not write; viewers do not write; another workspace's entry is 404.
	if r := env.Do(t, http.MethodPost, "/api/v1/knowledge", k.token, map[string]any{"kind": "note", "title": "x"}); r.Status != http.StatusForbidden {
		t.Fatalf("token write: %d", r.Status)
	}
	if r := env.Do(t, http.MethodPost, "/api/v1/knowledge", env.MustSession(t, ws, vigia.RoleViewer), map[string]any{"kind": "note", "title": "x"}); r.Status != http.StatusForbidden {
		t.Fatalf("viewer write: %d", r.Status)
	}
	other := env.MustWorkspace(t, "kb-other")
	otherMember := env.MustSession(t, other, vigia.RoleMember)
	if r := env.Do(t, http.MethodPatch, "/api/v1/knowledge/"+analysis.ID, otherMember, map[string]any{"title": "mine"}); r.Status != http.StatusNotFound {
		t.Fatalf("foreign entry: %d", r.Status)
	}
	if r := env.Do(t, http.MethodGet, "/api/v1/knowledge/"+analysis.ID, env.MustToken(t, other), nil); r.Status != http.StatusNotFound {
		t.Fatalf("foreign entry read: %d", r.Status)
	}
	// A link to another workspace's dataset is 404; a column the dataset lacks is 422.
	if r := env.Do(t, http.MethodPost, "/api/v1/knowledge", otherMember, map[string]any{"kind": "note", "title": "x",
		"links": []any{map[string]any{"dataset_id": orders}}}); r.Status != http.StatusNotFound {
		t.Fatalf("foreign link: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, http.MethodPost, "/api/v1/knowledge", k.member, map[string]any{"kind": "note", "title": "x",
		"links": []any{map[string]any{"dataset_id": orders, "column": "nope"}}}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("unknown column: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, http.MethodGet, "/api/v1/knowledge?kind=essay", k.token, nil); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad kind: %d", r.Status)
	}
}

// Must-show 5 of issue 18: the knowledge graph focused on a dataset shows its glossary
// term and metric through means edges; a decision carries the snapshot it was made on,
// and the next snapshot's diff adds the term, the metric and their edges.
func TestKnowledgeGraphTermsAndDecisions(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "kbg")
	k := kbEnv{env: env, member: env.MustSession(t, ws, vigia.RoleMember), token: env.MustToken(t, ws)}
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	conn := env.MustConnection(t, ws, "warehouse")
	customers := env.MustDataset(t, ws, conn, "crm", "customers")
	orders := env.MustDataset(t, ws, conn, "sales", "orders")

	res := env.Do(t, http.MethodPost, "/api/v1/knowledge/graph/snapshot", admin, nil)
	if res.Status != http.StatusCreated {
		t.Fatalf("first snapshot: %d %s", res.Status, res.Body)
	}
	var first struct {
		ID string `json:"id"`
	}
	res.JSON(t, &first)

	term := k.post(t, map[string]any{"kind": "term", "title": "Cliente ativo", "body": "Cliente com uma compra nos últimos 90 dias.",
		"links": []any{map[string]any{"dataset_id": customers}, map[string]any{"dataset_id": customers, "column": "telefone"}}})
	metric := k.post(t, map[string]any{"kind": "metric", "title": "Receita mensal", "body": "Soma das encomendas pagas por mês.",
		"links": []any{map[string]any{"dataset_id": orders, "column": "id"}}})
	k.post(t, map[string]any{"kind": "note", "title": "Contacto do dono: ana@example.pt", "links": []any{map[string]any{"dataset_id": customers}}})

	// The decision is made on the graph with the term and metric: a new snapshot.
	decision := k.post(t, map[string]any{"kind": "decision", "title": "Clientes sem compra há 90 dias deixam de ser ativos",
		"tags": []any{"snapshot:forged"}, "links": []any{map[string]any{"dataset_id": customers}}})
	var snapTags []string
	for _, tg := range decision.Tags {
		if strings.HasPrefix(tg, "snapshot:") {
			snapTags = append(snapTags, tg)
		}
	}
	if len(snapTags) != 1 || snapTags[0] == "snapshot:"+first.ID || snapTags[0] == "snapshot:forged" {
		t.Fatalf("decision tags: %v (first snapshot %s)", decision.Tags, first.ID)
	}
	snap := strings.TrimPrefix(snapTags[0], "snapshot:")

	type graphOut struct {
		Nodes []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"nodes"`
		Edges []struct {
			Source string `json:"source"`
			Target string `json:"target"`
			Kind   string `json:"kind"`
		} `json:"edges"`
		Stats struct {
			ByEdgeKind map[string]int `json:"by_edge_kind"`
		} `json:"stats"`
	}
	var g graphOut
	res = env.Do(t, http.MethodGet, "/api/v1/knowledge/graph?focus=dataset:"+customers, k.token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("graph: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &g)
	hasEdge := func(src, dst, kind string) bool {
		for _, e := range g.Edges {
			if e.Source == src && e.Target == dst && e.Kind == kind {
				return true
			}
		}
		return false
	}
	kinds := map[string]string{}
	for _, n := range g.Nodes {
		kinds[n.ID] = n.Kind
		if strings.Contains(n.Name, "ana@example.pt") {
			t.Fatalf("a gated entry is in the graph: %+v", n)
		}
	}
	if kinds["term:"+term.ID] != "term" || !hasEdge("term:"+term.ID, "dataset:"+customers, "means") ||
		kinds["kb_entry:"+decision.ID] != "kb_entry" || !hasEdge("kb_entry:"+decision.ID, "dataset:"+customers, "means") ||
		g.Stats.ByEdgeKind["means"] != 2 {
		t.Fatalf("focus on customers: %s", res.Body)
	}
	if _, ok := kinds["metric:"+metric.ID]; ok {
		t.Fatalf("orders' metric in the customers focus without lineage: %s", res.Body)
	}
	// The kinds filter keeps terms alone.
	res = env.Do(t, http.MethodGet, "/api/v1/knowledge/graph?focus=dataset:"+orders+"&kinds=metric,dataset", k.token, nil)
	g = graphOut{}
	res.JSON(t, &g)
	if !hasEdge("metric:"+metric.ID, "dataset:"+orders, "means") || len(g.Nodes) != 2 {
		t.Fatalf("focus on orders, metrics: %s", res.Body)
	}

	// The diff from the first snapshot to the decision's adds the term and the metric.
	res = env.Do(t, http.MethodGet, "/api/v1/knowledge/graph/diff?from="+first.ID+"&to="+snap, k.token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("diff: %d %s", res.Status, res.Body)
	}
	var d struct {
		AddedNodes []struct {
			ID string `json:"id"`
		} `json:"added_nodes"`
		ByKind map[string]struct {
			Added int `json:"added"`
		} `json:"by_kind"`
	}
	res.JSON(t, &d)
	if d.ByKind["term"].Added != 1 || d.ByKind["metric"].Added != 1 || d.ByKind["means"].Added != 2 || d.ByKind["kb_entry"].Added != 0 {
		t.Fatalf("diff: %s", res.Body)
	}
}
