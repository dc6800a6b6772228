package lineage

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Incident statuses.
const (
	IncidentOpen     = "open"
	IncidentResolved = "resolved"
)

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
	Impact        Blast
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ResolvedAt    *time.Time
}

// IncidentFilter selects incidents.
type IncidentFilter struct {
	Status *string
	Page   vigia.Page
}

// IncidentStore is the record of incidents.
type IncidentStore interface {
	// OpenIssues returns the workspace's open and acknowledged issues of live datasets.
	OpenIssues(ctx context.Context, workspaceID string) ([]OpenIssue, error)
	// OpenIncidents returns the workspace's open incidents.
	OpenIncidents(ctx context.Context, workspaceID string) ([]Incident, error)
	// SaveIncident inserts or updates an incident.
	SaveIncident(ctx context.Context, in Incident) error
	// Incidents lists incidents whose root the viewer can see, newest first.
	Incidents(ctx context.Context, v catalog.Viewer, f IncidentFilter) (vigia.List[Incident], error)
	// IncidentByID returns an incident whose root the viewer can see.
	IncidentByID(ctx context.Context, v catalog.Viewer, id string) (Incident, error)
	// IssueRef returns an issue's dataset and column, if the viewer can see its dataset.
	IssueRef(ctx context.Context, v catalog.Viewer, id string) (OpenIssue, error)
}

// IncidentView is an incident as the caller may see it (contract: Incident).
type IncidentView struct {
	ID              string
	Status          string
	Title           string
	Severity        string
	RootDatasetID   *string
	RootDatasetName *string
	IssueIDs        []string
	DatasetIDs      []string
	ScanID          *string
	Impact          ImpactView
	CreatedAt       time.Time
	UpdatedAt       time.Time
	ResolvedAt      *time.Time
}

// ImpactView is a blast radius masked for the caller (incidents and issue impact).
type ImpactView struct {
	ImpactScope           string
	ImpactColumns         []string
	ImpactNote            *string
	ImpactTree            []ImpactNodeView
	DownstreamCount       int
	DownstreamColumnCount int
	ExposuresCount        int
	Exposures             []IncidentExposure
	ReachTotal            int
	Truncated             bool
}

// ImpactNodeView is a node of an impact tree.
type ImpactNodeView struct {
	Ref        string
	ID         string
	Name       string
	Restricted bool
	Hops       int
	Parent     string
	Impact     string
	ViaColumns []string
}

// IncidentExposure is an exposure or a consumer reached by an incident.
type IncidentExposure struct {
	Node           string // exposure or consumer
	ID             string
	Name           string
	Type           string
	URL            string
	Framework      string
	Consumptions7d int
	LastDecision   string
	LastConsumedAt *time.Time
}

// GroupIncidents groups the workspace's open issues into incidents: datasets with open
// issues that lineage connects (one downstream of another within 3 hops) share an
// incident whose root is the most upstream of them. Existing open incidents sharing an
// issue are updated; those whose issues all closed are resolved.
func (s *Service) GroupIncidents(ctx context.Context, ws string, scanID string) error {
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
	if len(failing) > 0 {
		walks := make([]*walk, 0, len(failing))
		for _, id := range failing {
			walks = append(walks, newWalk(id, MaxImpactNodes+1, 0))
		}
		if err := expand(ctx, s.graph, ws, walks, []Direction{Downstream}, MaxHops); err != nil {
			return err
		}
		for _, w := range walks {
			for _, id := range w.order[1:] {
				if _, ok := byDataset[id]; ok {
					reaches[w.root] = append(reaches[w.root], id)
				}
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
	blasts, err := s.blastMany(ctx, system, roots, cols)
	if err != nil {
		return err
	}
	for _, g := range gs {
		b := blasts[g.root]
		b.Issues = g.issueDatasets
		root := g.root
		inc := Incident{ID: vigia.NewID(), WorkspaceID: ws, Status: IncidentOpen, RootDatasetID: &root, Severity: g.sev,
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
		old.Status, old.UpdatedAt, old.ResolvedAt = IncidentResolved, now, &now
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

var severityRank = map[string]int{"info": 0, "warning": 1, "critical": 2}

func maxSeverity(a, b string) string {
	if severityRank[b] > severityRank[a] {
		return b
	}
	return a
}

// Incidents lists the incidents whose root dataset the caller can see, newest first.
// Returns KindInvalid for a bad page or status.
func (s *Service) Incidents(ctx context.Context, f IncidentFilter) (vigia.List[IncidentView], error) {
	_, v, err := principal(ctx)
	if err != nil {
		return vigia.List[IncidentView]{}, err
	}
	fields := vigia.FieldsOf(f.Page.Validate())
	if f.Status != nil && *f.Status != IncidentOpen && *f.Status != IncidentResolved {
		fields = append(fields, vigia.Field("enum", nil, "status"))
	}
	if len(fields) > 0 {
		return vigia.List[IncidentView]{}, vigia.Invalid(fields...)
	}
	res, err := s.store.Incidents(ctx, v, f)
	if err != nil {
		return vigia.List[IncidentView]{}, err
	}
	out := vigia.List[IncidentView]{Total: res.Total, Items: make([]IncidentView, 0, len(res.Items))}
	views, err := s.incidentViews(ctx, v, res.Items)
	if err != nil {
		return out, err
	}
	out.Items = views
	return out, nil
}

// Incident returns one incident with its blast radius. Returns KindNotFound for an
// unknown id, another workspace's, or one whose root the caller cannot see.
func (s *Service) Incident(ctx context.Context, id string) (IncidentView, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return IncidentView{}, err
	}
	if !vigia.ValidID(id) {
		return IncidentView{}, vigia.NotFound()
	}
	inc, err := s.store.IncidentByID(ctx, v, id)
	if err != nil {
		return IncidentView{}, err
	}
	views, err := s.incidentViews(ctx, v, []Incident{inc})
	if err != nil {
		return IncidentView{}, err
	}
	return views[0], nil
}

// IssueImpact is the blast radius of one issue: downstream of its dataset, column level
// when the issue is of a column. Returns KindNotFound for an unknown issue, another
// workspace's, or one on a dataset the caller cannot see.
func (s *Service) IssueImpact(ctx context.Context, issueID string) (ImpactView, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return ImpactView{}, err
	}
	if !vigia.ValidID(issueID) {
		return ImpactView{}, vigia.NotFound()
	}
	is, err := s.store.IssueRef(ctx, v, issueID)
	if err != nil {
		return ImpactView{}, err
	}
	var cols []string
	if is.Column != "" {
		cols = []string{is.Column}
	}
	b, err := s.blast(ctx, v, is.DatasetID, cols)
	if err != nil {
		return ImpactView{}, err
	}
	return s.maskImpact(ctx, v, b, []string{is.DatasetID})
}

// incidentViews masks incidents for the caller: names come from the record, datasets
// the caller cannot see are restricted, their issues are not listed.
func (s *Service) incidentViews(ctx context.Context, v catalog.Viewer, incs []Incident) ([]IncidentView, error) {
	var ids []string
	for _, in := range incs {
		ids = append(ids, in.DatasetIDs...)
		if in.RootDatasetID != nil {
			ids = append(ids, *in.RootDatasetID)
		}
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(ids), false)
	if err != nil {
		return nil, err
	}
	out := make([]IncidentView, 0, len(incs))
	for _, in := range incs {
		iv := IncidentView{ID: in.ID, Status: in.Status, Severity: in.Severity, ScanID: in.ScanID, CreatedAt: in.CreatedAt,
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
		m, err := s.maskImpact(ctx, v, b, in.DatasetIDs)
		if err != nil {
			return nil, err
		}
		iv.Impact = m
		out = append(out, iv)
	}
	return out, nil
}

// maskImpact turns an unmasked blast radius into what the caller may see.
func (s *Service) maskImpact(ctx context.Context, v catalog.Viewer, b Blast, datasets []string) (ImpactView, error) {
	ids := slices.Clone(datasets)
	for _, n := range b.Nodes {
		ids = append(ids, n.ID, n.Parent)
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(ids), false)
	if err != nil {
		return ImpactView{}, err
	}
	m := newMasker(info)
	out := ImpactView{ImpactScope: b.Scope, ImpactColumns: b.Columns, ImpactTree: []ImpactNodeView{}, Exposures: []IncidentExposure{},
		ReachTotal: b.ReachTotal, Truncated: b.Truncated}
	if out.ImpactColumns == nil {
		out.ImpactColumns = []string{}
	}
	if b.Note != "" {
		note := b.Note
		out.ImpactNote = &note
	}
	for _, n := range b.Nodes {
		if _, known := info[n.ID]; !known {
			continue // dropped since
		}
		nv := m.node(n.ID, n.Hops, Downstream)
		iv := ImpactNodeView{Ref: nv.Ref, ID: nv.ID, Name: nv.Name, Restricted: nv.Restricted, Hops: n.Hops, Impact: n.Impact, ViaColumns: []string{}}
		if n.Parent != "" {
			iv.Parent = m.ref(n.Parent)
		}
		if !nv.Restricted {
			iv.ViaColumns = n.ViaColumns
		}
		out.DownstreamColumnCount += len(n.ViaColumns)
		out.ImpactTree = append(out.ImpactTree, iv)
	}
	out.DownstreamCount = len(out.ImpactTree)
	for _, e := range b.Exposures {
		out.Exposures = append(out.Exposures, IncidentExposure{Node: "exposure", ID: e.ID, Name: e.Name, Type: e.Type, URL: e.URL})
	}
	if s.consumers != nil {
		reached := slices.Clone(datasets)
		for _, n := range b.Nodes {
			reached = append(reached, n.ID)
		}
		byDataset, err := s.consumers.RecentConsumers(ctx, dedupe(reached), s.clock.Now().Add(-ConsumerWindow))
		if err != nil {
			return ImpactView{}, err
		}
		for _, c := range mergeConsumers(byDataset) {
			out.Exposures = append(out.Exposures, IncidentExposure{Node: "consumer", ID: c.ID, Name: c.Name, Type: c.Type,
				Framework: c.Framework, Consumptions7d: c.Consumptions7d, LastDecision: c.LastDecision, LastConsumedAt: c.LastConsumedAt})
		}
	}
	out.ExposuresCount = len(out.Exposures)
	return out, nil
}

// mergeConsumers turns the recent consumers of each dataset into one exposure per
// consumer with the datasets it read, by consumer id.
func mergeConsumers(byDataset map[string][]RecentConsumer) []ConsumerExposure {
	merged := map[string]*ConsumerExposure{}
	var order []string
	for datasetID, exps := range byDataset {
		for _, e := range exps {
			c, ok := merged[e.ConsumerID]
			if !ok {
				c = &ConsumerExposure{ID: e.ConsumerID, Name: e.Name, Type: e.Kind, Consumptions7d: e.Consumptions7d,
					LastConsumedAt: e.LastConsumedAt}
				if e.Framework != nil {
					c.Framework = *e.Framework
				}
				if e.LastDecision != nil {
					c.LastDecision = *e.LastDecision
				}
				merged[e.ConsumerID] = c
				order = append(order, e.ConsumerID)
			}
			c.DatasetIDs = append(c.DatasetIDs, datasetID)
		}
	}
	sort.Strings(order)
	out := make([]ConsumerExposure, 0, len(order))
	for _, id := range order {
		sort.Strings(merged[id].DatasetIDs)
		out = append(out, *merged[id])
	}
	return out
}
