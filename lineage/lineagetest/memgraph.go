package lineagetest

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/vigia-data/vigia/lineage"
)

// MemGraph is an in-memory lineage.Graph for tests of the layers above the port. It
// passes the same contract suite as the real backends and counts Neighbours calls,
// so tests can check that traversals batch their frontiers.
type MemGraph struct {
	mu         sync.Mutex
	nodes      map[string]map[string]lineage.Node
	edges      map[string]map[lineage.EdgeKey]lineage.Edge
	neighbours int
}

// NewMemGraph returns an empty in-memory backend.
func NewMemGraph() *MemGraph {
	return &MemGraph{nodes: map[string]map[string]lineage.Node{}, edges: map[string]map[lineage.EdgeKey]lineage.Edge{}}
}

var _ lineage.Graph = (*MemGraph)(nil)

// NeighbourCalls returns how many Neighbours calls were made so far.
func (g *MemGraph) NeighbourCalls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.neighbours
}

// Neighbours returns the edges leaving or entering ids.
func (g *MemGraph) Neighbours(_ context.Context, ws string, ids []string, dir lineage.Direction) ([]lineage.Edge, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if dir != lineage.Upstream && dir != lineage.Downstream {
		return nil, fmt.Errorf("memgraph: direction %q", dir)
	}
	g.neighbours++
	in := map[string]bool{}
	for _, id := range ids {
		in[id] = true
	}
	var out []lineage.Edge
	for _, e := range g.edges[ws] {
		if (dir == lineage.Downstream && in[e.Source]) || (dir == lineage.Upstream && in[e.Target]) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Apply deletes, then upserts.
func (g *MemGraph) Apply(_ context.Context, ws string, c lineage.Change) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.nodes[ws] == nil {
		g.nodes[ws], g.edges[ws] = map[string]lineage.Node{}, map[lineage.EdgeKey]lineage.Edge{}
	}
	for _, id := range c.DeleteNodes {
		delete(g.nodes[ws], id)
		for k := range g.edges[ws] {
			if k.Source == id || k.Target == id {
				delete(g.edges[ws], k)
			}
		}
	}
	for _, k := range c.DeleteEdges {
		delete(g.edges[ws], k)
	}
	for _, n := range c.UpsertNodes {
		g.nodes[ws][n.ID] = n
	}
	for _, e := range c.UpsertEdges {
		for _, id := range []string{e.Source, e.Target} {
			if _, ok := g.nodes[ws][id]; !ok {
				kind := lineage.NodeDataset
				if lineage.IsExposure(id) {
					kind = lineage.NodeExposure
				}
				g.nodes[ws][id] = lineage.Node{ID: id, Kind: kind}
			}
		}
		if len(e.Columns) == 0 {
			e.Columns = nil
		}
		g.edges[ws][e.Key()] = e
	}
	return nil
}

// Export returns the workspace's nodes and edges in a stable order.
func (g *MemGraph) Export(_ context.Context, ws string) (lineage.Export, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ex lineage.Export
	for _, n := range g.nodes[ws] {
		ex.Nodes = append(ex.Nodes, n)
	}
	for _, e := range g.edges[ws] {
		ex.Edges = append(ex.Edges, e)
	}
	sort.Slice(ex.Nodes, func(i, j int) bool { return ex.Nodes[i].ID < ex.Nodes[j].ID })
	sort.Slice(ex.Edges, func(i, j int) bool {
		a, b := ex.Edges[i], ex.Edges[j]
		return a.Source+a.Target+string(a.Kind) < b.Source+b.Target+string(b.Kind)
	})
	return ex, nil
}

// Clear removes the workspace's graph.
func (g *MemGraph) Clear(_ context.Context, ws string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.nodes, ws)
	delete(g.edges, ws)
	return nil
}
