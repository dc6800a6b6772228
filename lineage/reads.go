package lineage

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Impact values of a reached dataset: column (certain: it derives from the broken
// columns) or table (possible: it reads the dataset, not those columns).
const (
	ImpactColumn = "column"
	ImpactTable  = "table"
	ImpactNone   = "none"
)

// NoteNoColumnLineage says a column-level question met edges without a column map.
const NoteNoColumnLineage = "no_column_lineage"

// NodeView is a dataset as a lineage answer shows it. A dataset the caller cannot see
// has Restricted set and no ID, name or columns; Ref is then an opaque per-answer key
// ("restricted-1") that edges use.
type NodeView struct {
	Ref        string
	ID         string
	Name       string
	Restricted bool
	Hops       int
	Direction  Direction
	// Impact and Columns fill impact answers: the columns derived from the asked ones.
	Impact  string
	Columns []string
}

// EdgeView is an edge between two NodeView refs. An edge touching a restricted dataset
// has no origin, column map or linking column.
type EdgeView struct {
	Source        string
	Target        string
	Kind          EdgeKind
	Origin        string
	Columns       []ColumnPair
	ColumnLevel   bool
	LinkingColumn string
}

// ExposureView is an exposure reading datasets of an answer.
type ExposureView struct {
	ID     string
	Name   string
	Type   string
	URL    string
	Owner  string
	Origin string
	// Direct is true when it reads the asked dataset itself; Via lists the refs of the
	// datasets of the answer it reads.
	Direct bool
	Via    []string
}

// NeighbourView is a direct upstream or downstream neighbour with every edge kind
// linking it.
type NeighbourView struct {
	Ref           string
	ID            string
	Name          string
	Restricted    bool
	EdgeKinds     []EdgeKind
	Columns       []ColumnPair
	ColumnLevel   bool
	LinkingColumn string
	// InferredOnly is true when inference is the only evidence of the link.
	InferredOnly bool
}

// LineageResult answers GET /datasets/{id}/lineage.
type LineageResult struct {
	DatasetID string
	// Unresolved are the reason codes of the dataset's own parsed lineage (a view whose
	// SQL could not be attributed, runs dynamic SQL, or did not parse).
	Unresolved []string
	Upstream   []NeighbourView
	Downstream []NeighbourView
	Exposures  []ExposureView
	ReachTotal int
	Truncated  bool
}

// TraverseOpts are the parameters of a traversal: an empty direction is both, a nil
// Hops is DefaultTraverseHops.
type TraverseOpts struct {
	Direction Direction
	Hops      *int
}

// TraverseResult answers GET /datasets/{id}/lineage/traverse.
type TraverseResult struct {
	DatasetID string
	Direction Direction
	Hops      int
	Nodes     []NodeView
	Edges     []EdgeView
	Exposures []ExposureView
	Truncated bool
}

// ImpactResult answers GET /datasets/{id}/lineage/impact.
type ImpactResult struct {
	DatasetID    string
	Column       *string
	Datasets     []NodeView
	Exposures    []ExposureView
	Destinations []ExposureView
	ReachTotal   int
	Truncated    bool
	ImpactNote   *string
}

// PathResult answers GET /datasets/{id}/lineage/path.
type PathResult struct {
	DatasetID string
	TargetID  string
	Found     bool
	Direction *Direction
	Hops      *int
	Nodes     []NodeView
	Edges     []EdgeView
}

// masker hides datasets the caller cannot see, once for every answer.
type masker struct {
	info map[string]DatasetInfo
	refs map[string]string
	n    int
}

func newMasker(info map[string]DatasetInfo) *masker {
	return &masker{info: info, refs: map[string]string{}}
}

func (m *masker) visible(id string) bool { return m.info[id].Visible }

func (m *masker) ref(id string) string {
	if m.visible(id) {
		return id
	}
	if r, ok := m.refs[id]; ok {
		return r
	}
	m.n++
	r := fmt.Sprintf("restricted-%d", m.n)
	m.refs[id] = r
	return r
}

func (m *masker) node(id string, hops int, dir Direction) NodeView {
	if !m.visible(id) {
		return NodeView{Ref: m.ref(id), Restricted: true, Hops: hops, Direction: dir}
	}
	d := m.info[id]
	return NodeView{Ref: id, ID: id, Name: d.Name, Hops: hops, Direction: dir}
}

func (m *masker) edge(e Edge) EdgeView {
	v := EdgeView{Source: m.ref(e.Source), Target: m.ref(e.Target), Kind: e.Kind}
	if m.visible(e.Source) && m.visible(e.Target) {
		v.Origin, v.ColumnLevel, v.LinkingColumn = e.Origin, e.ColumnLevel, e.LinkingColumn
		v.Columns = slices.Clone(e.Columns)
	}
	return v
}

// known keeps only the ids the record knows (live datasets of the workspace): a node
// left in the backend for a dataset dropped since is not shown.
func (w *walk) prune(info map[string]DatasetInfo) {
	order := w.order[:0]
	for _, id := range w.order {
		if _, ok := info[id]; ok || id == w.root {
			order = append(order, id)
		} else {
			delete(w.nodes, id)
		}
	}
	w.order = order
	edges := w.edges[:0]
	for _, e := range w.edges {
		if _, ok := w.nodes[e.Source]; !ok {
			continue
		}
		if _, ok := w.nodes[e.Target]; !ok {
			continue
		}
		edges = append(edges, e)
	}
	w.edges = edges
}

// loadExposures reads, in one query, the exposures the walks met.
func (s *Service) loadExposures(ctx context.Context, ws string, walks ...*walk) (map[string]Exposure, error) {
	var ids []string
	for _, w := range walks {
		for _, n := range w.exposureOrder {
			ids = append(ids, strings.TrimPrefix(n, ExposurePrefix))
		}
	}
	if len(ids) == 0 {
		return map[string]Exposure{}, nil
	}
	return s.store.Exposures(ctx, ws, dedupe(ids))
}

// exposureViews lists the exposures a walk met, direct ones first, with the refs of the
// walk's datasets they read.
func exposureViews(w *walk, m *masker, exps map[string]Exposure) []ExposureView {
	out := make([]ExposureView, 0, len(w.exposureOrder))
	for _, n := range w.exposureOrder {
		e, ok := exps[strings.TrimPrefix(n, ExposurePrefix)]
		if !ok {
			continue
		}
		v := ExposureView{ID: e.ID, Name: e.Name, Type: e.Type, URL: e.URL, Owner: e.Owner, Origin: e.Origin, Via: []string{}}
		for _, via := range w.exposures[n] {
			if _, known := w.nodes[via]; !known {
				continue
			}
			if via == w.root {
				v.Direct = true
			}
			v.Via = append(v.Via, m.ref(via))
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Direct != out[j].Direct {
			return out[i].Direct
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// CheckTraverse resolves a traversal's options (the defaults of what is not given) and
// checks them: the one check a transport may run before batching traversals. Returns
// KindInvalid with items named direction and hops.
func CheckTraverse(o TraverseOpts) (Direction, int, error) {
	dir, hops := o.Direction, DefaultTraverseHops
	if dir == "" {
		dir = Both
	}
	if o.Hops != nil {
		hops = *o.Hops
	}
	var fields []vigia.FieldError
	if dir != Upstream && dir != Downstream && dir != Both {
		fields = append(fields, vigia.Field("enum", nil, "direction"))
	}
	fields = append(fields, checkHops(hops)...)
	if len(fields) > 0 {
		return dir, hops, vigia.Invalid(fields...)
	}
	return dir, hops, nil
}

// checkHops is the one bound of hops (1-MaxHops) of traversals and the knowledge graph.
func checkHops(hops int) []vigia.FieldError {
	if hops < 1 {
		return []vigia.FieldError{vigia.Field("greater_than_equal", map[string]any{"ge": 1}, "hops")}
	}
	if hops > MaxHops {
		return []vigia.FieldError{vigia.Field("less_than_equal", map[string]any{"le": MaxHops}, "hops")}
	}
	return nil
}

// Traverse walks the lineage of a dataset up to 3 hops: at most 40 datasets and 60
// edges, Truncated when a cap cut it short. Returns KindNotFound for a dataset the
// caller cannot see or of another workspace, KindInvalid for bad options.
func (s *Service) Traverse(ctx context.Context, datasetID string, o TraverseOpts) (TraverseResult, error) {
	res, err := s.TraverseMany(ctx, []string{datasetID}, o)
	if err != nil {
		return TraverseResult{}, err
	}
	r, ok := res[datasetID]
	if !ok {
		return TraverseResult{}, vigia.NotFound()
	}
	return r, nil
}

// TraverseMany traverses from several datasets at once with one backend round trip
// per hop and direction (GraphQL lists). Datasets the caller cannot see are absent.
// Returns KindInvalid for bad options.
func (s *Service) TraverseMany(ctx context.Context, ids []string, o TraverseOpts) (map[string]TraverseResult, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	dir, hops, err := CheckTraverse(o)
	if err != nil {
		return nil, err
	}
	var valid []string
	for _, id := range dedupe(ids) {
		if vigia.ValidID(id) {
			valid = append(valid, id)
		}
	}
	// Roots are expanded before their visibility is read, so that one query answers for
	// the roots and everything reached: the graph of a workspace holds only its own
	// datasets, and a root the caller cannot see is dropped before anything is shown.
	walks := make([]*walk, 0, len(valid))
	for _, id := range valid {
		walks = append(walks, newWalk(id, MaxTraverseNodes, MaxTraverseEdges))
	}
	out := map[string]TraverseResult{}
	if len(walks) == 0 {
		return out, nil
	}
	dirs := []Direction{dir}
	if dir == Both {
		dirs = []Direction{Downstream, Upstream}
	}
	if err := expand(ctx, s.graph, v.WorkspaceID, walks, dirs, hops); err != nil {
		return nil, err
	}
	var all []string
	for _, w := range walks {
		all = append(all, w.order...)
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(all), false)
	if err != nil {
		return nil, err
	}
	visible := walks[:0]
	for _, w := range walks {
		if d, ok := info[w.root]; ok && d.Visible {
			visible = append(visible, w)
		}
	}
	walks = visible
	exps, err := s.loadExposures(ctx, v.WorkspaceID, walks...)
	if err != nil {
		return nil, err
	}
	for _, w := range walks {
		w.prune(info)
		m := newMasker(info)
		r := TraverseResult{DatasetID: w.root, Direction: dir, Hops: hops, Truncated: w.truncated,
			Nodes: make([]NodeView, 0, len(w.order)), Edges: make([]EdgeView, 0, len(w.edges))}
		for _, id := range w.order {
			n := w.nodes[id]
			r.Nodes = append(r.Nodes, m.node(id, n.hops, n.dir))
		}
		for _, e := range w.edges {
			r.Edges = append(r.Edges, m.edge(e))
		}
		r.Exposures = exposureViews(w, m, exps)
		out[w.root] = r
	}
	return out, nil
}

// maxDirect bounds the direct neighbours listed on each side by GET /lineage.
const maxDirect = 500

// Lineage returns a dataset's direct upstream and downstream neighbours, the exposures
// reading it directly or through downstream datasets (3 hops), and its reach_total.
// Returns KindNotFound for a dataset the caller cannot see or of another workspace.
func (s *Service) Lineage(ctx context.Context, datasetID string) (LineageResult, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return LineageResult{}, err
	}
	root, err := s.visibleRoot(ctx, v, datasetID)
	if err != nil {
		return LineageResult{}, err
	}
	ws := v.WorkspaceID
	down, err := s.graph.Neighbours(ctx, ws, []string{datasetID}, Downstream)
	if err != nil {
		return LineageResult{}, err
	}
	up, err := s.graph.Neighbours(ctx, ws, []string{datasetID}, Upstream)
	if err != nil {
		return LineageResult{}, err
	}
	ids := []string{datasetID}
	for _, e := range down {
		ids = append(ids, e.Target)
	}
	for _, e := range up {
		ids = append(ids, e.Source)
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(ids), false)
	if err != nil {
		return LineageResult{}, err
	}
	m := newMasker(info)
	res := LineageResult{DatasetID: datasetID, Unresolved: append([]string{}, root.Notes...)}
	res.Upstream, res.Truncated = neighbours(up, func(e Edge) string { return e.Source }, info, m)
	var t bool
	res.Downstream, t = neighbours(down, func(e Edge) string { return e.Target }, info, m)
	res.Truncated = res.Truncated || t
	w := newWalk(datasetID, MaxImpactNodes, 0)
	if err := expand(ctx, s.graph, ws, []*walk{w}, []Direction{Downstream}, MaxHops); err != nil {
		return LineageResult{}, err
	}
	more, err := s.store.DatasetInfos(ctx, v, w.order, false)
	if err != nil {
		return LineageResult{}, err
	}
	for id, d := range more {
		if _, ok := info[id]; !ok {
			info[id] = d
		}
	}
	w.prune(info)
	exps, err := s.loadExposures(ctx, ws, w)
	if err != nil {
		return LineageResult{}, err
	}
	res.Exposures = exposureViews(w, m, exps)
	reach, err := s.store.Reach(ctx, ws, []string{datasetID})
	if err != nil {
		return LineageResult{}, err
	}
	res.ReachTotal = reach[datasetID]
	return res, nil
}

// neighbours merges the edges of each neighbour (one entry per dataset, every kind).
func neighbours(edges []Edge, other func(Edge) string, info map[string]DatasetInfo, m *masker) ([]NeighbourView, bool) {
	sortEdges(edges)
	by := map[string]*NeighbourView{}
	var order []string
	for _, e := range edges {
		id := other(e)
		if IsExposure(id) {
			continue
		}
		if _, ok := info[id]; !ok {
			continue
		}
		n, ok := by[id]
		if !ok {
			nv := m.node(id, 1, "")
			n = &NeighbourView{Ref: nv.Ref, ID: nv.ID, Name: nv.Name, Restricted: nv.Restricted, InferredOnly: true}
			by[id] = n
			order = append(order, id)
		}
		if !slices.Contains(n.EdgeKinds, e.Kind) {
			n.EdgeKinds = append(n.EdgeKinds, e.Kind)
		}
		if e.Kind != KindInferred {
			n.InferredOnly = false
		}
		if !n.Restricted {
			n.ColumnLevel = n.ColumnLevel || e.ColumnLevel
			for _, p := range e.Columns {
				if !slices.Contains(n.Columns, p) {
					n.Columns = append(n.Columns, p)
				}
			}
			if n.LinkingColumn == "" {
				n.LinkingColumn = e.LinkingColumn
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := by[order[i]], by[order[j]]
		if a.Restricted != b.Restricted {
			return !a.Restricted
		}
		return a.Name < b.Name
	})
	truncated := len(order) > maxDirect
	if truncated {
		order = order[:maxDirect]
	}
	out := make([]NeighbourView, 0, len(order))
	for _, id := range order {
		out = append(out, *by[id])
	}
	return out, truncated
}

// Impact lists what is downstream of a dataset (3 hops, 40 datasets): the datasets with,
// when column is given, the columns derived from it; the exposures and the destinations
// outside the warehouse; and reach_total. Returns KindNotFound for a dataset the caller
// cannot see or of another workspace, KindInvalid for an unknown or too long column.
func (s *Service) Impact(ctx context.Context, datasetID string, column *string) (ImpactResult, error) {
	res, errs, err := s.ImpactMany(ctx, []string{datasetID}, column)
	if err != nil {
		return ImpactResult{}, err
	}
	if err := errs[datasetID]; err != nil {
		return ImpactResult{}, err
	}
	return res[datasetID], nil
}

// ImpactMany answers Impact for several datasets with a fixed number of queries
// (GraphQL lists). Per-dataset failures (not found, unknown column) are in the error
// map; the error return is for failures of the whole call (a bad column length).
func (s *Service) ImpactMany(ctx context.Context, ids []string, column *string) (map[string]ImpactResult, map[string]error, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return nil, nil, err
	}
	if column != nil && len([]rune(*column)) > maxColumnParam {
		return nil, nil, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": maxColumnParam}, "column"))
	}
	ids = dedupe(ids)
	var valid []string
	for _, id := range ids {
		if vigia.ValidID(id) {
			valid = append(valid, id)
		}
	}
	roots, err := s.store.DatasetInfos(ctx, v, valid, column != nil)
	if err != nil {
		return nil, nil, err
	}
	errs := map[string]error{}
	cols := map[string][]string{}
	var ok []string
	for _, id := range ids {
		d, found := roots[id]
		switch {
		case !found || !d.Visible:
			errs[id] = vigia.NotFound()
		case column != nil && !slices.Contains(d.Columns, *column):
			errs[id] = vigia.Invalid(vigia.Field("value_error", nil, "column"))
		default:
			ok = append(ok, id)
			if column != nil {
				cols[id] = []string{*column}
			}
		}
	}
	blasts, err := s.BlastRadii(ctx, v, ok, cols)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]ImpactResult, len(ok))
	for _, id := range ok {
		br := blasts[id]
		m := newMasker(br.info)
		res := ImpactResult{DatasetID: id, Column: column, ReachTotal: br.ReachTotal, Truncated: br.Truncated,
			Datasets: []NodeView{}, Exposures: []ExposureView{}, Destinations: []ExposureView{}}
		if br.Note != "" {
			note := br.Note
			res.ImpactNote = &note
		}
		for _, n := range br.Nodes {
			nv := m.node(n.ID, n.Hops, Downstream)
			nv.Impact = n.Impact
			if column == nil {
				nv.Impact = ImpactTable
			}
			if !nv.Restricted {
				nv.Columns = n.ViaColumns
			}
			res.Datasets = append(res.Datasets, nv)
		}
		for _, e := range br.Exposures {
			ev := ExposureView{ID: e.ID, Name: e.Name, Type: e.Type, URL: e.URL, Owner: e.Owner, Origin: e.Origin, Direct: e.Direct, Via: []string{}}
			for _, via := range e.Via {
				ev.Via = append(ev.Via, m.ref(via))
			}
			if e.Type == ExposureTypeDestination {
				res.Destinations = append(res.Destinations, ev)
			} else {
				res.Exposures = append(res.Exposures, ev)
			}
		}
		out[id] = res
	}
	return out, errs, nil
}

// Blast is the unmasked blast radius of columns (or the whole dataset) of a root: what
// incidents store, masked for each reader.
type Blast struct {
	Nodes      []BlastNode `json:"nodes"`
	Exposures  []BlastExpo `json:"exposures"`
	ReachTotal int         `json:"reach_total"`
	Truncated  bool        `json:"truncated"`
	Scope      string      `json:"scope"`
	Columns    []string    `json:"columns"`
	Note       string      `json:"note,omitempty"`
	// Issues maps an incident's issue ids to their datasets, to hide the issues of
	// datasets a reader cannot see.
	Issues map[string]string `json:"issues,omitempty"`
	info   map[string]DatasetInfo
}

// BlastNode is a dataset downstream of a root.
type BlastNode struct {
	ID         string   `json:"id"`
	Hops       int      `json:"hops"`
	Parent     string   `json:"parent"`
	Impact     string   `json:"impact"`
	ViaColumns []string `json:"via_columns"`
}

// BlastExpo is an exposure in a blast radius.
type BlastExpo struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	URL    string   `json:"url,omitempty"`
	Owner  string   `json:"owner,omitempty"`
	Origin string   `json:"origin,omitempty"`
	Direct bool     `json:"direct"`
	Via    []string `json:"via"`
}

// BlastRadius computes the downstream radius of a root (3 hops, 40 datasets), with derived
// columns when cols is set. The viewer decides only the Visible flags of the infos.
func (s *Service) BlastRadius(ctx context.Context, v catalog.Viewer, rootID string, cols []string) (Blast, error) {
	m, err := s.BlastRadii(ctx, v, []string{rootID}, map[string][]string{rootID: cols})
	if err != nil {
		return Blast{}, err
	}
	return m[rootID], nil
}

// BlastRadii computes the blast radius of several roots with a fixed number of queries:
// one backend round trip per hop for all of them, one read of names and visibility,
// one of exposures, one of reach counts.
func (s *Service) BlastRadii(ctx context.Context, v catalog.Viewer, roots []string, cols map[string][]string) (map[string]Blast, error) {
	out := map[string]Blast{}
	if len(roots) == 0 {
		return out, nil
	}
	ws := v.WorkspaceID
	walks := make([]*walk, 0, len(roots))
	for _, r := range roots {
		walks = append(walks, newWalk(r, MaxImpactNodes+1, 0))
	}
	if err := expand(ctx, s.graph, ws, walks, []Direction{Downstream}, MaxHops); err != nil {
		return nil, err
	}
	var all []string
	for _, w := range walks {
		all = append(all, w.order...)
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(all), false)
	if err != nil {
		return nil, err
	}
	exps, err := s.loadExposures(ctx, ws, walks...)
	if err != nil {
		return nil, err
	}
	reach, err := s.store.Reach(ctx, ws, roots)
	if err != nil {
		return nil, err
	}
	for _, w := range walks {
		w.prune(info)
		b := blastOf(w, cols[w.root], exps)
		b.info, b.ReachTotal = info, reach[w.root]
		out[w.root] = b
	}
	return out, nil
}

// blastOf turns a downstream walk into a blast radius: the tree with each node's parent
// at the previous hop, the columns derived from cols, the scope and the exposures.
func blastOf(w *walk, cols []string, exps map[string]Exposure) Blast {
	rootID := w.root
	derived := derive(rootID, cols, w.edges)
	parent := map[string]string{}
	for _, e := range w.edges {
		if n := w.nodes[e.Target]; n != nil && n.hops > 0 {
			if p := w.nodes[e.Source]; p != nil && p.hops == n.hops-1 {
				if _, ok := parent[e.Target]; !ok {
					parent[e.Target] = e.Source
				}
			}
		}
	}
	b := Blast{Nodes: []BlastNode{}, Exposures: []BlastExpo{}, Truncated: w.truncated, Columns: cols}
	if b.Columns == nil {
		b.Columns = []string{}
	}
	for _, id := range w.order[1:] {
		n := w.nodes[id]
		bn := BlastNode{ID: id, Hops: n.hops, Parent: parent[id], Impact: ImpactTable, ViaColumns: sortedKeys(derived[id])}
		if len(bn.ViaColumns) > 0 {
			bn.Impact = ImpactColumn
		}
		b.Nodes = append(b.Nodes, bn)
	}
	switch {
	case len(b.Nodes) == 0:
		b.Scope = ImpactNone
	case len(cols) == 0:
		b.Scope = ImpactTable
	default:
		b.Scope = ImpactColumn
		columnMap := false
		for _, e := range w.edges {
			if e.Source == rootID && e.ColumnLevel && len(e.Columns) > 0 {
				columnMap = true
			}
		}
		if !columnMap {
			b.Scope, b.Note = ImpactTable, NoteNoColumnLineage
		}
	}
	// Views with ids (an all-visible masker) for storage; readers mask them later.
	ids := &masker{info: map[string]DatasetInfo{}, refs: map[string]string{}}
	for id := range w.nodes {
		ids.info[id] = DatasetInfo{ID: id, Visible: true}
	}
	for _, ev := range exposureViews(w, ids, exps) {
		b.Exposures = append(b.Exposures, BlastExpo(ev))
	}
	return b
}

// Path finds the shortest path from a dataset to a target, up to 6 hops in the flow
// direction, else against it. Returns KindNotFound when either dataset is unknown,
// invisible to the caller or of another workspace; a path longer than 6 hops is
// Found=false.
func (s *Service) Path(ctx context.Context, datasetID, targetID string) (PathResult, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return PathResult{}, err
	}
	if len(targetID) > maxTargetIDLength {
		return PathResult{}, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": maxTargetIDLength}, "target_id"))
	}
	if _, err := s.visibleRoot(ctx, v, datasetID); err != nil {
		return PathResult{}, err
	}
	if _, err := s.visibleRoot(ctx, v, targetID); err != nil {
		return PathResult{}, err
	}
	res := PathResult{DatasetID: datasetID, TargetID: targetID, Nodes: []NodeView{}, Edges: []EdgeView{}}
	for _, dir := range []Direction{Downstream, Upstream} {
		edges, err := s.shortest(ctx, v.WorkspaceID, datasetID, targetID, dir)
		if err != nil {
			return PathResult{}, err
		}
		if edges == nil {
			continue
		}
		ids := []string{datasetID}
		for _, e := range edges {
			if dir == Downstream {
				ids = append(ids, e.Target)
			} else {
				ids = append(ids, e.Source)
			}
		}
		info, err := s.store.DatasetInfos(ctx, v, ids, false)
		if err != nil {
			return PathResult{}, err
		}
		m := newMasker(info)
		for i, id := range ids {
			res.Nodes = append(res.Nodes, m.node(id, i, dir))
		}
		for _, e := range edges {
			res.Edges = append(res.Edges, m.edge(e))
		}
		d, h := dir, len(edges)
		res.Found, res.Direction, res.Hops = true, &d, &h
		return res, nil
	}
	return res, nil
}

// shortest runs a breadth-first search from `from` to `to` in one direction, up to
// MaxPathHops; it returns the path's edges in walking order, or nil. A path to itself
// is the empty, non-nil path.
func (s *Service) shortest(ctx context.Context, ws, from, to string, dir Direction) ([]Edge, error) {
	if from == to {
		return []Edge{}, nil
	}
	prev := map[string]Edge{}
	seen := map[string]bool{from: true}
	frontier := []string{from}
	for hop := 0; hop < MaxPathHops && len(frontier) > 0 && len(seen) < pathVisitCap; hop++ {
		edges, err := s.graph.Neighbours(ctx, ws, frontier, dir)
		if err != nil {
			return nil, err
		}
		sortEdges(edges)
		var next []string
		for _, e := range edges {
			n := e.Target
			if dir == Upstream {
				n = e.Source
			}
			if seen[n] || IsExposure(n) {
				continue
			}
			seen[n] = true
			prev[n] = e
			if n == to {
				var path []Edge
				for at := to; at != from; {
					pe := prev[at]
					path = append(path, pe)
					if dir == Upstream {
						at = pe.Target
					} else {
						at = pe.Source
					}
				}
				slices.Reverse(path)
				return path, nil
			}
			next = append(next, n)
		}
		frontier = next
	}
	return nil, nil
}

// DatasetLinks returns the projected edges of the workspace between two different
// datasets (no exposures), whoever can see them: the links that domain suggestions
// count. The caller decides what of them to show.
func (s *Service) DatasetLinks(ctx context.Context, workspaceID string) ([]Edge, error) {
	ex, err := s.graph.Export(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]Edge, 0, len(ex.Edges))
	for _, e := range ex.Edges {
		if !IsExposure(e.Source) && !IsExposure(e.Target) && e.Source != e.Target {
			out = append(out, e)
		}
	}
	return out, nil
}

// DownstreamReach returns the downstream reach (datasets at any distance, visible or
// not, as reach_total counts them) of datasets of the caller's workspace; ids the
// caller cannot see or of another workspace are absent. For the catalog's
// metadata-quality read, which orders datasets by reach.
func (s *Service) DownstreamReach(ctx context.Context, datasetIDs []string) (map[string]int, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var valid []string
	for _, id := range datasetIDs {
		if vigia.ValidID(id) {
			valid = append(valid, id)
		}
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(valid), false)
	if err != nil {
		return nil, err
	}
	var ids []string
	for id, d := range info {
		if d.Visible {
			ids = append(ids, id)
		}
	}
	reach, err := s.store.Reach(ctx, v.WorkspaceID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(ids))
	for _, id := range ids {
		out[id] = reach[id]
	}
	return out, nil
}
