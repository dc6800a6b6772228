-- +goose Up
-- Data products (package product) and trust for AI consumers (package trust).

-- A domain is a data product: a status, a published version MAJOR.MINOR, an owner and an
-- SLA. Domains that existed before this migration are published at 1.0 (the contract's
-- rule), and so are rows inserted without a status; the service creates new domains as
-- drafts explicitly.
ALTER TABLE domains
    ADD COLUMN status        text NOT NULL DEFAULT 'published'
                             CHECK (status IN ('draft', 'published', 'deprecated')),
    ADD COLUMN version_major integer NOT NULL DEFAULT 1 CHECK (version_major >= 0),
    ADD COLUMN version_minor integer NOT NULL DEFAULT 0 CHECK (version_minor >= 0),
    ADD COLUMN published_at  timestamptz,
    -- availability_objective_pct, retention_days, dimension_targets, dimension_weights
    ADD COLUMN sla           jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN owner_name    text,
    ADD COLUMN updated_at    timestamptz NOT NULL DEFAULT now();
UPDATE domains SET published_at = created_at;

-- Published versions, newest last; snapshot is the domain as published (name, owner,
-- SLA, member datasets with their active-contract columns) and is what diffs compare.
CREATE TABLE domain_versions (
    domain_id      uuid NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    major          integer NOT NULL,
    minor          integer NOT NULL,
    bump           text NOT NULL CHECK (bump IN ('initial', 'major', 'minor')),
    change_summary text NOT NULL DEFAULT '',
    changes        jsonb NOT NULL DEFAULT '[]',
    snapshot       jsonb NOT NULL,
    counts         jsonb NOT NULL DEFAULT '{}',
    published_at   timestamptz NOT NULL,
    published_by   text NOT NULL,
    PRIMARY KEY (domain_id, major, minor)
);

INSERT INTO domain_versions (domain_id, workspace_id, major, minor, bump, snapshot, counts, published_at, published_by)
SELECT dm.id, dm.workspace_id, 1, 0, 'initial',
       jsonb_build_object('name', dm.name, 'description', dm.description, 'owner_name', NULL,
           'restricted', dm.restricted, 'status', 'published', 'sla', '{}'::jsonb,
           'datasets', coalesce((SELECT jsonb_agg(jsonb_build_object('id', d.id::text,
                   'name', d.schema_name || '.' || d.table_name, 'contract_columns', '[]'::jsonb)
                   ORDER BY d.schema_name, d.table_name, d.id)
               FROM domain_datasets dd JOIN datasets d ON d.id = dd.dataset_id WHERE dd.domain_id = dm.id), '[]'::jsonb)),
       jsonb_build_object('datasets', (SELECT count(*) FROM domain_datasets dd WHERE dd.domain_id = dm.id),
           'changes', 0, 'breaking', 0, 'compatible', 0),
       dm.created_at, 'migration'
  FROM domains dm;

-- One public share per domain: an opaque token addresses the public page and badge.
-- Only its SHA-256 is looked up; the token itself is kept sealed (AES-GCM) so that the
-- people who manage the domain can copy the link again.
CREATE TABLE domain_public_shares (
    domain_id    uuid PRIMARY KEY REFERENCES domains(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    token_hash   bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    token_sealed bytea NOT NULL,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL,
    rotated_at   timestamptz
);

-- Consumers registered by hand on a domain (derived ones come from the consumer
-- registry). channel_id names a notification channel that receives critical SLA breach
-- notices (no foreign key: channels belong to the webhook feature).
CREATE TABLE domain_consumers (
    id           uuid PRIMARY KEY,
    domain_id    uuid NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('user', 'ai_system', 'dbt_exposure', 'external')),
    channel_id   uuid,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL,
    UNIQUE (domain_id, name, kind)
);

-- The consumer registry: agents, applications, pipelines and notebooks that read
-- datasets, identified by name plus kind, created at first registration.
CREATE TABLE consumers (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('agent', 'application', 'pipeline', 'notebook')),
    framework    text,
    created_at   timestamptz NOT NULL,
    UNIQUE (workspace_id, name, kind)
);

-- One recorded read (POST /trust/consumptions); a repeated run_ref of the same consumer
-- is a replay of the same consumption.
CREATE TABLE consumptions (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    consumer_id  uuid NOT NULL REFERENCES consumers(id) ON DELETE CASCADE,
    run_ref      text,
    purpose      text NOT NULL CHECK (purpose IN ('agente', 'rag', 'treino', 'bi')),
    actor        text NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX consumptions_run_ref ON consumptions (consumer_id, run_ref) WHERE run_ref IS NOT NULL;
CREATE INDEX consumptions_workspace ON consumptions (workspace_id, created_at DESC);

-- The datasets of a read with the decision the consumer saw (decision_seen) and when
-- that decision was computed (trust_as_of).
CREATE TABLE consumption_datasets (
    consumption_id uuid NOT NULL REFERENCES consumptions(id) ON DELETE CASCADE,
    dataset_id     uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    workspace_id   uuid NOT NULL,
    consumer_id    uuid NOT NULL REFERENCES consumers(id) ON DELETE CASCADE,
    purpose        text NOT NULL,
    decision_seen  text NOT NULL CHECK (decision_seen IN ('trusted', 'caution', 'untrusted', 'unknown')),
    trust_as_of    timestamptz NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (consumption_id, dataset_id)
);
CREATE INDEX consumption_datasets_dataset ON consumption_datasets (dataset_id, created_at DESC);
CREATE INDEX consumption_datasets_consumer ON consumption_datasets (consumer_id, created_at DESC);

-- Untrusted-read notices written to the events outbox, kept here to apply the caps:
-- one per hour per consumer and dataset, 20 per hour per workspace.
CREATE TABLE consumer_notices (
    event_id     uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    consumer_id  uuid NOT NULL REFERENCES consumers(id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL
);
CREATE INDEX consumer_notices_workspace ON consumer_notices (workspace_id, created_at DESC);

CREATE TABLE consumer_notice_datasets (
    event_id    uuid NOT NULL REFERENCES consumer_notices(event_id) ON DELETE CASCADE,
    consumer_id uuid NOT NULL,
    dataset_id  uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (event_id, dataset_id)
);
CREATE INDEX consumer_notice_datasets_pair ON consumer_notice_datasets (consumer_id, dataset_id, created_at DESC);

-- Trust reads: the latest verdict, score and profile of a dataset and its open issues.
CREATE INDEX issues_dataset_open ON issues (dataset_id, severity) WHERE status IN ('open', 'acknowledged');
CREATE INDEX scans_connection_finished ON scans (connection_id, finished_at) WHERE finished_at IS NOT NULL;

-- +goose Down
DROP INDEX scans_connection_finished;
DROP INDEX issues_dataset_open;
DROP TABLE consumer_notice_datasets;
DROP TABLE consumer_notices;
DROP TABLE consumption_datasets;
DROP TABLE consumptions;
DROP TABLE consumers;
DROP TABLE domain_consumers;
DROP TABLE domain_public_shares;
DROP TABLE domain_versions;
ALTER TABLE domains DROP COLUMN status, DROP COLUMN version_major, DROP COLUMN version_minor,
    DROP COLUMN published_at, DROP COLUMN sla, DROP COLUMN owner_name, DROP COLUMN updated_at;
