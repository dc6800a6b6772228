package graph

import (
	"context"
	"sync"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/graph/model"
)

func toDataset(d catalog.Dataset, accessRole string) model.Dataset {
	c := d.Country()
	return model.Dataset{ID: d.ID, Name: d.Name(), Schema: d.Schema, Table: d.Table, ConnectionID: d.ConnectionID,
		ConnectionName: d.ConnectionName, Kind: d.Kind, CostGuarded: d.CostGuarded(), DataCountry: d.DataCountry,
		LatestScore: d.LatestScore, LastScanAt: d.LastScanAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		AccessRole: accessRole, Country: &model.Country{Effective: c.Effective, Source: c.Source}}
}

func toColumns(cols []catalog.Column) []model.Column {
	out := make([]model.Column, 0, len(cols))
	for _, c := range cols {
		mc := model.Column{Name: c.Name, Position: c.Position, DataType: c.DataType, Nullable: c.Nullable,
			PrimaryKey: c.PrimaryKey, Partition: c.Partition, Clustering: c.Clustering}
		if p := c.Profile; p != nil {
			n := int(p.NullCount)
			mc.NullCount, mc.NullRate = &n, &p.NullRate
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

// columnCache keeps, per request, the columns a detail read already loaded, so the
// columns resolver does not read them twice.
type columnCache struct {
	mu   sync.Mutex
	cols map[string][]model.Column
}

type columnCacheKey struct{}

// WithRequestCache returns ctx with the per-request caches resolvers share.
func WithRequestCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, columnCacheKey{}, &columnCache{cols: map[string][]model.Column{}})
}

func rememberColumns(ctx context.Context, id string, cols []model.Column) {
	if c, ok := ctx.Value(columnCacheKey{}).(*columnCache); ok {
		c.mu.Lock()
		c.cols[id] = cols
		c.mu.Unlock()
	}
}

func columnsOf(ctx context.Context, id string) ([]model.Column, error) {
	if c, ok := ctx.Value(columnCacheKey{}).(*columnCache); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.cols[id], nil
	}
	return nil, nil
}
