package contract

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/vigia-data/vigia"
)

// APIVersion is the Open Data Contract Standard version Vigia writes.
const APIVersion = "v3.0.2"

// Document is a data contract in the Open Data Contract Standard (ODCS) v3: the subset
// Vigia writes and compares. Uploaded documents are validated against the standard's
// own JSON Schema (odcs/) before they are read into it; what Vigia does not compare is
// not kept.
type Document struct {
	APIVersion       string           `json:"apiVersion"`
	Kind             string           `json:"kind"`
	ID               string           `json:"id"`
	Name             string           `json:"name,omitempty"`
	Version          string           `json:"version"`
	Status           string           `json:"status"`
	Domain           string           `json:"domain,omitempty"`
	DataProduct      string           `json:"dataProduct,omitempty"`
	Description      *Description     `json:"description,omitempty"`
	Schema           []Object         `json:"schema"`
	Team             []TeamMember     `json:"team,omitempty"`
	SLAProperties    []SLAProperty    `json:"slaProperties,omitempty"`
	CustomProperties []CustomProperty `json:"customProperties,omitempty"`
}

// Description is the contract's high-level description.
type Description struct {
	Purpose string `json:"purpose,omitempty"`
	Usage   string `json:"usage,omitempty"`
}

// Object is one table of the contract with its properties (columns).
type Object struct {
	Name         string     `json:"name"`
	PhysicalName string     `json:"physicalName,omitempty"`
	PhysicalType string     `json:"physicalType,omitempty"`
	LogicalType  string     `json:"logicalType,omitempty"`
	Properties   []Property `json:"properties"`
	Quality      []Quality  `json:"quality,omitempty"`
}

// Property is a column of the contract.
type Property struct {
	Name               string    `json:"name"`
	LogicalType        string    `json:"logicalType,omitempty"`
	PhysicalType       string    `json:"physicalType,omitempty"`
	Required           bool      `json:"required"`
	Unique             bool      `json:"unique"`
	PrimaryKey         bool      `json:"primaryKey"`
	PrimaryKeyPosition int       `json:"primaryKeyPosition,omitempty"`
	Partitioned        bool      `json:"partitioned,omitempty"`
	Classification     string    `json:"classification,omitempty"`
	Quality            []Quality `json:"quality,omitempty"`
}

// Quality is a data quality check. Vigia writes its rules as custom checks of the
// engine "vigia" whose implementation holds the rule type and parameters, so that a
// contract names exactly what a scan evaluates.
type Quality struct {
	Type        string `json:"type"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Dimension   string `json:"dimension,omitempty"`
	Severity    string `json:"severity,omitempty"`
	Rule        string `json:"rule,omitempty"`
	MustBe      any    `json:"mustBe,omitempty"`
	Engine      string `json:"engine,omitempty"`
	// Implementation is what the engine runs: for Vigia {rule_type, params}; another
	// engine's (a string or an object, as the standard allows) is kept as sent.
	Implementation any `json:"implementation,omitempty"`
}

// Implementation is a Vigia rule inside a custom quality check.
type Implementation struct {
	RuleType string
	Params   map[string]any
}

// VigiaRule returns the Vigia rule a check names: engine vigia with an implementation
// {rule_type, params}; false for any other check.
func (q Quality) VigiaRule() (Implementation, bool) {
	if q.Engine != EngineVigia {
		return Implementation{}, false
	}
	m, ok := q.Implementation.(map[string]any)
	if !ok {
		return Implementation{}, false
	}
	rt, _ := m["rule_type"].(string)
	params, _ := m["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	return Implementation{RuleType: rt, Params: params}, rt != ""
}

// TeamMember is a person or team of the contract's team.
type TeamMember struct {
	Username string `json:"username,omitempty"`
	Name     string `json:"name,omitempty"`
	Role     string `json:"role,omitempty"`
}

// SLAProperty is one service-level property.
type SLAProperty struct {
	Property string `json:"property"`
	Value    any    `json:"value"`
	Unit     string `json:"unit,omitempty"`
	Element  string `json:"element,omitempty"`
}

// CustomProperty is a key/value the standard leaves open.
type CustomProperty struct {
	Property string `json:"property"`
	Value    any    `json:"value"`
}

// EngineVigia names Vigia's rules in custom quality checks.
const EngineVigia = "vigia"

// Table is the contract's first object, where a dataset's contract keeps its columns;
// an empty Object when the document has none.
func (d Document) Table() Object {
	if len(d.Schema) == 0 {
		return Object{}
	}
	return d.Schema[0]
}

// Columns returns the names of the contract's columns, sorted.
func (d Document) Columns() []string {
	out := []string{}
	for _, p := range d.Table().Properties {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// JSON encodes the document as JSON.
func (d Document) JSON() ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, vigia.Internal(err)
	}
	return b, nil
}

// YAML encodes the document as YAML, keys in the document's order.
func (d Document) YAML() ([]byte, error) {
	b, err := d.JSON()
	if err != nil {
		return nil, err
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return nil, vigia.Internal(err)
	}
	return y, nil
}

//go:embed odcs/odcs-json-schema-v3.0.2.json
var odcsFS embed.FS

const odcsSchemaURL = "https://vigia.invalid/odcs-json-schema-v3.0.2.json"

var (
	odcsOnce   sync.Once
	odcsSchema *jsonschema.Schema
	odcsErr    error
)

// schema compiles the embedded ODCS JSON Schema once.
func schema() (*jsonschema.Schema, error) {
	odcsOnce.Do(func() {
		raw, err := odcsFS.ReadFile("odcs/odcs-json-schema-v3.0.2.json")
		if err != nil {
			odcsErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			odcsErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(odcsSchemaURL, doc); err != nil {
			odcsErr = err
			return
		}
		odcsSchema, odcsErr = c.Compile(odcsSchemaURL)
	})
	return odcsSchema, odcsErr
}

// MaxProblems bounds the 422 items of an invalid document.
const MaxProblems = 20

// Validate checks a decoded JSON value (maps, slices, json.Number or float64 numbers)
// against the ODCS v3.0.2 JSON Schema. The error is KindInvalid with one item per
// problem located under root (e.g. ["document", "schema", "0", "properties"]); names
// taken from the document are kept only when they are plain identifiers, and no value
// of the document is ever repeated.
func Validate(v any, root ...string) error {
	sch, err := schema()
	if err != nil {
		return vigia.Internal(err)
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return vigia.Internal(err)
	}
	var fields []vigia.FieldError
	seen := map[string]bool{}
	add := func(typ string, loc []string) {
		key := typ + "\x00" + strings.Join(loc, "\x00")
		if seen[key] || len(fields) >= MaxProblems {
			return
		}
		seen[key] = true
		fields = append(fields, vigia.Field(typ, nil, loc...))
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		loc := append([]string{}, root...)
		for _, s := range e.InstanceLocation {
			loc = append(loc, vigia.SafeName(s))
		}
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				add("missing", append(append([]string{}, loc...), vigia.SafeName(m)))
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				add("extra_forbidden", append(append([]string{}, loc...), vigia.SafeName(p)))
			}
		case *kind.FalseSchema:
			// A member the schema forbids (unevaluatedProperties: false).
			add("extra_forbidden", loc)
		case *kind.Enum, *kind.Const:
			add("enum", loc)
		default:
			add("value_error", loc)
		}
	}
	walk(ve)
	if len(fields) == 0 {
		fields = append(fields, vigia.Field("value_error", nil, root...))
	}
	return vigia.Invalid(fields...)
}

// ParseDocument reads an uploaded contract: a JSON value already decoded (raw JSON
// bytes) that must validate against the ODCS schema and describe one table. Problems
// are KindInvalid located under root.
func ParseDocument(raw []byte, root ...string) (Document, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return Document{}, vigia.Invalid(vigia.Field("json_invalid", nil, root...))
	}
	if err := Validate(v, root...); err != nil {
		return Document{}, err
	}
	var d Document
	if err := json.Unmarshal(raw, &d); err != nil {
		// Valid ODCS that does not fit what Vigia compares (e.g. a string where Vigia reads
		// an object in an open-ended part of the standard).
		return Document{}, vigia.Invalid(vigia.Field("value_error", nil, root...))
	}
	var fields []vigia.FieldError
	if len(d.Schema) != 1 {
		fields = append(fields, vigia.Field("value_error", map[string]any{"objects": 1}, append(append([]string{}, root...), "schema")...))
	} else {
		names := map[string]bool{}
		for i, p := range d.Schema[0].Properties {
			loc := append(append([]string{}, root...), "schema", "0", "properties", strconv.Itoa(i), "name")
			switch {
			case strings.TrimSpace(p.Name) == "":
				fields = append(fields, vigia.Field("missing", nil, loc...))
			case names[p.Name]:
				fields = append(fields, vigia.Field("value_error", map[string]any{"unique": true}, loc...))
			}
			names[p.Name] = true
		}
	}
	if len(fields) > 0 {
		return Document{}, vigia.Invalid(fields...)
	}
	return d, nil
}
