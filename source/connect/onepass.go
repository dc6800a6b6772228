package connect

import (
	"context"
	"strconv"

	"github.com/vigia-data/vigia/source"
)

// OnePass is an optional capability of a Dialect whose tables can be counted without
// reading their rows (DuckDB's Parquet files: the row counts in the files' metadata). With
// it, a profile at depth standard or deep of a table larger than its sample reads the data
// once: the sample is drawn in the aggregate's own scan. Each row gets one uniform random
// number; one list aggregate keeps, for the rows below the sample's rate, the hashes of the
// columns needing a distinct estimate, and for the rows below the masks' (smaller) rate
// also the sampled columns' values: the masks take a random subset of about SampleSize of
// the kept rows, as in the one-statement sample plan.
// Every figure of the aggregate still comes from the scan (count(*) included); the
// metadata only sets the rate.
type OnePass interface {
	// KnownRowCount answers t's row count from metadata, without reading its rows; ok is
	// false when it cannot (not a Parquet dataset).
	KnownRowCount(ctx context.Context, q Querier, op string, t source.Table) (rows int64, ok bool, err error)
	// SampleFrom is the relation of t's rows with one more column, named column (already
	// quoted), holding a uniform random number in [0, 1) per row.
	SampleFrom(t source.Table, column string) string
	// SampleRows is an aggregate expression: the list of the rows where cond holds, each a
	// record {m: maskCond, h: the list of hashes, v: the list of values where maskCond
	// holds, else null}, evaluated on those rows only; the driver hands it over as []any of
	// map[string]any with lists as []any (three fields per row: the sample's memory in Go is
	// its values, not one map entry per column).
	SampleRows(cond, maskCond string, hashes, values []string) string
}

// onePassColumn names the per-row random number of a one-pass profile.
const onePassColumn = "__vigia_sample_r"

// onePassOf returns the OnePass capability of d's external dialect, or nil.
func onePassOf(d dialect) OnePass {
	if e, ok := d.(extDialect); ok {
		if o, ok := e.Dialect.(OnePass); ok {
			return o
		}
	}
	return nil
}

// onePass is a planned single-pass sample: its list aggregate, appended to the aggregate,
// and where its values go.
type onePass struct {
	s    *sampler
	expr string
	dest *any
	// masks and hashes are the sample's values and hashes, in the order of the records' lists.
	masks, hashes []sampleExpr
	from          string
	rate          float64 // the share of rows kept
	// masksRate is the share of rows whose values feed the masks (a subset of the kept).
	masksRate float64
}

// planOnePass plans the single-pass sample of t when the dialect can count its rows from
// metadata and the table is larger than the sample; nil otherwise (the profile then sends
// its aggregate and sample statements as usual).
func planOnePass(ctx context.Context, c *conn, t source.Table, cols []source.Column, req source.ProfileRequest, p *source.TableProfile) (*onePass, error) {
	op := onePassOf(c.d)
	if op == nil || req.Depth == source.DepthBasic {
		return nil, nil
	}
	for _, col := range cols {
		if col.Name == onePassColumn {
			return nil, nil
		}
	}
	n, ok, err := op.KnownRowCount(ctx, querier{c}, req.Operation, t)
	if err != nil || !ok || n <= int64(req.SampleSize) {
		return nil, err
	}
	s := newSampler(c.d, t, cols, req, p)
	if len(s.sampled) == 0 {
		return nil, nil
	}
	rows := req.SampleSize
	if len(s.distinctCols) > 0 {
		rows = max(rows, distinctSampleSize(req, len(s.distinctCols), n))
	}
	o := &onePass{s: s, from: op.SampleFrom(t, c.d.quote(onePassColumn)), rate: min(1, float64(rows)/float64(n)),
		masksRate: min(1, float64(req.SampleSize)/float64(n)), dest: new(any)}
	r := c.d.quote(onePassColumn)
	below := func(rate float64) string { return r + " < " + strconv.FormatFloat(rate, 'g', -1, 64) }
	o.masks, o.hashes = s.maskExprs(), s.hashExprs()
	values, hashes := make([]string, len(o.masks)), make([]string, len(o.hashes))
	for j, e := range o.masks {
		values[j] = c.d.sampleValue(c.d.quote(cols[e.col].Name))
	}
	for j, e := range o.hashes {
		hashes[j] = c.d.hashValue(c.d.quote(cols[e.col].Name), cols[e.col])
	}
	// The masks' rows are those below the masks rate: only they are read as text.
	o.expr = op.SampleRows(below(o.rate), below(o.masksRate), hashes, values)
	return o, nil
}

// finish reduces the rows the aggregate's list returned into masks, semantic types and
// distinct estimates, as sampleTable does with the rows of its statement.
func (o *onePass) finish(c *conn, p *source.TableProfile) error {
	s := o.s
	list, ok := (*o.dest).([]any)
	if *o.dest != nil && !ok {
		return c.resultError("profile")
	}
	*o.dest = nil
	for _, a := range s.masks {
		if a.det != nil {
			a.det.ExpectValues(min(s.req.SampleSize, len(list)))
		}
	}
	var rv rawValue
	hs := hashScan{seed: s.seed}
	maskRows := 0
	for i, item := range list {
		row, ok := item.(map[string]any)
		if !ok {
			return c.resultError("profile")
		}
		list[i] = nil // what is read can go
		toMasks, _ := row["m"].(bool)
		if toMasks {
			maskRows++
		}
		hl, _ := row["h"].([]any)
		if len(hl) != len(o.hashes) {
			return c.resultError("profile")
		}
		for j, e := range o.hashes {
			if err := hs.Scan(hl[j]); err != nil {
				return c.resultError("profile")
			}
			if !hs.null {
				e.dist.hashes = append(e.dist.hashes, hs.h)
			}
		}
		if !toMasks {
			continue
		}
		vl, _ := row["v"].([]any)
		if len(vl) != len(o.masks) {
			return c.resultError("profile")
		}
		for j, e := range o.masks {
			if err := rv.Scan(vl[j]); err != nil || rv.null {
				continue
			}
			e.mask.masks.AddBytes(rv.b)
			if e.mask.det != nil {
				e.mask.det.AddBytes(rv.b)
			}
			e.mask.addNumber(rv.b)
		}
	}
	// A rate of 1 kept every row the scan counted: the sample is the whole table.
	full := o.rate >= 1 && int64(len(list)) == p.RowCount
	masksFull := full && o.masksRate >= 1
	p.SampleSize, p.SampleMethod = maskRows, source.SampleBernoulli
	if masksFull {
		p.SampleMethod = source.SampleFull
	}
	p.DistinctSampleMethod = source.SampleNone
	if len(s.distinctCols) > 0 {
		p.DistinctSampleSize, p.DistinctSampleMethod = len(list), source.SampleBernoulli
		if full {
			p.DistinctSampleMethod = source.SampleFull
		}
	}
	for _, i := range s.sampled {
		finishMasks(s.masks[i], &p.Columns[i], masksFull)
	}
	for _, i := range s.distinctCols {
		finishDistinct(s.dists[i], &p.Columns[i], full, p.RowCount)
	}
	return nil
}
