-- +goose Up
-- Runs reported by orchestrators (POST /orchestrator-runs): one row per orchestrator,
-- pipeline and run id (a later report of the same run replaces it), with the datasets
-- it read and wrote; pipeline health reads the runs that wrote a dataset.
CREATE TABLE orchestrator_runs (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    orchestrator text NOT NULL,
    pipeline     text NOT NULL,
    run_id       text NOT NULL,
    status       text NOT NULL CHECK (status IN ('running', 'success', 'failed', 'aborted')),
    started_at   timestamptz NOT NULL,
    ended_at     timestamptz,
    unmatched    text[] NOT NULL DEFAULT '{}',
    facets       jsonb,
    received_at  timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (workspace_id, orchestrator, pipeline, run_id)
);
CREATE INDEX orchestrator_runs_recent ON orchestrator_runs (workspace_id, started_at DESC, id);

CREATE TABLE orchestrator_run_datasets (
    run_id     uuid NOT NULL REFERENCES orchestrator_runs(id) ON DELETE CASCADE,
    dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('input', 'output')),
    PRIMARY KEY (run_id, role, dataset_id)
);
CREATE INDEX orchestrator_run_datasets_dataset ON orchestrator_run_datasets (dataset_id, role);

-- +goose Down
DROP TABLE orchestrator_run_datasets;
DROP TABLE orchestrator_runs;
