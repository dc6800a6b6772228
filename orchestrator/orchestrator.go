// Package orchestrator records the runs orchestrators (Airflow, Dagster, Prefect, dbt or
// anything that can POST) report, with the datasets each run read and wrote, and
// judges the health of the pipelines writing a dataset from that history: last
// success and failure, consecutive failures, the cadence learned from the runs, and a
// late, failing, healthy or not_monitored status.
package orchestrator

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/lineage"
)

// Run statuses.
const (
	StatusRunning = "running"
	StatusSuccess = "success"
	StatusFailed  = "failed"
	StatusAborted = "aborted"
)

// RunPageDefault is the page of runs when no limit is given.
const RunPageDefault = 100

// Statuses are the run statuses a report may give.
var Statuses = []string{StatusRunning, StatusSuccess, StatusFailed, StatusAborted}

// Bounds of a report.
const (
	MaxOrchestrator = 50
	MaxPipeline     = 200
	MaxRunID        = 200
	MaxDatasets     = 100
	MaxNamespace    = 500
	MaxName         = 500
	MaxFacetsBytes  = 64 << 10
)

// Run is one reported pipeline run.
type Run struct {
	ID           string
	WorkspaceID  string
	Orchestrator string
	Pipeline     string
	RunID        string
	Status       string
	StartedAt    time.Time
	EndedAt      *time.Time
	// Inputs and Outputs are the dataset ids the run read and wrote.
	Inputs  []string
	Outputs []string
	// Unmatched are the OpenLineage names (namespace/name) that named no dataset.
	Unmatched  []string
	Facets     json.RawMessage
	ReceivedAt time.Time
	UpdatedAt  time.Time
	// NextScans are, per dataset the run wrote, the scan that profiled it first after the
	// run ended (absent until one did): the scan that saw what the run changed.
	NextScans []NextScan
}

// NextScan is the first scan that profiled a dataset after a run wrote it.
type NextScan struct {
	DatasetID  string    `json:"dataset_id"`
	ScanID     string    `json:"scan_id"`
	ProfiledAt time.Time `json:"profiled_at"`
}

// RunInput is a run report. A report of a run already recorded (same orchestrator,
// pipeline and run id) replaces it: START then COMPLETE is two reports of one run.
type RunInput struct {
	Orchestrator string
	Pipeline     string
	RunID        string
	Status       string
	StartedAt    *time.Time
	EndedAt      *time.Time
	Inputs       []DatasetRef
	Outputs      []DatasetRef
	Facets       json.RawMessage
}

// DatasetRef names a dataset by Vigia id or by OpenLineage namespace and name.
type DatasetRef struct {
	DatasetID string
	Namespace string
	Name      string
}

// RunFilter selects runs; Page is validated by the service.
type RunFilter struct {
	Orchestrator *string
	Pipeline     *string
	Status       *string
	DatasetID    *string
	// ScanID selects the runs whose written datasets that scan profiled next: the runs
	// that changed what the scan saw.
	ScanID *string
	Page   vigia.Page
}

// Store is the persistence of runs; every method is scoped to the viewer's workspace,
// and the datasets of the runs it answers (inputs, outputs, next scans) to those the
// viewer sees.
type Store interface {
	// PutRun inserts a run, or replaces the one of the same orchestrator, pipeline and
	// run id (keeping its id and received_at). It returns the stored run and whether it
	// was new.
	PutRun(ctx context.Context, v catalog.Viewer, r Run) (Run, bool, error)
	// LiveDatasets returns which of ids are live datasets of the workspace.
	LiveDatasets(ctx context.Context, workspaceID string, ids []string) (map[string]bool, error)
	// Runs lists runs, newest first; a dataset filter the viewer cannot see matches none.
	Runs(ctx context.Context, v catalog.Viewer, f RunFilter) (vigia.List[Run], error)
	// RunsWriting returns, per dataset, the latest runs (at most perPipeline of each
	// pipeline) that wrote it, newest first; datasets no run wrote are absent.
	RunsWriting(ctx context.Context, v catalog.Viewer, datasetIDs []string, perPipeline int) (map[string][]Run, error)
}

// Datasets resolves dataset references (lineage's matching).
type Datasets interface {
	MatchDatasets(ctx context.Context, refs []lineage.DatasetRef) ([]string, error)
}

// Catalog answers whether the caller sees a dataset.
type Catalog interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Service records runs and judges pipeline health.
type Service struct {
	store    Store
	datasets Datasets
	catalog  Catalog
	clock    vigia.Clock
	issues   IssueStore
}

// NewService returns the orchestrator service.
func NewService(store Store, datasets Datasets, cat Catalog, clock vigia.Clock) *Service {
	return &Service{store: store, datasets: datasets, catalog: cat, clock: clock}
}

// WithIssues lets failing and late writers open pipeline issues on the datasets they
// write (see FailuresForIssue), when a run is recorded and in CheckPipelines.
func (s *Service) WithIssues(is IssueStore) *Service {
	s.issues = is
	return s
}

var orchestratorName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// RecordRun records a run report (a marked write: API tokens may call it; viewers may
// not). KindInvalid lists every bad field; a dataset id that is no dataset of the
// workspace is KindNotFound; OpenLineage names that match nothing are kept in
// Unmatched. It returns the run and whether it was new.
func (s *Service) RecordRun(ctx context.Context, in RunInput) (Run, bool, error) {
	p, err := FeedWriter(ctx)
	if err != nil {
		return Run{}, false, err
	}
	r, refs, err := check(in)
	if err != nil {
		return Run{}, false, err
	}
	ids, err := s.match(ctx, p.WorkspaceID, refs)
	if err != nil {
		return Run{}, false, err
	}
	r.Inputs, r.Outputs, r.Unmatched = []string{}, []string{}, []string{}
	seen := map[string]bool{}
	for i, ref := range refs {
		id := ids[i]
		switch {
		case id == "" && ref.ID != "":
			return Run{}, false, vigia.NotFound()
		case id == "":
			n := ref.Namespace + "/" + ref.Name
			if !seen["?"+n] {
				seen["?"+n] = true
				r.Unmatched = append(r.Unmatched, n)
			}
		case i < len(in.Inputs):
			if !seen["i"+id] {
				seen["i"+id] = true
				r.Inputs = append(r.Inputs, id)
			}
		default:
			if !seen["o"+id] {
				seen["o"+id] = true
				r.Outputs = append(r.Outputs, id)
			}
		}
	}
	now := s.clock.Now()
	r.ID, r.WorkspaceID, r.ReceivedAt, r.UpdatedAt = vigia.NewID(), p.WorkspaceID, now, now
	out, created, err := s.store.PutRun(ctx, catalog.ViewerOf(p), r)
	if err != nil {
		return Run{}, false, err
	}
	if _, err := s.judgeWriters(ctx, p.WorkspaceID, r.Outputs, now); err != nil {
		return Run{}, false, err
	}
	return out, created, nil
}

// match resolves refs to dataset ids ("" where none): ids by one indexed look-up, and
// only when OpenLineage names are among them lineage's matching, which reads the
// workspace's names.
func (s *Service) match(ctx context.Context, workspaceID string, refs []lineage.DatasetRef) ([]string, error) {
	var named, ids []string
	for _, r := range refs {
		if r.ID == "" {
			named = append(named, r.Name)
		} else {
			ids = append(ids, r.ID)
		}
	}
	if len(named) > 0 {
		return s.datasets.MatchDatasets(ctx, refs)
	}
	live, err := s.store.LiveDatasets(ctx, workspaceID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		if live[r.ID] {
			out[i] = r.ID
		}
	}
	return out, nil
}

// check validates a report: the run it describes and its references in order
// (inputs, then outputs).
func check(in RunInput) (Run, []lineage.DatasetRef, error) {
	var fields []vigia.FieldError
	text := func(v string, max int, loc ...string) string {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			fields = append(fields, vigia.Field("missing", nil, loc...))
		case len([]rune(v)) > max:
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": max}, loc...))
		}
		return v
	}
	r := Run{
		Orchestrator: strings.ToLower(text(in.Orchestrator, MaxOrchestrator, "orchestrator")),
		Pipeline:     text(in.Pipeline, MaxPipeline, "pipeline"),
		RunID:        text(in.RunID, MaxRunID, "run_id"),
		Status:       in.Status,
		EndedAt:      in.EndedAt,
	}
	if r.Orchestrator != "" && len(r.Orchestrator) <= MaxOrchestrator && !orchestratorName.MatchString(r.Orchestrator) {
		fields = append(fields, vigia.Field("string_pattern_mismatch", map[string]any{"pattern": orchestratorName.String()}, "orchestrator"))
	}
	switch {
	case in.Status == "":
		fields = append(fields, vigia.Field("missing", nil, "status"))
	case !validStatus(in.Status):
		fields = append(fields, vigia.Field("enum", map[string]any{"expected": strings.Join(Statuses, ", ")}, "status"))
	}
	var periodFields []vigia.FieldError
	r.StartedAt, r.EndedAt, periodFields = Period(in.StartedAt, in.EndedAt)
	fields = append(fields, periodFields...)
	var refs []lineage.DatasetRef
	for _, side := range []struct {
		name string
		refs []DatasetRef
	}{{"inputs", in.Inputs}, {"outputs", in.Outputs}} {
		if len(side.refs) > MaxDatasets {
			fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxDatasets}, side.name))
			continue
		}
		for i, d := range side.refs {
			loc := []string{side.name, strconv.Itoa(i)}
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
			case len(ns) > MaxNamespace:
				fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxNamespace}, append(loc, "namespace")...))
			case len(name) > MaxName:
				fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxName}, append(loc, "name")...))
			default:
				refs = append(refs, lineage.DatasetRef{Namespace: ns, Name: name})
			}
		}
	}
	if len(in.Facets) > MaxFacetsBytes {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxFacetsBytes}, "facets"))
	} else if len(in.Facets) > 0 {
		var obj map[string]json.RawMessage
		if json.Unmarshal(in.Facets, &obj) != nil {
			fields = append(fields, vigia.Field("dict_type", nil, "facets"))
		} else {
			r.Facets = in.Facets
		}
	}
	if len(fields) > 0 {
		return Run{}, nil, vigia.Invalid(fields...)
	}
	// An id we never issue names no dataset of the workspace: 404, like any other.
	for _, ref := range refs {
		if ref.ID != "" && !vigia.ValidID(ref.ID) {
			return Run{}, nil, vigia.NotFound()
		}
	}
	return r, refs, nil
}

func validStatus(s string) bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Runs lists recorded runs, newest first, with filters. KindInvalid for a bad page or
// status.
func (s *Service) Runs(ctx context.Context, f RunFilter) (vigia.List[Run], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Run]{}, err
	}
	if err := f.Page.Validate(); err != nil {
		return vigia.List[Run]{}, err
	}
	if f.Status != nil && !validStatus(*f.Status) {
		return vigia.List[Run]{}, vigia.Invalid(vigia.Field("enum", map[string]any{"expected": strings.Join(Statuses, ", ")}, "status"))
	}
	if f.Orchestrator != nil {
		o := strings.ToLower(strings.TrimSpace(*f.Orchestrator))
		f.Orchestrator = &o
	}
	if (f.DatasetID != nil && !vigia.ValidID(*f.DatasetID)) || (f.ScanID != nil && !vigia.ValidID(*f.ScanID)) {
		return vigia.List[Run]{Items: []Run{}}, nil
	}
	return s.store.Runs(ctx, catalog.ViewerOf(p), f)
}

// historyPerPipeline is how many of a pipeline's latest runs health reads.
const historyPerPipeline = 50

// PipelineHealth returns the health of the pipelines writing a dataset. KindNotFound
// when the caller cannot see the dataset.
func (s *Service) PipelineHealth(ctx context.Context, datasetID string) (Health, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Health{}, err
	}
	if _, err := s.catalog.Dataset(ctx, datasetID); err != nil {
		return Health{}, err
	}
	runs, err := s.store.RunsWriting(ctx, catalog.ViewerOf(p), []string{datasetID}, historyPerPipeline)
	if err != nil {
		return Health{}, err
	}
	h := Assess(runs[datasetID], s.clock.Now())
	h.DatasetID = datasetID
	return h, nil
}

// Period checks a reported run's times (started_at required, ended_at not before it)
// and returns them in UTC; every feed that reports runs (orchestrators, BI refreshes)
// checks them alike.
func Period(started, ended *time.Time) (time.Time, *time.Time, []vigia.FieldError) {
	var fields []vigia.FieldError
	var start time.Time
	if started == nil {
		fields = append(fields, vigia.Field("missing", nil, "started_at"))
	} else {
		start = started.UTC()
	}
	var end *time.Time
	if ended != nil {
		e := ended.UTC()
		end = &e
		if started != nil && e.Before(start) {
			fields = append(fields, vigia.Field("value_error", nil, "ended_at"))
		}
	}
	return start, end, fields
}

// FeedWriter is the caller of a feed's marked write (orchestrator runs, BI refreshes): an
// API token, or a session of a member or more; viewers may not write.
func FeedWriter(ctx context.Context) (vigia.Principal, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return p, err
	}
	if !p.ReadOnly && !p.Role.AtLeast(vigia.RoleMember) {
		return p, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
	}
	return p, nil
}
