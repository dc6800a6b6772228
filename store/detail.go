package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/suggest"
	"github.com/vigia-data/vigia/trust"
)

// DetailRead is everything the dataset detail (GET /datasets/{id}) shows, read at once:
// the dataset as CatalogStore.DatasetByID reads it, its trust facts (TrustStore.Facts;
// the pipelines writing it are not read: they weigh in trust decisions, not in the
// score) and its open suggestions (SuggestStore.OpenOf).
type DetailRead struct {
	Dataset     catalog.Dataset
	Facts       trust.Facts
	Suggestions []suggest.Suggestion
}

// DatasetDetail reads a dataset's detail for v at now in one round trip (one pgx.Batch,
// generic plans): KindNotFound when the dataset does not exist, is dropped, is another
// workspace's or v cannot see it. suggestions bounds its open suggestions.
func (db *DB) DatasetDetail(ctx context.Context, v catalog.Viewer, id string, now time.Time, suggestions int) (DetailRead, error) {
	if !vigia.ValidID(id) {
		return DetailRead{}, vigia.NotFound()
	}
	var out DetailRead
	var facts map[string]trust.Facts
	b := &pgx.Batch{}
	queueGenericPlans(ctx, b)
	dataset := queueDatasetByID(b, v, id)
	queueFacts(b, v, []string{id}, now, &facts)
	b.Queue(openOfDetailSQL, v.WorkspaceID, id, v.TeamIDs, v.Admin, suggestions).Query(func(rows pgx.Rows) error {
		var err error
		out.Suggestions, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (suggest.Suggestion, error) { return scanSuggestion(r) })
		return err
	})
	if err := db.q(ctx).SendBatch(ctx, b).Close(); err != nil {
		return DetailRead{}, translate(err)
	}
	d, err := dataset()
	if err != nil {
		return DetailRead{}, err
	}
	f, ok := facts[id]
	if !ok { // changed visibility between the batch's statements: as if read before it
		return DetailRead{}, vigia.NotFound()
	}
	out.Dataset, out.Facts = d, f
	return out, nil
}
