//go:build duckdb

package app

import "github.com/vigia-data/vigia/lineage/sqllineage/duckview"

// Built with the duckdb tag, DuckDB views, counts and DDL are read by DuckDB's own
// parser.
func init() { dialectParsers[duckview.Dialect] = duckview.New() }
