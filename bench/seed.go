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
	return SeedLineageProgress(ctx, pool, ws, n, cluster, hubs, hubFan, nil)
}

// SeedLineageProgress is SeedLineage reporting each table it has copied to progress
// (when set). The rows are generated while they are copied, so a million datasets
// and their 3 million columns and 2.5 million edges are never held in memory at once.
func SeedLineageProgress(ctx context.Context, pool *pgxpool.Pool, ws string, n, cluster, hubs, hubFan int, progress func(string)) ([]string, int, error) {
	report := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	conn := vigia.NewID()
	if _, err := pool.Exec(ctx, `INSERT INTO connections (id, workspace_id, name, kind, dsn_encrypted) VALUES ($1, $2, 'warehouse', 'postgres', '\x00')`,
		conn, ws); err != nil {
		return nil, 0, err
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = vigia.NewID()
	}
	i := -1
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"datasets"}, []string{"id", "workspace_id", "connection_id", "schema_name", "table_name", "kind", "latest_score"},
		pgx.CopyFromFunc(func() ([]any, error) {
			i++
			if i >= n {
				return nil, nil
			}
			return []any{ids[i], ws, conn, fmt.Sprintf("c%04d", i/cluster), fmt.Sprintf("t%02d", i%cluster), "view", 90.0}, nil
		})); err != nil {
		return nil, 0, err
	}
	report("copied %d datasets", n)
	names := []string{"id", "amount", "label"}
	k := -1
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"dataset_columns"}, []string{"dataset_id", "name", "position", "data_type", "class", "nullable", "primary_key"},
		pgx.CopyFromFunc(func() ([]any, error) {
			k++
			if k >= 3*n {
				return nil, nil
			}
			c := names[k%3]
			return []any{ids[k/3], c, k%3 + 1, "text", "other", true, c == "id"}, nil
		})); err != nil {
		return nil, 0, err
	}
	report("copied %d columns", 3*n)
	r := rand.New(rand.NewPCG(1, 2))
	colMap := `[{"from":"id","to":"id","direct":true},{"from":"amount","to":"amount","direct":false},{"from":"label","to":"label","direct":true}]`
	// The edges, generated in order: every pipeline's (dataset j fed by j-1, by j-10
	// and most of the time by one more in between), then the hubs: the first dataset
	// of each of the first hubs clusters also feeds the second dataset of hubFan
	// other clusters, so a focus graph there hits the 400-node cap.
	clusters := n / cluster
	var pending [][2]int
	c, j, h, hk := 0, 0, 0, 0
	withHubs := clusters >= hubs+hubFan
	next := func() ([2]int, bool) {
		for len(pending) == 0 {
			if c < n {
				j++
				if j >= cluster {
					c, j = c+cluster, 0
					continue
				}
				pending = append(pending, [2]int{c + j - 1, c + j})
				if j >= 10 {
					pending = append(pending, [2]int{c + j - 10, c + j})
				}
				if j >= 3 && r.IntN(10) < 7 {
					if f := j - 2 - r.IntN(min(j-2, 8)); f != j-1 && f != j-10 {
						pending = append(pending, [2]int{c + f, c + j})
					}
				}
				continue
			}
			if !withHubs || h >= hubs {
				return [2]int{}, false
			}
			tc := hubs + (h*97+hk)%(clusters-hubs)
			pending = append(pending, [2]int{h * cluster, tc*cluster + 1})
			if hk++; hk >= hubFan {
				h, hk = h+1, 0
			}
		}
		e := pending[0]
		pending = pending[1:]
		return e, true
	}
	edges := 0
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"lineage_edges"}, []string{"workspace_id", "source_id", "target_id", "kind", "origin",
		"column_map", "column_level", "linking_column", "notes"}, pgx.CopyFromFunc(func() ([]any, error) {
		e, ok := next()
		if !ok {
			return nil, nil
		}
		edges++
		if edges%500000 == 0 {
			report("copying edges: %d", edges)
		}
		return []any{ws, ids[e[0]], ids[e[1]], "parsed", "bench", colMap, true, "", []string{}}, nil
	})); err != nil {
		return nil, 0, err
	}
	report("copied %d edges", edges)
	return ids, edges, nil
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
