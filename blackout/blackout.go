// Package blackout keeps the blackout windows of connections: periods (a maintenance, a
// month-end close, a nightly batch) when Vigia sends the source nothing of its own
// accord. A window is absolute (starts_at and ends_at in UTC) or weekly (days of the
// week, a local start and end time, an IANA zone: the connection's scan time zone unless
// another is given). During one: a scheduled scan is deferred until the window ends, a
// manual scan and an on-demand label-quality run answer 409 blackout_active, a rehearsal
// is blocked with reason blackout, and the after-scan steps that read the source again
// (duplicates, reconciliation checks, label quality) skip that scan.
package blackout

import (
	"context"
	"fmt"
	"slices"
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

// CodeActive is the 409 code of a source-touching request made during a window.
const CodeActive = "blackout_active"

// Weekdays are the names of the days of a weekly window, Sunday first as time.Weekday.
var Weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Window is one blackout period. For a weekly window StartsAt and EndsAt are its
// current occurrence, or the next one (computed when read).
type Window struct {
	StartsAt time.Time
	EndsAt   time.Time
	Note     string
	// Weekly is nil for an absolute window.
	Weekly *Weekly
}

// Weekly is the rule of a weekly window: on each of Days, from Start to End (local
// minutes since midnight, in Timezone). End at or before Start ends the next day. A
// local time that a daylight-saving change skips is read as time.Date does (shifted by
// the gap); one that happens twice is its first instance for a start and its second for
// an end, so the window covers the whole local period.
type Weekly struct {
	Days     []time.Weekday
	Start    int
	End      int
	Timezone string
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
	clock vigia.Clock
}

// NewService returns the blackout service.
func NewService(store Store, conns Connections, clock vigia.Clock) *Service {
	return &Service{store: store, conns: conns, clock: clock}
}

// List returns a connection's windows, by the start of their current or next occurrence
// (another workspace's connection: 404).
func (s *Service) List(ctx context.Context, connectionID string) ([]Window, error) {
	c, err := s.conns.Connection(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	return s.windows(ctx, c.WorkspaceID, c.ID, s.clock.Now())
}

// windows reads a connection's windows, with each weekly one's occurrence at or after
// at (the one in force, else the next), in start order.
func (s *Service) windows(ctx context.Context, workspaceID, connectionID string, at time.Time) ([]Window, error) {
	ws, err := s.store.Blackouts(ctx, workspaceID, connectionID)
	if err != nil {
		return nil, err
	}
	for i := range ws {
		if ws[i].Weekly != nil {
			ws[i].StartsAt, ws[i].EndsAt = ws[i].Weekly.Occurrence(at)
		}
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].StartsAt.Before(ws[j].StartsAt) })
	return ws, nil
}

// ParseClock reads "HH:MM" (00:00-23:59) as minutes since midnight.
func ParseClock(s string) (int, bool) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, false
	}
	return hh*60 + mm, true
}

// FormatClock writes minutes since midnight as "HH:MM".
func FormatClock(min int) string { return fmt.Sprintf("%02d:%02d", min/60, min%60) }

// WeekdayOf reads a day name of Weekdays.
func WeekdayOf(name string) (time.Weekday, bool) {
	i := slices.Index(Weekdays, strings.ToLower(strings.TrimSpace(name)))
	return time.Weekday(i), i >= 0
}

// Replace sets a connection's windows (admin session): an absolute one ends after it
// starts; a weekly one has at least one day, distinct days, valid "HH:MM" times that
// differ, and a known zone (the connection's scan time zone when none is given). At
// most MaxWindows, notes of at most MaxNoteLen characters.
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
		at := func(f string) []string { return []string{"windows", strconv.Itoa(i), f} }
		if w.Weekly != nil {
			wk := *w.Weekly
			if len(wk.Days) == 0 || len(wk.Days) > 7 {
				fields = append(fields, vigia.Field("value_error", nil, at("weekdays")...))
			}
			seen := map[time.Weekday]bool{}
			for _, d := range wk.Days {
				if d < time.Sunday || d > time.Saturday || seen[d] {
					fields = append(fields, vigia.Field("value_error", nil, at("weekdays")...))
					break
				}
				seen[d] = true
			}
			if wk.Start == wk.End || wk.Start < 0 || wk.End < 0 || wk.Start >= 24*60 || wk.End >= 24*60 {
				fields = append(fields, vigia.Field("value_error", nil, at("end_time")...))
			}
			if wk.Timezone == "" {
				wk.Timezone = c.ScanTimezone
			}
			if _, err := time.LoadLocation(wk.Timezone); err != nil || wk.Timezone == "" || wk.Timezone == "Local" {
				fields = append(fields, vigia.Field("value_error", nil, at("timezone")...))
			}
			slices.Sort(wk.Days)
			ws[i].Weekly = &wk
			ws[i].StartsAt, ws[i].EndsAt = time.Time{}, time.Time{}
		} else if !w.EndsAt.After(w.StartsAt) {
			fields = append(fields, vigia.Field("value_error", nil, at("ends_at")...))
		}
		if len([]rune(w.Note)) > MaxNoteLen {
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxNoteLen}, at("note")...))
		}
		ws[i].StartsAt, ws[i].EndsAt, ws[i].Note = ws[i].StartsAt.UTC(), ws[i].EndsAt.UTC(), strings.TrimSpace(w.Note)
	}
	if len(fields) > 0 {
		return nil, vigia.Invalid(fields...)
	}
	if err := s.store.ReplaceBlackouts(ctx, c.WorkspaceID, c.ID, ws); err != nil {
		return nil, err
	}
	return s.windows(ctx, c.WorkspaceID, c.ID, s.clock.Now())
}

// Active returns the window of the connection in force at at, if any, with the
// occurrence in force for a weekly one (the caller already checked the connection).
// When several are in force, the one that ends last.
func (s *Service) Active(ctx context.Context, workspaceID, connectionID string, at time.Time) (*Window, error) {
	ws, err := s.store.Blackouts(ctx, workspaceID, connectionID)
	if err != nil {
		return nil, err
	}
	var out *Window
	for _, w := range ws {
		if w.Weekly != nil {
			start, end, ok := w.Weekly.InForce(at)
			if !ok {
				continue
			}
			w.StartsAt, w.EndsAt = start, end
		} else if at.Before(w.StartsAt) || !at.Before(w.EndsAt) {
			continue
		}
		if out == nil || w.EndsAt.After(out.EndsAt) {
			w := w
			out = &w
		}
	}
	return out, nil
}

// Refuse answers 409 blackout_active (params: ends_at) when a window of the connection
// is in force at at, else nil: for the operations that touch the source on request.
func (s *Service) Refuse(ctx context.Context, workspaceID, connectionID string, at time.Time) error {
	w, err := s.Active(ctx, workspaceID, connectionID, at)
	if err != nil || w == nil {
		return err
	}
	return vigia.Conflict(CodeActive, "error.blackout_active", map[string]any{"ends_at": w.EndsAt.UTC().Format(time.RFC3339)})
}

// InForce returns the occurrence of the weekly window in force at at, if any.
func (w Weekly) InForce(at time.Time) (time.Time, time.Time, bool) {
	loc, err := time.LoadLocation(w.Timezone)
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	local := at.In(loc)
	// An occurrence that ends the next day started on the day before at's.
	for back := 0; back <= 1; back++ {
		start, end := w.occurrenceOn(local.AddDate(0, 0, -back), loc)
		if slices.Contains(w.Days, local.AddDate(0, 0, -back).Weekday()) && !at.Before(start) && at.Before(end) {
			return start.UTC(), end.UTC(), true
		}
	}
	return time.Time{}, time.Time{}, false
}

// Occurrence returns the occurrence in force at at, else the next one to start.
func (w Weekly) Occurrence(at time.Time) (time.Time, time.Time) {
	if s, e, ok := w.InForce(at); ok {
		return s, e
	}
	loc, err := time.LoadLocation(w.Timezone)
	if err != nil || len(w.Days) == 0 {
		return time.Time{}, time.Time{}
	}
	local := at.In(loc)
	for ahead := 0; ahead <= 7; ahead++ {
		day := local.AddDate(0, 0, ahead)
		if !slices.Contains(w.Days, day.Weekday()) {
			continue
		}
		if start, end := w.occurrenceOn(day, loc); start.After(at) {
			return start.UTC(), end.UTC()
		}
	}
	return time.Time{}, time.Time{}
}

// occurrenceOn is the occurrence that starts on day's local date.
func (w Weekly) occurrenceOn(day time.Time, loc *time.Location) (time.Time, time.Time) {
	y, m, d := day.Date()
	start := repeated(time.Date(y, m, d, w.Start/60, w.Start%60, 0, 0, loc), -1)
	endDay := d
	if w.End <= w.Start {
		endDay++
	}
	end := repeated(time.Date(y, m, endDay, w.End/60, w.End%60, 0, 0, loc), 1)
	return start, end
}

// repeated returns t's other instance on the wall clock in the direction dir (-1
// earlier, 1 later) when a daylight-saving change repeats t's local time, else t.
func repeated(t time.Time, dir int) time.Time {
	for _, shift := range []time.Duration{time.Hour, 30 * time.Minute} {
		o := t.Add(time.Duration(dir) * shift).In(t.Location())
		if o.Hour() == t.Hour() && o.Minute() == t.Minute() && o.Day() == t.Day() {
			return o
		}
	}
	return t
}
