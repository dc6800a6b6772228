package ticket

import (
	"context"
	"errors"
	"strings"

	"github.com/vigia-data/vigia"
)

// MaxTicketTargets bounds the targets one read returns (contract: ticket targets 100).
const MaxTicketTargets = 100

// Stable codes of a targets read that cannot answer.
const (
	// CodeTicketCredentialsMissing (409): the integration has no API credentials.
	CodeTicketCredentialsMissing = "ticket_credentials_missing"
	// CodeTicketProviderFailed (502): the provider failed (5xx, 401, 403, 429, a
	// redirect, a timeout, a refused or dropped connection, a TLS failure, an answer
	// that is not what its API documents).
	CodeTicketProviderFailed = "ticket_provider_failed"
	// CodeTicketDestinationRefused (502): anti-SSRF refused the provider's address.
	CodeTicketDestinationRefused = "ticket_destination_refused"
)

// TicketIssueType is an issue type of a target (Jira's issue types of a project).
type IssueType struct {
	ID      string
	Name    string
	Subtask bool
}

// TicketTarget is where an integration's tickets live: a Jira project with its issue
// types, a Linear team (no issue types) or a target of a generic tracker.
type Target struct {
	Key        string
	Name       string
	IssueTypes []IssueType
}

// TicketTargets is what a targets read answers: at most MaxTicketTargets targets in
// the provider's order, Truncated when the provider has more, the integration's
// project when it is among them, and that project's default issue type.
type Targets struct {
	Targets          []Target
	Truncated        bool
	DefaultProject   *string
	DefaultIssueType *IssueType
}

// preferredIssueTypes are the names (case-insensitive, in order) a default issue type
// is chosen by: Jira's Task and Bug, and Task as Portuguese and Spanish sites name it.
var preferredIssueTypes = []string{"task", "tarefa", "tarea", "bug"}

// Targets reads, from the provider, where tickets of integration id can be created
// (the same callers as Integration: any principal of the workspace). It answers
// KindNotFound for another workspace's or an unknown integration, KindConflict
// (ticket_credentials_missing) without API credentials, and KindBadGateway when the
// provider fails (ticket_provider_failed, with the failure's stable code as reason) or
// its address is refused by the anti-SSRF guard (ticket_destination_refused). The
// read changes neither the polling state nor the back-off, and no error carries the
// provider's answer, its URL or the credentials.
func (s *Service) Targets(ctx context.Context, id string) (Targets, error) {
	t, err := s.Integration(ctx, id)
	if err != nil {
		return Targets{}, err
	}
	if t.SealedCredentials == nil {
		return Targets{}, vigia.Conflict(CodeTicketCredentialsMissing, "error.ticket_credentials_missing", nil)
	}
	api, err := s.openAPI(ctx, t)
	if err != nil {
		return Targets{}, targetsError(err)
	}
	targets, truncated, err := api.Targets(ctx)
	if err != nil {
		return Targets{}, targetsError(err)
	}
	if len(targets) > MaxTicketTargets {
		targets, truncated = targets[:MaxTicketTargets], true
	}
	out := Targets{Targets: targets, Truncated: truncated}
	if t.Project != nil {
		for _, tg := range targets {
			if strings.EqualFold(tg.Key, *t.Project) {
				key := tg.Key
				out.DefaultProject = &key
				out.DefaultIssueType = defaultIssueType(tg.IssueTypes)
				break
			}
		}
	}
	return out, nil
}

// targetsError turns a failed read into the caller's answer: a provider failure or an
// anti-SSRF refusal is a 502 with a stable code; credentials that cannot be opened
// are ours (500, logged by code only); the context's errors stay as they are.
func targetsError(err error) error {
	var te *Error
	if !errors.As(err, &te) {
		return err
	}
	switch te.Code {
	case "destination_refused":
		return vigia.BadGateway(CodeTicketDestinationRefused, "error.ticket_destination_refused", nil, te)
	case "credentials_unavailable":
		return vigia.Internal(te)
	}
	reason := te.Code
	if reason == CodeTicketNotFound {
		reason = "not_found"
	}
	return vigia.BadGateway(CodeTicketProviderFailed, "error.ticket_provider_failed", map[string]any{"reason": reason}, te)
}

// defaultIssueType is the first type that is not a sub-task named like a task or a
// bug (preferredIssueTypes, in order), else the first that is not a sub-task, else
// the first; nil without types.
func defaultIssueType(types []IssueType) *IssueType {
	for _, name := range preferredIssueTypes {
		for _, it := range types {
			if !it.Subtask && strings.EqualFold(strings.TrimSpace(it.Name), name) {
				return &it
			}
		}
	}
	for _, it := range types {
		if !it.Subtask {
			return &it
		}
	}
	if len(types) > 0 {
		return &types[0]
	}
	return nil
}
