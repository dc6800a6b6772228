package graph

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// The complexity of an operation is remembered only when its variables cannot change
// it: single ID, String, Boolean or enum values; an Int (a limit, hops), a list or a
// custom scalar (a JSON value may hold lists) is computed per request.
func TestVariableFreeCost(t *testing.T) {
	named := func(name string, kind ast.DefinitionKind) *ast.VariableDefinition {
		return &ast.VariableDefinition{Type: ast.NonNullNamedType(name, nil), Definition: &ast.Definition{Kind: kind, Name: name}}
	}
	cases := []struct {
		name string
		vars []*ast.VariableDefinition
		want bool
	}{
		{"no variables", nil, true},
		{"an ID", []*ast.VariableDefinition{named("ID", ast.Scalar)}, true},
		{"a String and a Boolean", []*ast.VariableDefinition{named("String", ast.Scalar), named("Boolean", ast.Scalar)}, true},
		{"an enum", []*ast.VariableDefinition{named("Severity", ast.Enum)}, true},
		{"an Int", []*ast.VariableDefinition{named("ID", ast.Scalar), named("Int", ast.Scalar)}, false},
		{"a Float", []*ast.VariableDefinition{named("Float", ast.Scalar)}, false},
		{"a custom scalar", []*ast.VariableDefinition{named("JSON", ast.Scalar)}, false},
		{"an input object", []*ast.VariableDefinition{named("GateInput", ast.InputObject)}, false},
		{"a list of IDs", []*ast.VariableDefinition{{Type: ast.ListType(ast.NonNullNamedType("ID", nil), nil)}}, false},
	}
	for _, c := range cases {
		if got := variableFreeCost(&ast.OperationDefinition{VariableDefinitions: c.vars}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
