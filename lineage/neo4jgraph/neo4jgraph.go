// Package neo4jgraph is the lineage graph backend on Neo4j, chosen with NEO4J_URI: the
// scale-out path. It speaks Cypher through the official driver; the process holds one
// driver (New), every session names its database, and every value travels as a query
// parameter — nothing is ever interpolated into Cypher text. Every statement is a named
// constant in cypher.go, validated by Neo4j's Cypher language library in the tests.
//
// Nodes are (:VigiaNode {workspace_id, id, kind, name, type}), unique by workspace and
// id; lineage edges are [:FEEDS {kind, origin, column_map, column_level,
// linking_column}], one per source, target and kind. The column map is stored as JSON
// text because Neo4j properties cannot hold lists of maps.
package neo4jgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/vigia-data/vigia/lineage"
)

// Config says where Neo4j is.
type Config struct {
	URI      string
	User     string
	Password string
	// Database is always set on every session; "neo4j" when empty.
	Database string
	// QueryTimeout bounds every transaction on the server (the driver's transaction
	// config, enforced by Neo4j, which terminates the query); DefaultQueryTimeout
	// when zero.
	QueryTimeout time.Duration
	// MaxNeighbourEdges caps the edges one Neighbours call may return; beyond it the
	// call fails with ErrNeighbourCap instead of loading an unbounded result.
	// DefaultMaxNeighbourEdges when zero.
	MaxNeighbourEdges int
}

// Defaults of Config. The walk that calls Neighbours is bounded by hops and node caps
// in package lineage, the same for every backend; these bound each single query.
const (
	DefaultQueryTimeout      = 30 * time.Second
	DefaultMaxNeighbourEdges = 100_000
	// ClearBatch is how many nodes one transaction of Clear deletes.
	ClearBatch = 10_000
)

// ErrNeighbourCap is returned when one expansion would return more edges than
// Config.MaxNeighbourEdges.
var ErrNeighbourCap = errors.New("neo4jgraph: one expansion exceeds the neighbour edge cap")

// Graph implements lineage.Graph on Neo4j.
type Graph struct {
	driver   neo4j.DriverWithContext
	db       string
	timeout  time.Duration
	maxEdges int
}

var _ lineage.Graph = (*Graph)(nil)

// New opens the process's one driver, checks connectivity and makes sure the
// uniqueness constraint and the lookup index exist. The returned error never contains
// the password.
func New(ctx context.Context, cfg Config) (*Graph, error) {
	if cfg.URI == "" {
		return nil, errors.New("neo4jgraph: NEO4J_URI is empty")
	}
	if cfg.Database == "" {
		cfg.Database = "neo4j"
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.MaxNeighbourEdges <= 0 {
		cfg.MaxNeighbourEdges = DefaultMaxNeighbourEdges
	}
	drv, err := neo4j.NewDriverWithContext(cfg.URI, neo4j.BasicAuth(cfg.User, cfg.Password, ""))
	if err != nil {
		return nil, errors.New("neo4jgraph: invalid NEO4J_URI")
	}
	if err := drv.VerifyConnectivity(ctx); err != nil {
		_ = drv.Close(ctx)
		return nil, errors.New("neo4jgraph: cannot reach Neo4j or authenticate")
	}
	g := &Graph{driver: drv, db: cfg.Database, timeout: cfg.QueryTimeout, maxEdges: cfg.MaxNeighbourEdges}
	for _, q := range schemaStatements {
		if _, err := neo4j.ExecuteQuery(ctx, drv, q, nil, neo4j.EagerResultTransformer, g.write()...); err != nil {
			_ = drv.Close(ctx)
			return nil, fmt.Errorf("neo4jgraph: schema: %w", err)
		}
	}
	return g, nil
}

// Close closes the driver.
func (g *Graph) Close(ctx context.Context) error { return g.driver.Close(ctx) }

func (g *Graph) session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	return g.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: g.db, AccessMode: mode})
}

// read and write are the options of every ExecuteQuery: the database, the routing and
// the per-transaction timeout.
func (g *Graph) read() []neo4j.ExecuteQueryConfigurationOption {
	return []neo4j.ExecuteQueryConfigurationOption{neo4j.ExecuteQueryWithDatabase(g.db), neo4j.ExecuteQueryWithReadersRouting(),
		neo4j.ExecuteQueryWithTransactionConfig(neo4j.WithTxTimeout(g.timeout))}
}

func (g *Graph) write() []neo4j.ExecuteQueryConfigurationOption {
	return []neo4j.ExecuteQueryConfigurationOption{neo4j.ExecuteQueryWithDatabase(g.db),
		neo4j.ExecuteQueryWithTransactionConfig(neo4j.WithTxTimeout(g.timeout))}
}

// schemaStatements are run by New, in order, before the graph is used.
var schemaStatements = []string{cypherConstraintNodeKey, cypherIndexWorkspace}

func toEdges(records []*neo4j.Record) ([]lineage.Edge, error) {
	out := make([]lineage.Edge, 0, len(records))
	for _, rec := range records {
		m := rec.AsMap()
		e := lineage.Edge{}
		e.Source, _ = m["source"].(string)
		e.Target, _ = m["target"].(string)
		kind, _ := m["kind"].(string)
		e.Kind = lineage.EdgeKind(kind)
		e.Origin, _ = m["origin"].(string)
		e.ColumnLevel, _ = m["column_level"].(bool)
		e.LinkingColumn, _ = m["linking_column"].(string)
		if cm, _ := m["column_map"].(string); cm != "" {
			if err := json.Unmarshal([]byte(cm), &e.Columns); err != nil {
				return nil, fmt.Errorf("neo4jgraph: column map: %w", err)
			}
			if len(e.Columns) == 0 {
				e.Columns = nil
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Neighbours returns the edges leaving (Downstream) or entering (Upstream) any of ids.
func (g *Graph) Neighbours(ctx context.Context, ws string, ids []string, dir lineage.Direction) ([]lineage.Edge, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	switch dir {
	case lineage.Downstream:
		return g.neighbours(ctx, cypherNeighboursDown, map[string]any{"ws": ws, "ids": ids, "limit": g.maxEdges + 1})
	case lineage.Upstream:
		return g.neighbours(ctx, cypherNeighboursUp, map[string]any{"ws": ws, "ids": ids, "limit": g.maxEdges + 1})
	default:
		return nil, fmt.Errorf("neo4jgraph: direction %q", dir)
	}
}

func (g *Graph) neighbours(ctx context.Context, q string, params map[string]any) ([]lineage.Edge, error) {
	res, err := neo4j.ExecuteQuery(ctx, g.driver, q, params, neo4j.EagerResultTransformer, g.read()...)
	if err != nil {
		return nil, fmt.Errorf("neo4jgraph: neighbours: %w", err)
	}
	if len(res.Records) > g.maxEdges {
		return nil, ErrNeighbourCap
	}
	return toEdges(res.Records)
}

// Apply applies a change in one write transaction: deletes, then upserts.
func (g *Graph) Apply(ctx context.Context, ws string, c lineage.Change) error {
	if c.Empty() {
		return nil
	}
	sess := g.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		run := func(q string, params map[string]any) error {
			r, err := tx.Run(ctx, q, params)
			if err != nil {
				return err
			}
			_, err = r.Consume(ctx)
			return err
		}
		if len(c.DeleteNodes) > 0 {
			if err := run(cypherDeleteNodes, map[string]any{"ws": ws, "ids": c.DeleteNodes}); err != nil {
				return nil, err
			}
		}
		if len(c.DeleteEdges) > 0 {
			keys := make([]map[string]any, 0, len(c.DeleteEdges))
			for _, k := range c.DeleteEdges {
				keys = append(keys, map[string]any{"source": k.Source, "target": k.Target, "kind": string(k.Kind)})
			}
			if err := run(cypherDeleteEdges, map[string]any{"ws": ws, "keys": keys}); err != nil {
				return nil, err
			}
		}
		if len(c.UpsertNodes) > 0 {
			nodes := make([]map[string]any, 0, len(c.UpsertNodes))
			for _, n := range c.UpsertNodes {
				nodes = append(nodes, map[string]any{"id": n.ID, "kind": string(n.Kind), "name": n.Name, "type": n.Type})
			}
			if err := run(cypherUpsertNodes, map[string]any{"ws": ws, "nodes": nodes}); err != nil {
				return nil, err
			}
		}
		if len(c.UpsertEdges) > 0 {
			edges := make([]map[string]any, 0, len(c.UpsertEdges))
			for _, e := range c.UpsertEdges {
				cm := e.Columns
				if cm == nil {
					cm = []lineage.ColumnPair{}
				}
				b, err := json.Marshal(cm)
				if err != nil {
					return nil, err
				}
				edges = append(edges, map[string]any{"source": e.Source, "target": e.Target, "kind": string(e.Kind),
					"source_kind": nodeKind(e.Source), "target_kind": nodeKind(e.Target), "origin": e.Origin,
					"column_map": string(b), "column_level": e.ColumnLevel, "linking_column": e.LinkingColumn})
			}
			if err := run(cypherUpsertEdges, map[string]any{"ws": ws, "edges": edges}); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, neo4j.WithTxTimeout(g.timeout))
	if err != nil {
		return fmt.Errorf("neo4jgraph: apply: %w", err)
	}
	return nil
}

func nodeKind(id string) string {
	if lineage.IsExposure(id) {
		return string(lineage.NodeExposure)
	}
	return string(lineage.NodeDataset)
}

// Export returns every node and edge of the workspace.
func (g *Graph) Export(ctx context.Context, ws string) (lineage.Export, error) {
	var ex lineage.Export
	res, err := neo4j.ExecuteQuery(ctx, g.driver, cypherExportNodes, map[string]any{"ws": ws}, neo4j.EagerResultTransformer, g.read()...)
	if err != nil {
		return ex, fmt.Errorf("neo4jgraph: export nodes: %w", err)
	}
	for _, rec := range res.Records {
		m := rec.AsMap()
		n := lineage.Node{}
		n.ID, _ = m["id"].(string)
		kind, _ := m["kind"].(string)
		n.Kind = lineage.NodeKind(kind)
		n.Name, _ = m["name"].(string)
		n.Type, _ = m["type"].(string)
		ex.Nodes = append(ex.Nodes, n)
	}
	res, err = neo4j.ExecuteQuery(ctx, g.driver, cypherExportEdges, map[string]any{"ws": ws}, neo4j.EagerResultTransformer, g.read()...)
	if err != nil {
		return ex, fmt.Errorf("neo4jgraph: export edges: %w", err)
	}
	ex.Edges, err = toEdges(res.Records)
	return ex, err
}

// Clear removes the workspace's nodes and edges, ClearBatch nodes a transaction, so a
// large workspace is never deleted in one transaction that could outgrow the server's
// memory or the query timeout.
func (g *Graph) Clear(ctx context.Context, ws string) error {
	for {
		res, err := neo4j.ExecuteQuery(ctx, g.driver, cypherClearBatch, map[string]any{"ws": ws, "batch": ClearBatch},
			neo4j.EagerResultTransformer, g.write()...)
		if err != nil {
			return fmt.Errorf("neo4jgraph: clear: %w", err)
		}
		if clearedAll(res.Records) {
			return nil
		}
	}
}

// clearedAll reads cypherClearBatch's count: fewer than a full batch means nothing is
// left.
func clearedAll(records []*neo4j.Record) bool {
	if len(records) != 1 {
		return true
	}
	n, _ := records[0].AsMap()["deleted"].(int64)
	return n < ClearBatch
}
