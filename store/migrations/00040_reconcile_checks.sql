-- +goose Up
-- Declared reconciliation checks (package datadiff): two datasets compared per group
-- (row count and sums of numeric columns) within a tolerance, on demand and after each
-- succeeded scan of either dataset's connection. last_result is the last run as a rule
-- result with the groups that differ.
CREATE TABLE reconcile_checks (
    id            uuid PRIMARY KEY,
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id    uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    other_id      uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name          text NOT NULL,
    group_by      jsonb NOT NULL DEFAULT '[]',
    sum_columns   jsonb NOT NULL DEFAULT '[]',
    tolerance_pct double precision NOT NULL DEFAULT 0 CHECK (tolerance_pct >= 0 AND tolerance_pct <= 100),
    created_by    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    last_result   jsonb
);
CREATE INDEX reconcile_checks_workspace ON reconcile_checks (workspace_id, created_at, id);
CREATE INDEX reconcile_checks_dataset ON reconcile_checks (dataset_id);
CREATE INDEX reconcile_checks_other ON reconcile_checks (other_id);

-- One open (or acknowledged) reconciliation issue per check, on its first dataset.
CREATE UNIQUE INDEX issues_one_open_reconciliation ON issues (dataset_id, (details->>'check_id'))
    WHERE type = 'reconciliation' AND status IN ('open', 'acknowledged');

-- +goose Down
DROP INDEX issues_one_open_reconciliation;
DROP TABLE reconcile_checks;
