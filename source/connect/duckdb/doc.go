// Package duckdb is the source connector of kind duckdb: a DuckDB database file, or a
// directory of Parquet, CSV and JSON files read through DuckDB, under VIGIA_FILES_ROOT. It
// links the DuckDB engine (cgo, github.com/duckdb/duckdb-go/v2) and is built only with the
// `duckdb` build tag; a binary that imports it has the kind (connect.Open answers for it, and
// /connections/types says "available"), one that does not reports the kind as not built in.
// The connector itself is source/connect's connection and profile, given this package's
// dialect (connect.NewSource). See docs/files.md.
package duckdb
