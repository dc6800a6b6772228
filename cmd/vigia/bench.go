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

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/lineage"
)

// benchCommand is `vigia bench lineage`: a synthetic workspace of many datasets and
// edges, timed through the real HTTP stack against the dataset detail of the same run.
func benchCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Benchmarks on the configured database"}
	var datasets, iterations int
	var keep bool
	lin := &cobra.Command{Use: "lineage", Short: "Lineage reads on a synthetic workspace (100,000 datasets, ~250,000 edges)",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				return benchLineage(c.Context(), a, stdout, datasets, iterations, keep)
			})
		}}
	lin.Flags().IntVar(&datasets, "datasets", 100000, "datasets in the synthetic workspace (a multiple of 100)")
	lin.Flags().IntVar(&iterations, "iterations", 300, "timed requests per operation")
	lin.Flags().BoolVar(&keep, "keep", false, "keep the synthetic workspace afterwards")
	cmd.AddCommand(lin, profileBenchCommand(stdout, stderr), benchWebhooksCommand(stdout, stderr), benchRebuildCommand(stdout, stderr),
		benchDiffCommand(stdout, stderr))
	cmd.AddCommand(benchSyntheticCommand(stdout, stderr), benchIDECommand(stdout, stderr), benchAPICommand(stdout, stderr),
		benchSoakCommand(stdout, stderr))
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

func benchLineage(ctx context.Context, a *app.App, out io.Writer, n, iterations int, keep bool) error {
	if n < benchCluster || n%benchCluster != 0 {
		return fmt.Errorf("--datasets must be a positive multiple of %d", benchCluster)
	}
	start := time.Now()
	w, err := a.Identity.CreateWorkspace(ctx, "bench-lineage-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		return err
	}
	if !keep {
		defer func() {
			c := context.WithoutCancel(ctx)
			_ = a.Lineage.Graph().Clear(c, w.ID)
			_, _ = a.DB.Pool().Exec(c, `DELETE FROM workspaces WHERE id = $1`, w.ID)
		}()
	}
	ids, edges, err := bench.SeedLineage(ctx, a.DB.Pool(), w.ID, n, benchCluster, benchHubs, benchHubFan)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "seeded %d datasets and %d edges in %s\n", n, edges, time.Since(start).Round(time.Millisecond))
	t0 := time.Now()
	if err := a.Lineage.RebuildWorkspace(ctx, w.ID, lineage.RebuildOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(out, "projected into the graph backend (with reach counts) in %s\n", time.Since(t0).Round(time.Millisecond))
	_, tok, err := a.Identity.CreateAPIToken(ctx, w.ID, "bench", "bench", nil)
	if err != nil {
		return err
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
				return err
			}
		}
	}
	if _, b, err := get(ops[3].path()); err != nil {
		return err
	} else if !pathFound(b) {
		return fmt.Errorf("the synthetic 6-hop path was not found")
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
				return err
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
	fmt.Fprintln(out, "targets: traverse and impact p99 <= 5x detail p99; path and focus graph p99 <= 20x")
	fmt.Fprintf(out, "load average while measuring: %s\n", loadAverage())
	return nil
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
