package app

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/suggest"
)

// DatasetDetail is GET /datasets/{id}'s read (rest.DatasetDetailService): the dataset with
// its trust brief and its open suggestions in one round trip (store.DB.DatasetDetail),
// composed as Trust.DatasetDetail and Suggestions.Open compose their own reads one at a
// time. KindNotFound when the caller cannot see it.
func (a *App) DatasetDetail(ctx context.Context, id string) (catalog.Dataset, []suggest.Suggestion, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return catalog.Dataset{}, nil, err
	}
	now := a.Trust.Now()
	r, err := a.DB.DatasetDetail(ctx, catalog.ViewerOf(p), id, now, suggest.MaxOpenOnDetail)
	if err != nil {
		return catalog.Dataset{}, nil, err
	}
	return a.Trust.DetailOf(a.Catalog.Localize(ctx, r.Dataset), r.Facts, now), r.Suggestions, nil
}
