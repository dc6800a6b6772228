// Package routine keeps the catalog of scheduled routines a workspace may enable — the
// weekly executive report and the daily digest of SLA breaches — with their schedule in
// the workspace's time zone, their last run and result; due routines run on the job
// queue.
package routine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/report"
)

// JobKind is the job that runs one routine of one workspace.
const JobKind = "routine.run"

// Routine keys of the catalog.
const (
	KeyWeeklyExecutiveReport = "weekly_executive_report"
	KeyDailySLABreachDigest  = "daily_sla_breach_digest"
	// KeyMonthlyChargeback records, on the 1st of each month, the chargeback of the month
	// before (finops) as its result.
	KeyMonthlyChargeback = "monthly_chargeback_snapshot"
)

// Cadences.
const (
	Weekly  = "weekly"
	Daily   = "daily"
	Monthly = "monthly" // the 1st of each month
)

// Definition is a routine of the catalog: what it does and when, in the workspace's time
// zone.
type Definition struct {
	Key     string
	Cadence string
	// Weekday of a weekly routine; Hour the local hour it runs.
	Weekday time.Weekday
	Hour    int
}

// Catalog is every routine, in the order the API lists them.
var Catalog = []Definition{
	{Key: KeyWeeklyExecutiveReport, Cadence: Weekly, Weekday: time.Monday, Hour: 8},
	{Key: KeyDailySLABreachDigest, Cadence: Daily, Hour: 8},
	{Key: KeyMonthlyChargeback, Cadence: Monthly, Hour: 7},
}

func definition(key string) (Definition, bool) {
	for _, d := range Catalog {
		if d.Key == key {
			return d, true
		}
	}
	return Definition{}, false
}

// Next is the first run of d strictly after t, in the time zone loc.
func (d Definition) Next(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	next := time.Date(l.Year(), l.Month(), l.Day(), d.Hour, 0, 0, 0, loc)
	switch d.Cadence {
	case Weekly:
		next = next.AddDate(0, 0, (int(d.Weekday)-int(next.Weekday())+7)%7)
	case Monthly:
		next = time.Date(l.Year(), l.Month(), 1, d.Hour, 0, 0, 0, loc)
	}
	for i := 1; !next.After(t); i++ {
		switch d.Cadence {
		case Weekly:
			next = next.AddDate(0, 0, 7)
		case Monthly:
			next = time.Date(l.Year(), l.Month()+time.Month(i), 1, d.Hour, 0, 0, 0, loc)
		default:
			next = next.AddDate(0, 0, 1)
		}
	}
	return next.UTC()
}

// State is what the store keeps of a workspace's routine.
type State struct {
	Enabled      bool
	NextRunAt    *time.Time
	LastRunAt    *time.Time
	LastStatus   *string
	LastResult   json.RawMessage
	LastReportID *string
}

// Routine is a catalog entry with its state in a workspace.
type Routine struct {
	Definition
	TimeZone string
	State
}

// Outcomes of a run.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Due is a routine whose next run has come.
type Due struct {
	WorkspaceID string
	Key         string
	RunAt       time.Time
}

// Store keeps routines' state.
type Store interface {
	// TimeZone returns the workspace's time zone (IANA name).
	TimeZone(ctx context.Context, workspaceID string) (string, error)
	// States returns the workspace's stored routine states by key.
	States(ctx context.Context, workspaceID string) (map[string]State, error)
	// SetEnabled stores enabled and the next run (nil when disabled).
	SetEnabled(ctx context.Context, workspaceID, key string, enabled bool, next *time.Time, by string) error
	// ClaimDue returns the enabled routines due at now and moves each one's next run
	// with next (workspace time zone, routine key, run time → the following run), in
	// one transaction, so a routine is claimed once.
	ClaimDue(ctx context.Context, now time.Time, limit int, next func(tz, key string, at time.Time) time.Time) ([]Due, error)
	// RecordRun stores a run's outcome.
	RecordRun(ctx context.Context, workspaceID, key string, at time.Time, status string, result json.RawMessage, reportID *string) error
	// SLABreaches counts the issues of the workspace that passed their resolution target
	// in [since, until), by severity.
	SLABreaches(ctx context.Context, workspaceID string, since, until time.Time) (map[string]int, error)
	// WorkspaceLocale is the workspace's default locale ("" when not set).
	WorkspaceLocale(ctx context.Context, workspaceID string) (string, error)
}

// Jobs puts routine runs on the job queue.
type Jobs interface {
	EnqueueRoutine(ctx context.Context, workspaceID, key string) error
}

// Reports writes the routines' reports.
type Reports interface {
	Generate(ctx context.Context, workspaceID string, in report.CreateInput, routineID string) (report.Report, error)
}

// Chargeback snapshots a month's chargeback of a workspace (implemented by finops).
type Chargeback interface {
	MonthSnapshot(ctx context.Context, workspaceID string, month time.Time) (any, error)
}

// Tx runs a function in one transaction carried by its context.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Service lists, switches and runs routines.
type Service struct {
	store   Store
	jobs    Jobs
	reports Reports
	charges Chargeback
	tx      Tx
	clock   vigia.Clock
}

// NewService returns the routine service.
func NewService(store Store, jobs Jobs, reports Reports, charges Chargeback, tx Tx, clock vigia.Clock) *Service {
	return &Service{store: store, jobs: jobs, reports: reports, charges: charges, tx: tx, clock: clock}
}

func (s *Service) location(ctx context.Context, workspaceID string) (string, *time.Location, error) {
	tz, err := s.store.TimeZone(ctx, workspaceID)
	if err != nil {
		return "", nil, err
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return tz, time.UTC, nil //nolint:nilerr // a zone the system lacks falls back to UTC
	}
	return tz, loc, nil
}

// Routines lists the catalog with the workspace's state of each routine.
func (s *Service) Routines(ctx context.Context) ([]Routine, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	tz, _, err := s.location(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	states, err := s.store.States(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]Routine, 0, len(Catalog))
	for _, d := range Catalog {
		out = append(out, Routine{Definition: d, TimeZone: tz, State: states[d.Key]})
	}
	return out, nil
}

// Routine returns one routine of the catalog; KindNotFound for an unknown key.
func (s *Service) Routine(ctx context.Context, key string) (Routine, error) {
	all, err := s.Routines(ctx)
	if err != nil {
		return Routine{}, err
	}
	for _, r := range all {
		if r.Key == key {
			return r, nil
		}
	}
	return Routine{}, vigia.NotFound()
}

// SetEnabled enables or disables a routine (admin session); enabling schedules its next
// run in the workspace's time zone. KindNotFound for an unknown key.
func (s *Service) SetEnabled(ctx context.Context, key string, enabled bool) (Routine, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Routine{}, err
	}
	d, ok := definition(key)
	if !ok {
		return Routine{}, vigia.NotFound()
	}
	_, loc, err := s.location(ctx, p.WorkspaceID)
	if err != nil {
		return Routine{}, err
	}
	var next *time.Time
	if enabled {
		n := d.Next(s.clock.Now(), loc)
		next = &n
	}
	if err := s.store.SetEnabled(ctx, p.WorkspaceID, key, enabled, next, p.UserID); err != nil {
		return Routine{}, err
	}
	return s.Routine(ctx, key)
}

// RunNow puts a run of the routine on the job queue (admin session), enabled or not.
// KindNotFound for an unknown key.
func (s *Service) RunNow(ctx context.Context, key string) (Routine, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Routine{}, err
	}
	if _, ok := definition(key); !ok {
		return Routine{}, vigia.NotFound()
	}
	if err := s.jobs.EnqueueRoutine(ctx, p.WorkspaceID, key); err != nil {
		return Routine{}, err
	}
	return s.Routine(ctx, key)
}

// EnqueueDue claims the routines whose next run has come and queues their runs, in one
// transaction; it returns how many it queued.
func (s *Service) EnqueueDue(ctx context.Context) (int, error) {
	n := 0
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		due, err := s.store.ClaimDue(ctx, s.clock.Now(), 100, func(tz, key string, at time.Time) time.Time {
			d, _ := definition(key)
			loc, err := time.LoadLocation(tz)
			if err != nil {
				loc = time.UTC
			}
			return d.Next(at, loc)
		})
		if err != nil {
			return err
		}
		for _, d := range due {
			if err := s.jobs.EnqueueRoutine(ctx, d.WorkspaceID, d.Key); err != nil {
				return err
			}
		}
		n = len(due)
		return nil
	})
	return n, err
}

// Run runs one routine of a workspace now and records its outcome (the job's handler).
// A failure is recorded as the last result and returned, so the job retries.
func (s *Service) Run(ctx context.Context, workspaceID, key string) error {
	if _, ok := definition(key); !ok {
		return nil // a routine no longer in the catalog: nothing to do
	}
	now := s.clock.Now().UTC().Truncate(time.Second)
	result, reportID, runErr := s.run(ctx, workspaceID, key, now)
	status := StatusSucceeded
	if runErr != nil {
		status = StatusFailed
		result = json.RawMessage(`{"error":"routine_failed"}`)
	}
	if err := s.store.RecordRun(ctx, workspaceID, key, now, status, result, reportID); err != nil {
		return err
	}
	return runErr
}

func (s *Service) run(ctx context.Context, workspaceID, key string, now time.Time) (json.RawMessage, *string, error) {
	switch key {
	case KeyWeeklyExecutiveReport:
		locale, err := s.store.WorkspaceLocale(ctx, workspaceID)
		if err != nil {
			return nil, nil, err
		}
		lang := report.LanguageOf(locale)
		if lang == "" {
			lang = "pt"
		}
		r, err := s.reports.Generate(ctx, workspaceID, report.CreateInput{Type: report.TypeWorkspaceOverview,
			Persona: report.PersonaExecutive, Language: &lang}, key)
		if err != nil {
			return nil, nil, err
		}
		out, err := json.Marshal(map[string]any{"report_id": r.ID, "score": r.Facts.Score})
		return out, &r.ID, err
	case KeyDailySLABreachDigest:
		since := now.Add(-24 * time.Hour)
		by, err := s.store.SLABreaches(ctx, workspaceID, since, now)
		if err != nil {
			return nil, nil, err
		}
		total := 0
		for _, n := range by {
			total += n
		}
		out, err := json.Marshal(map[string]any{"since": since, "until": now, "breached": total, "by_severity": by})
		return out, nil, err
	case KeyMonthlyChargeback:
		// The month before, its boundaries in the workspace's time zone.
		_, loc, err := s.location(ctx, workspaceID)
		if err != nil {
			return nil, nil, err
		}
		local := now.In(loc)
		first := time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, loc)
		snap, err := s.charges.MonthSnapshot(ctx, workspaceID, first.AddDate(0, -1, 0))
		if err != nil {
			return nil, nil, err
		}
		out, err := json.Marshal(snap)
		return out, nil, err
	}
	return nil, nil, nil
}
