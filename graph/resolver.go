// Package graph serves GraphQL with gqlgen. Resolvers are thin: each makes one service
// call (the same as the REST handler's) and converts the result.
package graph

import (
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/trust"
)

// Resolver holds the services resolvers call.
type Resolver struct {
	Catalog      *catalog.Service
	ScanService  *scan.Service
	ScanReads    *scan.ReadService
	RuleService  *rule.Service
	IssueService *issue.Service

	// LineageService answers lineage, incidents and the knowledge graph.
	LineageService *lineage.Service
	Trust          *trust.Service
	Products       *product.Service
}
