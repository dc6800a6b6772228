package app

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/suggest"
	"github.com/vigia-data/vigia/trust"
)

// datasetDetail answers GET /datasets/{id} (rest.DatasetDetailService) from one round
// trip (store.DB.DatasetDetail), composed as catalog.Service.Dataset, trust's
// DatasetDetail and suggest.Service.Open compose their own reads one at a time.
type datasetDetail struct {
	db      *store.DB
	catalog *catalog.Service
	trust   *trust.Service
}

// DatasetDetail is GET /datasets/{id}'s read: the dataset with its trust brief and its
// open suggestions, in one round trip, as Trust.DatasetDetail and Suggestions.Open
// answer them one read at a time. KindNotFound when the caller cannot see it.
func (a *App) DatasetDetail(ctx context.Context, id string) (catalog.Dataset, []suggest.Suggestion, error) {
	return datasetDetail{db: a.DB, catalog: a.Catalog, trust: a.Trust}.DatasetDetail(ctx, id)
}

func (x datasetDetail) DatasetDetail(ctx context.Context, id string) (catalog.Dataset, []suggest.Suggestion, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return catalog.Dataset{}, nil, err
	}
	now := x.trust.Now()
	r, err := x.db.DatasetDetail(ctx, catalog.ViewerOf(p), id, now, suggest.MaxOpenOnDetail)
	if err != nil {
		return catalog.Dataset{}, nil, err
	}
	d := x.trust.DetailOf(x.catalog.Localize(ctx, r.Dataset), r.Facts, now)
	return d, r.Suggestions, nil
}
