// Package rulesql writes, for a data-quality rule, the SQL query that lists the rows
// failing it, in one of eight dialects (postgres, mysql, mssql, bigquery, snowflake,
// databricks, sqlite, duckdb). It serves GET /rules/{rule_id}/failing-rows.sql.
//
// The query is text handed to the user: Vigia never runs it, so no failing value ever
// reaches Vigia, and the text holds only names and the rule's own parameters. Every
// name is quoted for the dialect, every literal escaped for it, and the one comment
// line cannot be ended early by a name.
//
// Choices the contract leaves open, written down here so that the generated text can
// be explained:
//
//   - NULL never fails accepted_values, pattern, range or referential (not_null says
//     whether NULL is allowed), and a key with a NULL part is never a duplicate for
//     unique, as with a SQL UNIQUE constraint.
//   - pattern passes a value that contains a match (search, not full match), and
//     matches case-sensitively in every dialect: MySQL's REGEXP would otherwise follow
//     the column's usually case-insensitive collation, and Snowflake's REGEXP_LIKE
//     anchors the pattern, so those two are written differently. SQLite's REGEXP calls
//     a function the application provides (Vigia registers one on its connections, the
//     sqlite3 shell has its own). DuckDB's ~ and !~ match the whole value, so its
//     pattern is written with regexp_matches, which searches. SQL Server has no regular expressions, so pattern has
//     no query there: reason pattern_unsupported_in_dialect.
//   - freshness lists rows whose timestamp is older than the current time minus the
//     allowed age, using each engine's own clock.
//   - custom_sql has a row query only when it is a plain COUNT(*) over rows (see
//     rewriteCount). Its text is kept as the user wrote it, never translated: a query
//     for another dialect than the one it is written in has no row query.
//   - referential names the reference table in the query; whether the caller may see
//     that dataset is for the caller to check before asking.
//   - The row limit is LIMIT n, or TOP (n) for SQL Server.
package rulesql
