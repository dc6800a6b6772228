-- +goose Up
-- Declared foreign keys read by discovery (Postgres pg_constraint, MySQL/MariaDB
-- KEY_COLUMN_USAGE, SQLite pragma_foreign_key_list), replaced at each sync of the
-- connection's datasets. The referenced dataset is found by name within the connection
-- when read. Join paths, not lineage.
CREATE TABLE dataset_foreign_keys (
    dataset_id      uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    position        integer NOT NULL,
    constraint_name text NOT NULL,
    columns         text[] NOT NULL,
    ref_schema      text NOT NULL,
    ref_table       text NOT NULL,
    ref_columns     text[] NOT NULL,
    PRIMARY KEY (dataset_id, position)
);
CREATE INDEX dataset_foreign_keys_ref ON dataset_foreign_keys (ref_schema, ref_table);

-- indexed: the column leads an index of the table (primary key and unique ones included),
-- for the modeling check unindexed_key.
ALTER TABLE dataset_columns ADD COLUMN indexed boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE dataset_columns DROP COLUMN indexed;
DROP TABLE dataset_foreign_keys;
