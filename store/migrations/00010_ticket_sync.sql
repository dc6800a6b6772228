-- +goose Up
-- Ticket polling and write-back (package webhook, docs/webhooks.md "Inbound ticket
-- events"): an integration's sealed API credentials, its polling state and back-off, each
-- link's place in the polling queue, and the write-back outbox.
ALTER TABLE ticket_integrations
    ADD COLUMN credentials_sealed bytea,             -- null: no polling, no write-back
    ADD COLUMN last_poll_at       timestamptz,
    ADD COLUMN next_poll_at       timestamptz,       -- null: due as soon as credentials are set
    ADD COLUMN last_error         text,              -- stable code of the last failure, never a message
    ADD COLUMN last_error_at      timestamptz,
    ADD COLUMN backoff_until      timestamptz,       -- the provider failed: nothing is sent before
    ADD COLUMN backoff_seconds    integer NOT NULL DEFAULT 0; -- the current wait; 0 when healthy

-- polled_at orders the polling queue (never polled first); poll_error is the ticket's
-- own last error (ticket_not_found, bad_answer), cleared by a good read.
ALTER TABLE ticket_links
    ADD COLUMN polled_at  timestamptz,
    ADD COLUMN poll_error text;

-- A change of a linked issue to post on its ticket, written in the transaction of the
-- change and sent by the integration's ticket.sync job.
CREATE TABLE ticket_writes (
    id             uuid PRIMARY KEY,
    seq            bigint GENERATED ALWAYS AS IDENTITY, -- the order of the changes (one issue's changes lock its row)
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    integration_id uuid NOT NULL REFERENCES ticket_integrations(id) ON DELETE CASCADE,
    issue_id       uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    ticket_key     text NOT NULL,
    change         text NOT NULL CHECK (change IN ('resolved', 'verified', 'reopened', 'ignored')),
    origin         text NOT NULL,
    status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed', 'skipped')),
    comment_done   boolean NOT NULL DEFAULT false,  -- the comment was posted: a retry does not post it again
    attempts       integer NOT NULL DEFAULT 0,
    last_error     text,
    created_at     timestamptz NOT NULL,
    finished_at    timestamptz
);
CREATE INDEX ticket_writes_pending ON ticket_writes (integration_id, seq) WHERE status = 'pending';
CREATE INDEX ticket_writes_issue ON ticket_writes (issue_id);

-- +goose Down
DROP TABLE ticket_writes;
ALTER TABLE ticket_links DROP COLUMN polled_at, DROP COLUMN poll_error;
ALTER TABLE ticket_integrations DROP COLUMN credentials_sealed, DROP COLUMN last_poll_at, DROP COLUMN next_poll_at,
    DROP COLUMN last_error, DROP COLUMN last_error_at, DROP COLUMN backoff_until, DROP COLUMN backoff_seconds;
