-- +goose Up
-- Right answers on real databases (issue 11).

-- A profile read over a view's first rows counts those rows only: row_count is then a
-- lower bound, said by row_count_exact = false.
ALTER TABLE dataset_profiles ADD COLUMN row_count_exact boolean NOT NULL DEFAULT true;

-- The datasets a scan could not profile, with the stable reason (not_populated,
-- permission_denied, timeout, query_failed ...): the scan resource lists them and the
-- dataset shows its last failure instead of "not analysed yet".
CREATE TABLE scan_failures (
    scan_id      uuid NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
    dataset_id   uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL,
    code         text NOT NULL,
    failed_at    timestamptz NOT NULL,
    PRIMARY KEY (scan_id, dataset_id)
);
CREATE INDEX scan_failures_dataset ON scan_failures (dataset_id, failed_at DESC);

-- Per connection: the statement timeout of its profile queries (null: the default), the
-- OpenLineage identity of its server derived from the DSN (namespace and database; no
-- credential) and the namespaces pipelines use for it under other names (a proxy).
ALTER TABLE connections
    ADD COLUMN statement_timeout_s integer CHECK (statement_timeout_s BETWEEN 1 AND 86400),
    ADD COLUMN lineage_namespace text,
    ADD COLUMN lineage_database text,
    ADD COLUMN lineage_aliases text[] NOT NULL DEFAULT '{}';

-- Reason codes of a view's own parsed lineage (dynamic_sql, unparsable, what the SQL
-- walker could not attribute): a view never has a silent empty upstream. And what the
-- source's dependency catalog says a view reads ([{schema, name}]; null where the
-- source keeps no such catalog), against which parsed table edges are checked.
ALTER TABLE datasets
    ADD COLUMN lineage_notes text[] NOT NULL DEFAULT '{}',
    ADD COLUMN view_depends_on jsonb;

-- What OpenLineage events told of each job, merged by eventTime whatever order they came
-- in (see lineage.mergeOpenLineage).
CREATE TABLE openlineage_jobs (
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    job          text NOT NULL,
    state        jsonb NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, job)
);

-- +goose Down
DROP TABLE openlineage_jobs;
ALTER TABLE datasets DROP COLUMN lineage_notes, DROP COLUMN view_depends_on;
ALTER TABLE connections DROP COLUMN statement_timeout_s, DROP COLUMN lineage_namespace,
    DROP COLUMN lineage_database, DROP COLUMN lineage_aliases;
DROP TABLE scan_failures;
ALTER TABLE dataset_profiles DROP COLUMN row_count_exact;
