-- +goose Up
-- Duplicate clusters (package duplicates): records of one entity within and across the
-- tables of a connection, replaced after each scan of the connection. A member names its
-- dataset and row key only, never other values.
CREATE TABLE duplicate_clusters (
    id                  uuid PRIMARY KEY,
    workspace_id        uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    connection_id       uuid NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    confidence          double precision NOT NULL CHECK (confidence > 0 AND confidence <= 1),
    band                text NOT NULL CHECK (band IN ('exact', 'high', 'low')),
    reference_precision double precision,
    matched_on          text[] NOT NULL DEFAULT '{}',
    computed_at         timestamptz NOT NULL
);
CREATE INDEX duplicate_clusters_workspace ON duplicate_clusters (workspace_id, confidence DESC, id);
CREATE INDEX duplicate_clusters_connection ON duplicate_clusters (connection_id);

CREATE TABLE duplicate_members (
    cluster_id  uuid NOT NULL REFERENCES duplicate_clusters(id) ON DELETE CASCADE,
    dataset_id  uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    row_key     text NOT NULL,
    confidence  double precision NOT NULL,
    PRIMARY KEY (cluster_id, dataset_id, row_key)
);
CREATE INDEX duplicate_members_dataset ON duplicate_members (dataset_id);

-- +goose Down
DROP TABLE duplicate_members;
DROP TABLE duplicate_clusters;
