package app

import (
	"context"
	"time"

	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/jobs"
	"github.com/vigia-data/vigia/orchestrator"
)

// feedCheckEvery is how often the checks of late BI refreshes and of failing or late
// pipelines are queued; one job of each at a time runs across every process (its
// unique key).
const feedCheckEvery = time.Minute

// handleFeedJobs registers the periodic checks of the reported feeds.
func (a *App) handleFeedJobs() {
	a.Jobs.Handle(bi.CheckJobKind, func(ctx context.Context, _ jobs.Job) error {
		n, err := a.BI.CheckDelayed(ctx)
		if n > 0 {
			a.Log.Info("BI datasets with a late or failed refresh", "count", n)
		}
		return err
	})
	a.Jobs.Handle(orchestrator.CheckJobKind, func(ctx context.Context, _ jobs.Job) error {
		n, err := a.Orchestrators.CheckPipelines(ctx)
		if n > 0 {
			a.Log.Info("pipelines past their failure or lateness threshold", "count", n)
		}
		return err
	})
}

// feedLoop queues the feeds' checks every feedCheckEvery until ctx ends, so a refresh
// that never comes is seen late without a new report.
func (a *App) feedLoop(ctx context.Context) {
	t := time.NewTicker(feedCheckEvery)
	defer t.Stop()
	for {
		for _, kind := range []string{bi.CheckJobKind, orchestrator.CheckJobKind} {
			_, err := a.Jobs.Enqueue(ctx, kind, struct{}{}, jobs.EnqueueOpts{UniqueKey: kind, MaxAttempts: 1})
			if err != nil && ctx.Err() == nil && !isDuplicate(err) {
				a.Log.Warn("queue a feed check", "job", kind, "cause", err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
