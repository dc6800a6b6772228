package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/jobs"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/ticket"
)

// deliveryMaxAttempts bounds the runs of a delivery job: the contract's 4 sends plus
// runs cut short by a dead worker.
const deliveryMaxAttempts = 8

// errDeliveryRetry is the cause recorded when a delivery waits for its next attempt.
var errDeliveryRetry = errors.New("webhook delivery will be retried")

// newWebhookQueue is the job queue of deliveries and ticket syncs: they run apart from
// scans, many at once (a send mostly waits on the network), with a short poll so that a
// worker restarted during back-off keeps the retry schedule.
func newWebhookQueue(cfg Config, db *store.DB, log *slog.Logger) *jobs.Queue {
	workers := cfg.WebhookWorkers
	if workers <= 0 {
		workers = notify.DefaultWorkers
	}
	return jobs.New(db.Pool(), jobs.Options{Logger: log, Concurrency: map[string]int{notify.JobQueue: workers},
		Heartbeat: cfg.JobHeartbeat, StaleAfter: cfg.JobStaleAfter, Poll: 250 * time.Millisecond})
}

// ticketSyncMaxAttempts bounds the runs of a ticket sync job: a run cut short by a dead
// worker runs again; provider failures are not job failures (the integration backs off).
const ticketSyncMaxAttempts = 3

// runTicketSync is an integration's sync job: its pending write-backs, then its poll.
func (a *App) runTicketSync(ctx context.Context, j jobs.Job) error {
	var args ticket.SyncJobArgs
	if err := json.Unmarshal(j.Args, &args); err != nil {
		return jobs.Permanent(jobs.WithCode("bad_args", err))
	}
	return a.Tickets.SyncTickets(ctx, args.IntegrationID)
}

// runDelivery is the delivery job: one attempt, then the queue waits as the service asks.
func (a *App) runDelivery(ctx context.Context, j jobs.Job) error {
	var args notify.DeliveryJobArgs
	if err := json.Unmarshal(j.Args, &args); err != nil {
		return jobs.Permanent(jobs.WithCode("bad_args", err))
	}
	out, err := a.Notify.Deliver(ctx, args.DeliveryID, j.Attempt >= j.MaxAttempts)
	switch {
	case err != nil:
		return err
	case out.Snooze > 0:
		return jobs.Snooze(out.Snooze)
	case out.Retry > 0:
		return jobs.Retry(jobs.WithCode(out.Code, errDeliveryRetry), out.Retry)
	}
	return nil
}

// deliveryJobs puts delivery jobs on the webhook queue, in the caller's transaction.
type deliveryJobs struct{ q *jobs.Queue }

// EnqueueDelivery enqueues a delivery's job once: a second call for the same delivery
// finds the first job.
func (d deliveryJobs) EnqueueDelivery(ctx context.Context, deliveryID, workspaceID string) error {
	_, err := d.q.Enqueue(ctx, notify.JobKind, notify.DeliveryJobArgs{DeliveryID: deliveryID}, jobs.EnqueueOpts{
		Queue: notify.JobQueue, WorkspaceID: workspaceID, MaxAttempts: deliveryMaxAttempts, UniqueKey: "delivery:" + deliveryID})
	if errors.Is(err, jobs.ErrDuplicate) {
		return nil
	}
	return err
}

// ticketJobs puts ticket sync jobs on the webhook queue, in the caller's transaction.
type ticketJobs struct{ q *jobs.Queue }

// EnqueueTicketSync queues an integration's sync job unless one is queued or running.
func (d ticketJobs) EnqueueTicketSync(ctx context.Context, integrationID, workspaceID string) error {
	_, err := d.q.Enqueue(ctx, ticket.JobKind, ticket.SyncJobArgs{IntegrationID: integrationID}, jobs.EnqueueOpts{
		Queue: notify.JobQueue, WorkspaceID: workspaceID, MaxAttempts: ticketSyncMaxAttempts, UniqueKey: "ticket.sync:" + integrationID})
	if errors.Is(err, jobs.ErrDuplicate) {
		return nil
	}
	return err
}

// RunWebhookWorkers works delivery jobs and dispatches events, escalations and digests
// until ctx ends; RunWorkers calls it. It returns once everything it started stopped.
func (a *App) RunWebhookWorkers(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { a.Notify.RunBackground(ctx, a.Config.WebhookDispatchEvery) })
	wg.Go(func() { a.OnCall.RunBackground(ctx) })
	wg.Go(func() { a.Tickets.RunBackground(ctx, a.Config.WebhookDispatchEvery) })
	err := a.WebhookJobs.Run(ctx)
	wg.Wait()
	a.Notify.Close()
	a.Tickets.Close()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// ticketTransitions resolves an issue whose linked ticket closed, through the issue
// workflow (history origin ticket:<provider>:<key>; a rule's issue awaits verification by
// the next scan). An issue already resolved or ignored is left unchanged.
type ticketTransitions struct{ issues *issue.Service }

func (t ticketTransitions) ResolveFromTicket(ctx context.Context, workspaceID, issueID, origin string) (bool, error) {
	_, err := t.issues.TransitionAsSystem(ctx, workspaceID, issueID, issue.ActionResolve, origin)
	if vigia.IsKind(err, vigia.KindConflict) {
		return false, nil
	}
	return err == nil, err
}
