package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/plan"
)

// IdentityStore implements identity.Store.
type IdentityStore struct{ db *DB }

// Identity returns the identity store.
func (db *DB) Identity() *IdentityStore { return &IdentityStore{db: db} }

var _ identity.Store = (*IdentityStore)(nil)

// CreateWorkspace inserts a workspace; KindConflict when the name is taken.
func (s *IdentityStore) CreateWorkspace(ctx context.Context, w identity.Workspace) error {
	p := w.Plan
	if p == "" {
		p = plan.Default
	}
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO workspaces (id, name, data_country, locale, timezone, currency, plan, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, w.ID, w.Name, w.DataCountry, w.Locale, w.Timezone, w.Currency, string(p), w.CreatedAt)
	return translate(err)
}

// WorkspaceByRef finds a workspace by id or by name.
func (s *IdentityStore) WorkspaceByRef(ctx context.Context, ref string) (identity.Workspace, error) {
	var w identity.Workspace
	q := `SELECT id::text, name, data_country, locale, timezone, suspended, currency, plan, created_at FROM workspaces WHERE `
	var row pgx.Row
	if vigia.ValidID(ref) {
		row = s.db.q(ctx).QueryRow(ctx, q+`id = $1`, ref)
	} else {
		row = s.db.q(ctx).QueryRow(ctx, q+`name = $1`, ref)
	}
	err := row.Scan(&w.ID, &w.Name, &w.DataCountry, &w.Locale, &w.Timezone, &w.Suspended, &w.Currency, &w.Plan, &w.CreatedAt)
	return w, translate(err)
}

// CreateUser inserts a person.
func (s *IdentityStore) CreateUser(ctx context.Context, u identity.User) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO users (id, workspace_id, email, role, locale, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, u.ID, u.WorkspaceID, u.Email, string(u.Role), u.Locale, u.CreatedAt)
	return translate(err)
}

// CreateSession inserts a session by the hash of its secret.
func (s *IdentityStore) CreateSession(ctx context.Context, sess identity.Session, hash []byte) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO sessions (id, workspace_id, user_id, token_hash, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, sess.ID, sess.WorkspaceID, sess.UserID, hash, sess.ExpiresAt)
	return translate(err)
}

// CreateAPIToken inserts a token by the hash of its secret.
func (s *IdentityStore) CreateAPIToken(ctx context.Context, t identity.APIToken, hash []byte) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO api_tokens (id, workspace_id, name, token_hash, created_by, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.ID, t.WorkspaceID, t.Name, hash, t.CreatedBy, t.CreatedAt, t.ExpiresAt)
	return translate(err)
}

// RevokeAPIToken revokes a live token of the workspace.
func (s *IdentityStore) RevokeAPIToken(ctx context.Context, workspaceID string, hash []byte, at time.Time) (identity.APIToken, error) {
	var t identity.APIToken
	err := s.db.q(ctx).QueryRow(ctx, `UPDATE api_tokens SET revoked_at = $3
		WHERE workspace_id = $1 AND token_hash = $2 AND revoked_at IS NULL
		RETURNING id::text, workspace_id::text, name, created_by, created_at, last_used_at, revoked_at, expires_at`,
		workspaceID, hash, at).Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.CreatedBy, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt, &t.ExpiresAt)
	return t, translate(err)
}

// CredentialByHash resolves a live API token or session.
func (s *IdentityStore) CredentialByHash(ctx context.Context, hash []byte, now time.Time) (identity.Credential, error) {
	var c identity.Credential
	err := s.db.q(ctx).QueryRow(ctx, `
		SELECT t.id::text, t.workspace_id::text, '', 'viewer', NULL::text, w.locale, w.suspended, t.last_used_at,
		       coalesce(t.expires_at <= $2, false), t.expires_at
		  FROM api_tokens t JOIN workspaces w ON w.id = t.workspace_id
		 WHERE t.token_hash = $1 AND t.revoked_at IS NULL
		UNION ALL
		SELECT s.id::text, s.workspace_id::text, u.id::text, u.role, u.locale, w.locale, w.suspended, NULL, s.expires_at <= $2, s.expires_at
		  FROM sessions s JOIN users u ON u.id = s.user_id JOIN workspaces w ON w.id = s.workspace_id
		 WHERE s.token_hash = $1 AND s.revoked_at IS NULL`, hash, now).
		Scan(&c.ID, &c.WorkspaceID, &c.UserID, &c.Role, &c.UserLocale, &c.WorkspaceLocale, &c.WorkspaceSuspended, &c.LastUsedAt, &c.Expired, &c.ExpiresAt)
	if err != nil {
		return c, translate(err)
	}
	if c.UserID != "" {
		rows, err := s.db.q(ctx).Query(ctx, `SELECT team_id::text FROM team_members WHERE user_id = $1`, c.UserID)
		if err != nil {
			return c, translate(err)
		}
		c.TeamIDs, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return c, translate(err)
		}
	}
	return c, nil
}

// TouchAPIToken records a token's use unless a use after notBefore is already recorded.
func (s *IdentityStore) TouchAPIToken(ctx context.Context, id string, at, notBefore time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE api_tokens SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`, id, at, notBefore)
	return translate(err)
}

// APITokens lists a workspace's tokens, newest first.
func (s *IdentityStore) APITokens(ctx context.Context, workspaceID string) ([]identity.APIToken, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, workspace_id::text, name, created_by, created_at, last_used_at, revoked_at, expires_at
		FROM api_tokens WHERE workspace_id = $1 ORDER BY created_at DESC`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (identity.APIToken, error) {
		var t identity.APIToken
		err := r.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.CreatedBy, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt, &t.ExpiresAt)
		return t, err
	})
	return ts, translate(err)
}

// AddActivity appends to the workspace activity log.
func (s *IdentityStore) AddActivity(ctx context.Context, a event.Activity) error {
	return s.db.AddActivity(ctx, a)
}

// AddActivity appends an entry to the workspace activity log, in the transaction in
// ctx when there is one: the one insert of the audit trail. An entry without an id
// is given a new one.
func (db *DB) AddActivity(ctx context.Context, a event.Activity) error {
	if a.ID == "" {
		a.ID = vigia.NewID()
	}
	if a.Details == nil {
		a.Details = map[string]any{}
	}
	d, err := json.Marshal(a.Details)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = db.q(ctx).Exec(ctx, `INSERT INTO activity_log (id, workspace_id, actor, action, subject_type, subject_id, details, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, a.ID, a.WorkspaceID, a.Actor, a.Action, a.SubjectType, a.SubjectID, d, a.CreatedAt)
	return translate(err)
}

// Activities lists the activity log, newest first.
func (s *IdentityStore) Activities(ctx context.Context, workspaceID string, page vigia.Page) (vigia.List[event.Activity], error) {
	var out vigia.List[event.Activity]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM activity_log WHERE workspace_id = $1`, workspaceID).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, workspace_id::text, actor, action, subject_type, subject_id, details, created_at
		FROM activity_log WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, workspaceID, page.Limit, page.Offset)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (event.Activity, error) {
		var a event.Activity
		err := r.Scan(&a.ID, &a.WorkspaceID, &a.Actor, &a.Action, &a.SubjectType, &a.SubjectID, &a.Details, &a.CreatedAt)
		return a, err
	})
	return out, translate(err)
}

// credentialChannel is where the database announces the changes that end or alter a
// cached credential (triggers of migration 00068 on api_tokens and workspaces).
const credentialChannel = "vigia_credentials"

// WatchCredentials implements identity.CredentialWatcher with LISTEN on a dedicated
// connection (not one of the pool's).
func (s *IdentityStore) WatchCredentials(ctx context.Context, ready func(), changed func(key string)) error {
	conn, err := pgx.ConnectConfig(ctx, s.db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("store: listen: %w", redact(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+credentialChannel); err != nil {
		return translate(err)
	}
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return translate(err)
		}
		changed(n.Payload)
	}
}
