-- +goose Up
-- A late or failing writer becomes a signal of the datasets it writes, with no scan:
-- source says who raised a signal (scan, or orchestrator for pipeline health), scan_id
-- is set exactly for scan signals, and a pipeline signal names its writer and run.
-- signal_key makes a pipeline signal once per failed run or missed run
-- (orchestrator:pipeline:failing|late:run_id), whatever how often the writers are judged.
ALTER TABLE signals ALTER COLUMN scan_id DROP NOT NULL,
    ADD COLUMN source text NOT NULL DEFAULT 'scan',
    ADD COLUMN orchestrator text,
    ADD COLUMN pipeline text,
    ADD COLUMN run_id text,
    ADD COLUMN signal_key text,
    ADD CONSTRAINT signals_source_scan CHECK ((source = 'scan') = (scan_id IS NOT NULL)),
    ADD CONSTRAINT signals_pipeline_named CHECK (source <> 'orchestrator' OR (orchestrator IS NOT NULL AND pipeline IS NOT NULL AND run_id IS NOT NULL));
CREATE UNIQUE INDEX signals_one_per_key ON signals (dataset_id, signal_key) WHERE signal_key IS NOT NULL;

-- +goose Down
DROP INDEX signals_one_per_key;
DELETE FROM signals WHERE scan_id IS NULL;
ALTER TABLE signals DROP CONSTRAINT signals_pipeline_named, DROP CONSTRAINT signals_source_scan,
    DROP COLUMN signal_key, DROP COLUMN run_id, DROP COLUMN pipeline, DROP COLUMN orchestrator, DROP COLUMN source,
    ALTER COLUMN scan_id SET NOT NULL;
