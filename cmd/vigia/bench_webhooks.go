package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/store"
)

// webhookBenchOpts are the knobs of `vigia bench webhooks`.
type webhookBenchOpts struct {
	Deliveries  int           // per throughput round
	Rounds      int           // throughput rounds of each kind (signed, unsigned)
	Workspaces  int           // throughput: workspaces
	ChannelsPer int           // throughput: channels (receivers) per workspace
	Latency     time.Duration // how long a healthy receiver takes to answer
	Workers     int
	Schedule    int // deliveries to the receiver that always answers 500; 0 skips the phase
	Receivers   int // latency phases: receivers, one workspace each
	Rate        int // latency phases: deliveries per second
	Duration    time.Duration
	SlowPercent int
	// LatencyRounds interleaves rounds without and with slow receivers.
	LatencyRounds int
	JSON          bool
	CPUProfile    string
}

func benchWebhooksCommand(stdout, stderr io.Writer) *cobra.Command {
	o := webhookBenchOpts{}
	cmd := &cobra.Command{Use: "webhooks", Short: "Deliveries per second (signed and unsigned), the retry schedule, and healthy p99 while receivers time out",
		Long: "Runs the real delivery path (outbox → dispatcher → job queue → signed HTTPS POST) against local TLS receivers, on a\n" +
			"database created for the run next to DATABASE_URL's and dropped afterwards. Targets: ≥ 2,000 deliveries/s; signed ≥ 0.95×\n" +
			"unsigned; each retry within ±10% of 1 / 5 / 25 s; healthy p99 ≤ 1.2× the run without slow receivers. Exit status 3 when a\n" +
			"target is missed.",
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			if o.CPUProfile != "" {
				stop, err := startCPUProfile(o.CPUProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			res, err := runWebhookBench(c.Context(), cfg.DatabaseURL, o, stdout)
			if err != nil {
				return err
			}
			return finishBench(stdout, o.JSON, res, res.Pass, "a webhook target was missed")
		}}
	f := cmd.Flags()
	f.IntVar(&o.Deliveries, "deliveries", 4000, "deliveries per throughput round")
	f.IntVar(&o.Rounds, "rounds", 3, "throughput rounds of each kind (signed, unsigned), interleaved")
	f.IntVar(&o.Workspaces, "workspaces", 8, "throughput: workspaces")
	f.IntVar(&o.ChannelsPer, "channels", 4, "throughput: channels per workspace, each its own receiver")
	f.DurationVar(&o.Latency, "latency", 50*time.Millisecond, "how long a healthy receiver takes to answer")
	f.IntVar(&o.Workers, "workers", notify.DefaultWorkers, "delivery workers (sends in flight)")
	f.IntVar(&o.Schedule, "schedule", 5, "deliveries to a receiver that always answers 500 (0 skips the 31 s phase)")
	f.IntVar(&o.Receivers, "receivers", 20, "latency phases: receivers")
	f.IntVar(&o.Rate, "rate", 200, "latency phases: deliveries per second")
	f.DurationVar(&o.Duration, "duration", 15*time.Second, "latency phases: how long deliveries are made")
	f.IntVar(&o.SlowPercent, "slow-percent", 10, "latency phase 2: share of receivers that time out")
	f.IntVar(&o.LatencyRounds, "latency-rounds", 2, "latency: rounds of each kind, interleaved (0 skips the latency phases)")
	f.BoolVar(&o.JSON, "json", false, "also print the figures as JSON")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	return cmd
}

// WebhookBenchResult is what `vigia bench webhooks` measured.
type WebhookBenchResult struct {
	SignedPerSecond   []float64 `json:"signed_per_second"`
	UnsignedPerSecond []float64 `json:"unsigned_per_second"`
	Signed            float64   `json:"signed_median"`
	Unsigned          float64   `json:"unsigned_median"`
	SignedRatio       float64   `json:"signed_ratio"`
	PeakRSSMiB        float64   `json:"peak_rss_mib"`
	PeakHeapMiB       float64   `json:"peak_heap_mib"`
	HeapAfterMiB      []float64 `json:"heap_after_round_mib"`
	Retries           []Gaps    `json:"retries"`
	BaselineP99s      []float64 `json:"baseline_p99s_ms"`
	SlowP99s          []float64 `json:"slow_p99s_ms"`
	BaselineP50MS     float64   `json:"baseline_p50_ms"`
	BaselineP99MS     float64   `json:"baseline_p99_ms"`
	SlowP50MS         float64   `json:"slow_p50_ms"`
	SlowP99MS         float64   `json:"slow_p99_ms"`
	P99Ratio          float64   `json:"p99_ratio"`
	Pass              bool      `json:"pass"`
}

// Gaps summarizes the waits before one retry over all deliveries.
type Gaps struct {
	Retry      int     `json:"retry"`
	TargetS    float64 `json:"target_s"`
	MinS       float64 `json:"min_s"`
	MeanS      float64 `json:"mean_s"`
	MaxS       float64 `json:"max_s"`
	WorstPct   float64 `json:"worst_deviation_pct"`
	Deliveries int     `json:"deliveries"`
}

// hookBench runs phases against one app on a throw-away database.
type hookBench struct {
	ctx  context.Context
	a    *app.App
	db   *store.DB
	pool *x509.CertPool
	out  io.Writer
	rec  *arrivals
	// trips counts the process's database round trips.
	trips *bench.RoundTrips
	// lastTrips and lastCPU are the round trips and the CPU time of this process per
	// delivery of the last throughput round (the settling included).
	lastTrips float64
	lastCPU   time.Duration
}

func runWebhookBench(ctx context.Context, databaseURL string, o webhookBenchOpts, out io.Writer) (WebhookBenchResult, error) {
	res := WebhookBenchResult{Pass: true}
	benchURL, drop, err := bench.ThrowAwayDatabase(databaseURL)
	if err != nil {
		return res, err
	}
	defer drop()
	trips := &bench.RoundTrips{}
	db, err := store.OpenTraced(ctx, benchURL, trips)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return res, err
	}
	rec := &arrivals{first: map[string]time.Time{}, all: map[string][]time.Time{}}
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	pool := x509.NewCertPool()
	pool.AddCert(probe.Certificate())
	probe.Close()
	a, err := app.New(app.Config{SecretKey: "vigia-bench", WebhookAllowHosts: []string{"127.0.0.1"}, WebhookRootCAs: pool,
		WebhookWorkers: o.Workers, WebhookDispatchEvery: 100 * time.Millisecond},
		db, slog.New(slog.DiscardHandler))
	if err != nil {
		return res, err
	}
	b := &hookBench{ctx: ctx, a: a, db: db, pool: pool, out: out, rec: rec, trips: trips}
	fmt.Fprintf(out, "Webhook deliveries: outbox → dispatcher → job queue → signed HTTPS POST to local TLS receivers; %d workers.\n", o.Workers)

	fmt.Fprintf(out, "\nThroughput: %d deliveries a round to %d×%d receivers answering after %v (dispatched before the clock starts)\n",
		o.Deliveries, o.Workspaces, o.ChannelsPer, o.Latency)
	peak := startHeapPeak()
	for round := 1; round <= o.Rounds; round++ {
		for _, signed := range []bool{true, false} {
			rate, err := b.throughput(signed, o)
			if err != nil {
				peak.stop()
				return res, err
			}
			kind := "unsigned"
			if signed {
				kind = "signed"
				res.SignedPerSecond = append(res.SignedPerSecond, rate)
			} else {
				res.UnsignedPerSecond = append(res.UnsignedPerSecond, rate)
			}
			heap := heapMiB()
			res.HeapAfterMiB = append(res.HeapAfterMiB, heap)
			fmt.Fprintf(out, "  round %d %-8s %7.0f deliveries/s   (%.2f database round trips and %v of this process's CPU a delivery; live heap after %.1f MiB)\n",
				round, kind, rate, b.lastTrips, b.lastCPU.Round(time.Microsecond), heap)
		}
	}
	res.PeakHeapMiB = peak.stop()
	res.PeakRSSMiB = peakRSSMiB()
	res.Signed, res.Unsigned = median(res.SignedPerSecond), median(res.UnsignedPerSecond)
	res.SignedRatio = res.Signed / res.Unsigned
	ok := res.Signed >= webhookTarget && res.Unsigned >= webhookTarget && res.SignedRatio >= 0.95
	res.Pass = res.Pass && ok
	fmt.Fprintf(out, "  median: signed %.0f/s, unsigned %.0f/s, signed/unsigned %.3f   [targets ≥ %d/s, ≥ 0.95]  %s\n",
		res.Signed, res.Unsigned, res.SignedRatio, webhookTarget, verdict(ok))
	fmt.Fprintf(out, "  memory: peak heap %.1f MiB, peak RSS of the process %.1f MiB (bounded by the %d workers, not by the queue)\n",
		res.PeakHeapMiB, res.PeakRSSMiB, o.Workers)

	if o.Schedule > 0 {
		fmt.Fprintf(out, "\nRetry schedule: %d deliveries to a receiver that always answers 500\n", o.Schedule)
		gaps, err := b.schedule(o)
		if err != nil {
			return res, err
		}
		res.Retries = gaps
		for _, g := range gaps {
			ok := g.WorstPct <= 10
			res.Pass = res.Pass && ok
			fmt.Fprintf(out, "  retry %d: min %.3f s, mean %.3f s, max %.3f s; worst %.1f%% off %v   [±10%%]  %s\n",
				g.Retry, g.MinS, g.MeanS, g.MaxS, g.WorstPct, time.Duration(g.TargetS*float64(time.Second)), verdict(ok))
		}
	}

	if o.LatencyRounds < 1 {
		return res, nil // --latency-rounds 0: the latency phases are skipped
	}
	fmt.Fprintf(out, "\nHealthy latency (delivery created → received): %d receivers, %d deliveries/s for %v a round, rounds interleaved\n",
		o.Receivers, o.Rate, o.Duration)
	var baseP99, slowP99 []float64
	for round := 1; round <= o.LatencyRounds; round++ {
		p50, p99, n, err := b.latency(o, 0)
		if err != nil {
			return res, err
		}
		baseP99 = append(baseP99, ms(p99))
		res.BaselineP50MS = ms(p50)
		fmt.Fprintf(out, "  round %d, no slow receivers:     p50 %6.1f ms, p99 %6.1f ms (%d deliveries)\n", round, ms(p50), ms(p99), n)
		p50, p99, n, err = b.latency(o, o.SlowPercent)
		if err != nil {
			return res, err
		}
		slowP99 = append(slowP99, ms(p99))
		res.SlowP50MS = ms(p50)
		fmt.Fprintf(out, "  round %d, %2d%% of receivers time out: p50 %6.1f ms, p99 %6.1f ms (%d healthy deliveries)\n",
			round, o.SlowPercent, ms(p50), ms(p99), n)
	}
	res.BaselineP99s, res.SlowP99s = baseP99, slowP99
	res.BaselineP99MS, res.SlowP99MS = median(baseP99), median(slowP99)
	res.P99Ratio = res.SlowP99MS / res.BaselineP99MS
	ok = res.P99Ratio <= 1.2
	res.Pass = res.Pass && ok
	fmt.Fprintf(out, "  median p99: %.1f ms without, %.1f ms with slow receivers; ratio %.2f   [≤ 1.2]  %s\n",
		res.BaselineP99MS, res.SlowP99MS, res.P99Ratio, verdict(ok))
	return res, nil
}

// webhookTarget is S6's deliveries per second (issue 20).
const webhookTarget = 2000

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// arrivals records when each delivery reached a receiver.
type arrivals struct {
	mu    sync.Mutex
	first map[string]time.Time
	all   map[string][]time.Time
	n     atomic.Int64
}

func (r *arrivals) add(id string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.first[id]; !ok {
		r.first[id] = at
		r.n.Add(1) // distinct deliveries: a resend after a dropped connection counts once
	}
	r.all[id] = append(r.all[id], at)
}

// forget drops the deliveries that first arrived before cutoff, so that a long run keeps a
// bounded record (bench soak: the harness must not grow the memory it measures). A resend
// of a forgotten delivery would count again; resends come within the 25 s retry window.
func (r *arrivals) forget(cutoff time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.first {
		if at.Before(cutoff) {
			delete(r.first, id)
			delete(r.all, id)
		}
	}
}

func (r *arrivals) firstOf(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.first[id]
	return t, ok
}

// receiver starts a TLS receiver that answers status after delay (or never, within
// the client's 10 s, when delay is longer) and returns its URL.
func (b *hookBench) receiver(delay time.Duration, status int) (string, func()) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		b.rec.add(r.Header.Get("X-Service-Delivery"), at)
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	u, _ := url.Parse(ts.URL)
	return "https://127.0.0.1:" + u.Port() + "/hook", ts.Close
}

// workspace makes a workspace with one dataset events can be about.
func (b *hookBench) workspace(prefix string) (ws, dataset string, err error) {
	w, err := b.a.Identity.CreateWorkspace(b.ctx, prefix+"-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		return "", "", err
	}
	conn, dataset := vigia.NewID(), vigia.NewID()
	if _, err := b.db.Pool().Exec(b.ctx, `INSERT INTO connections (id, workspace_id, name, kind, dsn_encrypted)
		VALUES ($1, $2, 'bench', 'postgres', '\x00')`, conn, w.ID); err != nil {
		return "", "", err
	}
	_, err = b.db.Pool().Exec(b.ctx, `INSERT INTO datasets (id, workspace_id, connection_id, schema_name, table_name)
		VALUES ($1, $2, $3, 'public', 'vendas')`, dataset, w.ID, conn)
	return w.ID, dataset, err
}

func (b *hookBench) channel(ws, receiverURL string, signed bool) (string, error) {
	c, _, err := b.a.Notify.CreateChannel(app.AsAdmin(b.ctx, ws, "bench"), notify.ChannelInput{Name: "bench " + vigia.NewUUID()[:8],
		WebhookURL: receiverURL, EventKinds: []string{notify.EventKindDatasetVerdictChanged}})
	if err != nil {
		return "", err
	}
	if !signed {
		_, err = b.db.Pool().Exec(b.ctx, `UPDATE notification_channels SET secret_sealed = NULL WHERE id = $1`, c.ID)
	}
	return c.ID, err
}

// events writes perWorkspace verdict events for each workspace, interleaved, as a scan
// would (one outbox row per change).
func (b *hookBench) events(workspaces, datasets []string, perWorkspace int) error {
	_, err := b.db.Pool().Exec(b.ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, idempotency_key, payload, created_at)
		SELECT gen_random_uuid(), w.ws, 'dataset.verdict_changed', 'dataset', w.ds::text,
		       md5(random()::text || g::text) || md5(g::text || random()::text),
		       jsonb_build_object('dataset_id', w.ds::text, 'from', 'pass', 'to', 'warn', 'score', 61.5),
		       clock_timestamp() + g * interval '1 microsecond'
		FROM generate_series(1, $3::int) g CROSS JOIN unnest($1::uuid[], $2::uuid[]) AS w(ws, ds)
		ORDER BY g`, workspaces, datasets, perWorkspace)
	return err
}

// dispatchAll turns every outbox row into deliveries.
func (b *hookBench) dispatchAll() error {
	for {
		n, err := b.a.Notify.Dispatch(b.ctx)
		if err != nil || n == 0 {
			return err
		}
	}
}

// workers runs the delivery workers until the returned stop is called.
func (b *hookBench) workers() (stop func()) {
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.a.RunWebhookWorkers(ctx)
	}()
	return func() { cancel(); <-done }
}

func (b *hookBench) waitUntil(bound time.Duration, cond func() bool) error {
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("bench: gave up waiting for deliveries")
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// settled waits until the workspaces have no pending delivery.
func (b *hookBench) settled(workspaces []string) error {
	return b.waitUntil(2*time.Minute, func() bool {
		var n int
		err := b.db.Pool().QueryRow(b.ctx, `SELECT count(*) FROM webhook_deliveries WHERE workspace_id = ANY($1::uuid[])
			AND status = 'pending'`, workspaces).Scan(&n)
		return err == nil && n == 0
	})
}

func (b *hookBench) throughput(signed bool, o webhookBenchOpts) (float64, error) {
	var wss, dss []string
	for range o.Workspaces {
		ws, ds, err := b.workspace("throughput")
		if err != nil {
			return 0, err
		}
		for range o.ChannelsPer {
			u, stop := b.receiver(o.Latency, http.StatusNoContent)
			defer stop()
			if _, err := b.channel(ws, u, signed); err != nil {
				return 0, err
			}
		}
		wss, dss = append(wss, ws), append(dss, ds)
	}
	per := max(1, o.Deliveries/(o.Workspaces*o.ChannelsPer))
	total := int64(per * o.Workspaces * o.ChannelsPer)
	if err := b.events(wss, dss, per); err != nil {
		return 0, err
	}
	if err := b.dispatchAll(); err != nil {
		return 0, err
	}
	base := b.rec.n.Load()
	trips0, cpu0 := b.trips.N(), processCPU()
	start := time.Now()
	stop := b.workers()
	defer stop()
	if err := b.waitUntil(5*time.Minute, func() bool { return b.rec.n.Load()-base >= total }); err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	// Let the last attempts be recorded before the receivers close.
	if err := b.settled(wss); err != nil {
		return 0, err
	}
	b.lastTrips = float64(b.trips.N()-trips0) / float64(total)
	b.lastCPU = (processCPU() - cpu0) / time.Duration(total)
	return float64(total) / elapsed.Seconds(), nil
}

func (b *hookBench) schedule(o webhookBenchOpts) ([]Gaps, error) {
	ws, ds, err := b.workspace("schedule")
	if err != nil {
		return nil, err
	}
	u, stopRcv := b.receiver(0, http.StatusInternalServerError)
	defer stopRcv()
	ch, err := b.channel(ws, u, true)
	if err != nil {
		return nil, err
	}
	if err := b.events([]string{ws}, []string{ds}, o.Schedule); err != nil {
		return nil, err
	}
	if err := b.dispatchAll(); err != nil {
		return nil, err
	}
	rows, err := b.db.Pool().Query(b.ctx, `SELECT id::text FROM webhook_deliveries WHERE channel_id = $1`, ch)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	stop := b.workers()
	defer stop()
	sends := func(id string) []time.Time {
		b.rec.mu.Lock()
		defer b.rec.mu.Unlock()
		return slices.Clone(b.rec.all[id])
	}
	if err := b.waitUntil(2*time.Minute, func() bool {
		for _, id := range ids {
			if len(sends(id)) < 4 {
				return false
			}
		}
		return true
	}); err != nil {
		return nil, err
	}
	targets := []time.Duration{time.Second, 5 * time.Second, 25 * time.Second}
	out := make([]Gaps, len(targets))
	for i, target := range targets {
		g := Gaps{Retry: i + 1, TargetS: target.Seconds(), MinS: math.Inf(1), Deliveries: len(ids)}
		for _, id := range ids {
			at := sends(id)
			gap := at[i+1].Sub(at[i]).Seconds()
			g.MinS, g.MaxS = math.Min(g.MinS, gap), math.Max(g.MaxS, gap)
			g.MeanS += gap / float64(len(ids))
			g.WorstPct = math.Max(g.WorstPct, 100*math.Abs(gap-target.Seconds())/target.Seconds())
		}
		out[i] = g
	}
	return out, nil
}

// latency paces deliveries to receivers (slowPercent of them never answer within the
// client's 10 s) and returns the p50 and p99 of the healthy ones, from the delivery's
// creation to its arrival.
func (b *hookBench) latency(o webhookBenchOpts, slowPercent int) (p50, p99 time.Duration, n int, err error) {
	slow := o.Receivers * slowPercent / 100
	var wss, dss []string
	healthy := map[string]bool{}
	for i := range o.Receivers {
		ws, ds, err := b.workspace("latency")
		if err != nil {
			return 0, 0, 0, err
		}
		delay := o.Latency
		if i < slow {
			delay = 12 * time.Second
		}
		u, stop := b.receiver(delay, http.StatusNoContent)
		defer stop()
		ch, err := b.channel(ws, u, true)
		if err != nil {
			return 0, 0, 0, err
		}
		if i >= slow {
			healthy[ch] = true
		}
		wss, dss = append(wss, ws), append(dss, ds)
	}
	stop := b.workers()
	defer stop()
	tick := 50 * time.Millisecond
	t := time.NewTicker(tick)
	begin := time.Now()
	total := int(float64(o.Rate) * o.Duration.Seconds())
	next := 0
	before := b.a.WebhookJobs.Stats()
	for next < total {
		<-t.C
		// Owed from the elapsed time, so that a slow insert (or a dropped tick) does not
		// lower the rate.
		owed := min(total, int(float64(o.Rate)*time.Since(begin).Seconds())) - next
		var tw, td []string
		for ; owed > 0; owed-- {
			i := next % len(wss)
			next++
			tw, td = append(tw, wss[i]), append(td, dss[i])
		}
		// One statement a tick, as a scan writes its outbox rows in its own transaction.
		if len(tw) > 0 {
			if err := b.events(tw, td, 1); err != nil {
				t.Stop()
				return 0, 0, 0, err
			}
		}
	}
	t.Stop()
	defer func() {
		after := b.a.WebhookJobs.Stats()
		fmt.Fprintf(b.out, "    (%d delivery jobs run, %d rescheduled: retries, and waits for a receiver at its bound)\n",
			after.Run-before.Run, after.Retried-before.Retried)
	}()
	var chans []string
	for c := range healthy {
		chans = append(chans, c)
	}
	var want int
	err = b.waitUntil(2*time.Minute, func() bool {
		e := b.db.Pool().QueryRow(b.ctx, `SELECT count(*) FROM events e WHERE e.workspace_id = ANY($1::uuid[]) AND e.dispatched_at IS NULL`,
			wss).Scan(&want)
		return e == nil && want == 0
	})
	if err != nil {
		return 0, 0, 0, err
	}
	rows, err := b.db.Pool().Query(b.ctx, `SELECT id::text, created_at FROM webhook_deliveries WHERE channel_id = ANY($1::uuid[])`, chans)
	if err != nil {
		return 0, 0, 0, err
	}
	type made struct {
		id string
		at time.Time
	}
	var ds []made
	for rows.Next() {
		var m made
		if err := rows.Scan(&m.id, &m.at); err != nil {
			rows.Close()
			return 0, 0, 0, err
		}
		ds = append(ds, m)
	}
	if err := rows.Err(); err != nil {
		return 0, 0, 0, err
	}
	if err := b.waitUntil(2*time.Minute, func() bool {
		for _, d := range ds {
			if _, ok := b.rec.firstOf(d.id); !ok {
				return false
			}
		}
		return true
	}); err != nil {
		return 0, 0, 0, err
	}
	if slow == 0 {
		if err := b.settled(wss); err != nil {
			return 0, 0, 0, err
		}
	}
	if slow > 0 {
		// The timing-out receivers' deliveries would go on retrying into the next round:
		// stop them, so that each round measures only its own load.
		if _, err := b.db.Pool().Exec(b.ctx, `UPDATE jobs SET status = 'cancelled', finished_at = now()
			WHERE kind = $1 AND workspace_id = ANY($2::uuid[]) AND status IN ('available', 'running')`,
			notify.JobKind, wss[:slow]); err != nil {
			return 0, 0, 0, err
		}
	}
	lat := make([]time.Duration, 0, len(ds))
	for _, d := range ds {
		at, _ := b.rec.firstOf(d.id)
		lat = append(lat, at.Sub(d.at))
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(math.Ceil(p*float64(len(lat))))-1)] }
	return pct(0.50), pct(0.99), len(lat), nil
}
