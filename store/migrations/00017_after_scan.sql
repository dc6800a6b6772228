-- +goose Up
-- The after-scan steps (lineage re-derivation, incident grouping, domain verdict events)
-- consume the scan.succeeded event a succeeded scan writes to the events outbox in the
-- transaction that marks it succeeded. One row per event and consumer that processed
-- it; the event's dispatched_at is set when every consumer has (or they were given up).
CREATE TABLE event_consumers (
    event_id    uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    consumer    text NOT NULL,
    consumed_at timestamptz NOT NULL,
    PRIMARY KEY (event_id, consumer)
);
CREATE INDEX events_scan_succeeded ON events (workspace_id, (payload->>'connection_id'), created_at, id)
    WHERE type = 'scan.succeeded' AND dispatched_at IS NULL;
CREATE INDEX events_scan ON events (scan_id) WHERE scan_id IS NOT NULL;

-- +goose Down
DROP INDEX events_scan;
DROP INDEX events_scan_succeeded;
DROP TABLE event_consumers;
