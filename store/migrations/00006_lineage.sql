-- +goose Up
-- Lineage: the record (edges with their origin and column map, exposures), the outbox
-- that feeds the graph backend, the pggraph projection, reach counts, incidents and
-- knowledge-graph snapshots.

-- Exposures: dashboards, ML models, applications and destinations outside the
-- warehouse that read datasets (declared, dbt or openlineage).
CREATE TABLE lineage_exposures (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         text NOT NULL,
    type         text NOT NULL,
    url          text NOT NULL DEFAULT '',
    owner        text NOT NULL DEFAULT '',
    origin       text NOT NULL,             -- declared, dbt, openlineage
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, type, name)
);

-- Lineage edges between graph nodes (a dataset id, or exposure:<id>), one per
-- source, target and kind. column_map: [{from, to, direct}].
CREATE TABLE lineage_edges (
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    source_id    text NOT NULL,
    target_id    text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('parsed', 'declared', 'dbt', 'openlineage', 'inferred')),
    origin       text NOT NULL DEFAULT '',
    column_map   jsonb NOT NULL DEFAULT '[]',
    column_level boolean NOT NULL DEFAULT true,
    linking_column text NOT NULL DEFAULT '',
    notes        text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, source_id, target_id, kind)
);
CREATE INDEX lineage_edges_target ON lineage_edges (workspace_id, target_id);

-- The outbox: every change of the record above adds a row in the same transaction; the
-- projector applies rows to the graph backend in id order and deletes them.
CREATE TABLE lineage_outbox (
    id           bigserial PRIMARY KEY,
    workspace_id uuid NOT NULL,
    change       jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lineage_outbox_workspace ON lineage_outbox (workspace_id, id);

-- The pggraph backend: the projection, in the same database.
CREATE TABLE pggraph_nodes (
    workspace_id uuid NOT NULL,
    id           text NOT NULL,
    kind         text NOT NULL,
    name         text NOT NULL DEFAULT '',
    type         text NOT NULL DEFAULT '',
    PRIMARY KEY (workspace_id, id)
);
CREATE TABLE pggraph_edges (
    workspace_id uuid NOT NULL,
    source_id    text NOT NULL,
    target_id    text NOT NULL,
    kind         text NOT NULL,
    origin       text NOT NULL DEFAULT '',
    column_map   jsonb NOT NULL DEFAULT '[]',
    column_level boolean NOT NULL DEFAULT true,
    linking_column text NOT NULL DEFAULT '',
    PRIMARY KEY (workspace_id, source_id, target_id, kind)
);
CREATE INDEX pggraph_edges_target ON pggraph_edges (workspace_id, target_id);

-- Downstream reach of each dataset (datasets at any distance), recomputed by the
-- projector; GET /datasets?sort=impact orders by it.
CREATE TABLE dataset_reach (
    dataset_id   uuid PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL,
    reach        integer NOT NULL DEFAULT 0
);
CREATE INDEX dataset_reach_workspace ON dataset_reach (workspace_id, reach DESC);

-- Incidents: open issues of lineage-connected datasets, grouped at the end of each scan.
CREATE TABLE incidents (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    root_dataset_id uuid REFERENCES datasets(id) ON DELETE SET NULL,
    severity        text NOT NULL,
    issue_ids       uuid[] NOT NULL,
    dataset_ids     uuid[] NOT NULL,
    scan_id         uuid,
    impact          jsonb NOT NULL,          -- lineage.BlastRadius, unmasked
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    resolved_at     timestamptz
);
CREATE INDEX incidents_workspace ON incidents (workspace_id, status, updated_at DESC);
CREATE INDEX incidents_issues ON incidents USING gin (issue_ids);

-- Knowledge-graph snapshots (at most 90 per workspace are kept).
CREATE TABLE graph_snapshots (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    trigger      text NOT NULL,              -- scan, manual
    scan_id      uuid,
    digest       text NOT NULL,
    nodes_count  integer NOT NULL,
    edges_count  integer NOT NULL,
    body         jsonb NOT NULL,             -- {nodes, edges}
    created_at   timestamptz NOT NULL
);
CREATE INDEX graph_snapshots_workspace ON graph_snapshots (workspace_id, created_at DESC);

-- +goose Down
DROP TABLE graph_snapshots;
DROP TABLE incidents;
DROP TABLE dataset_reach;
DROP TABLE pggraph_edges;
DROP TABLE pggraph_nodes;
DROP TABLE lineage_outbox;
DROP TABLE lineage_edges;
DROP TABLE lineage_exposures;
