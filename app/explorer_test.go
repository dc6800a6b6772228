package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/graph/explorer/explorertest"
	"github.com/vigia-data/vigia/internal/browsertest"
)

func TestExplorerRunsAQueryInChromium(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "explorer")
	tok := env.MustToken(t, ws)
	env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "vendas", "encomendas_explorer")

	page := env.Do(t, http.MethodGet, "/graphql", "", nil)
	if page.Status != 200 || !strings.Contains(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("explorer page: %d %s", page.Status, page.Header.Get("Content-Type"))
	}
	b := browsertest.New(t)
	out, err := explorertest.RunQuery(b.Context(), env.Server.URL+"/graphql#token="+tok,
		"query Datasets { datasets { total items { name latestScore } } }")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "vendas.encomendas_explorer") || !strings.Contains(out, "87.5") {
		t.Fatalf("result pane: %s", out)
	}
	if p := b.Problems(); len(p) > 0 {
		t.Fatalf("browser problems: %v", p)
	}
	if strings.Contains(env.Logs.String(), tok) {
		t.Fatal("token reached the log")
	}
}

// The operation a new explorer tab opens with is valid against the schema: run as it
// is, it answers data and no errors.
func TestExplorerDefaultQueryRunsInChromium(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "explorer-default")
	tok := env.MustToken(t, ws)
	env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "vendas", "faturas_default")
	b := browsertest.New(t)
	out, err := explorertest.RunDefaultQuery(b.Context(), env.Server.URL+"/graphql#token="+tok)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result pane is not a GraphQL answer: %s", out)
	}
	if len(res.Errors) > 0 || res.Data["datasets"] == nil || !strings.Contains(out, "vendas.faturas_default") {
		t.Fatalf("the default query failed: %s", out)
	}
	if p := b.Problems(); len(p) > 0 {
		t.Fatalf("browser problems: %v", p)
	}
}

func TestExplorerRunsALineageTraversalInChromium(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "explorer-lineage")
	tok := env.MustToken(t, ws)
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	conn := env.MustConnection(t, ws, "pg")
	src := env.MustDataset(t, ws, conn, "vendas", "encomendas")
	dst := env.MustDataset(t, ws, conn, "vendas", "receita_diaria")
	if r := env.Do(t, http.MethodPost, "/api/v1/lineage/edges", admin, map[string]any{"source_id": src, "target_id": dst,
		"column_map": []any{map[string]any{"from": "telefone", "to": "telefone", "direct": true}}}); r.Status != 204 {
		t.Fatalf("declare: %d %s", r.Status, r.Body)
	}
	b := browsertest.New(t)
	out, err := explorertest.RunQuery(b.Context(), env.Server.URL+"/graphql#token="+tok,
		`query Lineage { dataset(id: "`+src+`") { lineage(direction: downstream, hops: 2) { nodes { name hops } edges { kind columnMap { from to } } truncated } } }`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vendas.receita_diaria", `"declared"`, `"telefone"`, `"truncated": false`} {
		if !strings.Contains(out, want) {
			t.Fatalf("result pane lacks %s: %s", want, out)
		}
	}
	if p := b.Problems(); len(p) > 0 {
		t.Fatalf("browser problems: %v", p)
	}
}
