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

// bucketSums answers, per bucket of the key hash, the rows and the two sums of the
// row hashes: one read of the table, only numbers leave the source.
func (g gen) bucketSums(keys, cols []catalog.Column, buckets int) string {
	inner := "SELECT " + g.md5(g.concat(keys)) + " AS kh, " + g.md5(g.concat(cols)) + " AS rh FROM " + g.table
	if g.d == rulesql.Postgres {
		// OFFSET 0 keeps the hashes computed once per row.
		inner += " OFFSET 0"
	}
	return "SELECT b, COUNT(*), SUM(h1), SUM(h2) FROM (SELECT " + g.mod(g.hexInt("kh", 1), buckets) + " AS b, " +
		g.hexInt("rh", 1) + " AS h1, " + g.hexInt("rh", 9) + " AS h2 FROM (" + inner + ") s1) s2 GROUP BY b"
}

// leafRows answers, for the rows of the given buckets, the key columns as canonical
// text and an 8-digit hash of every compared column: keys and hashes, no other value.
func (g gen) leafRows(keys, cols []catalog.Column, buckets int, in []int) string {
	sel := make([]string, 0, len(keys)+len(cols))
	for _, k := range keys {
		sel = append(sel, g.colText(k))
	}
	for _, c := range cols {
		sel = append(sel, "substr("+g.md5(g.colText(c))+", 1, 8)")
	}
	list := make([]string, len(in))
	for i, b := range in {
		list[i] = strconv.Itoa(b)
	}
	return "SELECT " + strings.Join(sel, ", ") + " FROM " + g.table + " WHERE " +
		g.mod(g.hexInt(g.md5(g.concat(keys)), 1), buckets) + " IN (" + strings.Join(list, ", ") + ")"
}
