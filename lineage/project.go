package lineage

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
)

// ProjectionJobKind is the job queue kind of the projector.
const ProjectionJobKind = "lineage.project"

// outboxBatch is how many outbox rows one projection step applies.
const outboxBatch = 200

// ProjectionLocker serialises projections of one workspace across processes, so the
// outbox is applied in order: fn runs while the lock is held.
type ProjectionLocker interface {
	WithProjectionLock(ctx context.Context, workspaceID string, fn func(ctx context.Context) error) error
}

// Project applies the workspace's outbox to the graph backend, in order, then
// recomputes the downstream reach of its datasets. It is idempotent: a change applied
// twice leaves the backend as applying it once.
func (s *Service) Project(ctx context.Context, workspaceID string) error {
	lock, ok := s.store.(ProjectionLocker)
	run := func(ctx context.Context) error {
		// An unfinished rebuild owns the outbox: it drops the rows its record read
		// covers, and the projector applies the later ones once it ends.
		if _, rebuilding, err := s.store.RebuildState(ctx, workspaceID); err != nil || rebuilding {
			return err
		}
		applied := false
		for {
			changes, last, err := s.store.TakeOutbox(ctx, workspaceID, outboxBatch)
			if err != nil {
				return err
			}
			if len(changes) == 0 {
				break
			}
			for _, c := range changes {
				if err := s.graph.Apply(ctx, workspaceID, c); err != nil {
					return err
				}
			}
			if err := s.store.DropOutbox(ctx, workspaceID, last); err != nil {
				return err
			}
			applied = true
			if len(changes) < outboxBatch {
				break
			}
		}
		if !applied {
			return nil
		}
		return s.recomputeReach(ctx, workspaceID)
	}
	if ok {
		return lock.WithProjectionLock(ctx, workspaceID, run)
	}
	return run(ctx)
}

// DatasetNode is the graph node of a dataset.
func DatasetNode(id, schema, table string) Node {
	return Node{ID: id, Kind: NodeDataset, Name: datasetName(schema, table)}
}

func datasetName(schema, table string) string {
	if schema == "" {
		return table
	}
	return schema + "." + table
}

// recomputeReach counts, for every dataset node, the datasets downstream of it at any
// distance (restricted ones included, as reach_total counts them).
func (s *Service) recomputeReach(ctx context.Context, ws string) error {
	ex, err := s.graph.Export(ctx, ws)
	if err != nil {
		return err
	}
	return s.store.SetReach(ctx, ws, Reach(ex.Edges))
}

// Reach counts the datasets downstream of every dataset of edges at any distance.
func Reach(edges []Edge) map[string]int {
	var r ReachCounter
	for _, e := range edges {
		r.Add(e.Source, e.Target)
	}
	return r.Counts()
}

// ReachCounter counts downstream reach over edges added one at a time, holding only
// an integer adjacency list (the rebuild feeds it the record page by page).
type ReachCounter struct {
	idx   map[string]int
	names []string
	adj   [][]int
}

func (r *ReachCounter) id(n string) int {
	if i, ok := r.idx[n]; ok {
		return i
	}
	if r.idx == nil {
		r.idx = map[string]int{}
	}
	r.idx[n] = len(r.names)
	r.names = append(r.names, n)
	r.adj = append(r.adj, nil)
	return len(r.names) - 1
}

// Add records that data of source flows into target. Exposures and self-loops do not
// count.
func (r *ReachCounter) Add(source, target string) {
	if IsExposure(source) || IsExposure(target) || source == target {
		return
	}
	a, b := r.id(source), r.id(target)
	r.adj[a] = append(r.adj[a], b)
}

// Counts returns, for every dataset added, how many datasets are downstream of it at
// any distance.
func (r *ReachCounter) Counts() map[string]int {
	out := make(map[string]int, len(r.names))
	mark := make([]int, len(r.names))
	stamp := 0
	stack := make([]int, 0, 64)
	for start := range r.names {
		if len(r.adj[start]) == 0 {
			out[r.names[start]] = 0
			continue
		}
		stamp++
		mark[start] = stamp
		stack = append(stack[:0], start)
		n := 0
		for len(stack) > 0 {
			at := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, nb := range r.adj[at] {
				if mark[nb] != stamp {
					mark[nb] = stamp
					n++
					stack = append(stack, nb)
				}
			}
		}
		out[r.names[start]] = n
	}
	return out
}

// replaceEdges makes the record's edges of one kind and origin equal to edges (and
// applies node changes), writing the difference to the outbox and queueing the
// projector, all in the transaction in ctx (opened here when absent). It returns
// whether anything changed.
func (s *Service) replaceEdges(ctx context.Context, ws string, kind EdgeKind, origin string, edges []RecordEdge, nodes []Node, dropNodes []string) (bool, error) {
	changed := false
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		old, err := s.store.Edges(ctx, ws, kind, origin)
		if err != nil {
			return err
		}
		oldBy := make(map[EdgeKey]RecordEdge, len(old))
		for _, e := range old {
			oldBy[e.Key()] = e
		}
		var c Change
		var ups []RecordEdge
		keep := map[EdgeKey]bool{}
		for _, e := range edges {
			e.Kind, e.Origin = kind, origin
			k := e.Key()
			if keep[k] {
				continue
			}
			keep[k] = true
			if o, ok := oldBy[k]; ok && sameEdge(o, e) {
				continue
			}
			ups = append(ups, e)
			c.UpsertEdges = append(c.UpsertEdges, e.Edge)
		}
		for k := range oldBy {
			if !keep[k] {
				c.DeleteEdges = append(c.DeleteEdges, k)
			}
		}
		slices.SortFunc(c.DeleteEdges, func(a, b EdgeKey) int { return strings.Compare(a.Source+a.Target, b.Source+b.Target) })
		// Node names ride along only with a real change: a scan that found the same
		// edges leaves the outbox (and the reach recomputation) alone.
		if len(c.UpsertEdges)+len(c.DeleteEdges)+len(dropNodes) > 0 {
			c.UpsertNodes, c.DeleteNodes = nodes, dropNodes
		}
		if c.Empty() {
			return nil
		}
		if len(ups) > 0 {
			if err := s.store.UpsertEdges(ctx, ws, ups); err != nil {
				return err
			}
		}
		if len(c.DeleteEdges) > 0 {
			if err := s.store.DeleteEdges(ctx, ws, c.DeleteEdges); err != nil {
				return err
			}
		}
		changed = len(c.UpsertEdges)+len(c.DeleteEdges) > 0
		return s.emit(ctx, ws, c)
	})
	return changed, err
}

// emit writes a change to the outbox and queues the projector, in the tx in ctx.
func (s *Service) emit(ctx context.Context, ws string, c Change) error {
	if c.Empty() {
		return nil
	}
	if err := s.store.AddOutbox(ctx, ws, c); err != nil {
		return err
	}
	if s.jobs == nil {
		return nil
	}
	return s.jobs.EnqueueProjection(ctx, ws)
}

func sameEdge(a, b RecordEdge) bool {
	ja, _ := json.Marshal(a.Columns)
	jb, _ := json.Marshal(b.Columns)
	sameCols := string(ja) == string(jb) || len(a.Columns) == 0 && len(b.Columns) == 0
	return sameCols && a.ColumnLevel == b.ColumnLevel && a.LinkingColumn == b.LinkingColumn &&
		slices.Equal(a.Notes, b.Notes) && a.Origin == b.Origin
}

// projectNow applies the outbox at once (best effort: the queued job does it otherwise).
func (s *Service) projectNow(ctx context.Context, ws string) {
	if err := s.Project(ctx, ws); err != nil {
		s.log.WarnContext(ctx, "lineage projection deferred to the job queue", "workspace_id", ws, "cause", err.Error())
	}
}
