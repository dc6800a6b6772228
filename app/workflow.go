package app

import (
	"context"
	"errors"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/jobs"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/team"
)

// slaEvery is how often the SLA timers job is queued; one job at a time runs across
// every process (its unique key).
const slaEvery = time.Minute

// wireWorkflow builds rules, issues and teams, makes scans evaluate rules, and handles
// the SLA timers job.
func (a *App) wireWorkflow(clock vigia.Clock) {
	a.Rules = rule.NewService(a.DB.Rules(), a.Catalog, a.Connections, a.Messages, clock)
	a.Issues = issue.NewService(a.DB.Issues(), a.DB, clock)
	a.Teams = team.NewService(a.DB.Teams(), clock)
	a.Scans.UseRules(rule.NewEvaluator(a.DB.Rules()))
	a.Jobs.Handle(issue.SLAJobKind, func(ctx context.Context, _ jobs.Job) error {
		n, err := a.Issues.MarkSLABreaches(ctx)
		if n > 0 {
			a.Log.Info("issues past their resolution target", "count", n)
		}
		return err
	})
}

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
