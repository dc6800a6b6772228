package lineage

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/vigia-data/vigia/catalog"
)

// The impact API: what incidents (package incident) read of lineage. Blast radii are
// computed unmasked (what incidents store) and masked for each reader.

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

// DownstreamOf returns, for each of ids, the datasets downstream of it within MaxHops
// (at most MaxImpactNodes each), in walk order. The walk is not masked: it serves
// grouping, which runs as the system.
func (s *Service) DownstreamOf(ctx context.Context, workspaceID string, ids []string) (map[string][]string, error) {
	out := make(map[string][]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	walks := make([]*walk, 0, len(ids))
	for _, id := range ids {
		walks = append(walks, newWalk(id, MaxImpactNodes+1, 0))
	}
	if err := expand(ctx, s.graph, workspaceID, walks, []Direction{Downstream}, MaxHops); err != nil {
		return nil, err
	}
	for _, w := range walks {
		out[w.root] = slices.Clone(w.order[1:])
	}
	return out, nil
}

// Datasets returns the workspace's live datasets among ids with their names and
// whether v can see them; unknown or dropped ids are absent.
func (s *Service) Datasets(ctx context.Context, v catalog.Viewer, ids []string) (map[string]DatasetInfo, error) {
	return s.store.DatasetInfos(ctx, v, dedupe(ids), false)
}

// MaskImpact turns an unmasked blast radius into what the caller may see; datasets are the
// ones it starts from (their recent consumers are exposures too).
func (s *Service) MaskImpact(ctx context.Context, v catalog.Viewer, b Blast, datasets []string) (ImpactView, error) {
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
