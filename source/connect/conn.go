package connect

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigia-data/vigia/source"
)

// dialect is what differs between the connectors: quoting, how the statement timeout is
// applied, how errors read, how catalogs are discovered and the SQL fragments of a profile.
type dialect interface {
	kind() source.Kind
	// quote quotes an identifier for the dialect.
	quote(ident string) string
	// wrap applies the statement timeout to a statement where the source takes it per
	// statement (MariaDB SET STATEMENT, MySQL optimizer hint) and the connection's label
	// where the source has no session name for it (a leading comment on MySQL); others
	// return stmt.
	wrap(stmt, label string) string
	// cancelLabelled cancels other sessions' statements labelled with prefix (see
	// source.Source.CancelLabelled).
	cancelLabelled(ctx context.Context, c *conn, prefix string) (int, error)
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
	// finiteTimeMin and finiteTimeMax are the extremes among finite values, for a source
	// whose dates can be infinite and whose timeMin/timeMax returned an infinity; "" when
	// the dialect has no infinite dates.
	finiteTimeMin(q string) string
	finiteTimeMax(q string) string
	// length is the length in characters of a text value.
	length(q string) string
	// avgLength is the average length as a floating-point number.
	avgLength(q string) string
	// sampleValue renders a value as text of at most sampleValueMax characters.
	sampleValue(q string) string
	// hashValue identifies the whole value of column c for the distinct sample: a 64-bit
	// hash computed by the source where it has one, so that the sample reads hashes rather
	// than values, else the value itself as text, hashed as it is read. Equal values give
	// equal results, and distinct values distinct ones but for hash collisions.
	hashValue(q string, c source.Column) string
	// random is a condition true for each row with probability p.
	random(t source.Table, p float64) string
	// tableSample is the block-sampling clause for t at pct percent, "" when the dialect
	// or the object cannot sample blocks. Blocks are cheap to read and fine for masks and
	// semantic types (shares), not for distinct estimates.
	tableSample(t source.Table, pct float64) string
	// rowSample is a clause keeping each row of t with probability pct/100 while the
	// scan reads it, "" when the dialect or the object has none (a WHERE random() filter
	// does the same, at the cost of evaluating it).
	rowSample(t source.Table, pct float64) string
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
	label   string
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
	return &conn{d: d, db: db, rec: opts.Recorder, timeout: statementTimeout(opts), label: labelOf(opts)}
}

// DefaultLabel names Vigia's sessions when the caller gives no label.
const DefaultLabel = "vigia"

// labelOf is the connection's label: Options.Label when it is safe to put in a session
// name and a comment (at most 63 bytes of letters, digits, space and _ . / : -), else
// DefaultLabel.
func labelOf(opts source.Options) string {
	l := opts.Label
	if l == "" || len(l) > 63 {
		return DefaultLabel
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" _./:-", c) >= 0
		if !ok {
			return DefaultLabel
		}
	}
	return l
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

// CancelLabelled cancels other sessions' running statements labelled with prefix; see
// source.Source.
func (c *conn) CancelLabelled(ctx context.Context, prefix string) (int, error) {
	if c.closed.Load() {
		return 0, newError(c.d.kind(), "cancel", source.ReasonClosed, "")
	}
	if prefix == "" {
		return 0, nil
	}
	return c.d.cancelLabelled(ctx, c, prefix)
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

// QueryInt runs one read-only statement answering one integer; see source.Source.
func (c *conn) QueryInt(ctx context.Context, stmt string) (int64, bool, error) {
	const phase = "query"
	if c.closed.Load() {
		return 0, false, newError(c.d.kind(), phase, source.ReasonClosed, "")
	}
	// The transaction lives inside the statement's own deadline: a source that hangs on
	// BEGIN is cut off like one that hangs on the statement.
	tctx, cancel := context.WithTimeout(ctx, c.timeout+c.d.grace())
	defer cancel()
	tx, err := c.db.BeginTx(tctx, txOptions(c.d))
	if err != nil {
		return 0, false, translate(tctx, c.d.kind(), phase, err, c.d.classify)
	}
	defer func() { _ = tx.Rollback() }()
	var v any
	n, err := c.run(tctx, tx, source.OperationFrom(ctx, source.OpScan), phase, stmt, nil, func(rows *sql.Rows) error {
		cols, err := rows.Columns()
		if err != nil || len(cols) != 1 {
			return c.resultError(phase)
		}
		if err := rows.Scan(&v); err != nil {
			return c.resultError(phase)
		}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	if n != 1 {
		return 0, false, c.resultError(phase)
	}
	val, ok, good := intValue(v)
	if !good {
		return 0, false, c.resultError(phase)
	}
	return val, ok, nil
}

// intValue reads an integer as drivers hand it over: int64, an integral float, or the
// text of an integer (MySQL DECIMAL, SQLite text); ok is false for NULL, good is false
// for anything else.
func intValue(v any) (val int64, ok, good bool) {
	switch x := v.(type) {
	case nil:
		return 0, false, true
	case int64:
		return x, true, true
	case int32:
		return int64(x), true, true
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<62 {
			return 0, false, false
		}
		return int64(x), true, true
	case []byte:
		return intText(string(x))
	case string:
		return intText(x)
	}
	return 0, false, false
}

func intText(s string) (int64, bool, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true, true
	}
	// A DECIMAL with a zero fraction, as MySQL prints FLOOR() of a decimal.
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<62 {
		return int64(f), true, true
	}
	return 0, false, false
}

// queryer is what runs a statement: the pool, or a transaction of QueryInt.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// query is the one exec path: every statement sent to a source goes through it (run, on
// the pool or a transaction). It applies the statement timeout (the dialect's wrapper plus
// a context deadline), calls each for every row, records the normalized statement, and
// reduces any error to an *Error (phase names the operation in it). op is the query-log
// operation.
func (c *conn) query(ctx context.Context, op, phase, stmt string, args []any, each func(*sql.Rows) error) (int64, error) {
	return c.run(ctx, c.db, op, phase, stmt, args, each)
}

func (c *conn) run(ctx context.Context, db queryer, op, phase, stmt string, args []any, each func(*sql.Rows) error) (int64, error) {
	if c.closed.Load() {
		return 0, newError(c.d.kind(), phase, source.ReasonClosed, "")
	}
	sent := c.d.wrap(stmt, c.label)
	qctx, cancel := context.WithTimeout(ctx, c.timeout+c.d.grace())
	defer cancel()
	start := time.Now()
	var n int64
	rows, err := db.QueryContext(qctx, sent, args...)
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

// readViewDefinitions runs a discovery statement answering (schema, name, definition) and
// keeps each view's definition, trimmed, on its table (index: schema and name → position
// in tables). db is the pool or a transaction that set up the session first.
func (c *conn) readViewDefinitions(ctx context.Context, db queryer, op, stmt string, index map[[2]string]int, tables []source.Table) error {
	_, err := c.run(ctx, db, op, "discover", stmt, nil, func(rows *sql.Rows) error {
		var schema, name string
		var def sql.NullString
		if err := rows.Scan(&schema, &name, &def); err != nil {
			return c.resultError("discover")
		}
		if i, ok := index[[2]string{schema, name}]; ok {
			tables[i].ViewDefinition = strings.TrimSpace(def.String)
		}
		return nil
	})
	return err
}

// readDependencies runs a discovery statement answering (view schema, view name, schema,
// name) of what each view reads, as the source's dependency catalog records it, and
// keeps the list on each view (every view then has DependsOnKnown set).
func (c *conn) readDependencies(ctx context.Context, op, stmt string, index map[[2]string]int, tables []source.Table) error {
	for i := range tables {
		if tables[i].Kind == source.TableKindView || tables[i].Kind == source.TableKindMaterializedView {
			tables[i].DependsOnKnown = true
		}
	}
	_, err := c.query(ctx, op, "discover", stmt, nil, func(rows *sql.Rows) error {
		var vs, vn, ts, tn string
		if err := rows.Scan(&vs, &vn, &ts, &tn); err != nil {
			return c.resultError("discover")
		}
		if i, ok := index[[2]string{vs, vn}]; ok {
			tables[i].DependsOn = append(tables[i].DependsOn, source.TableName{Schema: ts, Name: tn})
		}
		return nil
	})
	return err
}

// readForeignKeys runs a discovery statement answering (schema, table, constraint,
// column, referenced schema, referenced table, referenced column) one row per column of
// each declared foreign key, in the key's column order, and keeps the keys on their
// tables. A referenced column "" (SQLite's implicit reference to the parent's primary
// key) is the parent's primary-key column at that position.
func (c *conn) readForeignKeys(ctx context.Context, op, stmt string, index func(schema, name string) (int, bool), tables []source.Table) error {
	_, err := c.query(ctx, op, "discover", stmt, nil, func(rows *sql.Rows) error {
		var schema, name, constraint, col, rs, rt, rc string
		if err := rows.Scan(&schema, &name, &constraint, &col, &rs, &rt, &rc); err != nil {
			return c.resultError("discover")
		}
		i, ok := index(schema, name)
		if !ok {
			return nil
		}
		tables[i].ForeignKeys = source.AppendForeignKeyColumn(tables[i].ForeignKeys, constraint,
			source.TableName{Schema: rs, Name: rt}, col, rc)
		return nil
	})
	if err != nil {
		return err
	}
	for i := range tables {
		for j := range tables[i].ForeignKeys {
			fk := &tables[i].ForeignKeys[j]
			for k, rc := range fk.RefColumns {
				if rc != "" {
					continue
				}
				if p, ok := index(fk.References.Schema, fk.References.Name); ok {
					var pk []string
					for _, col := range tables[p].Columns {
						if col.PrimaryKey {
							pk = append(pk, col.Name)
						}
					}
					if k < len(pk) {
						fk.RefColumns[k] = pk[k]
					}
				}
			}
		}
	}
	return nil
}

// readIndexed runs a discovery statement answering (schema, table, column) of the
// columns that lead an index, and marks them Indexed.
func (c *conn) readIndexed(ctx context.Context, op, stmt string, index func(schema, name string) (int, bool), tables []source.Table) error {
	_, err := c.query(ctx, op, "discover", stmt, nil, func(rows *sql.Rows) error {
		var schema, name, col string
		if err := rows.Scan(&schema, &name, &col); err != nil {
			return c.resultError("discover")
		}
		if i, ok := index(schema, name); ok {
			for j := range tables[i].Columns {
				if tables[i].Columns[j].Name == col {
					tables[i].Columns[j].Indexed = true
				}
			}
		}
		return nil
	})
	return err
}

// inReadTx runs fn in a read-only transaction living inside one statement's deadline
// (a source that hangs on BEGIN is cut off like one that hangs on a statement).
func (c *conn) inReadTx(ctx context.Context, phase string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tctx, cancel := context.WithTimeout(ctx, c.timeout+c.d.grace())
	defer cancel()
	tx, err := c.db.BeginTx(tctx, txOptions(c.d))
	if err != nil {
		return translate(tctx, c.d.kind(), phase, err, c.d.classify)
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tctx, tx)
}

// QueryRows runs one read-only statement and answers its rows as text (see source.Source).
func (c *conn) QueryRows(ctx context.Context, stmt string, maxRows int) ([][]*string, error) {
	const phase = "query"
	if c.closed.Load() {
		return nil, newError(c.d.kind(), phase, source.ReasonClosed, "")
	}
	tctx, cancel := context.WithTimeout(ctx, c.timeout+c.d.grace())
	defer cancel()
	tx, err := c.db.BeginTx(tctx, txOptions(c.d))
	if err != nil {
		return nil, translate(tctx, c.d.kind(), phase, err, c.d.classify)
	}
	defer func() { _ = tx.Rollback() }()
	var out [][]*string
	_, err = c.run(tctx, tx, source.OperationFrom(ctx, source.OpScan), phase, stmt, nil, func(rows *sql.Rows) error {
		if len(out) >= maxRows {
			return c.resultError(phase)
		}
		cols, err := rows.Columns()
		if err != nil {
			return c.resultError(phase)
		}
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return c.resultError(phase)
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			if v != nil {
				s := string(v)
				row[i] = &s
			}
		}
		out = append(out, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// txOptions asks for a READ ONLY transaction, except on an external dialect, whose database
// is read-only by itself (see NewSource) and whose driver may refuse the option.
func txOptions(d dialect) *sql.TxOptions {
	if _, ok := d.(extDialect); ok {
		return nil
	}
	return &sql.TxOptions{ReadOnly: true}
}
