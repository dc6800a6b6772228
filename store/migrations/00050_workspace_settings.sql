-- +goose Up
-- Workspace and account settings (issue 17): the workspace's currency (null: EUR) and
-- plan (free, team, business; a self-hosted installation is business unless the
-- operator chooses otherwise with `vigia workspace set --plan`).
ALTER TABLE workspaces ADD COLUMN currency text CHECK (currency IN ('EUR', 'USD', 'GBP', 'CHF', 'BRL'));
ALTER TABLE workspaces ADD COLUMN plan text NOT NULL DEFAULT 'business' CHECK (plan IN ('free', 'team', 'business'));

-- +goose Down
ALTER TABLE workspaces DROP COLUMN plan;
ALTER TABLE workspaces DROP COLUMN currency;
