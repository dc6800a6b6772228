package app

import (
	"context"
	"time"

	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/jobs"
)

// feedCheckEvery is how often the check of late BI refreshes is queued; one job at a
// time runs across every process (its unique key).
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
}

// feedLoop queues the feeds' checks every feedCheckEvery until ctx ends, so a refresh
// that never comes is seen late without a new report.
func (a *App) feedLoop(ctx context.Context) {
	t := time.NewTicker(feedCheckEvery)
	defer t.Stop()
	for {
		_, err := a.Jobs.Enqueue(ctx, bi.CheckJobKind, struct{}{}, jobs.EnqueueOpts{UniqueKey: bi.CheckJobKind, MaxAttempts: 1})
		if err != nil && ctx.Err() == nil && !isDuplicate(err) {
			a.Log.Warn("queue the BI refresh check", "cause", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
