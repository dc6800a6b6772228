package neo4jgraph

import (
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Clear repeats its batch until a batch deletes fewer than ClearBatch nodes.
func TestClearStopsOnlyAfterAShortBatch(t *testing.T) {
	rec := func(n int64) []*neo4j.Record {
		return []*neo4j.Record{{Keys: []string{"deleted"}, Values: []any{n}}}
	}
	for _, c := range []struct {
		records []*neo4j.Record
		done    bool
	}{
		{rec(ClearBatch), false},
		{rec(ClearBatch - 1), true},
		{rec(0), true},
		{nil, true},
	} {
		if got := clearedAll(c.records); got != c.done {
			t.Errorf("clearedAll(%v) = %v, want %v", c.records, got, c.done)
		}
	}
}
