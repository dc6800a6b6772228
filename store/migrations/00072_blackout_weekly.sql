-- +goose Up
-- Weekly blackout windows (package blackout): days of the week (0 = Sunday), a local
-- start and end (minutes since midnight; an end at or before the start ends the next
-- day) in an IANA zone. An absolute window keeps starts_at and ends_at; a weekly one has
-- them NULL (its occurrences are computed when read).
ALTER TABLE connection_blackouts
    ALTER COLUMN starts_at DROP NOT NULL,
    ALTER COLUMN ends_at DROP NOT NULL,
    ADD COLUMN weekdays     smallint[],
    ADD COLUMN start_minute smallint CHECK (start_minute BETWEEN 0 AND 1439),
    ADD COLUMN end_minute   smallint CHECK (end_minute BETWEEN 0 AND 1439),
    ADD COLUMN timezone     text,
    ADD CONSTRAINT connection_blackouts_kind CHECK (
        (weekdays IS NULL AND starts_at IS NOT NULL AND ends_at IS NOT NULL)
        OR (weekdays IS NOT NULL AND starts_at IS NULL AND ends_at IS NULL AND start_minute IS NOT NULL
            AND end_minute IS NOT NULL AND start_minute <> end_minute AND timezone IS NOT NULL));

-- +goose Down
DELETE FROM connection_blackouts WHERE weekdays IS NOT NULL;
ALTER TABLE connection_blackouts
    DROP CONSTRAINT connection_blackouts_kind,
    DROP COLUMN timezone,
    DROP COLUMN end_minute,
    DROP COLUMN start_minute,
    DROP COLUMN weekdays,
    ALTER COLUMN ends_at SET NOT NULL,
    ALTER COLUMN starts_at SET NOT NULL;
