package app

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/suggest"
	"github.com/vigia-data/vigia/trust"
)

// datasetDetail answers GET /datasets/{id} (rest.DatasetDetailService) from one round
// trip (store.DB.DatasetDetail), composed as catalog.Service.Dataset, trust's
// DatasetDetail (its pipelines from orchestrator.TrustPipelines) and suggest.Service.Open
// compose their own reads one at a time.
type datasetDetail struct {
	db      *store.DB
	catalog *catalog.Service
	trust   *trust.Service
}

func (x datasetDetail) DatasetDetail(ctx context.Context, id string) (catalog.Dataset, []suggest.Suggestion, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return catalog.Dataset{}, nil, err
	}
	now := x.trust.Now()
	r, err := x.db.DatasetDetail(ctx, catalog.ViewerOf(p), id, now, orchestrator.TrustRunsPerPipeline, suggest.MaxOpenOnDetail)
	if err != nil {
		return catalog.Dataset{}, nil, err
	}
	d := x.trust.DetailOf(x.catalog.Localize(ctx, r.Dataset), r.Facts, orchestrator.PipelineFactsOf(r.Runs, now), now)
	return d, r.Suggestions, nil
}
