package graph

import (
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/oncall"
	"github.com/vigia-data/vigia/team"
	"github.com/vigia-data/vigia/ticket"
)

// pageWindow is the window of an in-memory list, as REST pages the same list: the
// page is checked first (422 validation_error).
func pageWindow[T any](all []T, limit, offset *int) ([]T, error) {
	return pageWindowOf(all, limit, offset, vigia.MaxLimit)
}

// pageWindowOf is pageWindow with def the page size when limit is absent.
func pageWindowOf[T any](all []T, limit, offset *int, def int) ([]T, error) {
	page := vigia.PageOf(limit, offset, def)
	if err := page.Validate(); err != nil {
		return nil, err
	}
	if page.Offset >= len(all) {
		return []T{}, nil
	}
	end := min(len(all), page.Offset+page.Limit)
	return all[page.Offset:end], nil
}

func toTeam(t team.Team) *model.Team {
	out := &model.Team{ID: t.ID, Name: t.Name, MemberCount: t.MemberCount, CreatedAt: t.CreatedAt,
		Members: make([]model.TeamMember, 0, len(t.Members))}
	for _, m := range t.Members {
		out.Members = append(out.Members, model.TeamMember{UserID: m.UserID, Email: m.Email, Role: string(m.Role)})
	}
	return out
}

func toNotificationChannel(c notify.Channel) model.NotificationChannel {
	out := model.NotificationChannel{ID: c.ID, Name: c.Name, Kind: c.Kind,
		Config:      &model.NotificationChannelConfig{WebhookURL: c.DisplayURL, Locale: c.Locale},
		MinSeverity: c.MinSeverity, Digest: c.Digest, EventKinds: nonNil(c.EventKinds),
		Scope: &model.NotificationScope{DomainIds: nonNil(c.Scope.DomainIDs), ConnectionIds: nonNil(c.Scope.ConnectionIDs),
			DatasetIds: nonNil(c.Scope.DatasetIDs), IssueTypes: nonNil(c.Scope.IssueTypes), IncludeAutoMonitors: c.Scope.IncludeAutoMonitors},
		TeamID: c.TeamID, Signed: c.Signed, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.Last != nil {
		status, at := c.Last.Status, c.Last.At
		out.LastDeliveryStatus, out.LastDeliveryAt, out.LastDeliveryError = &status, &at, c.Last.Error
	}
	return out
}

func toNotificationDelivery(d notify.Delivery) model.NotificationDelivery {
	out := model.NotificationDelivery{ID: d.ID, Event: d.Event, Status: d.Status, Test: d.Test, IdempotencyKey: d.IdempotencyKey,
		Attempts: make([]model.NotificationDeliveryAttempt, 0, len(d.AttemptLog)), NextAttemptAt: d.NextAttemptAt,
		LastStatusCode: d.LastStatusCode, LastError: d.LastError, CreatedAt: d.CreatedAt, FinishedAt: d.FinishedAt}
	for _, a := range d.AttemptLog {
		at := model.NotificationDeliveryAttempt{N: a.N, At: a.At, Outcome: a.Outcome, DurationMs: int(a.DurationMS),
			Error: optString(a.Error)}
		if a.StatusCode != 0 {
			code := a.StatusCode
			at.StatusCode = &code
		}
		out.Attempts = append(out.Attempts, at)
	}
	return out
}

func toNotification(n notify.Notification) model.Notification {
	return model.Notification{ID: n.ID, Event: n.Event, Code: n.Code, Title: n.Title, Body: n.Body, Params: jsonText(n.Params),
		Severity: n.Severity, DatasetIds: nonNil(n.DatasetIDs), DomainID: n.DomainID, IssueID: n.IssueID, ScanID: n.ScanID,
		Held: n.Held, MuteIds: nonNil(n.MuteIDs), Deliveries: n.Deliveries, CreatedAt: n.CreatedAt}
}

func toNotificationMute(m notify.Mute) model.NotificationMute {
	return model.NotificationMute{ID: m.ID, Scope: m.Scope, ConnectionID: m.ConnectionID, DatasetID: m.DatasetID,
		IssueTypes: nonNil(m.IssueTypes), Reason: m.Reason, EndsAt: m.EndsAt, CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt}
}

func toOnCallRota(rt oncall.Rota) *model.OnCallRota {
	out := &model.OnCallRota{TeamID: rt.TeamID, MinSeverity: rt.MinSeverity, CreatedAt: rt.CreatedAt, UpdatedAt: rt.UpdatedAt,
		Levels: make([]model.OnCallLevel, 0, len(rt.Levels))}
	for _, l := range rt.Levels {
		out.Levels = append(out.Levels, model.OnCallLevel{UserID: l.UserID, Minutes: l.Minutes})
	}
	return out
}

func toTicketIntegration(t ticket.Integration) model.TicketIntegration {
	return model.TicketIntegration{ID: t.ID, Name: t.Name, Provider: t.Provider, BaseURL: t.BaseURL, Project: t.Project,
		WebhookSecretSet: t.SecretSet, WebhookPath: t.WebhookPath(), IntervalMin: t.IntervalMin, Comment: t.Comment,
		Transition: t.Transition, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, CredentialsSet: t.CredentialsSet,
		LastPollAt: t.LastPollAt, NextPollAt: t.NextPollAt, LastError: t.LastError, LastErrorAt: t.LastErrorAt,
		BackoffUntil: t.BackoffUntil, TicketErrors: t.TicketErrors, PendingWrites: t.PendingWrites, FailedWrites: t.FailedWrites}
}

func toTicketIssueType(it ticket.IssueType) model.TicketIssueType {
	return model.TicketIssueType{ID: it.ID, Name: it.Name, Subtask: it.Subtask}
}

func toTicketTargets(tt ticket.Targets) *model.TicketTargets {
	out := &model.TicketTargets{Targets: make([]model.TicketTarget, 0, len(tt.Targets)), Truncated: tt.Truncated,
		DefaultProject: tt.DefaultProject}
	for _, tg := range tt.Targets {
		types := make([]model.TicketIssueType, 0, len(tg.IssueTypes))
		for _, it := range tg.IssueTypes {
			types = append(types, toTicketIssueType(it))
		}
		out.Targets = append(out.Targets, model.TicketTarget{Key: tg.Key, Name: tg.Name, IssueTypes: types})
	}
	if tt.DefaultIssueType != nil {
		it := toTicketIssueType(*tt.DefaultIssueType)
		out.DefaultIssueType = &it
	}
	return out
}
