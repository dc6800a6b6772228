-- +goose Up
-- Configuration as code (`vigia apply`): the objects a workspace's file manages. The
-- services refuse to change or delete them (409 managed_by_config) unless the change
-- comes from apply; name is the object's name in the file when it was last applied.
CREATE TABLE config_managed (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('connection', 'team', 'domain', 'channel', 'rule')),
    object_id    uuid NOT NULL,
    name         text NOT NULL,
    applied_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, kind, object_id)
);

-- +goose Down
DROP TABLE config_managed;
