package connect

import (
	"context"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

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
	if d, ok := registered(kind); ok {
		return d.Open(ctx, dsn, opts)
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
	if d, ok := registered(kind); ok {
		return d.ValidateDSN(dsn)
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

// ServerIdentity names a source's server and database the way the OpenLineage naming
// spec names datasets: Postgres postgres://{host}:{port} and database {database} (dataset
// names {database}.{schema}.{table}); MySQL/MariaDB mysql://{host}:{port} and the DSN's
// database ("" when it names none: every database of the server is a schema here);
// SQLite sqlite:{file URI} (the form Spark's JDBC integration writes) and no database.
// Host names are lower-cased; ports are the server's defaults when the DSN has none. No
// credential is part of it. ok is false for a DSN that does not parse or names a socket.
func ServerIdentity(kind source.Kind, dsn string) (namespace, database string, ok bool) {
	switch kind {
	case source.Postgres:
		cfg, _, err := pgParse(dsn)
		if err != nil || cfg.Host == "" || strings.HasPrefix(cfg.Host, "/") {
			return "", "", false
		}
		return "postgres://" + net.JoinHostPort(strings.ToLower(cfg.Host), strconv.Itoa(int(cfg.Port))), cfg.Database, true
	case source.MySQL:
		cfg, err := mysqlParse(dsn)
		if err != nil || cfg.Net != "tcp" {
			return "", "", false
		}
		host, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			host, port = cfg.Addr, "3306"
		}
		return "mysql://" + net.JoinHostPort(strings.ToLower(host), port), cfg.DBName, true
	case source.SQLite:
		p, err := sqlitePath(dsn)
		if err != nil {
			return "", "", false
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", "", false
		}
		return "sqlite:" + (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), "", true
	}
	if d, ok := registered(kind); ok && d.ServerIdentity != nil {
		return d.ServerIdentity(dsn)
	}
	return "", "", false
}
