-- +goose Up
-- Label quality after scans (package labelquality, consumer "labels"): the scan whose
-- after-scan analysis the stored result is, so that a retried consumer does not read the
-- source again. A configuration change or a session's run clears it.
ALTER TABLE label_quality ADD COLUMN last_scan_id uuid;

-- +goose Down
ALTER TABLE label_quality DROP COLUMN last_scan_id;
