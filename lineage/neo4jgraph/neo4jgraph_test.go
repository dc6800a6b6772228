package neo4jgraph_test

import (
	"context"
	"os"
	"testing"

	"github.com/vigia-data/vigia/lineage/lineagetest"
	"github.com/vigia-data/vigia/lineage/neo4jgraph"
)

// The contract suite runs on Neo4j wherever NEO4J_URI points at one (NEO4J_USER,
// NEO4J_PASSWORD, NEO4J_DATABASE optional).
func TestNeo4jgraphPassesTheBackendContract(t *testing.T) {
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		t.Skip("NEO4J_URI is not set: no Neo4j server to run the backend contract suite on")
	}
	user := os.Getenv("NEO4J_USER")
	if user == "" {
		user = "neo4j"
	}
	ctx := context.Background()
	g, err := neo4jgraph.New(ctx, neo4jgraph.Config{URI: uri, User: user, Password: os.Getenv("NEO4J_PASSWORD"), Database: os.Getenv("NEO4J_DATABASE")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close(ctx) })
	lineagetest.Run(t, g)
}

func TestNewRefusesAnEmptyURIWithoutDialling(t *testing.T) {
	if _, err := neo4jgraph.New(context.Background(), neo4jgraph.Config{}); err == nil {
		t.Fatal("empty URI accepted")
	}
}

func TestNewNeverEchoesThePassword(t *testing.T) {
	const marker = "NEOPASSMARK551"
	ctx, cancel := context.WithTimeout(context.Background(), 5e9)
	defer cancel()
	_, err := neo4jgraph.New(ctx, neo4jgraph.Config{URI: "bolt://127.0.0.1:1", User: "neo4j", Password: marker})
	if err == nil {
		t.Fatal("connected to nothing")
	}
	if contains(err.Error(), marker) {
		t.Fatal("password in error")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
