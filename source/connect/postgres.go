package connect

import (
	"context"
	"database/sql"
	"errors"
	"github.com/vigia-data/vigia/source"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgAllowedKeys are the DSN keys a customer may use. Keys that make the driver read files
// on our host (passfile, service, servicefile, sslcert, sslkey, sslrootcert, sslpassword)
// are refused, and so is options, which could undo the statement timeout.
var pgAllowedKeys = []string{
	"host", "port", "database", "dbname", "user", "password", "connect_timeout", "sslmode",
	"sslsni", "sslnegotiation", "target_session_attrs", "application_name", "search_path",
	"channel_binding", "require_auth", "timezone",
}

type postgres struct{}

func (postgres) kind() source.Kind    { return source.Postgres }
func (postgres) grace() time.Duration { return 2 * time.Second }

// wrap leaves statements alone: statement_timeout and application_name are session
// settings.
func (postgres) wrap(stmt, _ string) string { return stmt }

func (postgres) quote(ident string) string {
	return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"`
}

// pgParse parses a DSN with only the allowed keys and reports whether the DSN itself
// carries a password (rather than the environment or a .pgpass file of our host).
func pgParse(dsn string) (*pgx.ConnConfig, bool, error) {
	opts := pgx.ParseConfigOptions{ParseConfigOptions: pgconn.ParseConfigOptions{ConnStringAllowedKeys: pgAllowedKeys}}
	cfg, err := pgx.ParseConfigWithOptions(dsn, opts)
	if err != nil {
		return nil, false, newError(source.Postgres, "validate", source.ReasonInvalidDSN, "")
	}
	noPassword := make([]string, 0, len(pgAllowedKeys))
	for _, k := range pgAllowedKeys {
		if k != "password" {
			noPassword = append(noPassword, k)
		}
	}
	opts.ConnStringAllowedKeys = noPassword
	_, perr := pgx.ParseConfigWithOptions(dsn, opts)
	return cfg, perr != nil, nil
}

func openPostgres(ctx context.Context, dsn string, opts source.Options) (source.Source, error) {
	cfg, hasPassword, err := pgParse(dsn)
	if err != nil {
		return nil, err
	}
	if !hasPassword {
		// A password the DSN does not carry came from PGPASSWORD or a .pgpass file of our
		// host; it must never be sent to a customer's server.
		cfg.Password = ""
	}
	if opts.Dial != nil {
		cfg.DialFunc = guardDial(opts.Dial)
	}
	timeout := statementTimeout(opts)
	cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	// The label, not the DSN's application_name: a takeover finds a dead worker's
	// sessions by it (CancelLabelled).
	cfg.RuntimeParams["application_name"] = labelOf(opts)
	cfg.AfterConnect = disableJIT
	// One round trip per statement, no server-side prepared statements to leak across
	// poolers, and no statement cache: every profile statement is different.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.StatementCacheCapacity = 0
	cfg.DescriptionCacheCapacity = 0
	c := newConn(postgres{}, stdlib.OpenDB(*cfg), opts)
	if _, err := c.query(ctx, source.OperationFrom(ctx, source.OpTest), "open", "SELECT 1", nil, nil); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// disableJIT turns just-in-time compilation off for the session (Postgres 11 and later).
// Every profile statement is a one-off aggregate of dozens of expressions: compiling them
// with LLVM (inlining and optimization, which the planner switches on for any table of a
// few million rows) costs seconds of CPU in the leader and in each parallel worker, and is
// never reused. Measured on the 5,000,000-row benchmark table, the profile aggregate ran
// in a median 6.4 s without JIT against 7.3 s with it (4 runs each), and varied less.
func disableJIT(ctx context.Context, pc *pgconn.PgConn) error {
	v := pc.ParameterStatus("server_version")
	end := 0
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	if major, err := strconv.Atoi(v[:end]); err != nil || major < 11 {
		return nil // before JIT existed
	}
	_, err := pc.Exec(ctx, "SET jit = off").ReadAll()
	return err
}

func (postgres) classify(err error) (reason, code string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		code = pe.Code
		switch {
		case code == "28P01" || code == "28000":
			return source.ReasonAuth, code
		case code == "3D000" || code == "42P01" || code == "3F000":
			return source.ReasonNotFound, code
		case code == "42501":
			return source.ReasonPermission, code
		case code == "55000":
			// object_not_in_prerequisite_state: what a SELECT meets is a materialized
			// view that was never populated.
			return source.ReasonNotPopulated, code
		case code == "57014" || code == "55P03":
			return source.ReasonTimeout, code
		case strings.HasPrefix(code, "08") || strings.HasPrefix(code, "57P") || code == "53300":
			return source.ReasonUnreachable, code
		}
		return source.ReasonQuery, code
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return source.ReasonUnreachable, ""
	}
	if pgconn.Timeout(err) {
		return source.ReasonTimeout, ""
	}
	return "", ""
}

// pgDiscoverColumns lists every column of the relations the user can read, outside the
// system schemas, with what the catalog declares about them. Partitions are left out:
// their parent is the dataset. Key and clustering columns are an index's key columns
// only (the first indnkeyatts of indkey): INCLUDE columns ride along in the index but
// are no part of the key. A column is unique when it alone is the key of a unique index
// without a predicate (a unique constraint or the primary key has one).
const pgDiscoverColumns = `SELECT n.nspname, c.relname, c.relkind::text, a.attname, a.attnum::int,
 format_type(a.atttypid, a.atttypmod), coalesce(bt.typname, t.typname)::text,
 coalesce(bt.typcategory, t.typcategory)::text, NOT a.attnotnull,
 EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary
   AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1])),
 EXISTS (SELECT 1 FROM pg_partitioned_table pt WHERE pt.partrelid = c.oid AND a.attnum = ANY (pt.partattrs)),
 EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisclustered
   AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1])),
 EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
   AND i.indkey[0] = a.attnum)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
 AND NOT c.relispartition
 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
 AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp\_%'
 AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')
ORDER BY n.nspname, c.relname, a.attnum`

// pgDiscoverViews returns the definitions of views (pg_views) and materialized views
// (pg_matviews) in one pass over pg_class. It runs with an empty search_path
// (pgEmptySearchPath, in the same transaction): pg_get_viewdef leaves out the schema of
// every name visible on the reading session's search_path, so a view of schema legacy
// reading public.rental would otherwise come back as FROM rental and read as
// legacy.rental. With nothing on the path, every name comes back qualified.
const pgDiscoverViews = `SELECT n.nspname, c.relname, pg_get_viewdef(c.oid, true)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('v', 'm')
 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
 AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')`

// pgEmptySearchPath empties the search path for the rest of the transaction.
const pgEmptySearchPath = `SELECT set_config('search_path', '', true)`

// pgDiscoverDependencies lists, for every view and materialized view, the relations its
// rewrite rule depends on as pg_depend records them: what the view reads, whatever its
// SQL looks like. A partition read directly counts as its partitioned root, the dataset.
const pgDiscoverDependencies = `SELECT DISTINCT vn.nspname, v.relname, tn.nspname, t.relname
FROM pg_rewrite r
JOIN pg_class v ON v.oid = r.ev_class
JOIN pg_namespace vn ON vn.oid = v.relnamespace
JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
JOIN pg_class p ON p.oid = d.refobjid
JOIN pg_class t ON t.oid = coalesce(pg_partition_root(p.oid), p.oid)
JOIN pg_namespace tn ON tn.oid = t.relnamespace
WHERE v.relkind IN ('v', 'm') AND t.oid <> v.oid AND t.relkind IN ('r', 'p', 'v', 'm', 'f')
 AND vn.nspname NOT IN ('pg_catalog', 'information_schema')
 AND has_schema_privilege(vn.oid, 'USAGE') AND has_table_privilege(v.oid, 'SELECT')`

// pgDiscoverForeignKeys lists the declared foreign keys, one row per column pair in the
// key's order (NOT VALID ones included: they are declared).
const pgDiscoverForeignKeys = `SELECT n.nspname, c.relname, con.conname, a.attname, rn.nspname, rc.relname, ra.attname
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class rc ON rc.oid = con.confrelid JOIN pg_namespace rn ON rn.oid = rc.relnamespace
CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(col, refcol, ord)
JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.col
JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = k.refcol
WHERE con.contype = 'f' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND has_schema_privilege(n.oid, 'USAGE')
ORDER BY n.nspname, c.relname, con.conname, k.ord`

// pgDiscoverIndexed lists the columns leading an index (expression indexes lead with no
// column and are left out).
const pgDiscoverIndexed = `SELECT DISTINCT n.nspname, c.relname, a.attname
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND i.indkey[0] <> 0 AND has_schema_privilege(n.oid, 'USAGE')`

// pgDiscoverReads reads the cumulative scan counters of the tables, for usage.
const pgDiscoverReads = `SELECT schemaname, relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables`

func (d postgres) discover(ctx context.Context, c *conn, op string) ([]source.Table, error) {
	var tables []source.Table
	index := map[[2]string]int{}
	_, err := c.query(ctx, op, "discover", pgDiscoverColumns, nil, func(rows *sql.Rows) error {
		var schema, name, relkind, col, dataType, typname, category string
		var pos int
		var nullable, pk, part, clustered, unique bool
		if err := rows.Scan(&schema, &name, &relkind, &col, &pos, &dataType, &typname, &category, &nullable, &pk, &part, &clustered, &unique); err != nil {
			return c.resultError("discover")
		}
		key := [2]string{schema, name}
		i, ok := index[key]
		if !ok {
			i = len(tables)
			index[key] = i
			tables = append(tables, source.Table{Schema: schema, Name: name, Kind: pgTableKind(relkind)})
		}
		tables[i].Columns = append(tables[i].Columns, source.Column{
			Name: col, Position: pos, DataType: dataType, Class: pgClass(typname, category),
			Nullable: nullable, PrimaryKey: pk, Partition: part, Clustering: clustered, Unique: unique,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = c.inReadTx(ctx, "discover", func(ctx context.Context, tx *sql.Tx) error {
		if _, err := c.run(ctx, tx, op, "discover", pgEmptySearchPath, nil, nil); err != nil {
			return err
		}
		return c.readViewDefinitions(ctx, tx, op, pgDiscoverViews, index, tables)
	})
	if err != nil {
		return nil, err
	}
	if err := c.readDependencies(ctx, op, pgDiscoverDependencies, index, tables); err != nil {
		return nil, err
	}
	byName := func(schema, name string) (int, bool) { i, ok := index[[2]string{schema, name}]; return i, ok }
	if err := c.readForeignKeys(ctx, op, pgDiscoverForeignKeys, byName, tables); err != nil {
		return nil, err
	}
	if err := c.readIndexed(ctx, op, pgDiscoverIndexed, byName, tables); err != nil {
		return nil, err
	}
	_, err = c.query(ctx, op, "discover", pgDiscoverReads, nil, func(rows *sql.Rows) error {
		var schema, name string
		var reads int64
		if err := rows.Scan(&schema, &name, &reads); err != nil {
			return c.resultError("discover")
		}
		if i, ok := index[[2]string{schema, name}]; ok {
			tables[i].Reads = &reads
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tables, nil
}

func pgTableKind(relkind string) string {
	switch relkind {
	case "r", "p":
		return source.TableKindTable
	case "v":
		return source.TableKindView
	case "m":
		return source.TableKindMaterializedView
	case "f":
		return source.TableKindExternal
	}
	return source.TableKindUnknown
}

// pgClass classifies a column from its base type's name and category.
func pgClass(typname, category string) string {
	switch typname {
	case "int2", "int4", "int8", "float4", "float8", "numeric":
		return source.ClassNumeric
	case "date", "timestamp", "timestamptz":
		return source.ClassTemporal
	case "bool":
		return source.ClassBoolean
	}
	if category == "S" || category == "E" {
		return source.ClassText
	}
	return source.ClassOther
}

// classOf classifies a type as format_type prints it.
func (postgres) classOf(dataType string) string {
	t := strings.ToLower(dataType)
	switch {
	case t == "smallint" || t == "integer" || t == "bigint" || t == "real" || t == "double precision" ||
		strings.HasPrefix(t, "numeric") || strings.HasPrefix(t, "decimal"):
		return source.ClassNumeric
	case t == "date" || strings.HasPrefix(t, "timestamp"):
		return source.ClassTemporal
	case t == "boolean":
		return source.ClassBoolean
	case t == "text" || t == "name" || t == "citext" || strings.HasPrefix(t, "character"):
		return source.ClassText
	}
	return source.ClassOther
}

func (d postgres) table(t source.Table) string {
	if t.Schema == "" {
		return d.quote(t.Name)
	}
	return d.quote(t.Schema) + "." + d.quote(t.Name)
}

// numMin and numMax answer the extremes as the server prints them: numeric and bigint
// keep every digit (a float8 cast would round past 2^53), float8 prints its shortest
// exact form.
func (postgres) numMin(q string) string { return "min(" + q + ")::text" }
func (postgres) numMax(q string) string { return "max(" + q + ")::text" }

func (postgres) timeMin(q string) string { return "min(" + q + ")" }
func (postgres) timeMax(q string) string { return "max(" + q + ")" }

// Infinite dates would not scan into a time; they say nothing about freshness either. A
// filter in the aggregate would cost every row of every table (about 5% of the aggregate
// on the benchmark table), so the finite extremes are asked only when an infinity came back.
func (postgres) finiteTimeMin(q string) string {
	return "min(" + q + ") FILTER (WHERE isfinite(" + q + "))"
}
func (postgres) finiteTimeMax(q string) string {
	return "max(" + q + ") FILTER (WHERE isfinite(" + q + "))"
}
func (postgres) length(q string) string { return "char_length(" + q + "::text)" }
func (postgres) avgLength(q string) string {
	return "avg(char_length(" + q + "::text))::float8"
}
func (postgres) sampleValue(q string) string {
	return "left(" + q + "::text, " + strconv.Itoa(sampleValueMax) + ")"
}
func (postgres) random(_ source.Table, p float64) string { return "random() < " + fmtFloat(p) }

// hashValue is one of Postgres's own 64-bit hash functions: the distinct sample never
// carries values. Each type is hashed by its own function where that hashes the whole
// value, which spares rendering numbers as text; bigint is split into its two halves,
// because hashint8extended folds the 64 bits into 32 first (values that differ only by the
// same bits in both halves would collide), and temporal types, whose hash functions are
// those of bigint, are hashed as text.
func (postgres) hashValue(q string, c source.Column) string {
	t := strings.ToLower(c.DataType)
	switch {
	case t == "smallint" || t == "integer":
		return "hashint4extended(" + q + ", 0)"
	case t == "bigint":
		return "hashint4extended(((" + q + " & 4294967295) - 2147483648)::int4, hashint4extended((" + q + " >> 32)::int4, 0))"
	case strings.HasPrefix(t, "numeric") || strings.HasPrefix(t, "decimal"):
		return "hash_numeric_extended(" + q + ", 0)"
	case t == "double precision":
		return "hashfloat8extended(" + q + ", 0)"
	case t == "real":
		return "hashfloat4extended(" + q + ", 0)"
	case t == "uuid":
		return "uuid_hash_extended(" + q + ", 0)"
	case t == "boolean":
		return "hashint4extended(" + q + "::int4, 0)"
	case t == "citext":
		// citext compares lower-cased: so must its hash, or case variants count apart.
		return "hashtextextended(lower(" + q + "::text), 0)"
	case t == "text" || strings.HasPrefix(t, "character") || strings.HasPrefix(t, "varchar"):
		// No cast for text types: the column's collation rides along, and under a
		// nondeterministic collation hashtextextended hashes the sort key, so values the
		// collation calls equal hash equal (as count(DISTINCT) counts them).
		return "hashtextextended(" + q + ", 0)"
	}
	return "hashtextextended(" + q + "::text, 0)"
}

// cancelLabelled cancels the active statements of other backends whose application_name
// starts with prefix (sessions of the same role, or any with pg_signal_backend).
func (postgres) cancelLabelled(ctx context.Context, c *conn, prefix string) (int, error) {
	const stmt = `SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND state = 'active' AND left(application_name, length($1)) = $1 AND application_name <> $2`
	var n int
	_, err := c.query(ctx, source.OperationFrom(ctx, source.OpScan), "cancel", stmt, []any{prefix, c.label}, func(rows *sql.Rows) error {
		if err := rows.Scan(&n); err != nil {
			return c.resultError("cancel")
		}
		return nil
	})
	return n, err
}

// tableSample draws whole pages: only tables and materialized views support it. REPEATABLE
// with the table's seed draws the same pages while the table's storage is unchanged.
func (postgres) tableSample(t source.Table, pct float64) string {
	if t.Kind != source.TableKindTable && t.Kind != source.TableKindMaterializedView {
		return ""
	}
	return "TABLESAMPLE SYSTEM (" + strconv.FormatFloat(min(pct, 100), 'g', 6, 64) + ") REPEATABLE (" + sampleSeed31(t) + ")"
}

// rowSample keeps rows one by one as the scan reads every page (TABLESAMPLE BERNOULLI),
// the same rows while the table is unchanged (REPEATABLE with the table's seed).
func (postgres) rowSample(t source.Table, pct float64) string {
	if t.Kind != source.TableKindTable && t.Kind != source.TableKindMaterializedView {
		return ""
	}
	return "TABLESAMPLE BERNOULLI (" + strconv.FormatFloat(min(pct, 100), 'g', 6, 64) + ") REPEATABLE (" + sampleSeed31(t) + ")"
}

// keyColumn is a single-column smallint, integer or bigint primary key of a table.
func (postgres) keyColumn(t source.Table) int {
	if t.Kind != source.TableKindTable {
		return -1
	}
	key := -1
	for i, c := range t.Columns {
		if !c.PrimaryKey {
			continue
		}
		if key >= 0 {
			return -1 // composite key
		}
		key = i
	}
	if key < 0 {
		return -1
	}
	switch strings.ToLower(t.Columns[key].DataType) {
	case "smallint", "integer", "bigint":
		return key
	}
	return -1
}

func (postgres) sampleable(c source.Column) bool {
	switch strings.ToLower(c.DataType) {
	case "bytea", "point", "line", "lseg", "box", "path", "polygon", "circle", "geometry", "geography",
		"tsvector", "tsquery", "raster":
		return false
	}
	return !strings.HasPrefix(strings.ToLower(c.DataType), "geometry(")
}

func (postgres) distinctable(c source.Column) bool { return c.Class != source.ClassOther }
