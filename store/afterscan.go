package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/scan"
)

// RecordSucceeded implements scan.Store: the scan.succeeded event of the outbox.
func (s *ScanStore) RecordSucceeded(ctx context.Context, workspaceID, connectionID, scanID string, at time.Time) error {
	payload, err := json.Marshal(event.ScanSucceeded{ConnectionID: connectionID})
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, scan_id, idempotency_key, payload, created_at)
		VALUES ($1, $2, $3, 'scan', $4, $5, $6, $7, $8) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
		vigia.NewID(), workspaceID, event.TypeScanSucceeded, scanID, scanID,
		event.IdempotencyKey(scanID, scanID, event.TypeScanSucceeded, ""), payload, at)
	return translate(err)
}

// succeededSelect reads scan.succeeded events of scans that still exist: a scan deleted
// with its connection leaves nothing to derive.
const succeededSelect = `SELECT e.id::text, e.workspace_id::text, coalesce(e.payload->>'connection_id', ''), e.scan_id::text,
	e.dispatched_at IS NOT NULL,
	coalesce((SELECT array_agg(c.consumer ORDER BY c.consumer) FROM event_consumers c WHERE c.event_id = e.id), '{}')
	FROM events e JOIN scans sc ON sc.id = e.scan_id`

func scanSucceeded(r pgx.Row) (scan.Succeeded, error) {
	var ev scan.Succeeded
	err := r.Scan(&ev.EventID, &ev.WorkspaceID, &ev.ConnectionID, &ev.ScanID, &ev.Handled, &ev.Consumed)
	return ev, err
}

// SucceededEvent implements scan.Store.
func (s *ScanStore) SucceededEvent(ctx context.Context, scanID string) (scan.Succeeded, error) {
	ev, err := scanSucceeded(s.db.q(ctx).QueryRow(ctx, succeededSelect+` WHERE e.scan_id = $1 AND e.type = $2`,
		scanID, event.TypeScanSucceeded))
	return ev, translate(err)
}

// PendingSucceeded implements scan.Store.
func (s *ScanStore) PendingSucceeded(ctx context.Context, ev scan.Succeeded) ([]scan.Succeeded, error) {
	rows, err := s.db.q(ctx).Query(ctx, succeededSelect+`, events me
		WHERE me.id = $1 AND e.workspace_id = me.workspace_id AND e.type = $2 AND e.dispatched_at IS NULL
		  AND e.payload->>'connection_id' = me.payload->>'connection_id'
		  AND (e.created_at, e.id) <= (me.created_at, me.id)
		ORDER BY e.created_at, e.id`, ev.EventID, event.TypeScanSucceeded)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.Succeeded, error) { return scanSucceeded(r) })
	return out, translate(err)
}

// MarkConsumed implements scan.Store.
func (s *ScanStore) MarkConsumed(ctx context.Context, eventID, consumer string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO event_consumers (event_id, consumer, consumed_at) VALUES ($1, $2, $3)
		ON CONFLICT (event_id, consumer) DO NOTHING`, eventID, consumer, at)
	return translate(err)
}

// MarkHandled implements scan.Store: the event's consumers are done with it.
func (s *ScanStore) MarkHandled(ctx context.Context, eventID string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE events SET dispatched_at = $2 WHERE id = $1 AND dispatched_at IS NULL`, eventID, at)
	return translate(err)
}

// WithConnectionLock implements scan.Store: a transaction of its own holds a
// transaction-scoped advisory lock on the connection while fn runs with ctx (fn's
// writes are not in that transaction).
func (s *ScanStore) WithConnectionLock(ctx context.Context, connectionID string, fn func(ctx context.Context) error) error {
	tx, err := s.db.pool.Begin(ctx)
	if err != nil {
		return translate(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('scan.after:' || $1, 0))`, connectionID); err != nil {
		return translate(err)
	}
	if err := fn(ctx); err != nil {
		return err
	}
	return translate(tx.Commit(ctx))
}
