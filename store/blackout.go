package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/blackout"
)

// BlackoutStore implements blackout.Store.
type BlackoutStore struct{ db *DB }

// Blackouts returns the store of blackout windows.
func (db *DB) Blackouts() *BlackoutStore { return &BlackoutStore{db: db} }

var _ blackout.Store = (*BlackoutStore)(nil)

// Blackouts implements blackout.Store: absolute windows with their period, weekly ones
// with their rule (the service computes their occurrences).
func (s *BlackoutStore) Blackouts(ctx context.Context, ws, connectionID string) ([]blackout.Window, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT starts_at, ends_at, note, weekdays, start_minute, end_minute, timezone
		FROM connection_blackouts WHERE workspace_id = $1 AND connection_id = $2 ORDER BY starts_at NULLS LAST, position`, ws, connectionID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (blackout.Window, error) {
		var w blackout.Window
		var starts, ends *time.Time
		var days []int16
		var start, end *int16
		var tz *string
		if err := r.Scan(&starts, &ends, &w.Note, &days, &start, &end, &tz); err != nil {
			return w, err
		}
		if days != nil && start != nil && end != nil && tz != nil {
			wk := &blackout.Weekly{Start: int(*start), End: int(*end), Timezone: *tz}
			for _, d := range days {
				wk.Days = append(wk.Days, time.Weekday(d))
			}
			w.Weekly = wk
		} else if starts != nil && ends != nil {
			w.StartsAt, w.EndsAt = *starts, *ends
		}
		return w, nil
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
			var starts, ends *time.Time
			var days []int16
			var start, end *int16
			var tz *string
			if wk := w.Weekly; wk != nil {
				for _, d := range wk.Days {
					days = append(days, int16(d))
				}
				a, b := int16(wk.Start), int16(wk.End)
				start, end, tz = &a, &b, &wk.Timezone
			} else {
				starts, ends = &w.StartsAt, &w.EndsAt
			}
			if _, err := q.Exec(ctx, `INSERT INTO connection_blackouts (connection_id, workspace_id, position, starts_at, ends_at, note,
				weekdays, start_minute, end_minute, timezone) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
				connectionID, ws, i+1, starts, ends, w.Note, days, start, end, tz); err != nil {
				return translate(err)
			}
		}
		return nil
	})
}
