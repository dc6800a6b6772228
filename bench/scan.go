package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/store"
)

// ScanSourceName is the kept source database of `vigia bench scan` with the given
// numbers of tables and views.
func ScanSourceName(tables, views int) string {
	return fmt.Sprintf("vigia_bench_scan_%d_%d", tables, views)
}

// scanSchemas spreads the tables of the scan source over this many schemas (and its
// views over a tenth as many).
const scanSchemas = 20

// ScanSourceTable names table i of the scan source.
func ScanSourceTable(i int) (schema, table string) {
	return fmt.Sprintf("s%02d", i%scanSchemas), fmt.Sprintf("t%05d", i)
}

// EnsureScanSource builds (once, then keeps) the Postgres source database name next to
// databaseURL: tables small tables over 20 schemas, each with a few rows and columns of
// varied types (integer keys, text, numeric, timestamps, booleans, dates, uuid, jsonb,
// arrays), and views over them in their own schemas — joins of two tables with
// expressions, aggregates, unions — so that each view's columns come from named source
// columns. The database is marked complete only at the end, so an interrupted build is
// built again. It returns the source's DSN.
func EnsureScanSource(ctx context.Context, databaseURL, name string, tables, views int, progress func(string)) (string, error) {
	dsn, err := DatabaseURL(databaseURL, name)
	if err != nil {
		return "", err
	}
	// store.Open creates the database when it is missing; the source holds no Vigia
	// schema, so it is not migrated.
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	pool := db.Pool()
	var done bool
	if err := pool.QueryRow(ctx, `SELECT coalesce(obj_description('public'::regnamespace, 'pg_namespace'), '') = $1`, scanSourceMark(tables, views)).Scan(&done); err != nil {
		return "", err
	}
	if done {
		return dsn, nil
	}
	// Start over: drop whatever an interrupted build left.
	if _, err := pool.Exec(ctx, `DO $$ DECLARE s text; BEGIN
		FOR s IN SELECT nspname FROM pg_namespace WHERE nspname ~ '^(s|v)[0-9]+$' LOOP EXECUTE format('DROP SCHEMA %I CASCADE', s); END LOOP;
		DROP TABLE IF EXISTS public.vigia_bench_complete; END $$`); err != nil {
		return "", err
	}
	var b strings.Builder
	for s := range scanSchemas {
		fmt.Fprintf(&b, "CREATE SCHEMA s%02d;\n", s)
	}
	for s := range max(1, scanSchemas/10) {
		fmt.Fprintf(&b, "CREATE SCHEMA v%02d;\n", s)
	}
	if _, err := pool.Exec(ctx, b.String()); err != nil {
		return "", err
	}
	const step = 250
	for start := 0; start < tables; start += step {
		b.Reset()
		b.WriteString("BEGIN;\n")
		for i := start; i < min(tables, start+step); i++ {
			writeScanTable(&b, i)
		}
		b.WriteString("COMMIT;\n")
		if _, err := pool.Exec(ctx, b.String()); err != nil {
			return "", fmt.Errorf("create tables from %d: %w", start, err)
		}
		if progress != nil && (start+step)%2000 == 0 {
			progress(fmt.Sprintf("created %d of %d tables", start+step, tables))
		}
	}
	b.Reset()
	for v := range views {
		writeScanView(&b, v, tables)
	}
	if _, err := pool.Exec(ctx, b.String()); err != nil {
		return "", fmt.Errorf("create views: %w", err)
	}
	// The mark of a complete build: a comment, so that the source holds nothing the
	// scan would count.
	if _, err := pool.Exec(ctx, `ANALYZE; COMMENT ON SCHEMA public IS `+quoteLiteral(scanSourceMark(tables, views))); err != nil {
		return "", err
	}
	return dsn, nil
}

func scanSourceMark(tables, views int) string {
	return fmt.Sprintf("vigia bench scan source: %d tables, %d views, complete", tables, views)
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// writeScanTable writes the DDL and rows of table i: five shapes of columns in turn.
func writeScanTable(b *strings.Builder, i int) {
	s, t := ScanSourceTable(i)
	q := pgx.Identifier{s, t}.Sanitize()
	switch i % 5 {
	case 0:
		fmt.Fprintf(b, "CREATE TABLE %s (id integer PRIMARY KEY, name text NOT NULL, amount numeric(12,2), created_at timestamptz, active boolean);\n", q)
		fmt.Fprintf(b, "INSERT INTO %s SELECT g, 'name ' || g, g * 1.5 + %d, '2026-01-01'::timestamptz + g * interval '1 day', g %% 2 = 0 FROM generate_series(1, %d) g;\n", q, i%97, 3+i%4)
	case 1:
		fmt.Fprintf(b, "CREATE TABLE %s (id bigint PRIMARY KEY, code varchar(20) UNIQUE, qty integer, price double precision, day date);\n", q)
		fmt.Fprintf(b, "INSERT INTO %s SELECT g, 'C-' || g || '-%d', g * 10, g / 3.0, date '2026-03-01' + g FROM generate_series(1, %d) g;\n", q, i, 2+i%5)
	case 2:
		fmt.Fprintf(b, "CREATE TABLE %s (id integer PRIMARY KEY, ref uuid, payload jsonb, tags text[], note text);\n", q)
		fmt.Fprintf(b, "INSERT INTO %s SELECT g, md5(g::text || '%d')::uuid, jsonb_build_object('k', g), ARRAY['a' || g], CASE WHEN g %% 2 = 0 THEN NULL ELSE 'n' END FROM generate_series(1, %d) g;\n", q, i, 4)
	case 3:
		fmt.Fprintf(b, "CREATE TABLE %s (id integer PRIMARY KEY, parent_id integer, email text, score real, updated_at timestamp);\n", q)
		fmt.Fprintf(b, "INSERT INTO %s SELECT g, g - 1, 'user' || g || '@example.com', g * 0.5, timestamp '2026-06-01' + g * interval '1 hour' FROM generate_series(1, %d) g;\n", q, 3)
	default:
		fmt.Fprintf(b, "CREATE TABLE %s (id integer PRIMARY KEY, status text, amount bigint, country char(2), seen_at timestamptz);\n", q)
		fmt.Fprintf(b, "INSERT INTO %s SELECT g, (ARRAY['new','paid','void'])[1 + g %% 3], g * 100, 'PT', now() - g * interval '1 minute' FROM generate_series(1, %d) g;\n", q, 5)
	}
}

// writeScanView writes view v: a join of two tables, an aggregate or a union, each
// column traceable to source columns.
func writeScanView(b *strings.Builder, v, tables int) {
	name := pgx.Identifier{fmt.Sprintf("v%02d", v%max(1, scanSchemas/10)), fmt.Sprintf("view%04d", v)}.Sanitize()
	// Tables of shape 0 (id, name, amount, created_at, active) and of shape 1
	// (id, code, qty, price, day): i%5 picks the shape.
	a := (v * 10) % tables
	a -= a % 5
	bt := a + 1
	if bt >= tables {
		bt = 1
	}
	qa := scanTableSQL(a)
	qb := scanTableSQL(bt)
	switch v % 3 {
	case 0:
		fmt.Fprintf(b, "CREATE VIEW %s AS SELECT a.id, a.name, upper(a.name) AS name_upper, a.amount * b.qty AS total, b.code, b.day FROM %s a JOIN %s b ON b.id = a.id;\n",
			name, qa, qb)
	case 1:
		fmt.Fprintf(b, "CREATE VIEW %s AS SELECT a.active, count(*) AS n, sum(a.amount) AS amount, max(a.created_at) AS last_created FROM %s a GROUP BY a.active;\n",
			name, qa)
	default:
		fmt.Fprintf(b, "CREATE VIEW %s AS SELECT a.id, a.name AS label, a.amount::double precision AS value FROM %s a UNION ALL SELECT b.id, b.code, b.price FROM %s b;\n",
			name, qa, qb)
	}
}

func scanTableSQL(i int) string {
	s, t := ScanSourceTable(i)
	return pgx.Identifier{s, t}.Sanitize()
}
