package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2"

	"github.com/vigia-data/vigia/graph/generated"
)

// A field's complexity multiplies by the length of each of its list arguments, literal
// or variable; an empty list counts 1; a list of input objects counts its elements.
func TestComplexityMultipliesByListArguments(t *testing.T) {
	es := costedSchema{generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}})}
	cost := func(query string, vars map[string]any) int {
		t.Helper()
		doc, errs := gqlparser.LoadQueryWithRules(es.Schema(), query, nil)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", query, errs)
		}
		return complexity.Calculate(context.Background(), es, doc.Operations[0], vars)
	}
	one := cost(`{ issues(severity: ["critical"]) { items { id title } } }`, nil)
	none := cost(`{ issues { items { id title } } }`, nil)
	if one != none || one <= 1 {
		t.Fatalf("one severity %d, none %d", one, none)
	}
	for _, c := range []struct {
		query string
		vars  map[string]any
		times int
	}{
		{`{ issues(severity: ["critical", "warning", "info"]) { items { id title } } }`, nil, 3},
		{`{ issues(severity: []) { items { id title } } }`, nil, 1},
		{`{ issues(severity: ["critical", "warning"], status: ["open", "acknowledged", "resolved"]) { items { id title } } }`, nil, 6},
		{`query($s: [String!]) { issues(severity: $s) { items { id title } } }`, map[string]any{"s": []any{"a", "b", "c", "d"}}, 4},
	} {
		if got := cost(c.query, c.vars); got != c.times*one {
			t.Errorf("%s: %d, want %d × %d", c.query, got, c.times, one)
		}
	}
	// A list argument deeper in the query multiplies its own field only.
	nested := cost(`{ datasets(limit: 2) { items { issues(severity: ["critical", "warning"]) { id } } } }`, nil)
	flat := cost(`{ datasets(limit: 2) { items { issues(severity: ["critical"]) { id } } } }`, nil)
	if issues := (flat - 1) / 2; nested != 1+2*(1+2*(issues-1)) {
		t.Errorf("nested %d, flat %d", nested, flat)
	}
	gate := func(n int) int {
		items := make([]any, n)
		for i := range items {
			items[i] = map[string]any{"dataset": "x", "columns": []any{"a", "b", "c"}}
		}
		return cost(`query($i: [RAGGateItemInput!]!) { ragGate(items: $i) { items { datasetId } } }`, map[string]any{"i": items})
	}
	if g1, g5 := gate(1), gate(5); g5 != 5*g1 {
		t.Errorf("ragGate of 5 items %d, of 1 %d", g5, g1)
	}
}
