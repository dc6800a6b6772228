-- +goose Up
-- The state of each workspace's scheduled routines (issue 17): the catalog itself is in
-- package routine; a row exists once a routine was switched or ran. next_run_at is in
-- UTC, computed from the workspace's time zone; null while disabled.
CREATE TABLE routines (
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    key            text NOT NULL,
    enabled        boolean NOT NULL DEFAULT false,
    next_run_at    timestamptz,
    last_run_at    timestamptz,
    last_status    text CHECK (last_status IN ('succeeded', 'failed')),
    last_result    jsonb,
    last_report_id uuid,
    updated_by     text NOT NULL DEFAULT '',
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, key)
);
CREATE INDEX routines_due ON routines (next_run_at) WHERE enabled;

-- +goose Down
DROP TABLE routines;
