-- +goose Up
-- dbt test results (POST /integrations/dbt/run-results) become rule results: each dbt
-- test is a rule of the tested model's dataset, found again by its unique_id. Such a
-- rule is never evaluated by scans (its results come from dbt runs only), so its
-- results have no scan: they carry the dbt invocation instead.
ALTER TABLE rules DROP CONSTRAINT rules_rule_type_check;
ALTER TABLE rules ADD CONSTRAINT rules_rule_type_check CHECK (rule_type IN ('not_null', 'unique', 'accepted_values', 'pattern',
    'range', 'referential', 'freshness', 'row_count_min', 'custom_sql', 'dbt_test'));
ALTER TABLE rules ADD COLUMN dbt_unique_id text;
CREATE UNIQUE INDEX rules_dbt_unique_id ON rules (workspace_id, dbt_unique_id) WHERE dbt_unique_id IS NOT NULL;

ALTER TABLE rule_results DROP CONSTRAINT rule_results_pkey;
ALTER TABLE rule_results ALTER COLUMN scan_id DROP NOT NULL;
ALTER TABLE rule_results ADD COLUMN dbt_invocation_id text;
CREATE UNIQUE INDEX rule_results_rule_scan ON rule_results (rule_id, scan_id);
ALTER TABLE rule_results ADD CONSTRAINT rule_results_origin CHECK (scan_id IS NOT NULL OR dbt_invocation_id IS NOT NULL);

-- +goose Down
ALTER TABLE rule_results DROP CONSTRAINT rule_results_origin;
DELETE FROM rule_results WHERE scan_id IS NULL;
DROP INDEX rule_results_rule_scan;
ALTER TABLE rule_results DROP COLUMN dbt_invocation_id;
ALTER TABLE rule_results ALTER COLUMN scan_id SET NOT NULL;
ALTER TABLE rule_results ADD PRIMARY KEY (rule_id, scan_id);
DROP INDEX rules_dbt_unique_id;
DELETE FROM rules WHERE dbt_unique_id IS NOT NULL;
ALTER TABLE rules DROP COLUMN dbt_unique_id;
ALTER TABLE rules DROP CONSTRAINT rules_rule_type_check;
ALTER TABLE rules ADD CONSTRAINT rules_rule_type_check CHECK (rule_type IN ('not_null', 'unique', 'accepted_values', 'pattern',
    'range', 'referential', 'freshness', 'row_count_min', 'custom_sql'));
