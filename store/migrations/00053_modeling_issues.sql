-- +goose Up
-- Modeling issues (package modeling): at most one open (or acknowledged) issue per
-- dataset and check (the subtype). slo_breach issues: one per dataset and dimension.
CREATE UNIQUE INDEX issues_one_open_modeling ON issues (dataset_id, subtype)
    WHERE type = 'modeling' AND status IN ('open', 'acknowledged');
CREATE UNIQUE INDEX issues_one_open_slo_breach ON issues (dataset_id, (details->>'dimension'))
    WHERE type = 'slo_breach' AND status IN ('open', 'acknowledged');

-- +goose Down
DROP INDEX issues_one_open_slo_breach;
DROP INDEX issues_one_open_modeling;
