//go:build duckdb

// Package duckview reads DuckDB SQL with DuckDB's own parser: the view lineage
// (lineage.ViewParser), the rehearsal's count check (suggest.Checker) and the modeling
// fixes' DDL check (modeling.DDLChecker) of the duckdb dialect. It runs an in-memory
// DuckDB that holds no data and may not touch files; json_serialize_sql turns a SELECT
// into DuckDB's parse tree, which lineage/sqllineage walks like the other dialects'.
//
// DuckDB is cgo: the package is built only with the build tag `duckdb`, and app wires
// it in from a tagged file, so untagged builds neither link DuckDB nor know the dialect.
// It sits under lineage/sqllineage, in the SQL parsers' room, whose walker it feeds.
// Errors never carry the SQL text nor DuckDB's message (which quotes it).
package duckview

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/lineage/sqllineage"
	"github.com/vigia-data/vigia/source"
)

// Dialect is the one dialect this parser reads.
const Dialect = string(sqllineage.DuckDB)

// parseTimeout bounds one call into DuckDB; parsing a view takes microseconds.
const parseTimeout = 10 * time.Second

// Parser parses DuckDB SQL in a private in-memory DuckDB, opened on first use. The
// zero value is ready; it is safe for concurrent use.
type Parser struct {
	once sync.Once
	db   *sql.DB
	err  error
}

// New returns a Parser.
func New() *Parser { return &Parser{} }

// errEngine is returned when the in-memory DuckDB cannot be opened.
var errEngine = errors.New("duckview: the DuckDB parser is not available")

func (p *Parser) open() (*sql.DB, error) {
	p.once.Do(func() {
		// No file, one thread, a small memory limit, no access to files or the network,
		// and the settings locked: the database only parses.
		c, err := duckdb.NewConnector("", func(ex driver.ExecerContext) error {
			for _, s := range []string{"SET threads = 1", "SET memory_limit = '64MB'",
				"SET enable_external_access = false", "SET lock_configuration = true"} {
				if _, err := ex.ExecContext(context.Background(), s, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			p.err = errEngine
			return
		}
		p.db = sql.OpenDB(c)
		p.db.SetMaxOpenConns(2)
	})
	return p.db, p.err
}

// serialize returns json_serialize_sql's answer for text: DuckDB's parse tree of a
// SELECT, or a JSON object with "error": true for anything else.
func (p *Parser) serialize(text string) ([]byte, error) {
	db, err := p.open()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), parseTimeout)
	defer cancel()
	var out string
	if err := db.QueryRowContext(ctx, "SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR)", text).Scan(&out); err != nil {
		return nil, errEngine
	}
	return []byte(out), nil
}

// Analyze implements lineage.ViewParser for dialect duckdb: sql is a view's SELECT or
// its CREATE VIEW statement (what duckdb_views() reports).
func (p *Parser) Analyze(dialect, sql string, cat lineage.ViewCatalog) (lineage.ViewLineage, error) {
	if dialect != Dialect {
		return lineage.ViewLineage{}, sqllineage.ErrUnsupportedDialect
	}
	if len(sql) > sqllineage.MaxSQLBytes {
		return lineage.ViewLineage{}, sqllineage.ErrTooLarge
	}
	body, cols, ok := splitCreateView(sql)
	if !ok {
		return lineage.ViewLineage{}, sqllineage.ErrNotAQuery
	}
	tree, err := p.serialize(body)
	if err != nil {
		return lineage.ViewLineage{}, err
	}
	return sqllineage.Parser{}.AnalyzeDuckDB(tree, cols, cat)
}

// CheckCount implements suggest.Checker for dialect duckdb with DuckDB's parser: one
// plain SELECT, allowed functions only, no table but t (see
// sqllineage.Parser.CheckCountDuckDB).
func (p *Parser) CheckCount(dialect, sql string, t source.Table, allowed map[string]bool) (string, error) {
	if dialect != Dialect {
		return "", sqllineage.ErrUnsupportedDialect
	}
	if len(sql) > sqllineage.MaxSQLBytes {
		return "not_select", nil
	}
	tree, err := p.serialize(sql)
	if err != nil {
		return "", err
	}
	return sqllineage.Parser{}.CheckCountDuckDB(tree, t, allowed)
}

// CheckDDL implements modeling.DDLChecker for dialect duckdb. json_serialize_sql reads
// only SELECT, so each statement is prepared in the empty in-memory database instead:
// DuckDB's parser rejects bad syntax (*sqllineage.ParseError) and what DuckDB does not
// implement (adding a foreign key to an existing table: ErrNotDDL, DuckDB cannot run
// it). The database holds no tables, so binding then fails on the first name; the
// statement's kind is read from its leading keywords, which the parser has just
// accepted: ALTER TABLE, CREATE [UNIQUE] INDEX and CREATE [OR REPLACE] [TEMP] TABLE
// pass, anything else is ErrNotDDL.
func (p *Parser) CheckDDL(dialect, sql string) error {
	if dialect != Dialect {
		return sqllineage.ErrUnsupportedDialect
	}
	if len(sql) > sqllineage.MaxSQLBytes {
		return sqllineage.ErrTooLarge
	}
	stmts, ok := splitStatements(sql)
	if !ok {
		return &sqllineage.ParseError{Dialect: sqllineage.DuckDB}
	}
	if len(stmts) == 0 {
		return sqllineage.ErrNotDDL
	}
	db, err := p.open()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), parseTimeout)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return errEngine
	}
	defer conn.Close()
	for _, st := range stmts {
		if !ddlKind(st) {
			return sqllineage.ErrNotDDL
		}
		err := conn.Raw(func(dc any) error {
			pc, ok := dc.(driver.ConnPrepareContext)
			if !ok {
				return errEngine
			}
			s, err := pc.PrepareContext(ctx, st)
			if err != nil {
				return err
			}
			return s.Close()
		})
		var de *duckdb.Error
		switch {
		case err == nil:
		case errors.As(err, &de) && de.Type == duckdb.ErrorTypeParser:
			return &sqllineage.ParseError{Dialect: sqllineage.DuckDB}
		case errors.As(err, &de) && de.Type == duckdb.ErrorTypeNotImplemented:
			return sqllineage.ErrNotDDL
		case errors.As(err, &de) && (de.Type == duckdb.ErrorTypeCatalog || de.Type == duckdb.ErrorTypeBinder):
			// Parsed; the empty database lacks the tables it names.
		case errors.Is(err, errEngine):
			return err
		default:
			return sqllineage.ErrNotDDL
		}
	}
	return nil
}

// ddlKind reports whether a statement starts as ALTER TABLE, CREATE [UNIQUE] INDEX or
// CREATE [OR REPLACE] [TEMP|TEMPORARY] TABLE.
func ddlKind(st string) bool {
	w := words(st, 6)
	at := func(i int, s string) bool { return i < len(w) && w[i] == s }
	switch {
	case at(0, "ALTER"):
		return at(1, "TABLE")
	case at(0, "CREATE"):
		i := 1
		if at(i, "OR") && at(i+1, "REPLACE") {
			i += 2
		}
		if at(i, "UNIQUE") {
			return at(i+1, "INDEX")
		}
		if at(i, "INDEX") {
			return true
		}
		if at(i, "TEMP") || at(i, "TEMPORARY") {
			i++
		}
		return at(i, "TABLE") && !strings.Contains(strings.ToUpper(st), " AS ")
	}
	return false
}
