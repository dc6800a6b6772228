package graph

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/scan"
)

// historyLimit is how many scores the dataset loader reads per dataset.
const historyLimit = 30

func toDataset(d catalog.Dataset, accessRole string) model.Dataset {
	c := d.Country()
	return model.Dataset{ID: d.ID, Name: d.Name(), Schema: d.Schema, Table: d.Table, ConnectionID: d.ConnectionID,
		ConnectionName: d.ConnectionName, Kind: d.Kind, CostGuarded: d.CostGuarded(), DataCountry: d.DataCountry,
		LatestScore: d.LatestScore, LastScanAt: d.LastScanAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		AccessRole: accessRole, Country: &model.Country{Effective: c.Effective, Source: c.Source, Own: d.DataCountry}}
}

func toColumns(cols []catalog.Column) []model.Column {
	out := make([]model.Column, 0, len(cols))
	for _, c := range cols {
		mc := model.Column{Name: c.Name, Position: c.Position, DataType: c.DataType, Nullable: c.Nullable,
			PrimaryKey: c.PrimaryKey, Partition: c.Partition, Clustering: c.Clustering}
		if p := c.Profile; p != nil {
			n := int(p.NullCount)
			mc.NullCount, mc.NullRate = &n, &p.NullRate
			mc.Min, mc.Max = (*string)(p.Min), (*string)(p.Max)
			if p.Estimated {
				mc.ProfileEstimated = true
				size := p.SampleSize
				mc.ProfileSampleSize = &size
			}
			if s := p.Semantic; s != nil {
				ms := &model.Semantic{Type: s.Type, Estimated: s.Estimated, SampleSize: s.SampleSize}
				if s.Region != "" {
					region := s.Region
					ms.Region = &region
				}
				mc.Semantic = ms
			}
		}
		out = append(out, mc)
	}
	return out
}

func toScorePoints(ps []catalog.ScorePoint, limit int) []model.ScorePoint {
	if limit > 0 && len(ps) > limit {
		ps = ps[:limit]
	}
	out := make([]model.ScorePoint, 0, len(ps))
	for _, p := range ps {
		out = append(out, model.ScorePoint{ScanID: p.ScanID, Score: p.Score, Completude: p.Dimensions["completude"],
			Unicidade: p.Dimensions["unicidade"], Validade: p.Dimensions["validade"], Atualidade: p.Dimensions["atualidade"],
			Consistencia: p.Dimensions["consistencia"], CreatedAt: p.CreatedAt})
	}
	return out
}

func toIssueSummaries(is []catalog.IssueSummary) []model.IssueSummary {
	out := make([]model.IssueSummary, 0, len(is))
	for _, i := range is {
		out = append(out, model.IssueSummary{ID: i.ID, Title: i.Title, Type: i.Type, Subtype: i.Subtype, Severity: i.Severity,
			Status: i.Status, CreatedAt: i.CreatedAt})
	}
	return out
}

func toScan(s scan.Scan) model.Scan {
	return model.Scan{ID: s.ID, ConnectionID: s.ConnectionID, ConnectionName: s.ConnectionName, Status: s.Status, Trigger: s.Trigger,
		DatasetsTotal: s.DatasetsTotal, DatasetsDone: s.DatasetsDone, DatasetsFailed: s.DatasetsFailed, ErrorCode: s.ErrorCode,
		CreatedAt: s.CreatedAt, FinishedAt: s.FinishedAt}
}

func toSignal(sg scan.Signal) model.Signal {
	out := model.Signal{ID: sg.ID, DatasetID: sg.DatasetID, DatasetName: sg.DatasetName, ScanID: optString(sg.ScanID), Kind: sg.Kind,
		Metric: sg.Metric, Observed: sg.Observed, Baseline: sg.Baseline, Z: sg.Z, Threshold: sg.Threshold, Method: sg.Method,
		Anomalous: sg.Anomalous, IssueID: sg.IssueID, CreatedAt: sg.CreatedAt, Source: sg.Source}
	if sg.Pipeline != nil {
		out.Pipeline = &model.SignalPipeline{Orchestrator: sg.Pipeline.Orchestrator, Pipeline: sg.Pipeline.Pipeline, RunID: sg.Pipeline.RunID}
	}
	if sg.Column != "" {
		c := sg.Column
		out.Column = &c
	}
	if sg.Severity != "" {
		sev := sg.Severity
		out.Severity = &sev
	}
	if sg.CI95 != nil {
		out.ObservedCi95 = []float64{sg.CI95[0], sg.CI95[1]}
	}
	return out
}

// rfc3339 formats an optional time argument the way the REST query carries it.
func rfc3339(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.Format(time.RFC3339Nano)
	return &s
}

// loaders are the per-request dataloaders resolvers share.
type loaders struct {
	details   *loader[string, *catalog.Dataset]
	histories *loader[string, []issue.HistoryEntry]
	traverse  *loader[traverseKey, lineage.TraverseResult]
	impact    *loader[impactKey, impactAnswer]
	walk      *walkReads
}

type loadersKey struct{}

// withLoaders returns ctx with fresh per-request loaders over the resolver's services.
func (r *Resolver) withLoaders(ctx context.Context) context.Context {
	return context.WithValue(ctx, loadersKey{}, &loaders{
		details: newLoader(func(ctx context.Context, ids []string) (map[string]*catalog.Dataset, error) {
			m, err := r.Catalog.DatasetDetails(ctx, ids, historyLimit)
			out := make(map[string]*catalog.Dataset, len(m))
			for id, d := range m {
				out[id] = &d
			}
			return out, err
		}),
		histories: newLoader(func(ctx context.Context, ids []string) (map[string][]issue.HistoryEntry, error) {
			return r.IssueService.Histories(ctx, ids)
		}),
		traverse: r.newTraverseLoader(),
		impact:   r.newImpactLoader(),
		walk:     &walkReads{},
	})
}

// detail loads a dataset's detail through the request's batch loader. A dataset the
// caller cannot see is not found, as everywhere. The detail is shared by the request's
// resolvers (a pointer: each runs on its own small goroutine stack); never changed.
func (r *Resolver) detail(ctx context.Context, id string) (*catalog.Dataset, error) {
	l, ok := ctx.Value(loadersKey{}).(*loaders)
	if !ok {
		d, err := r.Catalog.Dataset(ctx, id)
		if err != nil {
			return nil, err
		}
		return &d, nil
	}
	d, found, err := l.details.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !found || d == nil {
		return nil, vigia.NotFound()
	}
	return d, nil
}
