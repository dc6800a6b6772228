-- ==== not_null
-- Vigia failing rows: rule not_null on "sales"."orders" (dialect duckdb)
SELECT *
FROM "sales"."orders"
WHERE "email" IS NULL
LIMIT 100;

-- ==== unique
-- Vigia failing rows: rule unique on "sales"."orders" (dialect duckdb)
SELECT t.*
FROM "sales"."orders" AS t
JOIN (
  SELECT "order_no"
  FROM "sales"."orders"
  WHERE "order_no" IS NOT NULL
  GROUP BY "order_no"
  HAVING COUNT(*) > 1
) AS dup
  ON dup."order_no" = t."order_no"
ORDER BY t."order_no"
LIMIT 100;

-- ==== unique_compound
-- Vigia failing rows: rule unique on "sales"."orders" (dialect duckdb)
SELECT t.*
FROM "sales"."orders" AS t
JOIN (
  SELECT "customer_id", "order_no"
  FROM "sales"."orders"
  WHERE "customer_id" IS NOT NULL AND "order_no" IS NOT NULL
  GROUP BY "customer_id", "order_no"
  HAVING COUNT(*) > 1
) AS dup
  ON dup."customer_id" = t."customer_id" AND dup."order_no" = t."order_no"
ORDER BY t."customer_id", t."order_no"
LIMIT 100;

-- ==== accepted_values
-- Vigia failing rows: rule accepted_values on "sales"."orders" (dialect duckdb)
SELECT *
FROM "sales"."orders"
WHERE "status" IS NOT NULL
  AND "status" NOT IN ('paid', 'it''s', 'back\slash')
LIMIT 100;

-- ==== pattern
-- Vigia failing rows: rule pattern on "sales"."orders" (dialect duckdb)
SELECT *
FROM "sales"."orders"
WHERE "email" IS NOT NULL
  AND NOT regexp_matches(CAST("email" AS VARCHAR), '^[a-z0-9._]+@[a-z0-9-]+\.pt$')
LIMIT 100;

-- ==== range
-- Vigia failing rows: rule range on "sales"."orders" (dialect duckdb)
SELECT *
FROM "sales"."orders"
WHERE "amount" IS NOT NULL
  AND ("amount" < 0 OR "amount" > 2500.5)
LIMIT 100;

-- ==== range_min_only
-- Vigia failing rows: rule range on "sales"."orders" (dialect duckdb)
SELECT *
FROM "sales"."orders"
WHERE "amount" IS NOT NULL
  AND "amount" < -10
LIMIT 100;

-- ==== range_max_only
-- Vigia failing rows: rule range on "sales"."orders" (dialect duckdb)
SELECT *
FROM "sales"."orders"
WHERE "amount" IS NOT NULL
  AND "amount" > 1e+22
LIMIT 100;

-- ==== referential
-- Vigia failing rows: rule referential on "sales"."orders" (dialect duckdb)
SELECT t.*
FROM "sales"."orders" AS t
LEFT JOIN "sales"."customers" AS ref
  ON ref."id" = t."customer_id"
WHERE t."customer_id" IS NOT NULL
  AND ref."id" IS NULL
LIMIT 100;

-- ==== freshness
-- Vigia failing rows: rule freshness on "sales"."orders" (dialect duckdb)
SELECT *
FROM "sales"."orders"
WHERE "updated_at" < now() - interval '86400 seconds'
LIMIT 100;

-- ==== row_count_min
-- no row-level query: row_count_min

-- ==== custom_sql
-- Vigia failing rows: rule custom_sql on "sales"."orders" (dialect duckdb)
SELECT *
FROM sales.orders WHERE amount < 0 AND status <> 'void'
LIMIT 100;

-- ==== custom_sql_grouped
-- no row-level query: custom_sql_not_row_level

