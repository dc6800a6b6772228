package store

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/plan"
)

// SettingsStore implements identity.SettingsStore and plan.Store: workspace and
// account settings, the plan and what its quotas count.
type SettingsStore struct{ db *DB }

// Settings returns the settings store.
func (db *DB) Settings() *SettingsStore { return &SettingsStore{db: db} }

var (
	_ identity.SettingsStore = (*SettingsStore)(nil)
	_ plan.Store             = (*SettingsStore)(nil)
)

// UpdateWorkspaceLocale sets the workspace's default locale and time zone.
func (s *SettingsStore) UpdateWorkspaceLocale(ctx context.Context, workspaceID string, locale *string, timezone string) error {
	return s.exec1(ctx, `UPDATE workspaces SET locale = $2, timezone = $3 WHERE id = $1`, workspaceID, locale, timezone)
}

// UpdateWorkspaceCurrency sets the workspace's currency (nil: EUR).
func (s *SettingsStore) UpdateWorkspaceCurrency(ctx context.Context, workspaceID string, currency *string) error {
	return s.exec1(ctx, `UPDATE workspaces SET currency = $2 WHERE id = $1`, workspaceID, currency)
}

// UpdateWorkspacePlan sets the workspace's plan.
func (s *SettingsStore) UpdateWorkspacePlan(ctx context.Context, workspaceID string, p plan.Plan) error {
	return s.exec1(ctx, `UPDATE workspaces SET plan = $2 WHERE id = $1`, workspaceID, string(p))
}

// UserByID returns a person of the workspace.
func (s *SettingsStore) UserByID(ctx context.Context, workspaceID, userID string) (identity.User, error) {
	var u identity.User
	if !vigia.ValidID(userID) {
		return u, vigia.NotFound()
	}
	err := s.db.q(ctx).QueryRow(ctx, `SELECT id::text, workspace_id::text, email, role, locale, timezone, created_at
		FROM users WHERE workspace_id = $1 AND id = $2`, workspaceID, userID).
		Scan(&u.ID, &u.WorkspaceID, &u.Email, &u.Role, &u.Locale, &u.Timezone, &u.CreatedAt)
	return u, translate(err)
}

// UpdateUserSettings writes a person's locale and time zone.
func (s *SettingsStore) UpdateUserSettings(ctx context.Context, workspaceID, userID string, locale, timezone *string) error {
	return s.exec1(ctx, `UPDATE users SET locale = $3, timezone = $4 WHERE workspace_id = $1 AND id = $2`,
		workspaceID, userID, locale, timezone)
}

// WorkspacePlan returns the workspace's plan.
func (s *SettingsStore) WorkspacePlan(ctx context.Context, workspaceID string) (plan.Plan, error) {
	var p plan.Plan
	err := s.db.q(ctx).QueryRow(ctx, `SELECT plan FROM workspaces WHERE id = $1`, workspaceID).Scan(&p)
	return p, translate(err)
}

// CountDatasets counts the workspace's datasets (those discovery still finds).
func (s *SettingsStore) CountDatasets(ctx context.Context, workspaceID string) (int, error) {
	var n int
	err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM datasets WHERE workspace_id = $1 AND dropped_at IS NULL`, workspaceID).Scan(&n)
	return n, translate(err)
}

// CountScansSince counts the scans the workspace requested since t.
func (s *SettingsStore) CountScansSince(ctx context.Context, workspaceID string, t time.Time) (int, error) {
	var n int
	err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM scans WHERE workspace_id = $1 AND created_at >= $2`, workspaceID, t).Scan(&n)
	return n, translate(err)
}

func (s *SettingsStore) exec1(ctx context.Context, q string, args ...any) error {
	tag, err := s.db.q(ctx).Exec(ctx, q, args...)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}
