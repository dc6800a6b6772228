package datadiff

import (
	"strconv"
	"strings"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/source"
)

// The row's canonical text is the same on every engine: each column as text (booleans
// as 1/0), NULL as \N, joined by the unit separator (U+001F). Its MD5 is taken on the
// source; the first 8 hex digits of the key's MD5 pick the bucket, the row MD5's first
// 16 hex digits, as two 32-bit numbers, are summed per bucket.

// gen writes a side's statements in its dialect.
type gen struct {
	d     rulesql.Dialect
	table string
}

func newGen(d rulesql.Dialect, t rulesql.Table) gen {
	return gen{d: d, table: rulesql.TableRef(d, t)}
}

func (g gen) sep() string {
	switch g.d {
	case rulesql.MySQL:
		return "CHAR(31)"
	case rulesql.SQLite:
		return "char(31)"
	}
	return "chr(31)"
}

// colText is a column as canonical text.
func (g gen) colText(c catalog.Column) string {
	q := rulesql.QuoteIdent(g.d, c.Name)
	var e string
	switch {
	case g.d == rulesql.Postgres && c.Class == source.ClassBoolean:
		e = "CASE WHEN " + q + " THEN '1' WHEN NOT " + q + " THEN '0' END"
	case g.d == rulesql.Postgres:
		e = "CAST(" + q + " AS text)"
	case g.d == rulesql.MySQL:
		e = "CAST(" + q + " AS CHAR)"
	default:
		e = "CAST(" + q + " AS TEXT)"
	}
	return "COALESCE(" + e + ", " + rulesql.QuoteString(g.d, `\N`) + ")"
}

// concat joins canonical texts with the separator.
func (g gen) concat(cols []catalog.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = g.colText(c)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	if g.d == rulesql.MySQL {
		return "CONCAT(" + strings.Join(parts, ", "+g.sep()+", ") + ")"
	}
	return strings.Join(parts, " || "+g.sep()+" || ")
}

func (g gen) md5(e string) string {
	if g.d == rulesql.MySQL {
		return "MD5(" + e + ")"
	}
	return "md5(" + e + ")"
}

// hexInt is 8 hex digits of h from start (1-based) as a non-negative number.
func (g gen) hexInt(h string, start int) string {
	s := strconv.Itoa(start)
	switch g.d {
	case rulesql.MySQL:
		return "CAST(CONV(SUBSTRING(" + h + ", " + s + ", 8), 16, 10) AS UNSIGNED)"
	case rulesql.SQLite:
		return "vigia_hex_int(substr(" + h + ", " + s + ", 8))"
	}
	return "('x' || lpad(substr(" + h + ", " + s + ", 8), 16, '0'))::bit(64)::bigint"
}

func (g gen) mod(e string, n int) string {
	if g.d == rulesql.SQLite {
		return "(" + e + " % " + strconv.Itoa(n) + ")"
	}
	return "MOD(" + e + ", " + strconv.Itoa(n) + ")"
}

// bucketing assigns a row to a bucket from its key alone: by the key's MD5 (any key
// type), or, for one integer key, by contiguous ranges of the key (the leaf reads are
// then index range scans).
type bucketing struct {
	buckets int
	// ranged: bucket = (key - lo) / width.
	ranged    bool
	lo, width int64
}

// bucketExpr is a row's bucket in g's dialect.
func (g gen) bucketExpr(bk bucketing, keys []catalog.Column) string {
	if bk.ranged {
		k := rulesql.QuoteIdent(g.d, keys[0].Name)
		diff := "(" + k + " - (" + strconv.FormatInt(bk.lo, 10) + "))"
		if g.d == rulesql.MySQL {
			return diff + " DIV " + strconv.FormatInt(bk.width, 10)
		}
		return diff + " / " + strconv.FormatInt(bk.width, 10)
	}
	return g.mod(g.hexInt(g.md5(g.concat(keys)), 1), bk.buckets)
}

// bucketSums answers, per bucket, the rows and the two sums of the row hashes: one
// read of the table, only numbers leave the source. A NULL key's bucket is NULL.
func (g gen) bucketSums(bk bucketing, keys, cols []catalog.Column) string {
	inner := "SELECT " + g.bucketExpr(bk, keys) + " AS b, " + g.md5(g.concat(cols)) + " AS rh FROM " + g.table
	if g.d == rulesql.Postgres {
		// OFFSET 0 keeps each row's hash computed once.
		inner += " OFFSET 0"
	}
	return "SELECT b, COUNT(*), SUM(" + g.hexInt("rh", 1) + "), SUM(" + g.hexInt("rh", 9) + ") FROM (" + inner + ") s1 GROUP BY b"
}

// leafRows answers, for the rows of the given buckets, the key columns as canonical
// text and an 8-digit hash of every compared column: keys and hashes, no other value.
// Bucket -1 stands for the rows whose key is NULL.
func (g gen) leafRows(bk bucketing, keys, cols []catalog.Column, in []int) string {
	sel := make([]string, 0, len(keys)+len(cols))
	for _, k := range keys {
		sel = append(sel, g.colText(k))
	}
	for _, c := range cols {
		sel = append(sel, "substr("+g.md5(g.colText(c))+", 1, 8)")
	}
	var conds, list []string
	for _, b := range in {
		switch {
		case b == -1:
			var nulls []string
			for _, k := range keys {
				nulls = append(nulls, rulesql.QuoteIdent(g.d, k.Name)+" IS NULL")
			}
			conds = append(conds, "("+strings.Join(nulls, " OR ")+")")
		case bk.ranged:
			lo := bk.lo + int64(b)*bk.width
			conds = append(conds, rulesql.QuoteIdent(g.d, keys[0].Name)+" BETWEEN "+strconv.FormatInt(lo, 10)+" AND "+
				strconv.FormatInt(lo+bk.width-1, 10))
		default:
			list = append(list, strconv.Itoa(b))
		}
	}
	if len(list) > 0 {
		conds = append(conds, g.bucketExpr(bk, keys)+" IN ("+strings.Join(list, ", ")+")")
	}
	return "SELECT " + strings.Join(sel, ", ") + " FROM " + g.table + " WHERE " + strings.Join(conds, " OR ")
}

// FullHashStatement is one full hash aggregate of a side: the rows and the sums of
// their hashes over cols, without buckets; the benchmark's yardstick.
func FullHashStatement(s Side, cols []string) string {
	sd := s.side()
	cs := make([]catalog.Column, len(cols))
	for i, c := range cols {
		cs[i] = sd.cols[c]
	}
	g := sd.gen
	inner := "SELECT " + g.md5(g.concat(cs)) + " AS rh FROM " + g.table
	if g.d == rulesql.Postgres {
		inner += " OFFSET 0"
	}
	return "SELECT COUNT(*), SUM(" + g.hexInt("rh", 1) + "), SUM(" + g.hexInt("rh", 9) + ") FROM (" + inner + ") s1"
}
