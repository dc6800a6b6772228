-- +goose Up
-- Usage: the source's own scan counter of a table at each scan; queries_per_day is the
-- delta between two scans per day elapsed, null while unknown (first scan, or a source
-- without counters such as SQLite).
ALTER TABLE datasets
    ADD COLUMN usage_reads    bigint,
    ADD COLUMN usage_reads_at timestamptz,
    ALTER COLUMN queries_per_day DROP NOT NULL,
    ALTER COLUMN queries_per_day DROP DEFAULT;
UPDATE datasets SET queries_per_day = NULL;

-- +goose Down
UPDATE datasets SET queries_per_day = 0 WHERE queries_per_day IS NULL;
ALTER TABLE datasets DROP COLUMN usage_reads, DROP COLUMN usage_reads_at,
    ALTER COLUMN queries_per_day SET NOT NULL, ALTER COLUMN queries_per_day SET DEFAULT 0;
