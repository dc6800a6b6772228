-- +goose Up
-- The editor resolves table references as one types (GET /ide/resolve): datasets by
-- table and schema name, ignoring case.
CREATE INDEX datasets_lower_name ON datasets (workspace_id, lower(table_name), lower(schema_name)) WHERE dropped_at IS NULL;

-- +goose Down
DROP INDEX datasets_lower_name;
