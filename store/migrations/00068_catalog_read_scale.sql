-- +goose Up
-- Catalog reads that stay fast at 100,000 datasets (issue 20): the list's sort keys as
-- indexed columns of the live datasets, a trigram index for q=, and visibility as a set.

-- Downstream reach, kept by the lineage projector next to dataset_reach (SetReach), so
-- that sort=impact walks an index instead of computing each row's reach.
ALTER TABLE datasets ADD COLUMN reach integer NOT NULL DEFAULT 0;
UPDATE datasets d SET reach = r.reach FROM dataset_reach r WHERE r.dataset_id = d.id AND r.reach <> 0;

-- One index per list order (name, usage, impact), over the live datasets only, holding
-- every column the page's ordering and visibility need: ORDER BY … LIMIT walks it, and a
-- deep offset skips rows with an index-only scan.
CREATE INDEX datasets_live_name ON datasets (workspace_id, schema_name, table_name, id) WHERE dropped_at IS NULL;
CREATE INDEX datasets_live_usage ON datasets (workspace_id, queries_per_day DESC NULLS LAST, schema_name, table_name, id)
    WHERE dropped_at IS NULL;
CREATE INDEX datasets_live_reach ON datasets (workspace_id, reach DESC, schema_name, table_name, id) WHERE dropped_at IS NULL;
-- q= searches schema.table (which contains the schema and the table names).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX datasets_live_qualified_trgm ON datasets USING gin ((schema_name || '.' || table_name) gin_trgm_ops)
    WHERE dropped_at IS NULL;
CREATE INDEX domains_restricted ON domains (workspace_id) WHERE restricted;

-- The visibility rule as a set: the datasets of workspace ws a caller with teams (admin
-- or not) cannot see, those of a restricted-access domain none of the teams has a grant
-- on. Restricted datasets are few, so lists exclude this set once (a hashed NOT IN)
-- instead of calling vigia_dataset_visible for every row. Same rule as that function.
-- +goose StatementBegin
CREATE FUNCTION vigia_hidden_datasets(ws uuid, teams uuid[], is_admin boolean) RETURNS SETOF uuid
LANGUAGE sql STABLE AS $$
    SELECT dd.dataset_id FROM domains dm JOIN domain_datasets dd ON dd.domain_id = dm.id
     WHERE dm.workspace_id = ws AND dm.restricted AND NOT is_admin
       AND NOT EXISTS (SELECT 1 FROM domain_grants g WHERE g.domain_id = dm.id AND g.team_id = ANY(teams))
$$;
-- +goose StatementEnd

-- API tokens are cached in each process for a short while after authentication
-- (identity.TokenCacheTTL); these announce at commit every change that ends or alters a
-- token's credential, so that revocation stays immediate in every process.
-- +goose StatementBegin
CREATE FUNCTION vigia_notify_token() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('vigia_credentials', 'token:' || encode(OLD.token_hash, 'hex'));
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION vigia_notify_workspace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('vigia_credentials', 'workspace:' || OLD.id::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER api_tokens_changed AFTER UPDATE ON api_tokens FOR EACH ROW
    WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
          OR OLD.token_hash <> NEW.token_hash OR OLD.workspace_id <> NEW.workspace_id)
    EXECUTE FUNCTION vigia_notify_token();
CREATE TRIGGER api_tokens_deleted AFTER DELETE ON api_tokens FOR EACH ROW EXECUTE FUNCTION vigia_notify_token();
CREATE TRIGGER workspaces_changed AFTER UPDATE OR DELETE ON workspaces FOR EACH ROW EXECUTE FUNCTION vigia_notify_workspace();

-- +goose Down
DROP TRIGGER workspaces_changed ON workspaces;
DROP TRIGGER api_tokens_deleted ON api_tokens;
DROP TRIGGER api_tokens_changed ON api_tokens;
DROP FUNCTION vigia_notify_workspace();
DROP FUNCTION vigia_notify_token();
DROP FUNCTION vigia_hidden_datasets(uuid, uuid[], boolean);
DROP INDEX domains_restricted;
DROP INDEX datasets_live_qualified_trgm;
DROP INDEX datasets_live_reach;
DROP INDEX datasets_live_usage;
DROP INDEX datasets_live_name;
ALTER TABLE datasets DROP COLUMN reach;
