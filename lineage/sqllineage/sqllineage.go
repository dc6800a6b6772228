// Package sqllineage reads the SQL of a view or materialized view and tells which
// tables it reads and which source columns every output column is derived from.
//
// Vigia captures view definitions from customers' catalogs (pg_views.definition,
// information_schema.VIEWS.VIEW_DEFINITION, sqlite_master.sql) and turns them into
// parsed lineage edges with a column map. The SQL is parsed with the dialect's real
// parser (Postgres: pg_query; MySQL/MariaDB: the TiDB parser; SQLite: the Postgres
// parser after a light rewrite of SQLite's identifier quoting) and translated into one
// small dialect-neutral query model, so the lineage rules (scoping, joins, CTEs, set
// operations, star expansion) are written once in resolve.go.
//
// The analysis never guesses: a reference that cannot be attributed with certainty
// leaves its output column Resolved=false and adds a stable reason code to
// Result.Unresolved. Errors carry fixed messages and never the SQL text, because view
// definitions may hold literal values from the customer's data.
package sqllineage

import (
	"errors"
	"fmt"
)

// Dialect names the SQL dialect a definition was captured from.
type Dialect string

// The dialects Analyze understands.
const (
	Postgres Dialect = "postgres"
	MySQL    Dialect = "mysql" // MySQL and MariaDB
	// SQLite definitions go through the Postgres parser where it accepts them.
	SQLite Dialect = "sqlite"
)

// TableRef names a base table or view as the SQL wrote it. Schema is "" when the name
// was not qualified. Postgres folds unquoted names to lower case (SQLite definitions
// too, as they go through the Postgres parser); MySQL names keep their spelling.
type TableRef struct {
	Schema string
	Name   string
}

// String returns schema.name, or name when unqualified.
func (t TableRef) String() string {
	if t.Schema == "" {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// Catalog tells the walker which columns a table or view has, in their order, for
// SELECT * expansion and for attributing unqualified column names. Columns of an
// unknown table return ok=false. For the mysql and sqlite dialects names are
// case-insensitive, so implementations should look them up without regard to case
// (MapCatalog does).
type Catalog interface {
	Columns(t TableRef) (cols []string, ok bool)
}

// ColumnRef is one column of a base table or view.
type ColumnRef struct {
	Table  TableRef
	Column string
}

// String returns schema.table.column.
func (c ColumnRef) String() string { return c.Table.String() + "." + c.Column }

// OutputColumn is one column of the view and the source columns it derives from.
type OutputColumn struct {
	Name string
	// From lists the source columns whose values flow into this column, directly or
	// through expressions, aggregates, CASE branches and conditions, scalar subqueries.
	From []ColumnRef
	// Direct is true when every row's value is a plain copy (possibly renamed) of one
	// source column: one column, or, through a UNION/INTERSECT/EXCEPT, one column in
	// each branch (From then lists them all).
	Direct bool
	// Resolved is false when some reference could not be attributed; From then holds
	// only what was attributed with certainty.
	Resolved bool
}

// Result is the lineage of one view definition.
type Result struct {
	// Sources lists every base table or view read, deduplicated, in order of appearance
	// in the SQL. CTE names are not sources; the tables they read are.
	Sources []TableRef
	// Columns has one entry per output column of the view, in order. Columns that come
	// from a star over a table the Catalog does not know are missing (see Unresolved).
	Columns []OutputColumn
	// FilterColumns lists the source columns the view uses without copying their values:
	// WHERE, JOIN ON/USING, GROUP BY, HAVING, ORDER BY, window PARTITION/ORDER, aggregate
	// FILTER, EXISTS subqueries. Useful for table-level impact.
	FilterColumns []ColumnRef
	// Unresolved holds stable reason codes (Reason* constants), deduplicated, in the
	// order they were met.
	Unresolved []string
	// ColumnLevel is false when no column map could be built at all; an incident then
	// carries impact_note no_column_lineage.
	ColumnLevel bool
}

// Reason codes reported in Result.Unresolved.
const (
	// ReasonStarUnknownTable: a * or t.* over a table the Catalog does not know, or over
	// a subquery whose columns could not all be named.
	ReasonStarUnknownTable = "star_unknown_table"
	// ReasonColumnAmbiguous: an unqualified name matched columns of several tables.
	ReasonColumnAmbiguous = "column_ambiguous"
	// ReasonColumnUnknownTable: an unqualified name may belong to a table whose columns
	// the Catalog does not know, or a qualified one to a subquery with unknown columns.
	ReasonColumnUnknownTable = "column_unknown_table"
	// ReasonColumnNotFound: no table in scope has a column of that name.
	ReasonColumnNotFound = "column_not_found"
	// ReasonQualifierNotFound: t.c where no table, alias or CTE named t is in scope.
	ReasonQualifierNotFound = "qualifier_not_found"
	// ReasonRecursiveCTE: a recursive CTE whose lineage did not settle.
	ReasonRecursiveCTE = "recursive_cte"
	// ReasonNaturalJoinUnknownColumns: a NATURAL join over a table with unknown columns.
	ReasonNaturalJoinUnknownColumns = "natural_join_unknown_columns"
	// ReasonSetOperationArity: branches of a UNION/INTERSECT/EXCEPT with different widths.
	ReasonSetOperationArity = "set_operation_arity"
	// ReasonColumnAliasArity: more column aliases than columns (view, CTE or subquery).
	ReasonColumnAliasArity = "column_alias_arity"
	// ReasonTooComplex: the definition needed more work than one analysis may spend
	// (deeply nested recursive CTEs); what was left is unresolved.
	ReasonTooComplex = "too_complex"
	// ReasonDynamicSQL: the view runs SQL held in a string (crosstab('…'), dblink,
	// query_to_xml, a query passed as text to a function): the tables that SQL reads
	// are not in the parse tree; only the database's dependency catalog can name
	// them, where it records them.
	ReasonDynamicSQL = "dynamic_sql"
)

// Errors returned by Analyze. Their messages are fixed and never contain SQL text.
var (
	// ErrUnparsable: the dialect's parser rejected the SQL (a *ParseError wraps it).
	ErrUnparsable = errors.New("sqllineage: the SQL could not be parsed")
	// ErrNotAQuery: the SQL parsed but is not one SELECT or CREATE [MATERIALIZED] VIEW.
	ErrNotAQuery = errors.New("sqllineage: the SQL is not a single SELECT or CREATE VIEW")
	// ErrUnsupportedDialect: the dialect is not one of Postgres, MySQL, SQLite.
	ErrUnsupportedDialect = errors.New("sqllineage: unsupported dialect")
	// ErrTooLarge: the SQL is longer than MaxSQLBytes.
	ErrTooLarge = errors.New("sqllineage: the SQL is too long")
)

// MaxSQLBytes bounds the definitions Analyze accepts; real view definitions are far
// smaller, and the bound keeps a hostile catalog from feeding the parser megabytes.
const MaxSQLBytes = 1 << 20

// ParseError reports where the parser gave up, as a byte offset (0 when the parser
// does not say). It matches ErrUnparsable with errors.Is and never holds SQL text.
type ParseError struct {
	Dialect Dialect
	Offset  int
}

// Error returns a fixed message with the dialect and the offset.
func (e *ParseError) Error() string {
	if e.Offset > 0 {
		return fmt.Sprintf("sqllineage: the %s parser rejected the SQL at byte %d", e.Dialect, e.Offset)
	}
	return fmt.Sprintf("sqllineage: the %s parser rejected the SQL", e.Dialect)
}

// Is makes errors.Is(err, ErrUnparsable) true.
func (e *ParseError) Is(target error) bool { return target == ErrUnparsable }

// Analyze parses one view definition and returns its lineage. sql may be a bare
// SELECT (what pg_views.definition and VIEW_DEFINITION return) or a full CREATE
// [OR REPLACE] [MATERIALIZED] VIEW statement (what sqlite_master.sql holds), in any
// dialect. cat may be nil (no table known).
//
// Analyze returns ErrUnsupportedDialect, ErrTooLarge, a *ParseError (errors.Is
// ErrUnparsable) or ErrNotAQuery; it never returns the SQL text.
func Analyze(d Dialect, sql string, cat Catalog) (Result, error) {
	if len(sql) > MaxSQLBytes {
		return Result{}, ErrTooLarge
	}
	var (
		st  *statement
		err error
	)
	switch d {
	case Postgres:
		st, err = parsePostgres(sql, sql, Postgres)
	case SQLite:
		st, err = parsePostgres(sqliteToPostgres(sql), sql, SQLite)
	case MySQL:
		st, err = parseMySQL(sql)
	default:
		return Result{}, ErrUnsupportedDialect
	}
	if err != nil {
		return Result{}, err
	}
	return resolveStatement(d, st, cat), nil
}
