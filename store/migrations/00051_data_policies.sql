-- +goose Up
-- Data policies (issue 17): the workspace's policy and each domain's (a domain's rule
-- replaces the workspace's rule of the same key for the domain's datasets), and the
-- violations the after-scan consumer "policies" opens and resolves.
CREATE TABLE data_policies (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    domain_id    uuid REFERENCES domains(id) ON DELETE CASCADE,
    rules        jsonb NOT NULL DEFAULT '[]',
    updated_by   text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX data_policies_workspace ON data_policies (workspace_id) WHERE domain_id IS NULL;
CREATE UNIQUE INDEX data_policies_domain ON data_policies (domain_id) WHERE domain_id IS NOT NULL;

CREATE TABLE policy_violations (
    id               uuid PRIMARY KEY,
    workspace_id     uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id       uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    rule             text NOT NULL,
    source           text NOT NULL,               -- workspace or domain:<name>
    severity         text NOT NULL CHECK (severity IN ('warning', 'critical')),
    details          jsonb NOT NULL DEFAULT '{}', -- column names and ages, never values
    issue_id         uuid REFERENCES issues(id) ON DELETE SET NULL,
    opened_scan_id   uuid,
    resolved_scan_id uuid,
    opened_at        timestamptz NOT NULL,
    resolved_at      timestamptz
);
CREATE UNIQUE INDEX policy_violations_active ON policy_violations (dataset_id, rule) WHERE resolved_at IS NULL;
CREATE INDEX policy_violations_workspace ON policy_violations (workspace_id, opened_at DESC);

-- +goose Down
DROP TABLE policy_violations;
DROP TABLE data_policies;
