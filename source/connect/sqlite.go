package connect

import (
	"context"
	"database/sql"
	"errors"
	"github.com/vigia-data/vigia/source"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
)

type sqliteDialect struct{}

func (sqliteDialect) kind() source.Kind { return source.SQLite }

// grace is zero: SQLite has no server-side timeout, the context deadline is the timeout
// (the driver interrupts the statement when it expires).
func (sqliteDialect) grace() time.Duration       { return 0 }
func (sqliteDialect) wrap(stmt, _ string) string { return stmt }

// cancelLabelled has nothing to cancel: a SQLite file has no sessions of other processes
// this connection could reach (a dead worker's statements died with it).
func (sqliteDialect) cancelLabelled(context.Context, *conn, string) (int, error) { return 0, nil }

func (sqliteDialect) quote(ident string) string {
	return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"`
}

// sqlitePath reads the database file path of a DSN: a plain path (anything after ? is
// driver options, dropped) or a file: URI (its query is dropped too: this package
// decides how the file is opened).
func sqlitePath(dsn string) (string, error) {
	invalid := newError(source.SQLite, "validate", source.ReasonInvalidDSN, "")
	p := strings.TrimSpace(dsn)
	if strings.HasPrefix(p, "file:") {
		u, err := url.Parse(p)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return "", invalid
		}
		p = u.Path
		if p == "" {
			p, err = url.PathUnescape(u.Opaque)
			if err != nil {
				return "", invalid
			}
		}
	} else if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if p == "" || p == ":memory:" || strings.HasPrefix(p, ":") || strings.ContainsRune(p, 0) {
		return "", invalid
	}
	return p, nil
}

// ConfinedPath resolves p (absolute, symbolic links followed) and, when root is set, refuses
// it with ReasonPermission unless it is root or inside it: the one confinement rule of the
// file-based kinds (SQLite's VIGIA_SQLITE_ROOT, the duckdb kind's VIGIA_FILES_ROOT). A path
// that does not exist is ReasonNotFound, one that cannot be resolved ReasonPermission; the
// errors never name the path.
func ConfinedPath(kind source.Kind, p, root string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", newError(kind, "open", source.ReasonInvalidDSN, "")
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", newError(kind, "open", source.ReasonNotFound, "")
		}
		return "", newError(kind, "open", source.ReasonPermission, "")
	}
	if root != "" {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			return "", newError(kind, "open", source.ReasonPermission, "")
		}
		rel, err := filepath.Rel(r, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return "", newError(kind, "open", source.ReasonPermission, "")
		}
	}
	return real, nil
}

// sqliteFile resolves a DSN to an existing regular file, inside root when root is set.
func sqliteFile(dsn, root string) (string, error) {
	p, err := sqlitePath(dsn)
	if err != nil {
		return "", err
	}
	real, err := ConfinedPath(source.SQLite, p, root)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", newError(source.SQLite, "open", source.ReasonNotFound, "")
	}
	if !st.Mode().IsRegular() {
		return "", newError(source.SQLite, "open", source.ReasonInvalidDSN, "")
	}
	return real, nil
}

func openSQLite(ctx context.Context, dsn string, opts source.Options) (source.Source, error) {
	path, err := sqliteFile(dsn, opts.SQLiteRoot)
	if err != nil {
		return nil, err
	}
	// Read-only: mode=ro never creates nor writes the file; query_only refuses writes even
	// through ATTACH; busy_timeout waits for a writer's lock instead of failing at once.
	uri := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, newError(source.SQLite, "open", source.ReasonInvalidDSN, "")
	}
	c := newConn(sqliteDialect{}, db, opts)
	if _, err := c.query(ctx, source.OperationFrom(ctx, source.OpTest), "open", "SELECT 1 FROM sqlite_master LIMIT 1", nil, nil); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

func (sqliteDialect) classify(err error) (reason, code string) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return "", ""
	}
	rc := se.Code()
	code = strconv.Itoa(rc)
	switch rc & 0xff {
	case 14: // SQLITE_CANTOPEN
		return source.ReasonNotFound, code
	case 9: // SQLITE_INTERRUPT
		return source.ReasonTimeout, code
	case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
		return source.ReasonTimeout, code
	case 3, 8, 23: // SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH
		return source.ReasonPermission, code
	}
	return source.ReasonQuery, code
}

// sqliteDiscover lists the tables' and views' columns; a column is unique when it alone
// is the key of a unique index without a predicate, or the only primary key column (an
// INTEGER PRIMARY KEY is the rowid and has no index).
const sqliteDiscover = `SELECT m.type, m.name, coalesce(m.sql, ''), p.cid, p.name, p.type, p."notnull", p.pk,
 EXISTS (SELECT 1 FROM pragma_index_list(m.name) AS il WHERE il."unique" = 1 AND il.partial = 0
   AND (SELECT count(*) FROM pragma_index_info(il.name)) = 1 AND (SELECT ii.name FROM pragma_index_info(il.name) AS ii) = p.name)
 OR (p.pk = 1 AND (SELECT count(*) FROM pragma_table_info(m.name) AS p2 WHERE p2.pk > 0) = 1)
FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p
WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
ORDER BY m.name, p.cid`

func (d sqliteDialect) discover(ctx context.Context, c *conn, op string) ([]source.Table, error) {
	var tables []source.Table
	index := map[string]int{}
	_, err := c.query(ctx, op, "discover", sqliteDiscover, nil, func(rows *sql.Rows) error {
		var typ, name, ddl, col, colType string
		var cid, notNull, pk int
		var unique bool
		if err := rows.Scan(&typ, &name, &ddl, &cid, &col, &colType, &notNull, &pk, &unique); err != nil {
			return c.resultError("discover")
		}
		i, ok := index[name]
		if !ok {
			i = len(tables)
			index[name] = i
			t := source.Table{Schema: "main", Name: name, Kind: source.TableKindTable}
			switch {
			case typ == "view":
				t.Kind = source.TableKindView
				t.ViewDefinition = sqliteViewSelect(ddl)
			case hasPrefixFold(strings.TrimSpace(ddl), "CREATE VIRTUAL TABLE"):
				t.Kind = source.TableKindExternal
			}
			tables = append(tables, t)
		}
		// An INTEGER PRIMARY KEY is the rowid and never null, whatever the declaration.
		rowidAlias := pk > 0 && strings.EqualFold(strings.TrimSpace(colType), "INTEGER")
		tables[i].Columns = append(tables[i].Columns, source.Column{
			Name: col, Position: cid + 1, DataType: colType, Class: d.classOf(colType),
			Nullable: notNull == 0 && !rowidAlias, PrimaryKey: pk > 0, Unique: unique,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	byName := func(_, name string) (int, bool) { i, ok := index[name]; return i, ok }
	if err := c.readForeignKeys(ctx, op, sqliteDiscoverForeignKeys, byName, tables); err != nil {
		return nil, err
	}
	if err := c.readIndexed(ctx, op, sqliteDiscoverIndexed, byName, tables); err != nil {
		return nil, err
	}
	for i := range tables {
		// An INTEGER PRIMARY KEY is the rowid: the table is ordered by it.
		for j, col := range tables[i].Columns {
			if col.PrimaryKey && strings.EqualFold(strings.TrimSpace(col.DataType), "INTEGER") {
				tables[i].Columns[j].Indexed = true
			}
		}
	}
	return tables, nil
}

// sqliteDiscoverForeignKeys lists the declared foreign keys of the tables; SQLite keeps
// no constraint names, so each key is fk_<its id + 1>; a NULL "to" references the parent's
// primary key (resolved by readForeignKeys).
const sqliteDiscoverForeignKeys = `SELECT 'main', m.name, 'fk_' || (f.id + 1), f."from", 'main', f."table", coalesce(f."to", '')
FROM sqlite_master AS m JOIN pragma_foreign_key_list(m.name) AS f
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
ORDER BY m.name, f.id, f.seq`

// sqliteDiscoverIndexed lists the columns leading an index of a table.
const sqliteDiscoverIndexed = `SELECT DISTINCT 'main', m.name, ii.name
FROM sqlite_master AS m JOIN pragma_index_list(m.name) AS il JOIN pragma_index_info(il.name) AS ii
WHERE m.type = 'table' AND ii.seqno = 0 AND ii.name IS NOT NULL`

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ViewSelect returns the SELECT of a CREATE VIEW statement (what follows the first AS
// keyword outside quotes, brackets and parentheses), "" when there is none.
func ViewSelect(ddl string) string { return sqliteViewSelect(ddl) }

// sqliteViewSelect returns the SELECT of a CREATE VIEW statement: what follows the first
// AS keyword outside quotes and brackets (the name and the column list come before it).
func sqliteViewSelect(ddl string) string {
	depth := 0
	for i := 0; i < len(ddl); {
		c := ddl[i]
		switch {
		case c == '"' || c == '`' || c == '\'':
			i = skipQuoted(ddl, i, c, false)
		case c == '[':
			if j := strings.IndexByte(ddl[i:], ']'); j >= 0 {
				i += j + 1
			} else {
				return ""
			}
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
		case isIdentStart(c):
			j := i
			for j < len(ddl) && isIdentChar(ddl[j]) {
				j++
			}
			if depth == 0 && strings.EqualFold(ddl[i:j], "AS") {
				return strings.TrimSpace(ddl[j:])
			}
			i = j
		default:
			i++
		}
	}
	return ""
}

// classOf follows SQLite's type affinity rules, after two names that the rules would read
// as numeric but that mean boolean and temporal to whoever declared them.
func (sqliteDialect) classOf(declared string) string {
	t := strings.ToUpper(declared)
	switch {
	case strings.Contains(t, "BOOL"):
		return source.ClassBoolean
	case strings.Contains(t, "DATE") || strings.Contains(t, "TIME"):
		return source.ClassTemporal
	case strings.Contains(t, "INT"):
		return source.ClassNumeric
	case strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT"):
		return source.ClassText
	case t == "" || strings.Contains(t, "BLOB"):
		return source.ClassOther
	}
	return source.ClassNumeric // REAL, FLOA, DOUB and NUMERIC affinity (DECIMAL, NUMERIC, ...)
}

func (d sqliteDialect) table(t source.Table) string {
	if t.Schema == "" {
		return d.quote(t.Name)
	}
	return d.quote(t.Schema) + "." + d.quote(t.Name)
}

// numMin and numMax ignore text stored in a numeric column (SQLite types values, not
// columns), which would otherwise sort after every number and not read as one.
func (sqliteDialect) numMin(q string) string {
	return "min(CASE WHEN typeof(" + q + ") IN ('integer', 'real') THEN " + q + " END)"
}
func (sqliteDialect) numMax(q string) string {
	return "max(CASE WHEN typeof(" + q + ") IN ('integer', 'real') THEN " + q + " END)"
}
func (sqliteDialect) timeMin(q string) string     { return "min(" + q + ")" }
func (sqliteDialect) timeMax(q string) string     { return "max(" + q + ")" }
func (sqliteDialect) finiteTimeMin(string) string { return "" }
func (sqliteDialect) finiteTimeMax(string) string { return "" }
func (sqliteDialect) length(q string) string      { return "length(" + q + ")" }
func (sqliteDialect) avgLength(q string) string   { return "avg(length(" + q + "))" }
func (sqliteDialect) sampleValue(q string) string {
	return "substr(CAST(" + q + " AS TEXT), 1, " + strconv.Itoa(sampleValueMax) + ")"
}

// random compares 20 random bits with p·2^20 (abs(random()) can overflow).
func (sqliteDialect) random(_ source.Table, p float64) string {
	return "(random() & 1048575) < " + strconv.FormatInt(int64(math.Ceil(p*1048576)), 10)
}

// hashValue is the whole value as text (SQLite has no hash function; the file is local),
// hashed as it is read.
func (sqliteDialect) hashValue(q string, _ source.Column) string {
	return "CAST(" + q + " AS TEXT)"
}
func (sqliteDialect) tableSample(source.Table, float64) string { return "" }
func (sqliteDialect) rowSample(source.Table, float64) string   { return "" }

func (d sqliteDialect) keyColumn(t source.Table) int {
	if t.Kind != source.TableKindTable {
		return -1
	}
	key := -1
	for i, c := range t.Columns {
		if !c.PrimaryKey {
			continue
		}
		if key >= 0 {
			return -1
		}
		key = i
	}
	if key < 0 || !strings.Contains(strings.ToUpper(t.Columns[key].DataType), "INT") {
		return -1
	}
	return key
}

func (sqliteDialect) sampleable(c source.Column) bool {
	return !strings.Contains(strings.ToUpper(c.DataType), "BLOB")
}

func (sqliteDialect) distinctable(c source.Column) bool { return c.Class != source.ClassOther }
