package ingest

import (
	"bytes"
	"errors"
	"io"

	"go.yaml.in/yaml/v3"

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
// body that is not one. The YAML reader is go.yaml.in/yaml/v3, which refuses deep
// nesting at once (a file of 2 MiB of "[" kept the previous reader busy for minutes).
func DecodeDeclarations(body []byte) (Declarations, error) {
	if len(body) > MaxImportBytes {
		return Declarations{}, tooLarge()
	}
	var f Declarations
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return Declarations{}, vigia.Invalid(vigia.Field("value_error", nil, "file"))
	}
	// One document only: a second one would be silently ignored.
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return Declarations{}, vigia.Invalid(vigia.Field("value_error", nil, "file"))
	}
	return f, nil
}
