package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/lineage"
)

// benchRebuildCommand is `vigia bench rebuild`: the graph rebuild of a synthetic
// workspace at two sizes (memory must not grow with the record), and a rebuild stopped
// halfway then resumed (it must not redo what it saved).
func benchRebuildCommand(stdout, stderr io.Writer) *cobra.Command {
	var datasets int
	cmd := &cobra.Command{Use: "rebuild", Short: "Graph rebuild: time and peak heap at two sizes, and a resumed rebuild",
		RunE: func(c *cobra.Command, _ []string) error {
			if datasets < 4*benchCluster || datasets%(4*benchCluster) != 0 {
				return fmt.Errorf("--datasets must be a positive multiple of %d", 4*benchCluster)
			}
			return withApp(c.Context(), stderr, func(a *app.App) error {
				return benchRebuild(c.Context(), a, stdout, datasets)
			})
		}}
	cmd.Flags().IntVar(&datasets, "datasets", 200000, "datasets of the larger workspace (the smaller has a quarter)")
	return cmd
}

type rebuildRun struct {
	label      string
	rows       int64 // rows of the record
	written    int64 // rows this run wrote to the graph
	elapsed    time.Duration
	peakHeap   uint64 // live heap objects above the start of the run, at the peak
	pageHeap   uint64 // the same while writing pages (before the reach step)
	steps      int64
	resumedRun bool
}

func benchRebuild(ctx context.Context, a *app.App, out io.Writer, n int) error {
	var runs []rebuildRun
	for _, size := range []int{n / 4, n} {
		ws, counts, cleanup, err := seedRebuildWorkspace(ctx, a, out, size)
		if err != nil {
			return err
		}
		r, err := measureRebuild(ctx, a, ws, fmt.Sprintf("%d datasets, from zero", size), lineage.RebuildOptions{Restart: true}, nil)
		if err != nil {
			cleanup()
			return err
		}
		r.rows = counts.Datasets + counts.Exposures + counts.Edges
		runs = append(runs, r)
		if size == n {
			// Stop at half the rows, then resume.
			half := r.rows / 2
			stopped, err := measureRebuild(ctx, a, ws, "stopped at half", lineage.RebuildOptions{Restart: true},
				func(st lineage.RebuildState) bool { return st.NodesWritten+st.EdgesWritten >= half })
			if err != nil && !errors.Is(err, context.Canceled) {
				cleanup()
				return err
			}
			stopped.rows = r.rows
			resumed, err := measureRebuild(ctx, a, ws, "resumed", lineage.RebuildOptions{}, nil)
			if err != nil {
				cleanup()
				return err
			}
			resumed.rows, resumed.resumedRun = r.rows, true
			runs = append(runs, stopped, resumed)
		}
		cleanup()
	}
	small, large := runs[0], runs[1]
	fmt.Fprintf(out, "pggraph backend, %d rows a step\n", lineage.RebuildBatch)
	fmt.Fprintf(out, "%-28s %10s %10s %10s %8s %12s %12s %12s\n", "run", "record", "written", "time", "steps", "rows/s", "heap pages", "heap reach")
	for _, r := range runs {
		fmt.Fprintf(out, "%-28s %10d %10d %10s %8d %12.0f %10.1fMB %10.1fMB\n", r.label, r.rows, r.written, r.elapsed.Round(time.Millisecond),
			r.steps, float64(r.written)/r.elapsed.Seconds(), float64(r.pageHeap)/(1<<20), float64(r.peakHeap)/(1<<20))
	}
	fmt.Fprintf(out, "record %.1fx larger: time %.2fx; peak heap writing pages %.2fx (target: flat), with the reach step %.2fx "+
		"(the reach adjacency: one int an edge, one id a dataset)\n",
		float64(large.rows)/float64(small.rows), float64(large.elapsed)/float64(small.elapsed),
		float64(large.pageHeap)/float64(max(small.pageHeap, 1)), float64(large.peakHeap)/float64(max(small.peakHeap, 1)))
	stopped, resumed := runs[2], runs[3]
	fmt.Fprintf(out, "stopped after %d rows; the resumed run wrote %d (%.1f%% of a full run; target: no saved step redone)\n",
		stopped.written, resumed.written, 100*float64(resumed.written)/float64(large.rows))
	fmt.Fprintf(out, "load average while measuring: %s\n", loadAverage())
	return nil
}

// seedRebuildWorkspace makes a synthetic workspace of size datasets with its record
// and projects it once.
func seedRebuildWorkspace(ctx context.Context, a *app.App, out io.Writer, size int) (string, lineage.RecordCounts, func(), error) {
	w, err := a.Identity.CreateWorkspace(ctx, "bench-rebuild-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		return "", lineage.RecordCounts{}, nil, err
	}
	cleanup := func() {
		c := context.WithoutCancel(ctx)
		_ = a.Lineage.Graph().Clear(c, w.ID)
		_, _ = a.DB.Pool().Exec(c, `DELETE FROM workspaces WHERE id = $1`, w.ID)
	}
	start := time.Now()
	if _, _, err := bench.SeedLineage(ctx, a.DB.Pool(), w.ID, size, benchCluster, benchHubs, benchHubFan); err != nil {
		cleanup()
		return "", lineage.RecordCounts{}, nil, err
	}
	counts, err := a.DB.Lineage().RecordCounts(ctx, w.ID)
	if err != nil {
		cleanup()
		return "", lineage.RecordCounts{}, nil, err
	}
	fmt.Fprintf(out, "seeded %d datasets and %d edges in %s\n", counts.Datasets, counts.Edges, time.Since(start).Round(time.Millisecond))
	return w.ID, counts, cleanup, nil
}

// measureRebuild runs one rebuild of ws, sampling the live heap; stop, when set, ends
// the run after the first step it returns true for.
func measureRebuild(ctx context.Context, a *app.App, ws, label string, opts lineage.RebuildOptions, stop func(lineage.RebuildState) bool) (rebuildRun, error) {
	r := rebuildRun{label: label}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first *lineage.RebuildState
	var last lineage.RebuildState
	var mu sync.Mutex
	var peak, pagePeak uint64
	opts.Progress = func(st lineage.RebuildState, _ lineage.RecordCounts) {
		if st.Phase == lineage.RebuildReach {
			mu.Lock()
			if pagePeak == 0 {
				pagePeak = peak
			}
			mu.Unlock()
		}
		if first == nil {
			before := st // the first step's own rows count as written by this run
			first = &before
		}
		last = st
		r.steps++
		if stop != nil && stop(st) {
			cancel()
		}
	}
	runtime.GC()
	base := liveHeap()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				h := liveHeap()
				mu.Lock()
				peak = max(peak, h)
				mu.Unlock()
			}
		}
	})
	before, _, err := a.DB.Lineage().RebuildState(ctx, ws)
	if err != nil {
		close(done)
		wg.Wait()
		return r, err
	}
	start := time.Now()
	err = a.Lineage.RebuildWorkspace(runCtx, ws, opts)
	r.elapsed = time.Since(start)
	close(done)
	wg.Wait()
	if pagePeak == 0 { // stopped before the reach step
		pagePeak = peak
	}
	if peak > base {
		r.peakHeap = peak - base
	}
	if pagePeak > base {
		r.pageHeap = pagePeak - base
	}
	writtenBefore := int64(0)
	if !opts.Restart {
		writtenBefore = before.NodesWritten + before.EdgesWritten
	}
	if first != nil {
		r.written = last.NodesWritten + last.EdgesWritten - writtenBefore
	}
	return r, err
}

// liveHeap reads the bytes of live and not yet swept heap objects.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
