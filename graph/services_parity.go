package graph

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/readme"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/sensitivity"
	"github.com/vigia-data/vigia/synthetic"
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

// ProductReadService is what the resolvers need of domains' aggregates and the catalog's
// metadata quality.
type ProductReadService interface {
	CatalogMetadataQuality(ctx context.Context) (product.MetadataQuality, error)
	DiffVersions(ctx context.Context, id, from, to string) (product.DiffResult, error)
	MetadataQuality(ctx context.Context, id string) (product.MetadataQuality, error)
	SuggestDomains(ctx context.Context) (product.DomainSuggestions, error)
	TrustFacts(ctx context.Context, id string) (product.DomainFacts, error)
	Verdict(ctx context.Context, id string) (product.DomainVerdict, error)
}

// LineageReadService is what the resolvers need of direct lineage, exposures and the
// knowledge graph's snapshots.
type LineageReadService interface {
	Diff(ctx context.Context, from string, to *string) (lineage.GraphDiff, error)
	Exposures(ctx context.Context) ([]lineage.Exposure, error)
	Lineage(ctx context.Context, datasetID string) (lineage.LineageResult, error)
	SnapshotHistory(ctx context.Context, page vigia.Page) (vigia.List[lineage.Snapshot], error)
}

// ContractReadService is what the resolvers need of contract documents, versions,
// diffs, proposals and domains' contracts.
type ContractReadService interface {
	Contract(ctx context.Context, datasetID, source string) (contract.Document, error)
	Diff(ctx context.Context, datasetID string, from, to *string) (contract.DiffResult, error)
	DomainContract(ctx context.Context, domainID string) (contract.DomainContract, error)
	Proposal(ctx context.Context, datasetID, id string) (contract.Proposal, error)
	Proposals(ctx context.Context, datasetID string, f contract.ProposalFilter) (vigia.List[contract.Proposal], error)
	VersionByNumber(ctx context.Context, datasetID, number string) (contract.VersionRecord, error)
}

// ReadmeReader reads a dataset's README.
type ReadmeReader interface {
	Get(ctx context.Context, datasetID string) (readme.Readme, error)
}

// SensitivityReader reads a dataset's column sensitivity.
type SensitivityReader interface {
	Dataset(ctx context.Context, datasetID string) (sensitivity.Report, error)
}

// RuleExporter writes a dataset's active rules as a file.
type RuleExporter interface {
	ExportRules(ctx context.Context, datasetID *string, format string) (rule.Export, error)
}

// PipelineHealthReader judges the pipelines writing a dataset.
type PipelineHealthReader interface {
	PipelineHealth(ctx context.Context, datasetID string) (orchestrator.Health, error)
}

// SyntheticRowsService generates a dataset's synthetic rows with their scorecard.
type SyntheticRowsService interface {
	Rows(ctx context.Context, datasetID string, rows int, seed int64) (synthetic.Result, error)
}
