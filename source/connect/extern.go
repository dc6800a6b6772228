package connect

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/vigia-data/vigia/source"
)

// Dialect is a connector kept in a package of its own because its driver is linked only on
// demand (source/connect/duckdb, built with the duckdb build tag: cgo and a large engine).
// It is this package's dialect with exported methods; NewSource runs it through the same
// connection, exec path (timeouts, query log, error reduction) and profile (single
// aggregate, bounded samples, distinct estimator) as the built-in connectors.
type Dialect interface {
	Kind() source.Kind
	Quote(ident string) string
	// Classify reduces a driver error to a reason and a safe code (never its message).
	Classify(err error) (reason, code string)
	// Discover lists the tables through q, which records every statement.
	Discover(ctx context.Context, q Querier, op string) ([]source.Table, error)
	// Table is the quoted relation a profile reads for t.
	Table(t source.Table) string
	NumMin(q string) string
	NumMax(q string) string
	TimeMin(q string) string
	TimeMax(q string) string
	Length(q string) string
	AvgLength(q string) string
	// SampleValue renders a value as text of at most SampleValueMax characters.
	SampleValue(q string) string
	HashValue(q string, c source.Column) string
	Random(t source.Table, p float64) string
	RowSample(t source.Table, pct float64) string
	Sampleable(c source.Column) bool
	Distinctable(c source.Column) bool
	ClassOf(dataType string) string
}

// SampleValueMax is how many characters of a value the samples read (see sampleValueMax).
const SampleValueMax = sampleValueMax

// Querier runs one statement through a Source's exec path: statement timeout (a context
// deadline; the driver interrupts the statement when it expires), query log, errors reduced
// to *source.Error. each is called for every row.
type Querier interface {
	Query(ctx context.Context, op, phase, stmt string, each func(*sql.Rows) error) (int64, error)
}

// NewSource returns the Source of an external dialect over db (which it closes). The
// database is expected to be read-only by itself (opened read-only, or confined by the
// engine's settings): statements run without a READ ONLY transaction, which not every
// driver offers.
func NewSource(d Dialect, db *sql.DB, opts source.Options) source.Source {
	return newConn(extDialect{d}, db, opts)
}

// Driver is what an external connector registers: how to open, validate and name its sources.
type Driver struct {
	Open           func(ctx context.Context, dsn string, opts source.Options) (source.Source, error)
	ValidateDSN    func(dsn string) error
	ServerIdentity func(dsn string) (namespace, database string, ok bool)
	// Version names the driver and the engine, for /connections/types.
	Version string
}

var (
	driversMu sync.RWMutex
	drivers   = map[source.Kind]Driver{}
)

// Register makes Open, ValidateDSN and ServerIdentity answer for kind through d; the
// external connector's package calls it from init, so a binary has the kind exactly when it
// links the package.
func Register(kind source.Kind, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers[kind] = d
}

func registered(kind source.Kind) (Driver, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[kind]
	return d, ok
}

// Registered lists the kinds of the external connectors linked into this binary, with
// their driver versions.
func Registered() map[source.Kind]string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	out := make(map[source.Kind]string, len(drivers))
	for k, d := range drivers {
		out[k] = d.Version
	}
	return out
}

// extDialect adapts a Dialect to the package's dialect: no server-side timeout (the
// context deadline interrupts), no wrapping, no other sessions, no infinite dates, no
// block sampling, no key sampling.
type extDialect struct{ Dialect }

func (e extDialect) kind() source.Kind                                        { return e.Kind() }
func (e extDialect) quote(ident string) string                                { return e.Quote(ident) }
func (extDialect) wrap(stmt, _ string) string                                 { return stmt }
func (extDialect) cancelLabelled(context.Context, *conn, string) (int, error) { return 0, nil }
func (extDialect) grace() time.Duration                                       { return 0 }
func (e extDialect) classify(err error) (string, string)                      { return e.Classify(err) }
func (e extDialect) discover(ctx context.Context, c *conn, op string) ([]source.Table, error) {
	return e.Discover(ctx, querier{c}, op)
}
func (e extDialect) table(t source.Table) string                  { return e.Table(t) }
func (e extDialect) numMin(q string) string                       { return e.NumMin(q) }
func (e extDialect) numMax(q string) string                       { return e.NumMax(q) }
func (e extDialect) timeMin(q string) string                      { return e.TimeMin(q) }
func (e extDialect) timeMax(q string) string                      { return e.TimeMax(q) }
func (extDialect) finiteTimeMin(string) string                    { return "" }
func (extDialect) finiteTimeMax(string) string                    { return "" }
func (e extDialect) length(q string) string                       { return e.Length(q) }
func (e extDialect) avgLength(q string) string                    { return e.AvgLength(q) }
func (e extDialect) sampleValue(q string) string                  { return e.SampleValue(q) }
func (e extDialect) hashValue(q string, c source.Column) string   { return e.HashValue(q, c) }
func (e extDialect) random(t source.Table, p float64) string      { return e.Random(t, p) }
func (extDialect) tableSample(source.Table, float64) string       { return "" }
func (e extDialect) rowSample(t source.Table, pct float64) string { return e.RowSample(t, pct) }
func (extDialect) keyColumn(source.Table) int                     { return -1 }
func (e extDialect) sampleable(c source.Column) bool              { return e.Sampleable(c) }
func (e extDialect) distinctable(c source.Column) bool            { return e.Distinctable(c) }
func (e extDialect) classOf(dataType string) string               { return e.ClassOf(dataType) }

type querier struct{ c *conn }

func (q querier) Query(ctx context.Context, op, phase, stmt string, each func(*sql.Rows) error) (int64, error) {
	return q.c.query(ctx, op, phase, stmt, nil, each)
}
