package connect

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/vigia-data/vigia/source"
)

// mysqlDialect serves MySQL and MariaDB; the flavor, read from VERSION() when the source is
// opened, decides how the statement timeout is written.
type mysqlDialect struct {
	timeout time.Duration
	mariadb bool // SET STATEMENT max_statement_time=N FOR ...
	hint    bool // MySQL ≥ 5.7.8: SELECT /*+ MAX_EXECUTION_TIME(ms) */ ...
}

func (*mysqlDialect) kind() source.Kind    { return source.MySQL }
func (*mysqlDialect) grace() time.Duration { return 2 * time.Second }

func (*mysqlDialect) quote(ident string) string {
	return "`" + strings.ReplaceAll(ident, "`", "``") + "`"
}

// wrap puts the statement timeout on the statement and the connection's label in a
// leading comment, where the process list shows it (MySQL and MariaDB have no session
// name a client sets for every server version). KILL is sent as it is.
func (d *mysqlDialect) wrap(stmt, label string) string {
	if strings.HasPrefix(stmt, "KILL ") {
		return stmt
	}
	switch {
	case d.mariadb:
		stmt = "SET STATEMENT max_statement_time=" + fmtFloat(d.timeout.Seconds()) + " FOR " + stmt
	case d.hint && strings.HasPrefix(stmt, "SELECT "):
		stmt = "SELECT /*+ MAX_EXECUTION_TIME(" + strconv.FormatInt(d.timeout.Milliseconds(), 10) + ") */ " + stmt[len("SELECT "):]
	}
	return mysqlLabelComment(label) + stmt
}

// mysqlLabelComment is the comment leading every statement of a connection labelled
// label (labels hold no "*/": see labelOf).
func mysqlLabelComment(label string) string { return "/* " + label + " */ " }

// cancelLabelled kills the running statements of other connections whose leading comment
// carries a label starting with prefix (KILL QUERY: the connection stays, the statement
// ends). The process list shows a user's own connections, or all with PROCESS.
func (d *mysqlDialect) cancelLabelled(ctx context.Context, c *conn, prefix string) (int, error) {
	op := source.OperationFrom(ctx, source.OpScan)
	const stmt = `SELECT ID, INFO FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND = 'Query' AND INFO IS NOT NULL`
	var ids []int64
	want, own := mysqlLabelComment(prefix), mysqlLabelComment(c.label)
	_, err := c.query(ctx, op, "cancel", stmt, nil, func(rows *sql.Rows) error {
		var id int64
		var info sql.RawBytes
		if err := rows.Scan(&id, &info); err != nil {
			return c.resultError("cancel")
		}
		// The statement text is compared here and dropped: it may hold values.
		if bytes.HasPrefix(info, []byte(want[:len(want)-len(" */ ")])) && !bytes.HasPrefix(info, []byte(own)) {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if _, err := c.query(ctx, op, "cancel", "KILL QUERY "+strconv.FormatInt(id, 10), nil, nil); err != nil {
			if source.IsReason(err, source.ReasonNotFound) || source.IsReason(err, source.ReasonPermission) {
				continue // ended meanwhile, or not ours to stop
			}
			return n, err
		}
		n++
	}
	return n, nil
}

// mysqlParse reads a DSN in either form users paste: the URL form
// mysql://user:password@host:port/database?params (or mariadb://) and the driver's own
// user:password@tcp(host:port)/database?params. Its error never holds the DSN.
func mysqlParse(dsn string) (*mysql.Config, error) {
	invalid := newError(source.MySQL, "validate", source.ReasonInvalidDSN, "")
	if scheme, _, ok := strings.Cut(dsn, "://"); ok && (strings.EqualFold(scheme, "mysql") || strings.EqualFold(scheme, "mariadb")) {
		cfg, err := mysqlURL(dsn)
		if err != nil {
			return nil, invalid
		}
		return cfg, nil
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, invalid
	}
	return cfg, nil
}

// mysqlURL reads mysql://user:password@host[:port]/database?params: user and password
// are percent-decoded, the port defaults to 3306, the query holds the driver's params
// (tls, charset, timeout...). A URL without a host is refused (sockets take the driver
// form).
func mysqlURL(dsn string) (*mysql.Config, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" || u.Opaque != "" || u.Fragment != "" {
		return nil, errors.New("not a mysql URL")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return nil, errors.New("no host")
	}
	if port == "" {
		port = "3306"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, errors.New("bad port")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if strings.Contains(db, "/") {
		return nil, errors.New("bad database")
	}
	// The driver's own parser reads the params (and refuses unknown values); address and
	// database go in escaped so that nothing in them is read as DSN syntax.
	cfg, err := mysql.ParseDSN("tcp(" + net.JoinHostPort(host, port) + ")/" + url.PathEscape(db) + mysqlQuery(u.RawQuery))
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	return cfg, nil
}

func mysqlQuery(raw string) string {
	if raw == "" {
		return ""
	}
	return "?" + raw
}

func openMySQL(ctx context.Context, dsn string, opts source.Options) (source.Source, error) {
	cfg, err := mysqlParse(dsn)
	if err != nil {
		return nil, err
	}
	// A server may ask the client for any local file (LOAD DATA LOCAL): never allow it.
	cfg.AllowAllFiles = false
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.Logger = &mysql.NopLogger{} // the default logger writes driver messages to stderr
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'" // TIMESTAMP values arrive in UTC, as Loc says
	if opts.Dial != nil {
		cfg.DialFunc = guardDial(opts.Dial)
	}
	timeout := statementTimeout(opts)
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, newError(source.MySQL, "open", source.ReasonInvalidDSN, "")
	}
	d := &mysqlDialect{timeout: timeout}
	c := newConn(d, sql.OpenDB(connector), opts)
	var version string
	_, err = c.query(ctx, source.OperationFrom(ctx, source.OpTest), "open", "SELECT VERSION()", nil, func(rows *sql.Rows) error {
		if err := rows.Scan(&version); err != nil {
			return c.resultError("open")
		}
		return nil
	})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	d.mariadb = strings.Contains(strings.ToLower(version), "mariadb")
	d.hint = !d.mariadb && mysqlAtLeast(version, 5, 7, 8)
	return c, nil
}

// mysqlAtLeast compares a VERSION() string such as "8.0.36-log" with major.minor.patch.
func mysqlAtLeast(version string, want ...int) bool {
	fields := strings.FieldsFunc(version, func(r rune) bool { return r == '.' || r == '-' })
	for i, w := range want {
		if i >= len(fields) {
			return false
		}
		v, err := strconv.Atoi(fields[i])
		if err != nil {
			return false
		}
		if v != w {
			return v > w
		}
	}
	return true
}

func (*mysqlDialect) classify(err error) (reason, code string) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		code = strconv.Itoa(int(me.Number))
		switch me.Number {
		case 1045:
			return source.ReasonAuth, code
		case 1044, 1142, 1143, 1227, 1130:
			return source.ReasonPermission, code
		case 1049, 1146, 1051:
			return source.ReasonNotFound, code
		case 1969, 3024, 1317:
			return source.ReasonTimeout, code
		case 1040, 1129, 1053:
			return source.ReasonUnreachable, code
		}
		return source.ReasonQuery, code
	}
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) {
		return source.ReasonUnreachable, ""
	}
	return "", ""
}

// mysqlFilter limits discovery to the DSN's database, or to every non-system database
// when the DSN names none.
func mysqlFilter(alias string) string {
	col := alias + ".TABLE_SCHEMA"
	return "(" + col + " = DATABASE() OR (DATABASE() IS NULL AND " + col +
		" NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')))"
}

var (
	mysqlDiscoverColumns = `SELECT t.TABLE_SCHEMA, t.TABLE_NAME, t.TABLE_TYPE, COALESCE(t.ENGINE, ''),
 c.COLUMN_NAME, c.ORDINAL_POSITION, c.COLUMN_TYPE, c.IS_NULLABLE, s.COLUMN_NAME IS NOT NULL, COALESCE(c.COLLATION_NAME, ''),
 EXISTS (SELECT 1 FROM information_schema.STATISTICS u WHERE u.TABLE_SCHEMA = c.TABLE_SCHEMA AND u.TABLE_NAME = c.TABLE_NAME
   AND u.COLUMN_NAME = c.COLUMN_NAME AND u.NON_UNIQUE = 0 AND u.SEQ_IN_INDEX = 1
   AND NOT EXISTS (SELECT 1 FROM information_schema.STATISTICS u2 WHERE u2.TABLE_SCHEMA = u.TABLE_SCHEMA
     AND u2.TABLE_NAME = u.TABLE_NAME AND u2.INDEX_NAME = u.INDEX_NAME AND u2.SEQ_IN_INDEX = 2))
FROM information_schema.TABLES t
JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME
LEFT JOIN information_schema.STATISTICS s ON s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME
 AND s.COLUMN_NAME = c.COLUMN_NAME AND s.INDEX_NAME = 'PRIMARY'
WHERE ` + mysqlFilter("t") + ` AND t.TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')
ORDER BY t.TABLE_SCHEMA, t.TABLE_NAME, c.ORDINAL_POSITION`

	mysqlDiscoverViews = `SELECT v.TABLE_SCHEMA, v.TABLE_NAME, v.VIEW_DEFINITION FROM information_schema.VIEWS v WHERE ` + mysqlFilter("v")

	mysqlHasViewTableUsage = `SELECT COUNT(*) FROM information_schema.TABLES
WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'VIEW_TABLE_USAGE'`

	mysqlDiscoverDependencies = `SELECT u.VIEW_SCHEMA, u.VIEW_NAME, u.TABLE_SCHEMA, u.TABLE_NAME
FROM information_schema.VIEW_TABLE_USAGE u WHERE ` + strings.ReplaceAll(mysqlFilter("u"), "u.TABLE_SCHEMA", "u.VIEW_SCHEMA")

	mysqlDiscoverForeignKeys = `SELECT k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME,
 k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME
FROM information_schema.KEY_COLUMN_USAGE k WHERE k.REFERENCED_TABLE_NAME IS NOT NULL AND ` + mysqlFilter("k") + `
ORDER BY k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`

	mysqlDiscoverIndexed = `SELECT DISTINCT s.TABLE_SCHEMA, s.TABLE_NAME, s.COLUMN_NAME FROM information_schema.STATISTICS s
WHERE s.SEQ_IN_INDEX = 1 AND s.COLUMN_NAME IS NOT NULL AND ` + mysqlFilter("s")

	mysqlDiscoverPartitions = `SELECT DISTINCT p.TABLE_SCHEMA, p.TABLE_NAME, COALESCE(p.PARTITION_EXPRESSION, ''),
 COALESCE(p.SUBPARTITION_EXPRESSION, '')
FROM information_schema.PARTITIONS p WHERE p.PARTITION_NAME IS NOT NULL AND ` + mysqlFilter("p")
)

func (d *mysqlDialect) discover(ctx context.Context, c *conn, op string) ([]source.Table, error) {
	var tables []source.Table
	index := map[[2]string]int{}
	_, err := c.query(ctx, op, "discover", mysqlDiscoverColumns, nil, func(rows *sql.Rows) error {
		var schema, name, typ, engine, col, colType, nullable, collation string
		var pos int
		var pk, unique bool
		if err := rows.Scan(&schema, &name, &typ, &engine, &col, &pos, &colType, &nullable, &pk, &collation, &unique); err != nil {
			return c.resultError("discover")
		}
		key := [2]string{schema, name}
		i, ok := index[key]
		if !ok {
			i = len(tables)
			index[key] = i
			tables = append(tables, source.Table{Schema: schema, Name: name, Kind: mysqlTableKind(typ, engine)})
		}
		tables[i].Columns = append(tables[i].Columns, source.Column{
			Name: col, Position: pos, DataType: colType, Class: d.classOf(colType),
			Nullable: strings.EqualFold(nullable, "YES"), PrimaryKey: pk, Collation: collation, Unique: unique,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := c.readViewDefinitions(ctx, c.db, op, mysqlDiscoverViews, index, tables); err != nil {
		return nil, err
	}
	// MySQL 8.0.13 and later record what each view reads; MariaDB does not (through
	// 11.x), and then lineage reads the view's SQL with the view's database as default.
	var hasUsage int64
	_, err = c.query(ctx, op, "discover", mysqlHasViewTableUsage, nil, func(rows *sql.Rows) error {
		return rows.Scan(&hasUsage)
	})
	if err != nil {
		return nil, err
	}
	if hasUsage > 0 {
		if err := c.readDependencies(ctx, op, mysqlDiscoverDependencies, index, tables); err != nil {
			return nil, err
		}
	}
	byName := func(schema, name string) (int, bool) { i, ok := index[[2]string{schema, name}]; return i, ok }
	if err := c.readForeignKeys(ctx, op, mysqlDiscoverForeignKeys, byName, tables); err != nil {
		return nil, err
	}
	if err := c.readIndexed(ctx, op, mysqlDiscoverIndexed, byName, tables); err != nil {
		return nil, err
	}
	_, err = c.query(ctx, op, "discover", mysqlDiscoverPartitions, nil, func(rows *sql.Rows) error {
		var schema, name, expr, subExpr string
		if err := rows.Scan(&schema, &name, &expr, &subExpr); err != nil {
			return c.resultError("discover")
		}
		i, ok := index[[2]string{schema, name}]
		if !ok {
			return nil
		}
		names := partitionIdentifiers(expr + "," + subExpr)
		for j := range tables[i].Columns {
			if _, hit := names[strings.ToLower(tables[i].Columns[j].Name)]; hit {
				tables[i].Columns[j].Partition = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tables, nil
}

// partitionIdentifiers returns the identifiers (lower-cased) named in a partitioning
// expression such as "year(`created_at`)" or "`region`,`id`"; function names come along
// too, and are harmless since only column names are looked up.
func partitionIdentifiers(expr string) map[string]struct{} {
	out := map[string]struct{}{}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '`':
			j := skipQuoted(expr, i, '`', false)
			name := strings.ReplaceAll(expr[i+1:max(j-1, i+1)], "``", "`")
			out[strings.ToLower(name)] = struct{}{}
			i = j
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdentChar(expr[j]) {
				j++
			}
			out[strings.ToLower(expr[i:j])] = struct{}{}
			i = j
		default:
			i++
		}
	}
	return out
}

func mysqlTableKind(typ, engine string) string {
	switch strings.ToUpper(typ) {
	case "VIEW":
		return source.TableKindView
	case "BASE TABLE", "SYSTEM VERSIONED":
		switch strings.ToUpper(engine) {
		case "FEDERATED", "CONNECT", "SPIDER":
			return source.TableKindExternal
		}
		return source.TableKindTable
	}
	return source.TableKindUnknown
}

// mysqlBaseType is the type name of a COLUMN_TYPE: "int(10) unsigned" → "int".
func mysqlBaseType(columnType string) string {
	t := strings.ToLower(strings.TrimSpace(columnType))
	if i := strings.IndexAny(t, "( "); i >= 0 {
		t = t[:i]
	}
	return t
}

// classOf classifies a COLUMN_TYPE; tinyint(1) is how MySQL declares BOOLEAN.
func (*mysqlDialect) classOf(columnType string) string {
	if strings.HasPrefix(strings.ToLower(columnType), "tinyint(1)") {
		return source.ClassBoolean
	}
	switch mysqlBaseType(columnType) {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric", "dec",
		"fixed", "float", "double", "real", "year":
		return source.ClassNumeric
	case "date", "datetime", "timestamp":
		return source.ClassTemporal
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return source.ClassText
	case "bool", "boolean":
		return source.ClassBoolean
	}
	return source.ClassOther
}

func (d *mysqlDialect) table(t source.Table) string {
	if t.Schema == "" {
		return d.quote(t.Name)
	}
	return d.quote(t.Schema) + "." + d.quote(t.Name)
}

// numMin and numMax answer the extremes as the server prints them (the driver would read
// a FLOAT as float32 and widen it, printing digits the server never held).
func (*mysqlDialect) numMin(q string) string      { return "CAST(MIN(" + q + ") AS CHAR)" }
func (*mysqlDialect) numMax(q string) string      { return "CAST(MAX(" + q + ") AS CHAR)" }
func (*mysqlDialect) timeMin(q string) string     { return "MIN(" + q + ")" }
func (*mysqlDialect) timeMax(q string) string     { return "MAX(" + q + ")" }
func (*mysqlDialect) finiteTimeMin(string) string { return "" }
func (*mysqlDialect) finiteTimeMax(string) string { return "" }
func (*mysqlDialect) length(q string) string      { return "CHAR_LENGTH(" + q + ")" }
func (*mysqlDialect) avgLength(q string) string   { return "AVG(CHAR_LENGTH(" + q + "))" }
func (*mysqlDialect) sampleValue(q string) string {
	return "LEFT(CAST(" + q + " AS CHAR), " + strconv.Itoa(sampleValueMax) + ")"
}

// random draws with RAND(seed): a table's seed gives the same rows while the table and
// the order MariaDB reads it in stay the same.
func (*mysqlDialect) random(t source.Table, p float64) string {
	return "RAND(" + sampleSeed31(t) + ") < " + fmtFloat(p)
}

// hashValue is 64 bits of two CRC32s computed by the server (MySQL and MariaDB have no
// 64-bit hash function): the value's, and that of the value behind a prefix. Character
// columns are hashed on their collation's sort key (WEIGHT_STRING), so values the
// collation calls equal (case or accents under a _ci or _ai collation) hash equal, as
// COUNT(DISTINCT) counts them; under a PAD SPACE collation (all but the NO PAD ones)
// trailing spaces do not count either, and WEIGHT_STRING keeps them, so they go first.
func (d *mysqlDialect) hashValue(q string, c source.Column) string {
	v := q
	switch mysqlBaseType(c.DataType) {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext":
		if mysqlPadSpace(c.Collation) {
			v = "WEIGHT_STRING(TRIM(TRAILING ' ' FROM " + q + "))"
		} else {
			v = "WEIGHT_STRING(" + q + ")"
		}
	}
	return "(CRC32(" + v + ") << 32 | CRC32(CONCAT('#', " + v + ")))"
}

// mysqlPadSpace reports whether a collation compares with PAD SPACE: every collation but
// MariaDB's _nopad_ ones and MySQL 8's UCA 9.0.0 (_0900_) ones, and binary.
func mysqlPadSpace(collation string) bool {
	c := strings.ToLower(collation)
	return !(strings.Contains(c, "nopad") || strings.Contains(c, "_0900_") || c == "binary")
}
func (*mysqlDialect) tableSample(source.Table, float64) string { return "" }
func (*mysqlDialect) rowSample(source.Table, float64) string   { return "" }

func (d *mysqlDialect) keyColumn(t source.Table) int {
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
	switch mysqlBaseType(t.Columns[key].DataType) {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		if d.classOf(t.Columns[key].DataType) == source.ClassNumeric {
			return key
		}
	}
	return -1
}

func (*mysqlDialect) sampleable(c source.Column) bool {
	switch mysqlBaseType(c.DataType) {
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bit", "geometry", "point",
		"linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection", "vector":
		return false
	}
	return true
}

func (*mysqlDialect) distinctable(c source.Column) bool { return c.Class != source.ClassOther }
