package oncall

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// Bounds of a rota.
const (
	maxRotaLevels  = 10
	maxRotaMinutes = 7 * 24 * 60
)

// Rota is a workspace's on-call rota: an open problem of at least MinSeverity that
// nobody acknowledges moves, after each level's minutes, to the next person, and after
// the last level goes up to Team (when set) or is reported exhausted.
type Rota struct {
	WorkspaceID string
	Levels      []RotaLevel
	TeamID      *string
	MinSeverity string // warning or critical
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// RotaLevel is one level: who is on call and how many minutes they have to acknowledge.
type RotaLevel struct {
	UserID  string `json:"user_id"`
	Minutes int    `json:"minutes"`
}

// RotaInput sets the rota; MinSeverity nil is critical.
type RotaInput struct {
	Levels      []RotaLevel
	TeamID      *string
	MinSeverity *string
}

// OnCallRota returns the workspace's rota (admin sessions): KindNotFound when none is
// set, KindForbidden for tokens and non-admins.
func (s *Service) OnCallRota(ctx context.Context) (Rota, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Rota{}, err
	}
	return s.store.Rota(ctx, p.WorkspaceID)
}

// SetOnCallRota replaces the workspace's rota (admin sessions). It returns KindInvalid
// for no level, more than 10, minutes outside 1-10080 or a bad severity, KindNotFound for
// a person or team not in the workspace, KindForbidden for tokens and non-admins.
func (s *Service) SetOnCallRota(ctx context.Context, in RotaInput) (Rota, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Rota{}, err
	}
	r := Rota{WorkspaceID: p.WorkspaceID, Levels: in.Levels, TeamID: in.TeamID, MinSeverity: notify.SeverityCritical}
	if in.MinSeverity != nil {
		r.MinSeverity = *in.MinSeverity
	}
	var fields []vigia.FieldError
	switch n := len(in.Levels); {
	case n == 0:
		fields = append(fields, field("too_short", map[string]any{"min_length": 1}, "levels"))
	case n > maxRotaLevels:
		fields = append(fields, field("too_long", map[string]any{"max_length": maxRotaLevels}, "levels"))
	}
	var users []string
	for _, l := range in.Levels {
		if !vigia.ValidID(l.UserID) {
			fields = append(fields, field("uuid_parsing", nil, "levels", "user_id"))
			break
		}
		if l.Minutes < 1 || l.Minutes > maxRotaMinutes {
			fields = append(fields, field("less_than_equal", map[string]any{"ge": 1, "le": maxRotaMinutes}, "levels", "minutes"))
			break
		}
		if !slices.Contains(users, l.UserID) {
			users = append(users, l.UserID)
		}
	}
	if r.MinSeverity != notify.SeverityWarning && r.MinSeverity != notify.SeverityCritical {
		fields = append(fields, field("enum", nil, "min_severity"))
	}
	if r.TeamID != nil && !vigia.ValidID(*r.TeamID) {
		fields = append(fields, field("uuid_parsing", nil, "team_id"))
	}
	if len(fields) > 0 {
		return Rota{}, vigia.Invalid(fields...)
	}
	if err := vigia.CheckRefs(ctx, s.store, p.WorkspaceID,
		append(vigia.RefsOf(vigia.RefUser, users...), vigia.RefOf(vigia.RefTeam, r.TeamID)...)...); err != nil {
		return Rota{}, err
	}
	now := s.clock.Now()
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		if r, err = s.store.SaveRota(ctx, r, now); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "oncall_rota.set", "oncall_rota", p.WorkspaceID,
			map[string]any{"levels": len(r.Levels)}, now)
	})
	return r, err
}

// DeleteOnCallRota removes the rota: open problems stop escalating (admin sessions).
// KindNotFound when none is set.
func (s *Service) DeleteOnCallRota(ctx context.Context) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return err
	}
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteRota(ctx, p.WorkspaceID); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "oncall_rota.delete", "oncall_rota", p.WorkspaceID, nil, s.clock.Now())
	})
}

// EscalationCandidate is an open problem on a rota, with where it stands.
type EscalationCandidate struct {
	Issue      notify.AlertIssue
	Rota       Rota
	Level      int
	LevelSince time.Time
}

// escalationBatch bounds the problems one pass looks at.
const escalationBatch = 500

// Escalate moves every open, unacknowledged problem whose level's minutes have run out
// to the next level of its workspace's rota, or past the last level (to the rota's team,
// or exhausted), and sends service.escalation to the channels that receive its alerts
// (scope and mutes respected), in one transaction per pass. A problem moves at most one
// level per pass; levels are timed from when the previous one started, so a late pass
// does not shorten the next level. It returns how many problems moved.
func (s *Service) Escalate(ctx context.Context) (int, error) {
	moved := 0
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		cands, err := s.store.EscalationCandidates(ctx, escalationBatch)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		var notices []notify.IssueNotice
		for _, c := range cands {
			levels := c.Rota.Levels
			if c.Level >= len(levels) {
				c.Level = len(levels) - 1
			}
			due := c.LevelSince.Add(time.Duration(levels[c.Level].Minutes) * time.Minute)
			if now.Before(due) {
				continue
			}
			next := c.Level + 1
			exhausted := next >= len(levels)
			notices = append(notices, escalationNotice(c, next, exhausted, now))
			if err := s.store.SaveEscalation(ctx, c.Issue.ID, c.Rota.WorkspaceID, min(next, len(levels)), due, exhausted, now); err != nil {
				return err
			}
			moved++
		}
		return s.notices.SendIssueNotices(ctx, notices)
	})
	return moved, err
}

// escalationNotice is service.escalation for a problem moving to level (or past the
// last level when exhausted).
func escalationNotice(c EscalationCandidate, level int, exhausted bool, now time.Time) notify.IssueNotice {
	is := c.Issue
	minutes := int(now.Sub(is.CreatedAt).Minutes())
	esc := &delivery.Escalation{IssueID: is.ID, Level: level, Exhausted: exhausted}
	params := map[string]any{"issue_id": is.ID, "level": level, "minutes_unacked": minutes}
	code, key, source := delivery.CodeEscalationLevel, "webhook.escalation_level", "escalation:"+is.ID+":"+strconv.Itoa(level)
	vars := map[string]any{"level": level, "minutes": minutes}
	switch {
	case exhausted && c.Rota.TeamID != nil:
		code, key, source = delivery.CodeEscalationTeam, "webhook.escalation_team", "escalation:"+is.ID+":team"
		params["team_id"] = *c.Rota.TeamID
	case exhausted:
		esc.Level = level - 1
		params["level"] = level - 1
		vars["level"] = level - 1
		code, key, source = delivery.CodeEscalationExhausted, "webhook.escalation_exhausted", "escalation:"+is.ID+":exhausted"
	default:
		u := c.Rota.Levels[level].UserID
		esc.UserID = &u
	}
	return notify.IssueNotice{WorkspaceID: c.Rota.WorkspaceID, Issue: is, Event: delivery.EventEscalation, Code: code,
		Params: params, MessageKey: key, Vars: vars, SourceKey: source, Escalation: esc, At: now}
}
