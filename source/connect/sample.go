package connect

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/vigia-data/vigia/source"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/source/distinct"
	"github.com/vigia-data/vigia/source/semantic"
)

// keysMaxFactor bounds how many candidate keys the key method may draw per wanted row:
// a sparser key range would make the statement long for few rows, and Bernoulli is used.
const keysMaxFactor = 4

// maxExactKey is the largest key the key method draws: min/max come back as float64,
// exact up to 2^53.
const maxExactKey = 1 << 53

// rawValue scans any driver value into reused bytes; nothing is kept past the row.
type rawValue struct {
	b    []byte
	null bool
}

// Scan implements sql.Scanner.
func (r *rawValue) Scan(src any) error {
	r.null = false
	switch v := src.(type) {
	case nil:
		r.null = true
	case []byte:
		r.b = append(r.b[:0], v...)
	case string:
		r.b = append(r.b[:0], v...)
	case int64:
		r.b = strconv.AppendInt(r.b[:0], v, 10)
	case float64:
		r.b = strconv.AppendFloat(r.b[:0], v, 'g', -1, 64)
	case bool:
		r.b = strconv.AppendBool(r.b[:0], v)
	case time.Time:
		r.b = v.AppendFormat(r.b[:0], time.RFC3339Nano)
	default:
		r.b = fmt.Appendf(r.b[:0], "%v", v)
	}
	return nil
}

// colAcc accumulates what one column's sampled values say: only counts and masks.
type colAcc struct {
	idx    int // into the table's columns
	masks  semantic.MaskCounter
	det    *semantic.Detector // nil when the column gets no semantic type
	counts map[uint64]int     // value hash → occurrences; nil when no estimate
	seed   maphash.Seed
}

func (a *colAcc) add(v []byte) {
	a.masks.AddBytes(v)
	if a.det != nil {
		a.det.AddBytes(v)
	}
	if a.counts != nil {
		a.counts[maphash.Bytes(a.seed, v)]++
	}
}

// sampleTable reads one bounded sample of t and fills masks, semantic types and (at depth
// standard, or deep for columns count(DISTINCT) cannot take) distinct estimates. It needs
// the aggregate's results in p: row count, null counts, and the key column's min/max.
//
// How the sample is drawn, cheapest first:
//   - the whole table when it has no more rows than the sample size ("full", exact);
//   - depth basic: the first rows, as the aggregate read them ("first_rows");
//   - Postgres tables and materialized views: TABLESAMPLE SYSTEM at the percentage that
//     gives the sample size from the exact count(*) the aggregate just returned (more
//     accurate than pg_class.reltuples, which may be stale or -1) ("tablesample");
//   - MySQL and SQLite tables with a single-column integer primary key: random key values
//     drawn uniformly between the key's min and max (known from the aggregate), fetched by
//     index with IN (...). Every existing row has the same chance, so this is a simple
//     random sample at the cost of n index lookups and no scan ("keys");
//   - otherwise (views, external tables, tables without such a key, very sparse keys, or a
//     block sample that came back too small): each row kept with probability n/N
//     ("bernoulli"), one more sequential pass and no sort.
func sampleTable(ctx context.Context, c *conn, t source.Table, cols []source.Column, req source.ProfileRequest, p *source.TableProfile) error {
	d := c.d
	var idx []int
	for i, col := range cols {
		if d.sampleable(col) {
			idx = append(idx, i)
		}
	}
	if p.RowCount == 0 {
		// An empty table has exactly no distinct values; there is nothing to sample.
		if req.Depth != source.DepthBasic {
			for _, i := range idx {
				if p.Columns[i].Distinct == nil {
					p.Columns[i].Distinct = &source.Estimate{Method: distinct.MethodExact}
				}
			}
		}
		return nil
	}
	if len(idx) == 0 {
		return nil
	}
	exprs := make([]string, len(idx))
	for j, i := range idx {
		exprs[j] = d.sampleValue(d.quote(cols[i].Name))
	}
	sel := "SELECT " + strings.Join(exprs, ", ") + " FROM " + d.table(t)
	n := req.SampleSize
	frac := float64(n) / float64(p.RowCount)
	limit2n := " LIMIT " + strconv.Itoa(2*n)

	run := func(stmt string) ([]*colAcc, int, error) {
		accs := newAccumulators(cols, idx, req, p)
		vals := make([]rawValue, len(idx))
		dests := make([]any, len(idx))
		for j := range vals {
			dests[j] = &vals[j]
		}
		rows, err := c.query(ctx, req.Operation, "profile", stmt, nil, func(r *sql.Rows) error {
			if err := r.Scan(dests...); err != nil {
				return c.resultError("profile")
			}
			for j := range vals {
				if !vals[j].null {
					accs[j].add(vals[j].b)
				}
			}
			return nil
		})
		return accs, int(rows), err
	}

	var (
		accs   []*colAcc
		got    int
		err    error
		method string
		full   bool
	)
	switch {
	case req.Depth == source.DepthBasic:
		method = source.SampleFirstRows
		accs, got, err = run(sel + " LIMIT " + strconv.Itoa(min(n, source.BasicRows)))
		full = !p.Truncated && int64(got) == p.RowCount
	case p.RowCount <= int64(n):
		method = source.SampleFull
		accs, got, err = run(sel + " LIMIT " + strconv.Itoa(n))
		full = got < n || int64(got) == p.RowCount
		if !full {
			method = source.SampleFirstRows // the table grew past the sample size meanwhile
		}
	default:
		if ts := d.tableSample(t, 100*frac); ts != "" {
			method = source.SampleTableSample
			accs, got, err = run(sel + " " + ts + limit2n)
			if err == nil && got < n/4 {
				method = "" // a few blocks happened to be drawn: fall back below
			}
		} else if stmt, ok := keySampleSQL(d, t, p, sel, n); ok {
			method = source.SampleKeys
			accs, got, err = run(stmt)
		}
		if method == "" && err == nil {
			method = source.SampleBernoulli
			accs, got, err = run(sel + " WHERE " + d.random(frac) + limit2n)
		}
	}
	if err != nil {
		return err
	}
	p.SampleSize = got
	p.SampleMethod = method
	if full {
		p.SampleMethod = source.SampleFull
	}
	for _, a := range accs {
		finishColumn(a, &p.Columns[a.idx], full, p.RowCount)
	}
	return nil
}

func newAccumulators(cols []source.Column, idx []int, req source.ProfileRequest, p *source.TableProfile) []*colAcc {
	seed := maphash.MakeSeed()
	accs := make([]*colAcc, len(idx))
	for j, i := range idx {
		a := &colAcc{idx: i, seed: seed}
		switch cols[i].Class {
		case source.ClassTemporal, source.ClassBoolean:
		default:
			a.det = semantic.NewDetector(req.Country)
		}
		if req.Depth != source.DepthBasic && p.Columns[i].Distinct == nil {
			a.counts = make(map[uint64]int)
		}
		accs[j] = a
	}
	return accs
}

func finishColumn(a *colAcc, cp *source.ColumnProfile, full bool, rowCount int64) {
	for _, m := range a.masks.Top(semantic.MaxMasks) {
		cp.Masks = append(cp.Masks, source.MaskCount{Mask: m.Mask, Count: m.Count})
	}
	if a.det != nil {
		if r := a.det.Result(); r != nil {
			cp.Semantic = &source.Semantic{
				Type:       r.Type,
				Region:     r.Region,
				Estimated:  !full,
				SampleSize: r.Total,
				Matches:    r.Matches,
				Valid:      r.Valid,
			}
		}
	}
	if a.counts != nil {
		s := distinct.FromCounts(a.counts)
		var e distinct.Estimate
		if full {
			e = distinct.Exact(s.D)
		} else {
			// The population is the column's non-null values, known exactly from the
			// aggregate (never fewer than were sampled, should the table have grown).
			e = distinct.EstimateFrom(s, max(rowCount-cp.NullCount, int64(s.N)))
		}
		cp.Distinct = &source.Estimate{
			Value:      e.Value,
			Estimated:  !e.Exact,
			SampleSize: s.N,
			CI95:       [2]float64{e.Lower, e.Upper},
			Method:     e.Method,
		}
	}
}

// keySampleSQL builds the key-method statement: m distinct keys drawn uniformly between
// the key's min and max, m chosen so that about n of them exist given the table's density.
func keySampleSQL(d dialect, t source.Table, p *source.TableProfile, sel string, n int) (string, bool) {
	k := d.keyColumn(t)
	if k < 0 || k >= len(p.Columns) || p.Columns[k].Min == nil || p.Columns[k].Max == nil {
		return "", false
	}
	lo, hi := *p.Columns[k].Min, *p.Columns[k].Max
	if lo != math.Trunc(lo) || hi != math.Trunc(hi) || math.Abs(lo) > maxExactKey || math.Abs(hi) > maxExactKey || hi < lo {
		return "", false
	}
	span := int64(hi) - int64(lo) + 1
	m := int64(math.Ceil(float64(n) * float64(span) / float64(p.RowCount)))
	if m > int64(keysMaxFactor*n) || m >= span {
		return "", false
	}
	keys := drawDistinct(int64(lo), span, int(m))
	var b strings.Builder
	b.Grow(len(sel) + len(keys)*12)
	b.WriteString(sel)
	b.WriteString(" WHERE ")
	b.WriteString(d.quote(t.Columns[k].Name))
	b.WriteString(" IN (")
	for i, key := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(key, 10))
	}
	b.WriteString(")")
	return b.String(), true
}

// drawDistinct returns m distinct integers drawn uniformly from [lo, lo+span), sorted
// (Floyd's algorithm: m draws, no rejection loop).
func drawDistinct(lo, span int64, m int) []int64 {
	seen := make(map[int64]struct{}, m)
	out := make([]int64, 0, m)
	for j := span - int64(m); j < span; j++ {
		v := rand.Int64N(j + 1)
		if _, dup := seen[v]; dup {
			v = j
		}
		seen[v] = struct{}{}
		out = append(out, lo+v)
	}
	slices.Sort(out)
	return out
}
