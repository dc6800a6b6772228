package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/duplicates"
)

// DuplicateStore implements duplicates.Store.
type DuplicateStore struct{ db *DB }

// Duplicates returns the store of duplicate clusters.
func (db *DB) Duplicates() *DuplicateStore { return &DuplicateStore{db: db} }

var _ duplicates.Store = (*DuplicateStore)(nil)

// ConnectionTables implements duplicates.Store.
func (s *DuplicateStore) ConnectionTables(ctx context.Context, ws, connectionID string) ([]catalog.Dataset, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text FROM datasets WHERE workspace_id = $1 AND connection_id = $2
		AND kind = 'table' AND dropped_at IS NULL ORDER BY schema_name, table_name`, ws, connectionID)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ids) == 0 {
		return nil, translate(err)
	}
	details, err := s.db.Catalog().DatasetDetails(ctx, catalog.Viewer{WorkspaceID: ws, TeamIDs: []string{}, Admin: true}, ids, 1)
	if err != nil {
		return nil, err
	}
	out := make([]catalog.Dataset, 0, len(ids))
	for _, id := range ids {
		if d, ok := details[id]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// ReplaceClusters implements duplicates.Store, in one transaction.
func (s *DuplicateStore) ReplaceClusters(ctx context.Context, ws, connectionID string, cs []duplicates.StoredCluster) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		if _, err := q.Exec(ctx, `DELETE FROM duplicate_clusters WHERE workspace_id = $1 AND connection_id = $2`, ws, connectionID); err != nil {
			return translate(err)
		}
		return s.insertClusters(ctx, ws, &connectionID, duplicates.ScopeConnection, cs)
	})
}

// TableConnections implements duplicates.Store.
func (s *DuplicateStore) TableConnections(ctx context.Context, ws string) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT connection_id::text FROM datasets
		WHERE workspace_id = $1 AND kind = 'table' AND dropped_at IS NULL ORDER BY 1`, ws)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, translate(err)
}

// ReplaceWorkspaceClusters implements duplicates.Store, in one transaction under an
// advisory lock on the workspace (scans of two connections may end together).
func (s *DuplicateStore) ReplaceWorkspaceClusters(ctx context.Context, ws string, cs []duplicates.StoredCluster) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		if _, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('duplicates.workspace:' || $1, 0))`, ws); err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `DELETE FROM duplicate_clusters WHERE workspace_id = $1 AND scope = 'workspace'`, ws); err != nil {
			return translate(err)
		}
		return s.insertClusters(ctx, ws, nil, duplicates.ScopeWorkspace, cs)
	})
}

func (s *DuplicateStore) insertClusters(ctx context.Context, ws string, connectionID *string, scope string, cs []duplicates.StoredCluster) error {
	if len(cs) == 0 {
		return nil
	}
	q := s.db.q(ctx)
	var clusters, members [][]any
	for _, c := range cs {
		clusters = append(clusters, []any{c.ID, ws, connectionID, scope, c.Confidence, c.Band, c.ReferencePrecision, c.MatchedOn, c.ComputedAt})
		for _, m := range c.Members {
			members = append(members, []any{c.ID, m.DatasetID, m.RowKey, m.Confidence})
		}
	}
	if _, err := q.CopyFrom(ctx, pgx.Identifier{"duplicate_clusters"}, []string{"id", "workspace_id", "connection_id", "scope", "confidence",
		"band", "reference_precision", "matched_on", "computed_at"}, pgx.CopyFromRows(clusters)); err != nil {
		return translate(err)
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"duplicate_members"}, []string{"cluster_id", "dataset_id", "row_key", "confidence"},
		pgx.CopyFromRows(members))
	return translate(err)
}

// Clusters implements duplicates.Store: clusters with two visible members or more, only
// those members, strongest first.
func (s *DuplicateStore) Clusters(ctx context.Context, v catalog.Viewer, f duplicates.Filter, page vigia.Page) (vigia.List[duplicates.StoredCluster], error) {
	args := []any{v.WorkspaceID, v.TeamIDs, v.Admin}
	where := "c.workspace_id = $1"
	if f.Band != nil {
		args = append(args, *f.Band)
		where += fmt.Sprintf(" AND c.band = $%d", len(args))
	}
	having := ""
	if f.DatasetID != nil {
		args = append(args, *f.DatasetID)
		having = fmt.Sprintf(" AND bool_or(m.dataset_id::text = $%d)", len(args))
	}
	visible := `WITH vis AS (
		SELECT c.id, c.connection_id, c.scope, c.confidence, c.band, c.reference_precision, c.matched_on, c.computed_at,
			array_agg(DISTINCT d.connection_id::text ORDER BY d.connection_id::text) AS connection_ids
		FROM duplicate_clusters c JOIN duplicate_members m ON m.cluster_id = c.id JOIN datasets d ON d.id = m.dataset_id
		WHERE ` + where + ` AND d.dropped_at IS NULL AND ` + VisibleSQL("d.id", 2, 3) + `
		GROUP BY c.id HAVING count(*) >= 2` + having + `)`
	q := s.db.q(ctx)
	var out vigia.List[duplicates.StoredCluster]
	if err := q.QueryRow(ctx, visible+` SELECT count(*) FROM vis`, args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	pargs := append(args, page.Limit, page.Offset)
	rows, err := q.Query(ctx, visible+fmt.Sprintf(` SELECT id::text, connection_id::text, scope, connection_ids, confidence, band, reference_precision, matched_on, computed_at
		FROM vis ORDER BY confidence DESC, id LIMIT $%d OFFSET $%d`, len(pargs)-1, len(pargs)), pargs...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (duplicates.StoredCluster, error) {
		var c duplicates.StoredCluster
		err := r.Scan(&c.ID, &c.ConnectionID, &c.Scope, &c.ConnectionIDs, &c.Confidence, &c.Band, &c.ReferencePrecision, &c.MatchedOn, &c.ComputedAt)
		return c, err
	})
	if err != nil || len(out.Items) == 0 {
		return out, translate(err)
	}
	ids := make([]string, len(out.Items))
	at := map[string]int{}
	for i, c := range out.Items {
		ids[i], at[c.ID] = c.ID, i
	}
	rows, err = q.Query(ctx, `SELECT m.cluster_id::text, m.dataset_id::text, d.connection_id::text, CASE WHEN d.schema_name = '' THEN d.table_name ELSE d.schema_name || '.' || d.table_name END, m.row_key, m.confidence
		FROM duplicate_members m JOIN datasets d ON d.id = m.dataset_id
		WHERE m.cluster_id = ANY($1::uuid[]) AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`
		ORDER BY m.cluster_id, d.schema_name, d.table_name, m.row_key`, ids, v.TeamIDs, v.Admin)
	if err != nil {
		return out, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var cid string
		var m duplicates.StoredMember
		if err := rows.Scan(&cid, &m.DatasetID, &m.ConnectionID, &m.DatasetName, &m.RowKey, &m.Confidence); err != nil {
			return out, translate(err)
		}
		c := &out.Items[at[cid]]
		c.Members = append(c.Members, m)
	}
	return out, translate(rows.Err())
}
