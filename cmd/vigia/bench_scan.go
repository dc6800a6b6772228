package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/scan"
)

// scanBenchOpts are the knobs of `vigia bench scan`.
type scanBenchOpts struct {
	Tables, Views         int
	BaseTables, BaseViews int
	Database              string
	CPUProfile            string
	Keep                  bool
}

// S5's targets.
const (
	scanTargetPerDataset = 4 * time.Millisecond
	scanTargetRSSFlat    = 1.10 // peak RSS of the last quarter of the datasets / of the second quarter
	scanTargetLinear     = 1.5  // per-dataset time at the full size / at the baseline size
)

func benchScanCommand(stdout, stderr io.Writer) *cobra.Command {
	var o scanBenchOpts
	cmd := &cobra.Command{Use: "scan", Short: "A scan of a source with many small tables and views (S5): time per dataset, RSS, view lineage",
		Long: "Builds (once, then keeps) a Postgres source database next to DATABASE_URL with --tables small tables over 20\n" +
			"schemas (a few rows each, varied types) and --views views over them (joins, expressions, aggregates, unions), and\n" +
			"one with --baseline-tables and --baseline-views. Then, in the database --database, it adds each source to a fresh\n" +
			"workspace and runs a real scan through the service's scan path (the scan job and its after-scan steps, as\n" +
			"`vigia scan` does), first the baseline, then the full size: wall time per dataset (target <= 4 ms), the process's\n" +
			"RSS sampled while profiling (flat: the last quarter's peak within 10% of the second quarter's), and the views with\n" +
			"column lineage (all of them). The baseline shows linear growth: the per-dataset time of the full size over the\n" +
			"baseline's (<= 1.5). Exit status 3 when a target is missed.",
		RunE: func(c *cobra.Command, _ []string) error {
			if o.Tables < 10 || o.Views < 0 || o.Views > o.Tables {
				return errors.New("--tables must be at least 10 and --views between 0 and --tables")
			}
			if o.BaseTables == 0 {
				o.BaseTables, o.BaseViews = max(10, o.Tables/10), o.Views/10
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			ok, err := runScanBench(c.Context(), cfg, o, stdout, stderr)
			if err != nil {
				return err
			}
			if !ok {
				return exitError{code: 3, msg: "a scan target was missed"}
			}
			return nil
		}}
	f := cmd.Flags()
	f.IntVar(&o.Tables, "tables", 10000, "tables of the source")
	f.IntVar(&o.Views, "views", 1000, "views of the source")
	f.IntVar(&o.BaseTables, "baseline-tables", 0, "tables of the baseline source (default tables/10)")
	f.IntVar(&o.BaseViews, "baseline-views", 0, "views of the baseline source (default views/10 with the default baseline tables)")
	f.StringVar(&o.Database, "database", "vigia_bench_scan", "database (next to DATABASE_URL) holding the measured workspaces; empty: DATABASE_URL's own")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the full-size scan to this file")
	f.BoolVar(&o.Keep, "keep", false, "keep the measured workspaces afterwards")
	return cmd
}

// scanRun is one measured scan.
type scanRun struct {
	tables, views    int
	datasets         int
	wall, profiling  time.Duration
	after            time.Duration
	peakRSS          int64 // bytes, the process's VmHWM at the end
	rssQ2, rssQ4     int64 // peak RSS while the second / last quarter of the datasets were profiled
	rssSeries        []int64
	viewsWithColumns int
	failed           int
	// Round trips to Vigia's database and this process's CPU time, for the profiling
	// phase and the after-scan steps: figures that do not depend on the machine's load.
	profTrips, afterTrips int64
	profCPU, afterCPU     time.Duration
	// sourceStatements: the statements the scan job sent to the source (its query log).
	sourceStatements int64
	steps            []stepFigures
}

// stepFigures are one after-scan step's wall time and round trips in a scan.
type stepFigures struct {
	name  string
	wall  time.Duration
	trips int64
}

// stepRecorder collects the after-scan steps' figures (scan.Service.ObserveSteps).
type stepRecorder struct {
	mu    sync.Mutex
	trips *bench.RoundTrips
	steps []stepFigures
}

func (r *stepRecorder) observe(step string) func() {
	t0, n0 := time.Now(), r.trips.N()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.steps = append(r.steps, stepFigures{name: step, wall: time.Since(t0), trips: r.trips.N() - n0})
	}
}

func (r *stepRecorder) take() []stepFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.steps
	r.steps = nil
	return s
}

func runScanBench(ctx context.Context, cfg config, o scanBenchOpts, out, stderr io.Writer) (bool, error) {
	progress := func(msg string) { fmt.Fprintf(out, "  %s\n", msg) }
	base := bench.ScanSourceName(o.BaseTables, o.BaseViews)
	full := bench.ScanSourceName(o.Tables, o.Views)
	t0 := time.Now()
	baseDSN, err := bench.EnsureScanSource(ctx, cfg.DatabaseURL, base, o.BaseTables, o.BaseViews, progress)
	if err != nil {
		return false, fmt.Errorf("baseline source: %w", err)
	}
	fullDSN, err := bench.EnsureScanSource(ctx, cfg.DatabaseURL, full, o.Tables, o.Views, progress)
	if err != nil {
		return false, fmt.Errorf("source: %w", err)
	}
	fmt.Fprintf(out, "sources %s and %s ready (kept between runs) in %s\n", base, full, time.Since(t0).Round(time.Millisecond))
	if o.Database != "" {
		if cfg.DatabaseURL, err = bench.DatabaseURL(cfg.DatabaseURL, o.Database); err != nil {
			return false, err
		}
	}
	cfg.devKeyNotice = stderr
	trips := &bench.RoundTrips{}
	a, err := openAppCounted(ctx, cfg, stderr, trips)
	if err != nil {
		return false, err
	}
	defer a.DB.Close()
	defer func() { _ = a.Close(context.WithoutCancel(ctx)) }()
	steps := &stepRecorder{trips: trips}
	a.Scans.ObserveSteps(steps.observe)

	b, err := measureScan(ctx, a, out, baseDSN, o.BaseTables, o.BaseViews, "", o.Keep, steps)
	if err != nil {
		return false, fmt.Errorf("baseline scan: %w", err)
	}
	r, err := measureScan(ctx, a, out, fullDSN, o.Tables, o.Views, o.CPUProfile, o.Keep, steps)
	if err != nil {
		return false, fmt.Errorf("scan: %w", err)
	}
	fmt.Fprintf(out, "\nScan of a Postgres source through the service's scan path (scan job + after-scan steps), one worker\n")
	fmt.Fprintf(out, "%-26s %10s %10s %12s %12s %12s %10s %12s\n", "source", "datasets", "wall", "profiling", "after-scan", "per dataset", "peak RSS", "view lineage")
	for _, x := range []scanRun{b, r} {
		fmt.Fprintf(out, "%-26s %10d %10s %12s %12s %12s %8d MB %6d / %d\n", fmt.Sprintf("%d tables, %d views", x.tables, x.views), x.datasets,
			x.wall.Round(time.Millisecond), x.profiling.Round(time.Millisecond), x.after.Round(time.Millisecond),
			perDataset(x).Round(10*time.Microsecond), x.peakRSS>>20, x.viewsWithColumns, x.views)
	}
	fmt.Fprintf(out, "\nPer dataset, independent of the machine's load: round trips to Vigia's database and this process's CPU time\n")
	fmt.Fprintf(out, "%-26s %16s %16s %16s %16s %18s\n", "source", "profiling trips", "after-scan trips", "profiling CPU", "after-scan CPU",
		"source statements")
	for _, x := range []scanRun{b, r} {
		n := max(1, x.datasets)
		fmt.Fprintf(out, "%-26s %16.2f %16.2f %16s %16s %18.2f\n", fmt.Sprintf("%d tables, %d views", x.tables, x.views),
			float64(x.profTrips)/float64(n), float64(x.afterTrips)/float64(n),
			(x.profCPU / time.Duration(n)).Round(time.Microsecond), (x.afterCPU / time.Duration(n)).Round(time.Microsecond),
			float64(x.sourceStatements)/float64(n))
	}
	fmt.Fprintf(out, "\nAfter-scan steps at %d datasets (baseline %d): wall time, per dataset, round trips\n", r.datasets, b.datasets)
	fmt.Fprintf(out, "%-12s %10s %12s %8s   %10s %12s %8s\n", "step", "wall", "per dataset", "trips", "base wall", "per dataset", "trips")
	baseSteps := map[string]stepFigures{}
	for _, st := range b.steps {
		baseSteps[st.name] = st
	}
	for _, st := range r.steps {
		bs := baseSteps[st.name]
		fmt.Fprintf(out, "%-12s %10s %12s %8d   %10s %12s %8d\n", st.name, st.wall.Round(time.Millisecond),
			(st.wall / time.Duration(max(1, r.datasets))).Round(time.Microsecond), st.trips,
			bs.wall.Round(time.Millisecond), (bs.wall / time.Duration(max(1, b.datasets))).Round(time.Microsecond), bs.trips)
	}
	series := make([]string, 0, len(r.rssSeries))
	for _, v := range r.rssSeries {
		series = append(series, strconv.FormatInt(v>>20, 10))
	}
	fmt.Fprintf(out, "RSS (MB) at every tenth of the datasets profiled: %s\n", strings.Join(series, " "))
	pass := true
	judge := func(ok bool) string {
		pass = pass && ok
		return verdict(ok)
	}
	per := perDataset(r)
	fmt.Fprintf(out, "S5 wall time per dataset at %d datasets: %s   [<= %s]  %s\n", r.datasets, per.Round(10*time.Microsecond), scanTargetPerDataset,
		judge(per <= scanTargetPerDataset))
	flat := float64(r.rssQ4) / float64(max(1, r.rssQ2))
	fmt.Fprintf(out, "S5 RSS flat: peak over the last quarter of the datasets %d MB / over the second quarter %d MB = %.2f   [<= %.2f]  %s\n",
		r.rssQ4>>20, r.rssQ2>>20, flat, scanTargetRSSFlat, judge(flat <= scanTargetRSSFlat))
	fmt.Fprintf(out, "S5 views with column lineage: %d of %d   [all]  %s\n", r.viewsWithColumns, r.views, judge(r.viewsWithColumns == r.views))
	growth := float64(per) / float64(max(1, perDataset(b)))
	fmt.Fprintf(out, "baseline: per-dataset time at %d datasets / at %d datasets = %.2f   [<= %.1f, linear growth]  %s\n",
		r.datasets, b.datasets, growth, scanTargetLinear, judge(growth <= scanTargetLinear))
	if r.failed > 0 || b.failed > 0 {
		fmt.Fprintf(out, "datasets that failed to profile: %d (baseline %d)  FAIL\n", r.failed, b.failed)
		pass = false
	}
	fmt.Fprintf(out, "load average: %s\n", loadAverage())
	return pass, nil
}

func perDataset(r scanRun) time.Duration {
	if r.datasets == 0 {
		return 0
	}
	return r.wall / time.Duration(r.datasets)
}

// measureScan adds the source to a fresh workspace and scans it through the service
// (TriggerScan, then the scan job and its after-scan job, worked as `vigia scan` does),
// sampling the process's RSS as the datasets are profiled.
func measureScan(ctx context.Context, a *app.App, out io.Writer, dsn string, tables, views int, cpuProfile string, keep bool,
	steps *stepRecorder) (scanRun, error) {
	r := scanRun{tables: tables, views: views}
	w, err := a.Identity.CreateWorkspace(ctx, "bench-scan-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		return r, err
	}
	if !keep {
		defer func() {
			c := context.WithoutCancel(ctx)
			_ = a.Lineage.Graph().Clear(c, w.ID)
			_, _ = a.DB.Pool().Exec(c, `DELETE FROM workspaces WHERE id = $1`, w.ID)
		}()
	}
	actx := app.AsAdmin(ctx, w.ID, "bench")
	conn, err := a.Connections.Add(actx, connection.AddInput{Name: "bench-source", Kind: "postgres", DSN: dsn, Test: true})
	if err != nil {
		return r, err
	}
	fmt.Fprintf(out, "scanning %d tables and %d views...\n", tables, views)
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return r, err
		}
		defer stop()
	}
	// RSS: sampled every 100 ms; each sample is attributed to the quarter of the
	// datasets being profiled at the time.
	var mu sync.Mutex
	var doneNow, total int
	quarterPeak := [4]int64{}
	var series []int64
	nextTenth := 1
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
			}
			rss := readRSS("VmRSS")
			mu.Lock()
			if total > 0 && doneNow < total {
				q := min(3, doneNow*4/total)
				quarterPeak[q] = max(quarterPeak[q], rss)
			}
			mu.Unlock()
		}
	}()
	_ = steps.take()
	start, trips0, cpu0 := time.Now(), steps.trips.N(), processCPU()
	var profiled time.Time
	var profTrips int64
	var profCPU time.Duration
	sc, err := a.Scans.TriggerScan(actx, conn.ID, "manual")
	if err != nil {
		stop()
		wg.Wait()
		return r, err
	}
	lastPrint := time.Now()
	sc, err = a.WaitScan(actx, sc.ID, func(s scan.Scan) {
		mu.Lock()
		doneNow, total = s.DatasetsDone+s.DatasetsFailed, s.DatasetsTotal
		for total > 0 && nextTenth <= 10 && doneNow*10 >= nextTenth*total {
			series = append(series, readRSS("VmRSS"))
			nextTenth++
		}
		mu.Unlock()
		if s.Finished() && profiled.IsZero() {
			profiled, profTrips, profCPU = time.Now(), steps.trips.N(), processCPU()
		}
		if time.Since(lastPrint) >= 10*time.Second {
			lastPrint = time.Now()
			fmt.Fprintf(out, "  %d of %d datasets (%s)\n", doneNow, total, time.Since(start).Round(time.Second))
		}
	})
	r.wall = time.Since(start)
	endTrips, endCPU := steps.trips.N(), processCPU()
	r.steps = steps.take()
	stop()
	wg.Wait()
	if err != nil {
		return r, err
	}
	if sc.Status != scan.StatusSucceeded {
		code := ""
		if sc.ErrorCode != nil {
			code = *sc.ErrorCode
		}
		return r, fmt.Errorf("the scan ended %s (%s)", sc.Status, code)
	}
	if profiled.IsZero() {
		profiled, profTrips, profCPU = time.Now(), endTrips, endCPU
	}
	r.profTrips, r.afterTrips = profTrips-trips0, endTrips-profTrips
	r.profCPU, r.afterCPU = profCPU-cpu0, endCPU-profCPU
	r.profiling = profiled.Sub(start)
	r.after = r.wall - r.profiling
	r.datasets = sc.DatasetsTotal
	r.failed = sc.DatasetsFailed
	r.peakRSS = readRSS("VmHWM")
	r.rssQ2, r.rssQ4 = quarterPeak[1], quarterPeak[3]
	r.rssSeries = series
	if r.datasets != tables+views {
		return r, fmt.Errorf("the scan found %d datasets, not %d", r.datasets, tables+views)
	}
	if err := a.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM source_query_log WHERE scan_id = $1`, sc.ID).Scan(&r.sourceStatements); err != nil {
		return r, err
	}
	// Views with column lineage: a parsed edge into the view that maps its columns.
	err = a.DB.Pool().QueryRow(ctx, `SELECT count(DISTINCT d.id) FROM datasets d
		JOIN lineage_edges e ON e.workspace_id = d.workspace_id AND e.target_id = d.id::text
		WHERE d.workspace_id = $1 AND d.kind = 'view' AND d.dropped_at IS NULL
		  AND e.kind = 'parsed' AND e.column_level AND jsonb_array_length(e.column_map) > 0`, w.ID).Scan(&r.viewsWithColumns)
	return r, err
}

// readRSS reads a memory figure of this process (VmRSS, VmHWM) from /proc, in bytes;
// 0 where there is none.
func readRSS(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
