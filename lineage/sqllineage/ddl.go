package sqllineage

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// ErrNotDDL is a script that parses but holds a statement other than ALTER TABLE,
// CREATE INDEX or CREATE TABLE.
var ErrNotDDL = errors.New("sqllineage: not a schema change")

// CheckDDL parses a schema-change script (one or more statements) with the dialect's
// real parser and accepts it only when every statement is an ALTER TABLE, a CREATE
// INDEX or a CREATE TABLE: the check the modeling issues' ddl passes before it is
// shown. SQLite is read by the Postgres parser after its identifiers are rewritten, as
// for views. The error never quotes the script.
func (Parser) CheckDDL(dialect, sql string) error {
	switch Dialect(dialect) {
	case Postgres, SQLite:
		text := sql
		if Dialect(dialect) == SQLite {
			text = sqliteToPostgres(sql)
		}
		tree, err := pg.Parse(text)
		if err != nil {
			return &ParseError{Dialect: Dialect(dialect)}
		}
		if len(tree.GetStmts()) == 0 {
			return ErrNotDDL
		}
		for _, st := range tree.GetStmts() {
			switch st.GetStmt().GetNode().(type) {
			case *pg.Node_AlterTableStmt, *pg.Node_IndexStmt, *pg.Node_CreateStmt, *pg.Node_RenameStmt:
			default:
				return ErrNotDDL
			}
		}
		return nil
	case MySQL:
		stmts, _, err := parser.New().Parse(sql, "", "")
		if err != nil {
			return &ParseError{Dialect: MySQL}
		}
		if len(stmts) == 0 {
			return ErrNotDDL
		}
		for _, st := range stmts {
			switch st.(type) {
			case *ast.AlterTableStmt, *ast.CreateIndexStmt, *ast.CreateTableStmt:
			default:
				return ErrNotDDL
			}
		}
		return nil
	}
	return ErrUnsupportedDialect
}
