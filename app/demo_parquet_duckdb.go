//go:build duckdb

package app

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

func init() { writeParquetPack = parquetFromSQLite }

// parquetFromSQLite writes each table of a SQLite file as dir/<table>.parquet through an
// in-memory DuckDB: the rows go out as CSV (NULL as an empty field) and DuckDB reads them
// back with its own type detection, so each column gets the type its values have (a
// column of dates is DATE, one with a planted text value stays VARCHAR), as a CSV drop
// would; the CSV files are removed.
func parquetFromSQLite(ctx context.Context, sqliteFile, dir string) error {
	src, err := sql.Open("sqlite", "file:"+sqliteFile+"?mode=ro")
	if err != nil {
		return vigia.Internal(fmt.Errorf("demo parquet: open the pack"))
	}
	defer src.Close()
	rows, err := src.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return vigia.Internal(fmt.Errorf("demo parquet: list the tables: %w", err))
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return vigia.Internal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return vigia.Internal(err)
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		return vigia.Internal(fmt.Errorf("demo parquet: open DuckDB"))
	}
	defer duck.Close()
	for _, t := range tables {
		csvPath := filepath.Join(dir, "."+t+".csv")
		if err := tableCSV(ctx, src, t, csvPath); err != nil {
			return err
		}
		stmt := "COPY (SELECT * FROM read_csv(" + sqlString(csvPath) + ", header = true, sample_size = -1)) TO " +
			sqlString(filepath.Join(dir, t+".parquet")) + " (FORMAT parquet)"
		_, err := duck.ExecContext(ctx, stmt)
		_ = os.Remove(csvPath)
		if err != nil {
			return vigia.Internal(fmt.Errorf("demo parquet: write %s: %w", t, err))
		}
	}
	return nil
}

// tableCSV writes one SQLite table as CSV with a header.
func tableCSV(ctx context.Context, src *sql.DB, table, path string) error {
	rows, err := src.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`)
	if err != nil {
		return vigia.Internal(fmt.Errorf("demo parquet: read %s: %w", table, err))
	}
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		return vigia.Internal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		return vigia.Internal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Name()
	}
	if err := w.Write(header); err != nil {
		return vigia.Internal(err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return vigia.Internal(err)
		}
		for i, v := range vals {
			rec[i] = csvValue(v, strings.ToUpper(cols[i].DatabaseTypeName()))
		}
		if err := w.Write(rec); err != nil {
			return vigia.Internal(err)
		}
	}
	if err := rows.Err(); err != nil {
		return vigia.Internal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return vigia.Internal(err)
	}
	return f.Close()
}

// csvValue is one value as CSV text; a time of a DATE column is its date.
func csvValue(v any, declared string) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if declared == "DATE" {
			return x.Format("2006-01-02")
		}
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	}
	return fmt.Sprint(v)
}

// sqlString is a DuckDB string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
