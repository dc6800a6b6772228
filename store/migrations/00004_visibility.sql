-- +goose Up
-- Domains (data products) as far as visibility needs them; the products feature adds
-- the rest (SLA, versions, public shares) in its own migration.
CREATE TABLE domains (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         text NOT NULL,
    description  text NOT NULL DEFAULT '',
    -- A restricted-access domain's datasets are readable only with a team grant.
    restricted   boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);

CREATE TABLE domain_datasets (
    domain_id  uuid NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    PRIMARY KEY (domain_id, dataset_id)
);
CREATE INDEX domain_datasets_dataset ON domain_datasets (dataset_id);

-- A team's grant on a domain: member reads, manager also manages the domain.
CREATE TABLE domain_grants (
    domain_id uuid NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    team_id   uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    role      text NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'manager')),
    PRIMARY KEY (domain_id, team_id)
);

-- The one visibility rule every read uses: a dataset is visible unless it belongs to a
-- restricted-access domain none of the caller's teams has a grant on. Workspace admins
-- see everything (they grant access); API tokens have no teams.
-- +goose StatementBegin
CREATE FUNCTION vigia_dataset_visible(dataset uuid, teams uuid[], is_admin boolean) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT is_admin OR NOT EXISTS (
        SELECT 1 FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
         WHERE dd.dataset_id = dataset AND dm.restricted
           AND NOT EXISTS (SELECT 1 FROM domain_grants g WHERE g.domain_id = dm.id AND g.team_id = ANY(teams)))
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION vigia_dataset_visible(uuid, uuid[], boolean);
DROP TABLE domain_grants;
DROP TABLE domain_datasets;
DROP TABLE domains;
