-- +goose Up
-- Notification channels (generic webhooks), their deliveries with every attempt, the in-app
-- notification list, alert mutes, the on-call rota and its escalations, and the ticket
-- integrations that close issues from an issue tracker (package webhook).

CREATE TABLE notification_channels (
    id                    uuid PRIMARY KEY,
    workspace_id          uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    -- A team channel delivers only what its team can read; null = a workspace channel.
    team_id               uuid REFERENCES teams(id) ON DELETE CASCADE,
    name                  text NOT NULL,
    kind                  text NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook')),
    url_sealed            bytea NOT NULL,      -- AES-GCM (VIGIA_SECRET_KEY), bound to the channel id
    -- null: a channel created before signing existed; it sends no signature until rotated.
    secret_sealed         bytea,
    locale                text CHECK (locale IN ('pt-PT', 'en', 'es')),
    min_severity          text NOT NULL DEFAULT 'warning' CHECK (min_severity IN ('info', 'warning', 'critical')),
    digest                boolean NOT NULL DEFAULT false,
    event_kinds           text[] NOT NULL DEFAULT '{alerts}',
    scope_domain_ids      uuid[] NOT NULL DEFAULT '{}',
    scope_connection_ids  uuid[] NOT NULL DEFAULT '{}',
    scope_dataset_ids     uuid[] NOT NULL DEFAULT '{}',
    scope_issue_types     text[] NOT NULL DEFAULT '{}',
    include_auto_monitors boolean NOT NULL DEFAULT true,
    last_digest_at        timestamptz,
    created_by            text NOT NULL DEFAULT '',
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
CREATE INDEX notification_channels_workspace ON notification_channels (workspace_id, created_at);

-- The in-app notification list (the bell): every alert and event, delivered or held by a
-- mute. Title and body are rendered from code and params in the reader's language.
CREATE TABLE notifications (
    id            uuid PRIMARY KEY,
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    event         text NOT NULL,               -- service.* event type
    code          text NOT NULL,
    params        jsonb NOT NULL DEFAULT '{}',
    payload       jsonb NOT NULL DEFAULT '{}', -- what rendering needs (names, severities); never source values
    source_key    text NOT NULL,               -- what caused it: alert:<issue>, event:<id>, escalation:<issue>:<level>
    dataset_ids   uuid[] NOT NULL DEFAULT '{}',-- visibility: readers must see every one
    domain_id     uuid,
    issue_id      uuid,
    scan_id       uuid,
    severity      text,
    held          boolean NOT NULL DEFAULT false,
    mute_ids      uuid[] NOT NULL DEFAULT '{}',
    deliveries    integer NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL,
    UNIQUE (workspace_id, source_key)
);
CREATE INDEX notifications_workspace ON notifications (workspace_id, created_at DESC, id DESC);
-- Consumer-notice caps count the last hour of one workspace.
CREATE INDEX notifications_event_recent ON notifications (workspace_id, event, created_at DESC);

-- One delivery of one event to one channel. Its id is X-Service-Delivery on every attempt;
-- body holds the exact bytes signed and sent. Each attempt is appended to attempt_log.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    channel_id      uuid NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
    notification_id uuid REFERENCES notifications(id) ON DELETE SET NULL,
    event           text NOT NULL,
    source_key      text NOT NULL,             -- one delivery per channel and cause
    idempotency_key text,                      -- state events
    body            bytea NOT NULL,
    test            boolean NOT NULL DEFAULT false,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
    attempts        integer NOT NULL DEFAULT 0,
    attempt_log     jsonb NOT NULL DEFAULT '[]',
    next_attempt_at timestamptz,
    last_status_code integer,
    last_error      text,                      -- a stable short text; never the URL, an address or a body
    created_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    UNIQUE (channel_id, source_key)
) WITH (fillfactor = 70); -- room for HOT updates: recording an attempt touches no indexed column
-- The delivery log, and the channel's last delivery (last_delivery_status/at/error: the
-- newest finished one) without a hot channel row.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (channel_id, created_at DESC, id DESC);

-- Scans whose end-of-scan alerts were turned into notifications and deliveries.
CREATE TABLE webhook_scan_alerts (
    scan_id       uuid PRIMARY KEY REFERENCES scans(id) ON DELETE CASCADE,
    workspace_id  uuid NOT NULL,
    alerts        integer NOT NULL,
    dispatched_at timestamptz NOT NULL
);
CREATE INDEX scans_finished_webhooks ON scans (finished_at) WHERE finished_at IS NOT NULL;
-- The alerts of a scan are the issues it opened.
CREATE INDEX issues_first_scan_webhooks ON issues (first_scan_id);

-- Alert mutes: until ends_at they hold back what they cover (part 6, Mutes).
CREATE TABLE notification_mutes (
    id            uuid PRIMARY KEY,
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scope         text NOT NULL CHECK (scope IN ('workspace', 'connection', 'dataset', 'issue_types')),
    connection_id uuid REFERENCES connections(id) ON DELETE CASCADE,
    dataset_id    uuid REFERENCES datasets(id) ON DELETE CASCADE,
    issue_types   text[] NOT NULL DEFAULT '{}',
    reason        text NOT NULL DEFAULT '',
    ends_at       timestamptz NOT NULL,
    created_by    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    CHECK ((scope = 'connection') = (connection_id IS NOT NULL)),
    CHECK ((scope = 'dataset') = (dataset_id IS NOT NULL)),
    CHECK ((scope = 'issue_types') = (cardinality(issue_types) > 0))
);
CREATE INDEX notification_mutes_active ON notification_mutes (workspace_id, ends_at);

-- The workspace's on-call rota: levels of people with minutes to acknowledge, then a team.
CREATE TABLE oncall_rotas (
    workspace_id  uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    levels        jsonb NOT NULL,              -- [{"user_id": "...", "minutes": 15}, ...]
    team_id       uuid REFERENCES teams(id) ON DELETE SET NULL,
    min_severity  text NOT NULL DEFAULT 'critical' CHECK (min_severity IN ('warning', 'critical')),
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- Where each unacknowledged issue stands on the rota.
CREATE TABLE issue_escalations (
    issue_id      uuid PRIMARY KEY REFERENCES issues(id) ON DELETE CASCADE,
    workspace_id  uuid NOT NULL,
    level         integer NOT NULL,
    level_since   timestamptz NOT NULL,
    exhausted     boolean NOT NULL DEFAULT false,
    updated_at    timestamptz NOT NULL
);

-- Issue trackers that report ticket state back (inbound webhooks) for linked issues.
CREATE TABLE ticket_integrations (
    id                     uuid PRIMARY KEY,
    workspace_id           uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name                   text NOT NULL,
    provider               text NOT NULL CHECK (provider IN ('jira', 'linear', 'generic')),
    base_url               text,
    project                text,
    webhook_secret_sealed  bytea,              -- null: inbound webhooks answer 401
    interval_min           integer NOT NULL DEFAULT 15 CHECK (interval_min BETWEEN 5 AND 1440),
    comment                boolean NOT NULL DEFAULT false,
    transition             boolean NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE ticket_links (
    id             uuid PRIMARY KEY,
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    integration_id uuid NOT NULL REFERENCES ticket_integrations(id) ON DELETE CASCADE,
    issue_id       uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    ticket_key     text NOT NULL,
    ticket_url     text NOT NULL,
    created_by     text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    UNIQUE (integration_id, ticket_key, issue_id)
);
CREATE INDEX ticket_links_issue ON ticket_links (issue_id);

-- +goose Down
DROP TABLE ticket_links;
DROP TABLE ticket_integrations;
DROP TABLE issue_escalations;
DROP TABLE oncall_rotas;
DROP TABLE notification_mutes;
DROP INDEX issues_first_scan_webhooks;
DROP INDEX scans_finished_webhooks;
DROP TABLE webhook_scan_alerts;
DROP TABLE webhook_deliveries;
DROP TABLE notifications;
DROP TABLE notification_channels;
