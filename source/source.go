// Package source declares what Vigia knows of customers' databases ("sources") without
// importing a driver: the Source port, tables, columns, profiles, the query-log record and
// the one error type. The connectors that implement it live in source/connect, which only
// the wiring imports. Only counts, statistics and masks leave a source; sampled values live
// in memory for the duration of one Profile call and are never logged, returned or put in
// an error.
package source

import (
	"context"
	"net"
	"time"

	"github.com/vigia-data/vigia"
)

// Kind names a connector.
type Kind string

// The connectors.
const (
	Postgres Kind = "postgres"
	MySQL    Kind = "mysql"
	SQLite   Kind = "sqlite"
)

// Kinds lists the connectors this package provides.
func Kinds() []Kind { return []Kind{Postgres, MySQL, SQLite} }

// Table kinds, as the contract names them (Dataset.kind).
const (
	TableKindTable            = "table"
	TableKindView             = "view"
	TableKindMaterializedView = "materialized_view"
	TableKindExternal         = "external"
	TableKindUnknown          = "unknown"
)

// Column classes: what kind of statistics a column gets.
const (
	ClassNumeric  = "numeric"
	ClassTemporal = "temporal"
	ClassText     = "text"
	ClassBoolean  = "boolean"
	ClassOther    = "other"
)

// Profiling depths.
const (
	DepthBasic    = "basic"    // first BasicRows rows only, no distinct counts (cost-guarded views and external tables)
	DepthStandard = "standard" // whole table aggregate; distinct counts estimated on the sample
	DepthDeep     = "deep"     // as standard, with exact count(distinct) in the aggregate
)

// How a sample was drawn (TableProfile.SampleMethod).
const (
	SampleNone        = "none"        // nothing sampled (empty table, or no sampleable column)
	SampleFull        = "full"        // the whole table: counts on it are exact
	SampleTableSample = "tablesample" // Postgres TABLESAMPLE SYSTEM (pages); masks and semantic types only
	SampleKeys        = "keys"        // random primary-key values fetched by index
	SampleBernoulli   = "bernoulli"   // each row kept with a fixed probability (Postgres TABLESAMPLE BERNOULLI on tables)
	SampleFirstRows   = "first_rows"  // the first rows (depth basic)
)

// Operations recorded in the query log.
const (
	OpScan     = "scan"
	OpDiscover = "discover"
	OpTest     = "test"
)

// Defaults.
const (
	DefaultStatementTimeout = 30 * time.Second
	DefaultSampleSize       = 10000
	MaxSampleSize           = 200000 // bounds the memory one Profile may use
	BasicRows               = 1000   // rows a basic profile reads
	DefaultCountry          = "PT"
	DefaultMaxConns         = 2
)

// Bounds of the distinct estimates' sample.
const (
	// DistinctSampleShare is the share of a table the distinct estimates read by default:
	// one row in DistinctSampleShare, between SampleSize and DistinctSampleFactor times it.
	// Their intervals narrow with the sampling rate, and hashes are cheap to hold.
	DistinctSampleShare  = 100
	DistinctSampleFactor = 10
	// MaxDistinctValues bounds the sampled value hashes one profile holds (8 bytes each).
	MaxDistinctValues = 4_000_000
)

// Options configures a connection to a source.
type Options struct {
	// Dial, when set, is used for every network connection (the lead wires an SSRF-guarded
	// dialer here). It receives the network ("tcp", or "unix" for a socket DSN) and address.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// StatementTimeout is applied to every statement sent (default 30s).
	StatementTimeout time.Duration
	// Recorder receives every statement sent (query log); may be nil.
	Recorder Recorder
	// MaxConns caps the connections held open to the source (default 2).
	MaxConns int
	// SQLiteRoot, when set, is the directory SQLite database files must be inside
	// (after resolving symbolic links); a DSN pointing elsewhere is refused.
	SQLiteRoot string
	// FilesRoot, when set, is the directory the duckdb kind's paths (a DuckDB database file,
	// a directory of data files) must be inside, after resolving symbolic links, by the same
	// rule as SQLiteRoot; a path elsewhere is refused with ReasonPermission.
	FilesRoot string
	// Files bounds the engine that reads files (the duckdb kind) so that a scan cannot starve
	// the service; zero values take the connector's defaults.
	Files FilesLimits
	// Label names the sessions of this connection on the source (at most 63 bytes of
	// [A-Za-z0-9 _./:-]): Postgres' application_name, and a comment leading every
	// MySQL/MariaDB statement. CancelLabelled finds another process's sessions by it.
	// Empty: "vigia".
	Label string
}

// FilesLimits are the settings of a DuckDB session (VIGIA_DUCKDB_MEMORY_LIMIT,
// VIGIA_DUCKDB_THREADS, VIGIA_DUCKDB_TEMP_DIR; see docs/files.md).
type FilesLimits struct {
	// MemoryLimit is DuckDB's memory_limit ("1GB" by default): beyond it operators spill to
	// TempDirectory or fail with ReasonQuery.
	MemoryLimit string
	// Threads is DuckDB's threads (2 by default).
	Threads int
	// TempDirectory is where DuckDB spills (default: the system temporary directory's
	// vigia-duckdb).
	TempDirectory string
}

// Source is an open connection to a customer database.
type Source interface {
	Kind() Kind
	// Dialect is the SQL dialect of the source: "postgres", "mysql" or "sqlite".
	Dialect() string
	// Ping runs a trivial statement. It returns an *Error.
	Ping(ctx context.Context) error
	// Discover lists the tables, views, materialized views and external tables the
	// connection can read, with their columns. It returns an *Error.
	Discover(ctx context.Context) ([]Table, error)
	// Profile computes the profile of one table. It returns an *Error.
	Profile(ctx context.Context, t Table, req ProfileRequest) (*TableProfile, error)
	// QueryInt runs one read-only statement that answers one row of one integer column
	// (a count, an epoch), recorded under the context's operation ("scan" by default) with
	// the statement timeout, like every other statement. ok is false when the value is
	// NULL. Postgres and MySQL run it in a READ ONLY transaction; SQLite files are opened
	// read-only. The caller builds stmt from quoted names and literals only: it is never
	// given a source value. It returns an *Error: ReasonResult when the answer is not one
	// row of one integer column, ReasonTimeout, ReasonNotFound, ReasonQuery...
	QueryInt(ctx context.Context, stmt string) (value int64, ok bool, err error)
	// QueryRows runs one read-only statement like QueryInt and answers its rows, each
	// column as text (nil for NULL); more than maxRows rows is ReasonResult. For
	// statements whose answers are hashes, counts and keys (data diff, label quality),
	// and for duplicate detection the normalized identifying fields of a bounded read,
	// held in memory for one run and never stored, logged or returned (package
	// duplicates keeps dataset ids, row keys and confidences only).
	QueryRows(ctx context.Context, stmt string, maxRows int) ([][]*string, error)
	// CancelLabelled cancels the statements running on the source in other sessions
	// whose label (Options.Label) starts with prefix and is not this connection's own:
	// pg_cancel_backend on Postgres, KILL QUERY on MySQL/MariaDB, nothing on SQLite
	// (a file has no other sessions Vigia can reach). It returns how many statements it
	// cancelled; sessions the source does not let this user see or signal are skipped.
	CancelLabelled(ctx context.Context, prefix string) (int, error)
	Close() error
}

// Table is a table, view, materialized view or external table of a source.
type Table struct {
	Schema, Name string
	// Kind is table, view, materialized_view, external or unknown.
	Kind    string
	Columns []Column
	// ViewDefinition is the SQL of views and materialized views, kept for lineage; ""
	// otherwise.
	ViewDefinition string
	// Reads is the source's own cumulative count of scans of the table since its
	// statistics were last reset (Postgres: seq_scan + idx_scan), nil when the source keeps
	// no such counter. It counts every reader, Vigia's profiles included.
	Reads *int64
	// DependsOn lists the tables and views a view reads as the source's own dependency
	// catalog records them (Postgres pg_depend over pg_rewrite, MySQL
	// information_schema.VIEW_TABLE_USAGE); DependsOnKnown is false when the source keeps
	// no such catalog (MariaDB before VIEW_TABLE_USAGE, SQLite), and then lineage relies
	// on the view's SQL alone.
	DependsOn      []TableName
	DependsOnKnown bool
	// ForeignKeys are the table's declared foreign keys (Postgres pg_constraint, MySQL
	// and MariaDB information_schema.KEY_COLUMN_USAGE, SQLite pragma_foreign_key_list),
	// in the source's order; join paths, not data flow.
	ForeignKeys []ForeignKey
}

// ForeignKey is a declared foreign key: the table's Columns reference RefColumns of the
// table References, position by position.
type ForeignKey struct {
	// Name is the constraint's name; SQLite keeps none, and gets "fk_<n>" in its order.
	Name       string    `json:"name"`
	Columns    []string  `json:"columns"`
	References TableName `json:"references"`
	RefColumns []string  `json:"ref_columns"`
}

// AppendForeignKeyColumn adds one column pair of constraint to fks, read as catalogs list
// them: one row per column pair, a constraint's rows together and in key order. A row of
// a constraint other than the last one starts a new key.
func AppendForeignKeyColumn(fks []ForeignKey, constraint string, references TableName, column, refColumn string) []ForeignKey {
	if n := len(fks); n == 0 || fks[n-1].Name != constraint {
		fks = append(fks, ForeignKey{Name: constraint, References: references})
	}
	fk := &fks[len(fks)-1]
	fk.Columns = append(fk.Columns, column)
	fk.RefColumns = append(fk.RefColumns, refColumn)
	return fks
}

// TableName is a schema-qualified name of a table or view.
type TableName struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
}

// Column is a column of a table.
type Column struct {
	Name     string
	Position int    // 1-based
	DataType string // as the source names it
	// Class is numeric, temporal, text, boolean or other.
	Class string
	// What the source declares about the column.
	Nullable, PrimaryKey, Partition, Clustering bool
	// Unique is true when the column alone is the key of a unique constraint or unique
	// index (not partial, not on an expression): the database itself refuses a repeat.
	Unique bool `json:",omitempty"`
	// Collation is the column's collation where the source reports one per column
	// (MySQL/MariaDB); distinct counts follow its equality.
	Collation string `json:",omitempty"`
	// Indexed is true when the column leads an index of the table (the primary key's and
	// unique ones included): a lookup by it does not scan the table.
	Indexed bool `json:",omitempty"`
}

// ProfileRequest says how to profile a table.
type ProfileRequest struct {
	Depth      string // basic | standard (default) | deep
	Country    string // effective data country, ISO alpha-2 (PT default), for semantic types
	SampleSize int    // bounded sample for masks and semantic types (default 10000)
	// DistinctSampleSize is the row-level random sample the distinct estimates read
	// (default one row in DistinctSampleShare, at least SampleSize and at most
	// DistinctSampleFactor × SampleSize and MaxSampleSize, and fewer on very
	// wide tables so that one profile holds at most MaxDistinctValues sampled hashes).
	DistinctSampleSize int
	Operation          string // recorded in the query log: "scan" (default), "discover" or "test"
}

// TableProfile is the profile of one table.
type TableProfile struct {
	// RowCount is count(*); at depth basic it counts only the rows read (at most
	// BasicRows) and Truncated says whether the table has more.
	RowCount  int64
	Truncated bool
	Columns   []ColumnProfile
	// SampleSize is the number of rows the masks and semantic types were computed on.
	SampleSize int
	// SampleMethod says how that sample was drawn (one of the Sample constants).
	SampleMethod string
	Depth        string
	// LatestTimestamp is max() of the table's most recent-looking temporal column, for
	// freshness; nil if none.
	LatestTimestamp *time.Time
	FreshnessColumn string
	// DistinctSampleSize and DistinctSampleMethod are the same for the row-level random
	// sample the distinct estimates come from (0 and SampleNone when no column needed
	// one: depth basic, or deep with every column counted exactly). It may be the same
	// read as the masks sample, of which the masks then take a random subset.
	DistinctSampleSize   int
	DistinctSampleMethod string
}

// ColumnProfile is the profile of one column.
type ColumnProfile struct {
	Name      string
	Class     string
	NullCount int64
	// Min and Max are set for numeric columns only, exactly as the source printed them
	// (bigint, numeric and unsigned 64-bit values keep every digit).
	Min, Max *vigia.Decimal
	// MinTime and MaxTime are set for temporal columns only.
	MinTime, MaxTime *time.Time
	// Lengths of text columns (never min/max values of text).
	MinLength, MaxLength *int
	AvgLength            *float64
	// Distinct is nil at depth basic and for columns that are not sampled.
	Distinct *Estimate
	// Masks are the most frequent masks on the sample (digit→9, letter→A), at most 10.
	Masks []MaskCount
	// Semantic is nil when no type reaches the threshold.
	Semantic *Semantic
	// Quantiles are the equi-depth quantiles of a numeric column's values, or of a
	// temporal column's as Unix seconds, on the masks sample: QuantileCuts cut points
	// (probabilities 0, 1/(QuantileCuts-1), …, 1, interpolated as percentile_cont does).
	// nil for other classes, when no sampled value could be read as a number or time, and
	// when the sample is the first rows (depth basic), which need not follow the distribution.
	Quantiles []float64
}

// QuantileCuts is the number of cut points of a profile's quantiles: every 5 %.
const QuantileCuts = 21

// Estimate is a count computed on a sample, or exactly.
type Estimate struct {
	Value      float64
	Estimated  bool
	SampleSize int // non-null values sampled
	CI95       [2]float64
	// Method is "exact", "chao_lin" or "shlosser" (see package distinct).
	Method string
}

// MaskCount is how many sampled values have one mask.
type MaskCount struct {
	Mask  string
	Count int
}

// Semantic is the semantic type of a column, decided on the sample.
type Semantic struct {
	// Type is email, phone, phone_pt, nif_pt, postal_code_pt, iban, date_as_text or uuid.
	Type string
	// Region is, for type phone, the ISO alpha-2 of the numbering plan (the data
	// country); "" otherwise.
	Region string
	// Estimated is true when the counts come from a sample of the column, or when the
	// validity check ran on a subset of the matching values (Checked < Matches).
	Estimated  bool
	SampleSize int // non-null values sampled
	Matches    int // sampled non-null values that are of the type
	Valid      int // of those, how many are valid (check digit, mod-97, real date...)
	// Checked is how many of the matches the validity check ran on: all of them, except
	// for phone types, whose costly numbering-plan check runs on a random subset (see
	// semantic.PhoneChecks) and Valid (for type phone, Matches too) is scaled from it.
	Checked int
}

// Recorder receives every statement sent to a source. Record is called synchronously
// once the statement has finished (its Duration includes reading the rows); it should not
// block.
type Recorder interface {
	Record(ctx context.Context, q QueryRecord)
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(ctx context.Context, q QueryRecord)

// Record calls f.
func (f RecorderFunc) Record(ctx context.Context, q QueryRecord) { f(ctx, q) }

// QueryRecord is one statement sent to a source, for the query log.
type QueryRecord struct {
	Statement string // normalized: literals replaced by ?, whitespace folded; no values ever
	Operation string
	Duration  time.Duration
	Rows      int64
	Endpoint  string // "primary"
	Err       bool
	// Code is the error's stable code when Err (SQLSTATE, MySQL error number...).
	Code string
}

// EndpointPrimary is the only endpoint this package connects to.
const EndpointPrimary = "primary"

type opKey struct{}

// WithOperation returns a context whose statements are recorded under op ("scan",
// "discover", "test") by Ping and Discover, which otherwise record "test" and "discover".
func WithOperation(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, opKey{}, op)
}

// OperationFrom returns the operation WithOperation put in ctx, or def.
func OperationFrom(ctx context.Context, def string) string {
	if op, ok := ctx.Value(opKey{}).(string); ok && op != "" {
		return op
	}
	return def
}
