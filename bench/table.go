package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/source"
)

// tableName is the benchmark table, in schema public of the benchmark database.
const tableName = "profile_bench"

// tableVersion is written in the table's comment once a build has finished. Changing the
// columns below must change it, so that a table of an older shape is rebuilt, not reused.
const tableVersion = "vigia bench profile table v1"

// buildChunk is how many rows one INSERT ... SELECT adds: small enough to report progress
// during a build of millions of rows, large enough that per-statement costs do not count.
const buildChunk = 500_000

// benchColumn is one column of the benchmark table: its type, its class (what statistics
// the standard profile computes for it) and the SQL expression that generates it from the
// row number i.
type benchColumn struct {
	name, sqlType, class, expr string
}

// h is a deterministic pseudo-random non-negative bigint for row i, one stream per seed:
// the table is the same on every build, so truths and estimates compare across runs.
func h(seed int) string {
	return "(hashint8extended(i, " + strconv.Itoa(seed) + ") & 9223372036854775807)"
}

// benchColumns are the 20 columns, of mixed types and distributions: unique, uniform,
// skewed (Zipf-like, dominant category), clustered on disk (load-order timestamps and
// dates), low-cardinality, with nulls, and texts with semantic types (e-mail, phone).
func benchColumns() []benchColumn {
	return []benchColumn{
		{"id", "bigint", source.ClassNumeric, "i"},
		{"customer_id", "integer", source.ClassNumeric, "(1 + " + h(1) + " % 200000)::int"},
		{"quantity", "smallint", source.ClassNumeric, "(1 + " + h(2) + " % 50)::smallint"},
		{"amount", "numeric(12,2)", source.ClassNumeric, "(" + h(3) + " % 1000000) / 100.0"},
		{"discount", "double precision", source.ClassNumeric,
			"CASE WHEN " + h(4) + " % 10 < 4 THEN NULL ELSE (" + h(5) + " % 10000) / 10000.0 END"},
		// 1/u for u uniform: P(visits >= k) ~ 1/k, a heavy tail of rare values.
		{"visits", "integer", source.ClassNumeric, "(1000000 / (" + h(6) + " % 1000000 + 1))::int"},
		{"is_active", "boolean", source.ClassBoolean, h(7) + " % 10 < 7"},
		{"is_vip", "boolean", source.ClassBoolean,
			"CASE WHEN " + h(8) + " % 10 < 9 THEN NULL ELSE " + h(9) + " % 2 = 0 END"},
		{"birth_date", "date", source.ClassTemporal,
			"CASE WHEN " + h(10) + " % 20 = 0 THEN NULL ELSE date '1940-01-01' + (" + h(11) + " % 29000)::int END"},
		{"created_at", "timestamp", source.ClassTemporal, "timestamp '2021-01-01' + i * interval '17 seconds'"},
		{"updated_at", "timestamptz", source.ClassTemporal,
			"CASE WHEN " + h(12) + " % 5 = 0 THEN NULL ELSE timestamptz '2021-01-01 00:00:00+00' + i * interval '17 seconds' + (" + h(13) + " % 2592000) * interval '1 second' END"},
		{"order_date", "date", source.ClassTemporal, "date '2021-01-01' + (i * 17 / 86400)::int"},
		{"product_code", "text", source.ClassText, "'P-' || lpad((" + h(14) + " % 100000)::text, 5, '0')"},
		{"description", "text", source.ClassText,
			"left(repeat(md5((" + h(15) + " % 1000000)::text), 7), (60 + " + h(16) + " % 140)::int)"},
		// Unique by construction (md5 of the row number), so no index is built for it.
		{"ukey", "text", source.ClassText, "md5(i::text)"},
		{"category", "text", source.ClassText,
			"(ARRAY['retail','wholesale','online','partner','internal'])[1 + " + h(17) + " % 5]"},
		{"status", "text", source.ClassText,
			"CASE WHEN " + h(18) + " % 100 < 85 THEN 'delivered' WHEN " + h(18) + " % 100 < 95 THEN 'shipped'" +
				" WHEN " + h(18) + " % 100 < 99 THEN 'cancelled' ELSE 'returned' END"},
		{"notes", "text", source.ClassText,
			"CASE WHEN " + h(19) + " % 10 < 7 THEN NULL ELSE 'nota ' || (" + h(20) + " % 1000) END"},
		{"email", "text", source.ClassText,
			"CASE WHEN " + h(21) + " % 50 = 0 THEN NULL ELSE 'user' || (" + h(22) + " % 1000000) || '@example.pt' END"},
		{"phone", "text", source.ClassText,
			"'9' || (ARRAY['1','2','3','6'])[1 + " + h(23) + " % 4] || lpad((" + h(24) + " % 10000000)::text, 7, '0')"},
	}
}

// quoteIdent quotes a Postgres identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func qualifiedTable() string {
	return quoteIdent("public") + "." + quoteIdent(tableName)
}

// tableComment is what a finished build of rows rows writes on the table.
func tableComment(rows int) string {
	return tableVersion + ": " + strconv.Itoa(rows) + " rows"
}

// ensureTable reuses the benchmark table when a finished build of the same shape and row
// count is there, and builds it otherwise. It reports whether it built.
func ensureTable(ctx context.Context, db *sql.DB, rows int, progress io.Writer) (bool, time.Duration, error) {
	var comment sql.NullString
	err := db.QueryRowContext(ctx, "SELECT obj_description(to_regclass($1), 'pg_class')", "public."+tableName).Scan(&comment)
	if err != nil {
		return false, 0, dbError(ctx, "read the table comment", err)
	}
	if comment.String == tableComment(rows) {
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+qualifiedTable()).Scan(&n); err != nil {
			return false, 0, dbError(ctx, "count the existing table", err)
		}
		if n == int64(rows) {
			fmt.Fprintf(progress, "reusing table %s (%d rows)\n", tableName, n)
			return false, 0, nil
		}
	}
	start := time.Now()
	if err := buildTable(ctx, db, rows, progress); err != nil {
		return false, 0, err
	}
	return true, time.Since(start), nil
}

func buildTable(ctx context.Context, db *sql.DB, rows int, progress io.Writer) error {
	cols := benchColumns()
	defs := make([]string, len(cols))
	exprs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = quoteIdent(c.name) + " " + c.sqlType
		exprs[i] = c.expr
	}
	// Unlogged: the build writes no WAL, and reads (all the benchmark does) are the same
	// as on a logged table. A crash empties it; the row-count check then rebuilds it.
	stmts := []string{
		"DROP TABLE IF EXISTS " + qualifiedTable(),
		"CREATE UNLOGGED TABLE " + qualifiedTable() + " (" + strings.Join(defs, ", ") + ")",
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return dbError(ctx, "create the table", err)
		}
	}
	insert := "INSERT INTO " + qualifiedTable() + " SELECT " + strings.Join(exprs, ", ") +
		" FROM generate_series($1::bigint, $2::bigint) AS g(i)"
	start := time.Now()
	for lo := 1; lo <= rows; lo += buildChunk {
		hi := min(lo+buildChunk-1, rows)
		if _, err := db.ExecContext(ctx, insert, lo, hi); err != nil {
			return dbError(ctx, "insert rows", err)
		}
		fmt.Fprintf(progress, "  inserted %d/%d rows (%s)\n", hi, rows, since(start))
	}
	fmt.Fprintf(progress, "  adding the primary key\n")
	if _, err := db.ExecContext(ctx, "ALTER TABLE "+qualifiedTable()+" ADD PRIMARY KEY ("+quoteIdent("id")+")"); err != nil {
		return dbError(ctx, "add the primary key", err)
	}
	fmt.Fprintf(progress, "  VACUUM ANALYZE\n")
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE "+qualifiedTable()); err != nil {
		return dbError(ctx, "vacuum analyze", err)
	}
	// The comment marks the build finished: an interrupted build is never reused.
	if _, err := db.ExecContext(ctx, "COMMENT ON TABLE "+qualifiedTable()+" IS '"+tableComment(rows)+"'"); err != nil {
		return dbError(ctx, "comment the table", err)
	}
	fmt.Fprintf(progress, "  table built in %s\n", since(start))
	return nil
}

func since(t time.Time) string {
	return time.Since(t).Round(10 * time.Millisecond).String()
}
