//go:build duckdb

package duckdb

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// dialect is DuckDB's SQL for connect's connection and profile.
type dialect struct {
	// dir is the connection's directory (the database file's, or the data files').
	dir string
	// only is the one data file the connection names ("" for a directory).
	only string
	// database is true for a DuckDB database file (its own tables and views, read-only).
	database bool
	// root is the directory the engine may read: the connection's directory, or for a
	// database file the files root (its views may read files anywhere under it).
	root string
	// lineageSQL is, by schema and name, the SQL of a database's view that names files of
	// the connection's directory by absolute paths, rewritten with relative ones (what
	// lineage maps to file datasets); set once at open.
	lineageSQL map[[2]string]string
	// fileNames are the file datasets a database's views read in its directory, listed
	// with its tables (nil for a directory: every file set); noFiles is true when the
	// database has a schema named files of its own. Set once at open.
	fileNames map[string]bool
	noFiles   bool

	mu sync.Mutex
	// views are the reader of each file dataset's view as last created.
	views map[string]string
	// partitions are each file dataset's hive partition keys.
	partitions map[string][]string
	// parquet are the file datasets read from Parquet files, with their globs (absolute).
	parquet map[string][]string
}

func (*dialect) Kind() source.Kind         { return source.DuckDB }
func (*dialect) Quote(ident string) string { return quote(ident) }
func (*dialect) Classify(err error) (string, string) {
	return classify(err)
}

func (*dialect) Table(t source.Table) string {
	if t.Schema == "" {
		return quote(t.Name)
	}
	return quote(t.Schema) + "." + quote(t.Name)
}

func (*dialect) NumMin(q string) string  { return "min(" + q + ")" }
func (*dialect) NumMax(q string) string  { return "max(" + q + ")" }
func (*dialect) TimeMin(q string) string { return "min(" + q + ")" }
func (*dialect) TimeMax(q string) string { return "max(" + q + ")" }
func (*dialect) Length(q string) string  { return "length(" + q + ")" }
func (*dialect) AvgLength(q string) string {
	return "avg(length(" + q + "))"
}
func (*dialect) SampleValue(q string) string {
	return "substr(CAST(" + q + " AS VARCHAR), 1, " + strconv.Itoa(connect.SampleValueMax) + ")"
}

// HashValue is DuckDB's own 64-bit hash of the value: the sample reads hashes, not values.
func (*dialect) HashValue(q string, _ source.Column) string { return "hash(" + q + ")" }

// Random compares random() in [0, 1) with p.
func (*dialect) Random(_ source.Table, p float64) string {
	return "random() < " + strconv.FormatFloat(math.Min(p, 1), 'g', -1, 64)
}

// RowSample is DuckDB's Bernoulli sample, evaluated while the scan reads each row.
func (*dialect) RowSample(_ source.Table, pct float64) string {
	return "USING SAMPLE " + strconv.FormatFloat(math.Min(pct, 100), 'f', 6, 64) + " PERCENT (bernoulli)"
}

// Sampleable leaves out binary and nested values (their masks say nothing).
func (d *dialect) Sampleable(c source.Column) bool {
	t := strings.ToUpper(c.DataType)
	return !(strings.Contains(t, "BLOB") || nested(t) || t == "BIT" || strings.HasPrefix(t, "BITSTRING"))
}

func (d *dialect) Distinctable(c source.Column) bool {
	return c.Class != source.ClassOther || d.Sampleable(c)
}

func nested(t string) bool {
	return strings.HasSuffix(t, "]") || strings.HasPrefix(t, "STRUCT") || strings.HasPrefix(t, "MAP") ||
		strings.HasPrefix(t, "UNION") || strings.HasPrefix(t, "VARIANT")
}

// ClassOf classifies DuckDB's type names (information_schema.columns.data_type).
func (*dialect) ClassOf(dataType string) string {
	t := strings.ToUpper(strings.TrimSpace(dataType))
	switch {
	case nested(t):
		return source.ClassOther
	case t == "BOOLEAN" || t == "BOOL":
		return source.ClassBoolean
	case t == "DATE" || strings.HasPrefix(t, "TIMESTAMP"):
		return source.ClassTemporal
	case t == "VARCHAR" || strings.HasPrefix(t, "VARCHAR(") || t == "TEXT" || t == "STRING" || strings.HasPrefix(t, "CHAR"):
		return source.ClassText
	case strings.HasPrefix(t, "DECIMAL") || strings.HasPrefix(t, "NUMERIC"):
		return source.ClassNumeric
	}
	switch t {
	case "TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
		"UBIGINT", "UHUGEINT", "FLOAT", "REAL", "DOUBLE":
		return source.ClassNumeric
	}
	return source.ClassOther
}

// discoverSQL lists the columns of every table and view of the database, or of a database
// file's attached catalog and the file datasets (schema files of the memory catalog), in
// order.
func (d *dialect) discoverSQL() string {
	where := "t.table_catalog = current_database() AND t.table_schema NOT IN ('information_schema', 'pg_catalog')"
	if d.database {
		where = "(t.table_catalog = " + literal(sourceCatalog) + " AND t.table_schema NOT IN ('information_schema', 'pg_catalog'))"
		if !d.noFiles {
			where += " OR (t.table_catalog = " + literal(memoryCatalog) + " AND t.table_schema = " + literal(source.FilesSchema) + ")"
		}
	}
	return `SELECT t.table_catalog, t.table_schema, t.table_name, t.table_type, c.column_name, c.ordinal_position, c.data_type, c.is_nullable
FROM information_schema.tables AS t JOIN information_schema.columns AS c
  ON c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema AND c.table_name = t.table_name
WHERE ` + where + `
ORDER BY t.table_schema, t.table_name, c.ordinal_position`
}

// viewsSQL answers the SQL of the database file's own views.
const viewsSQL = `SELECT schema_name, view_name, sql FROM duckdb_views()
WHERE NOT internal AND database_name = ` + "'" + sourceCatalog + "'"

// keysSQL answers the columns of primary keys and unique constraints, one row per column.
const keysSQL = `SELECT schema_name, table_name, constraint_type, len(constraint_column_names), unnest(constraint_column_names)
FROM duckdb_constraints()
WHERE database_name = '` + sourceCatalog + `' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')`

// foreignKeysSQL answers the declared foreign keys, one row per column pair in the key's
// order (DuckDB's references stay in the table's schema).
const foreignKeysSQL = `SELECT schema_name, table_name, coalesce(constraint_name, 'fk_' || constraint_index), referenced_table,
  constraint_column_names[k.i], referenced_column_names[k.i]
FROM duckdb_constraints(), LATERAL range(1, len(constraint_column_names) + 1) AS k(i)
WHERE database_name = '` + sourceCatalog + `' AND constraint_type = 'FOREIGN KEY'
ORDER BY schema_name, table_name, constraint_index, k.i`

// Discover lists a database file's tables and views (views with their SQL, dialect duckdb,
// for lineage), or creates (again) the directory's datasets as views of schema files and
// lists them as tables with their partition columns.
func (d *dialect) Discover(ctx context.Context, q connect.Querier, op string) ([]source.Table, error) {
	if !d.database || (len(d.fileNames) > 0 && !d.noFiles) {
		if err := d.createViews(ctx, q, op); err != nil {
			return nil, err
		}
	}
	var tables []source.Table
	index := map[[2]string]int{}
	_, err := q.Query(ctx, op, "discover", d.discoverSQL(), func(rows *sql.Rows) error {
		var catalog, schema, name, typ, col, dataType, nullable string
		var pos int
		if err := rows.Scan(&catalog, &schema, &name, &typ, &col, &pos, &dataType, &nullable); err != nil {
			return source.NewError(source.DuckDB, "discover", source.ReasonResult, "", nil)
		}
		key := [2]string{schema, name}
		i, ok := index[key]
		if !ok {
			i = len(tables)
			index[key] = i
			t := source.Table{Schema: schema, Name: name, Kind: source.TableKindTable}
			if typ == "VIEW" && !(schema == source.FilesSchema && catalog == memoryCatalog) {
				t.Kind = source.TableKindView
			}
			tables = append(tables, t)
		}
		c := source.Column{Name: col, Position: pos, DataType: dataType, Class: d.ClassOf(dataType), Nullable: nullable == "YES"}
		if schema == source.FilesSchema && catalog == memoryCatalog {
			d.mu.Lock()
			for _, k := range d.partitions[name] {
				c.Partition = c.Partition || k == col
			}
			d.mu.Unlock()
			c.Nullable = true // files declare nothing
		}
		tables[i].Columns = append(tables[i].Columns, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !d.database {
		return tables, nil
	}
	_, err = q.Query(ctx, op, "discover", viewsSQL, func(rows *sql.Rows) error {
		var schema, name string
		var def sql.NullString
		if err := rows.Scan(&schema, &name, &def); err != nil {
			return source.NewError(source.DuckDB, "discover", source.ReasonResult, "", nil)
		}
		if i, ok := index[[2]string{schema, name}]; ok {
			sel := connect.ViewSelect(strings.TrimSpace(def.String))
			tables[i].ViewDefinition = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sel), ";"))
			if l, ok := d.lineageSQL[[2]string{schema, name}]; ok {
				tables[i].ViewDefinition = l
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_, err = q.Query(ctx, op, "discover", keysSQL, func(rows *sql.Rows) error {
		var schema, name, typ, col string
		var n int
		if err := rows.Scan(&schema, &name, &typ, &n, &col); err != nil {
			return source.NewError(source.DuckDB, "discover", source.ReasonResult, "", nil)
		}
		i, ok := index[[2]string{schema, name}]
		if !ok {
			return nil
		}
		for j := range tables[i].Columns {
			c := &tables[i].Columns[j]
			if c.Name != col {
				continue
			}
			if typ == "PRIMARY KEY" {
				c.PrimaryKey, c.Nullable, c.Indexed = true, false, true
			}
			if n == 1 {
				c.Unique, c.Indexed = true, true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_, err = q.Query(ctx, op, "discover", foreignKeysSQL, func(rows *sql.Rows) error {
		var schema, name, constraint, refTable, col, refCol string
		if err := rows.Scan(&schema, &name, &constraint, &refTable, &col, &refCol); err != nil {
			return source.NewError(source.DuckDB, "discover", source.ReasonResult, "", nil)
		}
		i, ok := index[[2]string{schema, name}]
		if !ok {
			return nil
		}
		tables[i].ForeignKeys = source.AppendForeignKeyColumn(tables[i].ForeignKeys, constraint,
			source.TableName{Schema: schema, Name: refTable}, col, refCol)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tables, nil
}

// createViews makes each dataset of the directory a view "files"."<name>" over its files
// (replaced when its files' globs changed) and drops the views of datasets gone.
func (d *dialect) createViews(ctx context.Context, q connect.Querier, op string) error {
	sets := fileSets(d.dir, d.only)
	if d.database {
		// A database file's file datasets: the ones its views read.
		kept := sets[:0]
		for _, s := range sets {
			if d.fileNames[s.name] {
				kept = append(kept, s)
			}
		}
		sets = kept
	}
	d.mu.Lock()
	if d.views == nil {
		d.views, d.partitions, d.parquet = map[string]string{}, map[string][]string{}, map[string][]string{}
	}
	d.mu.Unlock()
	keep := map[string]bool{}
	for _, s := range sets {
		keep[s.name] = true
		r := s.reader(d.dir)
		d.mu.Lock()
		same := d.views[s.name] == r
		d.mu.Unlock()
		if same {
			continue
		}
		stmt := "CREATE OR REPLACE VIEW " + quote(memoryCatalog) + "." + quote(source.FilesSchema) + "." + quote(s.name) + " AS SELECT * FROM " + r
		if _, err := q.Query(ctx, op, "discover", stmt, nil); err != nil {
			// A file DuckDB cannot read (corrupt, empty, not what its extension says) is
			// left out; the others are still datasets.
			if source.IsReason(err, source.ReasonTimeout) || source.IsReason(err, source.ReasonCanceled) {
				return err
			}
			continue
		}
		d.mu.Lock()
		d.views[s.name] = r
		d.partitions[s.name] = s.partitions
		if s.format == formatParquet {
			globs := make([]string, len(s.globs))
			for i, g := range s.globs {
				globs[i] = d.dir + "/" + g
			}
			d.parquet[s.name] = globs
		} else {
			delete(d.parquet, s.name)
		}
		d.mu.Unlock()
	}
	d.mu.Lock()
	var gone []string
	for name := range d.views {
		if !keep[name] {
			gone = append(gone, name)
		}
	}
	d.mu.Unlock()
	for _, name := range gone {
		if _, err := q.Query(ctx, op, "discover", "DROP VIEW IF EXISTS "+quote(memoryCatalog)+"."+quote(source.FilesSchema)+"."+quote(name), nil); err != nil {
			return err
		}
		d.mu.Lock()
		delete(d.views, name)
		delete(d.partitions, name)
		delete(d.parquet, name)
		d.mu.Unlock()
	}
	return nil
}
