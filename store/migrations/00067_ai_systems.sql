-- +goose Up
-- The AI-system register of the EU AI Act dossiers (issue 17): systems registered by a
-- person, with the datasets they train on or retrieve from. Systems known only through
-- their consumers (domain consumers of kind ai_system, reads recorded for purposes treino
-- and rag) are derived when read and are not stored here.
CREATE TABLE ai_systems (
    id               uuid PRIMARY KEY,
    workspace_id     uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name             text NOT NULL,
    intended_purpose text NOT NULL DEFAULT '',
    provider         text NOT NULL DEFAULT '',
    risk_category    text NOT NULL DEFAULT 'unknown' CHECK (risk_category IN ('high', 'limited', 'minimal', 'unknown')),
    created_by       text NOT NULL,
    created_at       timestamptz NOT NULL
);
CREATE UNIQUE INDEX ai_systems_name ON ai_systems (workspace_id, lower(name));

CREATE TABLE ai_system_datasets (
    system_id    uuid NOT NULL REFERENCES ai_systems(id) ON DELETE CASCADE,
    dataset_id   uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL,
    use          text NOT NULL CHECK (use IN ('training', 'validation', 'testing', 'retrieval', 'input')),
    PRIMARY KEY (system_id, dataset_id, use)
);
CREATE INDEX ai_system_datasets_dataset ON ai_system_datasets (dataset_id);

-- +goose Down
DROP TABLE ai_system_datasets;
DROP TABLE ai_systems;
