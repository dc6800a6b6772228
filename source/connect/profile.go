package connect

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/distinct"
)

// maxAggExprs bounds the select list of one aggregate statement (Postgres accepts 1664
// target entries, SQLite 2000 columns); wider tables get one aggregate per chunk.
const maxAggExprs = 1000

// sampleValueMax is how many characters of a value the sample reads: enough for every
// semantic type and mask, and it bounds memory on large text and JSON columns. Values
// sharing their first sampleValueMax characters count as one in the distinct estimate.
const sampleValueMax = 256

func normalizeRequest(req source.ProfileRequest) source.ProfileRequest {
	switch req.Depth {
	case source.DepthBasic, source.DepthStandard, source.DepthDeep:
	default:
		req.Depth = source.DepthStandard
	}
	req.Country = strings.ToUpper(strings.TrimSpace(req.Country))
	if req.Country == "" {
		req.Country = source.DefaultCountry
	}
	if req.SampleSize <= 0 {
		req.SampleSize = source.DefaultSampleSize
	}
	if req.SampleSize > source.MaxSampleSize {
		req.SampleSize = source.MaxSampleSize
	}
	if req.Operation == "" {
		req.Operation = source.OpScan
	}
	return req
}

// prepareColumns copies the table's columns and fills missing classes from the data type.
func prepareColumns(d dialect, t source.Table) []source.Column {
	cols := make([]source.Column, len(t.Columns))
	copy(cols, t.Columns)
	for i := range cols {
		if cols[i].Class == "" {
			cols[i].Class = d.classOf(cols[i].DataType)
		}
	}
	return cols
}

// aggPart is one expression of the aggregate and what to do with its value.
type aggPart struct {
	expr  string
	dest  any
	apply func(p *source.ColumnProfile, rowCount int64)
	// finite, when set, is the expression to compute again, in a statement of its own,
	// when expr returned an infinite date or timestamp: the extreme among finite values.
	finite string
}

// aggStmt is one aggregate statement: count(*) then its parts.
type aggStmt struct {
	sql   string
	parts []aggPart
	col   []int // column index of each part
}

// ProfileSQL returns the aggregate statement(s) Profile sends for t (one per
// maxAggExprs expressions; one for any table of ordinary width): null counts, typed
// min/max, text lengths, count(*), and count(DISTINCT) at depth deep. It is the seam for
// comparing the single aggregate against alternatives.
func ProfileSQL(kind source.Kind, t source.Table, req source.ProfileRequest) ([]string, error) {
	d, err := dialectFor(kind)
	if err != nil {
		return nil, err
	}
	req = normalizeRequest(req)
	stmts := buildAggregate(d, t, prepareColumns(d, t), req)
	out := make([]string, len(stmts))
	for i, s := range stmts {
		out[i] = s.sql
	}
	return out, nil
}

func buildAggregate(d dialect, t source.Table, cols []source.Column, req source.ProfileRequest) []aggStmt {
	var parts []aggPart
	var owner []int
	add := func(i int, p aggPart) {
		parts = append(parts, p)
		owner = append(owner, i)
	}
	for i, c := range cols {
		q := d.quote(c.Name)
		nn := new(sql.NullInt64)
		add(i, aggPart{expr: "count(" + q + ")", dest: nn, apply: func(p *source.ColumnProfile, rows int64) {
			p.NullCount = rows - nn.Int64
		}})
		switch c.Class {
		case source.ClassNumeric:
			// Extremes are read as the driver hands them over (text, or an integer or a
			// float the source holds as such) and kept as exact decimal text.
			lo, hi := new(any), new(any)
			add(i, aggPart{expr: d.numMin(q), dest: lo, apply: func(p *source.ColumnProfile, _ int64) { p.Min = decimalOf(*lo) }})
			add(i, aggPart{expr: d.numMax(q), dest: hi, apply: func(p *source.ColumnProfile, _ int64) { p.Max = decimalOf(*hi) }})
		case source.ClassTemporal:
			lo, hi := new(any), new(any)
			add(i, aggPart{expr: d.timeMin(q), dest: lo, finite: d.finiteTimeMin(q),
				apply: func(p *source.ColumnProfile, _ int64) { p.MinTime = toTime(*lo) }})
			add(i, aggPart{expr: d.timeMax(q), dest: hi, finite: d.finiteTimeMax(q),
				apply: func(p *source.ColumnProfile, _ int64) { p.MaxTime = toTime(*hi) }})
		case source.ClassText:
			lo, hi, avg := new(sql.NullInt64), new(sql.NullInt64), new(sql.NullFloat64)
			add(i, aggPart{expr: "min(" + d.length(q) + ")", dest: lo, apply: func(p *source.ColumnProfile, _ int64) { p.MinLength = intPtr(lo) }})
			add(i, aggPart{expr: "max(" + d.length(q) + ")", dest: hi, apply: func(p *source.ColumnProfile, _ int64) { p.MaxLength = intPtr(hi) }})
			add(i, aggPart{expr: d.avgLength(q), dest: avg, apply: func(p *source.ColumnProfile, _ int64) { p.AvgLength = finite(avg) }})
		}
		if req.Depth == source.DepthDeep && d.distinctable(c) {
			nd := new(sql.NullInt64)
			add(i, aggPart{expr: "count(DISTINCT " + q + ")", dest: nd, apply: func(p *source.ColumnProfile, _ int64) {
				v := float64(nd.Int64)
				p.Distinct = &source.Estimate{Value: v, CI95: [2]float64{v, v}, Method: distinct.MethodExact}
			}})
		}
	}
	from := aggFrom(d, t, cols, req)
	var stmts []aggStmt
	for start := 0; start < len(parts) || start == 0; start += maxAggExprs {
		end := min(start+maxAggExprs, len(parts))
		stmts = append(stmts, aggStmt{sql: aggregateSQL(parts[start:end], nil, from), parts: parts[start:end], col: owner[start:end]})
		if end == len(parts) {
			break
		}
	}
	return stmts
}

// aggregateSQL is one aggregate statement: count(*), the parts' expressions, then extra.
func aggregateSQL(parts []aggPart, extra []string, from string) string {
	var b strings.Builder
	b.WriteString("SELECT count(*)")
	for _, p := range parts {
		b.WriteString(", ")
		b.WriteString(p.expr)
	}
	for _, e := range extra {
		b.WriteString(", ")
		b.WriteString(e)
	}
	b.WriteString(" FROM ")
	b.WriteString(from)
	return b.String()
}

// aggFrom is what the aggregate reads: the table, or its first rows at depth basic.
func aggFrom(d dialect, t source.Table, cols []source.Column, req source.ProfileRequest) string {
	from := d.table(t)
	if req.Depth == source.DepthBasic {
		from = "(" + selectColumns(d, cols) + " FROM " + from + " LIMIT " + strconv.Itoa(source.BasicRows) + ") AS " + d.quote("t")
	}
	return from
}

func selectColumns(d dialect, cols []source.Column) string {
	if len(cols) == 0 {
		return "SELECT 1 AS " + d.quote("one")
	}
	qs := make([]string, len(cols))
	for i, c := range cols {
		qs[i] = d.quote(c.Name)
	}
	return "SELECT " + strings.Join(qs, ", ")
}

// profile computes a table's profile: one aggregate statement (per chunk of a very wide
// table), then bounded samples read once each and reduced in memory to masks, semantic
// types and distinct estimates (see sampleTable).
func profile(ctx context.Context, c *conn, t source.Table, req source.ProfileRequest) (*source.TableProfile, error) {
	req = normalizeRequest(req)
	if t.Name == "" {
		return nil, newError(c.d.kind(), "profile", source.ReasonInvalidTable, "")
	}
	cols := prepareColumns(c.d, t)
	p := &source.TableProfile{Depth: req.Depth, Columns: make([]source.ColumnProfile, len(cols)), SampleMethod: source.SampleNone}
	for i, col := range cols {
		p.Columns[i] = source.ColumnProfile{Name: col.Name, Class: col.Class}
	}
	// Parts to compute again among finite values (see aggPart.finite).
	var again aggStmt
	stmts := buildAggregate(c.d, t, cols, req)
	// A dialect that counts rows from metadata gets its samples in the aggregate's scan.
	one, err := planOnePass(ctx, c, t, cols, req, p)
	if err != nil {
		return nil, err
	}
	if one != nil && (len(stmts) != 1 || len(stmts[0].parts)+1 > maxAggExprs) {
		one = nil
	}
	if one != nil {
		stmts[0].sql = aggregateSQL(stmts[0].parts, []string{one.expr}, one.from)
	}
	for k, st := range stmts {
		var rowCount sql.NullInt64
		dests := make([]any, 0, len(st.parts)+1)
		dests = append(dests, &rowCount)
		for _, part := range st.parts {
			dests = append(dests, part.dest)
		}
		if one != nil {
			dests = append(dests, one.dest)
		}
		if err := c.scanOne(ctx, req.Operation, st.sql, dests); err != nil {
			return nil, err
		}
		if k == 0 {
			p.RowCount = rowCount.Int64
		}
		for j, part := range st.parts {
			if v, ok := part.dest.(*any); ok && part.finite != "" && isInfinity(*v) {
				again.parts = append(again.parts, aggPart{expr: part.finite, dest: part.dest, apply: part.apply})
				again.col = append(again.col, st.col[j])
				continue
			}
			part.apply(&p.Columns[st.col[j]], rowCount.Int64)
		}
	}
	if len(again.parts) > 0 {
		// Rare (a table holding infinity): one more statement for those extremes only,
		// rather than a filter every row of every table pays for in the aggregate.
		exprs, dests := make([]string, len(again.parts)), make([]any, len(again.parts))
		for j, part := range again.parts {
			exprs[j], dests[j] = part.expr, part.dest
		}
		stmt := "SELECT " + strings.Join(exprs, ", ") + " FROM " + aggFrom(c.d, t, cols, req)
		if err := c.scanOne(ctx, req.Operation, stmt, dests); err != nil {
			return nil, err
		}
		for j, part := range again.parts {
			part.apply(&p.Columns[again.col[j]], p.RowCount)
		}
	}
	if req.Depth == source.DepthBasic {
		p.Truncated = p.RowCount >= source.BasicRows
	}
	if one != nil {
		if err := one.finish(c, p); err != nil {
			return nil, err
		}
	} else if err := sampleTable(ctx, c, t, cols, req, p); err != nil {
		return nil, err
	}
	if i := freshnessColumn(cols, p.Columns, time.Now()); i >= 0 {
		p.FreshnessColumn = cols[i].Name
		ts := *p.Columns[i].MaxTime
		p.LatestTimestamp = &ts
	}
	return p, nil
}

// scanOne runs a statement returning one row into dests.
func (c *conn) scanOne(ctx context.Context, op, stmt string, dests []any) error {
	_, err := c.query(ctx, op, "profile", stmt, nil, func(rows *sql.Rows) error {
		if err := rows.Scan(dests...); err != nil {
			return c.resultError("profile")
		}
		return nil
	})
	return err
}

// isInfinity reports whether a temporal value is Postgres's infinity or -infinity (the
// driver hands them over as text).
func isInfinity(v any) bool {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return false
	}
	return s == "infinity" || s == "-infinity"
}

func finite(v *sql.NullFloat64) *float64 {
	if !v.Valid || math.IsNaN(v.Float64) || math.IsInf(v.Float64, 0) {
		return nil
	}
	f := v.Float64
	return &f
}

// decimalOf reads a numeric extreme exactly: text as the source printed it (Postgres
// ::text, MySQL's text protocol), an integer, or a float the source stores as binary
// floating point (SQLite REAL), in its shortest exact form. NaN, infinities and anything
// unreadable give nil.
func decimalOf(v any) *vigia.Decimal {
	var d vigia.Decimal
	var ok bool
	switch x := v.(type) {
	case []byte:
		d, ok = vigia.ParseDecimal(string(x))
	case string:
		d, ok = vigia.ParseDecimal(x)
	case int64:
		d, ok = vigia.DecimalFromInt(x), true
	case int32:
		d, ok = vigia.DecimalFromInt(int64(x)), true
	case uint64:
		d, ok = vigia.Decimal(strconv.FormatUint(x, 10)), true
	case float64:
		d, ok = vigia.DecimalFromFloat(x)
	case float32:
		d, ok = vigia.DecimalFromFloat(float64(x))
	case int8:
		d, ok = vigia.DecimalFromInt(int64(x)), true
	case int16:
		d, ok = vigia.DecimalFromInt(int64(x)), true
	case uint8:
		d, ok = vigia.DecimalFromInt(int64(x)), true
	case uint16:
		d, ok = vigia.DecimalFromInt(int64(x)), true
	case uint32:
		d, ok = vigia.DecimalFromInt(int64(x)), true
	case fmt.Stringer:
		// Drivers' own exact types (DuckDB's DECIMAL and HUGEINT as *big.Int) print
		// their exact text.
		d, ok = vigia.ParseDecimal(x.String())
	}
	if !ok {
		return nil
	}
	return &d
}

func intPtr(v *sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	i := int(v.Int64)
	return &i
}

// timeLayouts are the text forms of timestamps that SQLite stores and drivers return.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07", // Postgres timestamptz as text
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// toTime reads a temporal min/max whatever form the driver gives it in: time.Time, text
// (SQLite stores ISO 8601 text), or a number (SQLite Unix seconds, or milliseconds when
// too large to be seconds). Zero and unreadable values give nil.
func toTime(v any) *time.Time {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case []byte:
		return toTime(string(x))
	case string:
		s := strings.TrimSpace(x)
		for _, layout := range timeLayouts {
			if parsed, err := time.Parse(layout, s); err == nil {
				t = parsed
				break
			}
		}
	case int64:
		if x > 1e11 || x < -1e11 {
			t = time.UnixMilli(x)
		} else {
			t = time.Unix(x, 0)
		}
	case float64:
		return toTime(int64(x))
	}
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// freshnessColumn picks the temporal column whose max() tells how fresh the table is:
// a name that says "updated" beats one that says "created/loaded", which beats the only
// temporal column; among several unnamed ones, the latest max that is not in the future.
// Columns named for birth, expiry or due dates never count. It returns -1 when none fits.
func freshnessColumn(cols []source.Column, profs []source.ColumnProfile, now time.Time) int {
	best, bestRank := -1, 0
	var candidates []int
	for i, c := range cols {
		if c.Class != source.ClassTemporal || profs[i].MaxTime == nil {
			continue
		}
		name := strings.ToLower(c.Name)
		if containsAny(name, "birth", "nasc", "expir", "valid_to", "valid_until", "validade", "due", "vencimento", "deleted", "end_", "_end", "fim") {
			continue
		}
		candidates = append(candidates, i)
		rank := 0
		switch {
		case containsAny(name, "updated", "modified", "changed", "last_update", "atualizado", "alterado"):
			rank = 3
		case containsAny(name, "loaded", "ingested", "inserted", "created", "criado", "timestamp", "event_time", "_ts", "_at"):
			rank = 2
		}
		if rank > bestRank || (rank == bestRank && rank > 0 && profs[i].MaxTime.After(*profs[best].MaxTime)) {
			best, bestRank = i, rank
		}
	}
	if best >= 0 {
		return best
	}
	if len(candidates) == 1 {
		return candidates[0]
	}
	limit := now.Add(24 * time.Hour)
	for _, i := range candidates {
		mt := *profs[i].MaxTime
		if mt.After(limit) {
			continue
		}
		if best < 0 || mt.After(*profs[best].MaxTime) {
			best = i
		}
	}
	return best
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func fmtFloat(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
