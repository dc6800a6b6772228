-- +goose Up
CREATE TABLE workspaces (
    id           uuid PRIMARY KEY,
    name         text NOT NULL UNIQUE,
    data_country text NOT NULL DEFAULT 'PT',
    locale       text,                        -- null: not set (effective default pt-PT)
    timezone     text NOT NULL DEFAULT 'Europe/Lisbon',
    suspended    boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    email        text NOT NULL,
    role         text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    locale       text,
    timezone     text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, email)
);

CREATE TABLE teams (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);

CREATE TABLE team_members (
    team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, user_id)
);

-- Session and API tokens: only the SHA-256 of the secret is kept.
CREATE TABLE sessions (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);

CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         text NOT NULL,
    token_hash   bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_workspace ON api_tokens (workspace_id);

-- The workspace activity log (audit trail).
CREATE TABLE activity_log (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    actor        text NOT NULL,
    action       text NOT NULL,
    subject_type text NOT NULL,
    subject_id   text NOT NULL,
    details      jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX activity_log_workspace ON activity_log (workspace_id, created_at DESC);

CREATE TABLE connections (
    id             uuid PRIMARY KEY,
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name           text NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('postgres', 'mysql', 'sqlite')),
    dsn_encrypted  bytea NOT NULL,            -- AES-GCM with VIGIA_SECRET_KEY
    data_country   text,                      -- null: inherited from the workspace
    scan_timezone  text NOT NULL DEFAULT 'UTC',
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);

CREATE TABLE datasets (
    id             uuid PRIMARY KEY,
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    connection_id  uuid NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    schema_name    text NOT NULL,
    table_name     text NOT NULL,
    kind           text NOT NULL DEFAULT 'table'
                   CHECK (kind IN ('table', 'view', 'materialized_view', 'external', 'unknown')),
    depth          text CHECK (depth IN ('basic', 'standard', 'deep')), -- null: default
    data_country   text,
    view_definition text,
    latest_score   double precision,
    queries_per_day double precision NOT NULL DEFAULT 0,
    last_scan_at   timestamptz,
    dropped_at     timestamptz,               -- no longer found by discovery
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (connection_id, schema_name, table_name)
);
CREATE INDEX datasets_workspace_name ON datasets (workspace_id, schema_name, table_name);

CREATE TABLE dataset_columns (
    dataset_id   uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name         text NOT NULL,
    position     integer NOT NULL,
    data_type    text NOT NULL,
    class        text NOT NULL DEFAULT 'other',
    nullable     boolean NOT NULL DEFAULT true,
    primary_key  boolean NOT NULL DEFAULT false,
    partition    boolean NOT NULL DEFAULT false,
    clustering   boolean NOT NULL DEFAULT false,
    profile      jsonb,                       -- last profile of the column (counts, stats, masks)
    PRIMARY KEY (dataset_id, name)
);

-- +goose Down
DROP TABLE dataset_columns;
DROP TABLE datasets;
DROP TABLE connections;
DROP TABLE activity_log;
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE team_members;
DROP TABLE teams;
DROP TABLE users;
DROP TABLE workspaces;
