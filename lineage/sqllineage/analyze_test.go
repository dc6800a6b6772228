package sqllineage_test

import (
	"testing"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

type analyzeCase struct {
	name    string
	dialect sqllineage.Dialect
	sql     string
	cat     sqllineage.Catalog // shopCatalog() when nil
	want    want
}

func runAnalyzeCases(t *testing.T, cases []analyzeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(string(tc.dialect)+"/"+tc.name, func(t *testing.T) {
			cat := tc.cat
			if cat == nil {
				cat = shopCatalog()
			}
			res, err := sqllineage.Analyze(tc.dialect, tc.sql, cat)
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			tc.want.Check(t, res)
		})
	}
}

const (
	pg   = sqllineage.Postgres
	my   = sqllineage.MySQL
	lite = sqllineage.SQLite
)

func TestAnalyzeExampleViews(t *testing.T) {
	enriched := func(schema string) want {
		s := schema
		return want{
			columns: []col{
				copied("order_id", s+"orders.id"),
				copied("created_at", s+"orders.created_at"),
				copied("customer_name", s+"customers.name"),
				copied("amount", s+"orders.amount"),
				// CASE: every branch and every condition counts.
				derived("size_band", s+"orders.amount", s+"customers.segment"),
			},
			sources: []string{s + "orders", s + "customers"},
			filters: []string{s + "orders.status", s + "customers.id", s + "orders.customer_id"},
		}
	}
	revenue := func(schema string) want {
		s := schema
		return want{
			columns: []col{
				derived("day", s+"orders_enriched.created_at"),
				derived("revenue", s+"orders_enriched.amount"),
				derived("orders"),
				derived("customers", s+"orders_enriched.customer_name"),
				derived("large_orders", s+"orders_enriched.size_band"),
			},
			sources: []string{s + "orders_enriched"},
			filters: []string{s + "orders_enriched.created_at"},
		}
	}
	runAnalyzeCases(t, []analyzeCase{
		{name: "OrdersEnriched", dialect: pg, sql: pgOrdersEnriched, want: enriched("")},
		{name: "OrdersEnriched", dialect: my, sql: myOrdersEnriched, want: enriched("shop.")},
		{name: "OrdersEnriched", dialect: lite, sql: liteOrdersEnriched, want: enriched("")},
		{name: "RevenueDaily", dialect: pg, sql: pgRevenueDaily, want: revenue("")},
		{name: "RevenueDaily", dialect: my, sql: myRevenueDaily, want: revenue("shop.")},
		{name: "RevenueDaily", dialect: lite, sql: liteRevenueDaily, want: revenue("")},
	})
}

// TestAmountFlowsOnlyToItsDerivedColumns composes the two views' lineage, as the
// lineage graph does, and checks where orders.amount ends up.
func TestAmountFlowsOnlyToItsDerivedColumns(t *testing.T) {
	for _, tc := range []struct {
		dialect            sqllineage.Dialect
		enriched, revenue  string
		viewSchema, amount string
	}{
		{pg, pgOrdersEnriched, pgRevenueDaily, "", "orders.amount"},
		{my, myOrdersEnriched, myRevenueDaily, "shop", "shop.orders.amount"},
		{lite, liteOrdersEnriched, liteRevenueDaily, "", "orders.amount"},
	} {
		t.Run(string(tc.dialect), func(t *testing.T) {
			base := shopCatalog()
			delete(base, "orders_enriched")
			delete(base, "shop.orders_enriched")
			e, err := sqllineage.Analyze(tc.dialect, tc.enriched, base)
			if err != nil {
				t.Fatal(err)
			}
			// The view's own columns, as discovery would list them, feed the next one.
			view := sqllineage.TableRef{Schema: tc.viewSchema, Name: "orders_enriched"}
			cat := sqllineage.MapCatalog{}
			for k, v := range base {
				cat[k] = v
			}
			var names []string
			for _, c := range e.Columns {
				names = append(names, c.Name)
			}
			cat[view.String()] = names
			r, err := sqllineage.Analyze(tc.dialect, tc.revenue, cat)
			if err != nil {
				t.Fatal(err)
			}
			// upstream: view column → base columns
			up := map[string][]sqllineage.ColumnRef{}
			for _, c := range e.Columns {
				up[c.Name] = c.From
			}
			amount := MustRef(t, tc.amount)
			var inEnriched, inRevenue []string
			for _, c := range e.Columns {
				for _, f := range c.From {
					if f == amount {
						inEnriched = append(inEnriched, c.Name)
					}
				}
			}
			for _, c := range r.Columns {
				hit := false
				for _, f := range c.From {
					if f.Table != view {
						t.Fatalf("revenue_daily.%s reads %v, not the view", c.Name, f)
					}
					for _, b := range up[f.Column] {
						hit = hit || b == amount
					}
				}
				if hit {
					inRevenue = append(inRevenue, c.Name)
				}
			}
			if got, want := inEnriched, []string{"amount", "size_band"}; !equalStrings(got, want) {
				t.Errorf("amount flows to orders_enriched %v, want %v", got, want)
			}
			if got, want := inRevenue, []string{"revenue", "large_orders"}; !equalStrings(got, want) {
				t.Errorf("amount flows to revenue_daily %v, want %v", got, want)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAnalyzeJoins(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "InnerJoinAliases", dialect: pg,
			sql: `SELECT o.id AS order_id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id`,
			want: want{
				columns: []col{copied("order_id", "orders.id"), copied("name", "customers.name")},
				sources: []string{"orders", "customers"},
				filters: []string{"customers.id", "orders.customer_id"},
			}},
		{name: "InnerJoinAliases", dialect: my,
			sql: "select `o`.`id` AS `order_id`,`c`.`name` AS `name` from (`shop`.`orders` `o` join `shop`.`customers` `c` on(`c`.`id` = `o`.`customer_id`))",
			want: want{
				columns: []col{copied("order_id", "shop.orders.id"), copied("name", "shop.customers.name")},
				sources: []string{"shop.orders", "shop.customers"},
				filters: []string{"shop.customers.id", "shop.orders.customer_id"},
			}},
		{name: "LeftRightFullJoins", dialect: pg,
			sql: `SELECT a.id, b.name, c.segment, d.status FROM orders a LEFT JOIN customers b ON b.id = a.customer_id
				RIGHT JOIN customers c ON c.id = b.id FULL OUTER JOIN orders d ON d.id = a.id`,
			want: want{
				columns: []col{copied("id", "orders.id"), copied("name", "customers.name"),
					copied("segment", "customers.segment"), copied("status", "orders.status")},
				sources: []string{"orders", "customers"},
				filters: []string{"customers.id", "orders.customer_id", "orders.id"},
			}},
		{name: "LeftRightJoins", dialect: my,
			sql: "select `a`.`id` AS `id`,`b`.`name` AS `name`,`c`.`segment` AS `segment` from ((`shop`.`orders` `a` left join `shop`.`customers` `b` on(`b`.`id` = `a`.`customer_id`)) right join `shop`.`customers` `c` on(`c`.`id` = `b`.`id`))",
			want: want{
				columns: []col{copied("id", "shop.orders.id"), copied("name", "shop.customers.name"), copied("segment", "shop.customers.segment")},
				sources: []string{"shop.orders", "shop.customers"},
				filters: []string{"shop.customers.id", "shop.orders.customer_id"},
			}},
		{name: "UsingStarExpandsMergedColumnFirst", dialect: pg,
			sql: `SELECT * FROM orders JOIN customers USING (id)`,
			want: want{
				columns: []col{copied("id", "orders.id"), copied("customer_id", "orders.customer_id"),
					copied("amount", "orders.amount"), copied("status", "orders.status"), copied("created_at", "orders.created_at"),
					copied("name", "customers.name"), copied("country", "customers.country"), copied("segment", "customers.segment")},
				filters: []string{"orders.id", "customers.id"},
			}},
		{name: "UsingUnqualifiedIsMergedColumn", dialect: my,
			sql: "select id, name from shop.orders join shop.customers using (id)",
			want: want{
				columns: []col{copied("id", "shop.orders.id"), copied("name", "shop.customers.name")},
				filters: []string{"shop.orders.id", "shop.customers.id"},
			}},
		{name: "FullJoinUsingCoalescesBothSides", dialect: pg,
			sql: " SELECT id,\n    orders.amount,\n    customers.name\n   FROM (orders\n     FULL JOIN customers USING (id));",
			want: want{
				columns: []col{derived("id", "orders.id", "customers.id"), copied("amount", "orders.amount"), copied("name", "customers.name")},
				filters: []string{"orders.id", "customers.id"},
			}},
		{name: "NaturalJoinFromCatalog", dialect: pg,
			sql: `SELECT * FROM orders NATURAL JOIN customers`,
			want: want{
				columns: []col{copied("id", "orders.id"), copied("customer_id", "orders.customer_id"),
					copied("amount", "orders.amount"), copied("status", "orders.status"), copied("created_at", "orders.created_at"),
					copied("name", "customers.name"), copied("country", "customers.country"), copied("segment", "customers.segment")},
				filters: []string{"orders.id", "customers.id"},
			}},
		{name: "NaturalJoinFromCatalog", dialect: my,
			sql: "select id, amount, name from shop.orders natural join shop.customers",
			want: want{
				columns: []col{copied("id", "shop.orders.id"), copied("amount", "shop.orders.amount"), copied("name", "shop.customers.name")},
				filters: []string{"shop.orders.id", "shop.customers.id"},
			}},
		{name: "NaturalJoinUnknownTable", dialect: pg,
			sql: `SELECT amount, extra FROM orders NATURAL JOIN mystery`,
			want: want{
				// amount may be merged with a mystery column; extra can only be mystery's.
				columns:    []col{unresolved("amount"), copied("extra", "mystery.extra")},
				sources:    []string{"orders", "mystery"},
				unresolved: []string{sqllineage.ReasonNaturalJoinUnknownColumns, sqllineage.ReasonColumnUnknownTable},
			}},
		{name: "CommaJoinWithWhere", dialect: pg,
			sql: `SELECT o.amount FROM orders o, customers c WHERE c.id = o.customer_id AND c.country = 'PT'`,
			want: want{
				columns: []col{copied("amount", "orders.amount")},
				filters: []string{"customers.id", "orders.customer_id", "customers.country"},
			}},
	})
}

func TestAnalyzeCTEsAndSubqueries(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "CTEReferringToCTE", dialect: pg,
			sql: `WITH a AS (SELECT id, amount FROM orders WHERE status = 'paid'),
				b AS (SELECT id AS oid, amount * 2 AS dbl FROM a)
				SELECT b.oid, b.dbl FROM b`,
			want: want{
				columns: []col{copied("oid", "orders.id"), derived("dbl", "orders.amount")},
				sources: []string{"orders"},
				filters: []string{"orders.status"},
			}},
		{name: "CTEReferringToCTE", dialect: my,
			sql: "with a as (select `shop`.`orders`.`id` AS `id`,`shop`.`orders`.`amount` AS `amount` from `shop`.`orders` where `shop`.`orders`.`status` = 'paid'), b as (select `a`.`id` AS `oid`,`a`.`amount` * 2 AS `dbl` from `a`)select `b`.`oid` AS `oid`,`b`.`dbl` AS `dbl` from `b`",
			want: want{
				columns: []col{copied("oid", "shop.orders.id"), derived("dbl", "shop.orders.amount")},
				sources: []string{"shop.orders"},
				filters: []string{"shop.orders.status"},
			}},
		{name: "CTEColumnList", dialect: pg,
			sql:  `WITH t(x, y) AS (SELECT id, amount FROM orders) SELECT y AS total, x FROM t`,
			want: want{columns: []col{copied("total", "orders.amount"), copied("x", "orders.id")}}},
		{name: "CTEShadowsTable", dialect: pg,
			sql:  `WITH orders AS (SELECT id, name FROM customers) SELECT name FROM orders`,
			want: want{columns: []col{copied("name", "customers.name")}, sources: []string{"customers"}}},
		{name: "RecursiveCTE", dialect: pg,
			sql:  " WITH RECURSIVE r(n, a) AS (\n         SELECT 1 AS \"?column?\",\n            orders.amount\n           FROM orders\n        UNION ALL\n         SELECT (r_1.n + 1),\n            r_1.a\n           FROM r r_1\n          WHERE (r_1.n < 3)\n        )\n SELECT r.n,\n    r.a\n   FROM r;",
			want: want{columns: []col{derived("n"), copied("a", "orders.amount")}, sources: []string{"orders"}, filters: []string{}}},
		{name: "RecursiveCTE", dialect: my,
			sql:  "with recursive r(`n`,`a`) as (select 1 AS `n`,`shop`.`orders`.`amount` AS `a` from `shop`.`orders` union all select `r`.`n` + 1 AS `n+1`,`r`.`a` AS `a` from `r` where `r`.`n` < 3)select `r`.`n` AS `n`,`r`.`a` AS `a` from `r`",
			want: want{columns: []col{derived("n"), copied("a", "shop.orders.amount")}, sources: []string{"shop.orders"}}},
		{name: "RecursiveCTEMixingColumns", dialect: pg,
			sql:  `WITH RECURSIVE r(a, b) AS (SELECT id, amount FROM orders UNION ALL SELECT b, a FROM r) SELECT a, b FROM r`,
			want: want{columns: []col{copiedEach("a", "orders.id", "orders.amount"), copiedEach("b", "orders.amount", "orders.id")}}},
		{name: "DerivedTable", dialect: pg,
			sql: `SELECT t.cid, t.total FROM (SELECT customer_id AS cid, sum(amount) AS total FROM orders GROUP BY customer_id) t`,
			want: want{
				columns: []col{copied("cid", "orders.customer_id"), derived("total", "orders.amount")},
				filters: []string{"orders.customer_id"},
			}},
		{name: "DerivedTable", dialect: my,
			sql: "select `t`.`cid` AS `cid`,`t`.`total` AS `total` from (select `shop`.`orders`.`customer_id` AS `cid`,sum(`shop`.`orders`.`amount`) AS `total` from `shop`.`orders` group by `shop`.`orders`.`customer_id`) `t`",
			want: want{
				columns: []col{copied("cid", "shop.orders.customer_id"), derived("total", "shop.orders.amount")},
				filters: []string{"shop.orders.customer_id"},
			}},
		{name: "DerivedTableColumnAliases", dialect: pg,
			sql:  `SELECT s.a FROM (SELECT amount FROM orders) AS s(a)`,
			want: want{columns: []col{copied("a", "orders.amount")}}},
		{name: "LateralSubquery", dialect: pg,
			sql: " SELECT c.id,\n    x.total\n   FROM (customers c\n     CROSS JOIN LATERAL ( SELECT sum(o.amount) AS total\n           FROM orders o\n          WHERE (o.customer_id = c.id)) x);",
			want: want{
				columns: []col{copied("id", "customers.id"), derived("total", "orders.amount")},
				sources: []string{"customers", "orders"},
				filters: []string{"orders.customer_id", "customers.id"},
			}},
		{name: "ScalarSubqueryInSelectList", dialect: pg,
			sql: " SELECT ( SELECT max(o2.amount) AS max\n           FROM orders o2\n          WHERE (o2.customer_id = c.id)) AS max,\n    c.name\n   FROM customers c;",
			want: want{
				columns: []col{derived("max", "orders.amount"), copied("name", "customers.name")},
				sources: []string{"orders", "customers"},
				filters: []string{"orders.customer_id", "customers.id"},
			}},
		{name: "ScalarSubqueryInSelectList", dialect: my,
			sql: "select (select max(`o2`.`amount`) from `shop`.`orders` `o2` where `o2`.`customer_id` = `c`.`id`) AS `m`,`c`.`name` AS `name` from `shop`.`customers` `c` where exists(select 1 from `shop`.`orders` `o` where `o`.`customer_id` = `c`.`id` limit 1)",
			want: want{
				columns: []col{derived("m", "shop.orders.amount"), copied("name", "shop.customers.name")},
				sources: []string{"shop.orders", "shop.customers"},
				filters: []string{"shop.orders.customer_id", "shop.customers.id"},
			}},
		{name: "CorrelatedSubqueryCopiesOuterColumn", dialect: pg,
			sql:  `SELECT (SELECT c.name || o.status FROM orders o WHERE o.customer_id = c.id LIMIT 1) AS label FROM customers c`,
			want: want{columns: []col{derived("label", "customers.name", "orders.status")}}},
		{name: "InSubqueryInWhereIsFilterOnly", dialect: pg,
			sql: `SELECT c.name FROM customers c WHERE c.id IN (SELECT customer_id FROM orders WHERE amount > 10)`,
			want: want{
				columns: []col{copied("name", "customers.name")},
				sources: []string{"customers", "orders"},
				filters: []string{"customers.id", "orders.customer_id", "orders.amount"},
			}},
	})
}

func TestAnalyzeSetOperations(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "UnionAll", dialect: pg,
			sql:  " SELECT orders.id,\n    orders.amount\n   FROM orders\nUNION ALL\n SELECT customers.id,\n    NULL::numeric AS amount\n   FROM customers;",
			want: want{columns: []col{copiedEach("id", "orders.id", "customers.id"), derived("amount", "orders.amount")}}},
		{name: "UnionAll", dialect: my,
			sql:  "select `shop`.`orders`.`id` AS `id`,`shop`.`orders`.`amount` AS `amount` from `shop`.`orders` union all select `shop`.`customers`.`id` AS `id`,NULL AS `NULL` from `shop`.`customers`",
			want: want{columns: []col{copiedEach("id", "shop.orders.id", "shop.customers.id"), derived("amount", "shop.orders.amount")}}},
		{name: "UnionOfSameColumnStaysDirect", dialect: pg,
			sql:  `SELECT amount FROM orders WHERE status = 'a' UNION SELECT amount FROM orders WHERE status = 'b' ORDER BY amount`,
			want: want{columns: []col{copied("amount", "orders.amount")}, filters: []string{"orders.status", "orders.amount"}}},
		{name: "UnionOfCopiesAndAnExpressionIsNotDirect", dialect: pg,
			sql:  `SELECT id FROM orders UNION ALL SELECT id + 1 FROM customers`,
			want: want{columns: []col{derived("id", "orders.id", "customers.id")}}},
		{name: "IntersectExcept", dialect: pg,
			sql:  `SELECT id FROM orders INTERSECT SELECT id FROM customers EXCEPT SELECT customer_id FROM orders`,
			want: want{columns: []col{copiedEach("id", "orders.id", "customers.id", "orders.customer_id")}}},
		{name: "IntersectExcept", dialect: my,
			sql:  "select `shop`.`orders`.`id` AS `id` from `shop`.`orders` intersect select `shop`.`customers`.`id` AS `id` from `shop`.`customers` except select `shop`.`orders`.`customer_id` AS `customer_id` from `shop`.`orders`",
			want: want{columns: []col{copiedEach("id", "shop.orders.id", "shop.customers.id", "shop.orders.customer_id")}}},
	})
}

func TestAnalyzeExpressions(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "FunctionsCastsArithmetic", dialect: pg,
			sql: ` SELECT upper(c.name) AS upper,
    (c.id)::text AS id,
    'x'::text AS text,
    COALESCE(c.name, c.country) AS "coalesce",
    GREATEST(1, 2) AS "greatest",
    (o.amount * (1 + 0.23)) - o.id AS gross,
    (EXISTS ( SELECT 1 FROM orders)) AS "exists",
    ARRAY( SELECT orders.id FROM orders) AS "array"
   FROM customers c JOIN orders o ON o.customer_id = c.id;`,
			want: want{columns: []col{
				derived("upper", "customers.name"), derived("id", "customers.id"), derived("text"),
				derived("coalesce", "customers.name", "customers.country"), derived("greatest"),
				derived("gross", "orders.amount", "orders.id"), derived("exists"), derived("array", "orders.id"),
			}, filters: []string{"orders.customer_id", "customers.id"}}},
		{name: "FunctionsCastsArithmetic", dialect: my,
			sql: "select ucase(`c`.`name`) AS `upper(name)`,`c`.`id` + 0 AS `c.id + 0`,'x' AS `x`,coalesce(`c`.`name`,`c`.`country`) AS `coalesce(name, country)`,cast(`c`.`id` as char charset utf8mb4) AS `cid`,concat(`c`.`name`,'-',`c`.`country`) AS `label` from `shop`.`customers` `c`",
			want: want{columns: []col{
				derived("upper(name)", "shop.customers.name"), derived("c.id + 0", "shop.customers.id"), derived("x"),
				derived("coalesce(name, country)", "shop.customers.name", "shop.customers.country"),
				derived("cid", "shop.customers.id"), derived("label", "shop.customers.name", "shop.customers.country"),
			}}},
		{name: "CaseAllBranchesAndConditions", dialect: pg,
			sql: `SELECT CASE o.status WHEN 'x' THEN o.amount WHEN 'y' THEN o.id ELSE o.customer_id END AS v,
				CASE WHEN o.created_at IS NULL THEN 'none' END AS w FROM orders o`,
			want: want{columns: []col{
				derived("v", "orders.status", "orders.amount", "orders.id", "orders.customer_id"),
				derived("w", "orders.created_at"),
			}}},
		{name: "CaseAllBranchesAndConditions", dialect: my,
			sql:  "select case `o`.`status` when 'x' then `o`.`amount` when 'y' then `o`.`id` else `o`.`customer_id` end AS `v` from `shop`.`orders` `o`",
			want: want{columns: []col{derived("v", "shop.orders.status", "shop.orders.amount", "shop.orders.id", "shop.orders.customer_id")}}},
		{name: "AggregatesGroupByAreFiltersOnly", dialect: pg,
			sql: `SELECT o.status, count(*) AS n, sum(o.amount) FILTER (WHERE o.id > 0) AS total, string_agg(o.status, ',' ORDER BY o.created_at) AS s
				FROM orders o GROUP BY o.status HAVING max(o.customer_id) > 1`,
			want: want{
				columns: []col{copied("status", "orders.status"), derived("n"), derived("total", "orders.amount"), derived("s", "orders.status")},
				filters: []string{"orders.status", "orders.id", "orders.created_at", "orders.customer_id"},
			}},
		{name: "GroupByPositionAndAlias", dialect: my,
			sql: "select date(`created_at`) AS `day`, sum(`amount`) AS `total` from `shop`.`orders` group by 1 order by `total` desc",
			want: want{
				columns: []col{derived("day", "shop.orders.created_at"), derived("total", "shop.orders.amount")},
				filters: []string{"shop.orders.created_at", "shop.orders.amount"},
			}},
		{name: "WindowFunctions", dialect: pg,
			sql: " SELECT orders.id,\n    sum(orders.amount) OVER w AS running,\n    row_number() OVER (PARTITION BY orders.customer_id ORDER BY orders.created_at) AS rn\n   FROM orders\n  WINDOW w AS (PARTITION BY orders.status ORDER BY orders.id);",
			want: want{
				columns: []col{copied("id", "orders.id"), derived("running", "orders.amount"), derived("rn")},
				filters: []string{"orders.customer_id", "orders.created_at", "orders.status", "orders.id"},
			}},
		{name: "WindowFunctions", dialect: my,
			sql: "select `shop`.`orders`.`id` AS `id`,sum(`shop`.`orders`.`amount`) over ( partition by `shop`.`orders`.`status` order by `shop`.`orders`.`id`) AS `running`,row_number() over ( partition by `shop`.`orders`.`customer_id` order by `shop`.`orders`.`created_at`) AS `rn` from `shop`.`orders`",
			want: want{
				columns: []col{copied("id", "shop.orders.id"), derived("running", "shop.orders.amount"), derived("rn")},
				filters: []string{"shop.orders.customer_id", "shop.orders.created_at", "shop.orders.status", "shop.orders.id"},
			}},
		{name: "Literals", dialect: pg,
			sql:  `SELECT 1 AS one, 'a' AS a, NULL AS n, now() AS t, current_date`,
			want: want{columns: []col{derived("one"), derived("a"), derived("n"), derived("t"), derived("current_date")}, sources: []string{}}},
		{name: "Literals", dialect: my,
			sql:  "select 1 AS `one`,'a' AS `a`,NULL AS `n`,current_timestamp() AS `t`",
			want: want{columns: []col{derived("one"), derived("a"), derived("n"), derived("t")}, sources: []string{}}},
		{name: "TableFunctionDerivesFromArguments", dialect: pg,
			sql:  " SELECT o.id,\n    u.tag\n   FROM orders o,\n    LATERAL unnest(ARRAY[o.status, 'x'::text]) u(tag);",
			want: want{columns: []col{copied("id", "orders.id"), derived("tag", "orders.status")}}},
		{name: "WholeRowReference", dialect: pg,
			sql:  `SELECT row_to_json(c) AS doc FROM customers c`,
			want: want{columns: []col{derived("doc", "customers.id", "customers.name", "customers.country", "customers.segment")}}},
	})
}

func TestAnalyzeStarsAndUnqualifiedNames(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "StarAndQualifiedStar", dialect: pg,
			sql: `SELECT c.*, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id`,
			want: want{columns: []col{copied("id", "customers.id"), copied("name", "customers.name"),
				copied("country", "customers.country"), copied("segment", "customers.segment"), copied("amount", "orders.amount")}}},
		{name: "StarAndQualifiedStar", dialect: my,
			sql: "select `c`.*, `o`.`amount` from `shop`.`customers` `c` join `shop`.`orders` `o` on `o`.`customer_id` = `c`.`id`",
			want: want{columns: []col{copied("id", "shop.customers.id"), copied("name", "shop.customers.name"),
				copied("country", "shop.customers.country"), copied("segment", "shop.customers.segment"), copied("amount", "shop.orders.amount")}}},
		{name: "StarOverCTE", dialect: pg,
			sql:  `WITH x AS (SELECT id, amount * 2 AS dbl FROM orders) SELECT * FROM x`,
			want: want{columns: []col{copied("id", "orders.id"), derived("dbl", "orders.amount")}}},
		{name: "StarOverUnknownTableKeepsOtherColumns", dialect: pg,
			sql: `SELECT m.*, o.amount FROM mystery m JOIN orders o ON o.id = m.order_id`,
			want: want{
				columns:    []col{copied("amount", "orders.amount")},
				sources:    []string{"mystery", "orders"},
				filters:    []string{"orders.id", "mystery.order_id"},
				unresolved: []string{sqllineage.ReasonStarUnknownTable},
			}},
		{name: "StarOverUnknownTableKeepsOtherColumns", dialect: my,
			sql: "select `m`.*, `o`.`amount` AS `amount` from (`shop`.`mystery` `m` join `shop`.`orders` `o` on(`o`.`id` = `m`.`order_id`))",
			want: want{
				columns:    []col{copied("amount", "shop.orders.amount")},
				unresolved: []string{sqllineage.ReasonStarUnknownTable},
			}},
		{name: "OnlyStarOverUnknownTableHasNoColumnLevel", dialect: pg,
			sql:  `SELECT * FROM mystery`,
			want: want{columns: []col{}, sources: []string{"mystery"}, unresolved: []string{sqllineage.ReasonStarUnknownTable}, columnLevel: ptr(false)}},
		{name: "UnqualifiedResolvedThroughCatalog", dialect: pg,
			sql: `SELECT amount, name FROM orders JOIN customers ON customers.id = customer_id`,
			want: want{columns: []col{copied("amount", "orders.amount"), copied("name", "customers.name")},
				filters: []string{"customers.id", "orders.customer_id"}}},
		{name: "UnqualifiedResolvedThroughCatalog", dialect: my,
			sql: "select amount, name from shop.orders join shop.customers on customers.id = customer_id",
			want: want{columns: []col{copied("amount", "shop.orders.amount"), copied("name", "shop.customers.name")},
				filters: []string{"shop.customers.id", "shop.orders.customer_id"}}},
		{name: "AmbiguousNameIsNotGuessed", dialect: pg,
			sql: `SELECT id, amount + id AS x FROM orders JOIN customers ON customers.id = orders.customer_id`,
			want: want{
				columns:    []col{unresolved("id"), unresolved("x", "orders.amount")},
				unresolved: []string{sqllineage.ReasonColumnAmbiguous},
			}},
		{name: "AmbiguousNameIsNotGuessed", dialect: my,
			sql:  "select id from shop.orders, shop.customers",
			want: want{columns: []col{unresolved("id")}, unresolved: []string{sqllineage.ReasonColumnAmbiguous}, columnLevel: ptr(false)}},
		{name: "NameNextToUnknownTableIsNotGuessed", dialect: pg,
			// amount: orders has it, and mystery (columns unknown) might too.
			// label: orders has no label, so only mystery can hold it.
			sql: `SELECT amount, label FROM orders JOIN mystery ON true`,
			want: want{
				columns:    []col{unresolved("amount"), copied("label", "mystery.label")},
				unresolved: []string{sqllineage.ReasonColumnUnknownTable},
			}},
		{name: "NameInSubqueryWithOuterCandidateIsNotGuessed", dialect: pg,
			sql: `SELECT (SELECT max(name) FROM mystery) AS m FROM customers`,
			want: want{
				columns:     []col{unresolved("m")},
				unresolved:  []string{sqllineage.ReasonColumnUnknownTable},
				columnLevel: ptr(false),
			}},
		{name: "SingleUnknownTableOwnsItsColumns", dialect: pg,
			sql:  `SELECT label, qty * 2 AS dbl FROM mystery`,
			want: want{columns: []col{copied("label", "mystery.label"), derived("dbl", "mystery.qty")}}},
		{name: "QualifiedColumnOfUnknownTable", dialect: my,
			sql:  "select `m`.`label` AS `label` from `shop`.`mystery` `m`",
			want: want{columns: []col{copied("label", "shop.mystery.label")}}},
		{name: "MissingColumn", dialect: pg,
			sql:  `SELECT o.nope FROM orders o`,
			want: want{columns: []col{unresolved("nope")}, unresolved: []string{sqllineage.ReasonColumnNotFound}, columnLevel: ptr(false)}},
		{name: "UnknownQualifier", dialect: pg,
			sql:  `SELECT z.amount, o.id FROM orders o`,
			want: want{columns: []col{unresolved("amount"), copied("id", "orders.id")}, unresolved: []string{sqllineage.ReasonQualifierNotFound}}},
	})
}

func TestAnalyzeNamesAndQuoting(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "QuotedIdentifiersWithOddCharacters", dialect: pg,
			sql: `SELECT "we""ird"."odd ""col""" AS "select ""y""", "we""ird"."Amount" FROM "select ""x""" AS "we""ird"`,
			want: want{
				columns: []col{copied(`select "y"`, `select "x".odd "col"`), copied("Amount", `select "x".Amount`)},
				sources: []string{`select "x"`},
			}},
		{name: "QuotedIdentifiersWithOddCharacters", dialect: my,
			sql: "select `shop`.`select \"x\"`.`odd ``col` AS `odd ``col`,`shop`.`select \"x\"`.`Amount` AS `Amount` from `shop`.`select \"x\"`",
			want: want{
				columns: []col{
					{name: "odd `col", direct: true, resolved: true, from: []string{"shop.select \"x\".odd `col"}},
					copied("Amount", `shop.select "x".Amount`),
				},
			}},
		{name: "SchemaQualifiedNames", dialect: pg,
			sql: `SELECT sales.orders.amount, o2.id FROM sales.orders JOIN shop.orders o2 ON o2.id = sales.orders.id`,
			want: want{
				columns: []col{copied("amount", "sales.orders.amount"), copied("id", "shop.orders.id")},
				sources: []string{"sales.orders", "shop.orders"},
			}},
		{name: "MySQLNamesAreCaseInsensitive", dialect: my,
			sql:  "select `O`.`AMOUNT` AS `a` from `shop`.`orders` `o`",
			want: want{columns: []col{copied("a", "shop.orders.amount")}}},
		{name: "CreateViewWithColumnList", dialect: pg,
			sql:  `CREATE OR REPLACE VIEW v (a, b) AS SELECT id, amount FROM orders`,
			want: want{columns: []col{copied("a", "orders.id"), copied("b", "orders.amount")}}},
		{name: "CreateViewWithColumnList", dialect: my,
			sql:  "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `shop`.`v` (`a`,`b`) AS select `shop`.`orders`.`id` AS `id`,`shop`.`orders`.`amount` AS `amount` from `shop`.`orders`",
			want: want{columns: []col{copied("a", "shop.orders.id"), copied("b", "shop.orders.amount")}}},
		{name: "CreateMaterializedView", dialect: pg,
			sql:  `CREATE MATERIALIZED VIEW mv AS SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id WITH NO DATA`,
			want: want{columns: []col{copied("customer_id", "orders.customer_id"), derived("total", "orders.amount")}, filters: []string{"orders.customer_id"}}},
		{name: "PostgresDerivedNames", dialect: pg,
			sql:  `SELECT o.amount::int, count(*), o.id + 1, (SELECT max(id) FROM customers), CASE WHEN true THEN 1 END FROM orders o`,
			want: want{columns: []col{derived("amount", "orders.amount"), derived("count"), derived("?column?", "orders.id"), derived("max", "customers.id"), derived("case")}}},
	})
}

func TestAnalyzeSQLite(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "BracketsBackticksIfNotExists", dialect: lite,
			sql:  "CREATE VIEW IF NOT EXISTS [v1] AS SELECT `o`.[amount] AS amt, c.\"name\" FROM [orders] AS o JOIN `customers` c ON c.id = o.customer_id",
			want: want{columns: []col{copied("amt", "orders.amount"), copied("name", "customers.name")}}},
		{name: "UnaliasedExpressionsNamedByText", dialect: lite,
			sql: "CREATE VIEW rev AS select date(created_at), sum(amount), count(*) as n, amount * 2 /* c */ + 1, (select max(id) from customers) from orders group by 1",
			want: want{
				columns: []col{derived("date(created_at)", "orders.created_at"), derived("sum(amount)", "orders.amount"), derived("n"),
					derived("amount * 2 /* c */ + 1", "orders.amount"), derived("(select max(id) from customers)", "customers.id")},
				sources: []string{"customers", "orders"},
				filters: []string{"orders.created_at"},
			}},
		{name: "DuplicateStarNamesNumberedLikeSQLite", dialect: lite,
			sql: "CREATE VIEW v3 as select * from orders, customers where orders.customer_id = customers.id",
			want: want{columns: []col{copied("id", "orders.id"), copied("customer_id", "orders.customer_id"),
				copied("amount", "orders.amount"), copied("status", "orders.status"), copied("created_at", "orders.created_at"),
				copied("id:1", "customers.id"), copied("name", "customers.name"), copied("country", "customers.country"),
				copied("segment", "customers.segment")}}},
		{name: "BareSelect", dialect: lite,
			sql:  "SELECT id FROM orders",
			want: want{columns: []col{copied("id", "orders.id")}}},
	})
}

func TestAnalyzeSaysWhenSQLHidesInAString(t *testing.T) {
	runAnalyzeCases(t, []analyzeCase{
		{name: "Crosstab", dialect: pg,
			sql: `SELECT * FROM public.crosstab('SELECT status, customer_id, sum(amount) FROM public.orders GROUP BY 1, 2 ORDER BY 1, 2')
				AS ct(status text, c1 numeric, c2 numeric)`,
			want: want{columns: []col{derived("status"), derived("c1"), derived("c2")}, sources: []string{},
				unresolved: []string{sqllineage.ReasonDynamicSQL}}},
		{name: "Dblink", dialect: pg,
			sql:  `SELECT t.id FROM dblink('dbname=other', 'SELECT id FROM remote_table') AS t(id int)`,
			want: want{columns: []col{derived("id")}, sources: []string{}, unresolved: []string{sqllineage.ReasonDynamicSQL}}},
		{name: "QueryAsTextToAFunction", dialect: pg,
			sql:  `SELECT o.id, run_report('select * from orders where id > 0') AS r FROM orders o`,
			want: want{columns: []col{copied("id", "orders.id"), derived("r")}, unresolved: []string{sqllineage.ReasonDynamicSQL}}},
		{name: "PlainTextArgumentIsNotSQL", dialect: pg,
			sql:  `SELECT o.id, format('select %s', o.status) AS f FROM orders o`,
			want: want{columns: []col{copied("id", "orders.id"), derived("f", "orders.status")}}},
	})
}
