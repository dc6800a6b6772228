-- +goose Up
-- A failing or late writer past a threshold opens a pipeline issue on the dataset it
-- writes: at most one open per dataset and pipeline (details.pipeline_key =
-- orchestrator:pipeline).
CREATE UNIQUE INDEX issues_one_open_pipeline ON issues (dataset_id, (details->>'pipeline_key'))
    WHERE type = 'pipeline' AND status IN ('open', 'acknowledged');

-- +goose Down
DROP INDEX issues_one_open_pipeline;
