-- +goose Up
-- Suggestions (package suggest): one per dataset and signature (parse_standardize:<col>,
-- not_null:<col>), open, accepted or dismissed; rehearsal is the last rehearsal's counts,
-- status and actor only (never values or SQL).
CREATE TABLE suggestions (
    id                    uuid PRIMARY KEY,
    workspace_id          uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id            uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    category              text NOT NULL,
    signature             text NOT NULL,
    column_name           text NOT NULL DEFAULT '',
    status                text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'dismissed')),
    params                jsonb NOT NULL DEFAULT '{}',
    estimated_rows_sample bigint,
    rule_id               uuid,
    rehearsal             jsonb,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    UNIQUE (dataset_id, signature)
);
CREATE INDEX suggestions_workspace ON suggestions (workspace_id, category, created_at DESC);

-- +goose Down
DROP TABLE suggestions;
