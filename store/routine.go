package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/routine"
)

// RoutineStore implements routine.Store.
type RoutineStore struct{ db *DB }

// Routines returns the routine store.
func (db *DB) Routines() *RoutineStore { return &RoutineStore{db: db} }

var _ routine.Store = (*RoutineStore)(nil)

// TimeZone returns the workspace's time zone.
func (s *RoutineStore) TimeZone(ctx context.Context, workspaceID string) (string, error) {
	var tz string
	err := s.db.q(ctx).QueryRow(ctx, `SELECT timezone FROM workspaces WHERE id = $1`, workspaceID).Scan(&tz)
	return tz, translate(err)
}

// WorkspaceLocale returns the workspace's default locale, "" when not set.
func (s *RoutineStore) WorkspaceLocale(ctx context.Context, workspaceID string) (string, error) {
	var l *string
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT locale FROM workspaces WHERE id = $1`, workspaceID).Scan(&l); err != nil {
		return "", translate(err)
	}
	if l == nil {
		return "", nil
	}
	return *l, nil
}

// States returns the workspace's stored routine states by key.
func (s *RoutineStore) States(ctx context.Context, workspaceID string) (map[string]routine.State, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT key, enabled, next_run_at, last_run_at, last_status, last_result, last_report_id::text
		FROM routines WHERE workspace_id = $1`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]routine.State{}
	for rows.Next() {
		var key string
		var st routine.State
		var result []byte
		if err := rows.Scan(&key, &st.Enabled, &st.NextRunAt, &st.LastRunAt, &st.LastStatus, &result, &st.LastReportID); err != nil {
			return nil, translate(err)
		}
		if result != nil {
			st.LastResult = json.RawMessage(result)
		}
		out[key] = st
	}
	return out, translate(rows.Err())
}

// SetEnabled stores a routine's switch and next run.
func (s *RoutineStore) SetEnabled(ctx context.Context, workspaceID, key string, enabled bool, next *time.Time, by string) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO routines (workspace_id, key, enabled, next_run_at, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5, now())
		ON CONFLICT (workspace_id, key) DO UPDATE SET enabled = $3, next_run_at = $4, updated_by = $5, updated_at = now()`,
		workspaceID, key, enabled, next, by)
	return translate(err)
}

// ClaimDue locks the due routines (skipping those another worker holds) and moves their
// next run.
func (s *RoutineStore) ClaimDue(ctx context.Context, now time.Time, limit int, next func(tz, key string, at time.Time) time.Time) ([]routine.Due, error) {
	q := s.db.q(ctx)
	rows, err := q.Query(ctx, `SELECT r.workspace_id::text, r.key, r.next_run_at, w.timezone FROM routines r JOIN workspaces w ON w.id = r.workspace_id
		WHERE r.enabled AND r.next_run_at <= $1 AND NOT w.suspended
		ORDER BY r.next_run_at, r.workspace_id, r.key LIMIT $2 FOR UPDATE OF r SKIP LOCKED`, now, limit)
	if err != nil {
		return nil, translate(err)
	}
	type claimed struct {
		due routine.Due
		tz  string
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		err := r.Scan(&c.due.WorkspaceID, &c.due.Key, &c.due.RunAt, &c.tz)
		return c, err
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]routine.Due, 0, len(list))
	for _, c := range list {
		// The next run after now: a routine missed while no worker ran runs once.
		n := next(c.tz, c.due.Key, now)
		if _, err := q.Exec(ctx, `UPDATE routines SET next_run_at = $3 WHERE workspace_id = $1 AND key = $2`,
			c.due.WorkspaceID, c.due.Key, n); err != nil {
			return nil, translate(err)
		}
		out = append(out, c.due)
	}
	return out, nil
}

// RecordRun stores a run's outcome.
func (s *RoutineStore) RecordRun(ctx context.Context, workspaceID, key string, at time.Time, status string, result json.RawMessage, reportID *string) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO routines (workspace_id, key, last_run_at, last_status, last_result, last_report_id, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, now())
		ON CONFLICT (workspace_id, key) DO UPDATE SET last_run_at = $3, last_status = $4, last_result = $5, last_report_id = $6`,
		workspaceID, key, at, status, []byte(result), reportID)
	return translate(err)
}

// SLABreaches counts the issues whose resolution target passed in [since, until), by
// severity.
func (s *RoutineStore) SLABreaches(ctx context.Context, workspaceID string, since, until time.Time) (map[string]int, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT severity, count(*) FROM issues
		WHERE workspace_id = $1 AND sla_breached_at >= $2 AND sla_breached_at < $3 GROUP BY severity`, workspaceID, since, until)
	if err != nil {
		return nil, translate(err)
	}
	out := map[string]int{}
	return out, translate(scanInto(rows, out))
}
