// Package store is Vigia's system of record on Postgres: the pool, transactions that
// ride in ctx, embedded migrations, driver-error translation and the queries of each
// feature. Feature packages declare the ports; this package implements them.
package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/internal/pgtx"
)

// DefaultURL is the database used when DATABASE_URL is not set: the local Postgres.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/vigia?sslmode=disable"

//go:embed migrations/*.sql
var migrations embed.FS

// DB is the Postgres system of record.
type DB struct {
	pool  *pgxpool.Pool
	hooks webhookBatches
}

// Open connects to the database at url, creating the database first when it does not
// exist. The returned error never contains the URL's password.
func Open(ctx context.Context, dsn string) (*DB, error) {
	return OpenTraced(ctx, dsn, nil)
}

// OpenTraced is Open with tracer (when not nil) seeing every query of the pool: tests
// count the SQL queries a request costs with it.
func OpenTraced(ctx context.Context, dsn string, tracer pgx.QueryTracer) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("store: DATABASE_URL is not a valid Postgres URL")
	}
	cfg.MaxConns = 20
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	cfg.ConnConfig.Tracer = tracer
	if err := ensureDatabase(ctx, cfg.ConnConfig); err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", redact(err))
	}
	db := &DB{pool: pool}
	db.hooks = newWebhookBatches(db)
	return db, nil
}

// ensureDatabase creates the target database when it is missing, through the
// maintenance database of the same server.
func ensureDatabase(ctx context.Context, cc *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err == nil {
		return conn.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return fmt.Errorf("store: connect: %w", redact(err))
	}
	admin := cc.Copy()
	admin.Database = "postgres"
	ac, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("store: connect to maintenance database: %w", redact(err))
	}
	defer ac.Close(ctx)
	_, err = ac.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{cc.Database}.Sanitize())
	if err != nil && !isCode(err, "42P04") { // duplicate_database: created meanwhile
		return fmt.Errorf("store: create database: %w", redact(err))
	}
	return nil
}

// redact keeps a connection error's SQLSTATE and a fixed text, dropping anything that
// might carry the URL or credentials.
func redact(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return fmt.Errorf("postgres error %s", pgErr.Code)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return errors.New("cannot reach the database server")
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return errors.New("database connection failed")
}

// Pool exposes the pgx pool to packages of the store layer (jobs, graph backend).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// Ping checks that the database answers within ctx.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return redact(err)
	}
	return nil
}

// Migrate applies the embedded migrations.
func (db *DB) Migrate(ctx context.Context) error {
	sqldb := stdlib.OpenDBFromPool(db.pool)
	defer sqldb.Close()
	// Features land from parallel branches, so a database may meet a lower-numbered
	// migration after a higher one: apply it rather than refuse.
	p, err := goose.NewProvider(goose.DialectPostgres, sqldb, mustSub(migrations, "migrations"), goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// DatabaseName returns the name of the database in a Postgres URL, for messages.
func DatabaseName(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

// querier is what both a pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
}

// q returns the transaction riding in ctx, or the pool.
func (db *DB) q(ctx context.Context) querier {
	if tx, ok := pgtx.From(ctx); ok {
		return tx
	}
	return db.pool
}

// InTx runs fn in a transaction carried by ctx. A nested call joins the outer
// transaction. fn's error rolls back; a panic rolls back and re-panics.
func (db *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := pgtx.From(ctx); ok {
		return fn(ctx)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return translate(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(pgtx.With(ctx, tx)); err != nil {
		return err
	}
	return translate(tx.Commit(ctx))
}

// translate turns driver errors into Vigia errors at the edge where the driver is used.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return vigia.NotFound()
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return vigia.Conflict("already_exists", "error.conflict", nil)
		case "23503": // foreign_key_violation
			return vigia.NotFound()
		case "57014": // query_canceled (statement timeout)
			return vigia.Internal(fmt.Errorf("statement timeout: %w", err))
		}
	}
	return vigia.Internal(err)
}

func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// scanInto reads rows of (id, value) into out and closes them.
func scanInto[V any](rows pgx.Rows, out map[string]V) error {
	defer rows.Close()
	for rows.Next() {
		var id string
		var v V
		if err := rows.Scan(&id, &v); err != nil {
			return translate(err)
		}
		out[id] = v
	}
	return translate(rows.Err())
}
