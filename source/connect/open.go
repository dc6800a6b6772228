package connect

import (
	"context"
	"github.com/vigia-data/vigia/source"
)

// Open connects to a source of the given kind and checks it answers (one trivial
// statement, recorded under the context's operation, "test" by default). It returns an
// *Error: ReasonInvalidDSN, ReasonUnsupported, ReasonUnreachable, ReasonAuth,
// ReasonNotFound, ReasonPermission, ReasonTimeout...
//
// Postgres sessions are read-only (default_transaction_read_only) with statement_timeout
// set; MySQL/MariaDB statements carry their own timeout; SQLite files open read-only and
// must exist.
func Open(ctx context.Context, kind source.Kind, dsn string, opts source.Options) (source.Source, error) {
	switch kind {
	case source.Postgres:
		return openPostgres(ctx, dsn, opts)
	case source.MySQL:
		return openMySQL(ctx, dsn, opts)
	case source.SQLite:
		return openSQLite(ctx, dsn, opts)
	}
	return nil, newError(kind, "open", source.ReasonUnsupported, "")
}

// ValidateDSN parses a DSN without connecting (and, for SQLite, without touching the file).
// Its error is an *Error with ReasonInvalidDSN or ReasonUnsupported that never contains
// the DSN or any part of it.
func ValidateDSN(kind source.Kind, dsn string) error {
	switch kind {
	case source.Postgres:
		_, _, err := pgParse(dsn)
		return err
	case source.MySQL:
		_, err := mysqlParse(dsn)
		return err
	case source.SQLite:
		_, err := sqlitePath(dsn)
		return err
	}
	return newError(kind, "validate", source.ReasonUnsupported, "")
}

// dialectFor returns the SQL dialect of a kind, for statements built without a connection.
func dialectFor(kind source.Kind) (dialect, error) {
	switch kind {
	case source.Postgres:
		return postgres{}, nil
	case source.MySQL:
		return &mysqlDialect{timeout: source.DefaultStatementTimeout}, nil
	case source.SQLite:
		return sqliteDialect{}, nil
	}
	return nil, newError(kind, "validate", source.ReasonUnsupported, "")
}
