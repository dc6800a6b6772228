package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/lineage"
)

// benchCommand is `vigia bench lineage`: a synthetic workspace of many datasets and
// edges, timed through the real HTTP stack against the dataset detail of the same run.
func benchCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Benchmarks on the configured database"}
	var datasets, iterations int
	var database string
	var fresh bool
	lin := &cobra.Command{Use: "lineage", Short: "Lineage reads at scale (S7): traverse, impact, path and focus against the detail p99",
		Long: "Builds (once, then keeps) a synthetic workspace of --datasets datasets in pipelines of 100 (~2.5 edges a dataset)\n" +
			"in the database --database next to DATABASE_URL, projects it into the graph backend, then times the real HTTP\n" +
			"stack, one request at a time and interleaved, against GET /datasets/{id} of the same run. Targets (S7): traverse\n" +
			"and impact p99 <= 5x the detail p99, path and focus <= 20x. Exit status 3 when a target is missed.",
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			if database != "" {
				if cfg.DatabaseURL, err = bench.DatabaseURL(cfg.DatabaseURL, database); err != nil {
					return err
				}
			}
			a, err := openCLIApp(c.Context(), cfg, stderr)
			if err != nil {
				return err
			}
			defer a.DB.Close()
			defer func() { _ = a.Close(context.WithoutCancel(c.Context())) }()
			ok, err := benchLineage(c.Context(), a, stdout, datasets, iterations, fresh)
			if err != nil {
				return err
			}
			if !ok {
				return exitError{code: 3, msg: "a lineage read target was missed"}
			}
			return nil
		}}
	lin.Flags().IntVar(&datasets, "datasets", 100000, "datasets in the synthetic workspace (a multiple of 100)")
	lin.Flags().IntVar(&iterations, "iterations", 300, "timed requests per operation")
	lin.Flags().StringVar(&database, "database", "vigia_bench_lineage", "database (next to DATABASE_URL) that keeps the synthetic workspaces between runs; empty: DATABASE_URL's own")
	lin.Flags().BoolVar(&fresh, "fresh", false, "build the synthetic workspace again even when a complete one is kept")
	cmd.AddCommand(lin, profileBenchCommand(stdout, stderr), benchWebhooksCommand(stdout, stderr), benchRebuildCommand(stdout, stderr),
		benchDiffCommand(stdout, stderr))
	cmd.AddCommand(benchSyntheticCommand(stdout, stderr), benchIDECommand(stdout, stderr), benchAPICommand(stdout, stderr),
		benchScanCommand(stdout, stderr), benchSoakCommand(stdout, stderr))
	return cmd
}

// benchCluster is the size of one pipeline of the synthetic warehouse: datasets
// 0..99 of a cluster, where dataset j is fed by j-1, by j-10 and most of the time by one
// more in between, so dataset 60 is exactly 6 hops from dataset 0.
const benchCluster = 100

// benchHubs datasets each feed benchHubFan clusters (when there are enough clusters).
const (
	benchHubs   = 10
	benchHubFan = 450
)

// ensureLineageWorkspace returns the kept synthetic workspace of n datasets, building
// it (seed, then projection with reach counts) when there is none, when it is
// incomplete or when fresh asks for it. It is named only once complete, so an
// interrupted build is built again. ids are the datasets in pipeline order.
func ensureLineageWorkspace(ctx context.Context, a *app.App, out io.Writer, n int, fresh bool) (string, []string, error) {
	pool := a.DB.Pool()
	name := fmt.Sprintf("bench-lineage-%d", n)
	var ws string
	err := pool.QueryRow(ctx, `SELECT id::text FROM workspaces WHERE name = $1`, name).Scan(&ws)
	if err == nil && !fresh {
		var live, reach int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM datasets WHERE workspace_id = $1 AND dropped_at IS NULL`, ws).Scan(&live); err != nil {
			return "", nil, err
		}
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM dataset_reach WHERE workspace_id = $1`, ws).Scan(&reach); err != nil {
			return "", nil, err
		}
		if live != n || reach == 0 {
			fmt.Fprintf(out, "workspace %s is incomplete: building it again\n", name)
			fresh = true
		}
	}
	if err == nil && fresh {
		fmt.Fprintf(out, "dropping the kept workspace %s\n", name)
		_ = a.Lineage.Graph().Clear(ctx, ws)
		if _, err := pool.Exec(ctx, `DELETE FROM workspaces WHERE id = $1`, ws); err != nil {
			return "", nil, err
		}
	}
	resume := ""
	if err != nil && !fresh {
		// A run stopped while projecting left a fully seeded workspace (each table is one
		// COPY): the projection resumes where it stopped rather than seeding again.
		var live, cols, edges int
		if e := pool.QueryRow(ctx, `SELECT w.id::text,
			(SELECT count(*) FROM datasets d WHERE d.workspace_id = w.id),
			(SELECT count(*) FROM dataset_columns c JOIN datasets d ON d.id = c.dataset_id WHERE d.workspace_id = w.id),
			(SELECT count(*) FROM lineage_edges e WHERE e.workspace_id = w.id)
			FROM workspaces w WHERE w.name = $1 LIMIT 1`, name+"-building").Scan(&resume, &live, &cols, &edges); e != nil || live != n || cols != 3*n || edges == 0 {
			resume = ""
		}
	}
	if resume != "" {
		ws = resume
		fmt.Fprintf(out, "resuming the projection of the seeded workspace %s\n", name)
		if err := projectLineageWorkspace(ctx, a, out, ws, name); err != nil {
			return "", nil, err
		}
	} else if err != nil || fresh {
		// Half-built workspaces of an interrupted run are of no use. (Deleting one of a
		// million datasets takes long: dropping the database vigia_bench_lineage is faster.)
		rows, err := pool.Query(ctx, `SELECT id::text FROM workspaces WHERE name = $1`, name+"-building")
		if err != nil {
			return "", nil, err
		}
		var stale []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return "", nil, err
			}
			stale = append(stale, id)
		}
		rows.Close()
		for _, id := range stale {
			_ = a.Lineage.Graph().Clear(ctx, id)
			if _, err := pool.Exec(ctx, `DELETE FROM workspaces WHERE id = $1`, id); err != nil {
				return "", nil, err
			}
		}
		start := time.Now()
		w, err := a.Identity.CreateWorkspace(ctx, name+"-building", "PT")
		if err != nil {
			return "", nil, err
		}
		ws = w.ID
		fmt.Fprintf(out, "building workspace %s (kept for the next runs; --fresh builds it again)\n", name)
		_, edges, err := bench.SeedLineageProgress(ctx, pool, ws, n, benchCluster, benchHubs, benchHubFan, func(msg string) {
			fmt.Fprintf(out, "  %s (%s)\n", msg, time.Since(start).Round(time.Second))
		})
		if err != nil {
			return "", nil, err
		}
		fmt.Fprintf(out, "seeded %d datasets and %d edges in %s\n", n, edges, time.Since(start).Round(time.Millisecond))
		// Statistics of the freshly copied record, as autovacuum would gather them: without
		// them the rebuild's key-ordered reads are planned for a few thousand rows.
		if _, err := pool.Exec(ctx, `ANALYZE datasets, dataset_columns, lineage_edges`); err != nil {
			return "", nil, err
		}
		if err := projectLineageWorkspace(ctx, a, out, ws, name); err != nil {
			return "", nil, err
		}
	} else {
		fmt.Fprintf(out, "using the kept workspace %s\n", name)
	}
	rows, err := pool.Query(ctx, `SELECT id::text FROM datasets WHERE workspace_id = $1 ORDER BY schema_name, table_name`, ws)
	if err != nil {
		return "", nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return "", nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	if len(ids) != n {
		return "", nil, fmt.Errorf("workspace %s holds %d datasets, not %d", name, len(ids), n)
	}
	return ws, ids, nil
}

// projectLineageWorkspace projects (or resumes projecting) a seeded workspace, names
// it complete and refreshes the statistics.
func projectLineageWorkspace(ctx context.Context, a *app.App, out io.Writer, ws, name string) error {
	pool := a.DB.Pool()
	t0 := time.Now()
	last := time.Now()
	if err := a.Lineage.RebuildWorkspace(ctx, ws, lineage.RebuildOptions{Progress: func(st lineage.RebuildState, rc lineage.RecordCounts) {
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			fmt.Fprintf(out, "  projecting: %s, %d of %d nodes, %d of %d edges (%s)\n", st.Phase, st.NodesWritten, rc.Datasets+rc.Exposures,
				st.EdgesWritten, rc.Edges, time.Since(t0).Round(time.Second))
		}
	}}); err != nil {
		return err
	}
	fmt.Fprintf(out, "projected into the graph backend (with reach counts) in %s\n", time.Since(t0).Round(time.Millisecond))
	if _, err := pool.Exec(ctx, `UPDATE workspaces SET name = $2 WHERE id = $1`, ws, name); err != nil {
		return err
	}
	t1 := time.Now()
	if _, err := pool.Exec(ctx, `VACUUM (ANALYZE)`); err != nil {
		return err
	}
	fmt.Fprintf(out, "vacuumed and analyzed in %s\n", time.Since(t1).Round(time.Millisecond))
	return nil
}

func benchLineage(ctx context.Context, a *app.App, out io.Writer, n, iterations int, fresh bool) (bool, error) {
	if n < benchCluster || n%benchCluster != 0 {
		return false, fmt.Errorf("--datasets must be a positive multiple of %d", benchCluster)
	}
	wsID, ids, err := ensureLineageWorkspace(ctx, a, out, n, fresh)
	if err != nil {
		return false, err
	}
	w := struct{ ID string }{wsID}
	_, tok, err := a.Identity.CreateAPIToken(ctx, w.ID, "bench", "bench", nil)
	if err != nil {
		return false, err
	}
	// The benchmark measures reads, not the rate limiter.
	a.Config.RateLimitToken, a.Config.RateLimitIP = 1<<30, 1<<30
	srv := httptest.NewServer(a.Server().Handler())
	defer srv.Close()
	r := rand.New(rand.NewPCG(42, 7))
	clusters := n / benchCluster
	pick := func(offset int) string { return ids[r.IntN(clusters)*benchCluster+offset] }
	ops := []struct {
		name string
		path func() string
	}{
		{"GET /datasets/{id}", func() string { return "/api/v1/datasets/" + pick(r.IntN(benchCluster)) }},
		{"traverse hops=3", func() string {
			return "/api/v1/datasets/" + pick(20+r.IntN(60)) + "/lineage/traverse?hops=3"
		}},
		{"impact column=amount", func() string {
			return "/api/v1/datasets/" + pick(20+r.IntN(60)) + "/lineage/impact?column=amount"
		}},
		{"path 6 hops", func() string {
			c := r.IntN(clusters) * benchCluster
			return "/api/v1/datasets/" + ids[c] + "/lineage/path?target_id=" + ids[c+60]
		}},
		{"knowledge graph focus hops=3", func() string {
			return "/api/v1/knowledge/graph?hops=3&focus=dataset:" + pick(30+r.IntN(40))
		}},
	}
	if clusters >= benchHubs+benchHubFan {
		ops = append(ops, struct {
			name string
			path func() string
		}{"knowledge graph focus, 400 cap", func() string {
			return "/api/v1/knowledge/graph?hops=2&focus=dataset:" + ids[r.IntN(benchHubs)*benchCluster]
		}})
	}
	client := srv.Client()
	get := func(path string) (time.Duration, []byte, error) {
		d, b, err := apiGet(ctx, client, srv.URL+path, tok, -1)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %w", path, err)
		}
		return d, b, nil
	}
	// Warm up the pools and caches, and check the shapes once.
	for _, op := range ops {
		for range 10 {
			if _, _, err := get(op.path()); err != nil {
				return false, err
			}
		}
	}
	if _, b, err := get(ops[3].path()); err != nil {
		return false, err
	} else if !pathFound(b) {
		return false, fmt.Errorf("the synthetic 6-hop path was not found")
	}
	type result struct {
		name     string
		p50, p99 time.Duration
		size     float64
	}
	var results []result
	// Interleave the operations so that the detail and the lineage reads see the same
	// machine load.
	lat := make([][]time.Duration, len(ops))
	sizes := make([]int, len(ops))
	for range iterations {
		for i, op := range ops {
			d, b, err := get(op.path())
			if err != nil {
				return false, err
			}
			lat[i] = append(lat[i], d)
			sizes[i] += countNodes(b)
		}
	}
	for i, op := range ops {
		sort.Slice(lat[i], func(x, y int) bool { return lat[i][x] < lat[i][y] })
		results = append(results, result{op.name, percentile(lat[i], 0.50), percentile(lat[i], 0.99), float64(sizes[i]) / float64(iterations)})
	}
	base := results[0].p99
	fmt.Fprintf(out, "%d requests per operation, interleaved; pggraph backend\n", iterations)
	fmt.Fprintf(out, "%-30s %10s %10s %12s %10s\n", "operation", "p50", "p99", "p99/detail", "avg nodes")
	for _, res := range results {
		fmt.Fprintf(out, "%-30s %10s %10s %11.2fx %10.1f\n", res.name, res.p50.Round(10*time.Microsecond), res.p99.Round(10*time.Microsecond),
			float64(res.p99)/float64(base), res.size)
	}
	// S7: traverse and impact within 5x the detail p99, path and the focus graphs within 20x.
	pass := true
	fmt.Fprintf(out, "S7 targets at %d datasets and %d edges on the pggraph backend:\n", n, edgeCount(ctx, a, w.ID))
	for _, res := range results[1:] {
		limit := 20.0
		if strings.HasPrefix(res.name, "traverse") || strings.HasPrefix(res.name, "impact") {
			limit = 5
		}
		ratio := float64(res.p99) / float64(base)
		ok := ratio <= limit
		pass = pass && ok
		fmt.Fprintf(out, "  %-30s p99 %.2fx detail p99   [<= %gx]  %s\n", res.name, ratio, limit, verdict(ok))
	}
	fmt.Fprintf(out, "load average while measuring: %s\n", loadAverage())
	return pass, nil
}

// edgeCount is the workspace's number of lineage edges, for the report.
func edgeCount(ctx context.Context, a *app.App, ws string) int {
	var n int
	_ = a.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM lineage_edges WHERE workspace_id = $1`, ws).Scan(&n)
	return n
}

// loadAverage reads /proc/loadavg where there is one: the figures above depend on it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func pathFound(b []byte) bool {
	var p struct {
		Found bool `json:"found"`
		Hops  int  `json:"hops"`
	}
	return json.Unmarshal(b, &p) == nil && p.Found && p.Hops == 6
}

// countNodes reads how many nodes (or datasets) an answer holds, for the report.
func countNodes(b []byte) int {
	var v struct {
		Nodes    []json.RawMessage `json:"nodes"`
		Datasets []json.RawMessage `json:"datasets"`
	}
	if json.Unmarshal(b, &v) != nil {
		return 0
	}
	return len(v.Nodes) + len(v.Datasets)
}
