package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
)

// ideResolveTargetP99 is the editor's budget for one resolve: fast enough for completion
// as one types (issue 19).
const ideResolveTargetP99 = 20 * time.Millisecond

// benchIDECommand is `vigia bench ide`: the editor-extension reads on a synthetic
// workspace, timed through the real HTTP stack by concurrent clients, against the
// dataset detail of the same run.
func benchIDECommand(stdout, stderr io.Writer) *cobra.Command {
	var datasets, iterations, clients int
	cmd := &cobra.Command{Use: "ide", Short: "Editor metadata reads (ide/resolve, ide columns) under concurrent load",
		Long: "Seeds a throw-away workspace of --datasets datasets, then --clients concurrent clients send --iterations requests\n" +
			"of each operation, interleaved: the dataset detail (the baseline), ide/resolve as SQL writes a name (bare, quoted,\n" +
			"with a connection hint) and the ide columns. Prints p50, p99 and p99 against the detail's; exits 3 when the\n" +
			"resolve p99 misses its 20 ms target.",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				met, err := benchIDE(c.Context(), a, stdout, datasets, iterations, clients)
				if err == nil && !met {
					return exitError{code: 3, msg: "the ide/resolve p99 target was missed"}
				}
				return err
			})
		}}
	cmd.Flags().IntVar(&datasets, "datasets", 10000, "datasets in the synthetic workspace (a multiple of 100)")
	cmd.Flags().IntVar(&iterations, "iterations", 1000, "timed requests per operation")
	cmd.Flags().IntVar(&clients, "clients", 4, "concurrent clients")
	return cmd
}

// benchIDE reports the figures and whether every resolve p99 met ideResolveTargetP99.
func benchIDE(ctx context.Context, a *app.App, out io.Writer, n, iterations, clients int) (bool, error) {
	if n < benchCluster || n%benchCluster != 0 {
		return false, fmt.Errorf("--datasets must be a positive multiple of %d", benchCluster)
	}
	if iterations < 1 || clients < 1 {
		return false, fmt.Errorf("--iterations and --clients must be positive")
	}
	w, err := a.Identity.CreateWorkspace(ctx, "bench-ide-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		return false, err
	}
	defer func() {
		c := context.WithoutCancel(ctx)
		_ = a.Lineage.Graph().Clear(c, w.ID)
		_, _ = a.DB.Pool().Exec(c, `DELETE FROM workspaces WHERE id = $1`, w.ID)
	}()
	start := time.Now()
	ids, _, err := bench.SeedLineage(ctx, a.DB.Pool(), w.ID, n, benchCluster, 0, 0)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "seeded %d datasets in %s\n", n, time.Since(start).Round(time.Millisecond))
	_, tok, err := a.Identity.CreateAPIToken(ctx, w.ID, "bench", "bench", nil)
	if err != nil {
		return false, err
	}
	// The benchmark measures reads, not the rate limiter.
	a.Config.RateLimitToken, a.Config.RateLimitIP = 1<<30, 1<<30
	srv := httptest.NewServer(a.Server().Handler())
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: clients * 2}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	// SeedLineage names dataset i c<i/100>.t<i%100> on the connection warehouse.
	name := func(i int) (schema, table string) {
		return fmt.Sprintf("c%04d", i/benchCluster), fmt.Sprintf("t%02d", i%benchCluster)
	}
	resolve := func(q url.Values) string { return "/api/v1/ide/resolve?" + q.Encode() }
	ops := []struct {
		name string
		path func(r *rand.Rand) string
	}{
		{"GET /datasets/{id}", func(r *rand.Rand) string { return "/api/v1/datasets/" + ids[r.IntN(n)] }},
		{"ide/resolve schema.table", func(r *rand.Rand) string {
			s, t := name(r.IntN(n))
			return resolve(url.Values{"name": {s + "." + t}})
		}},
		{`ide/resolve "schema"."table"`, func(r *rand.Rand) string {
			s, t := name(r.IntN(n))
			return resolve(url.Values{"name": {`"` + s + `"."` + t + `"`}})
		}},
		{"ide/resolve + connection hint", func(r *rand.Rand) string {
			s, t := name(r.IntN(n))
			return resolve(url.Values{"name": {s + "." + t}, "connection": {"warehouse"}})
		}},
		{"ide/datasets/{id}/columns", func(r *rand.Rand) string { return "/api/v1/ide/datasets/" + ids[r.IntN(n)] + "/columns" }},
		// The floor: an authenticated answer that reads no dataset (token check, guard,
		// JSON), what the machine's load alone costs a request.
		{"GET /connections/types (floor)", func(*rand.Rand) string { return "/api/v1/connections/types" }},
	}
	get := func(path string) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		t := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		d := time.Since(t)
		if err != nil {
			return 0, err
		}
		if res.StatusCode != http.StatusOK {
			// The path names only synthetic datasets: safe to print.
			return 0, fmt.Errorf("%s: status %d", path, res.StatusCode)
		}
		return d, nil
	}
	// Warm up the pools and caches, and check every shape answers 200.
	warm := rand.New(rand.NewPCG(1, 1))
	for _, op := range ops {
		for range 10 {
			if _, err := get(op.path(warm)); err != nil {
				return false, err
			}
		}
	}
	// clients goroutines each send their share of every operation, interleaved, so
	// that the baseline and the editor reads see the same load.
	lat := make([][]time.Duration, len(ops))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		share := iterations / clients
		if c < iterations%clients {
			share++
		}
		wg.Add(1)
		go func(seed uint64, share int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			mine := make([][]time.Duration, len(ops))
			for range share {
				for i, op := range ops {
					d, err := get(op.path(r))
					if err != nil {
						errs <- err
						return
					}
					mine[i] = append(mine[i], d)
				}
			}
			mu.Lock()
			for i := range mine {
				lat[i] = append(lat[i], mine[i]...)
			}
			mu.Unlock()
		}(uint64(c+2), share)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return false, err
	}
	fmt.Fprintf(out, "%d requests per operation from %d concurrent clients, interleaved, over %d datasets\n", iterations, clients, n)
	fmt.Fprintf(out, "%-32s %10s %10s %12s\n", "operation", "p50", "p99", "p99/detail")
	var base time.Duration
	met := true
	for i, op := range ops {
		sort.Slice(lat[i], func(x, y int) bool { return lat[i][x] < lat[i][y] })
		p50, p99 := percentile(lat[i], 0.50), percentile(lat[i], 0.99)
		if i == 0 {
			base = p99
		}
		if i > 0 && i < 4 && p99 > ideResolveTargetP99 {
			met = false
		}
		fmt.Fprintf(out, "%-32s %10s %10s %11.2fx\n", op.name, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond),
			float64(p99)/float64(base))
	}
	verdict := "met"
	if !met {
		verdict = "missed"
	}
	fmt.Fprintf(out, "target: ide/resolve p99 <= %s: %s\n", ideResolveTargetP99, verdict)
	fmt.Fprintf(out, "load average while measuring: %s\n", loadAverage())
	return met, nil
}
