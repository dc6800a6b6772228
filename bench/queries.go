package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/source"
)

// handAggregateSQL is (b): the standard profile's statistics in one statement, written
// here by hand rather than taken from connect.ProfileSQL, as a person would write it.
func handAggregateSQL(cols []benchColumn) string {
	exprs := []string{"count(*)"}
	for _, c := range cols {
		q := quoteIdent(c.name)
		exprs = append(exprs, "count("+q+")")
		switch c.class {
		case source.ClassNumeric, source.ClassTemporal:
			exprs = append(exprs, "min("+q+")", "max("+q+")")
		case source.ClassText:
			exprs = append(exprs, "min(length("+q+"))", "max(length("+q+"))", "avg(length("+q+"))")
		}
	}
	return "SELECT " + strings.Join(exprs, ", ") + " FROM " + qualifiedTable()
}

// perColumnSQL is (c): what a naive profiler sends, one statement per column per metric.
func perColumnSQL(cols []benchColumn) []string {
	from := " FROM " + qualifiedTable()
	stmts := []string{"SELECT count(*)" + from}
	for _, c := range cols {
		q := quoteIdent(c.name)
		stmts = append(stmts, "SELECT count(*)"+from+" WHERE "+q+" IS NULL")
		switch c.class {
		case source.ClassNumeric, source.ClassTemporal:
			stmts = append(stmts, "SELECT min("+q+")"+from, "SELECT max("+q+")"+from)
		case source.ClassText:
			stmts = append(stmts, "SELECT min(length("+q+"))"+from, "SELECT max(length("+q+"))"+from,
				"SELECT avg(length("+q+"))"+from)
		}
	}
	return stmts
}

// drain runs a statement and reads every value of every row.
func drain(ctx context.Context, db *sql.DB, stmt string) error {
	rows, err := db.QueryContext(ctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]sql.RawBytes, len(names))
	dests := make([]any, len(names))
	for i := range vals {
		dests[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dests...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// exactDistinct is (f): count(DISTINCT) of every column in one statement, run once.
func (r *run) exactDistinct(ctx context.Context) ([]int64, error) {
	exprs := make([]string, len(r.cols))
	for i, c := range r.cols {
		exprs[i] = "count(DISTINCT " + quoteIdent(c.name) + ")"
	}
	stmt := "SELECT " + strings.Join(exprs, ", ") + " FROM " + qualifiedTable()
	truth := make([]int64, len(r.cols))
	dests := make([]any, len(truth))
	for i := range truth {
		dests[i] = &truth[i]
	}
	fmt.Fprintf(r.progress, "(f) exact count(DISTINCT) of every column (once):")
	start := time.Now()
	if err := r.db.QueryRowContext(ctx, stmt).Scan(dests...); err != nil {
		fmt.Fprintln(r.progress)
		return nil, dbError(ctx, "exact distinct", err)
	}
	r.rep.ExactDistinct = newTiming([]time.Duration{time.Since(start)})
	fmt.Fprintf(r.progress, " %s\n", fmtDuration(r.rep.ExactDistinct.Median))
	return truth, nil
}

// compareDistinct checks every run's estimate of every column against the truth.
func compareDistinct(cols []benchColumn, truth []int64, profiles []*source.TableProfile) []DistinctCheck {
	var out []DistinctCheck
	for i, c := range cols {
		chk := DistinctCheck{Column: c.name, Class: c.class, True: truth[i]}
		var errs, widths []float64
		for _, p := range profiles {
			j := slices.IndexFunc(p.Columns, func(cp source.ColumnProfile) bool { return cp.Name == c.name })
			if j < 0 || p.Columns[j].Distinct == nil {
				continue
			}
			e := *p.Columns[j].Distinct
			chk.Estimates = append(chk.Estimates, e)
			if float64(chk.True) >= e.CI95[0] && float64(chk.True) <= e.CI95[1] {
				chk.Inside++
			}
			errs = append(errs, relErr(e.Value, chk.True))
			widths = append(widths, (e.CI95[1]-e.CI95[0])/float64(max(chk.True, 1)))
		}
		if len(errs) > 0 {
			slices.Sort(errs)
			chk.WorstRelErr = errs[len(errs)-1]
			chk.MedianRelErr = medianOf(errs)
			chk.MedianWidth = medianOf(widths)
		}
		out = append(out, chk)
	}
	return out
}

// medianOf returns the median of xs (sorting them).
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func relErr(est float64, truth int64) float64 {
	if truth == 0 {
		if est == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(est-float64(truth)) / float64(truth)
}

// readSample runs a sample statement whose first nvalues columns are values (the masks
// sample's) and whose other columns are 64-bit hashes (the distinct sample's), and keeps
// each column's non-null values and hashes.
func readSample(ctx context.Context, db *sql.DB, stmt string, nvalues int) (values [][][]byte, hashes [][]uint64, err error) {
	rows, err := db.QueryContext(ctx, stmt)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	if len(names) < nvalues {
		return nil, nil, fmt.Errorf("bench: the sample has %d columns, want at least %d", len(names), nvalues)
	}
	vals := make([]textValue, nvalues)
	hs := make([]sql.NullInt64, len(names)-nvalues)
	dests := make([]any, 0, len(names))
	for i := range vals {
		dests = append(dests, &vals[i])
	}
	for i := range hs {
		dests = append(dests, &hs[i])
	}
	values, hashes = make([][][]byte, nvalues), make([][]uint64, len(hs))
	for rows.Next() {
		if err := rows.Scan(dests...); err != nil {
			return nil, nil, err
		}
		for i, v := range vals {
			if !v.null {
				values[i] = append(values[i], slices.Clone(v.b))
			}
		}
		for i, h := range hs {
			if h.Valid {
				hashes[i] = append(hashes[i], uint64(h.Int64))
			}
		}
	}
	return values, hashes, rows.Err()
}

// textValue scans a text value, telling NULL from the empty string (sql.RawBytes does not).
type textValue struct {
	b    []byte
	null bool
}

// Scan implements sql.Scanner.
func (v *textValue) Scan(src any) error {
	v.null = false
	switch x := src.(type) {
	case nil:
		v.null = true
	case []byte:
		v.b = append(v.b[:0], x...)
	case string:
		v.b = append(v.b[:0], x...)
	default:
		return errors.New("bench: sampled value is not text")
	}
	return nil
}

// fmtDuration prints a duration with three significant figures.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + fmtDuration(-d)
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 0, 64) + "µs"
	}
}
