// Package graph serves GraphQL with gqlgen. Resolvers are thin: each makes one service
// call (the same as the REST handler's) and converts the result.
package graph

import (
	"github.com/vigia-data/vigia/i18n"
)

// Resolver holds the services resolvers call.
type Resolver struct {
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
	// Duplicates answers the clusters of duplicate records.
	Duplicates DuplicateService
	// LabelQuality answers datasets' label quality.
	LabelQuality LabelQualityService
	Messages     *i18n.Catalog
}
