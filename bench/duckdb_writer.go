//go:build duckdb

package bench

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the engine that writes the Parquet file

	"github.com/vigia-data/vigia/source"
)

// parquetWriter says this build can write the benchmark's Parquet file.
const parquetWriter = true

// writeParquet has an in-memory DuckDB session (bounded like the connector's) read the CSV
// export with the table's types and write it as one Parquet file (DuckDB's defaults:
// Snappy, row groups of 122,880 rows).
func writeParquet(ctx context.Context, csvPath, out string, cols []benchColumn, lim source.FilesLimits) error {
	cfg := url.Values{}
	if lim.MemoryLimit != "" {
		cfg.Set("memory_limit", lim.MemoryLimit)
	}
	if lim.Threads > 0 {
		cfg.Set("threads", strconv.Itoa(lim.Threads))
	}
	db, err := sql.Open("duckdb", "?"+cfg.Encode())
	if err != nil {
		return errors.New("bench: cannot start DuckDB")
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	types := make([]string, len(cols))
	for i, c := range cols {
		types[i] = sqlString(c.name) + ": " + sqlString(duckType(c.sqlType))
	}
	stmt := "COPY (SELECT * FROM read_csv(" + sqlString(csvPath) + ", header = false, auto_detect = false, columns = {" +
		strings.Join(types, ", ") + "})) TO " + sqlString(out) + " (FORMAT parquet)"
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errors.New("bench: DuckDB could not write the Parquet file")
	}
	return nil
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// duckType is DuckDB's type for a benchmark column's Postgres type.
func duckType(pgType string) string {
	switch pgType {
	case "numeric(12,2)":
		return "DECIMAL(12,2)"
	case "double precision":
		return "DOUBLE"
	case "timestamptz":
		return "TIMESTAMPTZ"
	case "text":
		return "VARCHAR"
	}
	return strings.ToUpper(pgType)
}
