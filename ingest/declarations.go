package ingest

import (
	"github.com/goccy/go-yaml"

	"github.com/vigia-data/vigia"
)

// Declarations is the YAML file `vigia lineage declare` loads. Datasets are named
// connection/schema.table (or by id).
//
//	edges:
//	  - from: warehouse/public.orders
//	    to: warehouse/analytics.orders_clean
//	    columns: [{from: amount, to: amount_eur}]
//	exposures:
//	  - name: Receita diária
//	    type: dashboard
//	    url: https://bi.example.pt/d/42
//	    owner: financas
//	    depends_on: [warehouse/analytics.revenue_daily]
type Declarations struct {
	Edges     []DeclaredEdge     `yaml:"edges"`
	Exposures []DeclaredExposure `yaml:"exposures"`
}

// DeclaredEdge is an edge of a declaration file, its datasets by name.
type DeclaredEdge struct {
	From    string       `yaml:"from"`
	To      string       `yaml:"to"`
	Columns []ColumnPair `yaml:"columns"`
}

// DeclaredExposure is an exposure of a declaration file, the datasets it reads by name.
type DeclaredExposure struct {
	Name      string   `yaml:"name"`
	Type      string   `yaml:"type"`
	URL       string   `yaml:"url"`
	Owner     string   `yaml:"owner"`
	DependsOn []string `yaml:"depends_on"`
}

// DecodeDeclarations reads a declaration file (unknown keys refused). Returns
// KindTooLarge over MaxImportBytes, KindInvalid (loc "file", without echoing it) for a
// body that is not one.
func DecodeDeclarations(body []byte) (Declarations, error) {
	if len(body) > MaxImportBytes {
		return Declarations{}, tooLarge()
	}
	var f Declarations
	if err := yaml.UnmarshalWithOptions(body, &f, yaml.Strict()); err != nil {
		return Declarations{}, vigia.Invalid(vigia.Field("value_error", nil, "file"))
	}
	return f, nil
}
