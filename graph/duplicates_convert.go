package graph

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/duplicates"
	"github.com/vigia-data/vigia/graph/model"
)

// DuplicateService is what the resolvers need of duplicate clusters.
type DuplicateService interface {
	List(ctx context.Context, f duplicates.Filter, page vigia.Page) (vigia.List[duplicates.StoredCluster], error)
}

func toDuplicateCluster(c duplicates.StoredCluster) model.DuplicateCluster {
	out := model.DuplicateCluster{ID: c.ID, ConnectionID: c.ConnectionID, Scope: c.Scope, ConnectionIds: c.ConnectionIDs, Confidence: c.Confidence, ConfidenceBand: c.Band,
		ReferencePrecision: c.ReferencePrecision, MatchedOn: c.MatchedOn, Size: len(c.Members), ComputedAt: c.ComputedAt,
		Members: make([]model.DuplicateMember, 0, len(c.Members))}
	if out.MatchedOn == nil {
		out.MatchedOn = []string{}
	}
	if out.ConnectionIds == nil {
		out.ConnectionIds = []string{}
	}
	for _, m := range c.Members {
		out.Members = append(out.Members, model.DuplicateMember{DatasetID: m.DatasetID, ConnectionID: m.ConnectionID, DatasetName: m.DatasetName, RowKey: m.RowKey,
			Confidence: m.Confidence, Exact: m.Confidence == 1})
	}
	return out
}
