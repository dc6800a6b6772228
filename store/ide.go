package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/ide"
)

// IDEStore implements ide.Store.
type IDEStore struct{ db *DB }

// IDE returns the editor metadata store.
func (db *DB) IDE() *IDEStore { return &IDEStore{db: db} }

var _ ide.Store = (*IDEStore)(nil)

// DatasetsNamed finds the viewer's live datasets by table and optional schema, ignoring
// case (the datasets_lower_name index).
func (s *IDEStore) DatasetsNamed(ctx context.Context, v catalog.Viewer, schema *string, table string) ([]ide.Candidate, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.connection_id::text, c.name, d.schema_name, d.table_name, d.kind
		FROM datasets d JOIN connections c ON c.id = d.connection_id
		WHERE d.workspace_id = $1 AND lower(d.table_name) = lower($4) AND ($5::text IS NULL OR lower(d.schema_name) = lower($5))
			AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`
		ORDER BY c.name, d.schema_name, d.table_name, d.id LIMIT 50`, v.WorkspaceID, v.TeamIDs, v.Admin, table, schema)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ide.Candidate, error) {
		var c ide.Candidate
		err := r.Scan(&c.ID, &c.ConnectionID, &c.ConnectionName, &c.Schema, &c.Table, &c.Kind)
		return c, err
	})
	return out, translate(err)
}
