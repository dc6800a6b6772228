package jobs

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vigia-data/vigia"
)

// Causes with which a running handler's ctx is cancelled, besides the end of Run's ctx.
var (
	// errClaimLost: the row is no longer this worker's run (cancelled, or reaped while
	// this worker was thought dead); whatever the handler does now is not recorded.
	errClaimLost = errors.New("jobs: the job was cancelled or taken over")
	// errLeaseExpired: heartbeats have failed for StaleAfter, so another process may
	// already have reaped the job and started it again.
	errLeaseExpired = errors.New("jobs: heartbeats failing; the job may have been reaped")
)

// claimed is a job this worker holds: its row is running with locked_by = WorkerID and
// attempts = job.Attempt, which together identify this run in every later update.
type claimed struct {
	job   Job
	queue string
	h     Handler
}

// Run works jobs until ctx ends: per queue of Options.Concurrency it keeps up to that many
// handlers running, woken by NOTIFY from Enqueue or every Options.Poll, and it reaps the
// jobs of dead workers every StaleAfter/2 and prunes old finished jobs. When ctx ends,
// running handlers see their ctx cancelled; Run waits for them up to Options.StopTimeout
// and returns nil. A handler that returns an error because of the shutdown puts its job
// back as available without using up an attempt. Run returns an error at once when no
// handler is registered.
func (q *Queue) Run(ctx context.Context) error {
	if len(q.kinds()) == 0 {
		return errors.New("jobs: Run needs at least one handler")
	}
	wakes := make(map[string]chan struct{}, len(q.opts.Concurrency))
	for name := range q.opts.Concurrency {
		wakes[name] = make(chan struct{}, 1)
	}
	wakeAll := func() {
		for _, ch := range wakes {
			poke(ch)
		}
	}
	q.setWakes(wakes)
	defer q.setWakes(nil)
	var loops, work sync.WaitGroup
	loops.Go(func() { q.listen(ctx, wakes, wakeAll) })
	loops.Go(func() { q.maintain(ctx, wakeAll) })
	for name, n := range q.opts.Concurrency {
		loops.Go(func() { q.dispatch(ctx, name, n, wakes[name], &work) })
	}
	<-ctx.Done()
	loops.Wait() // no handler starts after this

	done := make(chan struct{})
	go func() { work.Wait(); close(done) }()
	stop := time.NewTimer(q.opts.StopTimeout)
	defer stop.Stop()
	select {
	case <-done:
	case <-stop.C:
		q.log.Warn("jobs: handlers still running after the stop timeout; Run returns without them")
	}
	return nil
}

func (q *Queue) setWakes(w map[string]chan struct{}) {
	q.wakeMu.Lock()
	defer q.wakeMu.Unlock()
	q.wakes = w
}

// maxPreciseWake bounds the delays wakeAfter keeps a timer for; longer ones wait for a poll.
const maxPreciseWake = time.Hour

// wakeAfter wakes the queue's dispatcher once d has passed: a job rescheduled d ahead is
// then claimed when it falls due (retry schedules such as 1 s, 5 s, 25 s stay exact),
// not up to Options.Poll later.
func (q *Queue) wakeAfter(queue string, d time.Duration) {
	if d <= 0 || d > maxPreciseWake {
		return
	}
	time.AfterFunc(d, func() {
		q.wakeMu.Lock()
		ch := q.wakes[queue]
		q.wakeMu.Unlock()
		if ch != nil {
			poke(ch)
		}
	})
}

// poke wakes a loop without blocking; one pending wake-up is enough.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// dispatch keeps up to n handlers of one queue running.
func (q *Queue) dispatch(ctx context.Context, queue string, n int, wake <-chan struct{}, work *sync.WaitGroup) {
	// Buffered to n so that a finishing handler never blocks, even after dispatch returned.
	done := make(chan struct{}, n)
	running := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		for running < n && ctx.Err() == nil {
			cs, err := q.claim(ctx, &queue, q.kinds(), n-running)
			if err != nil {
				if ctx.Err() == nil {
					q.log.Warn("jobs: claim failed", "queue", queue, "cause", safeErr(err))
				}
				break
			}
			if len(cs) == 0 {
				break
			}
			for _, c := range cs {
				if ctx.Err() != nil {
					// Claimed while the queue was stopping: hand it back untouched rather
					// than start a handler on a cancelled context.
					q.release(ctx, c)
					continue
				}
				running++
				work.Go(func() {
					defer func() { done <- struct{}{} }()
					q.work(ctx, c)
				})
			}
		}
		timer.Reset(q.opts.Poll)
		select {
		case <-ctx.Done():
			return
		case <-done:
			running--
			// Count every handler that finished meanwhile, so that one claim refills all
			// the free slots: claiming one job per finished handler would cap a busy
			// queue at one commit's latency per job.
			for drained := false; !drained; {
				select {
				case <-done:
					running--
				default:
					drained = true
				}
			}
		case <-wake:
		case <-timer.C:
		}
	}
}

// listen wakes the dispatcher of a queue when Enqueue notifies it, reconnecting after
// errors; meanwhile polling keeps the queue moving.
func (q *Queue) listen(ctx context.Context, wakes map[string]chan struct{}, wakeAll func()) {
	for {
		err := q.listenOnce(ctx, wakes, wakeAll)
		if ctx.Err() != nil {
			return
		}
		q.log.Warn("jobs: notifications interrupted; polling until they resume", "cause", safeErr(err))
		t := time.NewTimer(max(q.opts.Poll, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (q *Queue) listenOnce(ctx context.Context, wakes map[string]chan struct{}, wakeAll func()) error {
	pc, err := q.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that LISTENs must not go back to the pool; it is closed here.
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	// Jobs enqueued before LISTEN took effect sent their notice to no one: look now.
	wakeAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if ch, ok := wakes[n.Payload]; ok {
			poke(ch)
		}
	}
}

// maintain reaps the jobs of dead workers every StaleAfter/2 and prunes finished jobs
// hourly.
func (q *Queue) maintain(ctx context.Context, wakeAll func()) {
	tick := time.NewTicker(q.opts.StaleAfter / 2)
	defer tick.Stop()
	var lastPrune time.Time
	for {
		if n, err := q.Reap(ctx); err != nil && ctx.Err() == nil {
			q.log.Warn("jobs: reap failed", "cause", safeErr(err))
		} else if n > 0 {
			wakeAll()
		}
		if q.opts.Retention > 0 && time.Since(lastPrune) >= time.Hour {
			lastPrune = time.Now()
			if n, err := q.Prune(ctx, time.Now().Add(-q.opts.Retention)); err != nil && ctx.Err() == nil {
				q.log.Warn("jobs: prune failed", "cause", safeErr(err))
			} else if n > 0 {
				q.log.Info("jobs: pruned finished jobs", "count", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

const reapSQL = `
WITH stale AS (
    SELECT id, locked_by FROM jobs
    WHERE status = 'running'
      AND coalesce(heartbeat_at, locked_at, created_at) < now() - $1::bigint * interval '1 microsecond'
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs j SET
    status       = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'available' END,
    finished_at  = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
    run_at       = now(),
    last_error   = 'worker_lost',
    locked_by    = NULL,
    locked_at    = NULL,
    heartbeat_at = NULL
FROM stale
WHERE j.id = stale.id
RETURNING j.id::text, j.kind, j.attempts, j.status, coalesce(stale.locked_by, '')`

// Reap returns to the queue every running job whose heartbeat is older than
// Options.StaleAfter: its worker died. The cut-short run counts as an attempt (as in
// River), so a job that kills its worker every time stops after MaxAttempts: such a job
// fails with last_error "worker_lost". Each reaped job is logged. Reap returns how many
// jobs it took back; Run also calls it periodically.
func (q *Queue) Reap(ctx context.Context) (int, error) {
	rows, err := q.pool.Query(ctx, reapSQL, q.opts.StaleAfter.Microseconds())
	if err != nil {
		return 0, vigia.Internal(fmt.Errorf("jobs: reap: %w", err))
	}
	type reapedJob struct {
		id, kind, status, worker string
		attempt                  int
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (reapedJob, error) {
		var j reapedJob
		err := r.Scan(&j.id, &j.kind, &j.attempt, &j.status, &j.worker)
		return j, err
	})
	if err != nil {
		return 0, vigia.Internal(fmt.Errorf("jobs: reap: %w", err))
	}
	for _, j := range got {
		q.log.Warn("jobs: reaped a job whose worker stopped beating",
			"job", j.id, "kind", j.kind, "attempt", j.attempt, "dead_worker", j.worker, "now", j.status)
	}
	q.reaped.Add(int64(len(got)))
	return len(got), nil
}

// RunOne claims and runs, in the calling goroutine, at most one due job of the given
// kinds (every kind with a handler when none is given), in any queue, within
// Options.PerWorkspace. It reports whether it ran a job; the job's own outcome is
// recorded on its row, not returned. It returns an error for a kind without a handler
// or when the database fails. The CLI's `vigia scan --wait` uses it to work its own scan
// when no server is running.
func (q *Queue) RunOne(ctx context.Context, kinds ...string) (bool, error) {
	if len(kinds) == 0 {
		kinds = q.kinds()
	}
	if len(kinds) == 0 {
		return false, errors.New("jobs: RunOne needs at least one handler")
	}
	for _, k := range kinds {
		if _, ok := q.handler(k); !ok {
			return false, fmt.Errorf("jobs: no handler for kind %q", k)
		}
	}
	cs, err := q.claim(ctx, nil, kinds, 1)
	if err != nil {
		return false, vigia.Internal(fmt.Errorf("jobs: claim: %w", err))
	}
	if len(cs) == 0 {
		return false, nil
	}
	q.work(ctx, cs[0])
	return true, nil
}

// candidateSQL picks the next due jobs of the kinds (up to $3), skipping workspaces that
// already have $4 (Options.PerWorkspace) jobs running in the job's queue. The saturated
// workspaces are computed once per query (a hashed subplan), not once per row.
const candidateSQL = `
SELECT j.id
FROM jobs j
WHERE j.status = 'available'
  AND %s
  AND j.run_at <= now()
  AND j.kind = ANY($2::text[])
  AND ($4::int = 0 OR j.workspace_id IS NULL OR (j.queue, j.workspace_id) NOT IN (
        SELECT r.queue, r.workspace_id FROM jobs r
        WHERE r.status = 'running' AND r.workspace_id IS NOT NULL
        GROUP BY r.queue, r.workspace_id HAVING count(*) >= $4::int))
ORDER BY j.priority DESC, j.run_at, j.id
LIMIT $3
FOR UPDATE OF j SKIP LOCKED`

// claimSQL marks the picked jobs running for worker $5 in one statement.
const claimSQL = `
WITH picked AS MATERIALIZED (` + candidateSQL + `)
UPDATE jobs j SET status = 'running', attempts = j.attempts + 1, locked_by = $5,
    locked_at = now(), heartbeat_at = now()
FROM picked
WHERE j.id = picked.id
RETURNING j.id::text, j.queue, coalesce(j.workspace_id::text, ''), j.kind, j.args,
    j.attempts, j.max_attempts, j.run_at`

var (
	// claimInQueue walks the jobs_claim index in order and stops at the first matches.
	claimInQueue = fmt.Sprintf(claimSQL, "j.queue = $1::text")
	// claimInAnyQueue (RunOne) sorts the due jobs of the kinds across queues.
	claimInAnyQueue = fmt.Sprintf(claimSQL, "($1::text IS NULL OR j.queue = $1::text)")
)

// roomInWorkspace says whether a workspace's running jobs in a queue, the new claim
// included, are within the bound; it runs under the workspace's advisory lock.
const roomInWorkspace = `SELECT count(*) <= $3 FROM jobs
WHERE status = 'running' AND queue = $1 AND workspace_id = $2::uuid`

// rowQuerier is what both the pool and a transaction offer for claiming.
type rowQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// claim takes up to limit due jobs of queue (any queue when nil) and kinds; with
// Options.PerWorkspace, at most one.
func (q *Queue) claim(ctx context.Context, queue *string, kinds []string, limit int) ([]*claimed, error) {
	if len(kinds) == 0 || limit < 1 || ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// A claim cut off by ctx could commit without the worker learning of it, leaving
	// the job running with no handler until it is reaped as an attempt. Claims finish
	// instead; a job claimed as ctx ends is handed back as interrupted.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if q.opts.PerWorkspace == 0 {
		return q.claimRows(ctx, q.pool, queue, kinds, limit)
	}
	// A job whose workspace filled up meanwhile is given back; the next try skips that
	// workspace.
	for range 3 {
		cs, again, err := q.claimBounded(ctx, queue, kinds)
		if err != nil || !again {
			return cs, err
		}
	}
	return nil, nil
}

func (q *Queue) claimRows(ctx context.Context, db rowQuerier, queue *string, kinds []string, limit int) ([]*claimed, error) {
	sql := claimInAnyQueue
	if queue != nil {
		sql = claimInQueue
	}
	rows, err := db.Query(ctx, sql, queue, kinds, limit, q.opts.PerWorkspace, q.opts.WorkerID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*claimed, error) {
		c := &claimed{}
		var args []byte
		err := r.Scan(&c.job.ID, &c.queue, &c.job.WorkspaceID, &c.job.Kind, &args,
			&c.job.Attempt, &c.job.MaxAttempts, &c.job.RunAt)
		c.job.Args = args
		c.h, _ = q.handler(c.job.Kind)
		return c, err
	})
}

// claimBounded claims one job within Options.PerWorkspace. The claim query saw room in
// the job's workspace, but concurrent claimers each looked in their own snapshot and
// may all have seen the same room. So the claim is checked again under an advisory lock
// on the workspace: claimers check one after the other, each seeing the claims
// committed before it, and a claim without room is rolled back.
func (q *Queue) claimBounded(ctx context.Context, queue *string, kinds []string) (cs []*claimed, again bool, err error) {
	tx, err := q.pool.Begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	cs, err = q.claimRows(ctx, tx, queue, kinds, 1)
	if err != nil || len(cs) == 0 {
		return nil, false, err
	}
	if c := cs[0]; c.job.WorkspaceID != "" {
		// Sent as one round trip; the count is a later statement, so its snapshot is
		// taken after the lock was granted.
		b := &pgx.Batch{}
		b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "vigia_jobs/"+c.queue+"/"+c.job.WorkspaceID)
		b.Queue(roomInWorkspace, c.queue, c.job.WorkspaceID, q.opts.PerWorkspace)
		br := tx.SendBatch(ctx, b)
		_, err := br.Exec()
		var room bool
		if err == nil {
			err = br.QueryRow().Scan(&room)
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, false, err
		}
		if !room {
			return nil, true, nil
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, false, err
	}
	return cs, false, nil
}

// work runs a claimed job's handler with heartbeats and records its outcome.
func (q *Queue) work(ctx context.Context, c *claimed) {
	q.run.Add(1)
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	var hb sync.WaitGroup
	hb.Go(func() { q.heartbeat(ctx, c, cancel, stop) })
	err := q.call(hctx, c)
	close(stop)
	hb.Wait()
	cause := context.Cause(hctx)
	// A run cut short by shutdown or by failing heartbeats is not the job's fault.
	interrupted := err != nil && (ctx.Err() != nil || errors.Is(cause, errLeaseExpired))
	q.finish(ctx, c, err, interrupted)
}

// call runs the handler, turning a panic into a failure of the job.
func (q *Queue) call(ctx context.Context, c *claimed) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		q.panicked.Add(1)
		attrs := []any{"job", c.job.ID, "kind", c.job.Kind, "attempt", c.job.Attempt, "stack", string(debug.Stack())}
		// Only runtime errors are logged by value: another panic value may hold data.
		if re, ok := r.(runtime.Error); ok {
			attrs = append(attrs, "panic", re.Error())
		}
		q.log.Error("jobs: handler panicked", attrs...)
		err = WithCode("panic", errors.New("handler panicked"))
	}()
	if c.h == nil {
		return WithCode("no_handler", errors.New("no handler"))
	}
	return c.h(ctx, c.job)
}

const heartbeatSQL = `UPDATE jobs SET heartbeat_at = now()
WHERE id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3`

// heartbeat refreshes the job's heartbeat_at until stop closes. It cancels the handler
// when the row is no longer this run's, or when it could not beat for StaleAfter.
func (q *Queue) heartbeat(ctx context.Context, c *claimed, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	base := context.WithoutCancel(ctx) // keeps beating while a cancelled handler winds down
	t := time.NewTicker(q.opts.Heartbeat)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		bctx, done := context.WithTimeout(base, q.opts.Heartbeat)
		tag, err := q.pool.Exec(bctx, heartbeatSQL, c.job.ID, q.opts.WorkerID, c.job.Attempt)
		done()
		switch {
		case err != nil:
			if time.Since(lastOK) >= q.opts.StaleAfter {
				q.log.Warn("jobs: heartbeats failing; stopping the handler", "job", c.job.ID, "kind", c.job.Kind, "cause", safeErr(err))
				cancel(errLeaseExpired)
				return
			}
		case tag.RowsAffected() == 0:
			cancel(errClaimLost)
			return
		default:
			lastOK = time.Now()
		}
	}
}

// finishSQL records the outcomes of runs that finished together (see finishAll): one row
// of the arrays per run; a run whose claim was lost meanwhile matches no row.
const finishSQL = `
UPDATE jobs j SET
    status       = v.status,
    run_at       = CASE WHEN v.status = 'available' THEN now() + v.delay * interval '1 microsecond' ELSE j.run_at END,
    max_attempts = j.max_attempts + v.extra,
    last_error   = coalesce(v.code, j.last_error),
    finished_at  = CASE WHEN v.status IN ('succeeded', 'failed') THEN now() END,
    locked_by    = CASE WHEN v.status = 'available' THEN NULL ELSE j.locked_by END,
    locked_at    = CASE WHEN v.status = 'available' THEN NULL ELSE j.locked_at END,
    heartbeat_at = NULL
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::bigint[], $5::int[], $6::text[]) AS v(id, attempts, status, delay, extra, code)
WHERE j.id = v.id AND j.status = 'running' AND j.locked_by = $7 AND j.attempts = v.attempts
RETURNING j.id::text`

// finishBatch bounds the outcomes recorded by one statement.
const finishBatch = 256

// finishArgs is the outcome of one run.
type finishArgs struct {
	id      string
	attempt int
	status  string
	delay   time.Duration // counted from ended
	extra   int
	code    *string
	ended   time.Time // when the handler returned
}

// finishAll records the outcomes of runs that ended while another batch was being
// written, in one statement (a busy queue pays one commit for many jobs instead of one
// each); it reports for each whether its row was still this run's.
func (q *Queue) finishAll(items []finishArgs) ([]bool, error) {
	ids, attempts, statuses := make([]string, len(items)), make([]int32, len(items)), make([]string, len(items))
	delays, extras, codes := make([]int64, len(items)), make([]int32, len(items)), make([]*string, len(items))
	for i, it := range items {
		ids[i], attempts[i], statuses[i] = it.id, int32(it.attempt), it.status
		// A run that waited for an earlier batch is due as soon as it would have been.
		delay := max(it.delay-time.Since(it.ended), 0)
		delays[i], extras[i], codes[i] = delay.Microseconds(), int32(it.extra), it.code
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := q.pool.Query(ctx, finishSQL, ids, attempts, statuses, delays, extras, codes, q.opts.WorkerID)
	if err != nil {
		return nil, err
	}
	done, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	found := make(map[string]bool, len(done))
	for _, id := range done {
		found[id] = true
	}
	out := make([]bool, len(items))
	for i, it := range items {
		out[i] = found[it.id]
	}
	return out, nil
}

// releaseSQL undoes a claim whose handler never started.
const releaseSQL = `
UPDATE jobs SET status = 'available', attempts = attempts - 1, locked_by = NULL, locked_at = NULL, heartbeat_at = NULL
WHERE id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3`

// release hands a claimed job back as if it had never been claimed; a failure leaves it
// to the reaper.
func (q *Queue) release(ctx context.Context, c *claimed) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := q.pool.Exec(rctx, releaseSQL, c.job.ID, q.opts.WorkerID, c.job.Attempt); err != nil {
		q.log.Warn("jobs: handing back a job claimed during shutdown failed", "job", c.job.ID, "cause", safeErr(err))
	}
}

// finish records the outcome of a run, unless the run lost its claim meanwhile.
func (q *Queue) finish(_ context.Context, c *claimed, err error, interrupted bool) {
	j := c.job
	var o *outcome
	errors.As(err, &o)
	var (
		status = StatusAvailable
		delay  time.Duration
		extra  int     // added to max_attempts: a run that must not use up an attempt
		code   *string // nil keeps last_error
	)
	setCode := func(s string) { code = &s }
	switch {
	case err == nil:
		status = StatusSucceeded
	case interrupted:
		extra = 1
		setCode("interrupted")
	case o != nil && o.kind == outcomeSnooze:
		extra = 1
		delay = o.after
	case o != nil && o.kind == outcomePermanent, j.Attempt >= j.MaxAttempts:
		status = StatusFailed
		setCode(errorCode(err))
	case o != nil && o.kind == outcomeRetry:
		delay = o.after
		setCode(errorCode(err))
	default:
		delay = q.opts.Backoff(j.Attempt)
		setCode(errorCode(err))
	}

	ended := time.Now()
	recorded, dbErr := q.finishes.Do(finishArgs{id: j.ID, attempt: j.Attempt, status: status, delay: delay, extra: extra, code: code,
		ended: ended})
	attrs := []any{"job", j.ID, "kind", j.Kind, "attempt", j.Attempt}
	if code != nil {
		attrs = append(attrs, "code", *code)
	}
	switch {
	case dbErr != nil:
		// The row stays running without heartbeats; a reaper takes it back.
		q.log.Error("jobs: recording the outcome failed", append(attrs, "cause", safeErr(dbErr))...)
		return
	case !recorded:
		q.lost.Add(1)
		q.log.Warn("jobs: the job was cancelled or taken over before it finished; outcome dropped", attrs...)
		return
	}
	switch status {
	case StatusSucceeded:
		q.succeeded.Add(1)
		q.log.Debug("jobs: job succeeded", attrs...)
	case StatusFailed:
		q.failed.Add(1)
		q.log.Warn("jobs: job failed", attrs...)
	default:
		q.retried.Add(1)
		q.log.Info("jobs: job rescheduled", append(attrs, "after", delay)...)
		if delay > 0 {
			q.wakeAfter(c.queue, max(delay-time.Since(ended), time.Millisecond))
		}
	}
}

// safeErr describes a database error for a log line without its message, which may
// name the server, the user or a value.
func safeErr(err error) string {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pgErr):
		return "postgres error " + pgErr.Code
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "database error"
}
