-- +goose Up
-- Column sensitivity set by people (package sensitivity): the level a session chose for
-- a column, overriding the automatic one, and the trail of every change (who, when, from,
-- to). Automatic levels and lineage-inherited suggestions are computed on read.
CREATE TABLE column_sensitivity (
    dataset_id  uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    column_name text NOT NULL,
    level       text NOT NULL CHECK (level IN ('public', 'internal', 'confidential', 'pii')),
    author_id   text NOT NULL,
    set_at      timestamptz NOT NULL,
    PRIMARY KEY (dataset_id, column_name)
);

CREATE TABLE column_sensitivity_trail (
    id          bigserial PRIMARY KEY,
    dataset_id  uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    column_name text NOT NULL,
    from_level  text,               -- null: the automatic level was in force
    to_level    text NOT NULL,      -- a level, or auto (the manual level was removed)
    author_id   text NOT NULL,
    at          timestamptz NOT NULL
);
CREATE INDEX column_sensitivity_trail_dataset ON column_sensitivity_trail (dataset_id, id);

-- +goose Down
DROP TABLE column_sensitivity_trail;
DROP TABLE column_sensitivity;
