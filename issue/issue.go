// Package issue is the issue workflow: the list and board of issues, their lifecycle
// (acknowledge, resolve, ignore, ignore as expected, reopen) with a history row and its
// origin for every change, team assignment, the explanation card of an anomaly with its
// tuned threshold, the tuning that ignoring anomalies as expected feeds, the SLA timers
// that mark issues past their severity's resolution target, and the monthly SLA report.
//
// Issue statuses and transitions (contract part 3):
//
//	acknowledge      open                  → acknowledged
//	resolve          open, acknowledged    → resolved
//	ignore           open, acknowledged    → ignored
//	ignore_expected  open, acknowledged    → ignored, resolution_reason = expected
//	reopen           resolved, ignored     → open
//
// A rule's current issue that is resolved (by a person or a ticket) awaits verification:
// the next scan that evaluates the rule confirms the resolution or reopens the issue
// (see scan.applyRules).
package issue

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
)

// Statuses of an issue.
const (
	StatusOpen         = string(quality.IssueOpen)
	StatusAcknowledged = string(quality.IssueAcknowledged)
	StatusResolved     = string(quality.IssueResolved)
	StatusIgnored      = string(quality.IssueIgnored)
)

// Actions on an issue.
const (
	ActionAcknowledge    = "acknowledge"
	ActionResolve        = "resolve"
	ActionIgnore         = "ignore"
	ActionIgnoreExpected = "ignore_expected"
	ActionReopen         = "reopen"
)

// Events of history rows (besides those scans write, see package scan).
const (
	EventOpened          = "opened"
	EventAcknowledged    = "acknowledged"
	EventResolved        = "resolved"
	EventIgnored         = "ignored"
	EventIgnoredExpected = "ignored_expected"
	EventReopened        = "reopened"
	EventAssigned        = "assigned"
	EventRuleDeleted     = "rule_deleted"
)

// ReasonExpected is the resolution reason of an issue ignored as expected.
const ReasonExpected = "expected"

// MaxNote is the longest note a person may add to a change.
const MaxNote = 1000

// Issue is a problem a scan (or another feature) raised on a dataset.
type Issue struct {
	ID          string
	WorkspaceID string
	DatasetID   string
	DatasetName string
	Type        string
	Subtype     *string
	Severity    string
	Status      string
	// Title is the title in the reader's language when TitleKey names a message of the
	// catalogue (rendered at read time from TitleParams); else the text stored at creation.
	Title string
	// TitleKey and TitleParams are the title as stored: a message key and its parameters.
	TitleKey         string
	TitleParams      map[string]any
	Metric           string
	Column           string
	ResolutionReason *string
	SLABreachedAt    *time.Time
	AssigneeTeamID   *string
	AssigneeTeamName *string
	RuleID           *string
	// RuleCurrent marks a rule's current issue; resolved and current means it awaits
	// the verification of the next scan.
	RuleCurrent bool
	Details     map[string]any
	Detections  int
	FirstScanID *string
	LastScanID  *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// AcknowledgedAt is the first acknowledgement; ResolvedAt the last close.
	AcknowledgedAt *time.Time
	ResolvedAt     *time.Time
	// History is filled by Issue (one issue), oldest first.
	History []HistoryEntry
}

// AwaitingVerification reports whether a resolved rule issue waits for the next scan
// that evaluates its rule to confirm or reopen it.
func (i Issue) AwaitingVerification() bool { return i.RuleCurrent && i.Status == StatusResolved }

// HistoryEntry is one change of an issue with its origin: scan:<id>, user:<id>,
// ticket:<provider>:<key>, system:<what>.
type HistoryEntry struct {
	FromStatus *string
	ToStatus   string
	Event      string
	Origin     string
	Note       string
	At         time.Time
}

// Filter selects issues; empty fields do not filter, lists match any of their values.
type Filter struct {
	Severities []string
	Statuses   []string
	Types      []string
	DatasetID  *string
	// AssigneeTeam is a team id, "mine" (the caller's teams) or "none".
	AssigneeTeam *string
	// SLABreached keeps issues whose sla_breached_at is set.
	SLABreached bool
	Page        vigia.Page
}

// StoreFilter is Filter resolved for the store: team ids instead of "mine".
type StoreFilter struct {
	Severities  []string
	Statuses    []string
	Types       []string
	DatasetID   *string
	TeamIDs     []string // nil: any; with NoTeam false and empty: nothing
	NoTeam      bool
	SLABreached bool
	Page        vigia.Page
}

// Change is a status change (or history event) to write with its history row.
type Change struct {
	IssueID     string
	WorkspaceID string
	From        string
	To          string
	Event       string
	Origin      string
	Note        string
	// Reason is the resolution reason after the change (expected or nil).
	Reason *string
	// MakeCurrent makes a reopened rule issue its rule's current issue again.
	MakeCurrent bool
	At          time.Time
}

// Board is the issue board: counts per status and severity, and per status and team.
type Board struct {
	Total     int
	Columns   []BoardColumn
	TeamCells []TeamCell
}

// BoardColumn is one status of the board.
type BoardColumn struct {
	Status     string
	Count      int
	BySeverity map[string]int
}

// TeamCell counts the issues of one status assigned to one team (TeamID nil: no team).
type TeamCell struct {
	Status   string
	TeamID   *string
	TeamName *string
	Count    int
}

// BoardRow is one group of the board query.
type BoardRow struct {
	Status   string
	Severity string
	TeamID   *string
	TeamName *string
	Count    int
}

// Tuning is the anomaly tuning of one metric of a dataset as stored.
type Tuning struct {
	Threshold float64
	Ignored   int
	Resolved  int
	Silenced  bool
}

// Retune is a tuning change waiting for an administrator.
type Retune struct {
	ID            string
	WorkspaceID   string
	DatasetID     string
	Metric        string
	Column        string
	Action        string // silence
	FromThreshold float64
	IssueID       *string
	Status        string // pending, approved, rejected
	RequestedBy   string
	RequestedAt   time.Time
	DecidedBy     *string
	DecidedAt     *time.Time
}

// Store is the persistence of the issue workflow.
type Store interface {
	// Issues lists the issues of live datasets the viewer can see, newest first.
	Issues(ctx context.Context, v catalog.Viewer, f StoreFilter) (vigia.List[Issue], error)
	// IssueByID returns an issue of a live dataset the viewer can see, with its history.
	IssueByID(ctx context.Context, v catalog.Viewer, id string) (Issue, error)
	// Histories returns the histories of the issues among ids the viewer can see (of live
	// datasets), oldest change first; the others are absent.
	Histories(ctx context.Context, v catalog.Viewer, ids []string) (map[string][]HistoryEntry, error)
	// LockIssue returns an issue of the workspace locked for update (the transaction in
	// ctx); with a viewer, only one of a live dataset it can see.
	LockIssue(ctx context.Context, workspaceID string, v *catalog.Viewer, id string) (Issue, error)
	// OtherCurrentIssue reports whether the rule has a current issue other than issueID.
	OtherCurrentIssue(ctx context.Context, ruleID, issueID string) (bool, error)
	ApplyChange(ctx context.Context, c Change) error
	// SetAssignee sets or clears an issue's team and writes an assigned history row.
	SetAssignee(ctx context.Context, c Change, teamID *string) error
	// Refs checks the ids a body names (vigia.CheckRefs).
	vigia.Refs
	Board(ctx context.Context, v catalog.Viewer, f StoreFilter) ([]BoardRow, error)

	// LockTuning returns (creating it at the calibrated default) a metric's tuning,
	// locked for update.
	LockTuning(ctx context.Context, datasetID, metric, column string, at time.Time) (Tuning, error)
	SaveTuning(ctx context.Context, datasetID, metric, column string, t Tuning, at time.Time) error
	TuningOf(ctx context.Context, datasetID, metric, column string) (Tuning, bool, error)
	// CreateRetune records a pending retune unless the metric already has one.
	CreateRetune(ctx context.Context, r Retune) error
	// LockRetune returns a retune of a dataset of the workspace, locked for update.
	LockRetune(ctx context.Context, workspaceID, datasetID, id string) (Retune, error)
	DecideRetune(ctx context.Context, r Retune) error
	PendingRetune(ctx context.Context, datasetID, metric, column string) (*Retune, error)

	Targets(ctx context.Context, workspaceID string) (Targets, error)
	SetTargets(ctx context.Context, workspaceID string, t Targets, by string, at time.Time) error
	// MarkBreaches sets sla_breached_at on the open and acknowledged issues whose SLA
	// clock passed their severity's target by now, and writes their issue.sla_breached
	// events, in the transaction in ctx; at most limit issues per call.
	MarkBreaches(ctx context.Context, now time.Time, limit int) ([]Breach, error)
	SLAReport(ctx context.Context, v catalog.Viewer, q ReportQuery) (SLAReport, error)
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Service runs the issue workflow for the principal in ctx.
type Service struct {
	store  Store
	tx     Tx
	titles Titles
	clock  vigia.Clock
}

// NewService returns the issue service.
func NewService(store Store, tx Tx, titles Titles, clock vigia.Clock) *Service {
	return &Service{store: store, tx: tx, titles: titles, clock: clock}
}

// Titles renders stored message keys in a language (the i18n catalogue).
type Titles = catalog.Titles

// localize renders the issue's title in the request's language (catalog.RenderTitle).
func (s *Service) localize(ctx context.Context, is Issue) Issue {
	is.Title = catalog.RenderTitle(ctx, s.titles, is.TitleKey, is.TitleParams, is.Title)
	return is
}

// localized is localize over a store answer.
func (s *Service) localized(ctx context.Context, is Issue, err error) (Issue, error) {
	if err != nil {
		return is, err
	}
	return s.localize(ctx, is), nil
}

// NextStatus is the status an action leads to from a status, with the history event it
// writes; ok is false when the action is not allowed from that status.
func NextStatus(from, action string) (to, event string, ok bool) {
	unresolved := from == StatusOpen || from == StatusAcknowledged
	switch action {
	case ActionAcknowledge:
		return StatusAcknowledged, EventAcknowledged, from == StatusOpen
	case ActionResolve:
		return StatusResolved, EventResolved, unresolved
	case ActionIgnore:
		return StatusIgnored, EventIgnored, unresolved
	case ActionIgnoreExpected:
		return StatusIgnored, EventIgnoredExpected, unresolved
	case ActionReopen:
		return StatusOpen, EventReopened, from == StatusResolved || from == StatusIgnored
	}
	return "", "", false
}

// Actions lists the actions of the workflow.
func Actions() []string {
	return []string{ActionAcknowledge, ActionResolve, ActionIgnore, ActionIgnoreExpected, ActionReopen}
}

// PageDefault is the page size of the issue list when limit is not given.
const PageDefault = 100

// Issues lists the issues the caller can see with the total. Returns KindInvalid for a
// bad filter value or page.
func (s *Service) Issues(ctx context.Context, f Filter) (vigia.List[Issue], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Issue]{}, err
	}
	sf, empty, err := resolveFilter(p, f, true)
	if err != nil || empty {
		return vigia.List[Issue]{Items: []Issue{}}, err
	}
	l, err := s.store.Issues(ctx, catalog.ViewerOf(p), sf)
	for i := range l.Items {
		l.Items[i] = s.localize(ctx, l.Items[i])
	}
	return l, err
}

// resolveFilter checks a filter and turns "mine" into the caller's teams; empty is true
// when nothing can match (an id Vigia never issues).
func resolveFilter(p vigia.Principal, f Filter, paged bool) (StoreFilter, bool, error) {
	var fields []vigia.FieldError
	check := func(name string, vals []string, allowed ...string) {
		for _, v := range vals {
			ok := false
			for _, a := range allowed {
				ok = ok || v == a
			}
			if !ok {
				fields = append(fields, vigia.Field("enum", nil, name))
				return
			}
		}
	}
	check("severity", f.Severities, "critical", "warning", "info")
	check("status", f.Statuses, StatusOpen, StatusAcknowledged, StatusResolved, StatusIgnored)
	for _, t := range f.Types {
		if t == "" || len(t) > 64 {
			fields = append(fields, vigia.Field("value_error", nil, "type"))
			break
		}
	}
	if paged {
		fields = append(fields, vigia.FieldsOf(f.Page.Validate())...)
	}
	sf := StoreFilter{Severities: f.Severities, Statuses: f.Statuses, Types: f.Types, SLABreached: f.SLABreached, Page: f.Page}
	empty := false
	if f.AssigneeTeam != nil {
		switch t := *f.AssigneeTeam; {
		case t == "mine":
			sf.TeamIDs = append([]string{}, p.TeamIDs...)
			empty = len(sf.TeamIDs) == 0
		case t == "none":
			sf.NoTeam = true
		case vigia.ValidID(t):
			sf.TeamIDs = []string{t}
		default:
			fields = append(fields, vigia.Field("value_error", nil, "assignee_team"))
		}
	}
	if f.DatasetID != nil {
		if !vigia.ValidID(*f.DatasetID) {
			empty = true
		}
		sf.DatasetID = f.DatasetID
	}
	if len(fields) > 0 {
		return sf, false, vigia.Invalid(fields...)
	}
	return sf, empty, nil
}

// Issue returns one issue with its history. Returns KindNotFound for an issue of
// another workspace or of a dataset the caller cannot see.
func (s *Service) Issue(ctx context.Context, id string) (Issue, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Issue{}, err
	}
	if !vigia.ValidID(id) {
		return Issue{}, vigia.NotFound()
	}
	is, err := s.store.IssueByID(ctx, catalog.ViewerOf(p), id)
	return s.localized(ctx, is, err)
}

// Histories returns the histories of several issues in one read (a list's), keyed by
// issue id; issues of another workspace or of a dataset the caller cannot see, and
// malformed ids, are absent.
func (s *Service) Histories(ctx context.Context, ids []string) (map[string][]HistoryEntry, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	valid := vigia.ValidIDs(ids)
	return s.store.Histories(ctx, catalog.ViewerOf(p), valid)
}

// Transition applies a person's action (acknowledge, resolve, ignore, ignore_expected,
// reopen) with an optional note, recorded in the issue's history with origin
// user:<id>. Only a person's session of a member or an administrator may: API tokens get
// token_read_only, viewers forbidden. Returns KindNotFound for an issue of another
// workspace or of a dataset the caller cannot see, KindInvalid for an unknown action or a
// note over MaxNote, and KindConflict: invalid_transition when the action is not allowed
// from the issue's status, issue_superseded when reopening would give a rule (or an
// anomaly metric) a second open issue.
func (s *Service) Transition(ctx context.Context, id, action, note string) (Issue, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Issue{}, err
	}
	if len([]rune(note)) > MaxNote {
		return Issue{}, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": MaxNote}, "note"))
	}
	if !vigia.ValidID(id) {
		return Issue{}, vigia.NotFound()
	}
	v := catalog.ViewerOf(p)
	if err := s.transition(ctx, p.WorkspaceID, &v, id, action, "user:"+p.UserID, note); err != nil {
		return Issue{}, err
	}
	is, err := s.store.IssueByID(ctx, v, id)
	return s.localized(ctx, is, err)
}

// TransitionAsSystem applies an action for a system actor (a ticket integration, a
// job) with any origin, e.g. ticket:jira:OPS-12; it checks no principal, only that the
// issue belongs to the workspace. A rule's issue resolved this way awaits verification.
// Errors are those of Transition, and KindInvalid for an empty or over-long origin.
func (s *Service) TransitionAsSystem(ctx context.Context, workspaceID, issueID, action, origin string) (Issue, error) {
	if origin == "" || len(origin) > 300 {
		return Issue{}, vigia.Invalid(vigia.Field("value_error", nil, "origin"))
	}
	if !vigia.ValidID(issueID) || !vigia.ValidID(workspaceID) {
		return Issue{}, vigia.NotFound()
	}
	if err := s.transition(ctx, workspaceID, nil, issueID, action, origin, ""); err != nil {
		return Issue{}, err
	}
	return s.store.IssueByID(ctx, catalog.Viewer{WorkspaceID: workspaceID, TeamIDs: []string{}, Admin: true}, issueID)
}

func (s *Service) transition(ctx context.Context, workspaceID string, v *catalog.Viewer, id, action, origin, note string) error {
	valid := false
	for _, a := range Actions() {
		valid = valid || a == action
	}
	if !valid {
		return vigia.Invalid(vigia.Field("enum", nil, "action"))
	}
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		is, err := s.store.LockIssue(ctx, workspaceID, v, id)
		if err != nil {
			return err
		}
		to, event, ok := NextStatus(is.Status, action)
		if !ok {
			return vigia.Conflict("invalid_transition", "error.invalid_transition", map[string]any{"from": is.Status, "action": action})
		}
		now := s.clock.Now()
		c := Change{IssueID: is.ID, WorkspaceID: workspaceID, From: is.Status, To: to, Event: event, Origin: origin, Note: note, At: now}
		switch action {
		case ActionIgnoreExpected:
			reason := ReasonExpected
			c.Reason = &reason
		case ActionReopen:
			if is.RuleID != nil && !is.RuleCurrent {
				other, err := s.store.OtherCurrentIssue(ctx, *is.RuleID, is.ID)
				if err != nil {
					return err
				}
				if other {
					return superseded()
				}
				c.MakeCurrent = true
			}
		}
		if err := s.store.ApplyChange(ctx, c); err != nil {
			if vigia.IsKind(err, vigia.KindConflict) {
				return superseded()
			}
			return err
		}
		if is.Type == quality.IssueTypeAnomaly && is.Metric != "" {
			return s.tune(ctx, is, action, origin, now)
		}
		return nil
	})
}

func superseded() error {
	return vigia.Conflict("issue_superseded", "error.issue_superseded", nil)
}

// Assign sets (or, with nil, clears) the team an issue is assigned to, recorded in its
// history (event assigned). Member or administrator sessions only, like Transition;
// KindNotFound for an issue the caller cannot see, KindInvalid for a team the workspace
// does not have.
func (s *Service) Assign(ctx context.Context, id string, teamID *string) (Issue, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Issue{}, err
	}
	if !vigia.ValidID(id) {
		return Issue{}, vigia.NotFound()
	}
	v := catalog.ViewerOf(p)
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		is, err := s.store.LockIssue(ctx, p.WorkspaceID, &v, id)
		if err != nil {
			return err
		}
		if teamID != nil {
			if !vigia.ValidID(*teamID) {
				return vigia.Invalid(vigia.Field("value_error", nil, "assignee_team_id"))
			}
			if err := vigia.CheckRefs(ctx, s.store, p.WorkspaceID, vigia.Ref{Kind: vigia.RefTeam, ID: *teamID}); err != nil {
				return err
			}
		}
		note := ""
		if teamID != nil {
			note = *teamID
		}
		return s.store.SetAssignee(ctx, Change{IssueID: is.ID, WorkspaceID: p.WorkspaceID, From: is.Status, To: is.Status,
			Event: EventAssigned, Origin: "user:" + p.UserID, Note: note, At: s.clock.Now()}, teamID)
	})
	if err != nil {
		return Issue{}, err
	}
	is, err := s.store.IssueByID(ctx, v, id)
	return s.localized(ctx, is, err)
}

// Board counts the issues the caller can see per status and severity, and per status
// and team (team_cells; a nil team is no team). assigneeTeam filters like the list's.
func (s *Service) Board(ctx context.Context, assigneeTeam *string) (Board, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Board{}, err
	}
	sf, empty, err := resolveFilter(p, Filter{AssigneeTeam: assigneeTeam}, false)
	if err != nil {
		return Board{}, err
	}
	var rows []BoardRow
	if !empty {
		if rows, err = s.store.Board(ctx, catalog.ViewerOf(p), sf); err != nil {
			return Board{}, err
		}
	}
	return BuildBoard(rows), nil
}

// BuildBoard folds the board query's groups into the four status columns (always
// present, in workflow order) and the team cells (status order, then team name, no team
// last).
func BuildBoard(rows []BoardRow) Board {
	order := []string{StatusOpen, StatusAcknowledged, StatusResolved, StatusIgnored}
	b := Board{Columns: make([]BoardColumn, len(order)), TeamCells: []TeamCell{}}
	at := map[string]int{}
	for i, st := range order {
		b.Columns[i] = BoardColumn{Status: st, BySeverity: map[string]int{"critical": 0, "warning": 0, "info": 0}}
		at[st] = i
	}
	cells := map[string]int{}
	for _, r := range rows {
		i, ok := at[r.Status]
		if !ok {
			continue
		}
		b.Total += r.Count
		b.Columns[i].Count += r.Count
		b.Columns[i].BySeverity[r.Severity] += r.Count
		key := r.Status + "\x00"
		if r.TeamID != nil {
			key += *r.TeamID
		}
		if j, ok := cells[key]; ok {
			b.TeamCells[j].Count += r.Count
			continue
		}
		cells[key] = len(b.TeamCells)
		b.TeamCells = append(b.TeamCells, TeamCell{Status: r.Status, TeamID: r.TeamID, TeamName: r.TeamName, Count: r.Count})
	}
	sortCells(b.TeamCells, at)
	return b
}

func sortCells(cells []TeamCell, at map[string]int) {
	less := func(a, b TeamCell) bool {
		if at[a.Status] != at[b.Status] {
			return at[a.Status] < at[b.Status]
		}
		if (a.TeamName == nil) != (b.TeamName == nil) {
			return b.TeamName == nil
		}
		if a.TeamName != nil && *a.TeamName != *b.TeamName {
			return *a.TeamName < *b.TeamName
		}
		return a.TeamID != nil && b.TeamID != nil && *a.TeamID < *b.TeamID
	}
	for i := 1; i < len(cells); i++ {
		for j := i; j > 0 && less(cells[j], cells[j-1]); j-- {
			cells[j], cells[j-1] = cells[j-1], cells[j]
		}
	}
}
