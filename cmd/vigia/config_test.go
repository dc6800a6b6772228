package main

import (
	"strings"
	"testing"
	"time"
)

// The Neo4j bounds come from the environment; a bad value is refused in words that
// name the variable, and no value means neo4jgraph's defaults.
func TestNeo4jBoundsFromTheEnvironment(t *testing.T) {
	t.Setenv("NEO4J_QUERY_TIMEOUT_SECONDS", "")
	t.Setenv("NEO4J_MAX_NEIGHBOUR_EDGES", "")
	c, err := loadConfig()
	if err != nil || c.Neo4jQueryTimeout != 0 || c.Neo4jMaxNeighbourEdges != 0 {
		t.Fatalf("defaults: %v %d (%v)", c.Neo4jQueryTimeout, c.Neo4jMaxNeighbourEdges, err)
	}
	t.Setenv("NEO4J_QUERY_TIMEOUT_SECONDS", "12")
	t.Setenv("NEO4J_MAX_NEIGHBOUR_EDGES", "5000")
	if c, err = loadConfig(); err != nil || c.Neo4jQueryTimeout != 12*time.Second || c.Neo4jMaxNeighbourEdges != 5000 {
		t.Fatalf("set: %v %d (%v)", c.Neo4jQueryTimeout, c.Neo4jMaxNeighbourEdges, err)
	}
	for _, name := range []string{"NEO4J_QUERY_TIMEOUT_SECONDS", "NEO4J_MAX_NEIGHBOUR_EDGES"} {
		t.Setenv(name, "-3")
		if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "-3") {
			t.Fatalf("%s=-3: %v", name, err)
		}
		t.Setenv(name, "1")
	}
}
