-- +goose Up
-- Scan schedules are read in the connection's time zone (scan_timezone, UTC by default).
ALTER TABLE connections
    ADD COLUMN schedule_enabled  boolean NOT NULL DEFAULT false,
    ADD COLUMN schedule_hour     integer CHECK (schedule_hour BETWEEN 0 AND 23),
    ADD COLUMN schedule_minute   integer NOT NULL DEFAULT 0 CHECK (schedule_minute BETWEEN 0 AND 59),
    ADD COLUMN last_scheduled_on date,
    ADD COLUMN engineering_opt_in boolean NOT NULL DEFAULT false;

CREATE TABLE scans (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    connection_id   uuid NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    status          text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    trigger         text NOT NULL DEFAULT 'manual',
    requested_by    text NOT NULL DEFAULT '',
    job_id          text,
    attempt         integer NOT NULL DEFAULT 0,
    datasets_total  integer NOT NULL DEFAULT 0,
    datasets_done   integer NOT NULL DEFAULT 0,
    datasets_failed integer NOT NULL DEFAULT 0,
    current_dataset text,
    error_code      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz
);
CREATE INDEX scans_workspace ON scans (workspace_id, created_at DESC);
CREATE INDEX scans_connection ON scans (connection_id, created_at DESC);

-- One row per dataset and finished profile: written with its score, verdict and issues
-- in one transaction, so a killed scan never leaves a partial profile.
CREATE TABLE dataset_profiles (
    dataset_id        uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    scan_id           uuid NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
    workspace_id      uuid NOT NULL,
    seq               integer NOT NULL,       -- the dataset's n-th profile
    row_count         bigint NOT NULL,
    depth             text NOT NULL,
    sample_size       integer NOT NULL DEFAULT 0,
    columns           jsonb NOT NULL,         -- column shapes and profiles (counts, stats, masks)
    metrics           jsonb NOT NULL,         -- per metric and column, for anomaly history
    latest_timestamp  timestamptz,
    freshness_column  text,
    duration_ms       integer NOT NULL DEFAULT 0,
    profiled_at       timestamptz NOT NULL,
    PRIMARY KEY (dataset_id, scan_id)
);
CREATE INDEX dataset_profiles_seq ON dataset_profiles (dataset_id, seq DESC);

CREATE TABLE scores (
    dataset_id   uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    scan_id      uuid NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL,
    seq          integer NOT NULL,
    score        double precision,
    detail       jsonb NOT NULL,              -- the whole quality.Score
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (dataset_id, scan_id)
);
CREATE INDEX scores_seq ON scores (dataset_id, seq DESC);

CREATE TABLE verdicts (
    dataset_id    uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    scan_id       uuid NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
    workspace_id  uuid NOT NULL,
    seq           integer NOT NULL,
    verdict       text NOT NULL CHECK (verdict IN ('pass', 'warn', 'fail', 'unknown')),
    detail        jsonb NOT NULL,             -- failing rules and reasons
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (dataset_id, scan_id)
);
CREATE INDEX verdicts_seq ON verdicts (dataset_id, seq DESC);

CREATE TABLE issues (
    id                uuid PRIMARY KEY,
    workspace_id      uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id        uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    type              text NOT NULL,
    subtype           text,
    severity          text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
    status            text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'resolved', 'ignored')),
    title             text NOT NULL,
    title_key         text NOT NULL DEFAULT '',
    title_params      jsonb NOT NULL DEFAULT '{}',
    metric            text NOT NULL DEFAULT '',
    column_name       text NOT NULL DEFAULT '',
    rule_id           uuid,
    structural        boolean NOT NULL DEFAULT false,
    details           jsonb NOT NULL DEFAULT '{}',
    first_scan_id     uuid,
    last_scan_id      uuid,
    last_detected_seq integer NOT NULL DEFAULT 0,  -- the dataset profile seq of the last detection
    detections        integer NOT NULL DEFAULT 1,
    resolution_reason text CHECK (resolution_reason IN ('expected')),
    assignee_team_id  uuid REFERENCES teams(id) ON DELETE SET NULL,
    sla_breached_at   timestamptz,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    acknowledged_at   timestamptz,
    resolved_at       timestamptz
);
CREATE INDEX issues_workspace ON issues (workspace_id, status, created_at DESC);
CREATE INDEX issues_dataset ON issues (dataset_id, status);
-- One open anomaly per dataset, metric and column.
CREATE UNIQUE INDEX issues_one_open_anomaly ON issues (dataset_id, metric, column_name)
    WHERE type = 'anomaly' AND status IN ('open', 'acknowledged');

-- Every status change of an issue, with its origin (scan, user:<id>, ticket:<provider>:<key>).
CREATE TABLE issue_history (
    id           uuid PRIMARY KEY,
    issue_id     uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL,
    from_status  text,
    to_status    text NOT NULL,
    origin       text NOT NULL,
    note         text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL
);
CREATE INDEX issue_history_issue ON issue_history (issue_id, created_at);

CREATE TABLE schema_changes (
    id                   uuid PRIMARY KEY,
    workspace_id         uuid NOT NULL,
    dataset_id           uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    scan_id              uuid NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
    change               text NOT NULL CHECK (change IN ('add', 'drop', 'type_change')),
    column_name          text NOT NULL,
    from_type            text,
    to_type              text,
    suggested_rename_to  text,
    issue_id             uuid,
    created_at           timestamptz NOT NULL
);
CREATE INDEX schema_changes_dataset ON schema_changes (dataset_id, created_at DESC);

-- Signals: what each scan measured against the dataset's own history (anomaly checks),
-- whether or not it opened an issue.
CREATE TABLE signals (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL,
    dataset_id   uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    scan_id      uuid NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
    kind         text NOT NULL,            -- anomaly, schema_drift, freshness
    metric       text NOT NULL,
    column_name  text NOT NULL DEFAULT '',
    observed     double precision,
    baseline     double precision,
    z            double precision,
    threshold    double precision,
    anomalous    boolean NOT NULL,
    issue_id     uuid,
    created_at   timestamptz NOT NULL
);
CREATE INDEX signals_workspace ON signals (workspace_id, created_at DESC);

-- Every statement sent to a source, normalized (no values).
CREATE TABLE source_query_log (
    id            bigserial PRIMARY KEY,
    workspace_id  uuid NOT NULL,
    connection_id uuid NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    scan_id       uuid,
    operation     text NOT NULL,           -- scan, discover, test
    statement     text NOT NULL,
    duration_ms   double precision NOT NULL,
    rows          bigint NOT NULL DEFAULT 0,
    endpoint      text NOT NULL DEFAULT 'primary',
    failed        boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL
);
CREATE INDEX source_query_log_connection ON source_query_log (connection_id, created_at DESC);

-- Anomaly thresholds tuned by "ignore as expected".
CREATE TABLE anomaly_tuning (
    dataset_id  uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    metric      text NOT NULL,
    column_name text NOT NULL DEFAULT '',
    threshold   double precision NOT NULL,
    ignored     integer NOT NULL DEFAULT 0,
    resolved    integer NOT NULL DEFAULT 0,
    silenced    boolean NOT NULL DEFAULT false,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (dataset_id, metric, column_name)
);

-- The outbox of state events (verdict changes, SLA breaches...): written in the same
-- transaction as the change; the webhook dispatcher turns rows into deliveries.
CREATE TABLE events (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    type            text NOT NULL,
    subject_type    text NOT NULL,
    subject_id      text NOT NULL,
    scan_id         uuid,
    idempotency_key text NOT NULL,
    payload         jsonb NOT NULL,
    created_at      timestamptz NOT NULL,
    dispatched_at   timestamptz
);
CREATE UNIQUE INDEX events_idempotency ON events (workspace_id, idempotency_key);
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;

-- +goose Down
DROP TABLE events;
DROP TABLE anomaly_tuning;
DROP TABLE source_query_log;
DROP TABLE signals;
DROP TABLE schema_changes;
DROP TABLE issue_history;
DROP TABLE issues;
DROP TABLE verdicts;
DROP TABLE scores;
DROP TABLE dataset_profiles;
DROP TABLE scans;
ALTER TABLE connections DROP COLUMN schedule_enabled, DROP COLUMN schedule_hour, DROP COLUMN schedule_minute,
    DROP COLUMN last_scheduled_on, DROP COLUMN engineering_opt_in;
