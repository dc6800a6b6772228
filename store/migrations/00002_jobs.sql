-- +goose Up
-- The job queue (package jobs): scans, webhook deliveries, schedules and projections,
-- enqueued in the same transaction as the write that causes them.
CREATE TABLE jobs (
    id           uuid PRIMARY KEY,
    kind         text NOT NULL,
    queue        text NOT NULL DEFAULT 'default',
    args         jsonb NOT NULL DEFAULT '{}',
    -- No foreign key: the queue is an operational log (some jobs have no workspace); a
    -- handler whose workspace is gone finds nothing to do and succeeds.
    workspace_id uuid,
    status       text NOT NULL DEFAULT 'available'
                 CHECK (status IN ('available', 'running', 'succeeded', 'failed', 'cancelled')),
    priority     integer NOT NULL DEFAULT 0,   -- higher runs first
    run_at       timestamptz NOT NULL DEFAULT now(),
    attempts     integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
    locked_by    text,                        -- worker id of the last claim
    locked_at    timestamptz,
    heartbeat_at timestamptz,                 -- set while running; stale means the worker died
    last_error   text,                        -- a stable short code, never a message or a secret
    unique_key   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);

-- Claiming: the next available job of a queue by priority, then due time, in the order
-- of the claim query's ORDER BY so that it stops at the first match.
CREATE INDEX jobs_claim ON jobs (queue, priority DESC, run_at, id) WHERE status = 'available';
-- Reaping: running jobs by heartbeat age.
CREATE INDEX jobs_running_heartbeat ON jobs (heartbeat_at) WHERE status = 'running';
-- Per-workspace bounds and "queue full" counts over not-finished jobs.
CREATE INDEX jobs_open_workspace ON jobs (workspace_id, kind, status)
    WHERE status IN ('available', 'running');
-- Deduplication: one not-finished job per (kind, unique_key).
CREATE UNIQUE INDEX jobs_unique_open ON jobs (kind, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('available', 'running');
-- Pruning finished jobs.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;

-- +goose Down
DROP TABLE jobs;
