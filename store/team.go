package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/team"
)

// TeamStore implements team.Store.
type TeamStore struct{ db *DB }

// Teams returns the team store.
func (db *DB) Teams() *TeamStore { return &TeamStore{db: db} }

var _ team.Store = (*TeamStore)(nil)

// CreateTeam inserts a team; a taken name is KindConflict.
func (s *TeamStore) CreateTeam(ctx context.Context, t team.Team) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO teams (id, workspace_id, name, created_at) VALUES ($1, $2, $3, $4)`,
		t.ID, t.WorkspaceID, t.Name, t.CreatedAt)
	return translate(err)
}

// Teams lists a workspace's teams by name with their member counts.
func (s *TeamStore) Teams(ctx context.Context, workspaceID string) ([]team.Team, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT t.id::text, t.workspace_id::text, t.name, t.created_at,
		(SELECT count(*) FROM team_members m WHERE m.team_id = t.id)
		FROM teams t WHERE t.workspace_id = $1 ORDER BY lower(t.name), t.id`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (team.Team, error) {
		var t team.Team
		err := r.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.CreatedAt, &t.MemberCount)
		return t, err
	})
	if out == nil {
		out = []team.Team{}
	}
	return out, translate(err)
}

// TeamByID returns a team of the workspace with its members.
func (s *TeamStore) TeamByID(ctx context.Context, workspaceID, id string) (team.Team, error) {
	var t team.Team
	err := s.db.q(ctx).QueryRow(ctx, `SELECT id::text, workspace_id::text, name, created_at FROM teams WHERE id = $1 AND workspace_id = $2`,
		id, workspaceID).Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.CreatedAt)
	if err != nil {
		return t, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT u.id::text, u.email, u.role FROM team_members m JOIN users u ON u.id = m.user_id
		WHERE m.team_id = $1 ORDER BY lower(u.email), u.id`, id)
	if err != nil {
		return t, translate(err)
	}
	t.Members, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (team.Member, error) {
		var m team.Member
		var role string
		err := r.Scan(&m.UserID, &m.Email, &role)
		m.Role = vigia.Role(role)
		return m, err
	})
	if t.Members == nil {
		t.Members = []team.Member{}
	}
	t.MemberCount = len(t.Members)
	return t, translate(err)
}

// RenameTeam renames a team of the workspace.
func (s *TeamStore) RenameTeam(ctx context.Context, workspaceID, id, name string) error {
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE teams SET name = $3 WHERE id = $1 AND workspace_id = $2`, id, workspaceID, name)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// DeleteTeam deletes a team of the workspace (members, grants and assignments go with it).
func (s *TeamStore) DeleteTeam(ctx context.Context, workspaceID, id string) error {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM teams WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// UserRef finds a user of the workspace by id or e-mail (case-insensitive).
func (s *TeamStore) UserRef(ctx context.Context, workspaceID, ref string) (string, error) {
	var id string
	var err error
	if vigia.ValidID(ref) {
		err = s.db.q(ctx).QueryRow(ctx, `SELECT id::text FROM users WHERE id = $1 AND workspace_id = $2`, ref, workspaceID).Scan(&id)
	} else {
		err = s.db.q(ctx).QueryRow(ctx, `SELECT id::text FROM users WHERE lower(email) = $1 AND workspace_id = $2 ORDER BY id LIMIT 1`,
			strings.ToLower(ref), workspaceID).Scan(&id)
	}
	return id, translate(err)
}

// AddMember adds a user to a team; twice is once.
func (s *TeamStore) AddMember(ctx context.Context, teamID, userID string) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, teamID, userID)
	return translate(err)
}

// RemoveMember removes a user from a team and reports whether they were a member.
func (s *TeamStore) RemoveMember(ctx context.Context, teamID, userID string) (bool, error) {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM team_members WHERE team_id = $1 AND user_id = $2`, teamID, userID)
	return tag.RowsAffected() > 0, translate(err)
}
