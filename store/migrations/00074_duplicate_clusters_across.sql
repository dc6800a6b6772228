-- +goose Up
-- Duplicate clusters across the workspace's connections (issue 18): scope workspace, no
-- connection; replaced after each scan of any of the workspace's connections. Members
-- still name datasets and row keys only.
ALTER TABLE duplicate_clusters ALTER COLUMN connection_id DROP NOT NULL;
ALTER TABLE duplicate_clusters ADD COLUMN scope text NOT NULL DEFAULT 'connection'
    CHECK (scope IN ('connection', 'workspace'));
ALTER TABLE duplicate_clusters ADD CONSTRAINT duplicate_clusters_scope_connection
    CHECK ((scope = 'connection') = (connection_id IS NOT NULL));

-- +goose Down
DELETE FROM duplicate_clusters WHERE scope = 'workspace';
ALTER TABLE duplicate_clusters DROP CONSTRAINT duplicate_clusters_scope_connection;
ALTER TABLE duplicate_clusters DROP COLUMN scope;
ALTER TABLE duplicate_clusters ALTER COLUMN connection_id SET NOT NULL;
