package rest

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/vigia-data/vigia"
)

// NumberOut is an exact number from a source (a column's min or max): a JSON number
// when a double holds it exactly, else a string of its digits, so that a bigint past
// 2^53 or a numeric(38,10) keeps every digit for clients that parse numbers as doubles.
type NumberOut vigia.Decimal

// MarshalJSON writes the number (see vigia.Decimal).
func (n NumberOut) MarshalJSON() ([]byte, error) { return vigia.Decimal(n).MarshalJSON() }

// Schema documents both forms in the OpenAPI document; the number is a double
// (format double, so generated clients read it as float64, not float32).
func (NumberOut) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Description: "Exact value: a number when a double holds it exactly, else a string of its decimal digits",
		OneOf: []*huma.Schema{
			{Type: huma.TypeNumber, Format: "double"},
			{Type: huma.TypeString, Pattern: `^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`},
		},
	}
}

func toNumberOut(d *vigia.Decimal) *NumberOut {
	if d == nil {
		return nil
	}
	n := NumberOut(*d)
	return &n
}
