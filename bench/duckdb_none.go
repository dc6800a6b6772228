//go:build !duckdb

package bench

import (
	"context"

	"github.com/vigia-data/vigia/source"
)

// parquetWriter says this build can write the benchmark's Parquet file: not without DuckDB.
const parquetWriter = false

func writeParquet(context.Context, string, string, []benchColumn, source.FilesLimits) error {
	return ErrNoDuckDB
}
