// Package oncall is Vigia's on-call feature: the workspace's rota, the escalation of
// open problems nobody acknowledges up the rota, and the weekly digests. What it sends
// goes out through the notification feature (its channels, scopes, mutes and signed
// deliveries), in the transaction that decides it.
package oncall

import (
	"context"
	"log/slog"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/notify"
)

// Store is the persistence on-call needs. Methods scoped to a workspace return
// KindNotFound for another workspace's rows.
type Store interface {
	Rota(ctx context.Context, workspaceID string) (Rota, error)
	SaveRota(ctx context.Context, r Rota, at time.Time) (Rota, error)
	DeleteRota(ctx context.Context, workspaceID string) error
	// EscalationCandidates returns open problems on a rota that are not exhausted, in
	// every workspace; concurrent passes of other processes get nothing.
	EscalationCandidates(ctx context.Context, limit int) ([]EscalationCandidate, error)
	SaveEscalation(ctx context.Context, issueID, workspaceID string, level int, since time.Time, exhausted bool, at time.Time) error

	DigestChannels(ctx context.Context) ([]DigestChannel, error)
	// ClaimDigest marks the channel's digest of slot sent unless it already was.
	ClaimDigest(ctx context.Context, channelID string, slot time.Time) (bool, error)
	DigestCounts(ctx context.Context, workspaceID string, since, until time.Time) (DigestCounts, error)
	TeamDigestCounts(ctx context.Context, workspaceID, teamID string, since, until time.Time) (TeamDigestCounts, error)

	// Refs checks the ids a body names (vigia.CheckRefs).
	vigia.Refs
	// AddActivity appends to the workspace activity log.
	AddActivity(ctx context.Context, a event.Activity) error
}

// Notices sends what on-call decides through the notification feature, in the
// transaction in ctx (notify.Service implements it).
type Notices interface {
	SendIssueNotices(ctx context.Context, notices []notify.IssueNotice) error
	SendDigest(ctx context.Context, dg notify.Digest) (bool, error)
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Service is the on-call feature.
type Service struct {
	store   Store
	tx      Tx
	notices Notices
	clock   vigia.Clock
	log     *slog.Logger
}

// NewService returns the on-call service.
func NewService(store Store, tx Tx, notices Notices, clock vigia.Clock, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: store, tx: tx, notices: notices, clock: clock, log: log}
}

// RunBackground runs escalations and digests every minute until ctx ends. Failures are
// logged (by cause, never with a URL or a value) and retried on the next pass.
func (s *Service) RunBackground(ctx context.Context) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		if _, err := s.Escalate(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook: escalation pass failed", "cause", err.Error())
		}
		if _, err := s.SendDigests(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook: digests failed", "cause", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func field(typ string, ctx map[string]any, loc ...string) vigia.FieldError {
	return vigia.Field(typ, ctx, loc...)
}

func actor(p vigia.Principal) string {
	if p.IsToken() {
		return "token:" + p.TokenID
	}
	return p.UserID
}

func (s *Service) audit(ctx context.Context, workspaceID, actor, action, subjectType, subjectID string, details map[string]any, at time.Time) error {
	return s.store.AddActivity(ctx, event.Activity{WorkspaceID: workspaceID, Actor: actor, Action: action,
		SubjectType: subjectType, SubjectID: subjectID, Details: details, CreatedAt: at})
}
