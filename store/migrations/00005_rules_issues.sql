-- +goose Up
-- Rules: data-quality checks per dataset, evaluated in every scan of its connection.
CREATE TABLE rules (
    id             uuid PRIMARY KEY,
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id     uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    rule_type      text NOT NULL CHECK (rule_type IN ('not_null', 'unique', 'accepted_values', 'pattern', 'range',
                                                      'referential', 'freshness', 'row_count_min', 'custom_sql')),
    name           text NOT NULL DEFAULT '',
    severity       text NOT NULL CHECK (severity IN ('critical', 'warning', 'info')),
    params         jsonb NOT NULL,
    -- The reference dataset of a referential rule, kept as a column so that a deleted
    -- dataset leaves the rule without reference (not_evaluated: reference_missing).
    ref_dataset_id uuid REFERENCES datasets(id) ON DELETE SET NULL,
    active         boolean NOT NULL DEFAULT true,
    created_by     text NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE INDEX rules_dataset ON rules (dataset_id) WHERE active;
CREATE INDEX rules_workspace ON rules (workspace_id, created_at, id);

-- One row per rule and scan that evaluated it: the newest is the rule's last_result.
-- Only counts, percentages and ages: never a value of the source.
CREATE TABLE rule_results (
    rule_id       uuid NOT NULL REFERENCES rules(id) ON DELETE CASCADE,
    scan_id       uuid NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
    workspace_id  uuid NOT NULL,
    dataset_id    uuid NOT NULL,
    status        text NOT NULL CHECK (status IN ('passed', 'failed', 'not_evaluated')),
    observed      double precision,
    threshold     double precision,
    reason_code   text,
    reason_params jsonb NOT NULL DEFAULT '{}',
    evaluated_at  timestamptz NOT NULL,
    PRIMARY KEY (rule_id, scan_id)
);
CREATE INDEX rule_results_latest ON rule_results (rule_id, evaluated_at DESC);

-- A rule has at most one current issue: open or acknowledged while the rule fails, or
-- resolved and awaiting the verification of the next scan that evaluates the rule, or
-- ignored while the rule keeps failing.
ALTER TABLE issues ADD COLUMN rule_current boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX issues_one_current_rule ON issues (rule_id) WHERE rule_current;
CREATE INDEX issues_workspace_created ON issues (workspace_id, created_at);
CREATE INDEX issues_sla_pending ON issues (workspace_id) WHERE sla_breached_at IS NULL AND status IN ('open', 'acknowledged');

-- What happened in each history row: opened, acknowledged, resolved, ignored,
-- ignored_expected, reopened, auto_resolved, verified, verification_failed, assigned,
-- rule_deleted. NULL on rows written before this column: read as opened when from_status
-- is NULL, else as the status reached.
ALTER TABLE issue_history ADD COLUMN event text;

-- Per-severity resolution targets in hours; a workspace without a row uses the defaults
-- (critical 24, warning 72); NULL switches a severity's target off.
CREATE TABLE workspace_sla_targets (
    workspace_id   uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    critical_hours integer CHECK (critical_hours BETWEEN 1 AND 8760),
    warning_hours  integer CHECK (warning_hours BETWEEN 1 AND 8760),
    updated_by     text NOT NULL,
    updated_at     timestamptz NOT NULL
);

-- Retunes of anomaly thresholds that wait for an administrator: ignoring as expected an
-- anomaly whose threshold is already at its maximum proposes to silence the metric.
CREATE TABLE anomaly_retunes (
    id             uuid PRIMARY KEY,
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id     uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    metric         text NOT NULL,
    column_name    text NOT NULL DEFAULT '',
    action         text NOT NULL CHECK (action IN ('silence')),
    from_threshold double precision NOT NULL,
    issue_id       uuid,
    status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    requested_by   text NOT NULL,
    requested_at   timestamptz NOT NULL,
    decided_by     text,
    decided_at     timestamptz
);
CREATE UNIQUE INDEX anomaly_retunes_one_pending ON anomaly_retunes (dataset_id, metric, column_name) WHERE status = 'pending';

-- The SLA clock of an issue runs while it is open or acknowledged and stops while it is
-- resolved or ignored. The status periods come from issue_history (each row starts the
-- status it reached; an issue without history is open since it was created); only rows
-- before as_of count, and the last period runs on.
--
-- vigia_issue_sla_seconds: seconds on the clock at as_of.
-- +goose StatementBegin
CREATE FUNCTION vigia_issue_sla_seconds(issue uuid, as_of timestamptz) RETURNS double precision
LANGUAGE sql STABLE AS $$
    WITH raw AS (
        SELECT id, to_status, created_at FROM issue_history WHERE issue_id = issue AND created_at < as_of
        UNION ALL
        SELECT i.id, 'open', i.created_at FROM issues i
         WHERE i.id = issue AND i.created_at < as_of AND NOT EXISTS (SELECT 1 FROM issue_history WHERE issue_id = issue)
    ), h AS (
        SELECT to_status, created_at AS start_at,
               lead(created_at) OVER (ORDER BY created_at, id) AS end_at
          FROM raw
    )
    SELECT coalesce(sum(extract(epoch FROM least(coalesce(end_at, as_of), as_of) - start_at)), 0)::double precision
      FROM h WHERE to_status IN ('open', 'acknowledged')
$$;
-- +goose StatementEnd

-- vigia_issue_sla_due: the moment the clock reached target_hours, counting only the
-- history before as_of and letting an unresolved last period run on; NULL when the
-- issue was closed before reaching it. The moment may lie after as_of.
-- +goose StatementBegin
CREATE FUNCTION vigia_issue_sla_due(issue uuid, target_hours double precision, as_of timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    WITH raw AS (
        SELECT id, to_status, created_at FROM issue_history WHERE issue_id = issue AND created_at < as_of
        UNION ALL
        SELECT i.id, 'open', i.created_at FROM issues i
         WHERE i.id = issue AND i.created_at < as_of AND NOT EXISTS (SELECT 1 FROM issue_history WHERE issue_id = issue)
    ), h AS (
        SELECT id, to_status, created_at AS start_at,
               lead(created_at) OVER (ORDER BY created_at, id) AS end_at
          FROM raw
    ), p AS (
        SELECT start_at, end_at,
               coalesce(sum(extract(epoch FROM end_at - start_at)) OVER (ORDER BY start_at, id
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before_s
          FROM h WHERE to_status IN ('open', 'acknowledged')
    )
    SELECT start_at + make_interval(secs => target_hours * 3600 - before_s)
      FROM p
     WHERE target_hours IS NOT NULL
       AND (end_at IS NULL OR target_hours * 3600 - before_s <= extract(epoch FROM end_at - start_at))
     ORDER BY start_at
     LIMIT 1
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION vigia_issue_sla_due(uuid, double precision, timestamptz);
DROP FUNCTION vigia_issue_sla_seconds(uuid, timestamptz);
DROP TABLE anomaly_retunes;
DROP TABLE workspace_sla_targets;
ALTER TABLE issue_history DROP COLUMN event;
DROP INDEX issues_sla_pending;
DROP INDEX issues_workspace_created;
DROP INDEX issues_one_current_rule;
ALTER TABLE issues DROP COLUMN rule_current;
DROP TABLE rule_results;
DROP TABLE rules;
