-- +goose Up
-- A scan's saved results by scan (issue 20, S5): a re-run reads which datasets the scan
-- already saved in one statement, and deleting a scan finds its profiles without
-- reading every profile.
CREATE INDEX dataset_profiles_scan ON dataset_profiles (scan_id);

-- +goose Down
DROP INDEX dataset_profiles_scan;
