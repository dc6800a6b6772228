package graph

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/trust"
)

// ConnectionService is what the resolvers need of connections (never their DSN).
type ConnectionService interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Connections(ctx context.Context) ([]connection.Connection, error)
	DemoPacks() []connection.DemoPack
	Engineering(ctx context.Context, id string) (connection.Engineering, error)
	Presets() []connection.Preset
	QueryLog(ctx context.Context, id string, f connection.QueryLogFilter) (vigia.List[connection.QueryLogEntry], error)
	Types() []connection.ConnectorType
}

// TrustReadService is what the resolvers need of a dataset's trust reads.
type TrustReadService interface {
	AIReadiness(ctx context.Context, datasetID string) (trust.Readiness, error)
	DatasetContext(ctx context.Context, datasetID string) (trust.Context, error)
	Find(ctx context.Context, f trust.FindFilter) (trust.FindResult, error)
	TrustFacts(ctx context.Context, datasetID string) (trust.DatasetFacts, error)
	TrustScore(ctx context.Context, datasetID string) (trust.Score, error)
}
