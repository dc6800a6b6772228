-- +goose Up
-- The exact number of live datasets of each workspace, for the list's X-Total-Count
-- without counting 100,000 rows per request (issue 20). Triggers append signed deltas
-- (one row per statement and workspace, so concurrent scans never wait on one counter
-- row); readers sum them. Past 32 rows a writer folds a workspace's committed deltas into
-- one row, skipping rows other transactions hold (it never waits).
CREATE TABLE dataset_count_deltas (
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    delta        bigint NOT NULL
);
CREATE INDEX dataset_count_deltas_workspace ON dataset_count_deltas (workspace_id);

INSERT INTO dataset_count_deltas (workspace_id, delta)
SELECT workspace_id, count(*) FROM datasets WHERE dropped_at IS NULL GROUP BY workspace_id;

-- +goose StatementBegin
CREATE FUNCTION vigia_dataset_count_fold(ws uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM (SELECT 1 FROM dataset_count_deltas WHERE workspace_id = ws LIMIT 33) t) > 32 THEN
        WITH gone AS (
            DELETE FROM dataset_count_deltas WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM dataset_count_deltas WHERE workspace_id = ws FOR UPDATE SKIP LOCKED))
            RETURNING delta)
        INSERT INTO dataset_count_deltas (workspace_id, delta) SELECT ws, sum(delta) FROM gone HAVING count(*) > 0;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION vigia_dataset_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ws uuid;
BEGIN
    FOR ws IN INSERT INTO dataset_count_deltas (workspace_id, delta)
    SELECT n.workspace_id, count(*) FROM new_rows n
     WHERE n.dropped_at IS NULL AND EXISTS (SELECT 1 FROM workspaces w WHERE w.id = n.workspace_id)
     GROUP BY n.workspace_id RETURNING workspace_id
    LOOP
        PERFORM vigia_dataset_count_fold(ws);
    END LOOP;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION vigia_dataset_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ws uuid;
BEGIN
    FOR ws IN INSERT INTO dataset_count_deltas (workspace_id, delta)
    SELECT c.workspace_id, sum(c.d) FROM (
        SELECT n.workspace_id, 1 AS d FROM new_rows n WHERE n.dropped_at IS NULL
        UNION ALL
        SELECT o.workspace_id, -1 FROM old_rows o WHERE o.dropped_at IS NULL) c
     WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = c.workspace_id)
     GROUP BY c.workspace_id HAVING sum(c.d) <> 0 RETURNING workspace_id
    LOOP
        PERFORM vigia_dataset_count_fold(ws);
    END LOOP;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A workspace being deleted takes its deltas with it: its rows are not counted.
-- +goose StatementBegin
CREATE FUNCTION vigia_dataset_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ws uuid;
BEGIN
    FOR ws IN INSERT INTO dataset_count_deltas (workspace_id, delta)
    SELECT o.workspace_id, -count(*) FROM old_rows o
     WHERE o.dropped_at IS NULL AND EXISTS (SELECT 1 FROM workspaces w WHERE w.id = o.workspace_id)
     GROUP BY o.workspace_id RETURNING workspace_id
    LOOP
        PERFORM vigia_dataset_count_fold(ws);
    END LOOP;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER datasets_count_insert AFTER INSERT ON datasets REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION vigia_dataset_count_insert();
CREATE TRIGGER datasets_count_update AFTER UPDATE ON datasets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION vigia_dataset_count_update();
CREATE TRIGGER datasets_count_delete AFTER DELETE ON datasets REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION vigia_dataset_count_delete();

-- +goose Down
DROP TRIGGER datasets_count_delete ON datasets;
DROP TRIGGER datasets_count_update ON datasets;
DROP TRIGGER datasets_count_insert ON datasets;
DROP FUNCTION vigia_dataset_count_delete();
DROP FUNCTION vigia_dataset_count_update();
DROP FUNCTION vigia_dataset_count_insert();
DROP FUNCTION vigia_dataset_count_fold(uuid);
DROP TABLE dataset_count_deltas;
