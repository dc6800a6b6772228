package graph

import (
	"context"
	"sort"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/lineage"
)

// traverseKey is what a batched traversal is asked for.
type traverseKey struct {
	ID   string
	Dir  lineage.Direction
	Hops int
}

// newTraverseLoader batches the traversals a request's datasets ask for: a list of 40
// datasets makes one TraverseMany per (direction, hops), which costs one backend round
// trip per hop, not 40 traversals.
func (r *Resolver) newTraverseLoader() *loader[traverseKey, lineage.TraverseResult] {
	return newLoader(func(ctx context.Context, keys []traverseKey) (map[traverseKey]lineage.TraverseResult, error) {
		type opts struct {
			dir  lineage.Direction
			hops int
		}
		groups := map[opts][]string{}
		for _, k := range keys {
			o := opts{k.Dir, k.Hops}
			groups[o] = append(groups[o], k.ID)
		}
		out := map[traverseKey]lineage.TraverseResult{}
		for o, ids := range groups {
			res, err := r.LineageService.TraverseMany(ctx, ids, lineage.TraverseOpts{Direction: o.dir, Hops: &o.hops})
			if err != nil {
				return nil, err
			}
			for id, t := range res {
				out[traverseKey{ID: id, Dir: o.dir, Hops: o.hops}] = t
			}
		}
		return out, nil
	})
}

// traverse runs a traversal through the request's loader (directly without one).
func (r *Resolver) traverse(ctx context.Context, id string, o lineage.TraverseOpts) (lineage.TraverseResult, error) {
	l, ok := ctx.Value(loadersKey{}).(*loaders)
	if !ok || l.traverse == nil {
		return r.LineageService.Traverse(ctx, id, o)
	}
	// Options are checked here so that a bad hops is the caller's error, not the batch's.
	dir, hops, err := lineage.CheckTraverse(o)
	if err != nil {
		return lineage.TraverseResult{}, err
	}
	res, found, err := l.traverse.Load(ctx, traverseKey{ID: id, Dir: dir, Hops: hops})
	if err != nil {
		return res, err
	}
	if !found {
		return res, vigia.NotFound()
	}
	return res, nil
}

// impactKey is what a batched impact is asked for.
type impactKey struct {
	ID        string
	Column    string
	HasColumn bool
}

// impactAnswer is one dataset's impact or its own error (not found, unknown column).
type impactAnswer struct {
	res lineage.ImpactResult
	err error
}

// newImpactLoader batches the impacts a request's datasets ask for, per column.
func (r *Resolver) newImpactLoader() *loader[impactKey, impactAnswer] {
	return newLoader(func(ctx context.Context, keys []impactKey) (map[impactKey]impactAnswer, error) {
		type col struct {
			name string
			has  bool
		}
		groups := map[col][]string{}
		for _, k := range keys {
			c := col{k.Column, k.HasColumn}
			groups[c] = append(groups[c], k.ID)
		}
		out := map[impactKey]impactAnswer{}
		for c, ids := range groups {
			var column *string
			if c.has {
				name := c.name
				column = &name
			}
			res, errs, err := r.LineageService.ImpactMany(ctx, ids, column)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				out[impactKey{ID: id, Column: c.name, HasColumn: c.has}] = impactAnswer{res: res[id], err: errs[id]}
			}
		}
		return out, nil
	})
}

// impact runs an impact through the request's loader (directly without one).
func (r *Resolver) impact(ctx context.Context, id string, column *string) (lineage.ImpactResult, error) {
	l, ok := ctx.Value(loadersKey{}).(*loaders)
	if !ok || l.impact == nil {
		return r.LineageService.Impact(ctx, id, column)
	}
	k := impactKey{ID: id}
	if column != nil {
		k.Column, k.HasColumn = *column, true
	}
	a, found, err := l.impact.Load(ctx, k)
	if err != nil {
		return lineage.ImpactResult{}, err
	}
	if !found {
		return lineage.ImpactResult{}, vigia.NotFound()
	}
	return a.res, a.err
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toLineageNode(n lineage.NodeView) model.LineageNode {
	out := model.LineageNode{Ref: n.Ref, ID: optString(n.ID), Name: optString(n.Name), Restricted: n.Restricted, Hops: n.Hops,
		Direction: optString(string(n.Direction)), Impact: optString(n.Impact), Columns: []string{}}
	if !n.Restricted && n.Columns != nil {
		out.Columns = n.Columns
	}
	return out
}

func toLineageEdge(e lineage.EdgeView) model.LineageEdge {
	out := model.LineageEdge{Source: e.Source, Target: e.Target, Kind: string(e.Kind), Origin: optString(e.Origin),
		ColumnMap: []model.ColumnPair{}, ColumnLevel: e.ColumnLevel, LinkingColumn: optString(e.LinkingColumn)}
	for _, c := range e.Columns {
		out.ColumnMap = append(out.ColumnMap, model.ColumnPair{From: c.From, To: c.To, Direct: c.Direct})
	}
	return out
}

func toLineageExposures(es []lineage.ExposureView) []model.LineageExposure {
	out := make([]model.LineageExposure, 0, len(es))
	for _, e := range es {
		via := e.Via
		if via == nil {
			via = []string{}
		}
		out = append(out, model.LineageExposure{ID: e.ID, Name: e.Name, Type: e.Type, Direct: e.Direct, Via: via})
	}
	return out
}

func toLineageGraph(res lineage.TraverseResult) *model.LineageGraph {
	out := &model.LineageGraph{DatasetID: res.DatasetID, Direction: string(res.Direction), Hops: res.Hops, Truncated: res.Truncated,
		Nodes: make([]model.LineageNode, 0, len(res.Nodes)), Edges: make([]model.LineageEdge, 0, len(res.Edges)),
		Exposures: toLineageExposures(res.Exposures)}
	for _, n := range res.Nodes {
		out.Nodes = append(out.Nodes, toLineageNode(n))
	}
	for _, e := range res.Edges {
		out.Edges = append(out.Edges, toLineageEdge(e))
	}
	return out
}

func toLineageImpact(res lineage.ImpactResult) *model.LineageImpact {
	out := &model.LineageImpact{DatasetID: res.DatasetID, Column: res.Column, ReachTotal: res.ReachTotal, Truncated: res.Truncated,
		ImpactNote: res.ImpactNote, Datasets: make([]model.LineageNode, 0, len(res.Datasets)),
		Exposures: toLineageExposures(res.Exposures), Destinations: toLineageExposures(res.Destinations)}
	for _, n := range res.Datasets {
		out.Datasets = append(out.Datasets, toLineageNode(n))
	}
	return out
}

func toLineagePath(res lineage.PathResult) *model.LineagePath {
	out := &model.LineagePath{Found: res.Found, Hops: res.Hops, Nodes: make([]model.LineageNode, 0, len(res.Nodes)),
		Edges: make([]model.LineageEdge, 0, len(res.Edges))}
	if res.Direction != nil {
		d := string(*res.Direction)
		out.Direction = &d
	}
	for _, n := range res.Nodes {
		out.Nodes = append(out.Nodes, toLineageNode(n))
	}
	for _, e := range res.Edges {
		out.Edges = append(out.Edges, toLineageEdge(e))
	}
	return out
}

func toIncident(v incident.View) model.Incident {
	im := v.Impact
	out := model.Incident{ID: v.ID, Status: v.Status, Title: v.Title, Severity: v.Severity, RootDatasetID: v.RootDatasetID,
		RootDatasetName: v.RootDatasetName, IssueIds: v.IssueIDs, DatasetIds: v.DatasetIDs, ImpactScope: im.ImpactScope,
		ImpactColumns: im.ImpactColumns, ImpactNote: im.ImpactNote, ImpactTree: make([]model.ImpactNode, 0, len(im.ImpactTree)),
		DownstreamCount: im.DownstreamCount, DownstreamColumnCount: im.DownstreamColumnCount, ExposuresCount: im.ExposuresCount,
		Exposures: make([]model.IncidentExposure, 0, len(im.Exposures)), CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		ScanID: v.ScanID, ResolvedAt: v.ResolvedAt, ReachTotal: im.ReachTotal, Truncated: im.Truncated}
	for _, n := range im.ImpactTree {
		via := n.ViaColumns
		if via == nil {
			via = []string{}
		}
		out.ImpactTree = append(out.ImpactTree, model.ImpactNode{Ref: n.Ref, ID: optString(n.ID), Name: optString(n.Name),
			Restricted: n.Restricted, Hops: n.Hops, Parent: optString(n.Parent), Impact: n.Impact, ViaColumns: via})
	}
	for _, e := range im.Exposures {
		out.Exposures = append(out.Exposures, model.IncidentExposure{Node: e.Node, ID: e.ID, Name: e.Name, Type: e.Type})
	}
	return out
}

func kindCounts(m map[string]int) []model.KindCount {
	out := make([]model.KindCount, 0, len(m))
	for k, n := range m {
		out = append(out, model.KindCount{Kind: k, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

func toKnowledgeGraph(g lineage.KGraph) *model.KnowledgeGraph {
	out := &model.KnowledgeGraph{Focus: g.Focus, Hops: g.Hops, Truncated: g.Truncated,
		Nodes: make([]model.KnowledgeNode, 0, len(g.Nodes)), Edges: make([]model.KnowledgeEdge, 0, len(g.Edges)),
		Stats: &model.KnowledgeStats{Nodes: g.Stats.Nodes, Edges: g.Stats.Edges, ByNodeKind: kindCounts(g.Stats.ByNodeKind),
			ByEdgeKind: kindCounts(g.Stats.ByEdgeKind)}}
	for _, n := range g.Nodes {
		out.Nodes = append(out.Nodes, toKnowledgeNode(n))
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, model.KnowledgeEdge{Source: e.Source, Target: e.Target, Kind: e.Kind, LineageKind: optString(string(e.LineageKind))})
	}
	return out
}
