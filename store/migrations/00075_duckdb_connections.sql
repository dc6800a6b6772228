-- +goose Up
-- Connections of kind duckdb: a DuckDB database file or a directory of Parquet, CSV and JSON
-- files under VIGIA_FILES_ROOT (the connector is built with the duckdb build tag).
ALTER TABLE connections DROP CONSTRAINT connections_kind_check;
ALTER TABLE connections ADD CONSTRAINT connections_kind_check CHECK (kind IN ('postgres', 'mysql', 'sqlite', 'duckdb'));

-- +goose Down
ALTER TABLE connections DROP CONSTRAINT connections_kind_check;
ALTER TABLE connections ADD CONSTRAINT connections_kind_check CHECK (kind IN ('postgres', 'mysql', 'sqlite'));
