// Package graph serves GraphQL with gqlgen. Resolvers are thin: each makes one service
// call (the same as the REST handler's) and converts the result.
package graph

import (
	"github.com/vigia-data/vigia/i18n"
)

// Resolver holds the services resolvers call.
type Resolver struct {
	// ConnectionReads answers connections and their query log; TrustReads a dataset's trust
	// score, AI readiness, context and trust facts (GraphQL parity, issue 23).
	ConnectionReads ConnectionService
	TrustReads      TrustReadService
	// ProductReads answers domains' verdict, trust facts, metadata quality, version
	// diffs and suggestions; LineageReads direct lineage, exposures and snapshots.
	ProductReads ProductReadService
	LineageReads LineageReadService
	// ContractReads answers contract documents, versions, diffs, proposals and domains' contracts.
	ContractReads ContractReadService
	// Readmes, SensitivityReads and RuleExports answer a dataset's README, column
	// sensitivity and rules export.
	Readmes          ReadmeReader
	SensitivityReads SensitivityReader
	RuleExports      RuleExporter
	// PipelineReads answers the health of the pipelines writing a dataset.
	PipelineReads PipelineHealthReader
	// SyntheticGen generates a dataset's synthetic rows.
	SyntheticGen SyntheticRowsService

	Catalog      CatalogService
	ScanService  ScanService
	ScanReads    ScanReadService
	RuleService  RuleService
	IssueService IssueService

	// LineageService answers lineage and the knowledge graph.
	LineageService LineageService
	// IncidentService answers incidents.
	IncidentService IncidentService
	Trust           TrustService
	Products        ProductService
	// Contracts answers datasets' data contracts.
	Contracts ContractService
	// Synthetic answers datasets' synthetic-data scorecards; Messages words their reasons.
	Synthetic SyntheticService
	Messages  *i18n.Catalog
	// Ops are the services of the reads issue 23 brought to parity with REST.
	Ops OpsServices
	// BI answers the BI tools' refresh feed.
	BI BIService
	// Duplicates answers the clusters of duplicate records.
	Duplicates DuplicateService
	// Dashboards answers the governance metrics.
	Dashboards DashboardService
	// Finops answers the chargeback.
	Finops FinopsService
	// LabelQuality answers datasets' label quality.
	LabelQuality LabelQualityService
}
