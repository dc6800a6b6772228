package jobs_test

import (
	"context"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/jobs"
)

// BenchmarkEnqueue measures one insert (and its NOTIFY) on the pool.
func BenchmarkEnqueue(b *testing.B) {
	q := jobs.New(mustPool(b), jobs.Options{Logger: quietLogger()})
	kind := newKind(b)
	ctx := context.Background()
	for b.Loop() {
		mustEnqueue(b, ctx, q, kind, map[string]string{"scan_id": "s"}, jobs.EnqueueOpts{})
	}
}

// BenchmarkWork measures claim, run and finish of no-op jobs through Run, with and
// without the per-workspace bound.
func BenchmarkWork(b *testing.B) {
	for _, bc := range []struct {
		name         string
		perWorkspace int
	}{{"Unbounded", 0}, {"PerWorkspace2", 2}} {
		b.Run(bc.name, func(b *testing.B) {
			pool := mustPool(b)
			ctx := context.Background()
			kind := newKind(b)
			q := jobs.New(pool, jobs.Options{PerWorkspace: bc.perWorkspace,
				Concurrency: map[string]int{jobs.DefaultQueue: 4}, Logger: quietLogger()})
			done := make(chan struct{}, b.N)
			q.Handle(kind, func(context.Context, jobs.Job) error {
				done <- struct{}{}
				return nil
			})
			workspaces := []string{vigia.NewUUID(), vigia.NewUUID(), vigia.NewUUID(), vigia.NewUUID()}
			for i := range b.N {
				mustEnqueue(b, ctx, q, kind, nil, jobs.EnqueueOpts{WorkspaceID: workspaces[i%len(workspaces)]})
			}
			b.ResetTimer()
			stop := startRun(b, q)
			for range b.N {
				recv(b, done, "every job to run")
			}
			b.StopTimer()
			stop()
		})
	}
}

// BenchmarkRunOne measures one claim, no-op run and finish in the calling goroutine.
func BenchmarkRunOne(b *testing.B) {
	q := jobs.New(mustPool(b), jobs.Options{Logger: quietLogger()})
	kind := newKind(b)
	ctx := context.Background()
	q.Handle(kind, func(context.Context, jobs.Job) error { return nil })
	for range b.N {
		mustEnqueue(b, ctx, q, kind, nil, jobs.EnqueueOpts{})
	}
	b.ResetTimer()
	for range b.N {
		if ran, err := q.RunOne(ctx, kind); !ran || err != nil {
			b.Fatalf("RunOne = %v, %v", ran, err)
		}
	}
}
