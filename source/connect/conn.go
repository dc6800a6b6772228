package connect

import (
	"context"
	"database/sql"
	"github.com/vigia-data/vigia/source"
	"sync/atomic"
	"time"
)

// dialect is what differs between the connectors: quoting, how the statement timeout is
// applied, how errors read, how catalogs are discovered and the SQL fragments of a profile.
type dialect interface {
	kind() source.Kind
	// quote quotes an identifier for the dialect.
	quote(ident string) string
	// wrap applies the statement timeout to a statement where the source takes it per
	// statement (MariaDB SET STATEMENT, MySQL optimizer hint); others return stmt.
	wrap(stmt string) string
	// grace is added to the statement timeout for the context deadline: the server-side
	// timeout fires first where there is one, the deadline catches a hung network.
	grace() time.Duration
	classify(err error) (reason, code string)
	discover(ctx context.Context, c *conn, op string) ([]source.Table, error)
	profileSQL
}

// profileSQL holds the SQL fragments of a profile. q is an already quoted identifier.
type profileSQL interface {
	// table is the quoted, schema-qualified name of t.
	table(t source.Table) string
	numMin(q string) string
	numMax(q string) string
	timeMin(q string) string
	timeMax(q string) string
	// length is the length in characters of a text value.
	length(q string) string
	// avgLength is the average length as a floating-point number.
	avgLength(q string) string
	// sampleValue renders a value as text of at most sampleValueMax characters.
	sampleValue(q string) string
	// random is a condition true for each row with probability p.
	random(p float64) string
	// tableSample is the block-sampling clause for t at pct percent, "" when the dialect
	// or the object cannot sample blocks.
	tableSample(t source.Table, pct float64) string
	// keyColumn is the index in t.Columns of a single-column integer primary key that can
	// fetch random rows by value, -1 when there is none.
	keyColumn(t source.Table) int
	// sampleable reports whether a column's values are read into the sample (binary and
	// spatial columns are not: their masks say nothing and they are large).
	sampleable(c source.Column) bool
	// distinctable reports whether count(DISTINCT c) works on the column.
	distinctable(c source.Column) bool
	// classOf classifies a data type, for tables given to Profile without classes.
	classOf(dataType string) string
}

// conn is the Source of every kind: one *sql.DB and the dialect.
type conn struct {
	d       dialect
	db      *sql.DB
	rec     source.Recorder
	timeout time.Duration
	closed  atomic.Bool
}

func newConn(d dialect, db *sql.DB, opts source.Options) *conn {
	maxConns := opts.MaxConns
	if maxConns <= 0 {
		maxConns = source.DefaultMaxConns
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(time.Minute)
	db.SetConnMaxLifetime(30 * time.Minute)
	return &conn{d: d, db: db, rec: opts.Recorder, timeout: statementTimeout(opts)}
}

func statementTimeout(opts source.Options) time.Duration {
	if opts.StatementTimeout <= 0 {
		return source.DefaultStatementTimeout
	}
	return opts.StatementTimeout
}

// Kind returns the connector's kind.
func (c *conn) Kind() source.Kind { return c.d.kind() }

// Dialect returns the SQL dialect's name.
func (c *conn) Dialect() string { return string(c.d.kind()) }

// Ping runs SELECT 1, recorded under the context's operation (default "test").
func (c *conn) Ping(ctx context.Context) error {
	_, err := c.query(ctx, source.OperationFrom(ctx, source.OpTest), "ping", "SELECT 1", nil, nil)
	return err
}

// Discover lists the readable tables and views, recorded under the context's operation
// (default "discover").
func (c *conn) Discover(ctx context.Context) ([]source.Table, error) {
	if c.closed.Load() {
		return nil, newError(c.d.kind(), "discover", source.ReasonClosed, "")
	}
	return c.d.discover(ctx, c, source.OperationFrom(ctx, source.OpDiscover))
}

// Profile profiles one table; see profile.
func (c *conn) Profile(ctx context.Context, t source.Table, req source.ProfileRequest) (*source.TableProfile, error) {
	if c.closed.Load() {
		return nil, newError(c.d.kind(), "profile", source.ReasonClosed, "")
	}
	return profile(ctx, c, t, req)
}

// Close closes every connection to the source.
func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	if err := c.db.Close(); err != nil {
		return translate(context.Background(), c.d.kind(), "close", err, c.d.classify)
	}
	return nil
}

// query is the one exec path: every statement sent to a source goes through it. It applies
// the statement timeout (the dialect's wrapper plus a context deadline), calls each for
// every row, records the normalized statement, and reduces any error to an *Error
// (phase names the operation in it). op is the query-log operation.
func (c *conn) query(ctx context.Context, op, phase, stmt string, args []any, each func(*sql.Rows) error) (int64, error) {
	if c.closed.Load() {
		return 0, newError(c.d.kind(), phase, source.ReasonClosed, "")
	}
	sent := c.d.wrap(stmt)
	qctx, cancel := context.WithTimeout(ctx, c.timeout+c.d.grace())
	defer cancel()
	start := time.Now()
	var n int64
	rows, err := c.db.QueryContext(qctx, sent, args...)
	if err == nil {
		for rows.Next() {
			n++
			if each != nil {
				if err = each(rows); err != nil {
					break
				}
			}
		}
		if err == nil {
			err = rows.Err()
		}
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}
	var e *source.Error
	if err != nil {
		e = translate(qctx, c.d.kind(), phase, err, c.d.classify)
	}
	if c.rec != nil {
		r := source.QueryRecord{
			Statement: NormalizeStatement(c.d.kind(), sent),
			Operation: op,
			Duration:  time.Since(start),
			Rows:      n,
			Endpoint:  source.EndpointPrimary,
		}
		if e != nil {
			r.Err, r.Code = true, e.Reason
			if e.Code != "" {
				r.Code = e.Code
			}
		}
		c.rec.Record(ctx, r)
	}
	if e != nil {
		return n, e
	}
	return n, nil
}

// resultError is the error of a row this package could not read; the scan error itself
// is dropped because database/sql puts the offending value in its message.
func (c *conn) resultError(phase string) *source.Error {
	return newError(c.d.kind(), phase, source.ReasonResult, "")
}
