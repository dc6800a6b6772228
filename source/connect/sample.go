package connect

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/vigia-data/vigia/source"
	"hash/fnv"
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

// keysMaxShare is the largest share of a table the key method fetches: one index lookup
// costs many sequential row reads, so above it a scan keeping each row is cheaper.
const keysMaxShare = 0.05

// maxKeySpan bounds the key range the key method draws from, so that span arithmetic
// never overflows int64.
const maxKeySpan = 1 << 62

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

// hashScan scans a 64-bit hash computed by the source, or hashes here the text it is
// handed (a dialect without a hash function, or a driver giving numbers as text).
type hashScan struct {
	h    uint64
	null bool
	seed maphash.Seed
}

// Scan implements sql.Scanner.
func (s *hashScan) Scan(src any) error {
	s.null = false
	switch v := src.(type) {
	case nil:
		s.null = true
	case int64:
		s.h = uint64(v)
	case uint64:
		s.h = v
	case []byte:
		s.h = maphash.Bytes(s.seed, v)
	case string:
		s.h = maphash.String(s.seed, v)
	default:
		return fmt.Errorf("connect: hash of type %T", src)
	}
	return nil
}

// maskAcc accumulates what one column's sampled values say about their shapes: mask
// counts and the semantic type, never a value.
type maskAcc struct {
	masks semantic.MaskCounter
	det   *semantic.Detector // nil when the column gets no semantic type
	// class is the column's; numeric and temporal values also feed nums (numbers, or
	// Unix seconds) for the quantiles.
	class string
	nums  []float64
}

// distinctAcc holds one hash per sampled non-null value of a column.
type distinctAcc struct {
	hashes []uint64
}

// sampleExpr is one expression of a sample statement and where its values go: a value
// (cut to sampleValueMax characters) to the masks, or a hash of the whole value to the
// distinct estimate.
type sampleExpr struct {
	col  int  // index in the table's columns
	hash bool // the source computes a hash of the value (dist set, mask nil)
	mask *maskAcc
	dist *distinctAcc
}

// sampler draws a profile's samples and reduces them.
type sampler struct {
	d    dialect
	t    source.Table
	cols []source.Column
	req  source.ProfileRequest
	p    *source.TableProfile
	seed maphash.Seed
	// rng draws what the sample chooses here (keys, the masks' share of a larger
	// sample), seeded by the table's identity: the same table with the same bounds gets
	// the same sample, so an unchanged table gives the same figures scan after scan.
	rng   *rand.Rand
	masks map[int]*maskAcc
	dists map[int]*distinctAcc
	// sampled are the columns read into the samples; distinctCols those of them that
	// need a distinct estimate.
	sampled, distinctCols []int
}

func newSampler(d dialect, t source.Table, cols []source.Column, req source.ProfileRequest, p *source.TableProfile) *sampler {
	ts := SampleSeed(t)
	s := &sampler{d: d, t: t, cols: cols, req: req, p: p, seed: maphash.MakeSeed(), rng: rand.New(rand.NewPCG(ts, ts^0x9e3779b97f4a7c15)),
		masks: map[int]*maskAcc{}, dists: map[int]*distinctAcc{}}
	for i, col := range cols {
		if !d.sampleable(col) {
			continue
		}
		s.sampled = append(s.sampled, i)
		a := &maskAcc{class: col.Class}
		switch col.Class {
		case source.ClassTemporal, source.ClassBoolean:
		default:
			a.det = semantic.NewDetector(req.Country)
		}
		s.masks[i] = a
		// The aggregate counts distinct values exactly at depth deep where it can.
		exact := req.Depth == source.DepthDeep && d.distinctable(col)
		if req.Depth != source.DepthBasic && !exact {
			s.distinctCols = append(s.distinctCols, i)
			s.dists[i] = &distinctAcc{}
		}
	}
	return s
}

// sampleStmt is one planned sample statement.
type sampleStmt struct {
	sql      string
	exprs    []sampleExpr
	method   string
	full     bool    // it reads the whole table
	limit    int     // its LIMIT (0: none)
	maskRate float64 // the share of its rows that feed the masks (0: none)
	expect   int64   // about how many rows feed the masks, for the semantic detectors
}

// samplePlan is what sampleTable sends: a masks statement and a distinct statement, or
// one statement for both (distinct nil, masks feeding the distinct hashes as well).
type samplePlan struct {
	masks    *sampleStmt
	distinct *sampleStmt
	// block says the masks statement reads pages; too few rows from it mean planning
	// again without blocks.
	block bool
}

// plan decides the statements (see sampleTable); noBlocks leaves block sampling out.
func (s *sampler) plan(noBlocks bool) samplePlan {
	n, p := s.req.SampleSize, s.p
	switch {
	case s.req.Depth == source.DepthBasic:
		exprs := s.maskExprs()
		rows := min(n, source.BasicRows)
		return samplePlan{masks: &sampleStmt{sql: s.selectSQL(exprs) + " LIMIT " + strconv.Itoa(rows), exprs: exprs, limit: rows,
			method: source.SampleFirstRows, full: !p.Truncated && p.RowCount <= int64(rows), maskRate: 1, expect: int64(rows)}}
	case p.RowCount <= int64(n):
		exprs := append(s.maskExprs(), s.hashExprs()...)
		return samplePlan{masks: &sampleStmt{sql: s.selectSQL(exprs) + " LIMIT " + strconv.Itoa(n), exprs: exprs, limit: n,
			method: source.SampleFull, full: true, maskRate: 1, expect: p.RowCount}}
	}
	nd := distinctSampleSize(s.req, len(s.distinctCols), p.RowCount)
	if ts := s.d.tableSample(s.t, 100*float64(n)/float64(p.RowCount)); ts != "" && !noBlocks {
		exprs := s.maskExprs()
		pl := samplePlan{block: true, masks: &sampleStmt{sql: s.selectSQL(exprs) + " " + ts + " LIMIT " + strconv.Itoa(2*n),
			exprs: exprs, limit: 2 * n, method: source.SampleTableSample, maskRate: 1, expect: int64(n)}}
		if len(s.distinctCols) > 0 {
			dx := s.hashExprs()
			stmt, method, full, limit := s.rowLevelSQL(s.selectSQL(dx), nd)
			pl.distinct = &sampleStmt{sql: stmt, exprs: dx, method: method, full: full, limit: limit}
		}
		return pl
	}
	rows := n
	if len(s.distinctCols) > 0 {
		rows = max(n, nd)
	}
	exprs := append(s.maskExprs(), s.hashExprs()...)
	stmt, method, full, limit := s.rowLevelSQL(s.selectSQL(exprs), rows)
	drawn := min(int64(rows), p.RowCount)
	rate := min(1, float64(n)/float64(drawn))
	return samplePlan{masks: &sampleStmt{sql: stmt, exprs: exprs, method: method, full: full, limit: limit, maskRate: rate,
		expect: int64(float64(drawn) * rate)}}
}

// maskExprs are the sampled columns as values, feeding the masks and semantic types.
func (s *sampler) maskExprs() []sampleExpr {
	out := make([]sampleExpr, 0, len(s.sampled))
	for _, i := range s.sampled {
		out = append(out, sampleExpr{col: i, mask: s.masks[i]})
	}
	return out
}

// hashExprs are the columns that need a distinct estimate as hashes of their whole values,
// computed by the source (a value read for the masks is cut to sampleValueMax characters,
// and two long values sharing their beginning are still two values).
func (s *sampler) hashExprs() []sampleExpr {
	out := make([]sampleExpr, 0, len(s.distinctCols))
	for _, i := range s.distinctCols {
		out = append(out, sampleExpr{col: i, hash: true, dist: s.dists[i]})
	}
	return out
}

// read runs one sample statement; a row feeds the masks with probability st.maskRate
// (1: every row), and always feeds the distinct hashes of its hash expressions. It returns the
// rows read and how many of them fed the masks.
func (s *sampler) read(ctx context.Context, c *conn, st *sampleStmt) (rows, maskRows int, err error) {
	for _, a := range s.masks {
		if a.det != nil && st.maskRate > 0 {
			a.det.ExpectValues(int(st.expect))
		}
	}
	vals := make([]rawValue, len(st.exprs))
	hashes := make([]hashScan, len(st.exprs))
	dests := make([]any, len(st.exprs))
	for j, e := range st.exprs {
		if e.hash {
			hashes[j].seed = s.seed
			dests[j] = &hashes[j]
		} else {
			dests[j] = &vals[j]
		}
	}
	_, err = c.query(ctx, s.req.Operation, "profile", st.sql, nil, func(r *sql.Rows) error {
		if err := r.Scan(dests...); err != nil {
			return c.resultError("profile")
		}
		rows++
		toMasks := st.maskRate >= 1 || (st.maskRate > 0 && s.rng.Float64() < st.maskRate)
		if toMasks {
			maskRows++
		}
		for j, e := range st.exprs {
			if e.hash {
				if !hashes[j].null {
					e.dist.hashes = append(e.dist.hashes, hashes[j].h)
				}
				continue
			}
			if v := &vals[j]; toMasks && !v.null {
				e.mask.masks.AddBytes(v.b)
				if e.mask.det != nil {
					e.mask.det.AddBytes(v.b)
				}
				e.mask.addNumber(v.b)
			}
		}
		return nil
	})
	return rows, maskRows, err
}

// sampleTable reads the profile's samples and fills masks, semantic types and (at depth
// standard, or deep for columns count(DISTINCT) cannot take) distinct estimates. It needs
// the aggregate's results in p: row count, null counts, and the key column's min/max.
//
// Masks and semantic types are shares, which any random sample estimates, even one of
// whole pages; distinct estimates need a row-level random sample (see package distinct),
// and a larger one (ProfileRequest.DistinctSampleSize). So:
//   - depth basic: the first rows, as the aggregate read them, masks only ("first_rows");
//   - a table of no more rows than SampleSize: the whole table, exact ("full");
//   - Postgres tables and materialized views: masks and semantic types on TABLESAMPLE
//     SYSTEM at the percentage that gives SampleSize rows of the exact count(*) the
//     aggregate just returned ("tablesample", a few pages), and the distinct estimates on
//     a second, row-level sample of value hashes computed by Postgres (no value leaves
//     it), drawn as below; should the pages hold fewer than a quarter of the rows wanted,
//     as on the next case;
//   - otherwise one row-level sample serves both, the masks taking a random subset of
//     about SampleSize of its rows.
//
// A row-level sample is, cheapest first: the whole table when it is small enough
// ("full", exact); random key values of a single-column integer primary key drawn
// uniformly between its min and max (known from the aggregate), fetched by index — every
// existing row has the same chance, at the cost of one index lookup per row and no scan;
// used up to keysMaxShare of the table ("keys"); else each row kept with probability
// rows/N while the table is scanned (Postgres TABLESAMPLE BERNOULLI on tables, a random()
// filter elsewhere: "bernoulli").
func sampleTable(ctx context.Context, c *conn, t source.Table, cols []source.Column, req source.ProfileRequest, p *source.TableProfile) error {
	s := newSampler(c.d, t, cols, req, p)
	p.DistinctSampleMethod = source.SampleNone
	if p.RowCount == 0 {
		// An empty table has exactly no distinct values; there is nothing to sample.
		for _, i := range s.distinctCols {
			p.Columns[i].Distinct = &source.Estimate{Method: distinct.MethodExact}
		}
		return nil
	}
	if len(s.sampled) == 0 {
		return nil
	}
	pl := s.plan(false)
	got, maskRows, err := s.read(ctx, c, pl.masks)
	if err != nil {
		return err
	}
	if pl.block && got < req.SampleSize/4 {
		// A few pages happened to be drawn: start again with a row-level sample.
		s = newSampler(c.d, t, cols, req, p)
		pl = s.plan(true)
		if got, maskRows, err = s.read(ctx, c, pl.masks); err != nil {
			return err
		}
	}
	m := pl.masks
	full := m.whole(got, p.RowCount)
	masksFull := full && m.maskRate >= 1
	p.SampleSize, p.SampleMethod = maskRows, methodOf(m, full, masksFull)
	distinctFull := false
	if len(s.distinctCols) > 0 {
		dst, dgot, dfull := m, got, full
		if pl.distinct != nil {
			dst = pl.distinct
			if dgot, _, err = s.read(ctx, c, dst); err != nil {
				return err
			}
			dfull = dst.whole(dgot, p.RowCount)
		}
		distinctFull = dfull
		p.DistinctSampleSize, p.DistinctSampleMethod = dgot, methodOf(dst, dfull, dfull)
	}
	for _, i := range s.sampled {
		finishMasks(s.masks[i], &p.Columns[i], masksFull)
		if p.SampleMethod == source.SampleFirstRows {
			// The first rows are no sample of the distribution (a table in load order
			// gives its oldest times): no quantiles rather than skewed ones.
			p.Columns[i].Quantiles = nil
		}
	}
	for _, i := range s.distinctCols {
		finishDistinct(s.dists[i], &p.Columns[i], distinctFull, p.RowCount)
	}
	return nil
}

// methodOf is how the rows a statement fed (all, or a random subset when fed is false)
// were drawn, given whether it read the whole table.
func methodOf(st *sampleStmt, whole, fed bool) string {
	switch {
	case whole && fed:
		return source.SampleFull
	case whole:
		return source.SampleBernoulli // a random subset of the whole table
	case st.method == source.SampleFull:
		return source.SampleFirstRows // the table grew past the sample meanwhile
	}
	return st.method
}

// whole reports whether a statement planned to read the whole table did, given the rows
// it returned: fewer than its LIMIT, or no more than count(*) said (a table that grew
// past the LIMIT meanwhile was cut, and is only a first part).
func (st *sampleStmt) whole(got int, rowCount int64) bool {
	return st.full && (got < st.limit || int64(got) <= rowCount)
}

// SampleSQL returns the sample statements Profile sends for t once its aggregate has
// returned p (row count, the key column's min/max; a profile Profile returned will do):
// the masks and semantic
// types sample, and the distinct estimates' sample when it is a statement of its own
// ("" otherwise). A key sample draws the same keys for the same table and bounds (see
// SampleSeed). It is the seam for replaying the sample phase step by step.
func SampleSQL(kind source.Kind, t source.Table, p *source.TableProfile, req source.ProfileRequest) (masks, distinctSQL string, err error) {
	d, err := dialectFor(kind)
	if err != nil {
		return "", "", err
	}
	req = normalizeRequest(req)
	s := newSampler(d, t, prepareColumns(d, t), req, p)
	if p.RowCount == 0 || len(s.sampled) == 0 {
		return "", "", nil
	}
	pl := s.plan(false)
	if pl.distinct != nil {
		distinctSQL = pl.distinct.sql
	}
	return pl.masks.sql, distinctSQL, nil
}

// selectSQL is the select list of exprs over the table.
func (s *sampler) selectSQL(exprs []sampleExpr) string {
	d := s.d
	list := make([]string, len(exprs))
	for j, e := range exprs {
		q := d.quote(s.cols[e.col].Name)
		if e.hash {
			list[j] = d.hashValue(q, s.cols[e.col])
		} else {
			list[j] = d.sampleValue(q)
		}
	}
	return "SELECT " + strings.Join(list, ", ") + " FROM " + d.table(s.t)
}

// rowLevelSQL completes sel into a row-level random sample of about rows rows (see
// sampleTable), and reports its method, whether it reads the whole table, and its LIMIT.
func (s *sampler) rowLevelSQL(sel string, rows int) (stmt, method string, full bool, limit int) {
	d, p := s.d, s.p
	if p.RowCount <= int64(rows) {
		return sel + " LIMIT " + strconv.Itoa(rows), source.SampleFull, true, rows
	}
	frac := float64(rows) / float64(p.RowCount)
	if frac <= keysMaxShare {
		if stmt, ok := keySampleSQL(d, s.t, p, sel, rows, s.rng); ok {
			return stmt, source.SampleKeys, false, 0
		}
	}
	lim := " LIMIT " + strconv.Itoa(2*rows)
	if rs := d.rowSample(s.t, 100*frac); rs != "" {
		return sel + " " + rs + lim, source.SampleBernoulli, false, 2 * rows
	}
	return sel + " WHERE " + d.random(s.t, frac) + lim, source.SampleBernoulli, false, 2 * rows
}

// distinctSampleSize is the rows the distinct estimates read: the request's, or one row in
// distinctSampleShare of the table, no fewer than the masks sample and no more than
// DistinctSampleFactor times it; within MaxSampleSize and within MaxDistinctValues hashes
// over ncols columns; never fewer than the masks sample.
//
// The share keeps the sampling rate — what the intervals' width depends on most — from
// falling as tables grow, until the factor caps the rows read (and the rows' cost: a
// sample drawn by key is one index lookup per row).
func distinctSampleSize(req source.ProfileRequest, ncols int, rowCount int64) int {
	n := req.DistinctSampleSize
	if n <= 0 {
		n = int(min(max(rowCount/source.DistinctSampleShare, int64(req.SampleSize)), int64(source.DistinctSampleFactor*req.SampleSize)))
	}
	n = min(n, source.MaxSampleSize)
	if ncols > 0 {
		n = min(n, source.MaxDistinctValues/ncols)
	}
	return max(n, req.SampleSize)
}

func finishMasks(a *maskAcc, cp *source.ColumnProfile, full bool) {
	for _, m := range a.masks.Top(semantic.MaxMasks) {
		cp.Masks = append(cp.Masks, source.MaskCount{Mask: m.Mask, Count: m.Count})
	}
	cp.Quantiles = Quantiles(a.nums, source.QuantileCuts)
	a.nums = nil
	if a.det == nil {
		return
	}
	if r := a.det.Result(); r != nil {
		cp.Semantic = &source.Semantic{
			Type:       r.Type,
			Region:     r.Region,
			Estimated:  !full || r.Estimated(),
			SampleSize: r.Total,
			Matches:    r.Matches,
			Valid:      r.Valid,
			Checked:    r.Checked,
		}
	}
}

func finishDistinct(a *distinctAcc, cp *source.ColumnProfile, full bool, rowCount int64) {
	s := distinct.FromHashes(a.hashes)
	a.hashes = nil
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

// keySampleSQL builds the key-method statement: m distinct keys drawn uniformly between
// the key's min and max, m chosen so that about n of them exist given the table's density.
func keySampleSQL(d dialect, t source.Table, p *source.TableProfile, sel string, n int, rng *rand.Rand) (string, bool) {
	k := d.keyColumn(t)
	if k < 0 || k >= len(p.Columns) || p.Columns[k].Min == nil || p.Columns[k].Max == nil {
		return "", false
	}
	lo, err1 := strconv.ParseInt(string(*p.Columns[k].Min), 10, 64)
	hi, err2 := strconv.ParseInt(string(*p.Columns[k].Max), 10, 64)
	if err1 != nil || err2 != nil || hi < lo || hi/2-lo/2 >= maxKeySpan/2 {
		return "", false
	}
	span := hi - lo + 1
	m := int64(math.Ceil(float64(n) * float64(span) / float64(p.RowCount)))
	if m > int64(keysMaxFactor*n) || m >= span {
		return "", false
	}
	keys := drawDistinct(rng, lo, span, int(m))
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
func drawDistinct(rng *rand.Rand, lo, span int64, m int) []int64 {
	seen := make(map[int64]struct{}, m)
	out := make([]int64, 0, m)
	for j := span - int64(m); j < span; j++ {
		v := rng.Int64N(j + 1)
		if _, dup := seen[v]; dup {
			v = j
		}
		seen[v] = struct{}{}
		out = append(out, lo+v)
	}
	slices.Sort(out)
	return out
}

// SampleSeed is the seed of a table's samples: a hash of its schema and name. Samples are
// deterministic where the source allows — the keys a key sample draws, the rows a
// Postgres TABLESAMPLE keeps (REPEATABLE), MySQL's RAND(seed) — so rescanning an unchanged
// table measures the same figures (SQLite's random() takes no seed).
func SampleSeed(t source.Table) uint64 {
	h := fnv.New64a()
	h.Write([]byte(t.Schema))
	h.Write([]byte{0})
	h.Write([]byte(t.Name))
	return h.Sum64()
}

// sampleSeed31 is SampleSeed in the range of a SQL integer seed.
func sampleSeed31(t source.Table) string {
	return strconv.FormatUint(SampleSeed(t)%(1<<31), 10)
}

// addNumber keeps a sampled numeric value, or a temporal one as Unix seconds, for the
// quantiles; text that reads as neither is left out.
func (a *maskAcc) addNumber(b []byte) {
	switch a.class {
	case source.ClassNumeric:
		if f, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			a.nums = append(a.nums, f)
		}
	case source.ClassTemporal:
		if t := toTime(string(b)); t != nil {
			a.nums = append(a.nums, unixSeconds(*t))
		}
	}
}

// unixSeconds is t as seconds since the Unix epoch, fraction included.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// Quantiles returns cuts equi-depth cut points of vals (probabilities 0, 1/(cuts-1), …,
// 1), each interpolated linearly between the two closest ranks as SQL's percentile_cont
// does: the point of probability p lies at rank p·(n-1) of the sorted values. It sorts
// vals; nil for no values or fewer than two cuts.
func Quantiles(vals []float64, cuts int) []float64 {
	if len(vals) == 0 || cuts < 2 {
		return nil
	}
	slices.Sort(vals)
	out := make([]float64, cuts)
	n := len(vals)
	for i := range out {
		pos := float64(i) * float64(n-1) / float64(cuts-1)
		lo := int(math.Floor(pos))
		if lo >= n-1 {
			out[i] = vals[n-1]
			continue
		}
		frac := pos - float64(lo)
		out[i] = vals[lo] + frac*(vals[lo+1]-vals[lo])
	}
	return out
}
