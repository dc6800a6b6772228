package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
	"github.com/vigia-data/vigia/source/distinct"
	"github.com/vigia-data/vigia/source/semantic"
)

// step is one measurement of a round. f times itself, so that a step can leave out of its
// duration what is not part of it, and keep what it learnt (a profile, a sample).
type step struct {
	label string
	dst   *Timing
	f     func(context.Context) (time.Duration, error)
	runs  []time.Duration
}

// measure runs the measurements in rounds: one untimed warm-up round, then Runs timed
// rounds, each running every step once in the same order. Interleaving them, rather than
// repeating one step Runs times before the next, spreads whatever else the machine is doing
// over every step alike, so that the ratios stay fair on a busy machine. (f), the exact
// distinct counts, runs once at the end.
func (r *run) measure(ctx context.Context, benchDSN string) error {
	r.cols = benchColumns()
	if err := r.db.QueryRowContext(ctx, "SELECT pg_total_relation_size(to_regclass($1))", "public."+tableName).Scan(&r.rep.TableBytes); err != nil {
		return dbError(ctx, "read the table size", err)
	}

	rec := &recorder{}
	src, err := connect.Open(ctx, source.Postgres, benchDSN, source.Options{StatementTimeout: profileStatementTimeout, Recorder: rec})
	if err != nil {
		return fmt.Errorf("bench: open the source: %w", err)
	}
	defer src.Close()
	tables, err := src.Discover(ctx)
	if err != nil {
		return fmt.Errorf("bench: discover: %w", err)
	}
	i := slices.IndexFunc(tables, func(t source.Table) bool { return t.Schema == "public" && t.Name == tableName })
	if i < 0 {
		return errors.New("bench: discover did not list the benchmark table")
	}
	table := tables[i]
	req := source.ProfileRequest{Depth: source.DepthStandard, Country: source.DefaultCountry, SampleSize: r.o.SampleSize}
	aggStmts, err := connect.ProfileSQL(source.Postgres, table, req)
	if err != nil {
		return fmt.Errorf("bench: profile SQL: %w", err)
	}
	hand := handAggregateSQL(r.cols)
	perColumn := perColumnSQL(r.cols)
	r.rep.PerColumnStatements = len(perColumn)

	var (
		rows                  int64
		last                  *source.TableProfile   // the profile of the current round
		profiles              []*source.TableProfile // of the timed rounds
		agg, smp              []time.Duration        // per Profile run, from its query log
		values                [][][]byte             // the replayed masks sample of the current round
		hashes                [][]uint64             // the replayed distinct sample of the current round
		masksSQL, distinctSQL string                 // the current round's sample statements
		timed                 = func(f func(context.Context) error) func(context.Context) (time.Duration, error) {
			return func(ctx context.Context) (time.Duration, error) {
				start := time.Now()
				err := f(ctx)
				return time.Since(start), err
			}
		}
	)
	steps := []*step{
		{label: "(a)", dst: &r.rep.CountStar, f: timed(func(ctx context.Context) error {
			return r.db.QueryRowContext(ctx, "SELECT count(*) FROM "+qualifiedTable()).Scan(&rows)
		})},
		{label: "(b)", dst: &r.rep.HandAggregate, f: timed(func(ctx context.Context) error {
			return drain(ctx, r.db, hand)
		})},
		{label: "(b')", dst: &r.rep.HandAggregateNoJIT, f: timed(func(ctx context.Context) error {
			return drain(ctx, r.profileDB, hand)
		})},
		{label: "(c)", dst: &r.rep.PerColumn, f: timed(func(ctx context.Context) error {
			for _, s := range perColumn {
				if err := drain(ctx, r.db, s); err != nil {
					return err
				}
			}
			return nil
		})},
		{label: "(d)", dst: &r.rep.Profile, f: func(ctx context.Context) (time.Duration, error) {
			rec.reset()
			start := time.Now()
			p, err := src.Profile(ctx, table, req)
			d := time.Since(start)
			if err != nil {
				return d, err
			}
			records := rec.take()
			var a, s time.Duration
			for j, q := range records {
				if j < len(aggStmts) {
					a += q.Duration
				} else {
					s += q.Duration
				}
			}
			r.rep.ProfileStatements = len(records)
			last = p
			profiles, agg, smp = append(profiles, p), append(agg, a), append(smp, s)
			return d, nil
		}},
		{label: "(e)", dst: &r.rep.ProfileAggregate, f: timed(func(ctx context.Context) error {
			for _, s := range aggStmts {
				if err := drain(ctx, r.profileDB, s); err != nil {
					return err
				}
			}
			return nil
		})},
		{label: "read", dst: &r.rep.SampleRead, f: func(ctx context.Context) (time.Duration, error) {
			// The statements Profile sends after its aggregate, from the seam it plans them
			// with (a key sample draws new keys each time, as each Profile does).
			var err error
			if masksSQL, distinctSQL, err = connect.SampleSQL(source.Postgres, table, last, req); err != nil {
				return 0, err
			}
			start := time.Now()
			values, hashes, err = readSample(ctx, r.profileDB, masksSQL, len(table.Columns))
			return time.Since(start), err
		}},
		{label: "masks", dst: &r.rep.MasksSemantic, f: timed(func(context.Context) error {
			replayMasks(table, values, req)
			return nil
		})},
		{label: "dread", dst: &r.rep.DistinctSampleRead, f: timed(func(ctx context.Context) error {
			if distinctSQL == "" {
				// One statement read both samples (a table small enough to be read whole,
				// or too few pages drawn): its hashes came with the values.
				return nil
			}
			var err error
			_, hashes, err = readSample(ctx, r.profileDB, distinctSQL, 0)
			return err
		})},
		{label: "distinct", dst: &r.rep.DistinctEstimation, f: timed(func(context.Context) error {
			replayDistinct(hashes, last)
			return nil
		})},
	}
	fmt.Fprintf(r.progress, "(a) count(*)  (b) hand-written aggregate  (b') the same, JIT off  (c) per-column pattern, %d statements\n", len(perColumn))
	fmt.Fprintf(r.progress, "(d) Profile  (e) ProfileSQL aggregate alone  read/masks/dread/distinct: the sample phase replayed\n")
	for round := 0; round <= r.o.Runs; round++ {
		if round == 0 {
			fmt.Fprintf(r.progress, "warm-up round:")
		} else {
			fmt.Fprintf(r.progress, "round %d/%d:", round, r.o.Runs)
		}
		for _, s := range steps {
			d, err := s.f(ctx)
			if err != nil {
				fmt.Fprintln(r.progress)
				return dbError(ctx, "measure "+s.label, err)
			}
			fmt.Fprintf(r.progress, " %s %s", s.label, fmtDuration(d))
			if round > 0 {
				s.runs = append(s.runs, d)
			}
		}
		fmt.Fprintln(r.progress)
		if round == 0 { // forget the warm-up's profile
			profiles, agg, smp = nil, nil, nil
		}
	}
	for _, s := range steps {
		*s.dst = newTiming(s.runs)
	}
	r.rep.Rows = rows
	r.rep.SampleSize, r.rep.SampleMethod = last.SampleSize, last.SampleMethod
	r.rep.DistinctSampleSize, r.rep.DistinctSampleMethod = last.DistinctSampleSize, last.DistinctSampleMethod
	finish := make([]time.Duration, len(r.rep.Profile.Runs))
	for k, d := range r.rep.Profile.Runs {
		finish[k] = d - agg[k] - smp[k]
	}
	r.rep.InProfileAggregate, r.rep.InProfileSample, r.rep.InProfileFinish = newTiming(agg), newTiming(smp), newTiming(finish)

	truth, err := r.exactDistinct(ctx)
	if err != nil {
		return err
	}
	r.rep.Distinct = compareDistinct(r.cols, truth, profiles)
	return nil
}

// replayMasks computes what the connector computes on the masks sample: masks of every
// column, a semantic type for all but temporal and boolean ones, the detectors told how
// many values to expect as the connector tells them (the sample size asked for).
func replayMasks(t source.Table, values [][][]byte, req source.ProfileRequest) {
	for i, c := range t.Columns {
		var mc semantic.MaskCounter
		var det *semantic.Detector
		if c.Class != source.ClassTemporal && c.Class != source.ClassBoolean {
			det = semantic.NewDetector(req.Country)
			det.ExpectValues(req.SampleSize)
		}
		for _, v := range values[i] {
			mc.AddBytes(v)
			if det != nil {
				det.AddBytes(v)
			}
		}
		_ = mc.Top(semantic.MaxMasks)
		if det != nil {
			_ = det.Result()
		}
	}
}

// replayDistinct computes what the connector computes on the distinct sample's hashes:
// their frequencies, then the estimator.
func replayDistinct(hashes [][]uint64, p *source.TableProfile) {
	for i, h := range hashes {
		s := distinct.FromHashes(h)
		_ = distinct.EstimateFrom(s, max(p.RowCount-p.Columns[i].NullCount, int64(s.N)))
	}
}
