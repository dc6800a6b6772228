package bench

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// ErrNoDuckDB says this binary was built without the DuckDB engine (the duckdb build tag,
// which `make build` sets): `vigia bench profile --engine duckdb` cannot run.
var ErrNoDuckDB = errors.New("bench: this build has no DuckDB (build with -tags duckdb, as `make build` does)")

// DefaultDuckDBDir is where the Parquet file of the benchmark table is kept between runs.
func DefaultDuckDBDir() string { return filepath.Join(os.TempDir(), "vigia-bench-duckdb") }

// DuckDBProfileOptions configures RunDuckDBProfile.
type DuckDBProfileOptions struct {
	// DSN, Database and Rows are as in ProfileOptions: the Postgres table is built there by
	// the same generator, exported once to Parquet, and profiled there too for the ratio.
	DSN      string
	Database string
	Rows     int
	// Runs is how many timed rounds run after one untimed warm-up round (each round runs
	// every measurement once, interleaved; medians are reported).
	Runs int
	// Dir is the bench directory holding the Parquet file (default DefaultDuckDBDir()): the
	// files root of the duckdb connection.
	Dir string
	// Keep keeps the Parquet file (and the Postgres table) for the next run.
	Keep bool
	// MemoryLimit and Threads are the DuckDB session's limits (source.FilesLimits; empty and
	// 0 take the connector's defaults, 1GB and 2 threads).
	MemoryLimit string
	Threads     int
}

// DuckDBProfileReport is what RunDuckDBProfile measured.
type DuckDBProfileReport struct {
	Rows       int64
	Columns    int
	File       string // the Parquet file's name in the bench directory
	FileBytes  int64
	Built      bool // the Parquet file was written by this run
	BuildTime  time.Duration
	Runs       int
	EngineInfo string // the duckdb driver's version

	MemoryLimit string
	Threads     int

	CountStar     Timing // (a) SELECT count(*) through the duckdb connection
	HandAggregate Timing // (b) one hand-written DuckDB aggregate of the same statistics
	// HandNoDistinct is (b) without the approximate distinct counts: information, the cost
	// of a scan for the exact figures alone.
	HandNoDistinct Timing
	Profile        Timing // (d) Source.Profile at depth standard through the duckdb connector
	Postgres       Timing // (p) Source.Profile at depth standard of the same rows in Postgres
	// ProfileStatements and PostgresStatements are how many statements one profile sent
	// (query log), and ProfilePhases what the last DuckDB profile sent, by phase.
	ProfileStatements, PostgresStatements int
	ProfilePhases                         []string

	SampleSize, DistinctSampleSize     int
	SampleMethod, DistinctSampleMethod string

	// Agree counts the columns whose null counts (and numeric/temporal extremes) are the
	// same in both engines' profiles; Mismatches names the others.
	Agree      int
	Mismatches []string

	// RSS: the process's resident memory before the DuckDB connection opened, and its peak
	// over the timed rounds (VmHWM after resetting it; -1 where /proc does not say).
	RSSBefore, RSSPeak int64
	// PhasePeaks is the peak RSS during each measurement ((a), (b), (b'), (d), (p)), the
	// highest over the rounds: which of them the peak belongs to. GoSys is what the Go
	// runtime holds from the system at the end (its heap and stacks: the rest is DuckDB's
	// and the C allocator's).
	PhasePeaks [5]int64
	GoSys      int64
	LimitBytes int64

	ProfileVsHand     float64 // (d) / (b)
	ProfileVsPostgres float64 // (d) / (p)

	LoadBefore, LoadAfter float64
}

// TargetDuckDBProfileVsHand is the target of (d) / (b).
const TargetDuckDBProfileVsHand = 1.2

// WithinMemoryLimit reports whether the RSS the DuckDB rounds added stayed within the
// configured memory limit.
func (r DuckDBProfileReport) WithinMemoryLimit() bool {
	return r.RSSPeak > 0 && r.LimitBytes > 0 && r.RSSPeak-r.RSSBefore <= r.LimitBytes
}

// Passed reports whether the ratio target is met, the memory stayed within the limit and
// both engines agreed on every column.
func (r DuckDBProfileReport) Passed() bool {
	return r.ProfileVsHand > 0 && r.ProfileVsHand <= TargetDuckDBProfileVsHand && r.WithinMemoryLimit() && len(r.Mismatches) == 0
}

func (o DuckDBProfileOptions) withDefaults() (DuckDBProfileOptions, error) {
	po, err := ProfileOptions{DSN: o.DSN, Database: o.Database, Rows: o.Rows, Runs: o.Runs}.withDefaults()
	if err != nil {
		return o, err
	}
	o.DSN, o.Database, o.Rows, o.Runs = po.DSN, po.Database, po.Rows, po.Runs
	if o.Dir == "" {
		o.Dir = DefaultDuckDBDir()
	}
	return o, nil
}

// parquetName is the Parquet file of a table of rows rows; a change of the table's shape
// (tableVersion) changes it, so an older file is never reused.
func parquetName(rows int) string {
	v := strings.TrimPrefix(tableVersion, "vigia bench profile table ")
	return "profile_bench_" + v + "_" + strconv.Itoa(rows) + ".parquet"
}

// RunDuckDBProfile builds (or reuses) the Postgres benchmark table, writes it once as a
// Parquet file in the bench directory (kept with Keep), and measures through a duckdb
// connection — the connector registered by the binary, as the served one uses it —
// count(*), a hand-written single aggregate and Source.Profile, and Source.Profile of the
// same rows in Postgres, in interleaved rounds. Without the DuckDB engine in the binary it
// returns ErrNoDuckDB before touching anything.
func RunDuckDBProfile(ctx context.Context, o DuckDBProfileOptions, progress io.Writer) (rep DuckDBProfileReport, err error) {
	version, ok := connect.Registered()[source.DuckDB]
	if !ok || !parquetWriter {
		return rep, ErrNoDuckDB
	}
	if o, err = o.withDefaults(); err != nil {
		return rep, err
	}
	if progress == nil {
		progress = io.Discard
	}
	rep.EngineInfo, rep.Runs = version, o.Runs
	// The connector's defaults, spelled out: the Parquet writer gets the same bounds.
	rep.MemoryLimit, rep.Threads = o.MemoryLimit, o.Threads
	if rep.MemoryLimit == "" {
		rep.MemoryLimit = "1GB"
	}
	if rep.Threads == 0 {
		rep.Threads = 2
	}
	lim := source.FilesLimits{MemoryLimit: rep.MemoryLimit, Threads: rep.Threads}
	if rep.LimitBytes, err = parseBytes(rep.MemoryLimit); err != nil {
		return rep, err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return rep, errors.New("bench: cannot create the bench directory")
	}

	admin, benchDSN, created, err := openBenchDatabase(ctx, o.DSN, o.Database)
	if err != nil {
		return rep, err
	}
	defer admin.Close()
	db, err := openDB(benchDSN, "TimeZone", "UTC")
	if err != nil {
		return rep, err
	}
	file := filepath.Join(o.Dir, parquetName(o.Rows))
	defer func() {
		db.Close()
		if o.Keep {
			return
		}
		_ = os.Remove(file)
		if cerr := cleanup(ctx, admin, benchDSN, o.Database, created); cerr != nil && err == nil {
			err = cerr
		}
	}()
	fmt.Fprintf(progress, "duckdb profile benchmark: %d rows x %d columns, Parquet in %s, %d runs\n", o.Rows, ProfileColumns, o.Dir, o.Runs)
	if _, _, err = ensureTable(ctx, db, o.Rows, progress); err != nil {
		return rep, err
	}
	rep.File, rep.Columns = filepath.Base(file), ProfileColumns
	if st, serr := os.Stat(file); serr != nil {
		start := time.Now()
		if err := exportParquet(ctx, db, o.Dir, file, lim, progress); err != nil {
			return rep, err
		}
		rep.Built, rep.BuildTime = true, time.Since(start)
	} else {
		fmt.Fprintf(progress, "reusing %s (%s)\n", rep.File, fmtBytes(st.Size()))
	}
	if st, err := os.Stat(file); err == nil {
		rep.FileBytes = st.Size()
	}
	if err := measureDuckDB(ctx, o, benchDSN, file, lim, &rep, progress); err != nil {
		return rep, err
	}
	return rep, nil
}

// exportParquet copies the Postgres table as CSV (COPY TO STDOUT, session time zone UTC)
// into the bench directory, and has DuckDB write it as Parquet with the tables' types; the
// file appears under its final name only once complete.
func exportParquet(ctx context.Context, db *sql.DB, dir, file string, lim source.FilesLimits, progress io.Writer) error {
	csvPath := filepath.Join(dir, ".profile_bench.csv")
	defer os.Remove(csvPath)
	f, err := os.Create(csvPath)
	if err != nil {
		return errors.New("bench: cannot write in the bench directory")
	}
	w := bufio.NewWriterSize(f, 1<<20)
	conn, err := db.Conn(ctx)
	if err != nil {
		f.Close()
		return dbError(ctx, "connect for the export", err)
	}
	cols := benchColumns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.name)
	}
	fmt.Fprintf(progress, "  exporting the table as CSV\n")
	start := time.Now()
	err = conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().PgConn().CopyTo(ctx, w,
			"COPY (SELECT "+strings.Join(names, ", ")+" FROM "+qualifiedTable()+" ORDER BY "+quoteIdent("id")+") TO STDOUT (FORMAT csv)")
		return err
	})
	conn.Close()
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return dbError(ctx, "export the table", err)
	}
	fmt.Fprintf(progress, "  exported in %s; writing Parquet\n", since(start))
	tmp := file + ".tmp"
	defer os.Remove(tmp)
	if err := writeParquet(ctx, csvPath, tmp, cols, lim); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		return errors.New("bench: cannot write in the bench directory")
	}
	fmt.Fprintf(progress, "  Parquet written in %s\n", since(start))
	return nil
}

// duckHandAggregateSQL is (b) in DuckDB: the standard profile's statistics (count, null
// counts, min/max, text lengths) and DuckDB's own approximate distinct count of every
// column, in one statement written by hand.
func duckHandAggregateSQL(t source.Table, distinct bool) string {
	exprs := []string{"count(*)"}
	for _, c := range t.Columns {
		q := quoteIdent(c.Name)
		exprs = append(exprs, "count("+q+")")
		switch c.Class {
		case source.ClassNumeric, source.ClassTemporal:
			exprs = append(exprs, "min("+q+")", "max("+q+")")
		case source.ClassText:
			exprs = append(exprs, "min(length("+q+"))", "max(length("+q+"))", "avg(length("+q+"))")
		}
		if distinct {
			exprs = append(exprs, "approx_count_distinct("+q+")")
		}
	}
	for i, e := range exprs {
		// As text: the connection answers rows as text (one row; the casts cost nothing).
		exprs[i] = "CAST(" + e + " AS VARCHAR)"
	}
	return "SELECT " + strings.Join(exprs, ", ") + " FROM " + quoteIdent(t.Schema) + "." + quoteIdent(t.Name)
}

func measureDuckDB(ctx context.Context, o DuckDBProfileOptions, benchDSN, file string, lim source.FilesLimits, rep *DuckDBProfileReport, progress io.Writer) error {
	duckLog, pgLog := &recorder{}, &recorder{}
	resetPeakRSS()
	rep.RSSBefore = rssBytes("VmRSS")
	duck, err := connect.Open(ctx, source.DuckDB, file, source.Options{FilesRoot: o.Dir, Files: lim,
		StatementTimeout: profileStatementTimeout, Recorder: duckLog})
	if err != nil {
		return dbError(ctx, "open the duckdb connection", err)
	}
	defer duck.Close()
	pg, err := connect.Open(ctx, source.Postgres, benchDSN, source.Options{StatementTimeout: profileStatementTimeout, Recorder: pgLog})
	if err != nil {
		return dbError(ctx, "open the Postgres connection", err)
	}
	defer pg.Close()
	duckTable, err := onlyTable(ctx, duck, "")
	if err != nil {
		return err
	}
	pgTable, err := onlyTable(ctx, pg, tableName)
	if err != nil {
		return err
	}
	count := "SELECT count(*) FROM " + quoteIdent(duckTable.Schema) + "." + quoteIdent(duckTable.Name)
	n, err := duck.QueryRows(ctx, count, 1)
	if err != nil || len(n) != 1 || len(n[0]) != 1 || n[0][0] == nil {
		return dbError(ctx, "count the Parquet file", err)
	}
	if rep.Rows, err = strconv.ParseInt(*n[0][0], 10, 64); err != nil || rep.Rows != int64(o.Rows) {
		return fmt.Errorf("bench: the Parquet file holds %s rows, not %d: remove it to write it again", *n[0][0], o.Rows)
	}
	hand, handND := duckHandAggregateSQL(duckTable, true), duckHandAggregateSQL(duckTable, false)
	var counts, hands, handsND, profiles, pgs []time.Duration
	var last, lastPG *source.TableProfile
	rep.LoadBefore = loadAverage()
	for round := 0; round <= o.Runs; round++ {
		timed := round > 0
		label := "warm-up"
		if timed {
			label = "round " + strconv.Itoa(round)
		}
		var took [5]time.Duration // (a), (b), (b'), (d), (p)
		timeIt := func(k int, step string, f func() error) error {
			resetPeakRSS()
			start := time.Now()
			if err := f(); err != nil {
				return dbError(ctx, step, err)
			}
			took[k] = time.Since(start)
			peak := rssBytes("VmHWM")
			rep.PhasePeaks[k] = max(rep.PhasePeaks[k], peak)
			rep.RSSPeak = max(rep.RSSPeak, peak)
			return nil
		}
		query := func(stmt string) func() error {
			return func() error { _, err := duck.QueryRows(ctx, stmt, 1); return err }
		}
		if err := timeIt(0, "(a) count(*)", query(count)); err != nil {
			return err
		}
		if err := timeIt(1, "(b) the hand-written aggregate", query(hand)); err != nil {
			return err
		}
		if err := timeIt(2, "(b') the hand-written aggregate without distinct counts", query(handND)); err != nil {
			return err
		}
		duckLog.reset()
		if err := timeIt(3, "(d) the duckdb profile", func() (err error) {
			last, err = duck.Profile(ctx, duckTable, source.ProfileRequest{Depth: source.DepthStandard})
			return err
		}); err != nil {
			return err
		}
		recs := duckLog.take()
		pgLog.reset()
		if err := timeIt(4, "(p) the Postgres profile", func() (err error) {
			lastPG, err = pg.Profile(ctx, pgTable, source.ProfileRequest{Depth: source.DepthStandard})
			return err
		}); err != nil {
			return err
		}
		pgRecs := pgLog.take()
		fmt.Fprintf(progress, "  %s: count %s, hand %s, hand without distinct %s, profile %s, postgres %s\n", label,
			fmtDuration(took[0]), fmtDuration(took[1]), fmtDuration(took[2]), fmtDuration(took[3]), fmtDuration(took[4]))
		if !timed {
			continue
		}
		counts, hands, handsND = append(counts, took[0]), append(hands, took[1]), append(handsND, took[2])
		profiles, pgs = append(profiles, took[3]), append(pgs, took[4])
		rep.ProfileStatements, rep.PostgresStatements = len(recs), len(pgRecs)
		rep.ProfilePhases = rep.ProfilePhases[:0]
		for _, r := range recs {
			rep.ProfilePhases = append(rep.ProfilePhases, fmt.Sprintf("%s %s", fmtDuration(r.Duration), head(r.Statement, 60)))
		}
	}
	rep.LoadAfter = loadAverage()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.GoSys = int64(ms.Sys)
	rep.CountStar, rep.HandAggregate, rep.HandNoDistinct = newTiming(counts), newTiming(hands), newTiming(handsND)
	rep.Profile, rep.Postgres = newTiming(profiles), newTiming(pgs)
	rep.SampleSize, rep.SampleMethod = last.SampleSize, last.SampleMethod
	rep.DistinctSampleSize, rep.DistinctSampleMethod = last.DistinctSampleSize, last.DistinctSampleMethod
	rep.Agree, rep.Mismatches = compareProfiles(last, lastPG)
	if rep.HandAggregate.Median > 0 {
		rep.ProfileVsHand = float64(rep.Profile.Median) / float64(rep.HandAggregate.Median)
	}
	if rep.Postgres.Median > 0 {
		rep.ProfileVsPostgres = float64(rep.Profile.Median) / float64(rep.Postgres.Median)
	}
	return nil
}

// onlyTable discovers s and returns its table named name (or its only table for "").
func onlyTable(ctx context.Context, s source.Source, name string) (source.Table, error) {
	tables, err := s.Discover(ctx)
	if err != nil {
		return source.Table{}, dbError(ctx, "discover", err)
	}
	for _, t := range tables {
		if (name == "" && len(tables) == 1) || t.Name == name {
			return t, nil
		}
	}
	return source.Table{}, errors.New("bench: the benchmark table is not among the discovered tables")
}

// compareProfiles compares the exact figures of two profiles of the same rows: row count,
// null counts, numeric extremes and temporal extremes.
func compareProfiles(a, b *source.TableProfile) (agree int, mismatches []string) {
	if a.RowCount != b.RowCount {
		mismatches = append(mismatches, "row count")
	}
	byName := map[string]source.ColumnProfile{}
	for _, c := range b.Columns {
		byName[c.Name] = c
	}
	for _, c := range a.Columns {
		o, ok := byName[c.Name]
		same := ok && c.NullCount == o.NullCount && sameDecimal(c.Min, o.Min) && sameDecimal(c.Max, o.Max) &&
			sameTime(c.MinTime, o.MinTime) && sameTime(c.MaxTime, o.MaxTime) &&
			sameInt(c.MinLength, o.MinLength) && sameInt(c.MaxLength, o.MaxLength)
		if same {
			agree++
		} else {
			mismatches = append(mismatches, c.Name)
		}
	}
	return agree, mismatches
}

func sameDecimal[T ~string](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, err1 := strconv.ParseFloat(string(*a), 64)
	y, err2 := strconv.ParseFloat(string(*b), 64)
	return err1 == nil && err2 == nil && x == y
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func sameInt(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// resetPeakRSS resets the process's peak resident set size (VmHWM) to its current size.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// rssBytes reads a memory field of /proc/self/status (VmRSS, VmHWM) in bytes; -1 when
// the system does not say.
func rssBytes(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n * 1024
				}
			}
		}
	}
	return -1
}

// parseBytes reads a DuckDB memory limit ("1GB", "512MiB") in bytes: DuckDB's KB, MB, GB
// are powers of 1000, KiB, MiB, GiB of 1024.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	t := strings.TrimSpace(s)
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || f <= 0 {
				break
			}
			return int64(f * u.mult), nil
		}
	}
	return 0, errors.New("bench: the memory limit must read like 1GB or 512MiB")
}

// Print writes the report: timings, ratios, memory and the agreement of both engines.
func (r DuckDBProfileReport) Print(w io.Writer) {
	built := "reused"
	if r.Built {
		built = "written in " + fmtDuration(r.BuildTime)
	}
	fmt.Fprintf(w, "Profile benchmark: DuckDB (%s), %s rows x %d columns as Parquet %s (%s, %s)\n",
		r.EngineInfo, groupDigits(r.Rows), r.Columns, r.File, fmtBytes(r.FileBytes), built)
	fmt.Fprintf(w, "DuckDB session: memory_limit %s, threads %d. Medians of %d timed rounds after one untimed warm-up round, each round (a), (b), (d), (p) once, interleaved.\n",
		r.MemoryLimit, r.Threads, r.Runs)
	if r.LoadBefore >= 0 && r.LoadAfter >= 0 {
		fmt.Fprintf(w, "Machine load (1-min average): %.2f at start, %.2f at end, on %d CPUs.\n", r.LoadBefore, r.LoadAfter, runtime.NumCPU())
	}
	fmt.Fprintf(w, "Profile: depth standard, %d statements; masks on %s rows (%s), distinct estimates on %s rows (%s)\n\n",
		r.ProfileStatements, groupDigits(int64(r.SampleSize)), r.SampleMethod, groupDigits(int64(r.DistinctSampleSize)), r.DistinctSampleMethod)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measurement\tmedian\tmin\tmax\t")
	row := func(name string, t Timing) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, fmtDuration(t.Median), fmtDuration(t.Min()), fmtDuration(t.Max()))
	}
	row("(a) SELECT count(*)", r.CountStar)
	row("(b) hand-written DuckDB aggregate (with approx_count_distinct)", r.HandAggregate)
	row("(b') the same without approx_count_distinct (information)", r.HandNoDistinct)
	row("(d) Source.Profile via the duckdb connector", r.Profile)
	row(fmt.Sprintf("(p) Source.Profile of the same rows in Postgres, %d statements", r.PostgresStatements), r.Postgres)
	tw.Flush()
	fmt.Fprintln(w, "\nthe last DuckDB profile's statements (duration, start):")
	for _, p := range r.ProfilePhases {
		fmt.Fprintf(w, "  %s\n", p)
	}
	pass := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	fmt.Fprintf(w, "\nprofile / (b): %.3f %s (target ≤ %.1f)\n", r.ProfileVsHand, pass(r.ProfileVsHand > 0 && r.ProfileVsHand <= TargetDuckDBProfileVsHand), TargetDuckDBProfileVsHand)
	if r.HandNoDistinct.Median > 0 {
		fmt.Fprintf(w, "profile / (b'): %.3f (information: the exact figures alone, no distinct counts)\n", float64(r.Profile.Median)/float64(r.HandNoDistinct.Median))
	}
	fmt.Fprintf(w, "profile DuckDB / profile Postgres: %.3f\n", r.ProfileVsPostgres)
	fmt.Fprintf(w, "peak RSS %s, %s before the DuckDB connection opened: +%s against memory_limit %s: %s\n",
		fmtBytes(r.RSSPeak), fmtBytes(r.RSSBefore), fmtBytes(r.RSSPeak-r.RSSBefore), r.MemoryLimit, pass(r.WithinMemoryLimit()))
	fmt.Fprintf(w, "peak RSS by measurement: (a) %s, (b) %s, (b') %s, (d) %s, (p) %s; the Go runtime holds %s of it at the end\n",
		fmtBytes(r.PhasePeaks[0]), fmtBytes(r.PhasePeaks[1]), fmtBytes(r.PhasePeaks[2]), fmtBytes(r.PhasePeaks[3]), fmtBytes(r.PhasePeaks[4]), fmtBytes(r.GoSys))
	fmt.Fprintf(w, "both engines' exact figures (row count, null counts, min/max, lengths): %d/%d columns agree %s", r.Agree, r.Columns, pass(len(r.Mismatches) == 0))
	if len(r.Mismatches) > 0 {
		fmt.Fprintf(w, " (differ: %s)", strings.Join(r.Mismatches, ", "))
	}
	fmt.Fprintln(w)
}
