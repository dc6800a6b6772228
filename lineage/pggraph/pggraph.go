// Package pggraph is the default lineage graph backend: node and edge tables in
// Vigia's own Postgres (pggraph_nodes, pggraph_edges), traversed by indexed frontier
// expansion — one query per hop for a whole frontier. Nothing extra to run.
package pggraph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigia-data/vigia/lineage"
)

// Graph implements lineage.Graph on Postgres.
type Graph struct{ pool *pgxpool.Pool }

// New returns the backend over a pool of the database holding Vigia's migrations.
func New(pool *pgxpool.Pool) *Graph { return &Graph{pool: pool} }

var _ lineage.Graph = (*Graph)(nil)

const edgeCols = `source_id, target_id, kind, origin, column_map, column_level, linking_column`

func scanEdges(rows pgx.Rows) ([]lineage.Edge, error) {
	defer rows.Close()
	var out []lineage.Edge
	for rows.Next() {
		var e lineage.Edge
		var kind string
		var cols []byte
		if err := rows.Scan(&e.Source, &e.Target, &kind, &e.Origin, &cols, &e.ColumnLevel, &e.LinkingColumn); err != nil {
			return nil, fmt.Errorf("pggraph: scan edge: %w", err)
		}
		e.Kind = lineage.EdgeKind(kind)
		if err := json.Unmarshal(cols, &e.Columns); err != nil {
			return nil, fmt.Errorf("pggraph: column map: %w", err)
		}
		if len(e.Columns) == 0 {
			e.Columns = nil
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pggraph: edges: %w", err)
	}
	return out, nil
}

// Neighbours returns the edges leaving (Downstream) or entering (Upstream) any of ids.
func (g *Graph) Neighbours(ctx context.Context, ws string, ids []string, dir lineage.Direction) ([]lineage.Edge, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	col := "source_id"
	switch dir {
	case lineage.Downstream:
	case lineage.Upstream:
		col = "target_id"
	default:
		return nil, fmt.Errorf("pggraph: direction %q", dir)
	}
	rows, err := g.pool.Query(ctx, `SELECT `+edgeCols+` FROM pggraph_edges WHERE workspace_id = $1 AND `+col+` = ANY($2::text[])`, ws, ids)
	if err != nil {
		return nil, fmt.Errorf("pggraph: neighbours: %w", err)
	}
	return scanEdges(rows)
}

// Apply deletes, then upserts, in one transaction.
func (g *Graph) Apply(ctx context.Context, ws string, c lineage.Change) error {
	if c.Empty() {
		return nil
	}
	return pgx.BeginFunc(ctx, g.pool, func(tx pgx.Tx) error {
		if len(c.DeleteNodes) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM pggraph_edges WHERE workspace_id = $1 AND (source_id = ANY($2) OR target_id = ANY($2))`, ws, c.DeleteNodes); err != nil {
				return fmt.Errorf("pggraph: delete node edges: %w", err)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM pggraph_nodes WHERE workspace_id = $1 AND id = ANY($2)`, ws, c.DeleteNodes); err != nil {
				return fmt.Errorf("pggraph: delete nodes: %w", err)
			}
		}
		if len(c.DeleteEdges) > 0 {
			src, dst, kind := keyArrays(c.DeleteEdges)
			if _, err := tx.Exec(ctx, `DELETE FROM pggraph_edges e USING unnest($2::text[], $3::text[], $4::text[]) AS k(s, t, kind)
				WHERE e.workspace_id = $1 AND e.source_id = k.s AND e.target_id = k.t AND e.kind = k.kind`, ws, src, dst, kind); err != nil {
				return fmt.Errorf("pggraph: delete edges: %w", err)
			}
		}
		if len(c.UpsertNodes) > 0 {
			ids, kinds, names, types := make([]string, len(c.UpsertNodes)), make([]string, len(c.UpsertNodes)), make([]string, len(c.UpsertNodes)), make([]string, len(c.UpsertNodes))
			for i, n := range c.UpsertNodes {
				ids[i], kinds[i], names[i], types[i] = n.ID, string(n.Kind), n.Name, n.Type
			}
			if _, err := tx.Exec(ctx, `INSERT INTO pggraph_nodes (workspace_id, id, kind, name, type)
				SELECT DISTINCT ON (n.id) $1, n.id, n.kind, n.name, n.type FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS n(id, kind, name, type)
				ON CONFLICT (workspace_id, id) DO UPDATE SET kind = EXCLUDED.kind, name = EXCLUDED.name, type = EXCLUDED.type`,
				ws, ids, kinds, names, types); err != nil {
				return fmt.Errorf("pggraph: upsert nodes: %w", err)
			}
		}
		if len(c.UpsertEdges) > 0 {
			n := len(c.UpsertEdges)
			src, dst, kind, origin, cols, link := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			level := make([]bool, n)
			for i, e := range c.UpsertEdges {
				cm := e.Columns
				if cm == nil {
					cm = []lineage.ColumnPair{}
				}
				b, err := json.Marshal(cm)
				if err != nil {
					return fmt.Errorf("pggraph: column map: %w", err)
				}
				src[i], dst[i], kind[i], origin[i], cols[i], link[i], level[i] = e.Source, e.Target, string(e.Kind), e.Origin, string(b), e.LinkingColumn, e.ColumnLevel
			}
			// Endpoints become nodes (a dataset or an exposure) if they are not yet.
			if _, err := tx.Exec(ctx, `INSERT INTO pggraph_nodes (workspace_id, id, kind)
				SELECT $1, x.id, CASE WHEN x.id LIKE 'exposure:%' THEN 'exposure' ELSE 'dataset' END
				FROM (SELECT unnest($2::text[]) AS id UNION SELECT unnest($3::text[])) x
				ON CONFLICT (workspace_id, id) DO NOTHING`, ws, src, dst); err != nil {
				return fmt.Errorf("pggraph: edge endpoints: %w", err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO pggraph_edges (workspace_id, `+edgeCols+`)
				SELECT DISTINCT ON (e.s, e.t, e.k) $1, e.s, e.t, e.k, e.o, e.c::jsonb, e.l, e.lc
				FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::text[]) AS e(s, t, k, o, c, l, lc)
				ON CONFLICT (workspace_id, source_id, target_id, kind) DO UPDATE SET origin = EXCLUDED.origin,
				   column_map = EXCLUDED.column_map, column_level = EXCLUDED.column_level, linking_column = EXCLUDED.linking_column`,
				ws, src, dst, kind, origin, cols, level, link); err != nil {
				return fmt.Errorf("pggraph: upsert edges: %w", err)
			}
		}
		return nil
	})
}

func keyArrays(keys []lineage.EdgeKey) (src, dst, kind []string) {
	src, dst, kind = make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		src[i], dst[i], kind[i] = k.Source, k.Target, string(k.Kind)
	}
	return src, dst, kind
}

// Export returns every node and edge of the workspace.
func (g *Graph) Export(ctx context.Context, ws string) (lineage.Export, error) {
	var ex lineage.Export
	rows, err := g.pool.Query(ctx, `SELECT id, kind, name, type FROM pggraph_nodes WHERE workspace_id = $1 ORDER BY id`, ws)
	if err != nil {
		return ex, fmt.Errorf("pggraph: export nodes: %w", err)
	}
	ex.Nodes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (lineage.Node, error) {
		var n lineage.Node
		var kind string
		err := r.Scan(&n.ID, &kind, &n.Name, &n.Type)
		n.Kind = lineage.NodeKind(kind)
		return n, err
	})
	if err != nil {
		return ex, fmt.Errorf("pggraph: export nodes: %w", err)
	}
	rows, err = g.pool.Query(ctx, `SELECT `+edgeCols+` FROM pggraph_edges WHERE workspace_id = $1 ORDER BY source_id, target_id, kind`, ws)
	if err != nil {
		return ex, fmt.Errorf("pggraph: export edges: %w", err)
	}
	ex.Edges, err = scanEdges(rows)
	return ex, err
}

// Clear removes the workspace's nodes and edges.
func (g *Graph) Clear(ctx context.Context, ws string) error {
	return pgx.BeginFunc(ctx, g.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM pggraph_edges WHERE workspace_id = $1`, ws); err != nil {
			return fmt.Errorf("pggraph: clear edges: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pggraph_nodes WHERE workspace_id = $1`, ws); err != nil {
			return fmt.Errorf("pggraph: clear nodes: %w", err)
		}
		return nil
	})
}
