package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/internal/browsertest"
	"github.com/vigia-data/vigia/ui"
)

// bigGraph is a layered traversal answer of n datasets (layers of 50, each dataset
// fed by one or two of the layer before), larger than the API's own traversal cap:
// it measures how the app draws a graph of that size, not what the API returns.
func bigGraph(n int) map[string]any {
	kinds := []string{"parsed", "declared", "dbt", "openlineage", "inferred"}
	var nodes, edges []map[string]any
	for i := range n {
		ref := fmt.Sprintf("d%04d", i)
		name := fmt.Sprintf("mart.tabela_%04d", i)
		nodes = append(nodes, map[string]any{"ref": ref, "id": ref, "name": name, "restricted": false, "hops": i / 50})
		if i >= 50 {
			layer := i / 50
			p1 := (layer-1)*50 + (i*7)%50
			edges = append(edges, map[string]any{"source": fmt.Sprintf("d%04d", p1), "target": ref, "kind": kinds[i%5], "column_level": true,
				"column_map": []map[string]any{{"from": "id", "to": "id", "direct": true}}})
			if i%3 == 0 {
				p2 := (layer-1)*50 + (i*13+5)%50
				edges = append(edges, map[string]any{"source": fmt.Sprintf("d%04d", p2), "target": ref, "kind": "parsed", "column_level": false})
			}
		}
	}
	return map[string]any{"dataset_id": "d0000", "direction": "downstream", "hops": 3, "nodes": nodes, "edges": edges,
		"exposures": []any{}, "truncated": true}
}

// fakeAPI answers the few REST reads the lineage page makes, for a bearer token.
func fakeAPI(t *testing.T, token string, graph map[string]any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"auth_required","detail":"","request_id":"x"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch p := r.URL.Path; {
		case strings.HasSuffix(p, "/lineage/traverse"):
			body = graph
		case strings.HasSuffix(p, "/lineage"):
			body = map[string]any{"dataset_id": "d0000", "exposures": []any{}}
		case strings.HasSuffix(p, "/consumers"), p == "/api/v1/datasets", p == "/api/v1/connections", p == "/api/v1/domains":
			w.Header().Set("X-Total-Count", "0")
			body = []any{}
		case p == "/api/v1/datasets/d0000":
			body = map[string]any{"id": "d0000", "name": "mart.tabela_0000", "columns": []map[string]any{{"name": "id"}}}
		default:
			w.WriteHeader(http.StatusNotFound)
			body = map[string]any{"code": "not_found", "detail": "", "request_id": "x"}
		}
		_ = json.NewEncoder(w).Encode(body)
	})
}

// The lineage view with 400 datasets and their edges: laid out and answering a click.
// The times are logged for docs/benchmarks.md, not asserted.
func TestLineageGraphOf400NodesInBrowser(t *testing.T) {
	b := browsertest.New(t)
	msgs, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	token := "svc_" + strings.Repeat("ab", 24)
	graph := bigGraph(400)
	mux := http.NewServeMux()
	mux.Handle("GET /ui/", ui.Handler(msgs))
	mux.Handle("/api/v1/", fakeAPI(t, token, graph))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b.Navigate(srv.URL + "/ui/#token=" + token)
	b.WaitVisible("#no-results")
	var start float64
	b.Eval(`(() => { const t0 = performance.now(); location.hash = "#/datasets/d0000/lineage?hops=3&direction=downstream"; return t0 })()`, &start)
	var res struct {
		Nodes    int     `json:"nodes"`
		LayoutMs float64 `json:"layoutMs"`
		ReadyMs  float64 `json:"readyMs"`
	}
	b.Run("graph laid out", chromedp.Poll(`(() => { const g = document.querySelector("#lineage-graph[data-nodes]");
		return g ? {nodes: Number(g.dataset.nodes), layoutMs: window.vigiaLayoutMs, readyMs: performance.now()} : false })()`,
		&res, chromedp.WithPollingTimeout(0)))
	if res.Nodes != 400 {
		t.Fatalf("nodes drawn: %d", res.Nodes)
	}
	// Interactive: a click on an edge (through Cytoscape's own tap) fills the panel.
	var clickMs float64
	b.Eval(`(() => { const t0 = performance.now(); const cy = document.getElementById("lineage-graph")._cyreg.cy;
		cy.edges('[kind = "parsed"]').first().emit("tap"); return performance.now() - t0 })()`, &clickMs)
	b.WaitVisible("#panel h3")
	if b.Text("#truncated") == "" {
		t.Fatal("truncated is not shown")
	}
	t.Logf("400-node focus graph: layout %.0f ms (Cytoscape + dagre), page ready %.0f ms after the link was followed, edge click %.1f ms",
		res.LayoutMs, res.ReadyMs-start, clickMs)
	if p := b.Problems(); len(p) > 0 {
		t.Fatalf("browser problems: %v", p)
	}
}
