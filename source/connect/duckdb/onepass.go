//go:build duckdb

package duckdb

import (
	"context"
	"database/sql"
	"strings"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// KnownRowCount answers a Parquet dataset's row count from its files' footers
// (parquet_file_metadata: the num_rows each file declares), reading no row: the profile
// then draws its samples in the aggregate's own scan (connect.OnePass). CSV and JSON
// datasets and a database's tables have no such count.
func (d *dialect) KnownRowCount(ctx context.Context, q connect.Querier, op string, t source.Table) (int64, bool, error) {
	if d.database || t.Schema != source.FilesSchema {
		return 0, false, nil
	}
	d.mu.Lock()
	globs := d.parquet[t.Name]
	d.mu.Unlock()
	if len(globs) == 0 {
		return 0, false, nil
	}
	var n sql.NullInt64
	_, err := q.Query(ctx, op, "profile", parquetRowsSQL(globs), func(rows *sql.Rows) error {
		if err := rows.Scan(&n); err != nil {
			return source.NewError(source.DuckDB, "profile", source.ReasonResult, "", nil)
		}
		return nil
	})
	if err != nil {
		// A footer DuckDB cannot read leaves the profile to its usual statements (which
		// report the file's own error); a timeout or a cancel stops it.
		if source.IsReason(err, source.ReasonTimeout) || source.IsReason(err, source.ReasonCanceled) {
			return 0, false, err
		}
		return 0, false, nil
	}
	return n.Int64, n.Valid, nil
}

// parquetRowsSQL sums the row counts the footers of the files of globs declare.
func parquetRowsSQL(globs []string) string {
	lits := make([]string, len(globs))
	for i, g := range globs {
		lits[i] = literal(g)
	}
	return "SELECT sum(num_rows) FROM parquet_file_metadata([" + strings.Join(lits, ", ") + "])"
}

// SampleFrom adds one random number per row to the dataset's rows.
func (d *dialect) SampleFrom(t source.Table, column string) string {
	return "(SELECT *, random() AS " + column + " FROM " + d.Table(t) + ") AS " + quote("t")
}

// SampleRows collects the rows where cond holds as structs {m, h, v} of a flag and two
// lists; the CASEs evaluate them on those rows only (the values on the masks' rows only),
// and the FILTER leaves the other rows out of the list (one filter for the whole sample:
// DuckDB pays a FILTER per aggregate on every row).
func (*dialect) SampleRows(cond, maskCond string, hashes, values []string) string {
	return "list(CASE WHEN " + cond + " THEN struct_pack(m := " + maskCond + ", h := [" + strings.Join(hashes, ", ") +
		"], v := CASE WHEN " + maskCond + " THEN [" + strings.Join(values, ", ") + "] END) END) FILTER (WHERE " + cond + ")"
}
