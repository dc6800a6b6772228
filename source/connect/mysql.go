package connect

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"github.com/vigia-data/vigia/source"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
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

func (d *mysqlDialect) wrap(stmt string) string {
	switch {
	case d.mariadb:
		return "SET STATEMENT max_statement_time=" + fmtFloat(d.timeout.Seconds()) + " FOR " + stmt
	case d.hint && strings.HasPrefix(stmt, "SELECT "):
		return "SELECT /*+ MAX_EXECUTION_TIME(" + strconv.FormatInt(d.timeout.Milliseconds(), 10) + ") */ " + stmt[len("SELECT "):]
	}
	return stmt
}

func mysqlParse(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, newError(source.MySQL, "validate", source.ReasonInvalidDSN, "")
	}
	return cfg, nil
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
 c.COLUMN_NAME, c.ORDINAL_POSITION, c.COLUMN_TYPE, c.IS_NULLABLE, s.COLUMN_NAME IS NOT NULL
FROM information_schema.TABLES t
JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME
LEFT JOIN information_schema.STATISTICS s ON s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME
 AND s.COLUMN_NAME = c.COLUMN_NAME AND s.INDEX_NAME = 'PRIMARY'
WHERE ` + mysqlFilter("t") + ` AND t.TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')
ORDER BY t.TABLE_SCHEMA, t.TABLE_NAME, c.ORDINAL_POSITION`

	mysqlDiscoverViews = `SELECT v.TABLE_SCHEMA, v.TABLE_NAME, v.VIEW_DEFINITION FROM information_schema.VIEWS v WHERE ` + mysqlFilter("v")

	mysqlDiscoverPartitions = `SELECT DISTINCT p.TABLE_SCHEMA, p.TABLE_NAME, COALESCE(p.PARTITION_EXPRESSION, ''),
 COALESCE(p.SUBPARTITION_EXPRESSION, '')
FROM information_schema.PARTITIONS p WHERE p.PARTITION_NAME IS NOT NULL AND ` + mysqlFilter("p")
)

func (d *mysqlDialect) discover(ctx context.Context, c *conn, op string) ([]source.Table, error) {
	var tables []source.Table
	index := map[[2]string]int{}
	_, err := c.query(ctx, op, "discover", mysqlDiscoverColumns, nil, func(rows *sql.Rows) error {
		var schema, name, typ, engine, col, colType, nullable string
		var pos int
		var pk bool
		if err := rows.Scan(&schema, &name, &typ, &engine, &col, &pos, &colType, &nullable, &pk); err != nil {
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
			Nullable: strings.EqualFold(nullable, "YES"), PrimaryKey: pk,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := c.readViewDefinitions(ctx, op, mysqlDiscoverViews, index, tables); err != nil {
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

func (*mysqlDialect) numMin(q string) string      { return "MIN(" + q + ")" }
func (*mysqlDialect) numMax(q string) string      { return "MAX(" + q + ")" }
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
// 64-bit hash function): the value's, and that of the value behind a prefix.
func (*mysqlDialect) hashValue(q string, _ source.Column) string {
	return "(CRC32(" + q + ") << 32 | CRC32(CONCAT('#', " + q + ")))"
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
