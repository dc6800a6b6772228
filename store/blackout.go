package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/blackout"
)

// BlackoutStore implements blackout.Store.
type BlackoutStore struct{ db *DB }

// Blackouts returns the store of blackout windows.
func (db *DB) Blackouts() *BlackoutStore { return &BlackoutStore{db: db} }

var _ blackout.Store = (*BlackoutStore)(nil)

// Blackouts implements blackout.Store.
func (s *BlackoutStore) Blackouts(ctx context.Context, ws, connectionID string) ([]blackout.Window, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT starts_at, ends_at, note FROM connection_blackouts
		WHERE workspace_id = $1 AND connection_id = $2 ORDER BY starts_at, position`, ws, connectionID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (blackout.Window, error) {
		var w blackout.Window
		err := r.Scan(&w.StartsAt, &w.EndsAt, &w.Note)
		return w, err
	})
	if out == nil {
		out = []blackout.Window{}
	}
	return out, translate(err)
}

// ReplaceBlackouts implements blackout.Store, in one transaction.
func (s *BlackoutStore) ReplaceBlackouts(ctx context.Context, ws, connectionID string, list []blackout.Window) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		if _, err := q.Exec(ctx, `DELETE FROM connection_blackouts WHERE workspace_id = $1 AND connection_id = $2`, ws, connectionID); err != nil {
			return translate(err)
		}
		for i, w := range list {
			if _, err := q.Exec(ctx, `INSERT INTO connection_blackouts (connection_id, workspace_id, position, starts_at, ends_at, note)
				VALUES ($1, $2, $3, $4, $5, $6)`, connectionID, ws, i+1, w.StartsAt, w.EndsAt, w.Note); err != nil {
				return translate(err)
			}
		}
		return nil
	})
}
