package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigia-data/vigia"
)

// SeedLineage writes the synthetic warehouse of `vigia bench lineage` straight into the
// record with COPY: one connection of workspace ws, n datasets with three columns in
// pipelines of cluster datasets (the first hubs of them each feeding hubFan other
// clusters), and the edges with their column maps. It returns the dataset ids and the
// number of edges.
func SeedLineage(ctx context.Context, pool *pgxpool.Pool, ws string, n, cluster, hubs, hubFan int) ([]string, int, error) {
	conn := vigia.NewID()
	if _, err := pool.Exec(ctx, `INSERT INTO connections (id, workspace_id, name, kind, dsn_encrypted) VALUES ($1, $2, 'warehouse', 'postgres', '\x00')`,
		conn, ws); err != nil {
		return nil, 0, err
	}
	ids := make([]string, n)
	rows := make([][]any, n)
	cols := make([][]any, 0, 3*n)
	for i := range ids {
		ids[i] = vigia.NewID()
		rows[i] = []any{ids[i], ws, conn, fmt.Sprintf("c%04d", i/cluster), fmt.Sprintf("t%02d", i%cluster), "view", 90.0}
		for p, c := range []string{"id", "amount", "label"} {
			cols = append(cols, []any{ids[i], c, p + 1, "text", "other", true, c == "id"})
		}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"datasets"}, []string{"id", "workspace_id", "connection_id", "schema_name", "table_name", "kind", "latest_score"},
		pgx.CopyFromRows(rows)); err != nil {
		return nil, 0, err
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"dataset_columns"}, []string{"dataset_id", "name", "position", "data_type", "class", "nullable", "primary_key"},
		pgx.CopyFromRows(cols)); err != nil {
		return nil, 0, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	colMap := `[{"from":"id","to":"id","direct":true},{"from":"amount","to":"amount","direct":false},{"from":"label","to":"label","direct":true}]`
	var edges [][]any
	for c := 0; c < n; c += cluster {
		for j := 1; j < cluster; j++ {
			from := map[int]bool{j - 1: true}
			if j >= 10 {
				from[j-10] = true
			}
			if j >= 3 && r.IntN(10) < 7 {
				from[j-2-r.IntN(min(j-2, 8))] = true
			}
			for f := range from {
				edges = append(edges, []any{ws, ids[c+f], ids[c+j], "parsed", "bench", colMap, true, "", []string{}})
			}
		}
	}
	// Hubs: the first dataset of each of the first hubs clusters also feeds the
	// second dataset of hubFan other clusters, so a focus graph there hits the
	// 400-node cap.
	if n/cluster >= hubs+hubFan {
		clusters := n / cluster
		for h := range hubs {
			for k := range hubFan {
				tc := hubs + (h*97+k)%(clusters-hubs)
				edges = append(edges, []any{ws, ids[h*cluster], ids[tc*cluster+1], "parsed", "bench", colMap, true, "", []string{}})
			}
		}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"lineage_edges"}, []string{"workspace_id", "source_id", "target_id", "kind", "origin",
		"column_map", "column_level", "linking_column", "notes"}, pgx.CopyFromRows(edges)); err != nil {
		return nil, 0, err
	}
	return ids, len(edges), nil
}

// ThrowAwayDatabase names a fresh database next to the configured one and returns a
// function that drops it.
func ThrowAwayDatabase(databaseURL string) (string, func(), error) {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Path == "" {
		return "", nil, errors.New("DATABASE_URL is not a valid Postgres URL")
	}
	name := "vigia_bench_" + strings.ReplaceAll(vigia.NewUUID()[:8], "-", "")
	u.Path = "/" + name
	bench := u.String()
	u.Path = "/postgres"
	admin := u.String()
	return bench, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	}, nil
}
