package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/internal/pgtx"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/notify"
)

// LineageStore implements lineage.Store: the lineage record, its outbox, reach counts,
// incidents and snapshots.
type LineageStore struct{ db *DB }

// Lineage returns the lineage store.
func (db *DB) Lineage() *LineageStore { return &LineageStore{db: db} }

var (
	_ lineage.Store            = (*LineageStore)(nil)
	_ lineage.ProjectionLocker = (*LineageStore)(nil)
)

// DatasetInfos returns live datasets of the workspace among ids with their visibility.
func (s *LineageStore) DatasetInfos(ctx context.Context, v catalog.Viewer, ids []string, withColumns bool) (map[string]lineage.DatasetInfo, error) {
	out := map[string]lineage.DatasetInfo{}
	if len(ids) == 0 {
		return out, nil
	}
	valid := vigia.ValidIDs(ids)
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name, d.table_name, d.connection_id::text, d.kind, `+VisibleSQL("d.id", 3, 4)+`,
		d.lineage_notes FROM datasets d WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[]) AND d.dropped_at IS NULL`, v.WorkspaceID, valid, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var d lineage.DatasetInfo
		var schema, table string
		if err := rows.Scan(&d.ID, &schema, &table, &d.ConnectionID, &d.Kind, &d.Visible, &d.Notes); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		d.Name = schema + "." + table
		if schema == "" {
			d.Name = table
		}
		out[d.ID] = d
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	if withColumns && len(out) > 0 {
		rows, err := s.db.q(ctx).Query(ctx, `SELECT dataset_id::text, name FROM dataset_columns WHERE dataset_id = ANY($1::uuid[]) ORDER BY dataset_id, position, name`, valid)
		if err != nil {
			return nil, translate(err)
		}
		for rows.Next() {
			var id, name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return nil, translate(err)
			}
			d := out[id]
			d.Columns = append(d.Columns, name)
			out[id] = d
		}
		if err := rows.Err(); err != nil {
			return nil, translate(err)
		}
	}
	return out, nil
}

// VisibleDatasets says which datasets (live or dropped) the viewer may see.
func (s *LineageStore) VisibleDatasets(ctx context.Context, v catalog.Viewer, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, `+VisibleSQL("d.id", 3, 4)+` FROM datasets d
		WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[])`, v.WorkspaceID, ids, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	if err := scanInto(rows, out); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = v.Admin // deleted since: only admins saw everything anyway
		}
	}
	return out, nil
}

const exposureSelect = `SELECT e.id::text, e.name, e.type, e.url, e.owner, e.origin, e.created_at,
	coalesce((SELECT array_agg(l.source_id ORDER BY l.source_id) FROM lineage_edges l
	          WHERE l.workspace_id = e.workspace_id AND l.target_id = 'exposure:' || e.id::text), '{}')
	FROM lineage_exposures e`

func scanExposure(r pgx.Row) (lineage.Exposure, error) {
	var e lineage.Exposure
	err := r.Scan(&e.ID, &e.Name, &e.Type, &e.URL, &e.Owner, &e.Origin, &e.CreatedAt, &e.DatasetIDs)
	e.DatasetIDs = dedupeStrings(e.DatasetIDs)
	return e, err
}

func dedupeStrings(in []string) []string {
	out := in[:0]
	seen := map[string]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Exposures returns exposures of the workspace among ids.
func (s *LineageStore) Exposures(ctx context.Context, ws string, ids []string) (map[string]lineage.Exposure, error) {
	out := map[string]lineage.Exposure{}
	var valid []string
	for _, id := range ids {
		if vigia.ValidID(id) {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, exposureSelect+` WHERE e.workspace_id = $1 AND e.id = ANY($2::uuid[])`, ws, valid)
	if err != nil {
		return nil, translate(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.Exposure, error) { return scanExposure(r) })
	if err != nil {
		return nil, translate(err)
	}
	for _, e := range list {
		out[e.ID] = e
	}
	return out, nil
}

// ListExposures lists the workspace's exposures by name.
func (s *LineageStore) ListExposures(ctx context.Context, ws string) ([]lineage.Exposure, error) {
	rows, err := s.db.q(ctx).Query(ctx, exposureSelect+` WHERE e.workspace_id = $1 ORDER BY e.name, e.type, e.id`, ws)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.Exposure, error) { return scanExposure(r) })
	return out, translate(err)
}

// UpsertExposure creates or updates an exposure by type and name.
func (s *LineageStore) UpsertExposure(ctx context.Context, ws string, e lineage.Exposure) (string, error) {
	var id string
	err := s.db.q(ctx).QueryRow(ctx, `INSERT INTO lineage_exposures (id, workspace_id, name, type, url, owner, origin)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_id, type, name) DO UPDATE SET url = EXCLUDED.url, owner = EXCLUDED.owner,
		   origin = EXCLUDED.origin, updated_at = now()
		RETURNING id::text`, vigia.NewID(), ws, e.Name, e.Type, e.URL, e.Owner, e.Origin).Scan(&id)
	return id, translate(err)
}

// DeleteExposures deletes the exposures of an origin not in keep.
func (s *LineageStore) DeleteExposures(ctx context.Context, ws, origin string, keep []string) ([]string, error) {
	if keep == nil {
		keep = []string{}
	}
	rows, err := s.db.q(ctx).Query(ctx, `DELETE FROM lineage_exposures WHERE workspace_id = $1 AND origin = $2
		AND NOT (id::text = ANY($3)) RETURNING id::text`, ws, origin, keep)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}

// Reach returns stored downstream reach counts.
func (s *LineageStore) Reach(ctx context.Context, ws string, ids []string) (map[string]int, error) {
	out := map[string]int{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT dataset_id::text, reach FROM dataset_reach WHERE workspace_id = $1 AND dataset_id = ANY($2::uuid[])`, ws, ids)
	if err != nil {
		return nil, translate(err)
	}
	return out, scanInto(rows, out)
}

// SetReach replaces the workspace's reach counts (datasets not named count 0).
func (s *LineageStore) SetReach(ctx context.Context, ws string, reach map[string]int) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		if _, err := q.Exec(ctx, `DELETE FROM dataset_reach WHERE workspace_id = $1`, ws); err != nil {
			return translate(err)
		}
		ids := make([]string, 0, len(reach))
		counts := make([]int32, 0, len(reach))
		for id, n := range reach {
			if n > 0 && vigia.ValidID(id) {
				ids = append(ids, id)
				counts = append(counts, int32(n))
			}
		}
		if len(ids) > 0 {
			if _, err := q.Exec(ctx, `INSERT INTO dataset_reach (dataset_id, workspace_id, reach)
				SELECT d.id, d.workspace_id, r.n FROM unnest($2::uuid[], $3::int[]) AS r(id, n)
				JOIN datasets d ON d.id = r.id AND d.workspace_id = $1`, ws, ids, counts); err != nil {
				return translate(err)
			}
		}
		// The list's sort=impact key (indexed with the live datasets): only changed rows.
		_, err := q.Exec(ctx, `UPDATE datasets d SET reach = coalesce(r.reach, 0)
			FROM datasets x LEFT JOIN dataset_reach r ON r.dataset_id = x.id
			WHERE x.workspace_id = $1 AND d.id = x.id AND d.reach <> coalesce(r.reach, 0)`, ws)
		return translate(err)
	})
}

const edgeSelect = `SELECT source_id, target_id, kind, origin, column_map, column_level, linking_column, notes FROM lineage_edges`

func collectEdges(rows pgx.Rows, err error) ([]lineage.RecordEdge, error) {
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.RecordEdge, error) {
		var e lineage.RecordEdge
		var cols []byte
		var kind string
		if err := r.Scan(&e.Source, &e.Target, &kind, &e.Origin, &cols, &e.ColumnLevel, &e.LinkingColumn, &e.Notes); err != nil {
			return e, err
		}
		e.Kind = lineage.EdgeKind(kind)
		return e, json.Unmarshal(cols, &e.Columns)
	})
	return out, translate(err)
}

// Edges returns edges of a kind and origin ("" = any origin).
func (s *LineageStore) Edges(ctx context.Context, ws string, kind lineage.EdgeKind, origin string) ([]lineage.RecordEdge, error) {
	return collectEdges(s.db.q(ctx).Query(ctx, edgeSelect+` WHERE workspace_id = $1 AND kind = $2 AND ($3 = '' OR origin = $3)
		ORDER BY source_id, target_id`, ws, string(kind), origin))
}

// EdgesTouching returns edges with either end among ids.
func (s *LineageStore) EdgesTouching(ctx context.Context, ws string, ids []string) ([]lineage.RecordEdge, error) {
	return collectEdges(s.db.q(ctx).Query(ctx, edgeSelect+` WHERE workspace_id = $1 AND (source_id = ANY($2) OR target_id = ANY($2))
		ORDER BY source_id, target_id, kind`, ws, ids))
}

// UpsertEdges writes edges by source, target and kind.
func (s *LineageStore) UpsertEdges(ctx context.Context, ws string, edges []lineage.RecordEdge) error {
	b := &pgx.Batch{}
	for _, e := range edges {
		cols := e.Columns
		if cols == nil {
			cols = []lineage.ColumnPair{}
		}
		cj, err := json.Marshal(cols)
		if err != nil {
			return vigia.Internal(err)
		}
		notes := e.Notes
		if notes == nil {
			notes = []string{}
		}
		b.Queue(`INSERT INTO lineage_edges (workspace_id, source_id, target_id, kind, origin, column_map, column_level, linking_column, notes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (workspace_id, source_id, target_id, kind) DO UPDATE SET origin = EXCLUDED.origin,
			   column_map = EXCLUDED.column_map, column_level = EXCLUDED.column_level, linking_column = EXCLUDED.linking_column,
			   notes = EXCLUDED.notes, updated_at = now()`,
			ws, e.Source, e.Target, string(e.Kind), e.Origin, cj, e.ColumnLevel, e.LinkingColumn, notes)
	}
	return translate(s.db.q(ctx).SendBatch(ctx, b).Close())
}

// DeleteEdges deletes edges by key.
func (s *LineageStore) DeleteEdges(ctx context.Context, ws string, keys []lineage.EdgeKey) error {
	src, dst, kind := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		src[i], dst[i], kind[i] = k.Source, k.Target, string(k.Kind)
	}
	_, err := s.db.q(ctx).Exec(ctx, `DELETE FROM lineage_edges l USING unnest($2::text[], $3::text[], $4::text[]) AS k(s, t, kind)
		WHERE l.workspace_id = $1 AND l.source_id = k.s AND l.target_id = k.t AND l.kind = k.kind`, ws, src, dst, kind)
	return translate(err)
}

// AddOutbox appends a change to the outbox.
func (s *LineageStore) AddOutbox(ctx context.Context, ws string, c lineage.Change) error {
	b, err := json.Marshal(c)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO lineage_outbox (workspace_id, change) VALUES ($1, $2)`, ws, b)
	return translate(err)
}

// TakeOutbox returns the workspace's oldest outbox rows.
func (s *LineageStore) TakeOutbox(ctx context.Context, ws string, limit int) ([]lineage.Change, int64, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id, change FROM lineage_outbox WHERE workspace_id = $1 ORDER BY id LIMIT $2`, ws, limit)
	if err != nil {
		return nil, 0, translate(err)
	}
	var out []lineage.Change
	var last int64
	for rows.Next() {
		var b []byte
		var c lineage.Change
		if err := rows.Scan(&last, &b); err != nil {
			rows.Close()
			return nil, 0, translate(err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			rows.Close()
			return nil, 0, vigia.Internal(err)
		}
		out = append(out, c)
	}
	return out, last, translate(rows.Err())
}

// DropOutbox deletes applied outbox rows.
func (s *LineageStore) DropOutbox(ctx context.Context, ws string, upTo int64) error {
	_, err := s.db.q(ctx).Exec(ctx, `DELETE FROM lineage_outbox WHERE workspace_id = $1 AND id <= $2`, ws, upTo)
	return translate(err)
}

// WithProjectionLock runs fn holding the workspace's projection lock (a transaction
// advisory lock), so projections of one workspace apply the outbox in order.
func (s *LineageStore) WithProjectionLock(ctx context.Context, ws string, fn func(ctx context.Context) error) error {
	if _, inTx := pgtx.From(ctx); inTx {
		// Called inside a writer's transaction: project after it commits instead.
		return nil
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.db.q(ctx).Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('vigia.lineage.project'), hashtext($1))`, ws); err != nil {
			return translate(err)
		}
		return fn(ctx)
	})
}

// Workspaces lists every workspace.
func (s *LineageStore) Workspaces(ctx context.Context) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text FROM workspaces ORDER BY id`)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}

// ConnectionDatasets returns a connection's live datasets with columns and SQL.
func (s *LineageStore) ConnectionDatasets(ctx context.Context, connectionID string) (lineage.ConnectionCatalog, error) {
	var c lineage.ConnectionCatalog
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT workspace_id::text, id::text, kind FROM connections WHERE id = $1`, connectionID).
		Scan(&c.WorkspaceID, &c.ConnectionID, &c.Dialect); err != nil {
		return c, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name, d.table_name, d.kind, coalesce(d.view_definition, ''),
		coalesce((SELECT json_agg(json_build_object('name', c.name, 'pk', c.primary_key) ORDER BY c.position, c.name)
		          FROM dataset_columns c WHERE c.dataset_id = d.id), '[]'), d.view_depends_on
		FROM datasets d WHERE d.connection_id = $1 AND d.dropped_at IS NULL ORDER BY d.schema_name, d.table_name`, connectionID)
	if err != nil {
		return c, translate(err)
	}
	c.Datasets, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.CatalogDataset, error) {
		var d lineage.CatalogDataset
		var cols, deps []byte
		if err := r.Scan(&d.ID, &d.Schema, &d.Table, &d.Kind, &d.ViewDefinition, &cols, &deps); err != nil {
			return d, err
		}
		if deps != nil {
			d.DependsOnKnown = true
			if err := json.Unmarshal(deps, &d.DependsOn); err != nil {
				return d, err
			}
		}
		var cs []struct {
			Name string `json:"name"`
			PK   bool   `json:"pk"`
		}
		if err := json.Unmarshal(cols, &cs); err != nil {
			return d, err
		}
		for _, x := range cs {
			d.Columns = append(d.Columns, lineage.CatalogColumn{Name: x.Name, PrimaryKey: x.PK})
		}
		return d, nil
	})
	return c, translate(err)
}

// LockOpenLineageJobs returns the merge state of OpenLineage jobs, locking their rows (new
// jobs get an empty row first, so that two events of a new job wait for each other).
// Keys are locked in order, so concurrent batches cannot deadlock.
func (s *LineageStore) LockOpenLineageJobs(ctx context.Context, ws string, jobs []string) (map[string][]byte, error) {
	sorted := slices.Clone(jobs)
	slices.Sort(sorted)
	q := s.db.q(ctx)
	if _, err := q.Exec(ctx, `INSERT INTO openlineage_jobs (workspace_id, job, state)
		SELECT $1, j, '{}' FROM unnest($2::text[]) AS j ORDER BY j ON CONFLICT DO NOTHING`, ws, sorted); err != nil {
		return nil, translate(err)
	}
	rows, err := q.Query(ctx, `SELECT job, state FROM openlineage_jobs WHERE workspace_id = $1 AND job = ANY($2::text[])
		ORDER BY job FOR UPDATE`, ws, sorted)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var job string
		var state []byte
		if err := rows.Scan(&job, &state); err != nil {
			return nil, translate(err)
		}
		if string(state) != "{}" {
			out[job] = state
		}
	}
	return out, translate(rows.Err())
}

// PutOpenLineageJob stores a job's merge state.
func (s *LineageStore) PutOpenLineageJob(ctx context.Context, ws, job string, state []byte) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE openlineage_jobs SET state = $3, updated_at = now() WHERE workspace_id = $1 AND job = $2`,
		ws, job, state)
	return translate(err)
}

// SetLineageNotes replaces the lineage notes of a connection's live datasets.
func (s *LineageStore) SetLineageNotes(ctx context.Context, connectionID string, notes map[string][]string) error {
	ids := make([]string, 0, len(notes))
	vals := make([]string, 0, len(notes))
	for id, ns := range notes {
		b, err := json.Marshal(ns)
		if err != nil {
			return vigia.Internal(err)
		}
		ids = append(ids, id)
		vals = append(vals, string(b))
	}
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE datasets d SET lineage_notes = coalesce(
			(SELECT ARRAY(SELECT jsonb_array_elements_text(n.v::jsonb)) FROM unnest($2::uuid[], $3::text[]) AS n(id, v) WHERE n.id = d.id),
			'{}')
		WHERE d.connection_id = $1 AND d.dropped_at IS NULL
		  AND d.lineage_notes IS DISTINCT FROM coalesce(
			(SELECT ARRAY(SELECT jsonb_array_elements_text(n.v::jsonb)) FROM unnest($2::uuid[], $3::text[]) AS n(id, v) WHERE n.id = d.id),
			'{}')`, connectionID, ids, vals)
	return translate(err)
}

// DroppedDatasets returns a connection's dropped datasets.
func (s *LineageStore) DroppedDatasets(ctx context.Context, connectionID string) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text FROM datasets WHERE connection_id = $1 AND dropped_at IS NOT NULL ORDER BY id`, connectionID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}

// FindByName returns the workspace's live datasets with their name parts, by name.
func (s *LineageStore) FindByName(ctx context.Context, ws string) ([]lineage.NamedDataset, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.connection_id::text, c.name, c.kind,
		array_remove(array_prepend(c.lineage_namespace, c.lineage_aliases), NULL), coalesce(c.lineage_database, ''),
		d.schema_name, d.table_name
		FROM datasets d JOIN connections c ON c.id = d.connection_id
		WHERE d.workspace_id = $1 AND d.dropped_at IS NULL ORDER BY d.schema_name, d.table_name, d.id`, ws)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.NamedDataset, error) {
		var d lineage.NamedDataset
		err := r.Scan(&d.ID, &d.ConnectionID, &d.ConnectionName, &d.ConnectionKind, &d.Namespaces, &d.Database, &d.Schema, &d.Table)
		return d, err
	})
	return out, translate(err)
}

const snapshotSelect = `SELECT id::text, workspace_id::text, trigger, scan_id::text, digest, nodes_count, edges_count, created_at`

func scanSnapshot(r pgx.Row, withBody bool) (lineage.Snapshot, error) {
	var sn lineage.Snapshot
	dest := []any{&sn.ID, &sn.WorkspaceID, &sn.Trigger, &sn.ScanID, &sn.Digest, &sn.NodesCount, &sn.EdgesCount, &sn.CreatedAt}
	var body []byte
	if withBody {
		dest = append(dest, &body)
	}
	if err := r.Scan(dest...); err != nil {
		return sn, err
	}
	if withBody {
		return sn, json.Unmarshal(body, &sn.Body)
	}
	return sn, nil
}

// LatestSnapshot returns the newest snapshot with its body.
func (s *LineageStore) LatestSnapshot(ctx context.Context, ws string) (lineage.Snapshot, bool, error) {
	sn, err := scanSnapshot(s.db.q(ctx).QueryRow(ctx, snapshotSelect+`, body FROM graph_snapshots WHERE workspace_id = $1
		ORDER BY created_at DESC, id DESC LIMIT 1`, ws), true)
	if err == pgx.ErrNoRows {
		return sn, false, nil
	}
	return sn, err == nil, translate(err)
}

// InsertSnapshot stores a snapshot and keeps the newest keep.
func (s *LineageStore) InsertSnapshot(ctx context.Context, sn lineage.Snapshot, keep int) error {
	body, err := json.Marshal(sn.Body)
	if err != nil {
		return vigia.Internal(err)
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		if _, err := q.Exec(ctx, `INSERT INTO graph_snapshots (id, workspace_id, trigger, scan_id, digest, nodes_count, edges_count, body, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, sn.ID, sn.WorkspaceID, sn.Trigger, sn.ScanID, sn.Digest, sn.NodesCount,
			sn.EdgesCount, body, sn.CreatedAt); err != nil {
			return translate(err)
		}
		_, err := q.Exec(ctx, `DELETE FROM graph_snapshots WHERE workspace_id = $1 AND id NOT IN (
			SELECT id FROM graph_snapshots WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2)`, sn.WorkspaceID, keep)
		return translate(err)
	})
}

// Snapshots lists snapshots newest first, without bodies.
func (s *LineageStore) Snapshots(ctx context.Context, ws string, page vigia.Page) (vigia.List[lineage.Snapshot], error) {
	var out vigia.List[lineage.Snapshot]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM graph_snapshots WHERE workspace_id = $1`, ws).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, snapshotSelect+` FROM graph_snapshots WHERE workspace_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, ws, page.Limit, page.Offset)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.Snapshot, error) { return scanSnapshot(r, false) })
	return out, translate(err)
}

// HiddenDatasets implements lineage.KnowledgeStore.
func (s *LineageStore) HiddenDatasets(ctx context.Context, v catalog.Viewer) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT 'dataset:' || d.id::text FROM datasets d
		WHERE d.workspace_id = $1 AND NOT `+VisibleSQL("d.id", 2, 3), v.WorkspaceID, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, translate(err)
}

// SnapshotCountsWithout implements lineage.KnowledgeStore, reading the bodies where they
// are stored rather than sending them.
func (s *LineageStore) SnapshotCountsWithout(ctx context.Context, ws string, ids, hidden []string) (map[string][2]int, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT s.id::text,
		(SELECT count(*) FROM jsonb_array_elements(s.body->'nodes') n WHERE NOT (n->>'id' = ANY($3::text[]))),
		(SELECT count(*) FROM jsonb_array_elements(s.body->'edges') e
		  WHERE NOT (e->>'source' = ANY($3::text[])) AND NOT (e->>'target' = ANY($3::text[])))
		FROM graph_snapshots s WHERE s.workspace_id = $1 AND s.id = ANY($2::uuid[])`, ws, ids, hidden)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := make(map[string][2]int, len(ids))
	for rows.Next() {
		var id string
		var c [2]int
		if err := rows.Scan(&id, &c[0], &c[1]); err != nil {
			return nil, translate(err)
		}
		out[id] = c
	}
	return out, translate(rows.Err())
}

// SnapshotByID returns a snapshot with its body.
func (s *LineageStore) SnapshotByID(ctx context.Context, ws, id string) (lineage.Snapshot, error) {
	sn, err := scanSnapshot(s.db.q(ctx).QueryRow(ctx, snapshotSelect+`, body FROM graph_snapshots WHERE workspace_id = $1 AND id = $2`, ws, id), true)
	return sn, translate(err)
}

// SnapshotAt returns the newest snapshot taken at or before at.
func (s *LineageStore) SnapshotAt(ctx context.Context, ws string, at time.Time) (lineage.Snapshot, error) {
	sn, err := scanSnapshot(s.db.q(ctx).QueryRow(ctx, snapshotSelect+`, body FROM graph_snapshots WHERE workspace_id = $1 AND created_at <= $2
		ORDER BY created_at DESC, id DESC LIMIT 1`, ws, at), true)
	return sn, translate(err)
}

// KnowledgeProviders returns the knowledge-graph node providers over the record's
// tables: connections and domains (structural), open issues and recent signals. titles
// (may be nil) renders the issue nodes' names in the reader's language, as the issue
// reads do (catalog.RenderTitle).
func (db *DB) KnowledgeProviders(titles issue.Titles) []lineage.NodeProvider {
	return []lineage.NodeProvider{connectionNodes{db}, domainNodes{db}, ruleNodes{db}, issueNodes{db, titles}, signalNodes{db}, knowledgeNodes{db}, referenceEdges{db}}
}

// referenceEdges gives the knowledge graph a references edge from a dataset to each
// dataset one of its declared foreign keys references (same connection, not dropped),
// both among the given datasets: join paths, in snapshots and diffs.
type referenceEdges struct{ db *DB }

func (referenceEdges) Kinds() []lineage.NodeKind { return []lineage.NodeKind{lineage.NodeDataset} }
func (referenceEdges) Structural() bool          { return true }
func (p referenceEdges) Nodes(ctx context.Context, ws string, ids []string) ([]lineage.KNode, []lineage.KEdge, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err := p.db.q(ctx).Query(ctx, `SELECT DISTINCT fk.dataset_id::text, r.id::text
		FROM dataset_foreign_keys fk JOIN datasets d ON d.id = fk.dataset_id
		JOIN datasets r ON r.connection_id = d.connection_id AND r.schema_name = fk.ref_schema AND r.table_name = fk.ref_table
		WHERE d.workspace_id = $1 AND fk.dataset_id = ANY($2::uuid[]) AND r.id = ANY($2::uuid[]) AND r.dropped_at IS NULL
		ORDER BY 1, 2 LIMIT 4000`, ws, ids)
	if err != nil {
		return nil, nil, translate(err)
	}
	defer rows.Close()
	var edges []lineage.KEdge
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			return nil, nil, translate(err)
		}
		edges = append(edges, lineage.KEdge{Source: lineage.DatasetNodeID(from), Target: lineage.DatasetNodeID(to), Kind: lineage.RelReferences})
	}
	return nil, edges, translate(rows.Err())
}

var _ lineage.JoinPaths = referenceEdges{}

// JoinPaths implements lineage.JoinPaths: the references edges whose referencing or
// referenced dataset is among ids (both live, same connection), for a focus to follow.
func (p referenceEdges) JoinPaths(ctx context.Context, ws string, ids []string) ([]lineage.KEdge, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := p.db.q(ctx).Query(ctx, `SELECT fk.dataset_id::text, r.id::text
		FROM dataset_foreign_keys fk JOIN datasets d ON d.id = fk.dataset_id
		JOIN datasets r ON r.connection_id = d.connection_id AND r.schema_name = fk.ref_schema AND r.table_name = fk.ref_table
		WHERE d.workspace_id = $1 AND fk.dataset_id = ANY($2::uuid[]) AND d.dropped_at IS NULL AND r.dropped_at IS NULL
		UNION
		SELECT fk.dataset_id::text, r.id::text
		FROM datasets r JOIN dataset_foreign_keys fk ON fk.ref_schema = r.schema_name AND fk.ref_table = r.table_name
		JOIN datasets d ON d.id = fk.dataset_id AND d.connection_id = r.connection_id
		WHERE r.workspace_id = $1 AND r.id = ANY($2::uuid[]) AND d.dropped_at IS NULL AND r.dropped_at IS NULL
		ORDER BY 1, 2 LIMIT 4000`, ws, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var edges []lineage.KEdge
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			return nil, translate(err)
		}
		edges = append(edges, lineage.KEdge{Source: lineage.DatasetNodeID(from), Target: lineage.DatasetNodeID(to), Kind: lineage.RelReferences})
	}
	return edges, translate(rows.Err())
}

type ruleNodes struct{ db *DB }

func (ruleNodes) Kinds() []lineage.NodeKind { return []lineage.NodeKind{lineage.NodeRule} }
func (ruleNodes) Structural() bool          { return true }
func (p ruleNodes) Nodes(ctx context.Context, ws string, ids []string) ([]lineage.KNode, []lineage.KEdge, error) {
	// A dataset's active rules measure it; the name is the rule's own, else its type.
	return collectProvider(ctx, p.db, `SELECT 'rule:' || r.id::text, coalesce(nullif(r.name, ''), r.rule_type), 'dataset:' || r.dataset_id::text
		FROM rules r WHERE r.workspace_id = $1 AND r.dataset_id = ANY($2::uuid[]) AND r.active
		ORDER BY r.created_at, r.id LIMIT 2000`, ws, ids, lineage.NodeRule, lineage.RelMeasures, true)
}

type connectionNodes struct{ db *DB }

func (connectionNodes) Kinds() []lineage.NodeKind { return []lineage.NodeKind{lineage.NodeConnection} }
func (connectionNodes) Structural() bool          { return true }
func (p connectionNodes) Nodes(ctx context.Context, ws string, ids []string) ([]lineage.KNode, []lineage.KEdge, error) {
	return collectProvider(ctx, p.db, `SELECT 'connection:' || c.id::text, c.name, 'dataset:' || d.id::text
		FROM datasets d JOIN connections c ON c.id = d.connection_id
		WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[]) ORDER BY c.name, d.id`, ws, ids, lineage.NodeConnection, lineage.RelMemberOf, false)
}

type domainNodes struct{ db *DB }

func (domainNodes) Kinds() []lineage.NodeKind { return []lineage.NodeKind{lineage.NodeDomain} }
func (domainNodes) Structural() bool          { return true }
func (p domainNodes) Nodes(ctx context.Context, ws string, ids []string) ([]lineage.KNode, []lineage.KEdge, error) {
	return collectProvider(ctx, p.db, `SELECT 'domain:' || m.id::text, m.name, 'dataset:' || dd.dataset_id::text
		FROM domain_datasets dd JOIN domains m ON m.id = dd.domain_id
		WHERE m.workspace_id = $1 AND dd.dataset_id = ANY($2::uuid[]) ORDER BY m.name, dd.dataset_id`, ws, ids, lineage.NodeDomain, lineage.RelMemberOf, false)
}

type issueNodes struct {
	db     *DB
	titles issue.Titles
}

func (issueNodes) Kinds() []lineage.NodeKind { return []lineage.NodeKind{lineage.NodeIssue} }
func (issueNodes) Structural() bool          { return false }

// Nodes gives the datasets' open issues, named by their title in the reader's language
// (rendered at read time from the stored message key; issue nodes are not snapshotted).
func (p issueNodes) Nodes(ctx context.Context, ws string, ids []string) ([]lineage.KNode, []lineage.KEdge, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err := p.db.q(ctx).Query(ctx, `SELECT 'issue:' || i.id::text, i.title, 'dataset:' || i.dataset_id::text, i.title_key, i.title_params
		FROM issues i WHERE i.workspace_id = $1 AND i.dataset_id = ANY($2::uuid[]) AND i.status IN ('open', 'acknowledged')
		ORDER BY i.created_at DESC, i.id LIMIT 2000`, ws, ids)
	if err != nil {
		return nil, nil, translate(err)
	}
	defer rows.Close()
	var nodes []lineage.KNode
	var edges []lineage.KEdge
	for rows.Next() {
		var id, title, ds, key string
		var params map[string]any
		if err := rows.Scan(&id, &title, &ds, &key, &params); err != nil {
			return nil, nil, translate(err)
		}
		nodes = append(nodes, lineage.KNode{ID: id, Kind: lineage.NodeIssue, Name: catalog.RenderTitle(ctx, p.titles, key, params, title)})
		edges = append(edges, lineage.KEdge{Source: id, Target: ds, Kind: lineage.RelMeasures})
	}
	if err := rows.Err(); err != nil {
		return nil, nil, translate(err)
	}
	return nodes, edges, nil
}

type signalNodes struct{ db *DB }

func (signalNodes) Kinds() []lineage.NodeKind { return []lineage.NodeKind{lineage.NodeSignal} }
func (signalNodes) Structural() bool          { return false }
func (p signalNodes) Nodes(ctx context.Context, ws string, ids []string) ([]lineage.KNode, []lineage.KEdge, error) {
	// The last scan's anomalous signals of each dataset.
	return collectProvider(ctx, p.db, `SELECT 'signal:' || s.id::text, s.kind || ':' || s.metric || CASE WHEN s.column_name <> '' THEN ':' || s.column_name ELSE '' END,
		'dataset:' || s.dataset_id::text FROM signals s
		WHERE s.workspace_id = $1 AND s.dataset_id = ANY($2::uuid[]) AND s.anomalous
		  AND s.scan_id = (SELECT p.scan_id FROM dataset_profiles p WHERE p.dataset_id = s.dataset_id ORDER BY p.seq DESC LIMIT 1)
		ORDER BY s.created_at DESC, s.id LIMIT 2000`, ws, ids, lineage.NodeSignal, lineage.RelMeasures, true)
}

// collectProvider reads (node id, name, dataset node id) rows; the edge goes from the
// node to the dataset (measures) or from the dataset to the node (member_of).
func collectProvider(ctx context.Context, db *DB, sql, ws string, ids []string, kind lineage.NodeKind, rel string, fromNode bool) ([]lineage.KNode, []lineage.KEdge, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err := db.q(ctx).Query(ctx, sql, ws, ids)
	if err != nil {
		return nil, nil, translate(err)
	}
	defer rows.Close()
	var nodes []lineage.KNode
	var edges []lineage.KEdge
	seen := map[string]bool{}
	for rows.Next() {
		var id, name, ds string
		if err := rows.Scan(&id, &name, &ds); err != nil {
			return nil, nil, translate(err)
		}
		if !seen[id] {
			seen[id] = true
			nodes = append(nodes, lineage.KNode{ID: id, Kind: kind, Name: name})
		}
		if fromNode {
			edges = append(edges, lineage.KEdge{Source: id, Target: ds, Kind: rel})
		} else {
			edges = append(edges, lineage.KEdge{Source: ds, Target: id, Kind: rel})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, translate(err)
	}
	return nodes, edges, nil
}

// WebhookIncidents answers the webhook feature's incidents port: the open incidents that
// group any of a scan's alerted issues, with the impact fields part 6 carries. Counts come
// from the stored blast radius as the incident view computes them (consumers excluded).
type WebhookIncidents struct{ db *DB }

// WebhookIncidents returns the incidents port for webhooks.
func (db *DB) WebhookIncidents() WebhookIncidents { return WebhookIncidents{db: db} }

// ForIssues returns the incidents that contain any of issueIDs.
func (w WebhookIncidents) ForIssues(ctx context.Context, workspaceID string, issueIDs []string) ([]notify.IncidentImpact, error) {
	if len(issueIDs) == 0 {
		return nil, nil
	}
	rows, err := w.db.q(ctx).Query(ctx, `SELECT id::text, root_dataset_id::text, issue_ids::text[], impact FROM incidents
		WHERE workspace_id = $1 AND issue_ids && $2::uuid[] ORDER BY created_at, id`, workspaceID, issueIDs)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.IncidentImpact, error) {
		var in notify.IncidentImpact
		var raw []byte
		if err := r.Scan(&in.ID, &in.RootDatasetID, &in.IssueIDs, &raw); err != nil {
			return in, err
		}
		var b lineage.Blast
		if err := json.Unmarshal(raw, &b); err != nil {
			return in, err
		}
		scope, cols := b.Scope, b.Columns
		if cols == nil {
			cols = []string{}
		}
		down, downCols, expos := len(b.Nodes), 0, len(b.Exposures)
		for _, n := range b.Nodes {
			downCols += len(n.ViaColumns)
		}
		in.ImpactScope, in.ImpactColumns = &scope, cols
		in.DownstreamCount, in.DownstreamColumnCount, in.ExposuresCount = &down, &downCols, &expos
		return in, nil
	})
	return out, translate(err)
}

// RebuildState returns the workspace's unfinished graph rebuild, if any.
func (s *LineageStore) RebuildState(ctx context.Context, ws string) (lineage.RebuildState, bool, error) {
	st := lineage.RebuildState{WorkspaceID: ws}
	var phase string
	err := s.db.q(ctx).QueryRow(ctx, `SELECT outbox_position, phase, cursor, nodes_written, edges_written, batches,
		started_at, updated_at FROM lineage_rebuilds WHERE workspace_id = $1`, ws).
		Scan(&st.OutboxPosition, &phase, &st.Cursor, &st.NodesWritten, &st.EdgesWritten, &st.Batches, &st.StartedAt, &st.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return lineage.RebuildState{}, false, nil
	}
	if err != nil {
		return lineage.RebuildState{}, false, translate(err)
	}
	st.Phase = lineage.RebuildPhase(phase)
	return st, true, nil
}

// PutRebuildState saves the progress of a graph rebuild.
func (s *LineageStore) PutRebuildState(ctx context.Context, st lineage.RebuildState) error {
	cursor := st.Cursor
	if cursor == nil {
		cursor = []string{}
	}
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO lineage_rebuilds (workspace_id, outbox_position, phase, cursor,
		nodes_written, edges_written, batches, started_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (workspace_id) DO UPDATE SET outbox_position = EXCLUDED.outbox_position, phase = EXCLUDED.phase,
		cursor = EXCLUDED.cursor, nodes_written = EXCLUDED.nodes_written, edges_written = EXCLUDED.edges_written,
		batches = EXCLUDED.batches, started_at = EXCLUDED.started_at, updated_at = EXCLUDED.updated_at`,
		st.WorkspaceID, st.OutboxPosition, string(st.Phase), cursor, st.NodesWritten, st.EdgesWritten, st.Batches,
		st.StartedAt, st.UpdatedAt)
	return translate(err)
}

// DeleteRebuildState ends a graph rebuild.
func (s *LineageStore) DeleteRebuildState(ctx context.Context, ws string) error {
	_, err := s.db.q(ctx).Exec(ctx, `DELETE FROM lineage_rebuilds WHERE workspace_id = $1`, ws)
	return translate(err)
}

// OutboxPosition returns the id of the workspace's last outbox row (0 when empty).
func (s *LineageStore) OutboxPosition(ctx context.Context, ws string) (int64, error) {
	var pos int64
	err := s.db.q(ctx).QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM lineage_outbox WHERE workspace_id = $1`, ws).Scan(&pos)
	return pos, translate(err)
}

// RecordCounts counts the workspace's live datasets, exposures and edges.
func (s *LineageStore) RecordCounts(ctx context.Context, ws string) (lineage.RecordCounts, error) {
	var c lineage.RecordCounts
	err := s.db.q(ctx).QueryRow(ctx, `SELECT
		(SELECT count(*) FROM datasets WHERE workspace_id = $1 AND dropped_at IS NULL),
		(SELECT count(*) FROM lineage_exposures WHERE workspace_id = $1),
		(SELECT count(*) FROM lineage_edges WHERE workspace_id = $1)`, ws).Scan(&c.Datasets, &c.Exposures, &c.Edges)
	return c, translate(err)
}

// nilUUID sorts before every id: the cursor of a page read from the first row.
const nilUUID = "00000000-0000-0000-0000-000000000000"

// DatasetNodesAfter returns up to limit live datasets as graph nodes, by id, after
// the id after ("" = from the first).
func (s *LineageStore) DatasetNodesAfter(ctx context.Context, ws, after string, limit int) ([]lineage.Node, error) {
	if after == "" {
		after = nilUUID
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, schema_name, table_name FROM datasets
		WHERE workspace_id = $1 AND id > $2::uuid AND dropped_at IS NULL ORDER BY id LIMIT $3`, ws, after, limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.Node, error) {
		var id, schema, table string
		err := r.Scan(&id, &schema, &table)
		return lineage.DatasetNode(id, schema, table), err
	})
	return out, translate(err)
}

// ExposureNodesAfter returns up to limit exposures as graph nodes, by exposure id,
// after the exposure id after ("" = from the first).
func (s *LineageStore) ExposureNodesAfter(ctx context.Context, ws, after string, limit int) ([]lineage.Node, error) {
	if after == "" {
		after = nilUUID
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, name, type FROM lineage_exposures
		WHERE workspace_id = $1 AND id > $2::uuid ORDER BY id LIMIT $3`, ws, after, limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.Node, error) {
		var id, name, typ string
		err := r.Scan(&id, &name, &typ)
		return lineage.Node{ID: lineage.ExposureNodeID(id), Kind: lineage.NodeExposure, Name: name, Type: typ}, err
	})
	return out, translate(err)
}

// EdgesAfter returns up to limit edges by (source, target, kind) after the key after
// (the zero key = from the first).
func (s *LineageStore) EdgesAfter(ctx context.Context, ws string, after lineage.EdgeKey, limit int) ([]lineage.Edge, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT source_id, target_id, kind, origin, column_map, column_level, linking_column
		FROM lineage_edges WHERE workspace_id = $1 AND (source_id, target_id, kind) > ($2, $3, $4)
		ORDER BY source_id, target_id, kind LIMIT $5`, ws, after.Source, after.Target, string(after.Kind), limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.Edge, error) {
		var e lineage.Edge
		var cols []byte
		var kind string
		if err := r.Scan(&e.Source, &e.Target, &kind, &e.Origin, &cols, &e.ColumnLevel, &e.LinkingColumn); err != nil {
			return e, err
		}
		e.Kind = lineage.EdgeKind(kind)
		return e, json.Unmarshal(cols, &e.Columns)
	})
	return out, translate(err)
}
