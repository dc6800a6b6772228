// Package team holds a workspace's teams and their members. Teams own issues
// (assignee_team_id), receive grants on domains, and a person's teams ride in their
// principal (vigia.Principal.TeamIDs) from the next request on.
package team

import (
	"context"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// MaxName is the longest team name.
const MaxName = 100

// Team is a group of people of one workspace.
type Team struct {
	ID          string
	WorkspaceID string
	Name        string
	CreatedAt   time.Time
	// Members is filled by Team (one team), not by lists; MemberCount always.
	Members     []Member
	MemberCount int
}

// Member is a person of a team.
type Member struct {
	UserID string
	Email  string
	Role   vigia.Role
}

// Store is the persistence teams need; every method is scoped to a workspace.
type Store interface {
	// ManagedByConfig tells the teams configuration as code manages.
	vigia.ManagedLookup
	CreateTeam(ctx context.Context, t Team) error
	Teams(ctx context.Context, workspaceID string) ([]Team, error)
	// TeamByID returns a team with its members; KindNotFound when absent.
	TeamByID(ctx context.Context, workspaceID, id string) (Team, error)
	RenameTeam(ctx context.Context, workspaceID, id, name string) error
	DeleteTeam(ctx context.Context, workspaceID, id string) error
	// UserRef returns the id of a user of the workspace by id or e-mail; KindNotFound
	// when absent.
	UserRef(ctx context.Context, workspaceID, ref string) (string, error)
	AddMember(ctx context.Context, teamID, userID string) error
	RemoveMember(ctx context.Context, teamID, userID string) (bool, error)
}

// Service manages teams for the principal in ctx: every principal reads them, only a
// workspace administrator's session changes them. A team configuration as code manages
// is changed only by `vigia apply`: its rename, deletion and member changes answer
// KindConflict (managed_by_config) otherwise.
type Service struct {
	store Store
	clock vigia.Clock
}

// NewService returns the team service.
func NewService(store Store, clock vigia.Clock) *Service { return &Service{store: store, clock: clock} }

// CreateTeam adds a team. Administrator sessions only (tokens get token_read_only,
// others forbidden); KindInvalid for an empty or too long name, KindConflict
// (team_name_taken) when the workspace has a team of that name.
func (s *Service) CreateTeam(ctx context.Context, name string) (Team, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Team{}, err
	}
	name, err = checkName(name)
	if err != nil {
		return Team{}, err
	}
	t := Team{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Name: name, CreatedAt: s.clock.Now(), Members: []Member{}}
	if err := s.store.CreateTeam(ctx, t); err != nil {
		return Team{}, nameTaken(err)
	}
	return t, nil
}

// Teams lists the workspace's teams by name.
func (s *Service) Teams(ctx context.Context) ([]Team, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.Teams(ctx, p.WorkspaceID)
}

// Team returns a team with its members; KindNotFound for another workspace's.
func (s *Service) Team(ctx context.Context, id string) (Team, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Team{}, err
	}
	if !vigia.ValidID(id) {
		return Team{}, vigia.NotFound()
	}
	return s.store.TeamByID(ctx, p.WorkspaceID, id)
}

// RenameTeam renames a team; same callers and errors as CreateTeam, plus KindNotFound.
func (s *Service) RenameTeam(ctx context.Context, id, name string) (Team, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Team{}, err
	}
	if !vigia.ValidID(id) {
		return Team{}, vigia.NotFound()
	}
	if name, err = checkName(name); err != nil {
		return Team{}, err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedTeam, id); err != nil {
		return Team{}, err
	}
	if err := s.store.RenameTeam(ctx, p.WorkspaceID, id, name); err != nil {
		return Team{}, nameTaken(err)
	}
	return s.store.TeamByID(ctx, p.WorkspaceID, id)
}

// DeleteTeam deletes a team: its issues lose their assignee and its domain grants go.
// Administrator sessions only; KindNotFound for another workspace's team.
func (s *Service) DeleteTeam(ctx context.Context, id string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return err
	}
	if !vigia.ValidID(id) {
		return vigia.NotFound()
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedTeam, id); err != nil {
		return err
	}
	return s.store.DeleteTeam(ctx, p.WorkspaceID, id)
}

// AddMember adds a person of the workspace, by user id or e-mail, to a team (adding a
// member twice changes nothing). Administrator sessions only; KindNotFound for an unknown
// team or person, or one of another workspace.
func (s *Service) AddMember(ctx context.Context, teamID, userRef string) (Team, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Team{}, err
	}
	if !vigia.ValidID(teamID) {
		return Team{}, vigia.NotFound()
	}
	if _, err := s.store.TeamByID(ctx, p.WorkspaceID, teamID); err != nil {
		return Team{}, err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedTeam, teamID); err != nil {
		return Team{}, err
	}
	userRef = strings.TrimSpace(userRef)
	if userRef == "" || len(userRef) > 320 {
		return Team{}, vigia.Invalid(vigia.Field("missing", nil, "user"))
	}
	userID, err := s.store.UserRef(ctx, p.WorkspaceID, userRef)
	if err != nil {
		return Team{}, err
	}
	if err := s.store.AddMember(ctx, teamID, userID); err != nil {
		return Team{}, err
	}
	return s.store.TeamByID(ctx, p.WorkspaceID, teamID)
}

// RemoveMember takes a person out of a team. Administrator sessions only; KindNotFound
// when the team does not exist or the person is not a member.
func (s *Service) RemoveMember(ctx context.Context, teamID, userID string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return err
	}
	if !vigia.ValidID(teamID) || !vigia.ValidID(userID) {
		return vigia.NotFound()
	}
	if _, err := s.store.TeamByID(ctx, p.WorkspaceID, teamID); err != nil {
		return err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedTeam, teamID); err != nil {
		return err
	}
	ok, err := s.store.RemoveMember(ctx, teamID, userID)
	if err != nil {
		return err
	}
	if !ok {
		return vigia.NotFound()
	}
	return nil
}

func checkName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", vigia.Invalid(vigia.Field("string_too_short", map[string]any{"min_length": 1}, "name"))
	case len([]rune(name)) > MaxName:
		return "", vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": MaxName}, "name"))
	}
	return name, nil
}

func nameTaken(err error) error {
	if vigia.IsKind(err, vigia.KindConflict) {
		return vigia.Conflict("team_name_taken", "error.team_name_taken", nil)
	}
	return err
}
