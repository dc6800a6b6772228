// Package scan runs scans: it discovers a connection's tables, profiles each once,
// detects schema drift and anomalies against the dataset's own history, scores it on the
// five dimensions, decides its verdict, raises issues and records the events other
// features deliver. Each dataset's result is written in one transaction, so a scan killed
// midway leaves no half-written profile, and a re-run resumes where it stopped.
package scan

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/source"
)

// Scan statuses.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// JobKind is the job queue kind of scan jobs.
const JobKind = "scan"

// Scan is one run over a connection.
type Scan struct {
	ID             string
	WorkspaceID    string
	ConnectionID   string
	ConnectionName string
	Status         string
	Trigger        string
	RequestedBy    string
	Attempt        int
	DatasetsTotal  int
	DatasetsDone   int
	DatasetsFailed int
	CurrentDataset *string
	ErrorCode      *string
	CreatedAt      time.Time
	StartedAt      *time.Time
	FinishedAt     *time.Time
	// Failures are the datasets the scan could not profile, with why (filled by Scan,
	// the detail read).
	Failures []Failure
}

// Failure is a dataset a scan could not profile: its stable code is the source's reason
// (not_populated, permission_denied, timeout, query_failed ...) or internal.
type Failure struct {
	DatasetID string
	Name      string
	Code      string
	At        time.Time
}

// Finished reports whether the scan reached a final status.
func (s Scan) Finished() bool {
	return s.Status == StatusSucceeded || s.Status == StatusFailed || s.Status == StatusCancelled
}

// DatasetRef is a dataset as the scan knows it.
type DatasetRef struct {
	ID          string
	WorkspaceID string
	Schema      string
	Table       string
	Kind        string
	Depth       *string
	DataCountry *string
}

// Name is schema.table.
func (d DatasetRef) Name() string {
	if d.Schema == "" {
		return d.Table
	}
	return d.Schema + "." + d.Table
}

// Store is the persistence scans need.
type Store interface {
	CreateScan(ctx context.Context, s Scan) error
	SetScanJob(ctx context.Context, scanID, jobID string) error
	// ActiveScanForConnection returns a queued or running scan of the connection, if any.
	ActiveScanForConnection(ctx context.Context, connectionID string) (Scan, bool, error)
	CountActiveScans(ctx context.Context, workspaceID string) (int, error)
	Scans(ctx context.Context, workspaceID string, page vigia.Page) (vigia.List[Scan], error)
	ScanByID(ctx context.Context, workspaceID, id string) (Scan, error)
	// ScanForRun loads a scan for the worker (no workspace scope).
	ScanForRun(ctx context.Context, id string) (Scan, error)
	MarkRunning(ctx context.Context, id string, at time.Time) (Scan, error)
	UpdateProgress(ctx context.Context, id string, total, done, failed int, current *string) error
	FinishScan(ctx context.Context, id, status string, errorCode *string, at time.Time) error
	// SyncDatasets upserts the discovered tables as datasets of the connection, marks the
	// vanished ones dropped, and returns the live ones in discovery order.
	SyncDatasets(ctx context.Context, workspaceID, connectionID string, tables []source.Table, at time.Time) ([]DatasetRef, error)
	HasProfile(ctx context.Context, datasetID, scanID string) (bool, error)
	// ProfiledDatasets returns the datasets whose result the scan already saved.
	ProfiledDatasets(ctx context.Context, scanID string) (map[string]bool, error)
	PrevState(ctx context.Context, datasetID string) (PrevState, error)
	// SaveDatasetResult writes one dataset's whole result atomically (it needs no
	// transaction of the caller's).
	SaveDatasetResult(ctx context.Context, r DatasetResult) error
	// RecordFailure records that the scan could not profile a dataset (a re-run's
	// failure of the same dataset replaces the earlier one).
	RecordFailure(ctx context.Context, scanID, workspaceID, datasetID, code string, at time.Time) error
	// ScanFailures lists a scan's failed datasets that v can see, by name.
	ScanFailures(ctx context.Context, v catalog.Viewer, scanID string) ([]Failure, error)
	// Signals lists the signals of the datasets v can see that match q, newest first.
	Signals(ctx context.Context, v catalog.Viewer, q SignalQuery) (vigia.List[Signal], error)
	// RecordSucceeded writes the scan.succeeded event of a scan to the outbox, in the
	// transaction in ctx (the one that marks the scan succeeded); a second call for the
	// same scan writes nothing.
	RecordSucceeded(ctx context.Context, workspaceID, connectionID, scanID string, at time.Time) error
	// SucceededEvent returns a scan's scan.succeeded event (KindNotFound without one,
	// or when the scan was deleted with its connection: nothing is left to derive).
	SucceededEvent(ctx context.Context, scanID string) (Succeeded, error)
	// PendingSucceeded lists the scan.succeeded events of ev's connection not yet
	// handled by all their consumers, written no later than ev, oldest first.
	PendingSucceeded(ctx context.Context, ev Succeeded) ([]Succeeded, error)
	// MarkConsumed records that a consumer processed an event (again: no change).
	MarkConsumed(ctx context.Context, eventID, consumer string, at time.Time) error
	// MarkHandled records that an event's consumers are done with it.
	MarkHandled(ctx context.Context, eventID string, at time.Time) error
	// WithConnectionLock runs fn holding the connection's after-scan lock, so that one
	// process at a time runs the consumers of a connection's events. fn's ctx is the
	// caller's: it carries no transaction of the lock's.
	WithConnectionLock(ctx context.Context, connectionID string, fn func(ctx context.Context) error) error
	// ClaimDueSchedules marks, and returns, the connections whose daily scan is due at now
	// in their own time zone and was not yet queued for that local day.
	ClaimDueSchedules(ctx context.Context, now time.Time) ([]DueSchedule, error)
	// DeferSchedule takes back a claim of ClaimDueSchedules made in the transaction in
	// ctx: the schedule is due again at the next claim.
	DeferSchedule(ctx context.Context, connectionID string) error
}

// Blackouts answers whether a blackout window of a connection is in force.
type Blackouts interface {
	// Refuse returns KindConflict (blackout_active, with the window's end) when a window
	// of the connection is in force at at, else nil.
	Refuse(ctx context.Context, workspaceID, connectionID string, at time.Time) error
}

// DueSchedule is a connection whose scheduled scan is due.
type DueSchedule struct {
	WorkspaceID  string
	ConnectionID string
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Enqueuer puts scan jobs on the job queue, inside the transaction in ctx.
type Enqueuer interface {
	EnqueueScan(ctx context.Context, scanID, workspaceID, connectionID string) (jobID string, err error)
	// EnqueueAfterScan queues the job that runs the consumers of a succeeded scan's
	// event (AfterJobKind, at least 2 attempts); a job already queued for the scan is
	// no error.
	EnqueueAfterScan(ctx context.Context, scanID, workspaceID string) error
}

// Connections is what scans need of the connection service.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	// Open connects to the connection's source; label names its sessions there.
	Open(ctx context.Context, c connection.Connection, rec source.Recorder, label string) (source.Source, error)
	Recorder(c connection.Connection, scanID *string) *connection.Recorder
}

// Config bounds the scan service.
type Config struct {
	// MaxActivePerWorkspace is how many scans a workspace may have queued or running.
	MaxActivePerWorkspace int
	// RetryAfter is what a full queue tells the caller to wait, in seconds.
	RetryAfter int
	SampleSize int
	// DecayScans is K of the consistencia decay model.
	DecayScans int
	// FreshnessSLA is the default freshness target.
	FreshnessSLA time.Duration
	// DatasetWorkers is how many datasets of one scan are worked at once (0:
	// DefaultDatasetWorkers).
	DatasetWorkers int
	// Quota, when set, is asked before a scan is queued: the plan's quotas (datasets,
	// scans per day) answer 402 org_quota when used up.
	Quota func(ctx context.Context) error
}

// Service triggers, runs and reads scans.
type Service struct {
	store Store
	tx    Tx
	jobs  Enqueuer
	conns Connections
	clock vigia.Clock
	log   *slog.Logger
	cfg   Config

	// consumers process every succeeded scan's scan.succeeded event (lineage,
	// incidents, domain verdict events), in this order.
	consumers []NamedConsumer
	// rules evaluates datasets' rules; nil: datasets have no rules.
	rules RuleEvaluator
	// weights reads the domains' dimension weights; nil scores with the defaults.
	weights DomainWeights
	// blackouts defers scheduled scans and refuses manual ones during a connection's
	// blackout windows; nil: no windows.
	blackouts Blackouts
	// observeStep, when set, is told when each after-scan step starts; the function it
	// returns is called when the step ends (a bench's per-step figures).
	observeStep func(step string) func()
}

// ObserveSteps sets a function told when each after-scan step (consumer) starts; the
// function it returns is called when the step ends. Benches time the steps with it.
// Set it before the service runs.
func (s *Service) ObserveSteps(f func(step string) func()) { s.observeStep = f }

// Ports are the other features a scan calls; each may be nil.
type Ports struct {
	// Rules evaluates datasets' rules; nil: datasets have no rules.
	Rules RuleEvaluator
	// Weights reads the domains' SLA dimension weights, read at the start of each
	// dataset's profile so that changed weights apply from the next scan; nil scores
	// with the defaults.
	Weights DomainWeights
	// Consumers process the scan.succeeded event of every succeeded scan, in this order
	// (lineage, contract checks, incidents, domain verdicts): see AfterScan.
	Consumers []NamedConsumer
	// Blackouts: a scheduled scan waits for the end of a connection's blackout window
	// and a manual one is refused (409 blackout_active); nil: no windows.
	Blackouts Blackouts
}

// NewService returns the scan service.
func NewService(store Store, tx Tx, jobs Enqueuer, conns Connections, ports Ports, clock vigia.Clock, log *slog.Logger, cfg Config) *Service {
	if cfg.MaxActivePerWorkspace == 0 {
		cfg.MaxActivePerWorkspace = 20
	}
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = 30
	}
	if cfg.SampleSize == 0 {
		cfg.SampleSize = 10000
	}
	if cfg.DecayScans == 0 {
		cfg.DecayScans = 5
	}
	if cfg.FreshnessSLA == 0 {
		cfg.FreshnessSLA = 24 * time.Hour
	}
	return &Service{store: store, tx: tx, jobs: jobs, conns: conns, clock: clock, log: log, cfg: cfg,
		consumers: ports.Consumers, rules: ports.Rules, weights: ports.Weights, blackouts: ports.Blackouts}
}

// TriggerScan queues a scan of a connection (by id, or by name for the CLI): a marked
// write that API tokens may call. A connection that already has a queued scan gets that
// scan back. Returns KindNotFound for another workspace's connection, KindConflict
// (blackout_active) during a blackout window of the connection (scheduled scans are
// deferred by EnqueueDue instead), and KindRateLimited (scan_queue_full) when the
// workspace has too many scans queued or running.
func (s *Service) TriggerScan(ctx context.Context, connectionRef, trigger string) (Scan, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Scan{}, err
	}
	c, err := s.conns.Connection(ctx, connectionRef)
	if err != nil {
		return Scan{}, err
	}
	if s.blackouts != nil && trigger != TriggerSchedule {
		if err := s.blackouts.Refuse(ctx, p.WorkspaceID, c.ID, s.clock.Now()); err != nil {
			return Scan{}, err
		}
	}
	var out Scan
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if existing, ok, err := s.store.ActiveScanForConnection(ctx, c.ID); err != nil {
			return err
		} else if ok && existing.Status == StatusQueued {
			out = existing
			return nil
		}
		if s.cfg.Quota != nil {
			if err := s.cfg.Quota(ctx); err != nil {
				return err
			}
		}
		n, err := s.store.CountActiveScans(ctx, p.WorkspaceID)
		if err != nil {
			return err
		}
		if n >= s.cfg.MaxActivePerWorkspace {
			return vigia.RateLimited(vigia.CodeScanQueueFull, s.cfg.RetryAfter)
		}
		by := p.UserID
		if p.IsToken() {
			by = "token:" + p.TokenID
		}
		out = Scan{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, ConnectionID: c.ID, ConnectionName: c.Name,
			Status: StatusQueued, Trigger: trigger, RequestedBy: by, CreatedAt: s.clock.Now()}
		if err := s.store.CreateScan(ctx, out); err != nil {
			return err
		}
		jobID, err := s.jobs.EnqueueScan(ctx, out.ID, out.WorkspaceID, c.ID)
		if err != nil {
			return err
		}
		return s.store.SetScanJob(ctx, out.ID, jobID)
	})
	return out, err
}

// TriggerSchedule is the trigger of a scan its connection's schedule queued.
const TriggerSchedule = "schedule"

// EnqueueDue queues the scans whose daily schedule is due by the service's clock; the
// claim and the queued scan commit together, so a schedule fires once per local day
// even with several workers. A connection in a blackout window keeps its schedule due:
// its scan is queued at the first call after the window ends.
func (s *Service) EnqueueDue(ctx context.Context) (int, error) {
	n := 0
	now := s.clock.Now()
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		due, err := s.store.ClaimDueSchedules(ctx, now)
		if err != nil {
			return err
		}
		for _, d := range due {
			sctx := vigia.WithPrincipal(ctx, vigia.Principal{WorkspaceID: d.WorkspaceID, UserID: "system:schedule", Role: vigia.RoleAdmin})
			if s.blackouts != nil {
				err := s.blackouts.Refuse(sctx, d.WorkspaceID, d.ConnectionID, now)
				if vigia.IsKind(err, vigia.KindConflict) {
					s.log.InfoContext(ctx, "scheduled scan deferred: blackout window", "connection_id", d.ConnectionID)
					if err := s.store.DeferSchedule(ctx, d.ConnectionID); err != nil {
						return err
					}
					continue
				}
				if err != nil {
					return err
				}
			}
			if _, err := s.TriggerScan(sctx, d.ConnectionID, TriggerSchedule); err != nil {
				if vigia.IsKind(err, vigia.KindRateLimited) {
					continue // the workspace is busy; today's claim stands
				}
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// ScanPageDefault and SignalPageDefault are the page sizes of the scan and signal lists
// when limit is not given (the REST value; the contract does not show one).
const (
	ScanPageDefault   = 500
	SignalPageDefault = 500
)

// Scans lists the workspace's scans, newest first.
func (s *Service) Scans(ctx context.Context, page vigia.Page) (vigia.List[Scan], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Scan]{}, err
	}
	if err := page.Validate(); err != nil {
		return vigia.List[Scan]{}, err
	}
	return s.store.Scans(ctx, p.WorkspaceID, page)
}

// Scan returns one scan; KindNotFound for another workspace's.
func (s *Service) Scan(ctx context.Context, id string) (Scan, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Scan{}, err
	}
	if !vigia.ValidID(id) {
		return Scan{}, vigia.NotFound()
	}
	sc, err := s.store.ScanByID(ctx, p.WorkspaceID, id)
	if err != nil {
		return Scan{}, err
	}
	// A dataset the caller cannot see (a restricted domain) is neither named nor counted.
	sc.Failures, err = s.store.ScanFailures(ctx, catalog.ViewerOf(p), sc.ID)
	return sc, err
}

// SessionLabel names a scan attempt's sessions on the source: "vigia scan <id> <attempt>".
// Every attempt of a scan shares the prefix SessionLabelPrefix(id), by which a takeover
// finds the dead attempt's statements still running.
func SessionLabel(scanID string, attempt int) string {
	return SessionLabelPrefix(scanID) + strconv.Itoa(attempt)
}

// SessionLabelPrefix is what every attempt's session label of a scan starts with.
func SessionLabelPrefix(scanID string) string { return "vigia scan " + scanID + " " }

// depthFor picks the profiling depth: the dataset's own, else basic for cost-guarded
// views and external tables, else standard.
func depthFor(d DatasetRef) string {
	if d.Depth != nil {
		return *d.Depth
	}
	if d.Kind == "view" || d.Kind == "external" {
		return source.DepthBasic
	}
	return source.DepthStandard
}
