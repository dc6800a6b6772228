// Package incident groups open issues of lineage-connected datasets into incidents and
// answers them with their blast radius, through the lineage service's impact API.
package incident

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/lineage"
)

// Incident statuses.
const (
	Open     = "open"
	Resolved = "resolved"
)

// PageDefault is the page size of the incident list when limit is not given.
const PageDefault = 100

// OpenIssue is an open or acknowledged issue as incident grouping needs it.
type OpenIssue struct {
	ID        string
	DatasetID string
	Column    string
	Severity  string
}

// Incident is a stored incident: open issues of lineage-connected datasets, with the
// unmasked blast radius of its root.
type Incident struct {
	ID            string
	WorkspaceID   string
	Status        string
	RootDatasetID *string
	Severity      string
	IssueIDs      []string
	DatasetIDs    []string
	ScanID        *string
	Impact        lineage.Blast
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ResolvedAt    *time.Time
}

// Filter selects incidents.
type Filter struct {
	Status *string
	// Severity keeps the incidents of one severity (info, warning or critical): the
	// highest severity of their issues.
	Severity *string
	Page     vigia.Page
}

// Store is the record of incidents (implemented by store.LineageStore).
type Store interface {
	// OpenIssues returns the workspace's open and acknowledged issues of live datasets.
	OpenIssues(ctx context.Context, workspaceID string) ([]OpenIssue, error)
	// OpenIncidents returns the workspace's open incidents.
	OpenIncidents(ctx context.Context, workspaceID string) ([]Incident, error)
	// SaveIncident inserts or updates an incident.
	SaveIncident(ctx context.Context, in Incident) error
	// Incidents lists incidents whose root the viewer can see, newest first.
	Incidents(ctx context.Context, v catalog.Viewer, f Filter) (vigia.List[Incident], error)
	// IncidentByID returns an incident whose root the viewer can see.
	IncidentByID(ctx context.Context, v catalog.Viewer, id string) (Incident, error)
	// IssueRef returns an issue's dataset and column, if the viewer can see its dataset.
	IssueRef(ctx context.Context, v catalog.Viewer, id string) (OpenIssue, error)
}

// View is an incident as the caller may see it (contract: Incident).
type View struct {
	ID              string
	Status          string
	Title           string
	Severity        string
	RootDatasetID   *string
	RootDatasetName *string
	IssueIDs        []string
	DatasetIDs      []string
	ScanID          *string
	Impact          lineage.ImpactView
	CreatedAt       time.Time
	UpdatedAt       time.Time
	ResolvedAt      *time.Time
	// ChangedBy are the reported orchestrator runs that changed what the incident's scan
	// saw: runs that wrote one of its datasets, that scan being the first to profile it
	// after the run ended; newest first, empty without a Changes port.
	ChangedBy []ChangeRun
}

// ChangeRun is an orchestrator run that wrote a dataset before a scan profiled it.
type ChangeRun struct {
	ID           string
	Orchestrator string
	Pipeline     string
	RunID        string
	Status       string
	StartedAt    time.Time
	EndedAt      *time.Time
	// DatasetID is the dataset it wrote that the scan profiled next.
	DatasetID string
	// ScanID is that scan.
	ScanID string
}

// Changes finds the runs that changed what scans saw (orchestrator runs; implemented by
// the store).
type Changes interface {
	// RunsBefore returns, among the datasets v sees of datasetIDs, the runs that wrote
	// one of them with one of scanIDs as the first scan to profile it after the run
	// ended, newest first.
	RunsBefore(ctx context.Context, v catalog.Viewer, scanIDs, datasetIDs []string) ([]ChangeRun, error)
}

// Lineage is what incidents read of lineage: the downstream walk for grouping, blast
// radii (unmasked, stored with an incident) and their masking for a reader, and the
// names and visibility of datasets (implemented by *lineage.Service).
type Lineage interface {
	DownstreamOf(ctx context.Context, workspaceID string, ids []string) (map[string][]string, error)
	BlastRadius(ctx context.Context, v catalog.Viewer, rootID string, cols []string) (lineage.Blast, error)
	BlastRadii(ctx context.Context, v catalog.Viewer, roots []string, cols map[string][]string) (map[string]lineage.Blast, error)
	MaskImpact(ctx context.Context, v catalog.Viewer, b lineage.Blast, datasets []string) (lineage.ImpactView, error)
	Datasets(ctx context.Context, v catalog.Viewer, ids []string) (map[string]lineage.DatasetInfo, error)
}

// Service groups issues into incidents and answers them for the principal in ctx.
type Service struct {
	store   Store
	lineage Lineage
	clock   vigia.Clock
	changes Changes
}

// NewService returns the incident service.
func NewService(store Store, lin Lineage, clock vigia.Clock) *Service {
	return &Service{store: store, lineage: lin, clock: clock}
}

// WithChanges lets incidents name the runs that changed what their scan saw.
func (s *Service) WithChanges(c Changes) *Service {
	s.changes = c
	return s
}

// AfterScan groups the workspace's open issues into incidents at the end of each scan
// (it runs after lineage re-derived the connection's edges).
func (s *Service) AfterScan(ctx context.Context, workspaceID, _, scanID string) error {
	return s.Group(ctx, workspaceID, scanID)
}

// viewer returns what the caller in ctx may see.
func viewer(ctx context.Context) (catalog.Viewer, error) {
	p, err := vigia.MustPrincipal(ctx)
	return catalog.ViewerOf(p), err
}

// Group groups the workspace's open issues into incidents: datasets with open
// issues that lineage connects (one downstream of another within 3 hops) share an
// incident whose root is the most upstream of them. Existing open incidents sharing an
// issue are updated; those whose issues all closed are resolved.
func (s *Service) Group(ctx context.Context, ws string, scanID string) error {
	issues, err := s.store.OpenIssues(ctx, ws)
	if err != nil {
		return err
	}
	byDataset := map[string][]OpenIssue{}
	var failing []string
	for _, is := range issues {
		if _, ok := byDataset[is.DatasetID]; !ok {
			failing = append(failing, is.DatasetID)
		}
		byDataset[is.DatasetID] = append(byDataset[is.DatasetID], is)
	}
	sort.Strings(failing)
	system := catalog.Viewer{WorkspaceID: ws, TeamIDs: []string{}, Admin: true}
	// reaches[a] = failing datasets downstream of a.
	reaches := map[string][]string{}
	down, err := s.lineage.DownstreamOf(ctx, ws, failing)
	if err != nil {
		return err
	}
	for _, a := range failing {
		for _, id := range down[a] {
			if _, ok := byDataset[id]; ok {
				reaches[a] = append(reaches[a], id)
			}
		}
	}
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		return x
	}
	for _, a := range failing {
		for _, b := range reaches[a] {
			ra, rb := find(a), find(b)
			if ra != rb {
				parent[rb] = ra
			}
		}
	}
	groups := map[string][]string{}
	for _, id := range failing {
		r := find(id)
		groups[r] = append(groups[r], id)
	}
	existing, err := s.store.OpenIncidents(ctx, ws)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	used := map[string]bool{}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type group struct {
		root, sev     string
		members       []string
		issueIDs      []string
		issueDatasets map[string]string
	}
	var gs []group
	roots := make([]string, 0, len(keys))
	cols := map[string][]string{}
	for _, k := range keys {
		g := group{members: groups[k], sev: "info", issueDatasets: map[string]string{}}
		g.root = rootOf(g.members, reaches)
		for _, d := range g.members {
			for _, is := range byDataset[d] {
				g.issueIDs = append(g.issueIDs, is.ID)
				g.issueDatasets[is.ID] = d
				g.sev = maxSeverity(g.sev, is.Severity)
				if d == g.root && is.Column != "" && !slices.Contains(cols[g.root], is.Column) {
					cols[g.root] = append(cols[g.root], is.Column)
				}
			}
		}
		sort.Strings(g.issueIDs)
		sort.Strings(cols[g.root])
		gs = append(gs, g)
		roots = append(roots, g.root)
	}
	blasts, err := s.lineage.BlastRadii(ctx, system, roots, cols)
	if err != nil {
		return err
	}
	for _, g := range gs {
		b := blasts[g.root]
		b.Issues = g.issueDatasets
		root := g.root
		inc := Incident{ID: vigia.NewID(), WorkspaceID: ws, Status: Open, RootDatasetID: &root, Severity: g.sev,
			IssueIDs: g.issueIDs, DatasetIDs: g.members, ScanID: &scanID, Impact: b, CreatedAt: now, UpdatedAt: now}
		for _, old := range existing {
			if used[old.ID] {
				continue
			}
			if slices.ContainsFunc(old.IssueIDs, func(id string) bool { return slices.Contains(g.issueIDs, id) }) {
				inc.ID, inc.CreatedAt = old.ID, old.CreatedAt
				used[old.ID] = true
				break
			}
		}
		if err := s.store.SaveIncident(ctx, inc); err != nil {
			return err
		}
	}
	for _, old := range existing {
		if used[old.ID] {
			continue
		}
		old.Status, old.UpdatedAt, old.ResolvedAt = Resolved, now, &now
		if err := s.store.SaveIncident(ctx, old); err != nil {
			return err
		}
	}
	return nil
}

// rootOf picks the most upstream member: one no other member reaches; among several,
// the one reaching most members, then the smallest id.
func rootOf(members []string, reaches map[string][]string) string {
	reached := map[string]bool{}
	for _, a := range members {
		for _, b := range reaches[a] {
			if b != a {
				reached[b] = true
			}
		}
	}
	best, bestN := "", -1
	for _, m := range members {
		if reached[m] {
			continue
		}
		if n := len(reaches[m]); n > bestN || (n == bestN && m < best) {
			best, bestN = m, n
		}
	}
	if best == "" { // a cycle: everyone is reached
		best = members[0]
	}
	return best
}

// Severities are an incident's severities, lowest first.
var Severities = []string{"info", "warning", "critical"}

var severityRank = map[string]int{"info": 0, "warning": 1, "critical": 2}

func maxSeverity(a, b string) string {
	if severityRank[b] > severityRank[a] {
		return b
	}
	return a
}

// Incidents lists the incidents whose root dataset the caller can see, newest first.
// Returns KindInvalid for a bad page, status or severity.
func (s *Service) Incidents(ctx context.Context, f Filter) (vigia.List[View], error) {
	v, err := viewer(ctx)
	if err != nil {
		return vigia.List[View]{}, err
	}
	fields := vigia.FieldsOf(f.Page.Validate())
	if f.Status != nil && *f.Status != Open && *f.Status != Resolved {
		fields = append(fields, vigia.Field("enum", nil, "status"))
	}
	if f.Severity != nil {
		if _, ok := severityRank[*f.Severity]; !ok {
			fields = append(fields, vigia.Field("enum", nil, "severity"))
		}
	}
	if len(fields) > 0 {
		return vigia.List[View]{}, vigia.Invalid(fields...)
	}
	res, err := s.store.Incidents(ctx, v, f)
	if err != nil {
		return vigia.List[View]{}, err
	}
	out := vigia.List[View]{Total: res.Total, Items: make([]View, 0, len(res.Items))}
	views, err := s.incidentViews(ctx, v, res.Items)
	if err != nil {
		return out, err
	}
	out.Items = views
	return out, nil
}

// Incident returns one incident with its blast radius. Returns KindNotFound for an
// unknown id, another workspace's, or one whose root the caller cannot see.
func (s *Service) Incident(ctx context.Context, id string) (View, error) {
	v, err := viewer(ctx)
	if err != nil {
		return View{}, err
	}
	if !vigia.ValidID(id) {
		return View{}, vigia.NotFound()
	}
	inc, err := s.store.IncidentByID(ctx, v, id)
	if err != nil {
		return View{}, err
	}
	views, err := s.incidentViews(ctx, v, []Incident{inc})
	if err != nil {
		return View{}, err
	}
	return views[0], nil
}

// IssueImpact is the blast radius of one issue: downstream of its dataset, column level
// when the issue is of a column. Returns KindNotFound for an unknown issue, another
// workspace's, or one on a dataset the caller cannot see.
func (s *Service) IssueImpact(ctx context.Context, issueID string) (lineage.ImpactView, error) {
	v, err := viewer(ctx)
	if err != nil {
		return lineage.ImpactView{}, err
	}
	if !vigia.ValidID(issueID) {
		return lineage.ImpactView{}, vigia.NotFound()
	}
	is, err := s.store.IssueRef(ctx, v, issueID)
	if err != nil {
		return lineage.ImpactView{}, err
	}
	var cols []string
	if is.Column != "" {
		cols = []string{is.Column}
	}
	b, err := s.lineage.BlastRadius(ctx, v, is.DatasetID, cols)
	if err != nil {
		return lineage.ImpactView{}, err
	}
	return s.lineage.MaskImpact(ctx, v, b, []string{is.DatasetID})
}

// incidentViews masks incidents for the caller: names come from the record, datasets
// the caller cannot see are restricted, their issues are not listed.
func (s *Service) incidentViews(ctx context.Context, v catalog.Viewer, incs []Incident) ([]View, error) {
	var ids []string
	for _, in := range incs {
		ids = append(ids, in.DatasetIDs...)
		if in.RootDatasetID != nil {
			ids = append(ids, *in.RootDatasetID)
		}
	}
	info, err := s.lineage.Datasets(ctx, v, ids)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(incs))
	for _, in := range incs {
		iv := View{ID: in.ID, Status: in.Status, Severity: in.Severity, ScanID: in.ScanID, CreatedAt: in.CreatedAt,
			UpdatedAt: in.UpdatedAt, ResolvedAt: in.ResolvedAt, IssueIDs: []string{}, DatasetIDs: []string{}}
		if in.RootDatasetID != nil {
			if d, ok := info[*in.RootDatasetID]; ok && d.Visible {
				iv.RootDatasetID, iv.RootDatasetName = in.RootDatasetID, &d.Name
				iv.Title = d.Name
			}
		}
		for _, id := range in.DatasetIDs {
			if d, ok := info[id]; ok && d.Visible {
				iv.DatasetIDs = append(iv.DatasetIDs, id)
			}
		}
		for _, id := range in.IssueIDs {
			if d, ok := info[in.Impact.Issues[id]]; ok && d.Visible {
				iv.IssueIDs = append(iv.IssueIDs, id)
			}
		}
		b := in.Impact
		m, err := s.lineage.MaskImpact(ctx, v, b, in.DatasetIDs)
		if err != nil {
			return nil, err
		}
		iv.Impact = m
		out = append(out, iv)
	}
	return out, s.changedBy(ctx, v, out)
}

// changedBy fills the views' ChangedBy in one read: the runs before each incident's
// scan that wrote one of the datasets the caller sees of it.
func (s *Service) changedBy(ctx context.Context, v catalog.Viewer, views []View) error {
	var scans, datasets []string
	for i := range views {
		views[i].ChangedBy = []ChangeRun{}
		if views[i].ScanID != nil && len(views[i].DatasetIDs) > 0 {
			scans = append(scans, *views[i].ScanID)
			datasets = append(datasets, views[i].DatasetIDs...)
		}
	}
	if s.changes == nil || len(scans) == 0 {
		return nil
	}
	runs, err := s.changes.RunsBefore(ctx, v, scans, datasets)
	if err != nil {
		return err
	}
	for i := range views {
		if views[i].ScanID == nil {
			continue
		}
		mine := map[string]bool{}
		for _, id := range views[i].DatasetIDs {
			mine[id] = true
		}
		seen := map[string]bool{}
		for _, r := range runs {
			if r.ScanID == *views[i].ScanID && mine[r.DatasetID] && !seen[r.ID] {
				seen[r.ID] = true
				views[i].ChangedBy = append(views[i].ChangedBy, r)
			}
		}
	}
	return nil
}
