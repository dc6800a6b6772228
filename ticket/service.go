// Package ticket is Vigia's ticket integrations: connections to issue trackers (Jira,
// Linear and the generic documented contract), links between issues and tickets, the
// inbound ticket webhooks that resolve issues when a linked ticket closes, and the sync
// job that writes issue changes back to the tracker and polls linked tickets.
//
// Webhook secrets and API credentials are sealed at rest with the secret box and never
// appear in a response, an error, a log line or the activity log.
package ticket

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net/http"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/netguard"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/secret"
)

// Store is the persistence ticket integrations need. Methods scoped to a workspace
// return KindNotFound for another workspace's rows.
type Store interface {
	CreateIntegration(ctx context.Context, t Integration) error
	Integrations(ctx context.Context, workspaceID string) ([]Integration, error)
	IntegrationByID(ctx context.Context, workspaceID, id string) (Integration, error)
	// IntegrationForInbound loads an integration by id alone (inbound webhooks carry no
	// workspace), with its sealed secret.
	IntegrationForInbound(ctx context.Context, id string) (Integration, error)
	// UpdateIntegrationSync saves the sync settings, and the sealed secret when secretChanged.
	UpdateIntegrationSync(ctx context.Context, t Integration, secretChanged bool) error
	IssueVisible(ctx context.Context, v catalog.Viewer, issueID string) (bool, error)
	// CreateLink adds a link, or returns the existing identical one.
	CreateLink(ctx context.Context, l Link) (Link, error)
	// LinkedIssues returns the issues linked to a ticket key of an integration.
	LinkedIssues(ctx context.Context, integrationID, key string) ([]string, error)

	// SetIntegrationCredentials saves (nil: removes) the sealed API credentials, makes
	// the next poll due now and ends any back-off.
	SetIntegrationCredentials(ctx context.Context, workspaceID, id string, sealed []byte, at time.Time) error
	// DueTicketSyncs returns up to limit integrations with credentials, of workspaces
	// not suspended, not backing off at now, whose poll is due or with write-backs pending.
	DueTicketSyncs(ctx context.Context, now time.Time, limit int) ([]DueSync, error)
	// SaveSyncState stores a sync run's outcome on the integration.
	SaveSyncState(ctx context.Context, id string, st SyncState) error
	// PollTargets returns up to limit ticket keys of the integration linked to open or
	// acknowledged issues, the least recently polled first (never polled first).
	PollTargets(ctx context.Context, integrationID string, limit int) ([]string, error)
	// MarkPolled sets when a ticket was read, and its own error (nil: none).
	MarkPolled(ctx context.Context, integrationID, key string, errCode *string, at time.Time) error
	// PendingWrites returns up to limit pending write-backs of the integration in the
	// order of the changes.
	PendingWrites(ctx context.Context, integrationID string, limit int) ([]Write, error)
	// FinishWrite ends a write-back with a status and an error code (nil: none).
	FinishWrite(ctx context.Context, id, status string, errCode *string, at time.Time) error
	// RecordWriteAttempt counts a failed attempt, with its code, and sets the status
	// (pending to try again, failed when it gives up).
	RecordWriteAttempt(ctx context.Context, id, status, errCode string, at time.Time) error
	// MarkWriteCommented records that a write-back's comment was posted.
	MarkWriteCommented(ctx context.Context, id string) error

	// IssueByID returns an issue of the workspace as a write-back's comment needs it.
	IssueByID(ctx context.Context, workspaceID, id string) (notify.AlertIssue, error)
	// WorkspaceInfo returns a workspace's locale, time zone and suspension.
	WorkspaceInfo(ctx context.Context, workspaceID string) (notify.WorkspaceInfo, error)
	// AddActivity appends to the workspace activity log.
	AddActivity(ctx context.Context, a event.Activity) error
}

// IssueTransitioner changes issue status for the inbound ticket webhooks. A closed
// ticket resolves its issue with history origin ticket:<provider>:<key>; an issue that
// came from a rule then awaits verification by the next scan that evaluates the rule.
type IssueTransitioner interface {
	// ResolveFromTicket resolves an open or acknowledged issue of the workspace and
	// reports whether it changed anything (false when it was already resolved or
	// ignored); KindNotFound when the issue is not in the workspace.
	ResolveFromTicket(ctx context.Context, workspaceID, issueID, origin string) (changed bool, err error)
}

// Enqueuer puts ticket sync jobs on the job queue, inside the transaction in ctx. A
// ticket sync job already queued or running for the integration is enough.
type Enqueuer interface {
	EnqueueTicketSync(ctx context.Context, integrationID, workspaceID string) error
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Config tunes the feature. Zero values take the documented defaults.
type Config struct {
	// AllowHosts admits named providers on loopback or private addresses
	// (VIGIA_WEBHOOK_ALLOW_HOSTS): for local development and tests only.
	AllowHosts []string
	// Resolver resolves provider names (default the system resolver); tests inject one.
	Resolver netguard.Resolver
	// RootCAs trusts providers' certificates (default the system pool).
	RootCAs *x509.CertPool
	// PollBatch bounds the tickets an integration's poll reads per run (default 50).
	PollBatch int
}

// Service is the ticket integrations feature.
type Service struct {
	store    Store
	tx       Tx
	jobs     Enqueuer
	box      *secret.Box
	msgs     *i18n.Catalog
	clock    vigia.Clock
	log      *slog.Logger
	issues   IssueTransitioner
	cfg      Config
	policy   netguard.Policy
	resolver netguard.Resolver
	// client calls ticket providers through the outbound guard.
	client    *http.Client
	inbound   *windowLimiter
	providers map[string]Provider
}

// NewService returns the ticket service; issues is the port inbound ticket events and
// polls resolve issues through, providers the adapters of the providers (a provider
// without one accepts no inbound event and cannot be called).
func NewService(store Store, tx Tx, jobs Enqueuer, box *secret.Box, msgs *i18n.Catalog, clock vigia.Clock,
	log *slog.Logger, issues IssueTransitioner, providers []Provider, cfg Config) *Service {
	if log == nil {
		log = slog.Default()
	}
	if cfg.PollBatch <= 0 {
		cfg.PollBatch = pollBatch
	}
	byName := map[string]Provider{}
	for _, p := range providers {
		byName[p.Name] = p
	}
	policy := netguard.Policy{AllowHosts: cfg.AllowHosts}
	return &Service{providers: byName, store: store, tx: tx, jobs: jobs, box: box, msgs: msgs, clock: clock, log: log, issues: issues,
		cfg: cfg, policy: policy, resolver: cfg.Resolver,
		client:  netguard.NewHTTPClient(netguard.NewDialer(policy, cfg.Resolver), ticketCallTimeout, cfg.RootCAs),
		inbound: newWindowLimiter(inboundLimit, time.Minute)}
}

// Close releases idle connections to ticket providers.
func (s *Service) Close() { s.client.CloseIdleConnections() }

// RunBackground queues the due ticket syncs every every, until ctx ends. Failures are
// logged (by cause, never with a URL or a secret) and retried on the next tick.
func (s *Service) RunBackground(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if _, err := s.EnqueueTicketSyncs(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook: queueing ticket syncs failed", "cause", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// maxNameLen bounds an integration's name.
const maxNameLen = 100

func field(typ string, ctx map[string]any, loc ...string) vigia.FieldError {
	return vigia.Field(typ, ctx, loc...)
}

func actor(p vigia.Principal) string {
	if p.IsToken() {
		return "token:" + p.TokenID
	}
	return p.UserID
}

func checkName(name string) []vigia.FieldError {
	switch n := len([]rune(name)); {
	case n == 0:
		return []vigia.FieldError{field("string_too_short", map[string]any{"min_length": 1}, "name")}
	case n > maxNameLen:
		return []vigia.FieldError{field("string_too_long", map[string]any{"max_length": maxNameLen}, "name")}
	}
	return nil
}

func (s *Service) audit(ctx context.Context, workspaceID, actor, action, subjectType, subjectID string, details map[string]any, at time.Time) error {
	return s.store.AddActivity(ctx, event.Activity{WorkspaceID: workspaceID, Actor: actor, Action: action,
		SubjectType: subjectType, SubjectID: subjectID, Details: details, CreatedAt: at})
}
