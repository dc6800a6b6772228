package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/store"
)

// soakOpts are the knobs of `vigia bench soak`.
type soakOpts struct {
	Minutes   int
	Period    time.Duration // one sample of the series ("a minute")
	Rate      int           // API requests per second
	Callers   int           // concurrent callers
	Hooks     int           // webhook events per second
	Receivers int
	Tables    int
	JSON      bool
}

func benchSoakCommand(stdout, stderr io.Writer) *cobra.Command {
	o := soakOpts{}
	cmd := &cobra.Command{Use: "soak", Short: "S8: minutes of mixed load on one in-process service; RSS, goroutines, p99 and errors per minute",
		Long: "Runs the service in-process on a database created for the run next to DATABASE_URL's (dropped afterwards) and loads it\n" +
			"for --minutes: REST and GraphQL reads by an API token and by a session, a scan of a SQLite source every minute, and\n" +
			"webhook deliveries to local TLS receivers answering after 50 ms. Prints one line a minute (requests, errors, p99, RSS,\n" +
			"what of it the Go runtime holds and the binary's pages, heap in use, goroutines, deliveries, scan time; RSS, Go and\n" +
			"goroutines are medians of a sample every second of the minute) and the verdicts: zero errors; RSS and goroutines of the last 10 minutes\n" +
			"within 5% of the 10 before; p99 of the last 10 minutes ≤ 1.2× the first 10 (below 30 minutes the windows are thirds of\n" +
			"the run). Exit status 3 when a verdict fails.",
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			if o.Minutes < 3 {
				return errors.New("--minutes must be at least 3")
			}
			if o.Rate < 1 || o.Callers < 1 || o.Hooks < 0 || o.Receivers < 1 || o.Tables < 1 || o.Period < time.Second {
				return errors.New("--rate, --callers, --receivers and --tables must be positive, --hooks not negative, --period at least 1s")
			}
			res, err := runSoak(c.Context(), cfg.DatabaseURL, o, stdout)
			if err != nil {
				return err
			}
			return finishBench(stdout, o.JSON, res, res.Pass, "a soak verdict failed")
		}}
	f := cmd.Flags()
	f.IntVar(&o.Minutes, "minutes", 30, "length of the run in minutes (at least 3)")
	f.DurationVar(&o.Period, "period", time.Minute, "length of one sample of the series (a minute; shorter only to try the command)")
	f.IntVar(&o.Rate, "rate", 40, "API requests per second, REST and GraphQL, token and session")
	f.IntVar(&o.Callers, "callers", 8, "concurrent API callers")
	f.IntVar(&o.Hooks, "hooks", 20, "webhook events per second (each delivered to one receiver)")
	f.IntVar(&o.Receivers, "receivers", 4, "webhook receivers (channels, 50 ms each)")
	f.IntVar(&o.Tables, "tables", 20, "tables of the SQLite source scanned every minute")
	f.BoolVar(&o.JSON, "json", false, "also print the series and verdicts as JSON")
	return cmd
}

// SoakMinute is one sample of the series.
type SoakMinute struct {
	Minute     int     `json:"minute"`
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	P99MS      float64 `json:"p99_ms"`
	RSSMiB     float64 `json:"rss_mib"`
	HeapMiB    float64 `json:"heap_mib"`
	GoMiB      float64 `json:"go_mib"`       // held by the Go runtime, not returned to the OS
	FileMiB    float64 `json:"rss_file_mib"` // resident pages of mapped files (the binary)
	Goroutines int     `json:"goroutines"`
	Delivered  int     `json:"deliveries_received"`
	ScanMS     float64 `json:"scan_ms"`
	Skipped    int     `json:"requests_not_sent"`

	lat []time.Duration
	// rss, goMiB and gor are the samples taken every second of the period; the series
	// reports their medians, so that one sample taken while a scan or a burst of sends
	// is in flight does not stand for the whole period.
	rss, goMiB, gor []float64
}

// SoakResult is what `vigia bench soak` measured.
type SoakResult struct {
	Series          []SoakMinute `json:"series"`
	Window          int          `json:"window_minutes"`
	Errors          int          `json:"errors"`
	ErrorLogs       int          `json:"error_logs"`
	FailedDelivered int          `json:"deliveries_failed"`
	RSSChange       float64      `json:"rss_change"`
	GoroutineChange float64      `json:"goroutine_change"`
	P99Ratio        float64      `json:"p99_ratio"`
	Pass            bool         `json:"pass"`
}

// errorCounter is a log handler that keeps nothing but counts error records: an
// error logged by the service during the soak is an error of the soak.
type errorCounter struct{ n *atomic.Int64 }

func (h errorCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h errorCounter) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h errorCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h errorCounter) WithGroup(string) slog.Handler      { return h }

func runSoak(ctx context.Context, databaseURL string, o soakOpts, out io.Writer) (SoakResult, error) {
	res := SoakResult{}
	benchURL, drop, err := bench.ThrowAwayDatabase(databaseURL)
	if err != nil {
		return res, err
	}
	defer drop()
	db, err := store.Open(ctx, benchURL)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return res, err
	}
	root, err := os.MkdirTemp("", "vigia-soak-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(root)
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	pool := x509.NewCertPool()
	pool.AddCert(probe.Certificate())
	probe.Close()
	var errorLogs atomic.Int64
	a, err := app.New(app.Config{SecretKey: "vigia-bench", RateLimitToken: 1 << 30, RateLimitIP: 1 << 30, SQLiteRoot: root,
		WebhookAllowHosts: []string{"127.0.0.1"}, WebhookRootCAs: pool, WebhookDispatchEvery: 100 * time.Millisecond},
		db, slog.New(errorCounter{&errorLogs}))
	if err != nil {
		return res, err
	}
	defer func() { _ = a.Close(context.WithoutCancel(ctx)) }()

	// The source, its first scan, the callers and the receivers.
	w, err := a.Identity.CreateWorkspace(ctx, "soak-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		return res, err
	}
	path := filepath.Join(root, "soak.db")
	if err := seedSyntheticSource(ctx, path, o.Tables, 2000); err != nil {
		return res, err
	}
	actx := app.AsAdmin(ctx, w.ID, "bench")
	conn, err := a.Connections.Add(actx, connection.AddInput{Name: "soak", Kind: "sqlite", DSN: path, Test: true})
	if err != nil {
		return res, err
	}
	scanOnce := func() (time.Duration, error) {
		t := time.Now()
		sc, err := a.Scans.TriggerScan(actx, conn.ID, "bench")
		if err != nil {
			return 0, err
		}
		if sc, err = a.WaitScan(actx, sc.ID, nil); err != nil {
			return 0, err
		}
		if sc.Status != "succeeded" {
			return 0, fmt.Errorf("scan %s", sc.Status)
		}
		return time.Since(t), nil
	}
	if _, err := scanOnce(); err != nil {
		return res, fmt.Errorf("first scan: %w", err)
	}
	var ids []string
	rows, err := db.Pool().Query(ctx, `SELECT id::text FROM datasets WHERE workspace_id = $1 AND dropped_at IS NULL`, w.ID)
	if err == nil {
		ids, err = collectStrings(rows)
	}
	if err != nil {
		return res, err
	}
	if len(ids) == 0 {
		return res, errors.New("the first scan found no dataset")
	}
	_, token, err := a.Identity.CreateAPIToken(ctx, w.ID, "soak", "bench", nil)
	if err != nil {
		return res, err
	}
	_, session, err := a.Identity.CreateUser(ctx, w.ID, "soak-"+vigia.NewUUID()[:8]+"@example.pt", vigia.RoleMember)
	if err != nil {
		return res, err
	}
	rec := &arrivals{first: map[string]time.Time{}, all: map[string][]time.Time{}}
	hb := &hookBench{ctx: ctx, a: a, db: db, pool: pool, out: out, rec: rec}
	hookWS, hookDS, err := hb.workspace("soak-hooks")
	if err != nil {
		return res, err
	}
	for range o.Receivers {
		u, stop := hb.receiver(50*time.Millisecond, http.StatusNoContent)
		defer stop()
		if _, err := hb.channel(hookWS, u, true); err != nil {
			return res, err
		}
	}
	// Each event reaches every channel: events per second = hooks / receivers.
	eventsPerSecond := max(1, o.Hooks/o.Receivers)

	// runCtx is the service's workers; loadCtx the load, which stops first so that the
	// deliveries it caused can drain.
	runCtx, stopRun := context.WithCancel(ctx)
	loadCtx, stopLoad := context.WithCancel(runCtx)
	var bg, load sync.WaitGroup
	defer bg.Wait()
	defer load.Wait()
	defer stopRun()
	defer stopLoad()
	bg.Go(func() { _ = a.RunWorkers(runCtx) })
	bg.Go(func() { a.RunTokenCache(runCtx) })
	srv := httptest.NewServer(a.Server().Handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()

	gql := `query($id: ID!) { dataset(id: $id) { id name latestScore columns { name dataType } issues { id severity status } } }`
	ops := []func(r *rand.Rand, cred string) (time.Duration, error){
		func(r *rand.Rand, cred string) (time.Duration, error) {
			d, _, err := apiGet(loadCtx, client, srv.URL+"/api/v1/datasets?limit=20", cred, len(ids))
			return d, err
		},
		func(r *rand.Rand, cred string) (time.Duration, error) {
			d, _, err := apiGet(loadCtx, client, srv.URL+"/api/v1/datasets/"+ids[r.IntN(len(ids))], cred, -1)
			return d, err
		},
		func(r *rand.Rand, cred string) (time.Duration, error) {
			d, _, err := apiGet(loadCtx, client, srv.URL+"/api/v1/issues?limit=20", cred, -1)
			return d, err
		},
		func(r *rand.Rand, cred string) (time.Duration, error) {
			t := time.Now()
			err := apiGraphQL(loadCtx, client, srv.URL+"/graphql", cred, gql, ids[r.IntN(len(ids))])
			return time.Since(t), err
		},
	}

	var mu sync.Mutex
	cur := &SoakMinute{}
	record := func(d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		cur.Requests++
		if err != nil {
			cur.Errors++
			return
		}
		cur.lat = append(cur.lat, d)
	}
	work := make(chan int, o.Callers)
	for c := range o.Callers {
		load.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 8))
			for n := range work {
				cred := token
				if n%2 == 1 {
					cred = session
				}
				d, err := ops[n/2%len(ops)](r, cred)
				if loadCtx.Err() != nil {
					return
				}
				record(d, err)
			}
		})
	}
	load.Go(func() { // the paced requests
		defer close(work)
		t := time.NewTicker(time.Second / time.Duration(o.Rate))
		defer t.Stop()
		for n := 0; ; n++ {
			select {
			case <-loadCtx.Done():
				return
			case <-t.C:
			}
			select {
			case work <- n:
			default: // every caller busy: the service is behind; counted, not queued
				mu.Lock()
				cur.Skipped++
				mu.Unlock()
			}
		}
	})
	load.Go(func() { // the memory and goroutine samples, every second
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-t.C:
			}
			rss, gm, g := rssMiB(), goMappedMiB(), float64(runtime.NumGoroutine())
			mu.Lock()
			cur.rss, cur.goMiB, cur.gor = append(cur.rss, rss), append(cur.goMiB, gm), append(cur.gor, g)
			mu.Unlock()
		}
	})
	var hookErrs atomic.Int64
	load.Go(func() { // the webhook events, as a scan writes them
		t := time.NewTicker(time.Second)
		defer t.Stop()
		wss, dss := make([]string, eventsPerSecond), make([]string, eventsPerSecond)
		for i := range wss {
			wss[i], dss[i] = hookWS, hookDS
		}
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-t.C:
			}
			if err := hb.events(wss, dss, 1); err != nil && loadCtx.Err() == nil {
				hookErrs.Add(1)
			}
		}
	})

	fmt.Fprintf(out, "Soak: %d periods of %v; %d requests/s by %d callers (REST list, detail, issues; GraphQL dataset; token and session\n"+
		"alternating), a scan of %d SQLite tables each period, %d webhook deliveries/s to %d local TLS receivers (50 ms).\n",
		o.Minutes, o.Period, o.Rate, o.Callers, o.Tables, eventsPerSecond*o.Receivers, o.Receivers)
	fmt.Fprintf(out, "%6s %8s %6s %9s %9s %9s %9s %9s %10s %10s %9s %8s\n", "minute", "requests", "errors", "p99 ms", "RSS MiB",
		"Go MiB", "file MiB", "heap MiB", "goroutines", "deliveries", "scan ms", "not sent")
	var scanErrs int
	for m := 1; m <= o.Minutes; m++ {
		periodEnd := time.Now().Add(o.Period)
		scanTook, err := scanOnce()
		if err != nil {
			scanErrs++
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
		}
		if wait := time.Until(periodEnd); wait > 0 {
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(wait):
			}
		}
		mu.Lock()
		s := cur
		cur = &SoakMinute{}
		mu.Unlock()
		s.Minute = m
		if err != nil {
			s.Errors++
		}
		s.ScanMS = ms(scanTook)
		s.P99MS = ms(p99(s.lat))
		if len(s.rss) == 0 { // a period shorter than a second
			s.rss, s.goMiB, s.gor = []float64{rssMiB()}, []float64{goMappedMiB()}, []float64{float64(runtime.NumGoroutine())}
		}
		s.RSSMiB, s.GoMiB, s.Goroutines = median(s.rss), median(s.goMiB), int(math.Round(median(s.gor)))
		s.HeapMiB, s.FileMiB = heapMiB(), rssFileMiB()
		rec.forget(time.Now().Add(-2 * time.Minute))
		delivered := int(rec.n.Load())
		for _, prev := range res.Series {
			delivered -= prev.Delivered
		}
		s.Delivered = delivered
		res.Series = append(res.Series, *s)
		fmt.Fprintf(out, "%6d %8d %6d %9.1f %9.1f %9.1f %9.1f %9.1f %10d %10d %9.0f %8d\n", m, s.Requests, s.Errors, s.P99MS, s.RSSMiB,
			s.GoMiB, s.FileMiB, s.HeapMiB, s.Goroutines, s.Delivered, s.ScanMS, s.Skipped)
	}
	stopLoad()
	load.Wait()
	// Every delivery the load caused must be delivered: let the running workers drain
	// the outbox and the queue (bounded), then count those that did not make it.
	drainDeadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(drainDeadline) {
		var left int
		if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')
			+ (SELECT count(*) FROM events WHERE dispatched_at IS NULL)`).Scan(&left); err != nil {
			return res, err
		}
		if left == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopRun()
	bg.Wait()
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status <> 'delivered'`).Scan(&res.FailedDelivered); err != nil {
		return res, err
	}
	res.ErrorLogs = int(errorLogs.Load())
	for _, s := range res.Series {
		res.Errors += s.Errors
	}
	res.Errors += res.FailedDelivered + res.ErrorLogs + int(hookErrs.Load())

	n := len(res.Series)
	win := 10
	if n < 30 {
		win = max(1, n/3)
	}
	res.Window = win
	first, before, last := res.Series[:win], res.Series[n-2*win:n-win], res.Series[n-win:]
	mean := func(ss []SoakMinute, f func(SoakMinute) float64) float64 {
		var t float64
		for _, s := range ss {
			t += f(s)
		}
		return t / float64(len(ss))
	}
	rss := func(s SoakMinute) float64 { return s.RSSMiB }
	gor := func(s SoakMinute) float64 { return float64(s.Goroutines) }
	res.RSSChange = mean(last, rss)/mean(before, rss) - 1
	res.GoroutineChange = mean(last, gor)/mean(before, gor) - 1
	merged := func(ss []SoakMinute) []time.Duration {
		var all []time.Duration
		for _, s := range ss {
			all = append(all, s.lat...)
		}
		return all
	}
	p99First, p99Last := p99(merged(first)), p99(merged(last))
	res.P99Ratio = float64(p99Last) / float64(p99First)

	fmt.Fprintln(out)
	if n < 30 {
		fmt.Fprintf(out, "Windows scaled to thirds of the %d-minute run (%d minute(s) each); the target's are 10 minutes of a 30-minute run.\n", n, win)
	}
	okErr := res.Errors == 0
	fmt.Fprintf(out, "errors: %d (requests %d, failed or undelivered webhook deliveries %d, error log lines %d, outbox writes %d)   [0]  %s\n",
		res.Errors, res.Errors-res.FailedDelivered-res.ErrorLogs-int(hookErrs.Load()), res.FailedDelivered, res.ErrorLogs, hookErrs.Load(), verdict(okErr))
	okRSS := math.Abs(res.RSSChange) <= 0.05
	fmt.Fprintf(out, "RSS: last %d min %.1f MiB vs the %d before %.1f MiB: %+.1f%%   [within 5%%]  %s\n",
		win, mean(last, rss), win, mean(before, rss), 100*res.RSSChange, verdict(okRSS))
	okGor := math.Abs(res.GoroutineChange) <= 0.05
	fmt.Fprintf(out, "goroutines: last %d min %.0f vs the %d before %.0f: %+.1f%%   [within 5%%]  %s\n",
		win, mean(last, gor), win, mean(before, gor), 100*res.GoroutineChange, verdict(okGor))
	okP99 := res.P99Ratio <= 1.2
	fmt.Fprintf(out, "p99: last %d min %.1f ms vs first %d min %.1f ms: %.2fx   [≤ 1.2x]  %s\n",
		win, ms(p99Last), win, ms(p99First), res.P99Ratio, verdict(okP99))
	res.Pass = okErr && okRSS && okGor && okP99
	fmt.Fprintf(out, "S8: %s\n", verdict(res.Pass))
	return res, nil
}

// p99 is the 99th percentile of d (0 when empty).
func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(0.99*float64(len(s))))-1)]
}

func collectStrings(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close()
}) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
