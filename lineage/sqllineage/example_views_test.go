package sqllineage_test

// The example of the lineage tests: orders → orders_enriched (a CTE, a join with
// customers, aliases, a CASE) → revenue_daily (an aggregate by day). Each definition is
// written the way its catalog returns it; the Postgres and MariaDB ones were captured
// from PostgreSQL 15 (pg_views.definition) and MariaDB 10.11
// (information_schema.VIEWS.VIEW_DEFINITION) for the DDL in exampleDDL.

// exampleDDL is the DDL the definitions below come from (Postgres spelling).
const exampleDDL = `
CREATE TABLE orders (id int PRIMARY KEY, customer_id int, amount numeric(12,2), status text, created_at timestamptz);
CREATE TABLE customers (id int PRIMARY KEY, name text, country text, segment varchar(20));
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
`

const pgOrdersEnriched = ` WITH paid AS (
         SELECT orders.id,
            orders.customer_id,
            orders.amount,
            orders.created_at
           FROM orders
          WHERE (orders.status = 'paid'::text)
        )
 SELECT p.id AS order_id,
    p.created_at,
    c.name AS customer_name,
    p.amount,
        CASE
            WHEN (p.amount >= (1000)::numeric) THEN 'large'::text
            WHEN ((c.segment)::text = 'vip'::text) THEN 'vip'::text
            ELSE 'normal'::text
        END AS size_band
   FROM (paid p
     JOIN customers c ON ((c.id = p.customer_id)));`

const pgRevenueDaily = ` SELECT (orders_enriched.created_at)::date AS day,
    sum(orders_enriched.amount) AS revenue,
    count(*) AS orders,
    count(DISTINCT orders_enriched.customer_name) AS customers,
    sum(
        CASE
            WHEN (orders_enriched.size_band = 'large'::text) THEN 1
            ELSE 0
        END) AS large_orders
   FROM orders_enriched
  GROUP BY ((orders_enriched.created_at)::date);`

const myOrdersEnriched = "with paid as (select `shop`.`orders`.`id` AS `id`,`shop`.`orders`.`customer_id` AS `customer_id`,`shop`.`orders`.`amount` AS `amount`,`shop`.`orders`.`created_at` AS `created_at` from `shop`.`orders` where `shop`.`orders`.`status` = 'paid')select `p`.`id` AS `order_id`,`p`.`created_at` AS `created_at`,`c`.`name` AS `customer_name`,`p`.`amount` AS `amount`,case when `p`.`amount` >= 1000 then 'large' when `c`.`segment` = 'vip' then 'vip' else 'normal' end AS `size_band` from (`paid` `p` join `shop`.`customers` `c` on(`c`.`id` = `p`.`customer_id`))"

const myRevenueDaily = "select cast(`orders_enriched`.`created_at` as date) AS `day`,sum(`orders_enriched`.`amount`) AS `revenue`,count(0) AS `orders`,count(distinct `orders_enriched`.`customer_name`) AS `customers`,sum(case when `orders_enriched`.`size_band` = 'large' then 1 else 0 end) AS `large_orders` from `shop`.`orders_enriched` group by cast(`orders_enriched`.`created_at` as date)"

// SQLite keeps the CREATE VIEW statement as written (sqlite_master.sql).
const liteOrdersEnriched = `CREATE VIEW orders_enriched AS
WITH paid AS (SELECT id, customer_id, amount, created_at FROM orders WHERE status = 'paid')
SELECT p.id AS order_id, p.created_at, c.name AS customer_name, p.amount,
  CASE WHEN p.amount >= 1000 THEN 'large' WHEN c.segment = 'vip' THEN 'vip' ELSE 'normal' END AS size_band
FROM paid p JOIN [customers] c ON c.id = p.customer_id`

const liteRevenueDaily = "CREATE VIEW `revenue_daily` AS SELECT date(created_at) AS day, sum(amount) AS revenue, count(*) AS orders,\n" +
	"  count(DISTINCT customer_name) AS customers, sum(CASE WHEN size_band = 'large' THEN 1 ELSE 0 END) AS large_orders\n" +
	"FROM orders_enriched GROUP BY date(created_at)"
