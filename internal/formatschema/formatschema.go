// Package formatschema compiles the official JSON Schemas of the open formats Vigia
// writes (ODCS, dbt property files), for the tests that validate exports against them.
package formatschema

import (
	"bytes"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles the schema raw (JSON) under name. Patterns are read as JSON Schema
// means them, ECMA-262 (dbt's schema uses lookaheads, which Go's regexp lacks).
func Compile(raw []byte, name string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(ecmaRegexp)
	url := "file:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

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
