package ticket

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/netguard"
	"github.com/vigia-data/vigia/notify"
)

// TicketJobKind is the job queue kind of an integration's sync job (its args are
// TicketSyncJobArgs): it sends the integration's pending write-backs, then polls its
// linked tickets when the poll is due. One runs per integration at a time.
const JobKind = "ticket.sync"

// TicketSyncJobArgs is the payload of a sync job: an id, never a credential.
type SyncJobArgs struct {
	IntegrationID string `json:"integration_id"`
}

// Changes written back to linked tickets.
const (
	ChangeResolved = "resolved"
	ChangeVerified = "verified"
	ChangeReopened = "reopened"
	ChangeIgnored  = "ignored"
)

// Statuses of a write-back.
const (
	WritePending = "pending"
	WriteDone    = "done"
	WriteFailed  = "failed"
	WriteSkipped = "skipped"
)

// Bounds of polling and write-back.
const (
	// DefaultIntervalMin is the polling interval of a new integration.
	DefaultIntervalMin = 15
	// MaxBackoff caps the doubling wait of an integration whose provider fails.
	MaxBackoff = 6 * time.Hour
	// pollBatch bounds the tickets read per run (oldest-polled first) by default.
	pollBatch = 50
	// writeBatch bounds the write-backs sent per run (oldest first).
	writeBatch = 50
	// maxWriteAttempts ends a write-back that met a failing provider this many times.
	maxWriteAttempts = 12
)

// TicketWrite is a change of a linked issue to write back to its ticket.
type Write struct {
	ID            string
	WorkspaceID   string
	IntegrationID string
	IssueID       string
	Key           string
	Change        string
	Origin        string
	CommentDone   bool
	Attempts      int
}

// SyncState is what a sync run leaves on its integration.
type SyncState struct {
	LastPollAt     *time.Time
	NextPollAt     *time.Time
	LastError      *string
	LastErrorAt    *time.Time
	BackoffUntil   *time.Time
	BackoffSeconds int
}

// DueSync is an integration whose sync job should run.
type DueSync struct {
	ID          string
	WorkspaceID string
}

// CredentialsInput sets an integration's API credentials: Jira needs the account's
// Email and an API token; Linear an API key and the generic provider a bearer token,
// both in APIToken with no Email. An empty APIToken removes the credentials.
type CredentialsInput struct {
	Email    *string
	APIToken string
}

// maxAPIToken bounds a stored API token.
const maxAPIToken = 4096

// WriteBackChange maps an issue history event to the change written back to linked
// tickets: a person's or a system's resolve, ignore and reopen (package issue), a scan's
// automatic resolution, verification and failed verification (package scan), and a
// rule's deletion that resolved its issue. Other events write nothing.
func WriteBackChange(event string) (string, bool) {
	switch event {
	case "resolved", "auto_resolved", "rule_deleted":
		return ChangeResolved, true
	case "verified":
		return ChangeVerified, true
	case "reopened", "verification_failed":
		return ChangeReopened, true
	case "ignored", "ignored_expected":
		return ChangeIgnored, true
	}
	return "", false
}

// WritesTo reports whether a change of origin to an issue linked to key through t is
// written back: the provider supports writes, the integration has credentials and
// comment or transition on, the key belongs to its configured project (an integration
// without a project writes to no ticket), and the change did not come from that very
// ticket (origin ticket:<provider>:<key>), so that a ticket's own update never loops.
func WritesTo(t Integration, key, origin string) bool {
	return capabilities[t.Provider].outbound && t.CredentialsSet && (t.Comment || t.Transition) &&
		inProject(t, key) && origin != "ticket:"+t.Provider+":"+key
}

// inProject reports whether a tracker key (PROJ-123) belongs to the integration's project.
func inProject(t Integration, key string) bool {
	if t.Project == nil {
		return false
	}
	proj, _, ok := strings.Cut(key, "-")
	return ok && strings.EqualFold(proj, *t.Project)
}

// Integration returns one ticket integration of the workspace: KindNotFound otherwise.
func (s *Service) Integration(ctx context.Context, id string) (Integration, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Integration{}, err
	}
	if !vigia.ValidID(id) {
		return Integration{}, vigia.NotFound()
	}
	return s.store.IntegrationByID(ctx, p.WorkspaceID, id)
}

// SetCredentials sets or (with an empty token) removes an integration's API credentials
// (admin sessions). They are sealed at rest and never returned, logged or audited; the
// answer only says credentials_set. Setting them checks the base URL as channel URLs are
// checked (https, public addresses; KindInvalid on base_url) and makes the first poll
// due now, ending any back-off. KindNotFound for another workspace's integration.
func (s *Service) SetCredentials(ctx context.Context, id string, in CredentialsInput) (Integration, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Integration{}, err
	}
	if !vigia.ValidID(id) {
		return Integration{}, vigia.NotFound()
	}
	t, err := s.store.IntegrationByID(ctx, p.WorkspaceID, id)
	if err != nil {
		return Integration{}, err
	}
	sealed, err := s.sealCredentials(ctx, t, in)
	if err != nil {
		return Integration{}, err
	}
	t.SealedCredentials, t.CredentialsSet = sealed, sealed != nil
	t.UpdatedAt = s.clock.Now()
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetIntegrationCredentials(ctx, t.WorkspaceID, t.ID, sealed, t.UpdatedAt); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "ticket_integration.credentials", "ticket_integration", t.ID,
			map[string]any{"credentials_set": t.CredentialsSet}, t.UpdatedAt)
	})
	if err != nil {
		return Integration{}, err
	}
	return s.store.IntegrationByID(ctx, p.WorkspaceID, id)
}

// sealCredentials validates credentials for t and seals them; nil for an empty token.
func (s *Service) sealCredentials(ctx context.Context, t Integration, in CredentialsInput) ([]byte, error) {
	if in.APIToken == "" {
		if in.Email != nil && *in.Email != "" {
			return nil, vigia.Invalid(field("missing", nil, "api_token"))
		}
		return nil, nil
	}
	var fields []vigia.FieldError
	if len(in.APIToken) > maxAPIToken || strings.ContainsAny(in.APIToken, "\r\n") {
		fields = append(fields, field("string_too_long", map[string]any{"max_length": maxAPIToken}, "api_token"))
	}
	c := Credentials{Token: in.APIToken}
	switch {
	case t.Provider == ProviderJira && (in.Email == nil || !validEmail(*in.Email)):
		fields = append(fields, field("value_error", nil, "email"))
	case t.Provider == ProviderJira:
		c.Email = strings.TrimSpace(*in.Email)
	case in.Email != nil:
		fields = append(fields, field("extra_forbidden", nil, "email"))
	}
	if len(fields) > 0 {
		return nil, vigia.Invalid(fields...)
	}
	base, err := s.base(t)
	if err != nil {
		var te *Error
		code := netguard.CodeURLInvalid
		if errors.As(err, &te) && te.Code == "url_scheme" {
			code = netguard.CodeURLScheme
		}
		return nil, vigia.Invalid(field(code, nil, "base_url"))
	}
	if err := netguard.ValidateURL(ctx, base, s.policy, s.resolver); err != nil {
		code := netguard.URLErrorCode(err)
		if code == "" {
			code = netguard.CodeURLInvalid
		}
		return nil, vigia.Invalid(field(code, nil, "base_url"))
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, vigia.Internal(err)
	}
	sealed, err := s.box.Seal(b, credentialsAAD(t.ID))
	if err != nil {
		return nil, vigia.Internal(err)
	}
	return sealed, nil
}

func validEmail(e string) bool {
	e = strings.TrimSpace(e)
	at := strings.IndexByte(e, '@')
	return at > 0 && at < len(e)-1 && len(e) <= 254 && !strings.ContainsAny(e, " \r\n:")
}

func credentialsAAD(id string) []byte { return []byte("ticket_integration.credentials:" + id) }

// EnqueueTicketSyncs queues the sync job of every integration with credentials, in a
// workspace that is not suspended and not backing off, whose poll is due or that has
// write-backs pending. RunBackground calls it on every tick; a job already queued or
// running for an integration is left alone.
func (s *Service) EnqueueTicketSyncs(ctx context.Context) (int, error) {
	due, err := s.store.DueTicketSyncs(ctx, s.clock.Now(), 500)
	if err != nil {
		return 0, err
	}
	for _, d := range due {
		if err := s.jobs.EnqueueTicketSync(ctx, d.ID, d.WorkspaceID); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// SyncTickets is one run of an integration's sync job. It sends the pending
// write-backs, oldest first, then, when the poll is due, reads the state of up to
// Config.TicketPollBatch (50) tickets linked to open or acknowledged issues
// (oldest-polled first) and resolves the issues of closed tickets through the inbound
// webhook's path (history origin ticket:<provider>:<key>, audited as
// ticket_poll.applied). A ticket's own failure (404,
// a bad answer) sends it to the end of the queue, or fails its write-back, and the run
// goes on. A failure of the provider (429, 401, 403, 5xx, timeout, a refused
// connection or destination) ends the run and delays the integration: the wait is the
// polling interval, then doubles on each failure up to 6 hours; it is stored, so a
// restart keeps it, and a good run resets it. An integration without credentials, of a
// suspended workspace, or still backing off is left alone. When ctx ends (shutdown),
// nothing more is recorded and ctx's error is returned.
func (s *Service) SyncTickets(ctx context.Context, integrationID string) error {
	if !vigia.ValidID(integrationID) {
		return nil
	}
	t, err := s.store.IntegrationForInbound(ctx, integrationID)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := s.clock.Now()
	if t.SealedCredentials == nil || t.BackoffUntil != nil && t.BackoffUntil.After(now) {
		return nil
	}
	info, err := s.store.WorkspaceInfo(ctx, t.WorkspaceID)
	if err != nil || info.Suspended {
		return err
	}
	api, err := s.openAPI(ctx, t)
	if err != nil {
		return s.recordSync(ctx, t, err, false)
	}
	failure, err := s.sendWrites(ctx, t, api, info)
	if err != nil {
		return err
	}
	polled := false
	if failure == nil && (t.NextPollAt == nil || !t.NextPollAt.After(now)) {
		polled = true
		if failure, err = s.poll(ctx, t, api); err != nil {
			return err
		}
	}
	if failure != nil {
		return s.recordSync(ctx, t, failure, polled)
	}
	return s.recordSync(ctx, t, nil, polled)
}

// openAPI opens the integration's credentials and returns its provider's client.
func (s *Service) openAPI(ctx context.Context, t Integration) (API, error) {
	raw, err := s.box.Open(t.SealedCredentials, credentialsAAD(t.ID))
	if err != nil {
		s.log.ErrorContext(ctx, "webhook: ticket integration credentials cannot be decrypted", "integration_id", t.ID)
		return nil, IntegrationFailure("credentials_unavailable")
	}
	var c Credentials
	if err := json.Unmarshal(raw, &c); err != nil || c.Token == "" {
		return nil, IntegrationFailure("credentials_unavailable")
	}
	p, ok := s.providers[t.Provider]
	if !ok || p.Open == nil {
		return nil, IntegrationFailure("provider_unavailable")
	}
	base, err := s.base(t)
	if err != nil {
		return nil, err
	}
	return p.Open(s.client, base, c), nil
}

// recordSync stores a run's outcome on the integration: after a provider failure the
// doubling wait, else the reset back-off and, when it polled, the poll's times.
func (s *Service) recordSync(ctx context.Context, t Integration, failure error, polled bool) error {
	now := s.clock.Now()
	st := SyncState{LastPollAt: t.LastPollAt, NextPollAt: t.NextPollAt}
	if polled {
		st.LastPollAt = &now
	}
	if failure == nil {
		if polled {
			next := now.Add(time.Duration(t.IntervalMin) * time.Minute)
			st.NextPollAt = &next
		}
		return s.store.SaveSyncState(context.WithoutCancel(ctx), t.ID, st)
	}
	var te *Error
	if !errors.As(failure, &te) {
		return failure
	}
	wait := NextBackoff(t.BackoffSeconds, t.IntervalMin)
	until := now.Add(wait)
	code := te.Code
	st.LastError, st.LastErrorAt = &code, &now
	st.BackoffUntil, st.BackoffSeconds = &until, int(wait/time.Second)
	if st.NextPollAt == nil || st.NextPollAt.Before(until) {
		st.NextPollAt = &until
	}
	s.log.WarnContext(ctx, "webhook: ticket provider failed; the integration waits", "integration_id", t.ID,
		"provider", t.Provider, "code", code, "wait_seconds", st.BackoffSeconds)
	return s.store.SaveSyncState(context.WithoutCancel(ctx), t.ID, st)
}

// NextBackoff is an integration's wait after a provider failure, given its current
// wait (0 when it was healthy): the polling interval first, then twice the last wait,
// at most MaxBackoff.
func NextBackoff(currentSeconds, intervalMin int) time.Duration {
	if intervalMin <= 0 {
		intervalMin = DefaultIntervalMin
	}
	wait := time.Duration(intervalMin) * time.Minute
	if currentSeconds > 0 {
		wait = 2 * time.Duration(currentSeconds) * time.Second
	}
	return min(wait, MaxBackoff)
}

// asTicketError returns the provider failure in err, or nil with err when it is
// another error (the context's, the database's).
func asError(err error) (*Error, error) {
	var te *Error
	if errors.As(err, &te) {
		return te, nil
	}
	return nil, err
}

// poll reads the due tickets; it returns the provider failure that ended it, if any.
func (s *Service) poll(ctx context.Context, t Integration, api API) (*Error, error) {
	keys, err := s.store.PollTargets(ctx, t.ID, s.cfg.PollBatch)
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		closed, err := api.Closed(ctx, key)
		if err != nil {
			te, other := asError(err)
			if other != nil {
				return nil, other
			}
			if te.Integration {
				return te, nil
			}
			// The ticket's own failure: to the end of the queue, and on to the next one.
			if err := s.store.MarkPolled(ctx, t.ID, key, &te.Code, s.clock.Now()); err != nil {
				return nil, err
			}
			continue
		}
		if err := s.store.MarkPolled(ctx, t.ID, key, nil, s.clock.Now()); err != nil {
			return nil, err
		}
		if !closed {
			continue
		}
		issues, err := s.store.LinkedIssues(ctx, t.ID, key)
		if err != nil {
			return nil, err
		}
		now := s.clock.Now()
		if _, err := s.resolveFromTicket(ctx, t, key, issues, func(ctx context.Context, result string) error {
			if result != InboundApplied {
				return nil
			}
			return s.audit(ctx, t.WorkspaceID, "ticket:"+t.Provider, "ticket_poll."+result, "ticket_integration", t.ID,
				map[string]any{"result": result, "provider": t.Provider, "key": key, "issues": issues}, now)
		}); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// sendWrites sends the pending write-backs in order; it returns the provider failure
// that ended it, if any (the write-back stays pending for the next run).
func (s *Service) sendWrites(ctx context.Context, t Integration, api API, info notify.WorkspaceInfo) (*Error, error) {
	writes, err := s.store.PendingWrites(ctx, t.ID, writeBatch)
	if err != nil {
		return nil, err
	}
	l := notify.WorkspaceLang(info)
	for _, w := range writes {
		// The settings may have changed since the change was queued.
		if !WritesTo(t, w.Key, w.Origin) {
			if err := s.store.FinishWrite(ctx, w.ID, WriteSkipped, vigia.Ptr("write_disabled"), s.clock.Now()); err != nil {
				return nil, err
			}
			continue
		}
		is, err := s.store.IssueByID(ctx, t.WorkspaceID, w.IssueID)
		if vigia.IsKind(err, vigia.KindNotFound) {
			if err := s.store.FinishWrite(ctx, w.ID, WriteSkipped, vigia.Ptr("issue_gone"), s.clock.Now()); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		err = s.writeOne(ctx, t, api, w, l, is)
		if err == nil {
			if err := s.store.FinishWrite(ctx, w.ID, WriteDone, nil, s.clock.Now()); err != nil {
				return nil, err
			}
			continue
		}
		te, other := asError(err)
		if other != nil {
			return nil, other
		}
		if !te.Integration {
			if err := s.store.FinishWrite(ctx, w.ID, WriteFailed, &te.Code, s.clock.Now()); err != nil {
				return nil, err
			}
			continue
		}
		status := WritePending
		if w.Attempts+1 >= maxWriteAttempts {
			status = WriteFailed
		}
		if err := s.store.RecordWriteAttempt(context.WithoutCancel(ctx), w.ID, status, te.Code, s.clock.Now()); err != nil {
			return nil, err
		}
		return te, nil
	}
	return nil, nil
}

// writeOne posts the comment (once, even when the transition then fails and the write
// is retried) and applies the transition, as the integration's settings say.
func (s *Service) writeOne(ctx context.Context, t Integration, api API, w Write, l string, is notify.AlertIssue) error {
	if t.Comment && !w.CommentDone {
		text := s.msgs.Message(l, "ticket.comment."+w.Change, map[string]any{"title": notify.IssueTitle(s.msgs, l, is)})
		if err := api.Comment(ctx, w.Key, text); err != nil {
			return err
		}
		if err := s.store.MarkWriteCommented(context.WithoutCancel(ctx), w.ID); err != nil {
			return err
		}
	}
	if t.Transition {
		return api.Move(ctx, w.Key, w.Change != ChangeReopened)
	}
	return nil
}
