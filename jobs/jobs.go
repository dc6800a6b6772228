// Package jobs is Vigia's job queue on Postgres: scans, webhook deliveries, schedules and
// projections are rows of the jobs table, enqueued in the same transaction as the write
// that causes them, so a crash loses nothing and a restart resumes.
//
// Workers claim jobs with SELECT … FOR UPDATE SKIP LOCKED and keep a heartbeat on the
// row while the handler runs. A worker that dies (kill -9, lost host) stops beating; any
// other process's reaper returns its jobs to the queue once the heartbeat is older than
// Options.StaleAfter, so recovery takes seconds, not a long job timeout.
//
// Handlers are idempotent by contract: a job whose worker died, or that was interrupted
// by a shutdown, runs again from the start, and its earlier run may have done part of its
// work. A handler can tell it is a re-run by Job.Attempt > 1.
//
// Outcomes: a nil error succeeds the job; Retry(err, after) reschedules it after a chosen
// delay; Snooze(after) reschedules it without using up an attempt; Permanent(err) fails
// it at once; any other error (or a panic) is retried with Options.Backoff until
// MaxAttempts, then the job fails. The stored last_error is a stable short code (see
// WithCode), never an error message, because messages may carry source values or secrets.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/internal/groupcommit"
	"github.com/vigia-data/vigia/internal/pgtx"
)

// DefaultQueue is the queue of jobs enqueued without EnqueueOpts.Queue.
const DefaultQueue = "default"

// notifyChannel is the Postgres NOTIFY channel on which Enqueue wakes idle workers; the
// payload is the queue name.
const notifyChannel = "vigia_jobs"

// Job statuses as stored in jobs.status.
const (
	StatusAvailable = "available"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// ErrDuplicate is returned by Enqueue, together with the existing job's id, when a job of
// the same kind and UniqueKey is still available or running.
var ErrDuplicate = errors.New("jobs: duplicate of a job not yet finished")

// Job is what a handler receives.
type Job struct {
	ID          string
	Kind        string
	Args        json.RawMessage
	WorkspaceID string // "" for jobs of no workspace
	Attempt     int    // 1 on the first run; > 1 on a re-run, whose predecessor may have done part of the work
	MaxAttempts int
	RunAt       time.Time
}

// EnqueueOpts are the optional settings of Enqueue.
type EnqueueOpts struct {
	// RunAt is when the job becomes due; zero means now (the database's clock).
	RunAt time.Time
	// MaxAttempts bounds the runs of the job, a run cut short by a dead worker included
	// (default 3). A job that must resume after a crash needs at least 2.
	MaxAttempts int
	// UniqueKey deduplicates: while a job of the same kind and key is available or
	// running, Enqueue returns ErrDuplicate and that job's id.
	UniqueKey string
	// WorkspaceID ties the job to a workspace, for Options.PerWorkspace and Counts.
	WorkspaceID string
	// Priority orders due jobs of a queue: higher runs first (default 0).
	Priority int
	// Queue names the queue; Options.Concurrency says how many workers serve it.
	Queue string
}

// Handler works one job. It must be idempotent (see the package doc) and should return
// soon after ctx is cancelled: on shutdown, when the job is cancelled, or when the worker
// can no longer prove to the database that it is alive.
type Handler func(ctx context.Context, j Job) error

// Options configure a Queue. Zero values take the documented defaults.
type Options struct {
	// WorkerID names this worker in locked_by (default hostname-pid-random).
	WorkerID string
	// Heartbeat is how often a running job's heartbeat_at is refreshed (default 5s).
	Heartbeat time.Duration
	// StaleAfter is the heartbeat age after which the reaper considers a running job's
	// worker dead (default 30s; raised to at least 2×Heartbeat).
	StaleAfter time.Duration
	// Poll is how often idle workers look for due jobs (default 500ms); Enqueue also
	// wakes them at once through LISTEN/NOTIFY.
	Poll time.Duration
	// Logger receives reaps, failures and panics (default slog.Default()).
	Logger *slog.Logger
	// Concurrency is the number of workers per queue name that Run serves (default
	// {"default": 4}). Jobs of a queue not named here are not worked by Run.
	Concurrency map[string]int
	// PerWorkspace bounds the running jobs of one workspace in one queue, across all
	// processes (0 = unbounded).
	PerWorkspace int
	// Backoff is the delay before retrying after an ordinary error, by the attempt that
	// failed (default attempt⁴ seconds ±10%, at most an hour).
	Backoff func(attempt int) time.Duration
	// StopTimeout bounds how long Run waits for cancelled handlers to return (default 15s).
	StopTimeout time.Duration
	// Retention is how long finished jobs are kept before Run prunes them (default 7
	// days; negative keeps them forever).
	Retention time.Duration
}

// Stats counts what this Queue has done since New.
type Stats struct {
	Run       int64 // jobs claimed and handed to a handler
	Succeeded int64
	Retried   int64 // rescheduled after an error, a Retry or a Snooze
	Failed    int64 // failed for good (attempts exhausted, Permanent)
	Panicked  int64 // handler panics (also counted as retried or failed)
	Reaped    int64 // running jobs of dead workers returned to the queue by this Queue
	Lost      int64 // runs whose claim was lost (reaped or cancelled) before they finished
}

// Queue enqueues and works jobs over a Postgres pool.
type Queue struct {
	pool *pgxpool.Pool
	opts Options
	log  *slog.Logger

	mu       sync.RWMutex
	handlers map[string]Handler

	// wakes are Run's per-queue wake-up channels, so that a job rescheduled a short while
	// ahead is claimed when it falls due instead of at the next poll.
	wakeMu sync.Mutex
	wakes  map[string]chan struct{}

	// finishes groups the outcomes of runs that end together into one statement.
	finishes *groupcommit.Batcher[finishArgs, bool]

	run, succeeded, retried, failed, panicked, reaped, lost atomic.Int64
}

// New returns a Queue over pool. It does nothing until Run or RunOne.
func New(pool *pgxpool.Pool, opts Options) *Queue {
	if opts.WorkerID == "" {
		opts.WorkerID = defaultWorkerID()
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 5 * time.Second
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = 30 * time.Second
	}
	// A worker must be able to beat at least once before it can be judged dead.
	opts.StaleAfter = max(opts.StaleAfter, 2*opts.Heartbeat)
	if opts.Poll <= 0 {
		opts.Poll = 500 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	conc := make(map[string]int, len(opts.Concurrency))
	for name, n := range opts.Concurrency {
		if n > 0 {
			conc[name] = n
		}
	}
	if len(conc) == 0 {
		conc[DefaultQueue] = 4
	}
	opts.Concurrency = conc
	if opts.PerWorkspace < 0 {
		opts.PerWorkspace = 0
	}
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 15 * time.Second
	}
	if opts.Retention == 0 {
		opts.Retention = 7 * 24 * time.Hour
	}
	q := &Queue{
		pool:     pool,
		opts:     opts,
		log:      opts.Logger.With("component", "jobs", "worker", opts.WorkerID),
		handlers: map[string]Handler{},
	}
	q.finishes = groupcommit.New(finishBatch, q.finishAll)
	return q
}

// DefaultBackoff is the retry delay after the given failed attempt: attempt⁴ seconds
// (1s, 16s, 81s, 256s…) with ±10% jitter so that retries of a burst spread out, at most
// an hour.
func DefaultBackoff(attempt int) time.Duration {
	a := float64(max(attempt, 1))
	d := math.Min(math.Pow(a, 4), 3600) * float64(time.Second)
	d *= 0.9 + 0.2*mrand.Float64()
	return time.Duration(d)
}

func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// WorkerID returns the id this Queue writes in locked_by.
func (q *Queue) WorkerID() string { return q.opts.WorkerID }

// Handle registers the handler of a kind, replacing any earlier one. Register handlers
// before Run: Run and RunOne claim only jobs of kinds that have a handler here, so
// processes with different handler sets can share the table.
func (q *Queue) Handle(kind string, h Handler) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handlers[kind] = h
}

func (q *Queue) handler(kind string) (Handler, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	h, ok := q.handlers[kind]
	return h, ok
}

func (q *Queue) kinds() []string {
	q.mu.RLock()
	defer q.mu.RUnlock()
	out := make([]string, 0, len(q.handlers))
	for k := range q.handlers {
		out = append(out, k)
	}
	return out
}

// Stats returns the counters of this Queue.
func (q *Queue) Stats() Stats {
	return Stats{
		Run:       q.run.Load(),
		Succeeded: q.succeeded.Load(),
		Retried:   q.retried.Load(),
		Failed:    q.failed.Load(),
		Panicked:  q.panicked.Load(),
		Reaped:    q.reaped.Load(),
		Lost:      q.lost.Load(),
	}
}

// querier is what both the pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// db returns the transaction riding in ctx (store.DB.InTx, via pgtx), else the pool.
func (q *Queue) db(ctx context.Context) querier {
	if tx, ok := pgtx.From(ctx); ok {
		return tx
	}
	return q.pool
}

const insertJob = `
INSERT INTO jobs (id, kind, queue, args, workspace_id, priority, run_at, max_attempts, unique_key)
VALUES ($1, $2, $3, $4::jsonb, $5::uuid, $6, coalesce($7::timestamptz, now()), $8, $9)
ON CONFLICT (kind, unique_key) WHERE unique_key IS NOT NULL AND status IN ('available', 'running')
DO NOTHING
RETURNING id::text`

// Enqueue adds a job of kind with args (marshalled to JSON; a json.RawMessage is stored
// as is) and returns its id. It inserts inside the transaction riding in ctx when there
// is one, so the job exists exactly when that transaction commits; else it inserts on the
// pool. Args are stored in the clear: put ids in them, never a secret or a source
// value; handlers load what they need. With o.UniqueKey, a job of the same kind and key
// that is still available or running makes Enqueue return that job's id and
// ErrDuplicate, leaving the caller's transaction usable. It returns KindInvalid for an
// empty kind, a negative MaxAttempts or a WorkspaceID that is not a UUID, and
// KindInternal when the database fails.
func (q *Queue) Enqueue(ctx context.Context, kind string, args any, o EnqueueOpts) (string, error) {
	if kind == "" {
		return "", vigia.Invalid(vigia.Field("missing", nil, "kind"))
	}
	if o.MaxAttempts < 0 {
		return "", vigia.Invalid(vigia.Field("greater_than_equal", map[string]any{"ge": 1}, "max_attempts"))
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 3
	}
	if o.WorkspaceID != "" && !vigia.ValidID(o.WorkspaceID) {
		return "", vigia.Invalid(vigia.Field("uuid_parsing", nil, "workspace_id"))
	}
	if o.Queue == "" {
		o.Queue = DefaultQueue
	}
	payload, err := marshalArgs(args)
	if err != nil {
		return "", vigia.Internal(fmt.Errorf("jobs: marshal args of %s: %w", kind, err))
	}
	var ws, key, runAt any
	if o.WorkspaceID != "" {
		ws = o.WorkspaceID
	}
	if o.UniqueKey != "" {
		key = o.UniqueKey
	}
	if !o.RunAt.IsZero() {
		runAt = o.RunAt
	}
	db := q.db(ctx)
	// A duplicate may finish between the failed insert and the lookup; then the insert
	// is tried again.
	for range 3 {
		var id string
		err := db.QueryRow(ctx, insertJob, vigia.NewID(), kind, o.Queue, payload, ws, o.Priority,
			runAt, o.MaxAttempts, key).Scan(&id)
		if err == nil {
			// Delivered at commit (never on rollback), waking idle workers of the queue.
			if _, err := db.Exec(ctx, "SELECT pg_notify($1, $2)", notifyChannel, o.Queue); err != nil {
				return "", vigia.Internal(fmt.Errorf("jobs: notify: %w", err))
			}
			return id, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return "", vigia.Internal(fmt.Errorf("jobs: enqueue %s: %w", kind, err))
		}
		err = db.QueryRow(ctx, `SELECT id::text FROM jobs
			WHERE kind = $1 AND unique_key = $2 AND status IN ('available', 'running')`,
			kind, o.UniqueKey).Scan(&id)
		if err == nil {
			return id, ErrDuplicate
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return "", vigia.Internal(fmt.Errorf("jobs: find duplicate of %s: %w", kind, err))
		}
	}
	return "", vigia.Internal(fmt.Errorf("jobs: enqueue %s: duplicate kept finishing", kind))
}

func marshalArgs(args any) (string, error) {
	switch a := args.(type) {
	case nil:
		return "{}", nil
	case json.RawMessage:
		if !json.Valid(a) {
			return "", errors.New("invalid JSON")
		}
		return string(a), nil
	}
	b, err := json.Marshal(args)
	return string(b), err
}

// Cancel cancels a job that is available or running. A running job's handler sees its
// ctx cancelled at its next heartbeat and its outcome is dropped. Cancelling a finished
// job does nothing. Cancel returns KindNotFound when no job has the id.
func (q *Queue) Cancel(ctx context.Context, id string) error {
	if !vigia.ValidID(id) {
		return vigia.NotFound()
	}
	db := q.db(ctx)
	tag, err := db.Exec(ctx, `UPDATE jobs SET status = 'cancelled', finished_at = now(),
		heartbeat_at = NULL, last_error = 'cancelled'
		WHERE id = $1 AND status IN ('available', 'running')`, id)
	if err != nil {
		return vigia.Internal(fmt.Errorf("jobs: cancel: %w", err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exists bool
	if err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)", id).Scan(&exists); err != nil {
		return vigia.Internal(fmt.Errorf("jobs: cancel: %w", err))
	}
	if !exists {
		return vigia.NotFound()
	}
	return nil
}

// Counts returns how many jobs are queued (available, due or not) and running, of kind
// and workspaceID ("" matches any), for "queue full" answers. It reads inside the
// transaction in ctx when there is one.
func (q *Queue) Counts(ctx context.Context, kind, workspaceID string) (queued, running int, err error) {
	if workspaceID != "" && !vigia.ValidID(workspaceID) {
		return 0, 0, nil
	}
	var ws any
	if workspaceID != "" {
		ws = workspaceID
	}
	err = q.db(ctx).QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE status = 'available'),
			count(*) FILTER (WHERE status = 'running')
		FROM jobs
		WHERE status IN ('available', 'running')
		  AND ($1 = '' OR kind = $1)
		  AND ($2::uuid IS NULL OR workspace_id = $2::uuid)`, kind, ws).Scan(&queued, &running)
	if err != nil {
		return 0, 0, vigia.Internal(fmt.Errorf("jobs: counts: %w", err))
	}
	return queued, running, nil
}

// Prune deletes jobs that finished before before and returns how many. Run prunes
// periodically according to Options.Retention.
func (q *Queue) Prune(ctx context.Context, before time.Time) (int, error) {
	tag, err := q.pool.Exec(ctx, `DELETE FROM jobs
		WHERE finished_at < $1 AND status IN ('succeeded', 'failed', 'cancelled')`, before)
	if err != nil {
		return 0, vigia.Internal(fmt.Errorf("jobs: prune: %w", err))
	}
	return int(tag.RowsAffected()), nil
}
