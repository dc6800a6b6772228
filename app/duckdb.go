//go:build duckdb

package app

// The DuckDB connector (kind duckdb) registers itself with source/connect; a binary built
// without the duckdb tag reports the kind as not built in (connection.Service.Types).
import _ "github.com/vigia-data/vigia/source/connect/duckdb"
