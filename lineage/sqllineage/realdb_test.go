package sqllineage_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

// These tests read view definitions back from real catalogs (the local PostgreSQL and
// MariaDB, and SQLite in memory) and check that every one of them is analysed with
// every column resolved and named exactly as the database names the view's columns.
// Each test creates its own database and drops it; without a server it is skipped.

// pgViewsDDL adds views covering each construct to exampleDDL.
const pgViewsDDL = `
CREATE VIEW v_using AS SELECT * FROM orders JOIN customers USING (id);
CREATE VIEW v_natural AS SELECT * FROM orders NATURAL JOIN customers;
CREATE VIEW v_fulljoin AS SELECT * FROM orders FULL JOIN customers USING (id);
CREATE VIEW v_left_right AS SELECT a.id, b.name, c.segment FROM orders a LEFT JOIN customers b ON b.id = a.customer_id RIGHT JOIN customers c ON c.id = b.id;
CREATE VIEW v_union AS SELECT id, amount FROM orders UNION ALL SELECT id, NULL FROM customers;
CREATE VIEW v_setops AS SELECT id FROM orders INTERSECT SELECT id FROM customers EXCEPT SELECT customer_id FROM orders;
CREATE VIEW v_sub AS SELECT (SELECT max(amount) FROM orders o2 WHERE o2.customer_id = c.id), upper(name), c.id::text,
  'x'::text, coalesce(name, country), greatest(1, 2), exists(SELECT 1 FROM orders), array(SELECT id FROM orders) FROM customers c;
CREATE VIEW v_win AS SELECT id, sum(amount) OVER w AS running, row_number() OVER (PARTITION BY customer_id ORDER BY created_at) rn
  FROM orders WINDOW w AS (PARTITION BY status ORDER BY id);
CREATE VIEW v_lateral AS SELECT c.id, x.total FROM customers c CROSS JOIN LATERAL (SELECT sum(o.amount) total FROM orders o WHERE o.customer_id = c.id) x;
CREATE VIEW v_recursive AS WITH RECURSIVE r(n, a) AS (SELECT 1, amount FROM orders UNION ALL SELECT n + 1, a FROM r WHERE n < 3) SELECT * FROM r;
CREATE VIEW v_cte_chain AS WITH a AS (SELECT id, amount FROM orders), b AS (SELECT id AS oid, amount * 2 AS dbl FROM a) SELECT * FROM b;
CREATE VIEW "select ""x""" AS SELECT "id" AS "odd ""col""", amount AS "Amount" FROM orders;
CREATE VIEW v_quoted AS SELECT "odd ""col""" AS y FROM "select ""x""";
CREATE VIEW v_func AS SELECT o.id, u.tag FROM orders o, unnest(array[o.status, 'x']) AS u(tag);
CREATE VIEW v_star AS SELECT o.*, c.name FROM orders o JOIN customers c ON c.id = o.customer_id;
CREATE VIEW v_distinct_on AS SELECT DISTINCT ON (customer_id) customer_id, amount FROM orders ORDER BY customer_id, created_at DESC;
CREATE VIEW v_grouping AS SELECT status, customer_id, sum(amount) FROM orders GROUP BY GROUPING SETS ((status), (customer_id));
CREATE VIEW v_case AS SELECT CASE status WHEN 'paid' THEN amount ELSE 0 END AS paid_amount, CASE WHEN amount > 10 THEN 'big' END AS band FROM orders;
CREATE VIEW v_json AS SELECT id, to_jsonb(o.*) ->> 'status' AS st FROM orders o;
CREATE VIEW v_values AS SELECT v.code, v.label, c.name FROM (VALUES ('PT', 'Portugal'), ('ES', 'Spain')) v(code, label) JOIN customers c ON c.country = v.code;
CREATE VIEW v_schema AS SELECT public.orders.amount FROM public.orders;
CREATE MATERIALIZED VIEW mv_totals AS SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id;
`

func randomName(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return "sqllineage_test_" + hex.EncodeToString(b)
}

// MustOpenOrSkip opens a database and pings it, skipping the test when the server is
// not running here.
func MustOpenOrSkip(tb testing.TB, driver, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		tb.Skipf("%s not reachable: skipping", driver)
	}
	return db
}

// MustExec runs each statement of a script separated by ";\n".
func MustExec(tb testing.TB, db *sql.DB, script string) {
	tb.Helper()
	for _, stmt := range strings.Split(script, ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.Exec(stmt); err != nil {
			tb.Fatalf("exec %q: %v", stmt, err)
		}
	}
}

// MustRows reads two text columns.
func MustRows(tb testing.TB, db *sql.DB, query string, args ...any) [][2]string {
	tb.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			tb.Fatal(err)
		}
		out = append(out, [2]string{a, b})
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// checkEveryView analyses each definition and compares the output names with the
// view's columns in the catalog.
func checkEveryView(t *testing.T, d sqllineage.Dialect, defs [][2]string, cat sqllineage.MapCatalog, key func(view string) string) map[string]sqllineage.Result {
	t.Helper()
	results := map[string]sqllineage.Result{}
	for _, def := range defs {
		view, body := def[0], def[1]
		t.Run(view, func(t *testing.T) {
			res, err := sqllineage.Analyze(d, body, cat)
			if err != nil {
				t.Fatalf("Analyze: %v\n%s", err, body)
			}
			results[view] = res
			var names []string
			for _, c := range res.Columns {
				names = append(names, c.Name)
				if !c.Resolved {
					t.Errorf("column %q not resolved", c.Name)
				}
			}
			if want := cat[key(view)]; !equalStrings(names, want) {
				t.Errorf("names %q, catalog says %q\n%s", names, want, body)
			}
			if len(res.Unresolved) > 0 || !res.ColumnLevel {
				t.Errorf("unresolved %v, column level %v\n%s", res.Unresolved, res.ColumnLevel, body)
			}
		})
	}
	return results
}

func TestPostgresCatalogDefinitionsAnalyse(t *testing.T) {
	admin := MustOpenOrSkip(t, "pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	t.Cleanup(func() { admin.Close() })
	name := randomName(t)
	MustExec(t, admin, "CREATE DATABASE "+name)
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	db := MustOpenOrSkip(t, "pgx", "postgres://postgres@127.0.0.1:5432/"+name+"?sslmode=disable")
	defer db.Close()
	MustExec(t, db, exampleDDL+pgViewsDDL)

	cat := sqllineage.MapCatalog{}
	for _, r := range MustRows(t, db, `SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
		AND c.relkind IN ('r', 'v', 'm') ORDER BY c.relname, a.attnum`) {
		cat[r[0]] = append(cat[r[0]], r[1])
	}
	defs := MustRows(t, db, `SELECT viewname::text, definition FROM pg_views WHERE schemaname = 'public'
		UNION ALL SELECT matviewname::text, definition FROM pg_matviews WHERE schemaname = 'public' ORDER BY 1`)
	results := checkEveryView(t, pg, defs, cat, func(v string) string { return v })

	enriched := results["orders_enriched"]
	want{
		columns: []col{copied("order_id", "orders.id"), copied("created_at", "orders.created_at"),
			copied("customer_name", "customers.name"), copied("amount", "orders.amount"),
			derived("size_band", "orders.amount", "customers.segment")},
		sources: []string{"orders", "customers"},
		filters: []string{"orders.status", "customers.id", "orders.customer_id"},
	}.Check(t, enriched)
	want{
		columns: []col{derived("day", "orders_enriched.created_at"), derived("revenue", "orders_enriched.amount"),
			derived("orders"), derived("customers", "orders_enriched.customer_name"),
			derived("large_orders", "orders_enriched.size_band")},
		filters: []string{"orders_enriched.created_at"},
	}.Check(t, results["revenue_daily"])
	want{columns: []col{copied("y", `select "x".odd "col"`)}}.Check(t, results["v_quoted"])
	// public is on the search path, so Postgres prints the name unqualified.
	want{columns: []col{copied("amount", "orders.amount")}}.Check(t, results["v_schema"])
}

// myViewsDDL is exampleDDL and the constructs MariaDB has, in MariaDB's spelling.
const myViewsDDL = `
CREATE TABLE orders (id int PRIMARY KEY, customer_id int, amount decimal(12,2), status varchar(20), created_at datetime);
CREATE TABLE customers (id int PRIMARY KEY, name varchar(50), country varchar(2), segment varchar(20));
CREATE VIEW orders_enriched AS
WITH paid AS (
  SELECT id, customer_id, amount, created_at FROM orders WHERE status = 'paid'
)
SELECT p.id AS order_id, p.created_at, c.name AS customer_name, p.amount,
       CASE WHEN p.amount >= 1000 THEN 'large' WHEN c.segment = 'vip' THEN 'vip' ELSE 'normal' END AS size_band
FROM paid p JOIN customers c ON c.id = p.customer_id;
CREATE VIEW revenue_daily AS
SELECT CAST(created_at AS date) AS day, sum(amount) AS revenue, count(*) AS orders,
       count(DISTINCT customer_name) AS customers,
       sum(CASE WHEN size_band = 'large' THEN 1 ELSE 0 END) AS large_orders
FROM orders_enriched GROUP BY CAST(created_at AS date);
CREATE VIEW v_using AS SELECT * FROM orders JOIN customers USING (id);
CREATE VIEW v_natural AS SELECT * FROM orders NATURAL JOIN customers;
CREATE VIEW v_left_right AS SELECT a.id, b.name, c.segment FROM orders a LEFT JOIN customers b ON b.id = a.customer_id RIGHT JOIN customers c ON c.id = b.id;
CREATE VIEW v_union AS SELECT id, amount FROM orders UNION ALL SELECT id, NULL FROM customers;
CREATE VIEW v_setops AS SELECT id FROM orders INTERSECT SELECT id FROM customers EXCEPT SELECT customer_id FROM orders;
CREATE VIEW v_sub AS SELECT (SELECT max(amount) FROM orders o2 WHERE o2.customer_id = c.id) m, upper(name), c.id + 0, 'x', coalesce(name, country)
  FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id);
CREATE VIEW v_win AS SELECT id, sum(amount) OVER w AS running, row_number() OVER (PARTITION BY customer_id ORDER BY created_at) rn
  FROM orders WINDOW w AS (PARTITION BY status ORDER BY id);
CREATE VIEW v_recursive AS WITH RECURSIVE r(n, a) AS (SELECT 1, amount FROM orders UNION ALL SELECT n + 1, a FROM r WHERE n < 3) SELECT * FROM r;
CREATE VIEW v_cte_chain AS WITH a AS (SELECT id, amount FROM orders), b AS (SELECT id AS oid, amount * 2 AS dbl FROM a) SELECT * FROM b;
CREATE VIEW v_derived AS SELECT t.cid, t.total FROM (SELECT customer_id cid, sum(amount) total FROM orders GROUP BY customer_id) t;
CREATE VIEW ` + "`select \"x\"`" + ` AS SELECT ` + "`id` AS `odd ``col`" + `, amount AS Amount FROM orders;
CREATE VIEW v_star AS SELECT o.*, c.name FROM orders o JOIN customers c ON c.id = o.customer_id;
CREATE VIEW v_case AS SELECT CASE status WHEN 'paid' THEN amount ELSE 0 END AS paid_amount, IF(amount > 10, 'big', NULL) AS band FROM orders;
CREATE VIEW v_group_concat AS SELECT customer_id, group_concat(status ORDER BY created_at SEPARATOR ',') AS statuses FROM orders GROUP BY 1;
`

func TestMariaDBCatalogDefinitionsAnalyse(t *testing.T) {
	admin := MustOpenOrSkip(t, "mysql", "root@tcp(127.0.0.1:3306)/")
	t.Cleanup(func() { admin.Close() })
	name := randomName(t)
	MustExec(t, admin, "CREATE DATABASE "+name)
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	db := MustOpenOrSkip(t, "mysql", "root@tcp(127.0.0.1:3306)/"+name)
	defer db.Close()
	MustExec(t, db, myViewsDDL)

	cat := sqllineage.MapCatalog{}
	for _, r := range MustRows(t, db, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = ? ORDER BY table_name, ordinal_position`, name) {
		cat[name+"."+r[0]] = append(cat[name+"."+r[0]], r[1])
	}
	defs := MustRows(t, db, `SELECT table_name, view_definition FROM information_schema.views WHERE table_schema = ? ORDER BY 1`, name)
	results := checkEveryView(t, my, defs, cat, func(v string) string { return name + "." + v })

	s := name + "."
	want{
		columns: []col{copied("order_id", s+"orders.id"), copied("created_at", s+"orders.created_at"),
			copied("customer_name", s+"customers.name"), copied("amount", s+"orders.amount"),
			derived("size_band", s+"orders.amount", s+"customers.segment")},
		sources: []string{s + "orders", s + "customers"},
		filters: []string{s + "orders.status", s + "customers.id", s + "orders.customer_id"},
	}.Check(t, results["orders_enriched"])
	want{
		columns: []col{derived("day", s+"orders_enriched.created_at"), derived("revenue", s+"orders_enriched.amount"),
			derived("orders"), derived("customers", s+"orders_enriched.customer_name"),
			derived("large_orders", s+"orders_enriched.size_band")},
		filters: []string{s + "orders_enriched.created_at"},
	}.Check(t, results["revenue_daily"])
}

// liteViewsDDL is the SQLite spelling, with SQLite's own quoting.
const liteViewsDDL = `
CREATE TABLE orders (id integer PRIMARY KEY, customer_id int, amount real, status text, created_at text);
CREATE TABLE [Customers] (id integer PRIMARY KEY, name text, country text, segment text);
` + liteOrdersEnriched + `;
` + liteRevenueDaily + `;
CREATE VIEW IF NOT EXISTS v_exprs AS SELECT date(created_at), sum(amount), count(*) AS n, amount * 2 /* c */ + 1 FROM orders GROUP BY 1;
CREATE VIEW v_star AS SELECT * FROM orders, customers WHERE orders.customer_id = customers.id;
CREATE VIEW v_using AS SELECT * FROM orders JOIN customers USING (id);
CREATE VIEW v_union AS SELECT id, amount FROM orders UNION ALL SELECT id, NULL FROM customers;
CREATE VIEW "v quoted" AS SELECT ` + "`o`.`amount`" + ` AS [the amount] FROM orders o;
`

func TestSQLiteCatalogDefinitionsAnalyse(t *testing.T) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database
	MustExec(t, db, liteViewsDDL)

	cat := sqllineage.MapCatalog{}
	tables := MustRows(t, db, `SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY 1`)
	for _, tb := range tables {
		for _, r := range MustRows(t, db, fmt.Sprintf(`SELECT name, type FROM pragma_table_info('%s')`, strings.ReplaceAll(tb[0], "'", "''"))) {
			cat[tb[0]] = append(cat[tb[0]], r[0])
		}
	}
	defs := MustRows(t, db, `SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY 1`)
	results := checkEveryView(t, lite, defs, cat, func(v string) string { return v })
	want{columns: []col{copied("the amount", "orders.amount")}}.Check(t, results["v quoted"])
}
