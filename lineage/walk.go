package lineage

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
)

// walk is one bounded breadth-first expansion from a root dataset: the datasets it
// reached (with their distance), the edges between them, the exposures met, and
// whether a cap cut it short. Walks of several roots expand together, one backend
// round trip per hop and direction whatever the number of roots.
type walk struct {
	root          string
	nodes         map[string]*walkNode
	order         []string
	edges         []Edge
	edgeSeen      map[EdgeKey]bool
	exposures     map[string][]string // exposure node id → datasets (node ids) it reads
	exposureOrder []string
	truncated     bool
	maxNodes      int
	maxEdges      int // 0: no edge cap
}

type walkNode struct {
	id   string
	hops int
	dir  Direction
}

func newWalk(root string, maxNodes, maxEdges int) *walk {
	w := &walk{root: root, nodes: map[string]*walkNode{}, edgeSeen: map[EdgeKey]bool{}, exposures: map[string][]string{},
		maxNodes: maxNodes, maxEdges: maxEdges}
	w.nodes[root] = &walkNode{id: root}
	w.order = append(w.order, root)
	return w
}

func (w *walk) addExposure(exp, via string) {
	if _, ok := w.exposures[exp]; !ok {
		w.exposureOrder = append(w.exposureOrder, exp)
	}
	if !slices.Contains(w.exposures[exp], via) {
		w.exposures[exp] = append(w.exposures[exp], via)
	}
}

// offer considers one edge met while expanding `from` (at distance hop) towards `to`.
// It returns true when `to` is new and joins the next frontier.
func (w *walk) offer(e Edge, from, to string, hop int, dir Direction) bool {
	if IsExposure(to) {
		if dir == Downstream {
			w.addExposure(to, from)
		}
		return false
	}
	if IsExposure(from) {
		return false
	}
	k := e.Key()
	if w.edgeSeen[k] {
		return false
	}
	edgeRoom := w.maxEdges == 0 || len(w.edges) < w.maxEdges
	if _, known := w.nodes[to]; known {
		if !edgeRoom {
			w.truncated = true
			return false
		}
		w.edgeSeen[k] = true
		w.edges = append(w.edges, e)
		return false
	}
	if len(w.nodes) >= w.maxNodes || !edgeRoom {
		w.truncated = true
		return false
	}
	w.nodes[to] = &walkNode{id: to, hops: hop + 1, dir: dir}
	w.order = append(w.order, to)
	w.edgeSeen[k] = true
	w.edges = append(w.edges, e)
	return true
}

// expand runs the walks of several roots for up to hops hops in each of dirs (Upstream
// and/or Downstream). Each hop asks the backend once per direction for the frontier of
// every walk together, both directions at the same time; edges are then taken
// downstream first, so caps cut the same way every time.
func expand(ctx context.Context, g Graph, ws string, walks []*walk, dirs []Direction, hops int) error {
	frontiers := make([][][]string, len(dirs)) // direction → walk → frontier
	for d := range dirs {
		frontiers[d] = make([][]string, len(walks))
		for i, w := range walks {
			frontiers[d][i] = []string{w.root}
		}
	}
	// hop == hops is one step past the last ring: exposures hang off it (downstream; they
	// are not datasets and count against no cap), and a dataset found there means the
	// hop limit cut the answer short.
	for hop := 0; hop <= hops; hop++ {
		edges, err := neighboursOf(ctx, g, ws, frontiers, dirs)
		if err != nil {
			return err
		}
		done := true
		for d, dir := range dirs {
			if edges[d] == nil {
				continue
			}
			done = false
			by := map[string][]Edge{}
			for _, e := range edges[d] {
				at := e.Source
				if dir == Upstream {
					at = e.Target
				}
				by[at] = append(by[at], e)
			}
			for i, w := range walks {
				var next []string
				for _, id := range frontiers[d][i] {
					for _, e := range by[id] {
						to := e.Target
						if dir == Upstream {
							to = e.Source
						}
						if hop < hops {
							if w.offer(e, id, to, hop, dir) {
								next = append(next, to)
							}
							continue
						}
						switch {
						case IsExposure(to):
							if dir == Downstream {
								w.addExposure(to, id)
							}
						case w.nodes[to] == nil && !IsExposure(id):
							w.truncated = true
						}
					}
				}
				frontiers[d][i] = next
			}
		}
		if done {
			return nil
		}
	}
	return nil
}

// neighboursOf fetches, concurrently for each direction, the edges of the union of the
// walks' frontiers; a direction whose frontiers are all empty gets nil.
func neighboursOf(ctx context.Context, g Graph, ws string, frontiers [][][]string, dirs []Direction) ([][]Edge, error) {
	out := make([][]Edge, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for d, dir := range dirs {
		var ids []string
		for _, f := range frontiers[d] {
			ids = append(ids, f...)
		}
		if len(ids) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			es, err := g.Neighbours(ctx, ws, dedupe(ids), dir)
			if es == nil {
				es = []Edge{}
			}
			sortEdges(es)
			out[d], errs[d] = es, err
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// sortEdges orders edges deterministically so that caps cut the same way every time.
func sortEdges(es []Edge) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.Kind < b.Kind
	})
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// derive propagates derived columns along the walk's downstream edges until nothing
// changes: the columns of each reached dataset that come from the root's columns.
func derive(root string, columns []string, edges []Edge) map[string]map[string]bool {
	out := map[string]map[string]bool{root: {}}
	for _, c := range columns {
		out[root][c] = true
	}
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			from := out[e.Source]
			if len(from) == 0 {
				continue
			}
			for _, p := range e.Columns {
				if from[p.From] {
					if out[e.Target] == nil {
						out[e.Target] = map[string]bool{}
					}
					if !out[e.Target][p.To] {
						out[e.Target][p.To] = true
						changed = true
					}
				}
			}
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
