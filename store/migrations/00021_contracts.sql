-- +goose Up
-- Data contracts (package contract): accepted versions, proposals in review with their
-- comments, and each dataset's last check against its active contract.

-- Accepted versions, MAJOR.MINOR.PATCH; the newest is the dataset's active contract.
-- document is the ODCS v3 document as accepted; changes what changed from the version
-- before (with a breaking flag each).
CREATE TABLE contract_versions (
    id             uuid PRIMARY KEY,
    workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id     uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    major          integer NOT NULL CHECK (major >= 0),
    minor          integer NOT NULL CHECK (minor >= 0),
    patch          integer NOT NULL DEFAULT 0 CHECK (patch >= 0),
    bump           text NOT NULL CHECK (bump IN ('initial', 'major', 'minor')),
    document       jsonb NOT NULL,
    changes        jsonb NOT NULL DEFAULT '[]',
    change_summary text NOT NULL DEFAULT '',
    proposal_id    uuid,
    author_id      text NOT NULL DEFAULT '',
    accepted_by    text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    UNIQUE (dataset_id, major, minor, patch)
);

CREATE TABLE contract_proposals (
    id            uuid PRIMARY KEY,
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id    uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    status        text NOT NULL CHECK (status IN ('open', 'accepted', 'rejected', 'withdrawn')),
    origin        text NOT NULL CHECK (origin IN ('observed', 'document')),
    summary       text NOT NULL DEFAULT '',
    document      jsonb NOT NULL,
    author_id     text NOT NULL,
    decided_by    text,
    decided_at    timestamptz,
    decision_note text,
    version       text,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX contract_proposals_dataset ON contract_proposals (dataset_id, created_at DESC);

CREATE TABLE contract_proposal_comments (
    id           uuid PRIMARY KEY,
    proposal_id  uuid NOT NULL REFERENCES contract_proposals(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    author_id    text NOT NULL,
    body         text NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX contract_proposal_comments_proposal ON contract_proposal_comments (proposal_id, created_at);

-- The last check of a dataset against its active contract: valid when violations is
-- empty. scan_id is null for the check made when a version is accepted.
CREATE TABLE contract_checks (
    dataset_id   uuid PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scan_id      uuid,
    version      text NOT NULL,
    violations   jsonb NOT NULL DEFAULT '[]',
    checked_at   timestamptz NOT NULL
);

-- Whether the source declares the column alone unique (a unique constraint or index
-- without predicate): the observed contract's unique flag takes it as the database's word.
ALTER TABLE dataset_columns ADD COLUMN unique_key boolean NOT NULL DEFAULT false;

-- One open (or acknowledged) contract issue per dataset.
CREATE UNIQUE INDEX issues_one_open_contract ON issues (dataset_id)
    WHERE type = 'contract' AND status IN ('open', 'acknowledged');

-- +goose Down
DROP INDEX issues_one_open_contract;
ALTER TABLE dataset_columns DROP COLUMN unique_key;
DROP TABLE contract_checks;
DROP TABLE contract_proposal_comments;
DROP TABLE contract_proposals;
DROP TABLE contract_versions;
