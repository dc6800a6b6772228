-- +goose Up
-- The progress of `vigia graph rebuild`, one row per workspace while a rebuild is
-- unfinished: a rebuild that fails resumes after its last saved step (issue 22).
CREATE TABLE lineage_rebuilds (
    workspace_id    uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    -- The last outbox row when the rebuild started: the record it reads covers it.
    outbox_position bigint NOT NULL,
    phase           text NOT NULL CHECK (phase IN ('clear', 'datasets', 'exposures', 'edges', 'reach')),
    -- The key of the last row written in the phase (empty at its start).
    cursor          text[] NOT NULL DEFAULT '{}',
    nodes_written   bigint NOT NULL DEFAULT 0,
    edges_written   bigint NOT NULL DEFAULT 0,
    batches         bigint NOT NULL DEFAULT 0,
    started_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

-- The rebuild pages a workspace's datasets by id.
CREATE INDEX datasets_workspace_id ON datasets (workspace_id, id);

-- +goose Down
DROP INDEX datasets_workspace_id;
DROP TABLE lineage_rebuilds;
