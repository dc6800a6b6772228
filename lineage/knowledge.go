package lineage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// KNode is a knowledge-graph node. Its id is <kind>:<id> ("dataset:…", "issue:…"),
// or an opaque "restricted-N" for a dataset the caller cannot see.
type KNode struct {
	ID         string         `json:"id"`
	Kind       NodeKind       `json:"kind"`
	Name       string         `json:"name"`
	Restricted bool           `json:"restricted,omitempty"`
	Props      map[string]any `json:"props,omitempty"`
}

// KEdge is a knowledge-graph edge: feeds (with its lineage kind), member_of,
// consumed_by, measures or means.
type KEdge struct {
	Source      string   `json:"source"`
	Target      string   `json:"target"`
	Kind        string   `json:"kind"`
	LineageKind EdgeKind `json:"lineage_kind,omitempty"`
}

func (e KEdge) key() string {
	return e.Source + "\t" + e.Target + "\t" + e.Kind + "\t" + string(e.LineageKind)
}

// NodeProvider builds the nodes of some kinds from the tables that hold them, attached
// to datasets. Providers are given to NewService (Deps.Providers), so a feature that
// brings a new kind (rules, knowledge entries, terms) adds its own.
type NodeProvider interface {
	// Kinds are the node kinds the provider gives.
	Kinds() []NodeKind
	// Structural providers' nodes change with the catalog, not with every scan; only
	// they go into snapshots.
	Structural() bool
	// Nodes returns the provider's nodes about the given datasets (all visible to the
	// caller) and their edges to "dataset:<id>" nodes.
	Nodes(ctx context.Context, workspaceID string, datasetIDs []string) ([]KNode, []KEdge, error)
}

// DatasetNodeID is the knowledge-graph id of a dataset.
func DatasetNodeID(id string) string { return string(NodeDataset) + ":" + id }

// KGraph is a knowledge graph answer.
type KGraph struct {
	Focus     *string
	Hops      int
	Nodes     []KNode
	Edges     []KEdge
	Truncated bool
	Stats     KStats
}

// KStats counts a knowledge graph's nodes and edges.
type KStats struct {
	Nodes      int            `json:"nodes"`
	Edges      int            `json:"edges"`
	ByNodeKind map[string]int `json:"by_node_kind"`
	ByEdgeKind map[string]int `json:"by_edge_kind"`
}

// KnowledgeOpts are the parameters of the knowledge graph: focus=dataset:<id>, hops
// 1-3 (default 2), kinds (node kinds to keep; empty keeps all).
type KnowledgeOpts struct {
	Focus *string
	Hops  *int // nil: DefaultKnowledgeHops
	Kinds []string
}

// KnowledgeGraph returns the workspace's knowledge graph (at most 1500 nodes), or the
// neighbourhood of a dataset within hops of lineage (at most 400 nodes). Returns
// KindInvalid for bad hops, kinds or focus, KindNotFound for a focus dataset of another
// workspace or that the caller cannot see.
func (s *Service) KnowledgeGraph(ctx context.Context, o KnowledgeOpts) (KGraph, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return KGraph{}, err
	}
	hops := DefaultKnowledgeHops
	if o.Hops != nil {
		hops = *o.Hops
	}
	fields := checkHops(hops)
	kinds := map[NodeKind]bool{}
	for _, k := range o.Kinds {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if !slices.Contains(NodeKinds(), NodeKind(k)) {
			fields = append(fields, vigia.Field("enum", nil, "kinds"))
			break
		}
		kinds[NodeKind(k)] = true
	}
	var focusID string
	if o.Focus != nil {
		id, ok := strings.CutPrefix(*o.Focus, "dataset:")
		if !ok || id == "" || len(id) > maxTargetIDLength {
			fields = append(fields, vigia.Field("value_error", nil, "focus"))
		}
		focusID = id
	}
	if len(fields) > 0 {
		return KGraph{}, vigia.Invalid(fields...)
	}
	g := &kbuilder{seen: map[string]bool{}, edgeSeen: map[string]bool{}, kinds: kinds}
	out := KGraph{Focus: o.Focus, Hops: hops}
	var visible []string
	if o.Focus != nil {
		if _, err := s.visibleRoot(ctx, v, focusID); err != nil {
			return KGraph{}, err
		}
		g.cap = MaxFocusNodes
		w := newWalk(focusID, MaxFocusNodes, 0)
		if err := expand(ctx, s.graph, v.WorkspaceID, []*walk{w}, []Direction{Downstream, Upstream}, hops); err != nil {
			return KGraph{}, err
		}
		info, err := s.store.DatasetInfos(ctx, v, w.order, false)
		if err != nil {
			return KGraph{}, err
		}
		w.prune(info)
		m := newMasker(info)
		kref := func(id string) string {
			if m.visible(id) {
				return DatasetNodeID(id)
			}
			return m.ref(id)
		}
		for _, id := range w.order {
			if m.visible(id) {
				g.node(KNode{ID: DatasetNodeID(id), Kind: NodeDataset, Name: info[id].Name})
				visible = append(visible, id)
			} else {
				g.node(KNode{ID: m.ref(id), Kind: NodeDataset, Restricted: true})
			}
		}
		for _, e := range w.edges {
			g.edge(KEdge{Source: kref(e.Source), Target: kref(e.Target), Kind: RelFeeds, LineageKind: e.Kind})
		}
		if err := s.addExposures(ctx, v.WorkspaceID, g, w, kref); err != nil {
			return KGraph{}, err
		}
		joined, err := s.followJoinPaths(ctx, v, focusID, hops, g, info, m)
		if err != nil {
			return KGraph{}, err
		}
		visible = append(visible, joined...)
		out.Truncated = w.truncated
	} else {
		g.cap = MaxGraphNodes
		all, err := s.store.FindByName(ctx, v.WorkspaceID)
		if err != nil {
			return KGraph{}, err
		}
		ids := make([]string, 0, len(all))
		for _, d := range all {
			ids = append(ids, d.ID)
		}
		info, err := s.store.DatasetInfos(ctx, v, ids, false)
		if err != nil {
			return KGraph{}, err
		}
		for _, d := range all {
			if info[d.ID].Visible && g.node(KNode{ID: DatasetNodeID(d.ID), Kind: NodeDataset, Name: datasetName(d.Schema, d.Table)}) {
				visible = append(visible, d.ID)
			}
		}
		ex, err := s.graph.Export(ctx, v.WorkspaceID)
		if err != nil {
			return KGraph{}, err
		}
		in := map[string]bool{}
		for _, id := range visible {
			in[id] = true
		}
		var exps []string
		for _, e := range ex.Edges {
			switch {
			case in[e.Source] && in[e.Target]:
				g.edge(KEdge{Source: DatasetNodeID(e.Source), Target: DatasetNodeID(e.Target), Kind: RelFeeds, LineageKind: e.Kind})
			case in[e.Source] && IsExposure(e.Target):
				exps = append(exps, strings.TrimPrefix(e.Target, ExposurePrefix))
			}
		}
		if len(exps) > 0 {
			m, err := s.store.Exposures(ctx, v.WorkspaceID, dedupe(exps))
			if err != nil {
				return KGraph{}, err
			}
			for _, e := range ex.Edges {
				if x, ok := m[strings.TrimPrefix(e.Target, ExposurePrefix)]; ok && in[e.Source] && IsExposure(e.Target) {
					g.node(KNode{ID: e.Target, Kind: NodeExposure, Name: x.Name, Props: map[string]any{"type": x.Type}})
					g.edge(KEdge{Source: DatasetNodeID(e.Source), Target: e.Target, Kind: RelConsumedBy})
				}
			}
		}
	}
	for _, p := range s.providers {
		if len(kinds) > 0 && !slices.ContainsFunc(p.Kinds(), func(k NodeKind) bool { return kinds[k] }) {
			continue
		}
		nodes, edges, err := p.Nodes(ctx, v.WorkspaceID, visible)
		if err != nil {
			return KGraph{}, err
		}
		for _, n := range nodes {
			g.node(n)
		}
		for _, e := range edges {
			g.edge(e)
		}
	}
	out.Nodes, out.Edges = g.result()
	out.Truncated = out.Truncated || g.truncated
	out.Stats = stats(out.Nodes, out.Edges)
	return out, nil
}

// JoinPaths is a NodeProvider that also knows the declared join paths (references
// edges) touching datasets, in both directions, so that a focus can follow them.
type JoinPaths interface {
	// JoinPaths returns the references edges (dataset node ids) whose source or target is
	// one of the datasets ids, both ends live datasets of the workspace.
	JoinPaths(ctx context.Context, workspaceID string, datasetIDs []string) ([]KEdge, error)
}

// JoinPathProp marks, in a focus, a dataset reached only through declared foreign keys
// (references edges: join paths, not lineage): props reached_by = "references".
const JoinPathProp = "reached_by"

// followJoinPaths follows the references edges from the focus for hops steps, in both
// directions (datasets the focus references and those that reference it), from visible
// datasets only. A dataset the lineage walk had not reached is added with props
// reached_by=references (masked as restricted-N when the caller cannot see it); the
// edges are references edges. Returns the visible datasets it added.
func (s *Service) followJoinPaths(ctx context.Context, v catalog.Viewer, focus string, hops int, g *kbuilder, info map[string]DatasetInfo, m *masker) ([]string, error) {
	var jp JoinPaths
	for _, p := range s.providers {
		if x, ok := p.(JoinPaths); ok {
			jp = x
			break
		}
	}
	if jp == nil {
		return nil, nil
	}
	var added []string
	expanded := map[string]bool{}
	frontier := []string{focus}
	for step := 0; step < hops && len(frontier) > 0; step++ {
		for _, id := range frontier {
			expanded[id] = true
		}
		edges, err := jp.JoinPaths(ctx, v.WorkspaceID, frontier)
		if err != nil {
			return nil, err
		}
		var fresh []string
		for _, e := range edges {
			for _, n := range []string{e.Source, e.Target} {
				id := strings.TrimPrefix(n, string(NodeDataset)+":")
				if _, known := info[id]; !known && !slices.Contains(fresh, id) {
					fresh = append(fresh, id)
				}
			}
		}
		if len(fresh) > 0 {
			more, err := s.store.DatasetInfos(ctx, v, fresh, false)
			if err != nil {
				return nil, err
			}
			for id, d := range more {
				info[id] = d
			}
		}
		var next []string
		for _, e := range edges {
			from := strings.TrimPrefix(e.Source, string(NodeDataset)+":")
			to := strings.TrimPrefix(e.Target, string(NodeDataset)+":")
			if _, ok := info[from]; !ok {
				continue
			}
			if _, ok := info[to]; !ok {
				continue
			}
			kept := true
			for _, id := range []string{from, to} {
				nid := DatasetNodeID(id)
				if !m.visible(id) {
					nid = m.ref(id)
				}
				if !g.seen[nid] {
					n := KNode{ID: nid, Kind: NodeDataset, Props: map[string]any{JoinPathProp: RelReferences}}
					if m.visible(id) {
						n.Name = info[id].Name
					} else {
						n.Restricted = true
					}
					if !g.node(n) {
						kept = false
						continue
					}
					if m.visible(id) {
						added = append(added, id)
					}
				}
				if m.visible(id) && !expanded[id] && !slices.Contains(next, id) {
					next = append(next, id)
				}
			}
			if kept {
				ref := func(id string) string {
					if m.visible(id) {
						return DatasetNodeID(id)
					}
					return m.ref(id)
				}
				g.edge(KEdge{Source: ref(from), Target: ref(to), Kind: RelReferences})
			}
		}
		frontier = next
	}
	return added, nil
}

// addExposures adds the exposures a walk met and their consumed_by edges.
func (s *Service) addExposures(ctx context.Context, ws string, g *kbuilder, w *walk, ref func(string) string) error {
	if len(w.exposureOrder) == 0 {
		return nil
	}
	var ids []string
	for _, n := range w.exposureOrder {
		ids = append(ids, strings.TrimPrefix(n, ExposurePrefix))
	}
	m, err := s.store.Exposures(ctx, ws, ids)
	if err != nil {
		return err
	}
	for _, n := range w.exposureOrder {
		x, ok := m[strings.TrimPrefix(n, ExposurePrefix)]
		if !ok {
			continue
		}
		g.node(KNode{ID: n, Kind: NodeExposure, Name: x.Name, Props: map[string]any{"type": x.Type}})
		for _, via := range w.exposures[n] {
			if _, ok := w.nodes[via]; ok {
				g.edge(KEdge{Source: ref(via), Target: n, Kind: RelConsumedBy})
			}
		}
	}
	return nil
}

// kbuilder collects nodes under a cap and keeps only the edges between kept nodes.
type kbuilder struct {
	nodes     []KNode
	edges     []KEdge
	seen      map[string]bool
	edgeSeen  map[string]bool
	kinds     map[NodeKind]bool
	cap       int
	truncated bool
	skipped   map[string]bool
}

// node adds a node; false when the cap or the kinds filter keeps it out.
func (b *kbuilder) node(n KNode) bool {
	if b.seen[n.ID] {
		return true
	}
	if len(b.kinds) > 0 && !b.kinds[n.Kind] {
		if b.skipped == nil {
			b.skipped = map[string]bool{}
		}
		b.skipped[n.ID] = true
		return n.Kind == NodeDataset // datasets still anchor other kinds
	}
	if b.cap > 0 && len(b.nodes) >= b.cap {
		b.truncated = true
		return false
	}
	b.seen[n.ID] = true
	b.nodes = append(b.nodes, n)
	return true
}

func (b *kbuilder) edge(e KEdge) {
	if b.edgeSeen[e.key()] {
		return
	}
	b.edgeSeen[e.key()] = true
	b.edges = append(b.edges, e)
}

func (b *kbuilder) result() ([]KNode, []KEdge) {
	edges := make([]KEdge, 0, len(b.edges))
	for _, e := range b.edges {
		if b.seen[e.Source] && b.seen[e.Target] {
			edges = append(edges, e)
		}
	}
	if b.nodes == nil {
		b.nodes = []KNode{}
	}
	return b.nodes, edges
}

func stats(nodes []KNode, edges []KEdge) KStats {
	st := KStats{Nodes: len(nodes), Edges: len(edges), ByNodeKind: map[string]int{}, ByEdgeKind: map[string]int{}}
	for _, n := range nodes {
		st.ByNodeKind[string(n.Kind)]++
	}
	for _, e := range edges {
		st.ByEdgeKind[e.Kind]++
	}
	return st
}

// Snapshot is a stored knowledge-graph snapshot.
type Snapshot struct {
	ID          string
	WorkspaceID string
	Trigger     string
	ScanID      *string
	Digest      string
	NodesCount  int
	EdgesCount  int
	Body        SnapshotBody
	CreatedAt   time.Time
}

// SnapshotBody is a snapshot's graph.
type SnapshotBody struct {
	Nodes []KNode `json:"nodes"`
	Edges []KEdge `json:"edges"`
}

// KnowledgeStore keeps snapshots and answers the domain questions.
type KnowledgeStore interface {
	LatestSnapshot(ctx context.Context, workspaceID string) (Snapshot, bool, error)
	// InsertSnapshot stores a snapshot and keeps the newest keep of the workspace.
	InsertSnapshot(ctx context.Context, s Snapshot, keep int) error
	Snapshots(ctx context.Context, workspaceID string, page vigia.Page) (vigia.List[Snapshot], error)
	SnapshotByID(ctx context.Context, workspaceID, id string) (Snapshot, error)
	// SnapshotAt returns the newest snapshot taken at or before at.
	SnapshotAt(ctx context.Context, workspaceID string, at time.Time) (Snapshot, error)
	// VisibleDatasets says which dataset ids (live or dropped) the viewer may see.
	VisibleDatasets(ctx context.Context, v catalog.Viewer, ids []string) (map[string]bool, error)
	// HiddenDatasets lists the workspace's datasets (live or dropped) the viewer may not
	// see, as node ids (DatasetNodeID).
	HiddenDatasets(ctx context.Context, v catalog.Viewer) ([]string, error)
	// SnapshotCountsWithout counts, per snapshot among ids, the nodes that are not in
	// hidden and the edges that touch none of them: [nodes, edges].
	SnapshotCountsWithout(ctx context.Context, workspaceID string, ids, hidden []string) (map[string][2]int, error)
}

// structural builds the snapshot graph: datasets, exposures and structural providers'
// nodes, with feeds, consumed_by and member_of edges; nothing is masked.
func (s *Service) structural(ctx context.Context, ws string) (SnapshotBody, error) {
	all, err := s.store.FindByName(ctx, ws)
	if err != nil {
		return SnapshotBody{}, err
	}
	var body SnapshotBody
	ids := make([]string, 0, len(all))
	live := map[string]bool{}
	for _, d := range all {
		body.Nodes = append(body.Nodes, KNode{ID: DatasetNodeID(d.ID), Kind: NodeDataset, Name: datasetName(d.Schema, d.Table)})
		ids = append(ids, d.ID)
		live[d.ID] = true
	}
	ex, err := s.graph.Export(ctx, ws)
	if err != nil {
		return SnapshotBody{}, err
	}
	exps, err := s.store.ListExposures(ctx, ws)
	if err != nil {
		return SnapshotBody{}, err
	}
	for _, x := range exps {
		body.Nodes = append(body.Nodes, KNode{ID: ExposureNodeID(x.ID), Kind: NodeExposure, Name: x.Name})
		live[ExposureNodeID(x.ID)] = true
	}
	for _, e := range ex.Edges {
		if !live[e.Source] || !live[e.Target] {
			continue
		}
		if IsExposure(e.Target) {
			body.Edges = append(body.Edges, KEdge{Source: DatasetNodeID(e.Source), Target: e.Target, Kind: RelConsumedBy})
		} else {
			body.Edges = append(body.Edges, KEdge{Source: DatasetNodeID(e.Source), Target: DatasetNodeID(e.Target), Kind: RelFeeds, LineageKind: e.Kind})
		}
	}
	for _, p := range s.providers {
		if !p.Structural() {
			continue
		}
		nodes, edges, err := p.Nodes(ctx, ws, ids)
		if err != nil {
			return SnapshotBody{}, err
		}
		body.Nodes = append(body.Nodes, nodes...)
		body.Edges = append(body.Edges, edges...)
	}
	sort.Slice(body.Nodes, func(i, j int) bool { return body.Nodes[i].ID < body.Nodes[j].ID })
	body.Nodes = slices.CompactFunc(body.Nodes, func(a, b KNode) bool { return a.ID == b.ID })
	sort.Slice(body.Edges, func(i, j int) bool { return body.Edges[i].key() < body.Edges[j].key() })
	body.Edges = slices.CompactFunc(body.Edges, func(a, b KEdge) bool { return a.key() == b.key() })
	return body, nil
}

func digest(b SnapshotBody) string {
	h := sha256.New()
	for _, n := range b.Nodes {
		h.Write([]byte("n\t" + n.ID + "\t" + string(n.Kind) + "\t" + n.Name + "\n"))
	}
	for _, e := range b.Edges {
		h.Write([]byte("e\t" + e.key() + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// snapshot takes a snapshot when the graph differs from the latest one; it returns the
// latest snapshot and whether it is new.
func (s *Service) snapshot(ctx context.Context, ws, trigger string, scanID *string) (Snapshot, bool, error) {
	body, err := s.structural(ctx, ws)
	if err != nil {
		return Snapshot{}, false, err
	}
	d := digest(body)
	last, ok, err := s.store.LatestSnapshot(ctx, ws)
	if err != nil {
		return Snapshot{}, false, err
	}
	if ok && last.Digest == d {
		return last, false, nil
	}
	if !ok && trigger == "scan" && len(body.Edges) == 0 {
		return Snapshot{}, false, nil // nothing worth a history yet
	}
	sn := Snapshot{ID: vigia.NewID(), WorkspaceID: ws, Trigger: trigger, ScanID: scanID, Digest: d,
		NodesCount: len(body.Nodes), EdgesCount: len(body.Edges), Body: body, CreatedAt: s.clock.Now()}
	if err := s.store.InsertSnapshot(ctx, sn, MaxSnapshots); err != nil {
		return Snapshot{}, false, err
	}
	return sn, true, nil
}

// TakeSnapshot snapshots the knowledge graph (admin session): created is false, and the
// latest snapshot is returned, when the graph did not change. Returns KindForbidden for
// a token or a non-admin.
func (s *Service) TakeSnapshot(ctx context.Context) (Snapshot, bool, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Snapshot{}, false, err
	}
	return s.snapshot(ctx, p.WorkspaceID, "manual", nil)
}

// SnapshotHistory lists the workspace's snapshots, newest first (at most 90 are kept).
// Their node and edge counts are the caller's: datasets the caller cannot see, and the
// edges that touch them, are not counted (as Diff leaves them out).
func (s *Service) SnapshotHistory(ctx context.Context, page vigia.Page) (vigia.List[Snapshot], error) {
	_, v, err := principal(ctx)
	if err != nil {
		return vigia.List[Snapshot]{}, err
	}
	if err := page.Validate(); err != nil {
		return vigia.List[Snapshot]{}, err
	}
	list, err := s.store.Snapshots(ctx, v.WorkspaceID, page)
	if err != nil || v.Admin || len(list.Items) == 0 {
		return list, err
	}
	hidden, err := s.store.HiddenDatasets(ctx, v)
	if err != nil || len(hidden) == 0 {
		return list, err
	}
	ids := make([]string, len(list.Items))
	for i, sn := range list.Items {
		ids[i] = sn.ID
	}
	counts, err := s.store.SnapshotCountsWithout(ctx, v.WorkspaceID, ids, hidden)
	if err != nil {
		return list, err
	}
	for i, sn := range list.Items {
		if c, ok := counts[sn.ID]; ok {
			list.Items[i].NodesCount, list.Items[i].EdgesCount = c[0], c[1]
		}
	}
	return list, nil
}

// RenamedNode is a node whose name changed between two snapshots.
type RenamedNode struct {
	ID   string   `json:"id"`
	Kind NodeKind `json:"kind"`
	From string   `json:"from"`
	To   string   `json:"to"`
}

// visibleCounts counts a snapshot's nodes that ok accepts and its edges between them.
func visibleCounts(b SnapshotBody, ok func(id string) bool) (nodes, edges int) {
	for _, n := range b.Nodes {
		if ok(n.ID) {
			nodes++
		}
	}
	for _, e := range b.Edges {
		if ok(e.Source) && ok(e.Target) {
			edges++
		}
	}
	return nodes, edges
}

// DiffCounts counts a diff per kind.
type DiffCounts struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Renamed int `json:"renamed,omitempty"`
}

// GraphDiff is what changed between two snapshots.
type GraphDiff struct {
	From         Snapshot
	To           Snapshot
	AddedNodes   []KNode
	RemovedNodes []KNode
	RenamedNodes []RenamedNode
	AddedEdges   []KEdge
	RemovedEdges []KEdge
	ByKind       map[string]DiffCounts
	Truncated    bool
}

// Diff compares two snapshots, each named by id, ISO 8601 UTC date or time (the newest
// snapshot at or before it), or latest (to defaults to latest). Nodes and edges of
// datasets the caller cannot see are left out. Returns KindInvalid for a reference that
// is none of those, KindNotFound when no snapshot matches.
func (s *Service) Diff(ctx context.Context, from string, to *string) (GraphDiff, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return GraphDiff{}, err
	}
	toRef := "latest"
	if to != nil {
		toRef = *to
	}
	a, errA := s.resolveSnapshot(ctx, v.WorkspaceID, from, "from")
	b, errB := s.resolveSnapshot(ctx, v.WorkspaceID, toRef, "to")
	if vigia.IsKind(errA, vigia.KindInvalid) || vigia.IsKind(errB, vigia.KindInvalid) {
		var fields []vigia.FieldError
		for _, e := range []error{errA, errB} {
			if ve := vigia.AsError(e); ve != nil && ve.Kind == vigia.KindInvalid {
				fields = append(fields, ve.Fields...)
			}
		}
		return GraphDiff{}, vigia.Invalid(fields...)
	}
	if errA != nil {
		return GraphDiff{}, errA
	}
	if errB != nil {
		return GraphDiff{}, errB
	}
	var dsIDs []string
	for _, body := range []SnapshotBody{a.Body, b.Body} {
		for _, n := range body.Nodes {
			if id, ok := strings.CutPrefix(n.ID, "dataset:"); ok {
				dsIDs = append(dsIDs, id)
			}
		}
	}
	vis, err := s.store.VisibleDatasets(ctx, v, dedupe(dsIDs))
	if err != nil {
		return GraphDiff{}, err
	}
	ok := func(id string) bool {
		d, isDS := strings.CutPrefix(id, "dataset:")
		return !isDS || vis[d]
	}
	for _, sn := range []*Snapshot{&a, &b} {
		sn.NodesCount, sn.EdgesCount = visibleCounts(sn.Body, ok)
	}
	d := GraphDiff{From: a, To: b, AddedNodes: []KNode{}, RemovedNodes: []KNode{}, RenamedNodes: []RenamedNode{},
		AddedEdges: []KEdge{}, RemovedEdges: []KEdge{}, ByKind: map[string]DiffCounts{}}
	count := func(kind string, f func(*DiffCounts)) {
		c := d.ByKind[kind]
		f(&c)
		d.ByKind[kind] = c
	}
	an, bn := map[string]KNode{}, map[string]KNode{}
	for _, n := range a.Body.Nodes {
		an[n.ID] = n
	}
	for _, n := range b.Body.Nodes {
		bn[n.ID] = n
	}
	for _, n := range b.Body.Nodes {
		if !ok(n.ID) {
			continue
		}
		old, was := an[n.ID]
		switch {
		case !was:
			count(string(n.Kind), func(c *DiffCounts) { c.Added++ })
			d.AddedNodes, d.Truncated = appendCapped(d.AddedNodes, n, d.Truncated)
		case old.Name != n.Name:
			count(string(n.Kind), func(c *DiffCounts) { c.Renamed++ })
			d.RenamedNodes, d.Truncated = appendCapped(d.RenamedNodes, RenamedNode{ID: n.ID, Kind: n.Kind, From: old.Name, To: n.Name}, d.Truncated)
		}
	}
	for _, n := range a.Body.Nodes {
		if _, still := bn[n.ID]; !still && ok(n.ID) {
			count(string(n.Kind), func(c *DiffCounts) { c.Removed++ })
			d.RemovedNodes, d.Truncated = appendCapped(d.RemovedNodes, n, d.Truncated)
		}
	}
	ae, be := map[string]bool{}, map[string]bool{}
	for _, e := range a.Body.Edges {
		ae[e.key()] = true
	}
	for _, e := range b.Body.Edges {
		be[e.key()] = true
	}
	for _, e := range b.Body.Edges {
		if !ae[e.key()] && ok(e.Source) && ok(e.Target) {
			count(e.Kind, func(c *DiffCounts) { c.Added++ })
			d.AddedEdges, d.Truncated = appendCapped(d.AddedEdges, e, d.Truncated)
		}
	}
	for _, e := range a.Body.Edges {
		if !be[e.key()] && ok(e.Source) && ok(e.Target) {
			count(e.Kind, func(c *DiffCounts) { c.Removed++ })
			d.RemovedEdges, d.Truncated = appendCapped(d.RemovedEdges, e, d.Truncated)
		}
	}
	return d, nil
}

func appendCapped[T any](list []T, x T, truncated bool) ([]T, bool) {
	if len(list) >= MaxDiffItems {
		return list, true
	}
	return append(list, x), truncated
}

// resolveSnapshot finds a snapshot by id, date, time or latest.
func (s *Service) resolveSnapshot(ctx context.Context, ws, ref, param string) (Snapshot, error) {
	switch {
	case ref == "latest":
		sn, ok, err := s.store.LatestSnapshot(ctx, ws)
		if err != nil {
			return Snapshot{}, err
		}
		if !ok {
			return Snapshot{}, vigia.NotFound()
		}
		return sn, nil
	case vigia.ValidID(ref):
		return s.store.SnapshotByID(ctx, ws, ref)
	}
	if t, err := time.Parse(time.RFC3339, ref); err == nil {
		return s.store.SnapshotAt(ctx, ws, t.UTC())
	}
	if t, err := time.Parse("2006-01-02", ref); err == nil {
		return s.store.SnapshotAt(ctx, ws, t.Add(24*time.Hour-time.Nanosecond))
	}
	return Snapshot{}, vigia.Invalid(vigia.Field("value_error", nil, param))
}

// CurrentSnapshot returns the id of the snapshot of the workspace's knowledge graph as
// it is now: the latest, or a new one (trigger "decision") when the graph changed since.
// Knowledge decisions carry it (tag snapshot:<id>).
func (s *Service) CurrentSnapshot(ctx context.Context, workspaceID string) (string, error) {
	sn, _, err := s.snapshot(ctx, workspaceID, "decision", nil)
	return sn.ID, err
}
