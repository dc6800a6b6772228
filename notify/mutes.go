package notify

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// maxMuteDuration bounds how long a mute may hold.
const maxMuteDuration = 366 * 24 * time.Hour

// MuteInput is a new alert mute: scope workspace, connection (ConnectionID), dataset
// (DatasetID) or issue_types (IssueTypes, e.g. anomaly or policy_violation), until EndsAt.
type MuteInput struct {
	Scope        string
	ConnectionID *string
	DatasetID    *string
	IssueTypes   []string
	EndsAt       time.Time
	Reason       string
}

// CreateMute adds an alert mute (session of an admin or member). Until it ends it holds
// back the deliveries part 6 says it covers; held items stay in the notification list.
// It returns KindInvalid for a bad scope or an end not in the next year, KindNotFound
// for a connection or dataset the caller cannot see, KindForbidden for tokens and
// viewers.
func (s *Service) CreateMute(ctx context.Context, in MuteInput) (Mute, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Mute{}, err
	}
	now := s.clock.Now()
	m := Mute{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Scope: in.Scope, Reason: strings.TrimSpace(in.Reason),
		EndsAt: in.EndsAt.UTC(), CreatedBy: actor(p), CreatedAt: now}
	var fields []vigia.FieldError
	switch in.Scope {
	case MuteWorkspace:
	case MuteConnection:
		if in.ConnectionID == nil {
			fields = append(fields, field("missing", nil, "connection_id"))
		} else if !vigia.ValidID(*in.ConnectionID) {
			fields = append(fields, field("uuid_parsing", nil, "connection_id"))
		}
		m.ConnectionID = in.ConnectionID
	case MuteDataset:
		if in.DatasetID == nil {
			fields = append(fields, field("missing", nil, "dataset_id"))
		} else if !vigia.ValidID(*in.DatasetID) {
			fields = append(fields, field("uuid_parsing", nil, "dataset_id"))
		}
		m.DatasetID = in.DatasetID
	case MuteIssueTypes:
		if len(in.IssueTypes) == 0 {
			fields = append(fields, field("missing", nil, "issue_types"))
		}
		for _, t := range in.IssueTypes {
			if !issueTypeRE.MatchString(t) {
				fields = append(fields, field("string_pattern_mismatch", nil, "issue_types"))
				break
			}
			if !slices.Contains(m.IssueTypes, t) {
				m.IssueTypes = append(m.IssueTypes, t)
			}
		}
		if len(in.IssueTypes) > maxIssueTypes {
			fields = append(fields, field("too_long", map[string]any{"max_length": maxIssueTypes}, "issue_types"))
		}
	default:
		fields = append(fields, field("enum", nil, "scope"))
	}
	if in.Scope != MuteConnection && in.ConnectionID != nil || in.Scope != MuteDataset && in.DatasetID != nil ||
		in.Scope != MuteIssueTypes && len(in.IssueTypes) > 0 {
		fields = append(fields, field("value_error", nil, "scope"))
	}
	if !m.EndsAt.After(now) || m.EndsAt.Sub(now) > maxMuteDuration {
		fields = append(fields, field("value_error", nil, "ends_at"))
	}
	if len([]rune(m.Reason)) > 500 {
		fields = append(fields, field("string_too_long", map[string]any{"max_length": 500}, "reason"))
	}
	if len(fields) > 0 {
		return Mute{}, vigia.Invalid(fields...)
	}
	sc := Scope{}
	if m.ConnectionID != nil {
		sc.ConnectionIDs = []string{*m.ConnectionID}
	}
	if m.DatasetID != nil {
		sc.DatasetIDs = []string{*m.DatasetID}
	}
	ok, err := s.store.ScopeVisible(ctx, viewerOf(p), sc)
	if err != nil {
		return Mute{}, err
	}
	if !ok {
		return Mute{}, vigia.NotFound()
	}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateMute(ctx, m); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "notification_mute.create", "notification_mute", m.ID,
			map[string]any{"scope": m.Scope, "ends_at": m.EndsAt}, now)
	})
	return m, err
}

// Mutes lists the workspace's mutes that have not ended, soonest end first; mutes of a
// dataset the caller cannot see are left out.
func (s *Service) Mutes(ctx context.Context, page vigia.Page) (vigia.List[Mute], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Mute]{}, err
	}
	return s.store.Mutes(ctx, viewerOf(p), s.clock.Now(), page)
}

// DeleteMute ends a mute now (session of an admin or member): KindNotFound for an
// unknown or invisible one, KindForbidden for tokens and viewers.
func (s *Service) DeleteMute(ctx context.Context, id string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return err
	}
	if !vigia.ValidID(id) {
		return vigia.NotFound()
	}
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteMute(ctx, viewerOf(p), id); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "notification_mute.delete", "notification_mute", id, nil, s.clock.Now())
	})
}

// NotificationFilter selects notifications; nil fields do not filter.
type NotificationFilter struct {
	Held  *bool
	Event *string
	Page  vigia.Page
}

// Notifications lists the in-app notifications the caller can see, newest first, held
// ones included (marked held with the mutes holding them). Titles and bodies are in the
// caller's language. Items about a dataset or domain the caller cannot see are not
// listed nor counted.
func (s *Service) Notifications(ctx context.Context, f NotificationFilter) (vigia.List[Notification], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Notification]{}, err
	}
	if f.Event != nil && !strings.HasPrefix(*f.Event, "service.") {
		e := "service." + *f.Event
		f.Event = &e
	}
	out, err := s.store.Notifications(ctx, viewerOf(p), f)
	if err != nil {
		return out, err
	}
	l := vigia.Lang(ctx)
	for i := range out.Items {
		out.Items[i].Title, out.Items[i].Body = s.renderStored(l, out.Items[i])
	}
	return out, nil
}

// renderStored renders a stored notification in lang.
func (s *Service) renderStored(lang string, n Notification) (title, body string) {
	var m message
	if raw, err := json.Marshal(n.Payload["message"]); err == nil {
		_ = json.Unmarshal(raw, &m)
	}
	if m.Key == "" {
		return n.Code, ""
	}
	return s.render(lang, m)
}

// Preview is how many alerts would have reached a channel over past days.
type Preview struct {
	Days       int
	Alerts     int // alerts the channel's filters let through
	Deliveries int // service.alerts deliveries they would have made (one per scan)
	Held       int // of those, alerts the mutes active now would hold
}

// PreviewChannel counts the alerts of the last days (1-366) that would have reached the
// channel with its current filters. KindNotFound for an unknown channel, KindForbidden
// for tokens and viewers, KindInvalid for days out of bounds.
func (s *Service) PreviewChannel(ctx context.Context, id string, days int) (Preview, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Preview{}, err
	}
	if days < 1 || days > 366 {
		return Preview{}, vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": 366}, "days"))
	}
	ch, err := s.channel(ctx, p.WorkspaceID, id)
	if err != nil {
		return Preview{}, err
	}
	now := s.clock.Now()
	issues, err := s.store.AlertIssuesSince(ctx, p.WorkspaceID, now.Add(-time.Duration(days)*24*time.Hour))
	if err != nil {
		return Preview{}, err
	}
	facts, err := s.store.DatasetFacts(ctx, p.WorkspaceID, issueDatasets(issues))
	if err != nil {
		return Preview{}, err
	}
	grants := map[string][]string{}
	if ch.TeamID != nil {
		if grants, err = s.store.TeamGrants(ctx, p.WorkspaceID, []string{*ch.TeamID}); err != nil {
			return Preview{}, err
		}
	}
	mutes, err := s.store.ActiveMutes(ctx, p.WorkspaceID, now)
	if err != nil {
		return Preview{}, err
	}
	active := Mutes(mutes).active(now)
	out := Preview{Days: days}
	scans := map[string]bool{}
	for _, is := range issues {
		d, ok := facts[is.DatasetID]
		if !ok || !ch.WantsAlert(is, d, grants) {
			continue
		}
		out.Alerts++
		if is.ScanID != nil {
			scans[*is.ScanID] = true
		}
		if len(active.HoldingIssue(is.Type, d)) > 0 {
			out.Held++
		}
	}
	out.Deliveries = len(scans)
	return out, nil
}
