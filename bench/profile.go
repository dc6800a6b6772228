package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/vigia-data/vigia/source"
)

// Defaults of ProfileOptions.
const (
	DefaultProfileDSN      = "postgres://postgres@127.0.0.1:5432/postgres"
	DefaultProfileDatabase = "vigia_bench"
	DefaultProfileRows     = 5_000_000
	ProfileColumns         = 20
	DefaultProfileRuns     = 3
)

// Targets the profile benchmark checks (see ProfileReport.Targets).
const (
	TargetProfileVsHand      = 1.2  // Profile / one hand-written aggregate
	TargetProfileVsPerColumn = 0.35 // Profile / one query per column per metric
	TargetSampleVsHand       = 0.5  // sample+estimation phase / hand-written aggregate
	TargetMasksVsCount       = 0.5  // sample read + masks + semantic types / count(*)
)

// profileStatementTimeout is the statement timeout of the source connection: generous,
// because a benchmark on a slow machine should report a slow profile, not fail.
const profileStatementTimeout = 30 * time.Minute

// ProfileOptions configures RunProfile.
type ProfileOptions struct {
	// DSN is an admin Postgres URL (or keyword/value string) able to create databases
	// (default DefaultProfileDSN). It is never printed.
	DSN string
	// Database is the dedicated database the table lives in, created if missing (default
	// DefaultProfileDatabase). Lowercase letters, digits and _ only.
	Database string
	// Rows is the table's row count (default DefaultProfileRows).
	Rows int
	// Columns is fixed at ProfileColumns; 0 means that.
	Columns int
	// Keep keeps the table (and the database) after the run, so that the next run with the
	// same Rows reuses it instead of building it again. Without Keep the table is dropped,
	// and the database too when this run created it.
	Keep bool
	// SampleSize is the profile's sample size (default source.DefaultSampleSize, what
	// scans use). The report prints it; targets are only meaningful at the default.
	SampleSize int
	// Runs is how many timed rounds run, after one untimed warm-up round; each round runs
	// every measurement once, and the report gives medians (default DefaultProfileRuns).
	Runs int
}

// validDatabaseName accepts lowercase identifiers that need no quoting, so that the name
// reads the same in every statement and in the report.
func validDatabaseName(s string) bool {
	if s == "" || len(s) > 63 || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return !slices.Contains([]string{"postgres", "template0", "template1"}, s)
}

func (o ProfileOptions) withDefaults() (ProfileOptions, error) {
	if o.DSN == "" {
		o.DSN = DefaultProfileDSN
	}
	if o.Database == "" {
		o.Database = DefaultProfileDatabase
	}
	if o.Rows == 0 {
		o.Rows = DefaultProfileRows
	}
	if o.Columns == 0 {
		o.Columns = ProfileColumns
	}
	if o.Runs == 0 {
		o.Runs = DefaultProfileRuns
	}
	if o.SampleSize == 0 {
		o.SampleSize = source.DefaultSampleSize
	}
	switch {
	case o.Rows < 1:
		return o, errors.New("bench: Rows must be positive")
	case o.Columns != ProfileColumns:
		return o, fmt.Errorf("bench: Columns is fixed at %d", ProfileColumns)
	case o.Runs < 1:
		return o, errors.New("bench: Runs must be positive")
	case o.SampleSize < 1 || o.SampleSize > source.MaxSampleSize:
		return o, fmt.Errorf("bench: SampleSize must be between 1 and %d", source.MaxSampleSize)
	case !validDatabaseName(o.Database):
		return o, errors.New("bench: Database must be a dedicated name of lowercase letters, digits and _")
	}
	return o, nil
}

// Timing is one measurement: its timed runs and their median.
type Timing struct {
	Median time.Duration
	Runs   []time.Duration
}

func newTiming(runs []time.Duration) Timing {
	return Timing{Median: median(runs), Runs: runs}
}

// Min returns the fastest run.
func (t Timing) Min() time.Duration {
	if len(t.Runs) == 0 {
		return 0
	}
	return slices.Min(t.Runs)
}

// Max returns the slowest run.
func (t Timing) Max() time.Duration {
	if len(t.Runs) == 0 {
		return 0
	}
	return slices.Max(t.Runs)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// DistinctCheck compares one column's distinct-count estimates from the standard profile
// with the exact count(DISTINCT).
type DistinctCheck struct {
	Column, Class string
	True          int64
	// Estimates holds the column's estimate from each timed Profile run.
	Estimates []source.Estimate
	// Inside is how many of those runs' CI95 hold True.
	Inside int
	// MedianRelErr and WorstRelErr are over the runs, of |estimate − true| / true.
	MedianRelErr, WorstRelErr float64
	// MedianWidth is the median over the runs of the interval's width / true.
	MedianWidth float64
}

// Target is one pass/fail check of the report.
type Target struct {
	Name  string
	Value float64
	Limit float64 // Value must be ≤ Limit (for the distinct coverage: ≥ Limit)
	Pass  bool
	// How says how Value is computed.
	How string
}

// ProfileReport is what RunProfile measured. Timings are medians over Runs timed rounds
// on a warm cache (each round runs every measurement once, after one untimed warm-up
// round), except ExactDistinct and BuildTime (once).
type ProfileReport struct {
	Database   string
	Rows       int64
	Columns    int
	TableBytes int64 // table, TOAST and indexes
	Built      bool  // the table was built by this run (else reused)
	BuildTime  time.Duration
	Runs       int

	// RequestedSample is the sample size asked of Profile (ProfileOptions.SampleSize).
	RequestedSample int
	// SampleSize and SampleMethod are those of the last timed Profile run's masks sample,
	// DistinctSampleSize and DistinctSampleMethod of its distinct estimates' sample.
	SampleSize           int
	SampleMethod         string
	DistinctSampleSize   int
	DistinctSampleMethod string

	CountStar     Timing // (a) SELECT count(*)
	HandAggregate Timing // (b) one hand-written aggregate of the standard statistics
	// HandAggregateNoJIT is (b) in a session set as the connector sets its own (JIT off):
	// information, to tell what the setting gains from what the profile's SQL does.
	HandAggregateNoJIT  Timing
	PerColumn           Timing // (c) one query per column per metric, sequential
	PerColumnStatements int
	Profile             Timing // (d) Source.Profile at depth standard, via connect.Open
	ProfileAggregate    Timing // (e) ProfileSQL's statement(s) alone, in the connector's session setting
	// ProfileRest is Profile.Median − ProfileAggregate.Median: the sample read, masks,
	// semantic types and distinct estimation.
	ProfileRest time.Duration
	// ProfileStatements is how many statements one Profile sent (from its query log).
	ProfileStatements int

	// What one Profile spent per phase, from the query log of each run: the aggregate
	// statement, the sample statement (its duration includes the per-row masks, semantic
	// detection and value hashing done while reading), and the rest (distinct estimation,
	// freshness, Go overhead).
	InProfileAggregate Timing
	InProfileSample    Timing
	InProfileFinish    Timing

	// The sample phase replayed step by step with the statements Profile sends
	// (connect.SampleSQL): reading the masks sample, masks plus semantic types, reading the
	// distinct sample (hashes), and the distinct estimation, each on its own.
	SampleRead         Timing
	MasksSemantic      Timing
	DistinctSampleRead Timing
	DistinctEstimation Timing

	ExactDistinct Timing // (f) count(DISTINCT) of every column in one statement, run once

	ProfileVsHand      float64 // Profile / HandAggregate
	ProfileVsHandNoJIT float64 // Profile / HandAggregateNoJIT
	ProfileVsPerColumn float64 // Profile / PerColumn
	AggregateVsHand    float64 // ProfileAggregate / HandAggregate
	RestVsHand         float64 // ProfileRest / HandAggregate
	DistinctVsHand     float64 // (DistinctSampleRead + DistinctEstimation) / HandAggregate
	MasksVsCount       float64 // (SampleRead + MasksSemantic) / CountStar
	SampleVsCount      float64 // InProfileSample / CountStar: the real sample statement, all its per-row work

	Distinct []DistinctCheck
	Targets  []Target

	// LoadBefore and LoadAfter are the machine's 1-minute load average when the
	// measurements started and ended (-1 where the system does not say): other work on
	// the machine makes the timings slower and noisier.
	LoadBefore, LoadAfter float64
}

// Passed reports whether every target passed.
func (r ProfileReport) Passed() bool {
	for _, t := range r.Targets {
		if !t.Pass {
			return false
		}
	}
	return len(r.Targets) > 0
}

// RunProfile builds (or reuses) the benchmark table in a dedicated database and measures
// the profiling path against its alternatives; progress lines go to progress (may be nil).
// Its errors never contain the DSN. At the default 5,000,000 rows it takes about 10 to 20
// minutes on a 2-core machine: the per-column pattern (c) and the exact distinct counts (f)
// are the slow parts, and building the table adds about 2 minutes the first time.
func RunProfile(ctx context.Context, o ProfileOptions, progress io.Writer) (rep ProfileReport, err error) {
	o, err = o.withDefaults()
	if err != nil {
		return rep, err
	}
	if progress == nil {
		progress = io.Discard
	}
	admin, benchDSN, created, err := openBenchDatabase(ctx, o.DSN, o.Database)
	if err != nil {
		return rep, err
	}
	defer admin.Close()
	db, err := openDB(benchDSN)
	if err != nil {
		return rep, err
	}
	// The connector's own session setting (connect turns JIT off, see disableJIT), for
	// what replays its statements and for the hand-written aggregate under it.
	profileDB, err := openDB(benchDSN, "jit", "off")
	if err != nil {
		db.Close()
		return rep, err
	}
	defer func() {
		profileDB.Close()
		db.Close()
		if o.Keep {
			return
		}
		if cerr := cleanup(ctx, admin, benchDSN, o.Database, created); cerr != nil && err == nil {
			err = cerr
		}
	}()

	r := &run{o: o, db: db, profileDB: profileDB, progress: progress}
	r.rep.Database, r.rep.Runs, r.rep.Columns, r.rep.RequestedSample = o.Database, o.Runs, o.Columns, o.SampleSize
	fmt.Fprintf(progress, "profile benchmark: database %s, %d rows x %d columns, %d runs\n", o.Database, o.Rows, o.Columns, o.Runs)
	if r.rep.Built, r.rep.BuildTime, err = ensureTable(ctx, db, o.Rows, progress); err != nil {
		return rep, err
	}
	r.rep.LoadBefore = loadAverage()
	if err := r.measure(ctx, benchDSN); err != nil {
		return rep, err
	}
	r.rep.LoadAfter = loadAverage()
	r.rep.finish()
	return r.rep, nil
}

// cleanup drops what a run without Keep leaves: the database it created, else the table.
// It runs on a context of its own so that a cancelled run still cleans up.
func cleanup(ctx context.Context, admin *sql.DB, benchDSN, database string, created bool) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if created {
		if _, err := admin.ExecContext(cctx, "DROP DATABASE IF EXISTS "+quoteIdent(database)+" WITH (FORCE)"); err != nil {
			return dbError(cctx, "drop the benchmark database", err)
		}
		return nil
	}
	db, err := openDB(benchDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(cctx, "DROP TABLE IF EXISTS "+qualifiedTable()); err != nil {
		return dbError(cctx, "drop the benchmark table", err)
	}
	return nil
}

// run holds one RunProfile's state.
type run struct {
	o  ProfileOptions
	db *sql.DB
	// profileDB is a session set as the connector sets its own (JIT off).
	profileDB *sql.DB
	progress  io.Writer
	rep       ProfileReport
	cols      []benchColumn
}

// recorder keeps the query log of one Profile call.
type recorder struct {
	mu      sync.Mutex
	records []source.QueryRecord
}

// Record implements source.Recorder.
func (r *recorder) Record(_ context.Context, q source.QueryRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, q)
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = nil
}

func (r *recorder) take() []source.QueryRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.records
	r.records = nil
	return out
}

// finish computes the ratios and the targets.
func (rep *ProfileReport) finish() {
	ratio := func(a, b time.Duration) float64 {
		if b <= 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	rep.ProfileRest = rep.Profile.Median - rep.ProfileAggregate.Median
	rep.ProfileVsHand = ratio(rep.Profile.Median, rep.HandAggregate.Median)
	rep.ProfileVsHandNoJIT = ratio(rep.Profile.Median, rep.HandAggregateNoJIT.Median)
	rep.ProfileVsPerColumn = ratio(rep.Profile.Median, rep.PerColumn.Median)
	rep.AggregateVsHand = ratio(rep.ProfileAggregate.Median, rep.HandAggregate.Median)
	rep.RestVsHand = ratio(rep.ProfileRest, rep.HandAggregate.Median)
	rep.DistinctVsHand = ratio(rep.DistinctSampleRead.Median+rep.DistinctEstimation.Median, rep.HandAggregate.Median)
	rep.MasksVsCount = ratio(rep.SampleRead.Median+rep.MasksSemantic.Median, rep.CountStar.Median)
	rep.SampleVsCount = ratio(rep.InProfileSample.Median, rep.CountStar.Median)

	covered, total := 0, 0
	for _, c := range rep.Distinct {
		covered += c.Inside
		total += len(c.Estimates)
	}
	coverage := 0.0
	if total > 0 {
		coverage = float64(covered) / float64(total)
	}
	rep.Targets = []Target{
		{Name: "profile / (b)", Value: rep.ProfileVsHand, Limit: TargetProfileVsHand,
			How: "(d) / (b)"},
		{Name: "profile / (c)", Value: rep.ProfileVsPerColumn, Limit: TargetProfileVsPerColumn,
			How: "(d) / (c)"},
		{Name: "sample+estimation phase / (b)", Value: rep.RestVsHand, Limit: TargetSampleVsHand,
			How: "((d) - (e)) / (b): what sample read, masks, semantic types, approximate distinct add"},
		{Name: "masks+semantic / (a)", Value: rep.MasksVsCount, Limit: TargetMasksVsCount,
			How: "(masks sample read + masks + semantic types, replayed) / (a)"},
		{Name: "distinct truth inside CI95", Value: coverage, Limit: 1,
			How: fmt.Sprintf("%d of %d column estimates (all runs) hold the exact count", covered, total)},
	}
	for i := range rep.Targets {
		t := &rep.Targets[i]
		if i == len(rep.Targets)-1 {
			t.Pass = total > 0 && covered == total
		} else {
			t.Pass = t.Value <= t.Limit
		}
	}
}

// loadAverage returns the 1-minute load average, or -1 when /proc does not give it.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b) + " x")[0], 64)
	if err != nil {
		return -1
	}
	return f
}

// dsnWithDatabase points an admin DSN at another database on the same server.
func dsnWithDatabase(dsn, database string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", errors.New("bench: the DSN does not parse")
		}
		u.Path = "/" + database
		u.RawPath = ""
		return u.String(), nil
	}
	// keyword/value: the last dbname wins.
	return dsn + " dbname=" + database, nil
}

// openDB opens a pool on dsn with the session parameters params (name, value, …), on the
// same driver path the Postgres connector uses (pgx through database/sql, one round trip
// per statement, no prepared statements), so that the alternatives are timed on equal
// terms with Profile.
func openDB(dsn string, params ...string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("bench: the DSN does not parse")
	}
	for i := 0; i+1 < len(params); i += 2 {
		cfg.RuntimeParams[params[i]] = params[i+1]
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.StatementCacheCapacity = 0
	cfg.DescriptionCacheCapacity = 0
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	return db, nil
}

// openBenchDatabase opens the admin pool on dsn and makes sure the bench database exists on
// the same server; it returns the bench database's DSN and whether this run created it.
// The caller closes admin (also when it drops the database afterwards).
func openBenchDatabase(ctx context.Context, dsn, database string) (admin *sql.DB, benchDSN string, created bool, err error) {
	if benchDSN, err = dsnWithDatabase(dsn, database); err != nil {
		return nil, "", false, err
	}
	if admin, err = openDB(dsn); err != nil {
		return nil, "", false, err
	}
	if created, err = ensureDatabase(ctx, admin, database); err != nil {
		admin.Close()
		return nil, "", false, err
	}
	return admin, benchDSN, created, nil
}

func ensureDatabase(ctx context.Context, admin *sql.DB, name string) (bool, error) {
	var exists bool
	if err := admin.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return false, dbError(ctx, "reach the admin database", err)
	}
	if exists {
		return false, nil
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(name)); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P04" { // created meanwhile by another run
			return false, nil
		}
		return false, dbError(ctx, "create the benchmark database", err)
	}
	return true, nil
}

// dbError reduces a driver error to the step and, for server errors, the SQLSTATE: driver
// messages may carry connection parameters, which the report must never show.
func dbError(ctx context.Context, step string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("bench: %s: %w", step, cerr)
	}
	var se *source.Error
	if errors.As(err, &se) {
		return fmt.Errorf("bench: %s: %w", step, se)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("bench: %s failed (SQLSTATE %s)", step, pe.Code)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("bench: %s: cannot connect to the server", step)
	}
	if strings.HasPrefix(err.Error(), "bench: ") {
		return err // already reduced
	}
	return fmt.Errorf("bench: %s failed", step)
}
