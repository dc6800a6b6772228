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

-- +goose Down
DROP TABLE label_quality;
