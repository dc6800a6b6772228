package app

import (
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/lineage/sqllineage"
	"github.com/vigia-data/vigia/modeling"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/suggest"
)

// dialectParser is what one dialect's parser serves: view lineage, the modeling fixes'
// DDL check and the rehearsals' count check.
type dialectParser interface {
	lineage.ViewParser
	modeling.DDLChecker
	suggest.Checker
}

// dialectParsers are the parsers of the dialects lineage/sqllineage does not read
// itself, by dialect. Files built with a tag add theirs (parsers_duckdb.go: duckdb,
// DuckDB's own parser, cgo); without the tag such a dialect is unsupported.
var dialectParsers = map[string]dialectParser{}

// sqlParsers reads SQL with each dialect's real parser: lineage/sqllineage for
// postgres, mysql and sqlite, dialectParsers for the others.
type sqlParsers struct{}

func (sqlParsers) of(dialect string) dialectParser {
	if p, ok := dialectParsers[dialect]; ok {
		return p
	}
	return sqllineage.Parser{}
}

// Analyze implements lineage.ViewParser.
func (p sqlParsers) Analyze(dialect, sql string, cat lineage.ViewCatalog) (lineage.ViewLineage, error) {
	return p.of(dialect).Analyze(dialect, sql, cat)
}

// CheckDDL implements modeling.DDLChecker.
func (p sqlParsers) CheckDDL(dialect, sql string) error { return p.of(dialect).CheckDDL(dialect, sql) }

// CheckCount implements suggest.Checker.
func (p sqlParsers) CheckCount(dialect, sql string, t source.Table, allowed map[string]bool) (string, error) {
	return p.of(dialect).CheckCount(dialect, sql, t, allowed)
}
