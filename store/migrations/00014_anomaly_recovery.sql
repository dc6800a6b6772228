-- +goose Up
-- Anomaly issues remember the band their metric was judged against when they opened and
-- count the consecutive scans that found the metric back inside it: after
-- quality.RecoveryScans of them the scan resolves the issue. NULL band: an issue opened
-- before bands were kept (it recovers when its metric is judged and not flagged).
ALTER TABLE issues ADD COLUMN band jsonb, ADD COLUMN clean_scans integer NOT NULL DEFAULT 0;

-- Signals say what flagged them (robust_z, gross_change), their severity and, for a value
-- measured on a sample, its 95% interval; lists filter them by dataset and period.
ALTER TABLE signals ADD COLUMN method text NOT NULL DEFAULT '', ADD COLUMN severity text,
    ADD COLUMN ci95_low double precision, ADD COLUMN ci95_high double precision;
CREATE INDEX signals_dataset ON signals (dataset_id, created_at DESC);

-- +goose Down
DROP INDEX signals_dataset;
ALTER TABLE signals DROP COLUMN method, DROP COLUMN severity, DROP COLUMN ci95_low, DROP COLUMN ci95_high;
ALTER TABLE issues DROP COLUMN band, DROP COLUMN clean_scans;
