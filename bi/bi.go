// Package bi records the dataset refreshes BI tools (Power BI, Tableau, Looker,
// Metabase…) report, with the warehouse datasets each BI dataset reads and the
// dashboards built on it. Dashboards become lineage exposures of those datasets; a
// failed refresh, or one late by the cadence learned from the BI dataset's history,
// opens the BI dataset's one bi_refresh issue (subtype failed or delayed), which a
// succeeding refresh resolves.
package bi

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/orchestrator"
)

// Tools are the BI tools a refresh may come from.
var Tools = []string{"powerbi", "tableau", "looker", "metabase", "other"}

// Refresh statuses.
const (
	StatusRunning = "running"
	StatusSuccess = "success"
	StatusFailed  = "failed"
)

// Statuses are the refresh statuses a report may give.
var Statuses = []string{StatusRunning, StatusSuccess, StatusFailed}

// Issue subtypes of bi_refresh issues.
const (
	SubtypeFailed  = "failed"
	SubtypeDelayed = "delayed"
)

// IssueType is the contract's issue type of refresh problems.
const IssueType = "bi_refresh"

// Bounds of a report.
const (
	MaxBIDatasetID   = 200
	MaxBIDatasetName = 200
	MaxRefreshID     = 200
	MaxDatasets      = 100
	MaxDashboards    = 100
	MaxDashboardName = 200
	MaxURL           = 2000
)

// Dashboard is a dashboard (report, workbook, look) built on a BI dataset.
type Dashboard struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Refresh is one reported refresh of a BI dataset.
type Refresh struct {
	ID            string
	WorkspaceID   string
	Tool          string
	BIDatasetID   string
	BIDatasetName string
	RefreshID     string
	Status        string
	StartedAt     time.Time
	EndedAt       *time.Time
	// Inputs are the warehouse datasets the BI dataset reads, in the report's order.
	Inputs []string
	// Unmatched are the OpenLineage names (namespace/name) that named no dataset.
	Unmatched  []string
	Dashboards []Dashboard
	ReceivedAt time.Time
	UpdatedAt  time.Time
}

// RefreshInput is a refresh report; a report of a refresh already recorded (same tool,
// BI dataset and refresh id) replaces it.
type RefreshInput struct {
	Tool          string
	BIDatasetID   string
	BIDatasetName string
	RefreshID     string
	Status        string
	StartedAt     *time.Time
	EndedAt       *time.Time
	Inputs        []orchestrator.DatasetRef
	Dashboards    []Dashboard
}

// RefreshPageDefault is the page size of refresh lists when none is asked for.
const RefreshPageDefault = 100

// RefreshFilter selects refreshes; Page is validated by the service.
type RefreshFilter struct {
	Tool        *string
	BIDatasetID *string
	Status      *string
	DatasetID   *string
	Page        vigia.Page
}

// Key names a BI dataset of a workspace.
type Key struct {
	WorkspaceID string
	Tool        string
	BIDatasetID string
}

// String is the key issues carry (details.bi_key): tool:bi_dataset_id.
func (k Key) String() string { return k.Tool + ":" + k.BIDatasetID }

// Problem is what a BI dataset's refreshes say is wrong: the store opens the BI
// dataset's bi_refresh issue, or updates the open one, with it.
type Problem struct {
	Key           Key
	DatasetID     string
	Subtype       string
	Severity      string
	BIDatasetName string
	Dashboards    []string
	RefreshID     string
	ExpectedBy    *time.Time
	At            time.Time
	Origin        string
}

// Store is the persistence of refreshes and their issues; reads with a viewer are
// scoped to its workspace and answer only the datasets it sees.
type Store interface {
	// PutRefresh inserts a refresh, or replaces the one of the same tool, BI dataset and
	// refresh id; it returns the stored refresh and whether it was new.
	PutRefresh(ctx context.Context, v catalog.Viewer, r Refresh) (Refresh, bool, error)
	// Refreshes lists refreshes, newest first.
	Refreshes(ctx context.Context, v catalog.Viewer, f RefreshFilter) (vigia.List[Refresh], error)
	// History returns a BI dataset's latest n refreshes, newest first, all datasets.
	History(ctx context.Context, k Key, n int) ([]Refresh, error)
	// RecentKeys lists the BI datasets of every workspace refreshed since since.
	RecentKeys(ctx context.Context, since time.Time) ([]Key, error)
	// RaiseIssue opens the BI dataset's bi_refresh issue, or updates its open one
	// (subtype, severity, impact; one more detection when the subtype or refresh
	// changed); it returns the issue id and whether it opened it.
	RaiseIssue(ctx context.Context, p Problem) (string, bool, error)
	// ResolveIssue resolves the BI dataset's open bi_refresh issue, if any; it returns
	// whether there was one.
	ResolveIssue(ctx context.Context, k Key, origin string, at time.Time) (bool, error)
}

// Datasets resolves dataset references (lineage's matching).
type Datasets interface {
	MatchDatasets(ctx context.Context, refs []lineage.DatasetRef) ([]string, error)
}

// Exposures keeps the dashboards of a BI dataset as lineage exposures.
type Exposures interface {
	ReplaceFeedExposures(ctx context.Context, workspaceID, origin string, exps []lineage.ExposureInput) error
}

// Service records refreshes and judges them.
type Service struct {
	store     Store
	datasets  Datasets
	exposures Exposures
	clock     vigia.Clock
}

// NewService returns the BI feed service.
func NewService(store Store, datasets Datasets, exposures Exposures, clock vigia.Clock) *Service {
	return &Service{store: store, datasets: datasets, exposures: exposures, clock: clock}
}

var idPattern = regexp.MustCompile(`^[^\x00-\x1f\x7f]+$`)

// RecordRefresh records a refresh report (a marked write: API tokens may call it;
// viewers may not), keeps its dashboards as exposures of the datasets it reads and
// judges the BI dataset. KindInvalid lists every bad field; a dataset id that is no
// dataset of the workspace is KindNotFound. It returns the refresh and whether it was
// new.
func (s *Service) RecordRefresh(ctx context.Context, in RefreshInput) (Refresh, bool, error) {
	p, err := orchestrator.FeedWriter(ctx)
	if err != nil {
		return Refresh{}, false, err
	}
	r, refs, err := check(in)
	if err != nil {
		return Refresh{}, false, err
	}
	r.Inputs, r.Unmatched = []string{}, []string{}
	if len(refs) > 0 {
		ids, err := s.datasets.MatchDatasets(ctx, refs)
		if err != nil {
			return Refresh{}, false, err
		}
		for i, ref := range refs {
			switch id := ids[i]; {
			case id == "" && ref.ID != "":
				return Refresh{}, false, vigia.NotFound()
			case id == "":
				if n := ref.Namespace + "/" + ref.Name; !slices.Contains(r.Unmatched, n) {
					r.Unmatched = append(r.Unmatched, n)
				}
			case !slices.Contains(r.Inputs, id):
				r.Inputs = append(r.Inputs, id)
			}
		}
	}
	now := s.clock.Now()
	r.ID, r.WorkspaceID, r.ReceivedAt, r.UpdatedAt = vigia.NewID(), p.WorkspaceID, now, now
	out, created, err := s.store.PutRefresh(ctx, catalog.ViewerOf(p), r)
	if err != nil {
		return Refresh{}, false, err
	}
	exps := make([]lineage.ExposureInput, 0, len(r.Dashboards))
	for _, d := range r.Dashboards {
		exps = append(exps, lineage.ExposureInput{Name: d.Name, Type: "dashboard", URL: d.URL, Owner: r.Tool, DatasetIDs: r.Inputs})
	}
	k := Key{WorkspaceID: p.WorkspaceID, Tool: r.Tool, BIDatasetID: r.BIDatasetID}
	if err := s.exposures.ReplaceFeedExposures(ctx, p.WorkspaceID, "bi:"+k.String(), exps); err != nil {
		return Refresh{}, false, err
	}
	if _, err := s.judge(ctx, k, now); err != nil {
		return Refresh{}, false, err
	}
	return out, created, nil
}

// historyPerBIDataset is how many of a BI dataset's latest refreshes judging reads.
const historyPerBIDataset = 50

// judge reads a BI dataset's latest refreshes and opens, updates or resolves its
// issue: failing (its latest finished refresh failed) raises failed, late by the
// learned cadence (orchestrator.Assess's rule) raises delayed, a newest refresh that
// succeeded resolves. It returns the health it judged.
func (s *Service) judge(ctx context.Context, k Key, now time.Time) (orchestrator.PipelineHealth, error) {
	hist, err := s.store.History(ctx, k, historyPerBIDataset)
	if err != nil || len(hist) == 0 {
		return orchestrator.PipelineHealth{}, err
	}
	runs := make([]orchestrator.Run, 0, len(hist))
	byRun := map[string]Refresh{}
	for _, r := range hist {
		runs = append(runs, orchestrator.Run{ID: r.ID, Orchestrator: r.Tool, Pipeline: r.BIDatasetID, RunID: r.RefreshID,
			Status: r.Status, StartedAt: r.StartedAt, EndedAt: r.EndedAt, UpdatedAt: r.UpdatedAt})
		byRun[r.ID] = r
	}
	h := orchestrator.Assess(runs, now)
	ph := h.Pipelines[0]
	latest := byRun[ph.LastRun.ID]
	pr := Problem{Key: k, BIDatasetName: latest.BIDatasetName, At: now, Dashboards: []string{}}
	for _, d := range latest.Dashboards {
		pr.Dashboards = append(pr.Dashboards, d.Name)
	}
	// The issue sits on the first dataset the BI dataset reads (its latest refresh
	// naming one); a BI dataset reading no known dataset has no issue.
	for _, r := range hist {
		if len(r.Inputs) > 0 {
			pr.DatasetID = r.Inputs[0]
			break
		}
	}
	switch ph.Status {
	case orchestrator.HealthFailing:
		pr.Subtype, pr.Severity, pr.RefreshID = SubtypeFailed, "critical", ph.FailingRun.RunID
		pr.Origin = "bi:" + k.Tool + ":" + ph.FailingRun.RunID
	case orchestrator.HealthLate:
		pr.Subtype, pr.Severity, pr.RefreshID, pr.ExpectedBy = SubtypeDelayed, "warning", ph.LastRun.RunID, ph.ExpectedBy
		pr.Origin = "system:bi_refresh_delayed"
	default:
		// Only a refresh that succeeded resolves: one still running does not.
		if hist[0].Status == StatusSuccess {
			_, err := s.store.ResolveIssue(ctx, k, "bi:"+k.Tool+":"+hist[0].RefreshID, now)
			return ph, err
		}
		return ph, nil
	}
	if pr.DatasetID == "" {
		return ph, nil
	}
	_, _, err = s.store.RaiseIssue(ctx, pr)
	return ph, err
}

// recentWindow is how far back the periodic check looks for BI datasets: one that has
// not refreshed for this long is left with the issue it has.
const recentWindow = 60 * 24 * time.Hour

// CheckDelayed judges every BI dataset refreshed recently at the service clock's now,
// so a refresh that never came raises its delayed issue without a new report. It runs
// as a job without a principal and returns how many BI datasets it judged late or
// failing.
func (s *Service) CheckDelayed(ctx context.Context) (int, error) {
	now := s.clock.Now()
	keys, err := s.store.RecentKeys(ctx, now.Add(-recentWindow))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		ph, err := s.judge(ctx, k, now)
		if err != nil {
			return n, err
		}
		if ph.Status == orchestrator.HealthLate || ph.Status == orchestrator.HealthFailing {
			n++
		}
	}
	return n, nil
}

// Refreshes lists recorded refreshes, newest first. KindInvalid for a bad page, tool
// or status.
func (s *Service) Refreshes(ctx context.Context, f RefreshFilter) (vigia.List[Refresh], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Refresh]{}, err
	}
	if err := f.Page.Validate(); err != nil {
		return vigia.List[Refresh]{}, err
	}
	if f.Status != nil && !slices.Contains(Statuses, *f.Status) {
		return vigia.List[Refresh]{}, vigia.Invalid(vigia.Field("enum", map[string]any{"expected": strings.Join(Statuses, ", ")}, "status"))
	}
	if f.Tool != nil && !slices.Contains(Tools, *f.Tool) {
		return vigia.List[Refresh]{}, vigia.Invalid(vigia.Field("enum", map[string]any{"expected": strings.Join(Tools, ", ")}, "tool"))
	}
	if f.DatasetID != nil && !vigia.ValidID(*f.DatasetID) {
		return vigia.List[Refresh]{Items: []Refresh{}}, nil
	}
	return s.store.Refreshes(ctx, catalog.ViewerOf(p), f)
}

// check validates a report: the refresh it describes and its dataset references.
func check(in RefreshInput) (Refresh, []lineage.DatasetRef, error) {
	var fields []vigia.FieldError
	text := func(v string, max int, loc ...string) string {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			fields = append(fields, vigia.Field("missing", nil, loc...))
		case len([]rune(v)) > max:
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": max}, loc...))
		case !idPattern.MatchString(v):
			fields = append(fields, vigia.Field("value_error", nil, loc...))
		}
		return v
	}
	r := Refresh{
		Tool:          strings.ToLower(strings.TrimSpace(in.Tool)),
		BIDatasetID:   text(in.BIDatasetID, MaxBIDatasetID, "bi_dataset_id"),
		BIDatasetName: text(in.BIDatasetName, MaxBIDatasetName, "bi_dataset_name"),
		RefreshID:     text(in.RefreshID, MaxRefreshID, "refresh_id"),
		Status:        in.Status,
		Dashboards:    []Dashboard{},
	}
	switch {
	case r.Tool == "":
		fields = append(fields, vigia.Field("missing", nil, "tool"))
	case !slices.Contains(Tools, r.Tool):
		fields = append(fields, vigia.Field("enum", map[string]any{"expected": strings.Join(Tools, ", ")}, "tool"))
	}
	switch {
	case in.Status == "":
		fields = append(fields, vigia.Field("missing", nil, "status"))
	case !slices.Contains(Statuses, in.Status):
		fields = append(fields, vigia.Field("enum", map[string]any{"expected": strings.Join(Statuses, ", ")}, "status"))
	}
	var periodFields []vigia.FieldError
	r.StartedAt, r.EndedAt, periodFields = orchestrator.Period(in.StartedAt, in.EndedAt)
	fields = append(fields, periodFields...)
	var refs []lineage.DatasetRef
	if len(in.Inputs) > MaxDatasets {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxDatasets}, "datasets"))
	} else {
		for i, d := range in.Inputs {
			loc := []string{"datasets", strconv.Itoa(i)}
			id, ns, name := strings.TrimSpace(d.DatasetID), strings.TrimSpace(d.Namespace), strings.TrimSpace(d.Name)
			switch {
			case id != "" && (ns != "" || name != ""):
				fields = append(fields, vigia.Field("value_error", nil, loc...))
			case id != "":
				refs = append(refs, lineage.DatasetRef{ID: id})
			case ns == "":
				fields = append(fields, vigia.Field("missing", nil, append(loc, "namespace")...))
			case name == "":
				fields = append(fields, vigia.Field("missing", nil, append(loc, "name")...))
			case len(ns) > orchestrator.MaxNamespace:
				fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": orchestrator.MaxNamespace}, append(loc, "namespace")...))
			case len(name) > orchestrator.MaxName:
				fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": orchestrator.MaxName}, append(loc, "name")...))
			default:
				refs = append(refs, lineage.DatasetRef{Namespace: ns, Name: name})
			}
		}
	}
	if len(in.Dashboards) > MaxDashboards {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxDashboards}, "dashboards"))
	} else {
		seen := map[string]bool{}
		for i, d := range in.Dashboards {
			loc := []string{"dashboards", strconv.Itoa(i)}
			dd := Dashboard{ID: strings.TrimSpace(d.ID), Name: text(d.Name, MaxDashboardName, append(loc, "name")...), URL: strings.TrimSpace(d.URL)}
			if len(dd.ID) > MaxBIDatasetID {
				fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxBIDatasetID}, append(loc, "id")...))
			}
			if len(dd.URL) > MaxURL || (dd.URL != "" && !strings.HasPrefix(dd.URL, "https://") && !strings.HasPrefix(dd.URL, "http://")) {
				fields = append(fields, vigia.Field("value_error", map[string]any{"max_length": MaxURL}, append(loc, "url")...))
			}
			if !seen[dd.Name] {
				seen[dd.Name] = true
				r.Dashboards = append(r.Dashboards, dd)
			}
		}
	}
	if len(fields) > 0 {
		return Refresh{}, nil, vigia.Invalid(fields...)
	}
	for _, ref := range refs {
		if ref.ID != "" && !vigia.ValidID(ref.ID) {
			return Refresh{}, nil, vigia.NotFound()
		}
	}
	return r, refs, nil
}

// CheckJobKind is the job that runs CheckDelayed (queued every minute, one at a time).
const CheckJobKind = "bi.check_delayed"
