// Package notify is Vigia's notification feature: notification channels (generic
// HTTPS webhooks) with the contract's permission rules, the fan-out of alerts and state
// events to channels with scope, severity and mutes, signed deliveries worked by the job
// queue with the 1 s / 5 s / 25 s retry schedule, the delivery log and the in-app
// notification list. The on-call feature (package oncall) sends its escalations and
// digests through SendIssueNotices and SendDigest; ticket integrations live in package
// ticket.
//
// Where events come from: state events are rows of the events outbox (written by the
// feature that changes the state, in its own transaction); Dispatch turns each row into
// a notification and one delivery per subscribed channel in one transaction that also
// marks the row dispatched. End-of-scan alerts are the warning and critical issues a
// finished scan opened; Dispatch claims each finished scan once. A warning or critical
// issue opened outside a scan (dbt test, BI refresh, pipeline) has an issue.opened outbox
// row and is fanned out as the same alert. Escalations and digests
// (decided by oncall) and channel tests create their deliveries in the transaction that
// decides them.
//
// Every delivery is a row (its id is X-Service-Delivery, its body the exact bytes
// signed) plus a job; the job's handler makes one attempt and asks the queue to run it
// again after the contract's wait, so a restart during back-off resumes the schedule.
// The webhook URL and the signing secret are sealed at rest with the secret box and
// never appear in a response, an error, a log line or the delivery log.
//
// The outbox payloads this package reads are documented in docs/webhooks.md (section
// "For Vigia developers: the events outbox").
package notify

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/netguard"
	"github.com/vigia-data/vigia/secret"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// JobKind is the job queue kind of delivery jobs; their args are DeliveryJobArgs.
const JobKind = "webhook.delivery"

// JobQueue is the queue delivery jobs run in, apart from scans so that a burst of
// deliveries never waits behind a long scan.
const JobQueue = "webhooks"

// DefaultWorkers is how many deliveries a process sends at once by default: at 50 ms a
// receiver, 256 sends in flight carry over 2,000 deliveries a second (docs/benchmarks.md).
const DefaultWorkers = 256

// DeliveryJobArgs is the payload of a delivery job: an id, never a URL or a secret.
type DeliveryJobArgs struct {
	DeliveryID string `json:"delivery_id"`
}

// Channel kinds, severities, delivery statuses and event kinds of the contract.
const (
	KindWebhook = "webhook"

	SeverityInfo     = "info"
	SeverityWarning  = "warning"
	SeverityCritical = "critical"

	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
	StatusSkipped   = "skipped"

	EventKindAlerts                  = "alerts"
	EventKindDatasetVerdictChanged   = "dataset.verdict_changed"
	EventKindPolicyViolationOpened   = "policy.violation_opened"
	EventKindPolicyViolationResolved = "policy.violation_resolved"
	EventKindDomainVerdictChanged    = "domain.verdict_changed"
)

// EventKinds lists the values event_kinds accepts.
var EventKinds = []string{EventKindAlerts, EventKindDatasetVerdictChanged, EventKindPolicyViolationOpened,
	EventKindPolicyViolationResolved, EventKindDomainVerdictChanged}

// Locales a channel may choose for its titles and bodies.
var Locales = []string{i18n.PT, i18n.EN, i18n.ES}

// PageDefault is the page of in-app notifications and of a channel's delivery log when
// no limit is given.
const PageDefault = 100

// Channel is a notification channel. SealedURL and SealedSecret never leave the
// service; DisplayURL is the URL reduced to scheme and host for people to recognise it.
type Channel struct {
	ID           string
	WorkspaceID  string
	TeamID       *string
	Name         string
	Kind         string
	Locale       *string
	MinSeverity  string
	Digest       bool
	EventKinds   []string
	Scope        Scope
	Signed       bool
	LastDigestAt *time.Time
	CreatedBy    string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Last         *LastDelivery

	DisplayURL   string
	SealedURL    []byte
	SealedSecret []byte
}

// Scope narrows what a channel receives: any listed domain, connection or dataset
// matches (empty lists match everything); IssueTypes and IncludeAutoMonitors filter
// alerts only.
type Scope struct {
	DomainIDs           []string
	ConnectionIDs       []string
	DatasetIDs          []string
	IssueTypes          []string
	IncludeAutoMonitors bool
}

func (s Scope) assetScoped() bool {
	return len(s.DomainIDs) > 0 || len(s.ConnectionIDs) > 0 || len(s.DatasetIDs) > 0
}

// LastDelivery is the channel's last finished delivery (the contract keeps only it on
// the channel).
type LastDelivery struct {
	Status string // delivered, failed, skipped
	At     time.Time
	Error  *string
}

// Delivery is one event sent (or being sent) to one channel, with every attempt.
type Delivery struct {
	ID             string
	WorkspaceID    string
	ChannelID      string
	NotificationID *string
	Event          string
	SourceKey      string
	IdempotencyKey *string
	Body           []byte
	Test           bool
	Status         string
	Attempts       int
	AttemptLog     []AttemptRecord
	NextAttemptAt  *time.Time
	LastStatusCode *int
	LastError      *string
	CreatedAt      time.Time
	FinishedAt     *time.Time
}

// AttemptRecord is one send as the delivery log keeps it: no URL, address or body.
type AttemptRecord struct {
	N          int       `json:"n"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	Outcome    string    `json:"outcome"`
	DurationMS int64     `json:"duration_ms"`
}

// SendItem is what the worker needs for one attempt.
type SendItem struct {
	Delivery
	SealedURL    []byte
	SealedSecret []byte
}

// Notification is an item of the in-app notification list.
type Notification struct {
	ID          string
	WorkspaceID string
	Event       string
	Code        string
	Params      map[string]any
	Payload     map[string]any
	SourceKey   string
	DatasetIDs  []string
	DomainID    *string
	IssueID     *string
	ScanID      *string
	Severity    *string
	Held        bool
	MuteIDs     []string
	Deliveries  int
	CreatedAt   time.Time
	// Title and Body are rendered on read in the reader's language.
	Title, Body string
}

// Mute holds back, until EndsAt, the deliveries it covers.
type Mute struct {
	ID           string
	WorkspaceID  string
	Scope        string // workspace, connection, dataset, issue_types
	ConnectionID *string
	DatasetID    *string
	IssueTypes   []string
	Reason       string
	EndsAt       time.Time
	CreatedBy    string
	CreatedAt    time.Time
}

// Mute scopes.
const (
	MuteWorkspace  = "workspace"
	MuteConnection = "connection"
	MuteDataset    = "dataset"
	MuteIssueTypes = "issue_types"
)

// DatasetFacts is what matching needs of a dataset.
type DatasetFacts struct {
	ID                  string
	Name                string
	ConnectionID        string
	DomainIDs           []string
	RestrictedDomainIDs []string
}

// AlertIssue is an issue as alerts, escalations and SLA notices need it.
type AlertIssue struct {
	ID        string
	DatasetID string
	Type      string
	Subtype   *string
	Severity  string
	Status    string
	Title     string
	TitleKey  string
	Params    map[string]any
	RuleID    *string
	ScanID    *string
	CreatedAt time.Time
}

// OutboxEvent is a row of the events outbox.
type OutboxEvent struct {
	ID             string
	WorkspaceID    string
	Type           string
	SubjectType    string
	SubjectID      string
	ScanID         *string
	IdempotencyKey string
	Payload        []byte
	CreatedAt      time.Time
}

// FinishedScan is a finished scan whose alerts were not dispatched yet.
type FinishedScan struct {
	ID          string
	WorkspaceID string
	FinishedAt  time.Time
}

// WorkspaceInfo is what rendering and inbound checks need of a workspace.
type WorkspaceInfo struct {
	ID        string
	Locale    *string
	Timezone  string
	Suspended bool
}

// IncidentImpact is an incident grouping some of a scan's issues, with its impact
// fields (null when impact could not be computed).
type IncidentImpact struct {
	ID                    string
	Title                 *string
	RootDatasetID         *string
	IssueIDs              []string
	ImpactScope           *string
	ImpactColumns         []string
	DownstreamCount       *int
	DownstreamColumnCount *int
	ExposuresCount        *int
}

// Incidents finds the incidents that group issues, so that the alerts of one incident
// are aggregated in service.alerts. The incidents feature implements it.
type Incidents interface {
	ForIssues(ctx context.Context, workspaceID string, issueIDs []string) ([]IncidentImpact, error)
}

// NoIncidents is the Incidents of a build without the incidents feature: none.
type NoIncidents struct{}

// ForIssues returns no incident.
func (NoIncidents) ForIssues(context.Context, string, []string) ([]IncidentImpact, error) {
	return nil, nil
}

// Enqueuer puts delivery jobs on the job queue, inside the transaction in ctx.
type Enqueuer interface {
	EnqueueDelivery(ctx context.Context, deliveryID, workspaceID string) error
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Config tunes the feature. Zero values take the documented defaults.
type Config struct {
	// AllowHosts admits named receivers on loopback or private addresses
	// (VIGIA_WEBHOOK_ALLOW_HOSTS): for local development and tests only.
	AllowHosts []string
	// Resolver resolves receiver names (default the system resolver); tests inject one.
	Resolver netguard.Resolver
	// RootCAs trusts receivers' certificates (default the system pool, which honours
	// SSL_CERT_FILE).
	RootCAs *x509.CertPool
	// LegacyPrefix repeats every X-Service-* header under the previous product name
	// (default delivery.DefaultLegacyPrefix; "-" sends none) until LegacyUntil (default
	// delivery.DefaultLegacyUntil()).
	LegacyPrefix string
	LegacyUntil  time.Time
	// PublicURL is the base of trust_url links (default http://127.0.0.1:8080).
	PublicURL string
	// PerWorkspace bounds one workspace's sends in flight in this process (default 32)
	// and PerChannel one channel's (default 8), so that a slow receiver delays only
	// its own deliveries and one workspace's flood leaves the other workers free.
	PerWorkspace int
	PerChannel   int
	// Workers is how many sends the process has in flight at most (the delivery
	// workers, default 256): the client keeps that many idle connections to reuse.
	Workers int
	// SnoozeMin and SnoozeMax bound the wait in the queue of a delivery whose workspace
	// or channel is at its bound after BusyWait (default 250 ms to 10 s; about as long as
	// the receiver's sends take).
	SnoozeMin, SnoozeMax time.Duration
	// BusyWait is how long a delivery may wait in the process for a slot of a busy
	// receiver whose sends take no longer than that (default 250 ms) before it is
	// snoozed: healthy busy receivers are fed without going back to the queue.
	BusyWait time.Duration
	// Expire skips a delivery that could not start within this long of its creation
	// (default 6 h): the contract keeps no persisted queue for later resends.
	Expire time.Duration
	// ConsumerNoticeCap is the workspace's consumer notices per hour (default 20).
	ConsumerNoticeCap int
}

// Service is the notification feature.
type Service struct {
	store     Store
	tx        Tx
	jobs      Enqueuer
	box       *secret.Box
	msgs      *i18n.Catalog
	clock     vigia.Clock
	log       *slog.Logger
	incidents Incidents
	cfg       Config
	policy    netguard.Policy
	resolver  netguard.Resolver
	client    *http.Client
	limits    *limiter

	dispatchMu sync.Mutex
	failures   map[string]int // failing outbox rows and scans, guarded by dispatchMu
}

// NewService returns the notification service. incidents may be nil (no incident
// aggregation).
func NewService(store Store, tx Tx, jobs Enqueuer, box *secret.Box, msgs *i18n.Catalog, clock vigia.Clock,
	log *slog.Logger, incidents Incidents, cfg Config) *Service {
	if log == nil {
		log = slog.Default()
	}
	if incidents == nil {
		incidents = NoIncidents{}
	}
	if cfg.LegacyPrefix == "" {
		cfg.LegacyPrefix = delivery.DefaultLegacyPrefix
	} else if cfg.LegacyPrefix == "-" {
		cfg.LegacyPrefix = ""
	}
	if cfg.LegacyUntil.IsZero() {
		cfg.LegacyUntil = delivery.DefaultLegacyUntil()
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://127.0.0.1:8080"
	}
	if cfg.PerWorkspace <= 0 {
		cfg.PerWorkspace = 32
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.PerChannel <= 0 {
		cfg.PerChannel = 8
	}
	if cfg.SnoozeMin <= 0 {
		cfg.SnoozeMin = 250 * time.Millisecond
	}
	if cfg.SnoozeMax < cfg.SnoozeMin {
		cfg.SnoozeMax = max(cfg.SnoozeMin, 10*time.Second)
	}
	if cfg.BusyWait <= 0 {
		cfg.BusyWait = 250 * time.Millisecond
	}
	if cfg.Expire <= 0 {
		cfg.Expire = 6 * time.Hour
	}
	if cfg.ConsumerNoticeCap <= 0 {
		cfg.ConsumerNoticeCap = 20
	}
	policy := netguard.Policy{AllowHosts: cfg.AllowHosts}
	client := netguard.NewHTTPClient(netguard.NewDialer(policy, cfg.Resolver), delivery.Timeout, cfg.RootCAs)
	if t, ok := client.Transport.(*http.Transport); ok {
		// Keep a connection per send a host may have in flight (the channels of one
		// workspace may share a host), so that a busy receiver is not paid a TLS
		// handshake per delivery, and one per worker in all; a host never gets more
		// connections than the workers (memory stays bounded whatever the queue holds).
		t.MaxIdleConnsPerHost = max(cfg.PerChannel, cfg.PerWorkspace)
		t.MaxIdleConns = max(cfg.Workers, t.MaxIdleConnsPerHost)
		t.MaxConnsPerHost = max(cfg.Workers, t.MaxIdleConnsPerHost)
		t.DisableKeepAlives = false
	}
	return &Service{store: store, tx: tx, jobs: jobs, box: box, msgs: msgs, clock: clock, log: log,
		incidents: incidents, cfg: cfg, policy: policy, resolver: cfg.Resolver, client: client,
		limits: newLimiter(cfg.PerWorkspace, cfg.PerChannel)}
}

// Close releases idle connections to receivers.
func (s *Service) Close() {
	s.client.CloseIdleConnections()
}
