// Package graph serves GraphQL with gqlgen. Resolvers are thin: each makes one service
// call (the same as the REST handler's) and converts the result.
package graph

import (
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/trust"
)

// Resolver holds the services resolvers call.
type Resolver struct {
	Catalog     *catalog.Service
	ScanService *scan.Service
	ScanReads   *scan.ReadService
	Trust       *trust.Service
	Products    *product.Service
}
