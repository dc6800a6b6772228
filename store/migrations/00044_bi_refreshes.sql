-- +goose Up
-- Refreshes reported by BI tools (POST /bi/refreshes): one row per tool, BI dataset and
-- refresh id (a later report of the same refresh replaces it), with the warehouse
-- datasets the BI dataset reads and the dashboards built on it. A failed or late
-- refresh opens the BI dataset's one bi_refresh issue (on the first dataset it reads).
CREATE TABLE bi_refreshes (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    tool            text NOT NULL CHECK (tool IN ('powerbi', 'tableau', 'looker', 'metabase', 'other')),
    bi_dataset_id   text NOT NULL,
    bi_dataset_name text NOT NULL,
    refresh_id      text NOT NULL,
    status          text NOT NULL CHECK (status IN ('running', 'success', 'failed')),
    started_at      timestamptz NOT NULL,
    ended_at        timestamptz,
    dashboards      jsonb NOT NULL DEFAULT '[]',
    unmatched       text[] NOT NULL DEFAULT '{}',
    received_at     timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (workspace_id, tool, bi_dataset_id, refresh_id)
);
CREATE INDEX bi_refreshes_recent ON bi_refreshes (workspace_id, started_at DESC, id);
CREATE INDEX bi_refreshes_bi_dataset ON bi_refreshes (workspace_id, tool, bi_dataset_id, started_at DESC);

CREATE TABLE bi_refresh_datasets (
    refresh_id uuid NOT NULL REFERENCES bi_refreshes(id) ON DELETE CASCADE,
    dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    position   integer NOT NULL,
    PRIMARY KEY (refresh_id, dataset_id)
);
CREATE INDEX bi_refresh_datasets_dataset ON bi_refresh_datasets (dataset_id);

-- At most one open bi_refresh issue per BI dataset (details.bi_key = tool:bi_dataset_id).
CREATE UNIQUE INDEX issues_one_open_bi_refresh ON issues (workspace_id, (details->>'bi_key'))
    WHERE type = 'bi_refresh' AND status IN ('open', 'acknowledged');

-- +goose Down
DROP INDEX issues_one_open_bi_refresh;
DROP TABLE bi_refresh_datasets;
DROP TABLE bi_refreshes;
