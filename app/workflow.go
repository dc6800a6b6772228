package app

import (
	"context"
	"errors"
	"time"

	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/jobs"
)

// slaEvery is how often the SLA timers job is queued; one job at a time runs across
// every process (its unique key).
const slaEvery = time.Minute

// slaLoop queues the SLA timers job every slaEvery until ctx ends.
func (a *App) slaLoop(ctx context.Context) {
	t := time.NewTicker(slaEvery)
	defer t.Stop()
	for {
		_, err := a.Jobs.Enqueue(ctx, issue.SLAJobKind, struct{}{}, jobs.EnqueueOpts{UniqueKey: "sla-timers", MaxAttempts: 1})
		if err != nil && ctx.Err() == nil && !isDuplicate(err) {
			a.Log.Warn("queue the SLA timers", "cause", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func isDuplicate(err error) bool { return errors.Is(err, jobs.ErrDuplicate) }
