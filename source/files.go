package source

import (
	"path"
	"strings"
)

// DuckDB is the connector of DuckDB databases and of Parquet, CSV and JSON files read through
// DuckDB. It is built only with the `duckdb` build tag (cgo); without it the kind is known but
// its driver is absent.
const DuckDB Kind = "duckdb"

// FilesSchema is the schema of the datasets a duckdb connection finds as files (not as tables
// of a DuckDB database).
const FilesSchema = "files"

// FileDatasetName names the dataset a file path or pattern belongs to, the one rule shared by
// discovery (which groups files into datasets) and view lineage (which reads the paths a view
// passes to read_parquet, read_csv or read_json). The path is relative to the connection's
// directory, with forward slashes. A single file is its own dataset ("customers.csv"); files
// under a directory, hive-partitioned or not, are one dataset named by the directory ("sales"
// for "sales/*.parquet", "sales/year=2024/*.parquet" or "sales/**/*.parquet"): the name is the
// path up to its first glob or partition (key=value) component. It answers "" for a path that
// leaves the connection's directory or names nothing.
func FileDatasetName(p string) string {
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	p = strings.TrimPrefix(p, "./")
	if p == "" || strings.HasPrefix(p, "/") {
		return ""
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if strings.ContainsAny(part, "*?[{") || strings.Contains(part, "=") {
			return strings.Join(parts[:i], "/")
		}
	}
	return p
}
