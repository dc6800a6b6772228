package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/store/storetest"
)

// A rebuild stopped halfway resumes after its last saved step: it neither clears the
// graph again nor writes again what it wrote; the projector leaves the outbox alone
// meanwhile, and the changes recorded during the pause reach the graph at the end.
func TestGraphRebuildResumesAfterAnInterruption(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "rebuild-test-key")
	ctx := context.Background()
	err := withApp(ctx, io.Discard, func(a *app.App) error {
		pool := a.DB.Pool()
		w, err := a.Identity.CreateWorkspace(ctx, "rebuild-"+vigia.NewUUID()[:8], "PT")
		if err != nil {
			return err
		}
		// Two pages of datasets and several of edges.
		const n = lineage.RebuildBatch + 1000
		ids, _, err := bench.SeedLineage(ctx, pool, w.ID, n, 100, 10, 450)
		if err != nil {
			return err
		}
		counts, err := a.DB.Lineage().RecordCounts(ctx, w.ID)
		if err != nil {
			return err
		}
		if counts.Edges < 2*lineage.RebuildBatch {
			t.Fatalf("the seed has %d edges: too few for several pages", counts.Edges)
		}

		// Stop after the first page of edges.
		stop, cancel := context.WithCancel(ctx)
		defer cancel()
		err = a.Lineage.RebuildWorkspace(stop, w.ID, lineage.RebuildOptions{Progress: func(st lineage.RebuildState, _ lineage.RecordCounts) {
			if st.Phase == lineage.RebuildEdges && st.EdgesWritten > 0 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted rebuild: %v", err)
		}
		st, ok, err := a.DB.Lineage().RebuildState(ctx, w.ID)
		if err != nil || !ok || st.Phase != lineage.RebuildEdges || st.NodesWritten != n || st.EdgesWritten != lineage.RebuildBatch {
			t.Fatalf("saved progress %+v (%v %v)", st, ok, err)
		}

		// A change recorded during the pause: the projector must not apply it to a
		// half-built graph, nor drop it.
		extra := lineage.Edge{Source: ids[n-1], Target: ids[0], Kind: lineage.KindDeclared, Origin: "pause", ColumnLevel: true}
		if err := a.DB.Lineage().UpsertEdges(ctx, w.ID, []lineage.RecordEdge{{Edge: extra}}); err != nil {
			return err
		}
		if err := a.DB.Lineage().AddOutbox(ctx, w.ID, lineage.Change{UpsertEdges: []lineage.Edge{extra}}); err != nil {
			return err
		}
		if err := a.Lineage.Project(ctx, w.ID); err != nil {
			return err
		}
		if pos, _ := a.DB.Lineage().OutboxPosition(ctx, w.ID); pos <= st.OutboxPosition {
			t.Fatal("the projector took the outbox during the rebuild")
		}
		if projected(t, pool, w.ID) != lineage.RebuildBatch {
			t.Fatal("the projector wrote to the half-built graph")
		}

		// Resume: the first step continues the edges where they stopped.
		var first *lineage.RebuildState
		err = a.Lineage.RebuildWorkspace(ctx, w.ID, lineage.RebuildOptions{Progress: func(st lineage.RebuildState, _ lineage.RecordCounts) {
			if first == nil {
				first = &st
			}
		}})
		if err != nil {
			return err
		}
		if first == nil || first.Phase != lineage.RebuildEdges || first.NodesWritten != n || first.EdgesWritten != 2*lineage.RebuildBatch {
			t.Fatalf("the resumed run started at %+v", first)
		}
		if _, ok, _ := a.DB.Lineage().RebuildState(ctx, w.ID); ok {
			t.Fatal("the finished rebuild left its progress behind")
		}
		if got := projected(t, pool, w.ID); got != counts.Edges+1 {
			t.Fatalf("projected edges %d, want the record's %d and the one of the pause", got, counts.Edges+1)
		}
		if pos, _ := a.DB.Lineage().OutboxPosition(ctx, w.ID); pos != 0 {
			t.Fatal("outbox rows left after the rebuild")
		}
		resumed := reach(t, pool, w.ID)

		// The same graph and reach as a rebuild from zero.
		if err := a.Lineage.RebuildWorkspace(ctx, w.ID, lineage.RebuildOptions{Restart: true}); err != nil {
			return err
		}
		if got := projected(t, pool, w.ID); got != counts.Edges+1 {
			t.Fatalf("projected edges after a restart %d", got)
		}
		if fresh := reach(t, pool, w.ID); !maps.Equal(resumed, fresh) || len(fresh) == 0 {
			t.Fatalf("reach after resuming differs from a fresh rebuild (%d vs %d datasets)", len(resumed), len(fresh))
		}

		// The command shows its progress where it is not a terminal: a line a phase.
		var out, errb bytes.Buffer
		if code := run(ctx, []string{"graph", "rebuild", "--workspace", w.ID, "--restart"}, &out, &errb); code != 0 {
			t.Fatalf("rebuild command: exit %d %s", code, errb.String())
		}
		for _, want := range []string{"datasets", "exposures", "edges", "reach", "rows written"} {
			if !strings.Contains(errb.String(), want) {
				t.Fatalf("progress lacks %q:\n%s", want, errb.String())
			}
		}
		if !strings.Contains(out.String(), "rebuilt 1 workspace") {
			t.Fatalf("rebuild command said %q", out.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func projected(t *testing.T, pool *pgxpool.Pool, ws string) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pggraph_edges WHERE workspace_id = $1`, ws).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func reach(t *testing.T, pool *pgxpool.Pool, ws string) map[string]int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT dataset_id::text, reach FROM dataset_reach WHERE workspace_id = $1`, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	return out
}
