package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/store"
)

// apiBenchOpts are the knobs of `vigia bench api`.
type apiBenchOpts struct {
	Datasets    int
	Compare     int
	Iterations  int
	Connections int
	Duration    time.Duration
	Rounds      int
	CPUProfile  string
	Only        string
}

func benchAPICommand(stdout, stderr io.Writer) *cobra.Command {
	var o apiBenchOpts
	cmd := &cobra.Command{Use: "api", Short: "Catalog reads at scale (S1-S4): lists, search, detail p99 and throughput against plain pgx reads",
		Long: "Builds (once, then keeps) the database vigia_bench_api next to DATABASE_URL with a workspace of --datasets datasets and\n" +
			"one of --compare datasets, then measures through the real HTTP stack with an API token, one request at a time and\n" +
			"interleaved: the dataset list (first page and offset 10,000; sort name, usage, impact), q= search, /datasets/find and\n" +
			"the detail, against the detail p99 of the same run; then detail throughput at --connections connections against a\n" +
			"plain pgx primary-key read, and GraphQL for the same fields against REST. Exit status 3 when a target is missed.",
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			if o.Datasets < 100 || o.Datasets%100 != 0 {
				return errors.New("--datasets must be a positive multiple of 100")
			}
			if o.Compare == 0 {
				o.Compare = o.Datasets / 100
				if o.Datasets <= 1000 {
					o.Compare = o.Datasets * 100
				}
				o.Compare = max(o.Compare, 100)
			}
			if o.Only != "" && o.Only != "s4" {
				return errors.New("--only takes s4")
			}
			if o.Compare%100 != 0 {
				return errors.New("--compare must be a positive multiple of 100")
			}
			ok, err := runAPIBench(c.Context(), cfg.DatabaseURL, o, stdout)
			if err != nil {
				return err
			}
			if !ok {
				return exitError{code: 3, msg: "an API read target was missed"}
			}
			return nil
		}}
	f := cmd.Flags()
	f.IntVar(&o.Datasets, "datasets", 100000, "datasets of the measured workspace (a multiple of 100)")
	f.IntVar(&o.Compare, "compare", 0, "datasets of the workspace S3 compares with (default datasets/100, or datasets×100 at 1,000 and below)")
	f.IntVar(&o.Iterations, "iterations", 300, "timed requests per operation, interleaved")
	f.IntVar(&o.Connections, "connections", 16, "throughput: concurrent connections")
	f.DurationVar(&o.Duration, "duration", 4*time.Second, "throughput: length of each measured phase")
	f.IntVar(&o.Rounds, "rounds", 3, "throughput: rounds of each kind (pgx, REST, GraphQL), interleaved")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the last round's REST detail phase to this file (GraphQL's to FILE.graphql)")
	f.StringVar(&o.Only, "only", "", "s4: measure only the detail throughput (S4), not the latencies of S1-S3")
	return cmd
}

// apiWorkspace is one synthetic catalog of the bench database.
type apiWorkspace struct {
	id, token string
	n         int
	ids       []string // visible dataset ids
}

func ensureAPIWorkspace(ctx context.Context, a *app.App, out io.Writer, n int) (apiWorkspace, error) {
	pool := a.DB.Pool()
	name := "bench-api-" + strconv.Itoa(n)
	w := apiWorkspace{n: n}
	err := pool.QueryRow(ctx, `SELECT id::text FROM workspaces WHERE name = $1`, name).Scan(&w.id)
	if err == nil {
		var live int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM datasets WHERE workspace_id = $1 AND dropped_at IS NULL`, w.id).Scan(&live); err != nil {
			return w, err
		}
		var reach int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM dataset_reach WHERE workspace_id = $1`, w.id).Scan(&reach); err != nil {
			return w, err
		}
		if live != n || reach == 0 {
			fmt.Fprintf(out, "workspace %s is incomplete: building it again\n", name)
			_ = a.Lineage.Graph().Clear(ctx, w.id)
			if _, err := pool.Exec(ctx, `DELETE FROM workspaces WHERE id = $1`, w.id); err != nil {
				return w, err
			}
			err = errNoWorkspace
		}
	}
	if err != nil {
		start := time.Now()
		ws, err := a.Identity.CreateWorkspace(ctx, name+"-building", "PT")
		if err != nil {
			return w, err
		}
		w.id = ws.ID
		if _, _, err := bench.SeedCatalog(ctx, pool, w.id, n); err != nil {
			return w, err
		}
		fmt.Fprintf(out, "seeded %d datasets in %s\n", n, time.Since(start).Round(time.Millisecond))
		t0 := time.Now()
		if err := a.Lineage.RebuildWorkspace(ctx, w.id, lineage.RebuildOptions{}); err != nil {
			return w, err
		}
		fmt.Fprintf(out, "projected lineage (reach counts) in %s\n", time.Since(t0).Round(time.Millisecond))
		// Named only once complete, so an interrupted build is built again.
		if _, err := pool.Exec(ctx, `UPDATE workspaces SET name = $2 WHERE id = $1`, w.id, name); err != nil {
			return w, err
		}
		if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
			return w, err
		}
	}
	rows, err := pool.Query(ctx, `SELECT d.id::text FROM datasets d WHERE d.workspace_id = $1 AND d.dropped_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM domain_datasets dd WHERE dd.dataset_id = d.id) ORDER BY d.id`, w.id)
	if err != nil {
		return w, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return w, err
		}
		w.ids = append(w.ids, id)
	}
	if err := rows.Err(); err != nil {
		return w, err
	}
	_, w.token, err = a.Identity.CreateAPIToken(ctx, w.id, "bench", "bench", nil)
	return w, err
}

var errNoWorkspace = errors.New("no workspace")

func runAPIBench(ctx context.Context, databaseURL string, o apiBenchOpts, out io.Writer) (bool, error) {
	benchURL, err := bench.APIDatabaseURL(databaseURL)
	if err != nil {
		return false, err
	}
	// The service's statements and batches: round trips per request.
	trips := &bench.RoundTrips{}
	db, err := store.OpenTraced(ctx, benchURL, trips)
	if err != nil {
		return false, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return false, err
	}
	a, err := app.New(app.Config{SecretKey: "vigia-bench", RateLimitToken: 1 << 30, RateLimitIP: 1 << 30}, db, slog.New(slog.DiscardHandler))
	if err != nil {
		return false, err
	}
	defer func() { _ = a.Close(context.WithoutCancel(ctx)) }()
	big, err := ensureAPIWorkspace(ctx, a, out, o.Datasets)
	if err != nil {
		return false, err
	}
	small, err := ensureAPIWorkspace(ctx, a, out, o.Compare)
	if err != nil {
		return false, err
	}
	// The steady state autovacuum keeps: statistics and the visibility map (index-only
	// scans) of the catalog, whatever the seeding or the migrations just rewrote.
	if _, err := db.Pool().Exec(ctx, `VACUUM (ANALYZE) datasets, dataset_columns, domain_datasets, dataset_count_deltas`); err != nil {
		return false, err
	}
	cctx, stopCache := context.WithCancel(ctx)
	defer stopCache()
	go a.RunTokenCache(cctx)
	srv := httptest.NewServer(a.Server().Handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}

	// The baselines' own pool, as an application reading its primary keys would have.
	plain, err := bench.OpenPlainReads(ctx, benchURL, o.Connections)
	if err != nil {
		return false, err
	}
	defer plain.Close()

	pass := true
	if o.Only == "" {
		ok, err := apiLatencies(ctx, o, client, srv.URL, plain, big, small, out)
		if err != nil {
			return false, err
		}
		pass = ok
	}
	ok, err := apiThroughput(ctx, o, client, srv.URL, plain, trips, big, out)
	return pass && ok, err
}

// apiLatencies measures S1-S3: one request at a time, the operations interleaved.
func apiLatencies(ctx context.Context, o apiBenchOpts, client *http.Client, srvURL string, plain *bench.PlainReads,
	big, small apiWorkspace, out io.Writer) (bool, error) {
	r := rand.New(rand.NewPCG(42, 7))
	offset := min(10000, o.Datasets-50)
	type op struct {
		name string
		do   func() (time.Duration, error)
	}
	get := func(w apiWorkspace, path string, wantTotal int) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			d, _, err := apiGet(ctx, client, srvURL+path, w.token, wantTotal)
			return d, err
		}
	}
	pick := func(w apiWorkspace) string { return w.ids[r.IntN(len(w.ids))] }
	term := func(w apiWorkspace) string { return fmt.Sprintf("c%04d.t%02d", r.IntN(w.n/100), r.IntN(100)) }
	visibleTotal := func(w apiWorkspace) int { return len(w.ids) }
	pkRead := func() (time.Duration, error) {
		id := pick(big)
		t := time.Now()
		err := plain.DatasetByKey(ctx, id)
		return time.Since(t), err
	}
	count := func() (time.Duration, error) {
		t := time.Now()
		err := plain.CountDatasets(ctx, big.id)
		return time.Since(t), err
	}
	detail := func(w apiWorkspace) func() (time.Duration, error) {
		return func() (time.Duration, error) { return get(w, "/api/v1/datasets/"+pick(w), -1)() }
	}
	list := func(w apiWorkspace, query string) func() (time.Duration, error) {
		return get(w, "/api/v1/datasets?limit=50"+query, visibleTotal(w))
	}
	ops := []op{
		{"detail GET /datasets/{id}", detail(big)},
		{"list first page", list(big, "")},
		{fmt.Sprintf("list offset=%d", offset), list(big, fmt.Sprintf("&offset=%d", offset))},
		{"list sort=usage", list(big, "&sort=usage")},
		{fmt.Sprintf("list sort=usage offset=%d", offset), list(big, fmt.Sprintf("&sort=usage&offset=%d", offset))},
		{"list sort=impact", list(big, "&sort=impact")},
		{fmt.Sprintf("list sort=impact offset=%d", offset), list(big, fmt.Sprintf("&sort=impact&offset=%d", offset))},
		{"list q=", func() (time.Duration, error) {
			return get(big, "/api/v1/datasets?limit=50&q="+url.QueryEscape(term(big)), -1)()
		}},
		{"find ?query=", func() (time.Duration, error) {
			return get(big, "/api/v1/datasets/find?query="+url.QueryEscape(term(big)), -1)()
		}},
		{fmt.Sprintf("list first page (%d datasets)", small.n), list(small, "")},
		{"baseline: pgx primary-key read", pkRead},
		{"baseline: pgx count(*) of the workspace", count},
	}
	// Warm up, and check the answers once.
	for _, op := range ops {
		for range 5 {
			if _, err := op.do(); err != nil {
				return false, fmt.Errorf("%s: %w", op.name, err)
			}
		}
	}
	lat := make([][]time.Duration, len(ops))
	for range o.Iterations {
		for i, op := range ops {
			d, err := op.do()
			if err != nil {
				return false, fmt.Errorf("%s: %w", op.name, err)
			}
			lat[i] = append(lat[i], d)
		}
	}
	p99 := make([]time.Duration, len(ops))
	fmt.Fprintf(out, "\nAPI reads: %d datasets (S3 against %d), API token, one request at a time, %d per operation, interleaved\n",
		o.Datasets, o.Compare, o.Iterations)
	fmt.Fprintf(out, "%-42s %10s %10s %12s\n", "operation", "p50", "p99", "p99/detail")
	for i, op := range ops {
		sort.Slice(lat[i], func(x, y int) bool { return lat[i][x] < lat[i][y] })
		p99[i] = percentile(lat[i], 0.99)
		fmt.Fprintf(out, "%-42s %10s %10s %11.2fx\n", op.name, percentile(lat[i], 0.5).Round(10*time.Microsecond),
			p99[i].Round(10*time.Microsecond), float64(p99[i])/float64(p99[0]))
	}
	pass := true
	ratio := func(i int) float64 { return float64(p99[i]) / float64(p99[0]) }
	worst := 0.0
	for i := 1; i <= 6; i++ {
		worst = max(worst, ratio(i))
	}
	// S1 and S2 are targets at 100,000 datasets; a smaller catalog shows them for information.
	judge := func(ok bool) string {
		if o.Datasets < 100000 {
			return "(target at 100,000 datasets)"
		}
		pass = pass && ok
		return verdict(ok)
	}
	fmt.Fprintf(out, "S1 list (first page, offset %d; name, usage, impact): worst p99 %.2fx detail p99   [≤ 3x]  %s\n", offset, worst, judge(worst <= 3))
	s2 := max(ratio(7), ratio(8))
	fmt.Fprintf(out, "S2 q= and /datasets/find: worst p99 %.2fx detail p99   [≤ 5x]  %s\n", s2, judge(s2 <= 5))
	growth := float64(p99[1]) / float64(p99[9])
	if o.Compare > o.Datasets {
		growth = 1 / growth
	}
	ok := growth <= 3
	pass = pass && ok
	fmt.Fprintf(out, "S3 list p99 at %d vs %d datasets: grows %.2fx   [≤ 3x for 100x the catalog]  %s\n",
		max(o.Datasets, o.Compare), min(o.Datasets, o.Compare), growth, verdict(ok))
	return pass, nil
}

// apiThroughput measures S4: the detail's rate at o.Connections connections against a
// plain pgx primary-key read and GraphQL for the same fields, rounds interleaved; with
// each kind's round trips, process CPU and database backend CPU per request, which the
// load of other processes does not change.
func apiThroughput(ctx context.Context, o apiBenchOpts, client *http.Client, srvURL string, plain *bench.PlainReads,
	trips *bench.RoundTrips, big apiWorkspace, out io.Writer) (bool, error) {
	pass := true

	// Throughput at o.Connections connections, the kinds interleaved round by round.
	// GraphQL asks for every field of the REST detail it has (all but the trust brief).
	gqlQuery := `query($id: ID!) { dataset(id: $id) { id name schema table connectionId connectionName kind costGuarded dataCountry
		latestScore lastScanAt createdAt updatedAt accessRole country { effective source }
		columns { name position dataType nullable primaryKey partition clustering }
		rowCount rowCountExact lastFailure { scanId code failedAt } scoreHistory { scanId score createdAt }
		issues { id title type subtype severity status } } }`
	gql, err := newGraphQLDetail(srvURL+"/graphql", big.token, gqlQuery)
	if err != nil {
		return false, err
	}
	kinds := []struct {
		name    string
		profile string
		do      func(r *rand.Rand) error
	}{
		{"pgx primary-key read", "", func(r *rand.Rand) error {
			return plain.DatasetByKey(ctx, big.ids[r.IntN(len(big.ids))])
		}},
		{"REST GET /datasets/{id}", o.CPUProfile, func(r *rand.Rand) error {
			_, _, err := apiGet(ctx, client, srvURL+"/api/v1/datasets/"+big.ids[r.IntN(len(big.ids))], big.token, -1)
			return err
		}},
		{"GraphQL dataset(id), same fields", o.CPUProfile + ".graphql", func(r *rand.Rand) error {
			return gql.get(ctx, client, big.ids[r.IntN(len(big.ids))])
		}},
	}
	// Warm-up and shape check: each answer in full (GraphQL's decoded, errors and id
	// checked); the timed phases then read GraphQL's answers as lightly as REST's.
	for _, id := range big.ids[:3] {
		if err := apiGraphQL(ctx, client, srvURL+"/graphql", big.token, gqlQuery, id); err != nil {
			return false, fmt.Errorf("GraphQL: %w", err)
		}
	}
	for _, k := range kinds {
		if err := k.do(rand.New(rand.NewPCG(1, 1))); err != nil {
			return false, fmt.Errorf("%s: %w", k.name, err)
		}
	}
	rates := make([][]float64, len(kinds))
	type cost struct{ n, trips, cpu, dbCPU float64 }
	costs := make([]cost, len(kinds))
	fmt.Fprintf(out, "\nDetail throughput: %d connections, %v a phase, %d rounds interleaved\n", o.Connections, o.Duration, o.Rounds)
	for round := 1; round <= o.Rounds; round++ {
		for i, k := range kinds {
			stop := func() {}
			if o.CPUProfile != "" && k.profile != "" && round == o.Rounds {
				var err error
				if stop, err = startCPUProfile(k.profile); err != nil {
					return false, err
				}
			}
			db0, err := plain.BackendCPU(ctx)
			if err != nil {
				stop()
				return false, err
			}
			t0, cpu0 := trips.N(), processCPU()
			rate, n, err := throughput(ctx, o.Connections, o.Duration, k.do)
			cpu1, t1 := processCPU(), trips.N()
			stop()
			if err != nil {
				return false, fmt.Errorf("%s: %w", k.name, err)
			}
			db1, err := plain.BackendCPU(ctx)
			if err != nil {
				return false, err
			}
			var dbCPU time.Duration
			for pid, c := range db1 {
				dbCPU += c - db0[pid]
			}
			rates[i] = append(rates[i], rate)
			c := &costs[i]
			c.n += float64(n)
			c.trips += float64(t1 - t0)
			c.cpu += float64(cpu1 - cpu0)
			c.dbCPU += float64(dbCPU)
			fmt.Fprintf(out, "  round %d %-34s %9.0f/s\n", round, k.name, rate)
		}
	}
	fmt.Fprintf(out, "per request (all rounds): %-21s %12s %16s %16s\n", "", "round trips", "process CPU", "database CPU")
	for i, k := range kinds {
		c := costs[i]
		fmt.Fprintf(out, "  %-44s %12.2f %14.0fµs %14.0fµs\n", k.name, c.trips/c.n, c.cpu/c.n/1e3, c.dbCPU/c.n/1e3)
	}
	fmt.Fprintf(out, "  (the service's own round trips: the pgx baseline's pool is not traced; process CPU includes the HTTP client)\n")
	pgxRate, restRate, gqlRate := median(rates[0]), median(rates[1]), median(rates[2])
	ok := restRate/pgxRate >= 0.08
	pass = pass && ok
	fmt.Fprintf(out, "S4 detail: REST %.0f/s vs pgx %.0f/s = %.3fx   [≥ 0.08x]  %s\n", restRate, pgxRate, restRate/pgxRate, verdict(ok))
	ok = gqlRate/restRate >= 0.9
	pass = pass && ok
	fmt.Fprintf(out, "S4 GraphQL vs REST, same fields: %.0f/s vs %.0f/s = %.3fx   [≥ 0.9x]  %s\n", gqlRate, restRate, gqlRate/restRate, verdict(ok))
	fmt.Fprintf(out, "load average while measuring: %s\n", loadAverage())
	return pass, nil
}

// throughput runs do from conns goroutines for d and returns the completed calls per second.
func throughput(ctx context.Context, conns int, d time.Duration, do func(r *rand.Rand) error) (float64, int64, error) {
	var n atomic.Int64
	var firstErr error
	var mu sync.Mutex
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 99))
			for time.Now().Before(stop) && ctx.Err() == nil {
				if err := do(r); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds(), n.Load(), firstErr
}

// apiGet reads one answer; wantTotal ≥ 0 checks X-Total-Count.
func apiGet(ctx context.Context, client *http.Client, u, token string, wantTotal int) (time.Duration, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	t := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(t)
	if err != nil {
		return 0, nil, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("status %d", res.StatusCode)
	}
	if wantTotal >= 0 {
		if got := res.Header.Get("X-Total-Count"); got != strconv.Itoa(wantTotal) {
			return 0, nil, fmt.Errorf("X-Total-Count %q, want %d", got, wantTotal)
		}
	}
	return d, b, nil
}

// graphQLDetail asks GraphQL dataset(id) with a request body built once around the id
// and checks an answer as cheaply as apiGet checks REST's: status 200 and the answer
// opens with the dataset of that id (an error answer has no data first).
type graphQLDetail struct {
	url, token    string
	before, after []byte
}

func newGraphQLDetail(u, token, query string) (graphQLDetail, error) {
	q, err := json.Marshal(query)
	if err != nil {
		return graphQLDetail{}, err
	}
	return graphQLDetail{url: u, token: token, before: append(append([]byte(`{"query":`), q...), `,"variables":{"id":"`...),
		after: []byte(`"}}`)}, nil
}

func (g graphQLDetail) get(ctx context.Context, client *http.Client, id string) error {
	body := make([]byte, 0, len(g.before)+len(id)+len(g.after))
	body = append(append(append(body, g.before...), id...), g.after...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK || !bytes.HasPrefix(b, []byte(`{"data":{"dataset":{"id":"`+id+`"`)) {
		return fmt.Errorf("graphql: status %d", res.StatusCode)
	}
	return nil
}

func apiGraphQL(ctx context.Context, client *http.Client, u, token, query, id string) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"id": id}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	var v struct {
		Errors []json.RawMessage `json:"errors"`
		Data   struct {
			Dataset *struct {
				ID string `json:"id"`
			} `json:"dataset"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &v) != nil || len(v.Errors) > 0 || v.Data.Dataset == nil || v.Data.Dataset.ID != id {
		return fmt.Errorf("graphql: status %d", res.StatusCode)
	}
	return nil
}
