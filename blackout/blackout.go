// Package blackout keeps the blackout windows of connections: periods (a maintenance, a
// month-end close) when Vigia sends the source no rehearsal; a rehearsal asked during one
// is blocked with reason blackout. Windows are absolute periods in UTC.
package blackout

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
)

// Bounds.
const (
	MaxWindows = 50
	MaxNoteLen = 200
)

// Window is one blackout period.
type Window struct {
	StartsAt time.Time
	EndsAt   time.Time
	Note     string
}

// Store keeps the windows.
type Store interface {
	Blackouts(ctx context.Context, workspaceID, connectionID string) ([]Window, error)
	ReplaceBlackouts(ctx context.Context, workspaceID, connectionID string, ws []Window) error
}

// Connections finds a connection of the caller's workspace.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
}

// Service keeps and answers blackout windows.
type Service struct {
	store Store
	conns Connections
}

// NewService returns the blackout service.
func NewService(store Store, conns Connections) *Service { return &Service{store: store, conns: conns} }

// List returns a connection's windows, by start (another workspace's connection: 404).
func (s *Service) List(ctx context.Context, connectionID string) ([]Window, error) {
	c, err := s.conns.Connection(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	return s.store.Blackouts(ctx, c.WorkspaceID, c.ID)
}

// Replace sets a connection's windows (admin session): each ends after it starts, at most
// MaxWindows, notes of at most MaxNoteLen characters.
func (s *Service) Replace(ctx context.Context, connectionID string, ws []Window) ([]Window, error) {
	if _, err := vigia.RequireSession(ctx, vigia.RoleAdmin); err != nil {
		return nil, err
	}
	c, err := s.conns.Connection(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	var fields []vigia.FieldError
	if len(ws) > MaxWindows {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxWindows}, "windows"))
	}
	for i, w := range ws {
		if !w.EndsAt.After(w.StartsAt) {
			fields = append(fields, vigia.Field("value_error", nil, "windows", strconv.Itoa(i), "ends_at"))
		}
		if len([]rune(w.Note)) > MaxNoteLen {
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxNoteLen}, "windows", strconv.Itoa(i), "note"))
		}
		ws[i].StartsAt, ws[i].EndsAt, ws[i].Note = w.StartsAt.UTC(), w.EndsAt.UTC(), strings.TrimSpace(w.Note)
	}
	if len(fields) > 0 {
		return nil, vigia.Invalid(fields...)
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].StartsAt.Before(ws[j].StartsAt) })
	if err := s.store.ReplaceBlackouts(ctx, c.WorkspaceID, c.ID, ws); err != nil {
		return nil, err
	}
	return s.store.Blackouts(ctx, c.WorkspaceID, c.ID)
}

// Active returns the window of the connection in force at at, if any (for the
// rehearsals; the caller already checked the connection).
func (s *Service) Active(ctx context.Context, workspaceID, connectionID string, at time.Time) (*Window, error) {
	ws, err := s.store.Blackouts(ctx, workspaceID, connectionID)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if !at.Before(w.StartsAt) && at.Before(w.EndsAt) {
			return &w, nil
		}
	}
	return nil, nil
}
