package lineage

import (
	"context"
	"errors"
	"time"
)

// RebuildBatch is how many record rows one rebuild step reads from the record and
// writes to the graph backend: one page read, one Apply (one UNWIND statement on
// Neo4j), one saved checkpoint. It bounds the rebuild's memory and the work lost to a
// failure.
const RebuildBatch = 5000

// RebuildPhase is where a workspace's rebuild stands. The phases run in this order.
type RebuildPhase string

// Rebuild phases.
const (
	// RebuildClear: the outbox position is noted, the graph is not cleared yet.
	RebuildClear RebuildPhase = "clear"
	// RebuildDatasets, RebuildExposures, RebuildEdges: writing the record's rows back,
	// in key order, after the cursor.
	RebuildDatasets  RebuildPhase = "datasets"
	RebuildExposures RebuildPhase = "exposures"
	RebuildEdges     RebuildPhase = "edges"
	// RebuildReach: every row is written; the outbox and the reach counts remain.
	RebuildReach RebuildPhase = "reach"
)

// RebuildState is the persisted progress of one workspace's rebuild. While it exists
// the projector leaves the workspace's outbox alone; the rebuild drops the rows up to
// OutboxPosition when it ends and the projector applies the later ones.
type RebuildState struct {
	WorkspaceID string
	// OutboxPosition is the last outbox row at the start: the record read afterwards
	// already holds every change up to it.
	OutboxPosition int64
	Phase          RebuildPhase
	// Cursor is the key of the last row written in Phase (a dataset or exposure id; an
	// edge's source, target and kind); empty at the start of a phase.
	Cursor       []string
	NodesWritten int64
	EdgesWritten int64
	// Batches counts the steps written since the rebuild started, resumed runs included.
	Batches   int64
	StartedAt time.Time
	UpdatedAt time.Time
}

// RecordCounts are the sizes of a workspace's record, for progress reports.
type RecordCounts struct {
	Datasets, Exposures, Edges int64
}

// RebuildStore is what the rebuild needs from the record: its persisted progress, the
// outbox position and the record read in key-ordered pages.
type RebuildStore interface {
	// RebuildState returns the workspace's unfinished rebuild, if any.
	RebuildState(ctx context.Context, workspaceID string) (RebuildState, bool, error)
	// PutRebuildState saves the progress of a rebuild (insert or replace).
	PutRebuildState(ctx context.Context, st RebuildState) error
	// DeleteRebuildState ends a rebuild.
	DeleteRebuildState(ctx context.Context, workspaceID string) error
	// OutboxPosition returns the id of the workspace's last outbox row (0 when empty).
	OutboxPosition(ctx context.Context, workspaceID string) (int64, error)
	// RecordCounts counts the workspace's live datasets, exposures and edges.
	RecordCounts(ctx context.Context, workspaceID string) (RecordCounts, error)
	// DatasetNodesAfter returns up to limit live datasets as graph nodes, by id, after
	// the id after ("" = from the first).
	DatasetNodesAfter(ctx context.Context, workspaceID, after string, limit int) ([]Node, error)
	// ExposureNodesAfter is DatasetNodesAfter for exposures (after is an exposure id).
	ExposureNodesAfter(ctx context.Context, workspaceID, after string, limit int) ([]Node, error)
	// EdgesAfter returns up to limit edges by (source, target, kind) after the key
	// after (the zero key = from the first).
	EdgesAfter(ctx context.Context, workspaceID string, after EdgeKey, limit int) ([]Edge, error)
}

// RebuildOptions tune one rebuild run.
type RebuildOptions struct {
	// Restart discards an unfinished rebuild's progress and starts from zero.
	Restart bool
	// Progress, when set, is called after every step with the saved state and the
	// record's sizes at the start of the run.
	Progress func(RebuildState, RecordCounts)
}

// Rebuild re-projects every workspace from the record (see RebuildWorkspace) and
// returns the number of workspaces.
func (s *Service) Rebuild(ctx context.Context, opts RebuildOptions) (int, error) {
	wss, err := s.store.Workspaces(ctx)
	if err != nil {
		return 0, err
	}
	for _, ws := range wss {
		if err := s.RebuildWorkspace(ctx, ws, opts); err != nil {
			return 0, err
		}
	}
	return len(wss), nil
}

// RebuildWorkspace re-projects one workspace from the record: it notes the outbox
// position, clears the graph, writes the record back in key order in steps of
// RebuildBatch rows, drops the outbox up to the noted position, recomputes reach and
// applies the outbox rows that arrived meanwhile. Every step runs under the projection
// lock and saves its progress, so an interrupted rebuild resumes after its last saved
// step when run again (unless opts.Restart). Writes are idempotent upserts: a step
// redone after a failure between its write and its checkpoint changes nothing.
func (s *Service) RebuildWorkspace(ctx context.Context, ws string, opts RebuildOptions) error {
	counts, err := s.store.RecordCounts(ctx, ws)
	if err != nil {
		return err
	}
	start := func(ctx context.Context) error {
		_, ok, err := s.store.RebuildState(ctx, ws)
		if err != nil || (ok && !opts.Restart) {
			return err // resume the unfinished one
		}
		pos, err := s.store.OutboxPosition(ctx, ws)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		return s.store.PutRebuildState(ctx, RebuildState{WorkspaceID: ws, OutboxPosition: pos, Phase: RebuildClear, StartedAt: now, UpdatedAt: now})
	}
	if err := s.withProjectionLock(ctx, ws, start); err != nil {
		return err
	}
	for {
		done, ok := false, false
		var st RebuildState
		err := s.withProjectionLock(ctx, ws, func(ctx context.Context) error {
			var err error
			if st, ok, err = s.store.RebuildState(ctx, ws); err != nil || !ok {
				return err // !ok: another process finished it
			}
			done, err = s.rebuildStep(ctx, &st)
			return err
		})
		if err != nil {
			return err
		}
		if ok && opts.Progress != nil { // after the step's checkpoint committed
			opts.Progress(st, counts)
		}
		if done || !ok {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	// Changes recorded while the rebuild ran are after its position: apply them now.
	return s.Project(ctx, ws)
}

// rebuildStep does the next step of st and saves the progress; it reports whether the
// rebuild is finished (its state deleted).
func (s *Service) rebuildStep(ctx context.Context, st *RebuildState) (bool, error) {
	ws := st.WorkspaceID
	after := ""
	if len(st.Cursor) > 0 {
		after = st.Cursor[0]
	}
	next := func(phase RebuildPhase) { st.Phase, st.Cursor = phase, nil }
	switch st.Phase {
	case RebuildClear:
		if err := s.graph.Clear(ctx, ws); err != nil {
			return false, err
		}
		next(RebuildDatasets)
	case RebuildDatasets, RebuildExposures:
		read := s.store.DatasetNodesAfter
		if st.Phase == RebuildExposures {
			read = s.store.ExposureNodesAfter
		}
		nodes, err := read(ctx, ws, after, RebuildBatch)
		if err != nil {
			return false, err
		}
		if len(nodes) > 0 {
			if err := s.graph.Apply(ctx, ws, Change{UpsertNodes: nodes}); err != nil {
				return false, err
			}
			st.NodesWritten += int64(len(nodes))
			last := nodes[len(nodes)-1].ID
			if st.Phase == RebuildExposures {
				last = last[len(ExposurePrefix):]
			}
			st.Cursor = []string{last}
		}
		if len(nodes) < RebuildBatch {
			if st.Phase == RebuildDatasets {
				next(RebuildExposures)
			} else {
				next(RebuildEdges)
			}
		}
	case RebuildEdges:
		var key EdgeKey
		if len(st.Cursor) == 3 {
			key = EdgeKey{Source: st.Cursor[0], Target: st.Cursor[1], Kind: EdgeKind(st.Cursor[2])}
		}
		edges, err := s.store.EdgesAfter(ctx, ws, key, RebuildBatch)
		if err != nil {
			return false, err
		}
		if len(edges) > 0 {
			if err := s.graph.Apply(ctx, ws, Change{UpsertEdges: edges}); err != nil {
				return false, err
			}
			st.EdgesWritten += int64(len(edges))
			k := edges[len(edges)-1].Key()
			st.Cursor = []string{k.Source, k.Target, string(k.Kind)}
		}
		if len(edges) < RebuildBatch {
			next(RebuildReach)
		}
	case RebuildReach:
		if st.OutboxPosition > 0 {
			if err := s.store.DropOutbox(ctx, ws, st.OutboxPosition); err != nil {
				return false, err
			}
		}
		if err := s.recomputeReachFromRecord(ctx, ws); err != nil {
			return false, err
		}
		st.Batches++
		return true, s.store.DeleteRebuildState(ctx, ws)
	}
	st.Batches++
	st.UpdatedAt = s.clock.Now()
	return false, s.store.PutRebuildState(ctx, *st)
}

// recomputeReachFromRecord counts reach over the record's edges read in pages (at the
// end of a rebuild the graph holds exactly them), without exporting the graph.
func (s *Service) recomputeReachFromRecord(ctx context.Context, ws string) error {
	var r ReachCounter
	var key EdgeKey
	for {
		edges, err := s.store.EdgesAfter(ctx, ws, key, RebuildBatch)
		if err != nil {
			return err
		}
		for _, e := range edges {
			r.Add(e.Source, e.Target)
		}
		if len(edges) < RebuildBatch {
			break
		}
		key = edges[len(edges)-1].Key()
	}
	return s.store.SetReach(ctx, ws, r.Counts())
}

// withProjectionLock runs fn under the workspace's projection lock when the store
// offers one. A rebuild is never part of a caller's transaction: the lock would then
// defer fn, and the rebuild would make no progress.
func (s *Service) withProjectionLock(ctx context.Context, ws string, fn func(ctx context.Context) error) error {
	lock, ok := s.store.(ProjectionLocker)
	if !ok {
		return fn(ctx)
	}
	ran := false
	err := lock.WithProjectionLock(ctx, ws, func(ctx context.Context) error { ran = true; return fn(ctx) })
	if err == nil && !ran {
		return errRebuildInTx
	}
	return err
}

var errRebuildInTx = errors.New("lineage: a rebuild cannot run inside a transaction")
