// Package rulefiletest checks exported rule files against the standards' own schemas,
// for the tests of rulefile and of the service. dbt/ holds dbt's JSON schema for
// property files (github.com/dbt-labs/dbt-jsonschema, schemas/latest, commit a9176ae,
// Apache-2.0, unchanged; see dbt/LICENSE).
package rulefiletest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed dbt/dbt_yml_files-latest.json
var dbtSchema []byte

// MustValidDBT fails tb unless body, read as YAML, validates against dbt's JSON schema
// for property files.
func MustValidDBT(tb testing.TB, body []byte) {
	tb.Helper()
	if err := ValidateDBT(body); err != nil {
		tb.Fatalf("not a valid dbt property file: %v\n%s", err, body)
	}
}

// ValidateDBT validates body (YAML) against dbt's JSON schema for property files.
func ValidateDBT(body []byte) error {
	var doc any
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return err
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return err
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(dbtSchema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(ecmaRegexp)
	if err := c.AddResource("dbt_yml_files-latest.json", schemaDoc); err != nil {
		return err
	}
	sch, err := c.Compile("dbt_yml_files-latest.json")
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// ecmaRegexp compiles the schema's patterns as JSON Schema means them (ECMA-262, with
// the lookaheads dbt's schema uses for metric names), which Go's regexp cannot.
func ecmaRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	return ecmaMatcher{re}, nil
}

type ecmaMatcher struct{ re *regexp2.Regexp }

func (m ecmaMatcher) MatchString(s string) bool {
	ok, err := m.re.MatchString(s)
	return err == nil && ok
}

func (m ecmaMatcher) String() string { return m.re.String() }
