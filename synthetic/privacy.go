package synthetic

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/source"
)

// valueChunk bounds the generated values one personal-data lookup carries (20000 values
// of 40 characters make a statement under 1 MB, within every dialect's limit).
const valueChunk = 10000

// checkPrivacy reads the source only to check the generated table: each statement
// carries generated values and answers a count of source rows holding them, so nothing
// of the source leaves it; piiFound are the source rows redrawPII found holding a
// personal-data column's generated values. The findings come in a fixed order: sample_leak,
// extreme_leak, pii_leak; then k_min over the quasi-identifiers.
func checkPrivacy(ctx context.Context, src source.Source, t *Table, piiFound map[int]int64, sampleLeaked *int64) (Evaluation, error) {
	d := rulesql.Dialect(src.Dialect())
	from := rulesql.TableRef(d, rulesql.Table{Schema: t.Source.Schema, Name: t.Source.Table})
	count := func(where string) (int64, error) {
		n, _, err := src.QueryInt(ctx, "SELECT COUNT(*) FROM "+from+" WHERE "+where)
		return n, err
	}
	ev := Evaluation{KThreshold: KThreshold, Params: map[string]any{}}

	// sample_leak: generated rows whose every compared column (keys aside) equals a
	// source row's (counted by redrawRare when sampleLeaked is given).
	compared := comparedColumns(t)
	if len(compared) > 0 {
		var leaked int64
		if sampleLeaked != nil {
			leaked = *sampleLeaked
		} else {
			n, _, err := sampleLeak(ctx, src, d, from, count, t, compared)
			if err != nil {
				return ev, err
			}
			leaked = n
		}
		if leaked > 0 {
			ev.Findings = append(ev.Findings, Finding{Key: KeySampleLeak, Params: map[string]any{"source_rows": leaked, "columns": len(compared)}})
		}
	}

	// extreme_leak: a generated extreme equal to the column's real extreme, where that
	// extreme is held by fewer than KThreshold source rows.
	for c, col := range t.Columns {
		if col.PrimaryKey || col.Ref != nil || col.profile == nil {
			continue
		}
		for _, b := range extremes(t, c) {
			n, err := count(compareExpr(d, col) + " = " + literal(d, col, b.value))
			if err != nil {
				return ev, err
			}
			if n > 0 && n < KThreshold {
				ev.Findings = append(ev.Findings, Finding{Key: KeyExtremeLeak, Params: map[string]any{"column": col.Name, "bound": b.bound, "source_rows": n}})
			}
		}
	}

	// pii_leak: a generated value of a personal-data column still found in the source
	// (the last lookup of redrawPII counted them).
	for c, col := range t.Columns {
		if n := piiFound[c]; n > 0 {
			ev.Findings = append(ev.Findings, Finding{Key: KeyPIILeak, Params: map[string]any{"column": col.Name, "semantic_type": col.Semantic, "source_rows": n}})
		}
	}

	// k_min over the quasi-identifiers of the generated rows.
	var qi []int
	for c, col := range t.Columns {
		if col.QuasiIdentifier && !col.PrimaryKey && col.Ref == nil {
			qi = append(qi, c)
			ev.QuasiIdentifiers = append(ev.QuasiIdentifiers, col.Name)
		}
	}
	if len(qi) > 0 && t.Rows > 0 {
		groups := map[string]int{}
		var b strings.Builder
		for r := 0; r < t.Rows; r++ {
			b.Reset()
			for _, c := range qi {
				v, null := t.Value(c, r)
				if null {
					b.WriteString("\x00N")
				} else {
					b.WriteString("\x00V" + v)
				}
			}
			groups[b.String()]++
		}
		k := t.Rows
		for _, n := range groups {
			k = min(k, n)
		}
		ev.KMin = &k
	}

	switch {
	case len(ev.Findings) > 0:
		ev.PrivacyVerdict, ev.Key, ev.Params = VerdictFail, ev.Findings[0].Key, ev.Findings[0].Params
	case ev.KMin != nil && *ev.KMin < KThreshold:
		ev.PrivacyVerdict, ev.Key = VerdictWarn, KeyKBelow
		ev.Params = map[string]any{"k_min": *ev.KMin, "k_threshold": KThreshold, "columns": ev.QuasiIdentifiers}
	default:
		ev.PrivacyVerdict = VerdictPass
	}
	return ev, nil
}

// comparedColumns are the columns sample_leak compares: all but keys and foreign keys.
func comparedColumns(t *Table) []int {
	var out []int
	for c, col := range t.Columns {
		if !col.PrimaryKey && col.Ref == nil {
			out = append(out, c)
		}
	}
	return out
}

// rareRounds bounds the rounds redrawRare draws rows again.
const rareRounds = 3

// redrawRare draws again, in generated rows equal to a combination fewer than
// KThreshold source rows hold, the value of their most selective redrawable column (not
// personal data, which redrawPII has checked, nor unique), up to rareRounds rounds, so
// that the release does not carry them; it answers the sample_leak count of its last
// check (what remains after the last round). Only the generated rows change; the source
// answers counts of combinations equal to generated ones.
func redrawRare(ctx context.Context, src source.Source, t *Table, seed int64) (*int64, error) {
	compared := comparedColumns(t)
	if len(compared) == 0 {
		return nil, nil
	}
	d := rulesql.Dialect(src.Dialect())
	from := rulesql.TableRef(d, rulesql.Table{Schema: t.Source.Schema, Name: t.Source.Table})
	count := func(where string) (int64, error) {
		n, _, err := src.QueryInt(ctx, "SELECT COUNT(*) FROM "+from+" WHERE "+where)
		return n, err
	}
	redraw, best := -1, -1.0
	for _, c := range compared {
		col := t.Columns[c]
		if col.PII || col.Unique || t.injected[c] {
			continue
		}
		if r := selectivity(col); r > best {
			redraw, best = c, r
		}
	}
	for round := 0; ; round++ {
		leaked, rows, err := sampleLeak(ctx, src, d, from, count, t, compared)
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 || redraw < 0 || round == rareRounds {
			return &leaked, nil
		}
		col := t.Columns[redraw]
		gen := valueGenerator(col, seedFor(seed, t.Source.Name(), col.Name, "rare", strconv.Itoa(round)))
		for _, r := range rows {
			t.Values[redraw][r], t.Nulls[redraw][r] = gen(), false
		}
	}
}

type extreme struct {
	bound string
	value string
}

// extremes are the generated minimum and maximum of a numeric or temporal column that
// equal the profile's.
func extremes(t *Table, c int) []extreme {
	col := t.Columns[c]
	p := col.profile
	var out []extreme
	switch col.SQLType {
	case TypeInteger, TypeNumeric:
		if p.Min == nil || p.Max == nil {
			return nil
		}
		lo, hi, ok := numericRange(t, c)
		if !ok {
			return nil
		}
		if lo == p.Min.Float64() {
			out = append(out, extreme{"min", strconv.FormatFloat(lo, 'f', -1, 64)})
		}
		if hi == p.Max.Float64() {
			out = append(out, extreme{"max", strconv.FormatFloat(hi, 'f', -1, 64)})
		}
	case TypeDate, TypeTimestamp:
		if p.MinTime == nil || p.MaxTime == nil {
			return nil
		}
		layout := "2006-01-02 15:04:05"
		if col.SQLType == TypeDate {
			layout = "2006-01-02"
		}
		lo, hi, ok := textRange(t, c)
		if !ok {
			return nil
		}
		if lo == p.MinTime.UTC().Format(layout) {
			out = append(out, extreme{"min", lo})
		}
		if hi == p.MaxTime.UTC().Format(layout) {
			out = append(out, extreme{"max", hi})
		}
	}
	return out
}

func numericRange(t *Table, c int) (lo, hi float64, ok bool) {
	for r := 0; r < t.Rows; r++ {
		v, null := t.Value(c, r)
		if null {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		if !ok || f < lo {
			lo = f
		}
		if !ok || f > hi {
			hi = f
		}
		ok = true
	}
	return lo, hi, ok
}

// textRange is the least and greatest value of a column whose text sorts like its values
// (fixed-layout dates and timestamps).
func textRange(t *Table, c int) (lo, hi string, ok bool) {
	for r := 0; r < t.Rows; r++ {
		v, null := t.Value(c, r)
		if null {
			continue
		}
		if !ok || v < lo {
			lo = v
		}
		if !ok || v > hi {
			hi = v
		}
		ok = true
	}
	return lo, hi, ok
}

// redrawPII replaces generated values of personal-data columns that happen to exist in
// the source (a drawn NIF or phone number that is someone's): the source answers which
// of the generated values it holds, with how many rows hold each, and those are drawn
// again, up to three rounds, so that the release never carries them; a round looks up
// only the values drawn since the last. The hits of the values present after the last
// round are also the pii_leak check: per column, the source rows still holding a
// generated value.
// Nothing of the source is kept: the answer holds only values Vigia generated. Values a
// test hook injected stay, for the check to find.
func redrawPII(ctx context.Context, src source.Source, t *Table, seed int64) (map[int]int64, error) {
	d := rulesql.Dialect(src.Dialect())
	from := rulesql.TableRef(d, rulesql.Table{Schema: t.Source.Schema, Name: t.Source.Table})
	found := map[int]int64{}
	for c, col := range t.Columns {
		if !col.PII || col.PrimaryKey || col.Ref != nil {
			continue
		}
		qcol := rulesql.QuoteIdent(d, col.Name)
		// hits holds, for every value looked up so far, the source rows holding it: a
		// round looks up only the values no earlier round did (those drawn again).
		hits := map[string]int64{}
		looked := map[string]bool{}
		var lits []string
		flush := func() error {
			if len(lits) == 0 {
				return nil
			}
			rows, err := src.QueryRows(ctx, "SELECT "+qcol+", COUNT(*) FROM "+from+" WHERE "+qcol+" IN ("+strings.Join(lits, ", ")+") GROUP BY "+qcol, len(lits))
			lits = lits[:0]
			if err != nil {
				return err
			}
			for _, r := range rows {
				if len(r) == 2 && r[0] != nil && r[1] != nil {
					n, err := strconv.ParseInt(*r[1], 10, 64)
					if err != nil {
						return errors.New("synthetic: a count the source answered is not an integer")
					}
					hits[*r[0]] += n
				}
			}
			return nil
		}
		for round := 0; ; round++ {
			seen := map[string]bool{}
			for r := 0; r < t.Rows; r++ {
				v, null := t.Value(c, r)
				if null || seen[v] {
					continue
				}
				seen[v] = true
				if looked[v] {
					continue
				}
				looked[v] = true
				lits = append(lits, literal(d, col, v))
				if len(lits) == valueChunk {
					if err := flush(); err != nil {
						return nil, err
					}
				}
			}
			if err := flush(); err != nil {
				return nil, err
			}
			var redraw []int
			for r := 0; r < t.Rows; r++ {
				if v, null := t.Value(c, r); !null && hits[v] > 0 && !(r == 0 && t.injected[c]) {
					redraw = append(redraw, r)
				}
			}
			if len(redraw) == 0 || round == 3 {
				for v := range seen {
					found[c] += hits[v]
				}
				break
			}
			gen := valueGenerator(col, seedFor(seed, t.Source.Name(), col.Name, "redraw", strconv.Itoa(round)))
			for _, r := range redraw {
				nv := gen()
				for try := 0; (seen[nv] && col.Unique || hits[nv] > 0) && try < 20; try++ {
					nv = gen()
				}
				seen[nv] = true
				t.Values[c][r] = nv
			}
		}
	}
	return found, nil
}

// sampleLeak counts the source rows equal, on every compared column, to a generated
// row, where fewer than KThreshold source rows hold that combination. A row can only match where its most selective column does: per chunk of
// valueChunk generated rows, one lookup of which of that column's values the source
// holds (a hashed IN lookup) rules the chunk out, and only the rows whose value it
// holds are checked row by row. The source answers values in its own text (numbers,
// times); both sides are compared in a canonical form (see canonical).
func sampleLeak(ctx context.Context, src source.Source, d rulesql.Dialect, from string, count func(string) (int64, error), t *Table, compared []int) (int64, []int, error) {
	pivot := compared[0]
	best := -1.0
	for _, c := range compared {
		if r := selectivity(t.Columns[c]); r > best {
			pivot, best = c, r
		}
	}
	pcol := t.Columns[pivot]
	pexpr := compareExpr(d, pcol)
	var leaked int64
	// rowCheck counts the source rows equal to one of rows on every compared column
	// whose combination of values fewer than KThreshold source rows share (one a whole
	// group holds, such as quantity 2 at price 9.99, singles nobody out), rowChunk rows
	// per statement (an OR of as many conjunctions, grouped: the source answers one count
	// per combination, never a value).
	const rowChunk = 100
	exprs := make([]string, len(t.Columns))
	group := make([]string, 0, len(compared))
	for _, c := range compared {
		exprs[c] = compareExpr(d, t.Columns[c])
		group = append(group, exprs[c])
	}
	groupBy := strings.Join(group, ", ")
	// rare are the generated rows equal to a rare combination: the source answers the
	// combination (values equal to generated ones) with its count, matched back to the
	// statement's rows in canonical form; a combination no row matches that way (a
	// case-insensitive collation) makes every row of the statement rare.
	var rare []int
	rowKey := func(vals []*string) string {
		var b strings.Builder
		for i, c := range compared {
			if vals[i] == nil {
				b.WriteString("\x00N")
				continue
			}
			b.WriteString("\x00V" + canonical(t.Columns[c], *vals[i]))
		}
		return b.String()
	}
	rowCheck := func(rows []int) error {
		sent := map[string]bool{}
		rareKeys := map[string]bool{}
		keys := make(map[int]string, len(rows))
		var conds []string
		var stmtRows []int
		flush := func() error {
			if len(conds) == 0 {
				return nil
			}
			groups, err := src.QueryRows(ctx, "SELECT "+groupBy+", COUNT(*) FROM "+from+" WHERE ("+strings.Join(conds, ") OR (")+") GROUP BY "+groupBy, len(conds))
			inStmt := stmtRows
			conds, stmtRows = conds[:0], nil
			if err != nil {
				return err
			}
			byKey := map[string]bool{}
			for _, r := range inStmt {
				byKey[keys[r]] = true
			}
			for _, g := range groups {
				if len(g) != len(compared)+1 || g[len(compared)] == nil {
					continue
				}
				n, err := strconv.ParseInt(*g[len(compared)], 10, 64)
				if err != nil {
					return errors.New("synthetic: a count the source answered is not an integer")
				}
				if n >= KThreshold {
					continue
				}
				leaked += n
				if k := rowKey(g[:len(compared)]); byKey[k] {
					rareKeys[k] = true
					continue
				}
				for _, r := range inStmt {
					rareKeys[keys[r]] = true
				}
			}
			return nil
		}
		for _, r := range rows {
			parts := make([]string, 0, len(compared))
			vals := make([]*string, len(compared))
			for i, c := range compared {
				v, null := t.Value(c, r)
				if null {
					parts = append(parts, exprs[c]+" IS NULL")
				} else {
					parts = append(parts, exprs[c]+" = "+literal(d, t.Columns[c], v))
					vals[i] = &v
				}
			}
			keys[r] = rowKey(vals)
			cond := strings.Join(parts, " AND ")
			if sent[cond] {
				continue
			}
			sent[cond] = true
			conds = append(conds, cond)
			stmtRows = append(stmtRows, r)
			if len(conds) == rowChunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		for _, r := range rows {
			if rareKeys[keys[r]] {
				rare = append(rare, r)
			}
		}
		return nil
	}
	for start := 0; start < t.Rows; start += valueChunk {
		end := min(start+valueChunk, t.Rows)
		seen := map[string]bool{}
		var lits []string
		var nullRows []int
		for r := start; r < end; r++ {
			v, null := t.Value(pivot, r)
			if null {
				nullRows = append(nullRows, r)
				continue
			}
			if !seen[v] {
				seen[v] = true
				lits = append(lits, literal(d, pcol, v))
			}
		}
		hits := map[string]bool{}
		if len(lits) > 0 {
			rows, err := src.QueryRows(ctx, "SELECT DISTINCT "+pexpr+" FROM "+from+" WHERE "+pexpr+" IN ("+strings.Join(lits, ", ")+")", len(lits))
			if err != nil {
				return 0, nil, err
			}
			for _, row := range rows {
				if len(row) == 1 && row[0] != nil {
					hits[canonical(pcol, *row[0])] = true
				}
			}
		}
		var candidates []int
		if len(nullRows) > 0 {
			n, err := count(pexpr + " IS NULL")
			if err != nil {
				return 0, nil, err
			}
			if n > 0 {
				candidates = append(candidates, nullRows...)
			}
		}
		if len(hits) > 0 {
			for r := start; r < end; r++ {
				if v, null := t.Value(pivot, r); !null && hits[canonical(pcol, v)] {
					candidates = append(candidates, r)
				}
			}
		}
		if err := rowCheck(candidates); err != nil {
			return 0, nil, err
		}
	}
	return leaked, rare, nil
}

// compareExpr is the expression of a source column that a generated value of col is
// compared with: the column itself, except for a temporal column of a SQLite source,
// which holds whatever text or number was stored ('2024-05-01T10:00:00Z', Unix
// seconds…) and is normalised to the layout generated values have ('2006-01-02
// 15:04:05', or '2006-01-02' for dates) so that an equal time is found whatever its
// stored layout.
func compareExpr(d rulesql.Dialect, col Column) string {
	q := rulesql.QuoteIdent(d, col.Name)
	if d != rulesql.SQLite || (col.SQLType != TypeDate && col.SQLType != TypeTimestamp) {
		return q
	}
	fn := "datetime"
	if col.SQLType == TypeDate {
		fn = "date"
	}
	return "(CASE WHEN typeof(" + q + ") IN ('integer', 'real') THEN " +
		fn + "(CASE WHEN abs(" + q + ") > 100000000000 THEN " + q + " / 1000 ELSE " + q + " END, 'unixepoch') ELSE " + fn + "(" + q + ") END)"
}

// canonical is a value in a form both a generated value and the source's text of it
// reduce to: a number as its shortest float text, a time as Unix nanoseconds (read in
// any of timeLayouts, or from Unix seconds), any other value as it is.
func canonical(col Column, v string) string {
	switch col.SQLType {
	case TypeInteger, TypeNumeric:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	case TypeDate, TypeTimestamp:
		if tm, ok := parseAnyTime(v); ok {
			if col.SQLType == TypeDate {
				tm = time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC)
			}
			return "t" + strconv.FormatInt(tm.Unix(), 10) + "." + strconv.Itoa(tm.Nanosecond())
		}
	}
	return v
}

// timeLayouts are the text forms of times that sources store and drivers answer.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseAnyTime reads a time in one of timeLayouts (UTC unless it says otherwise), or
// from Unix seconds (milliseconds when too large to be seconds).
func parseAnyTime(v string) (time.Time, bool) {
	s := strings.TrimSpace(v)
	for _, layout := range timeLayouts {
		if tm, err := time.Parse(layout, s); err == nil {
			return tm.UTC(), true
		}
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n > 1e11 || n < -1e11 {
			return time.UnixMilli(int64(n)).UTC(), true
		}
		sec := math.Floor(n)
		return time.Unix(int64(sec), int64((n-sec)*1e9)).UTC(), true
	}
	return time.Time{}, false
}

// selectivity is the profile's distinct ratio of a column (unique columns 1), how
// rarely two rows share a value.
func selectivity(c Column) float64 {
	if c.Unique {
		return 1
	}
	p := c.profile
	if p == nil || p.Distinct == nil || p.Distinct.SampleSize == 0 {
		return 0
	}
	return p.Distinct.Value / float64(p.Distinct.SampleSize) * (1 - p.NullRate)
}

// literal writes a generated value as a SQL literal of the column's type.
func literal(d rulesql.Dialect, col Column, v string) string {
	switch col.SQLType {
	case TypeInteger, TypeNumeric:
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return v
		}
	case TypeBoolean:
		if v == "true" {
			return "TRUE"
		}
		return "FALSE"
	case TypeTimestamp:
		if d == rulesql.Postgres && withTimeZone(col.DataType) {
			// Generated times are UTC; without an offset Postgres would read the literal
			// in the session's time zone (a DSN may set one).
			return rulesql.QuoteString(d, v+"+00")
		}
	}
	return rulesql.QuoteString(d, v)
}

// withTimeZone reports whether a Postgres type is timestamp with time zone.
func withTimeZone(dataType string) bool {
	t := strings.ToLower(dataType)
	return t == "timestamptz" || strings.Contains(t, "with time zone")
}
