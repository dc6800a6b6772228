-- +goose Up
-- Label quality (package labelquality): a dataset's label configuration and the last
-- analysis' counts (never values).
CREATE TABLE label_quality (
    dataset_id      uuid PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
    workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    label_column    text NOT NULL,
    feature_columns text[] NOT NULL DEFAULT '{}',
    updated_by      text NOT NULL,
    updated_at      timestamptz NOT NULL,
    last_result     jsonb
);
CREATE INDEX label_quality_workspace ON label_quality (workspace_id);

-- Blackout windows of a connection (package blackout): periods when Vigia sends the
-- source no rehearsal (suggest: blocked, reason blackout).
CREATE TABLE connection_blackouts (
    connection_id uuid NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    position      integer NOT NULL,
    starts_at     timestamptz NOT NULL,
    ends_at       timestamptz NOT NULL CHECK (ends_at > starts_at),
    note          text NOT NULL DEFAULT '',
    PRIMARY KEY (connection_id, position)
);

-- +goose Down
DROP TABLE connection_blackouts;
DROP TABLE label_quality;
