package sqllineage

// Parsed is a parsed definition; it lets the benchmarks time the walker alone.
type Parsed struct {
	d  Dialect
	st *statement
}

// ParseForTest runs only the parser and its translation to the query model.
func ParseForTest(d Dialect, sql string) (Parsed, error) {
	var (
		st  *statement
		err error
	)
	switch d {
	case MySQL:
		st, err = parseMySQL(sql)
	case SQLite:
		st, err = parsePostgres(sqliteToPostgres(sql), sql, SQLite)
	default:
		st, err = parsePostgres(sql, sql, Postgres)
	}
	return Parsed{d: d, st: st}, err
}

// Resolve runs only the walker.
func (p Parsed) Resolve(cat Catalog) Result { return resolveStatement(p.d, p.st, cat) }
