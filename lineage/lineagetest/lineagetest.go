// Package lineagetest is the one contract suite every lineage graph backend passes:
// pggraph's tests run it on Postgres, neo4jgraph's on Neo4j wherever NEO4J_URI is set.
package lineagetest

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/lineage"
)

// Run runs the suite on the backend g. Each subtest works in its own fresh workspace
// id, so the suite may share a backend with other tests.
func Run(t *testing.T, g lineage.Graph) {
	t.Helper()
	ctx := context.Background()
	ws := func() string { return vigia.NewID() }

	t.Run("UpsertedEdgesAreNeighboursBothWays", func(t *testing.T) {
		w := ws()
		a, b, c := vigia.NewID(), vigia.NewID(), vigia.NewID()
		mustApply(t, g, w, lineage.Change{
			UpsertNodes: []lineage.Node{{ID: a, Kind: lineage.NodeDataset, Name: "public.orders"}},
			UpsertEdges: []lineage.Edge{
				{Source: a, Target: b, Kind: lineage.KindParsed, Origin: "view_sql", ColumnLevel: true,
					Columns: []lineage.ColumnPair{{From: "amount", To: "amount", Direct: true}, {From: "amount", To: "size_band"}}},
				{Source: a, Target: c, Kind: lineage.KindInferred, ColumnLevel: true, LinkingColumn: "order_id",
					Columns: []lineage.ColumnPair{{From: "id", To: "order_id", Direct: true}}},
				{Source: b, Target: c, Kind: lineage.KindDeclared},
			}})
		down := mustNeighbours(t, g, w, []string{a}, lineage.Downstream)
		want := []lineage.Edge{
			{Source: a, Target: b, Kind: lineage.KindParsed, Origin: "view_sql", ColumnLevel: true,
				Columns: []lineage.ColumnPair{{From: "amount", To: "amount", Direct: true}, {From: "amount", To: "size_band"}}},
			{Source: a, Target: c, Kind: lineage.KindInferred, ColumnLevel: true, LinkingColumn: "order_id",
				Columns: []lineage.ColumnPair{{From: "id", To: "order_id", Direct: true}}},
		}
		if d := cmp.Diff(sorted(want), sorted(down)); d != "" {
			t.Fatalf("downstream of a (-want +got):\n%s", d)
		}
		up := mustNeighbours(t, g, w, []string{c}, lineage.Upstream)
		if got := targets(up, true); !equal(got, sortedIDs(a, b)) {
			t.Fatalf("upstream of c: %v", got)
		}
		both := mustNeighbours(t, g, w, []string{a, b}, lineage.Downstream)
		if len(both) != 3 {
			t.Fatalf("batched frontier: %d edges, want 3", len(both))
		}
	})

	t.Run("ApplyIsIdempotentAndUpdatesInPlace", func(t *testing.T) {
		w := ws()
		a, b := vigia.NewID(), vigia.NewID()
		e := lineage.Edge{Source: a, Target: b, Kind: lineage.KindDBT, Origin: "dbt:shop"}
		for range 3 {
			mustApply(t, g, w, lineage.Change{UpsertEdges: []lineage.Edge{e}})
		}
		e.Columns = []lineage.ColumnPair{{From: "x", To: "y"}}
		e.ColumnLevel = true
		mustApply(t, g, w, lineage.Change{UpsertEdges: []lineage.Edge{e}})
		got := mustNeighbours(t, g, w, []string{a}, lineage.Downstream)
		if d := cmp.Diff([]lineage.Edge{e}, got); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
	})

	t.Run("EdgesOfDifferentKindsBetweenTheSameNodesCoexist", func(t *testing.T) {
		w := ws()
		a, b := vigia.NewID(), vigia.NewID()
		mustApply(t, g, w, lineage.Change{UpsertEdges: []lineage.Edge{
			{Source: a, Target: b, Kind: lineage.KindParsed}, {Source: a, Target: b, Kind: lineage.KindOpenLineage}}})
		if n := len(mustNeighbours(t, g, w, []string{a}, lineage.Downstream)); n != 2 {
			t.Fatalf("%d edges, want 2", n)
		}
		mustApply(t, g, w, lineage.Change{DeleteEdges: []lineage.EdgeKey{{Source: a, Target: b, Kind: lineage.KindParsed}}})
		got := mustNeighbours(t, g, w, []string{a}, lineage.Downstream)
		if len(got) != 1 || got[0].Kind != lineage.KindOpenLineage {
			t.Fatalf("after deleting the parsed edge: %+v", got)
		}
	})

	t.Run("DeletingANodeDeletesItsEdges", func(t *testing.T) {
		w := ws()
		a, b, c := vigia.NewID(), vigia.NewID(), vigia.NewID()
		mustApply(t, g, w, lineage.Change{UpsertEdges: []lineage.Edge{
			{Source: a, Target: b, Kind: lineage.KindParsed}, {Source: b, Target: c, Kind: lineage.KindParsed}}})
		mustApply(t, g, w, lineage.Change{DeleteNodes: []string{b}})
		if n := len(mustNeighbours(t, g, w, []string{a}, lineage.Downstream)); n != 0 {
			t.Fatalf("a still has %d downstream edges", n)
		}
		if n := len(mustNeighbours(t, g, w, []string{c}, lineage.Upstream)); n != 0 {
			t.Fatalf("c still has %d upstream edges", n)
		}
		ex, err := g.Export(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ex.Nodes {
			if n.ID == b {
				t.Fatal("deleted node exported")
			}
		}
	})

	t.Run("ExposuresAreNodesOfTheirOwnKind", func(t *testing.T) {
		w := ws()
		a, x := vigia.NewID(), lineage.ExposureNodeID(vigia.NewID())
		mustApply(t, g, w, lineage.Change{
			UpsertNodes: []lineage.Node{{ID: x, Kind: lineage.NodeExposure, Name: "Receita", Type: "dashboard"}},
			UpsertEdges: []lineage.Edge{{Source: a, Target: x, Kind: lineage.KindDeclared}}})
		ex, err := g.Export(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]lineage.NodeKind{}
		for _, n := range ex.Nodes {
			kinds[n.ID] = n.Kind
			if n.ID == x && (n.Name != "Receita" || n.Type != "dashboard") {
				t.Fatalf("exposure node: %+v", n)
			}
		}
		if kinds[a] != lineage.NodeDataset || kinds[x] != lineage.NodeExposure {
			t.Fatalf("kinds: %v", kinds)
		}
		if len(ex.Edges) != 1 {
			t.Fatalf("edges: %+v", ex.Edges)
		}
	})

	t.Run("WorkspacesAreIsolated", func(t *testing.T) {
		w1, w2 := ws(), ws()
		a, b := vigia.NewID(), vigia.NewID()
		mustApply(t, g, w1, lineage.Change{UpsertEdges: []lineage.Edge{{Source: a, Target: b, Kind: lineage.KindParsed}}})
		if n := len(mustNeighbours(t, g, w2, []string{a}, lineage.Downstream)); n != 0 {
			t.Fatalf("another workspace sees %d edges", n)
		}
		ex, err := g.Export(ctx, w2)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Nodes)+len(ex.Edges) != 0 {
			t.Fatalf("another workspace exports %d nodes, %d edges", len(ex.Nodes), len(ex.Edges))
		}
		if err := g.Clear(ctx, w2); err != nil {
			t.Fatal(err)
		}
		if n := len(mustNeighbours(t, g, w1, []string{a}, lineage.Downstream)); n != 1 {
			t.Fatal("clearing another workspace removed an edge")
		}
		if err := g.Clear(ctx, w1); err != nil {
			t.Fatal(err)
		}
		ex, err = g.Export(ctx, w1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Nodes)+len(ex.Edges) != 0 {
			t.Fatal("clear left nodes or edges")
		}
	})

	t.Run("ExportFeedsReachCounts", func(t *testing.T) {
		w := ws()
		ids := make([]string, 6)
		for i := range ids {
			ids[i] = vigia.NewID()
		}
		// 0 → 1 → 2 → 3, 0 → 4, 5 isolated, a cycle 3 → 1.
		mustApply(t, g, w, lineage.Change{UpsertEdges: []lineage.Edge{
			{Source: ids[0], Target: ids[1], Kind: lineage.KindParsed}, {Source: ids[1], Target: ids[2], Kind: lineage.KindParsed},
			{Source: ids[2], Target: ids[3], Kind: lineage.KindParsed}, {Source: ids[0], Target: ids[4], Kind: lineage.KindDeclared},
			{Source: ids[3], Target: ids[1], Kind: lineage.KindInferred},
			{Source: ids[4], Target: lineage.ExposureNodeID(ids[5]), Kind: lineage.KindDeclared}}})
		ex, err := g.Export(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		r := lineage.Reach(ex.Edges)
		want := map[string]int{ids[0]: 4, ids[1]: 2, ids[2]: 2, ids[3]: 2, ids[4]: 0}
		for id, n := range want {
			if r[id] != n {
				t.Errorf("reach of %d: %d, want %d", indexOf(ids, id), r[id], n)
			}
		}
	})

	t.Run("UnknownDirectionIsAnError", func(t *testing.T) {
		if _, err := g.Neighbours(ctx, ws(), []string{vigia.NewID()}, lineage.Both); err == nil {
			t.Fatal("both accepted")
		}
	})
}

func mustApply(tb testing.TB, g lineage.Graph, ws string, c lineage.Change) {
	tb.Helper()
	if err := g.Apply(context.Background(), ws, c); err != nil {
		tb.Fatal(err)
	}
}

func mustNeighbours(tb testing.TB, g lineage.Graph, ws string, ids []string, dir lineage.Direction) []lineage.Edge {
	tb.Helper()
	es, err := g.Neighbours(context.Background(), ws, ids, dir)
	if err != nil {
		tb.Fatal(err)
	}
	return es
}

func sorted(es []lineage.Edge) []lineage.Edge {
	out := append([]lineage.Edge{}, es...)
	sort.Slice(out, func(i, j int) bool {
		return fmt.Sprint(out[i].Source, out[i].Target, out[i].Kind) < fmt.Sprint(out[j].Source, out[j].Target, out[j].Kind)
	})
	return out
}

func targets(es []lineage.Edge, sources bool) []string {
	var out []string
	for _, e := range es {
		if sources {
			out = append(out, e.Source)
		} else {
			out = append(out, e.Target)
		}
	}
	sort.Strings(out)
	return out
}

func sortedIDs(ids ...string) []string {
	sort.Strings(ids)
	return ids
}

func equal(a, b []string) bool { return cmp.Equal(a, b) }

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
