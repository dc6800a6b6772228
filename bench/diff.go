package bench

import (
	"context"
	"fmt"
	"io"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// Targets of the diff benchmark (issue 15).
const (
	TargetDiffVsHash    = 2.0 // diff time / one full hash aggregate of both tables
	TargetDiffBytesPct  = 1.0 // bytes the sources answered, % of both tables' size
	DefaultDiffRows     = 5_000_000
	DefaultDiffDatabase = "vigia_bench_diff"
	diffChangedRows     = 10
)

// DiffOptions configures RunDiff.
type DiffOptions struct {
	// DSN is an admin Postgres URL (default DefaultProfileDSN); never printed.
	DSN string
	// Rows of each table (default DefaultDiffRows).
	Rows int
	// Keep keeps the tables for the next run with the same Rows.
	Keep bool
}

// DiffReport is what RunDiff measured.
type DiffReport struct {
	Rows           int
	TableBytes     int64 // both tables, heap and indexes
	HashAggregate  time.Duration
	Diff           time.Duration
	Report         datadiff.Report
	HeapBefore     uint64
	HeapPeak       uint64
	ChangedPlanted int
}

// Print writes the figures and the targets.
func (r DiffReport) Print(w io.Writer) {
	m := r.Report.Method
	fmt.Fprintf(w, "diff of two %d-row Postgres tables differing in %d rows\n", r.Rows, r.ChangedPlanted)
	fmt.Fprintf(w, "  full hash aggregate of both tables: %v\n", r.HashAggregate.Round(time.Millisecond))
	fmt.Fprintf(w, "  diff: %v (%.2f× the hash aggregate; target ≤ %.1f×)\n", r.Diff.Round(time.Millisecond), r.ratio(), TargetDiffVsHash)
	fmt.Fprintf(w, "  found: changed %d, only in A %d, only in B %d\n", r.Report.Changed, r.Report.OnlyInA, r.Report.OnlyInB)
	fmt.Fprintf(w, "  buckets %d, differing %d, statements %d, rows answered %d\n", m.Buckets, m.DifferingBuckets, m.Statements, m.RowsFetched)
	fmt.Fprintf(w, "  bytes answered %d of %d table bytes = %.4f%% (target ≤ %.1f%%)\n", m.BytesTransferred, r.TableBytes, r.bytesPct(), TargetDiffBytesPct)
	fmt.Fprintf(w, "  Go heap: %d KiB before, %d KiB peak during the diff\n", r.HeapBefore/1024, r.HeapPeak/1024)
	fmt.Fprintf(w, "  targets met: %v\n", r.Passed())
}

func (r DiffReport) ratio() float64 { return r.Diff.Seconds() / r.HashAggregate.Seconds() }
func (r DiffReport) bytesPct() float64 {
	return 100 * float64(r.Report.Method.BytesTransferred) / float64(r.TableBytes)
}

// Passed reports whether the targets were met and the differences found exactly.
func (r DiffReport) Passed() bool {
	return r.ratio() <= TargetDiffVsHash && r.bytesPct() <= TargetDiffBytesPct && r.Report.Changed == int64(r.ChangedPlanted) &&
		r.Report.OnlyInA == 0 && r.Report.OnlyInB == 0
}

// RunDiff builds two equal tables of o.Rows rows in a dedicated Postgres database,
// changes diffChangedRows rows of the second, times one full hash aggregate of both,
// then the diff.
func RunDiff(ctx context.Context, o DiffOptions, log io.Writer) (DiffReport, error) {
	if o.DSN == "" {
		o.DSN = DefaultProfileDSN
	}
	if o.Rows <= 0 {
		o.Rows = DefaultDiffRows
	}
	dsn, err := dsnWithDatabase(o.DSN, DefaultDiffDatabase)
	if err != nil {
		return DiffReport{}, err
	}
	admin, err := openDB(o.DSN)
	if err != nil {
		return DiffReport{}, err
	}
	_, err = ensureDatabase(ctx, admin, DefaultDiffDatabase)
	admin.Close()
	if err != nil {
		return DiffReport{}, err
	}
	db, err := openDB(dsn)
	if err != nil {
		return DiffReport{}, err
	}
	defer db.Close()
	var have int
	_ = db.QueryRowContext(ctx, `SELECT count(*) FROM diff_a`).Scan(&have)
	if have != o.Rows {
		fmt.Fprintf(log, "building two tables of %d rows...\n", o.Rows)
		for _, q := range []string{
			`DROP TABLE IF EXISTS diff_a, diff_b`,
			`CREATE TABLE diff_a (id bigint PRIMARY KEY, cliente text, valor numeric(12,2), criada timestamp, estado integer)`,
			fmt.Sprintf(`INSERT INTO diff_a SELECT i, 'cliente ' || i, (i %% 100000) / 100.0, timestamp '2024-01-01' + i * interval '1 second', i %% 7
				FROM generate_series(1, %d) i`, o.Rows),
			`CREATE TABLE diff_b (LIKE diff_a INCLUDING ALL)`,
			`INSERT INTO diff_b SELECT * FROM diff_a`,
			`VACUUM ANALYZE diff_a`, `VACUUM ANALYZE diff_b`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return DiffReport{}, dbError(ctx, "build the tables", err)
			}
		}
	}
	// The planted differences are set afresh on every run.
	if _, err := db.ExecContext(ctx, `UPDATE diff_b SET valor = a.valor FROM diff_a a WHERE a.id = diff_b.id AND diff_b.valor <> a.valor`); err != nil {
		return DiffReport{}, err
	}
	step := o.Rows / diffChangedRows
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`UPDATE diff_b SET valor = valor + 1 WHERE id %% %d = 1 AND id <= %d`, step, step*diffChangedRows)); err != nil {
		return DiffReport{}, err
	}
	rep := DiffReport{Rows: o.Rows, ChangedPlanted: diffChangedRows}
	if err := db.QueryRowContext(ctx, `SELECT pg_total_relation_size('diff_a') + pg_total_relation_size('diff_b')`).Scan(&rep.TableBytes); err != nil {
		return DiffReport{}, err
	}
	if !o.Keep {
		defer func() { _, _ = db.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS diff_a, diff_b`) }()
	}
	open := func() (source.Source, error) {
		return connect.Open(ctx, source.Postgres, dsn, source.Options{StatementTimeout: profileStatementTimeout})
	}
	srcA, err := open()
	if err != nil {
		return DiffReport{}, err
	}
	defer srcA.Close()
	srcB, err := open()
	if err != nil {
		return DiffReport{}, err
	}
	defer srcB.Close()
	cols := []catalog.Column{{Name: "id", Class: source.ClassNumeric, DataType: "bigint"}, {Name: "cliente", Class: source.ClassText},
		{Name: "valor", Class: source.ClassNumeric}, {Name: "criada", Class: source.ClassTemporal}, {Name: "estado", Class: source.ClassNumeric}}
	names := []string{"cliente", "criada", "estado", "id", "valor"}
	a := datadiff.Side{Source: srcA, Schema: "public", Table: "diff_a", Columns: cols}
	b := datadiff.Side{Source: srcB, Schema: "public", Table: "diff_b", Columns: cols}

	// Warm both tables once so that neither timing pays the first read from disk.
	for _, s := range []datadiff.Side{a, b} {
		if _, err := s.Source.QueryRows(ctx, datadiff.FullHashStatement(s, names), 1); err != nil {
			return DiffReport{}, err
		}
	}
	start := time.Now()
	for _, s := range []datadiff.Side{a, b} {
		if _, err := s.Source.QueryRows(ctx, datadiff.FullHashStatement(s, names), 1); err != nil {
			return DiffReport{}, err
		}
	}
	rep.HashAggregate = time.Since(start)

	var peak atomic.Uint64
	rep.HeapBefore = heapBytes()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start = time.Now()
	buckets := 64
	for int64(buckets)*datadiff.RowsPerBucket < int64(o.Rows) && buckets < datadiff.MaxBuckets {
		buckets *= 2
	}
	res, err := datadiff.CompareSources(ctx, a, b, []string{"id"}, names, buckets, datadiff.MaxSample, func(stage string, done, total int) {
		fmt.Fprintf(log, "  %s %d/%d (%v)\n", stage, done, total, time.Since(start).Round(time.Millisecond))
	})
	rep.Diff = time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		return DiffReport{}, err
	}
	rep.Report, rep.HeapPeak = res, peak.Load()
	return rep, nil
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
