-- +goose Up
-- Knowledge entries (package knowledge): notes, decisions, glossary terms and metric
-- definitions, linked to datasets and their columns. Search fuses full-text search
-- (Portuguese, English and Spanish configurations) and trigram similarity, both on
-- the text folded by kb_fold: lower case without accents (the unaccent extension when
-- it can be installed here, else a translate() of the Latin accented letters), so
-- "analise" finds "análise".
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- +goose StatementBegin
DO $$
DECLARE
    nsp text;
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS unaccent;
    EXCEPTION WHEN OTHERS THEN
        NULL; -- not installable here: the translate() fold below
    END;
    SELECT n.nspname INTO nsp FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
    IF nsp IS NOT NULL THEN
        EXECUTE format('CREATE FUNCTION kb_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L',
            format('SELECT lower(%I.unaccent(%L::regdictionary, coalesce(t, %L)))', nsp, nsp || '.unaccent', ''));
    ELSE
        CREATE FUNCTION kb_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
            $f$SELECT translate(lower(coalesce(t, '')), 'áàâãäåéèêëíìîïóòôõöúùûüçñýÿ', 'aaaaaaeeeeiiiiooooouuuucnyy')$f$;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION kb_tsv(t text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('pg_catalog.portuguese'::regconfig, kb_fold(t))
        || to_tsvector('pg_catalog.english'::regconfig, kb_fold(t))
        || to_tsvector('pg_catalog.spanish'::regconfig, kb_fold(t))
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION kb_tsq(q text) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT websearch_to_tsquery('pg_catalog.portuguese'::regconfig, kb_fold(q))
        || websearch_to_tsquery('pg_catalog.english'::regconfig, kb_fold(q))
        || websearch_to_tsquery('pg_catalog.spanish'::regconfig, kb_fold(q))
$$;
-- +goose StatementEnd

CREATE TABLE kb_entries (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('note', 'decision', 'term', 'metric')),
    title        text NOT NULL,
    body         text NOT NULL DEFAULT '',
    tags         text[] NOT NULL DEFAULT '{}',
    outdated     boolean NOT NULL DEFAULT false,
    author_id    text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    folded       text GENERATED ALWAYS AS (kb_fold(title || ' ' || body)) STORED,
    search       tsvector GENERATED ALWAYS AS (kb_tsv(title || ' ' || body)) STORED
);
CREATE INDEX kb_entries_workspace ON kb_entries (workspace_id, created_at DESC, id);
CREATE INDEX kb_entries_search ON kb_entries USING gin (search);
CREATE INDEX kb_entries_trgm ON kb_entries USING gin (folded gin_trgm_ops);

-- An entry's links: a dataset, or one of its columns (column_name '' = the dataset).
CREATE TABLE kb_entry_links (
    entry_id    uuid NOT NULL REFERENCES kb_entries(id) ON DELETE CASCADE,
    dataset_id  uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    column_name text NOT NULL DEFAULT '',
    PRIMARY KEY (entry_id, dataset_id, column_name)
);
CREATE INDEX kb_entry_links_dataset ON kb_entry_links (dataset_id);

-- +goose Down
DROP TABLE kb_entry_links;
DROP TABLE kb_entries;
DROP FUNCTION kb_tsq(text);
DROP FUNCTION kb_tsv(text);
DROP FUNCTION kb_fold(text);
