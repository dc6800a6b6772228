// Package storetest gives each test package its own fresh, migrated Postgres database
// and drops it afterwards, and each test a transaction on it that is rolled back. The server is TEST_DATABASE_URL when set, else the local
// Postgres, else (where a Docker engine exists) a throw-away container.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/vigia-data/vigia/internal/pgtx"
	"github.com/vigia-data/vigia/store"
)

const localURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	mu      sync.Mutex
	shared  *store.DB
	dbURL   string
	cleanup []func()
)

// Run is called from a package's TestMain: it creates the package's database, runs the
// tests and drops the database.
//
//	func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }
func Run(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		shared.Close()
	}
	for i := len(cleanup) - 1; i >= 0; i-- {
		cleanup[i]()
	}
	return code
}

// MustDB returns the package's migrated database, creating it on first use.
func MustDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, _ := mustSetUp(tb)
	return db
}

// MustTx begins a transaction on the package's database and returns a context carrying
// it (every store call made with that context runs in it, and InTx joins it) with the
// transaction itself, for a test's own SQL. The transaction is rolled back when the test
// ends, so a test leaves nothing behind and tests that use distinct rows can run in
// parallel: none sees another's uncommitted rows.
func MustTx(tb testing.TB) (context.Context, pgx.Tx) {
	tb.Helper()
	db := MustDB(tb)
	tx, err := db.Pool().Begin(context.Background())
	if err != nil {
		tb.Fatalf("storetest: begin: %v", err)
	}
	tb.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return pgtx.With(context.Background(), tx), tx
}

// Savepoint runs fn in a savepoint of the transaction riding in ctx and rolls the
// savepoint back, returning fn's error: a statement that fails (a constraint violation)
// then leaves the test's transaction usable.
func Savepoint(tb testing.TB, ctx context.Context, fn func(ctx context.Context) error) error {
	tb.Helper()
	tx, ok := pgtx.From(ctx)
	if !ok {
		tb.Fatalf("storetest: Savepoint needs the context of MustTx")
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		tb.Fatalf("storetest: savepoint: %v", err)
	}
	defer func() { _ = sp.Rollback(context.WithoutCancel(ctx)) }()
	return fn(pgtx.With(ctx, sp))
}

// MustURL returns the URL of the package's database (for tests that start a server
// process or a second pool).
func MustURL(tb testing.TB) string {
	tb.Helper()
	_, u := mustSetUp(tb)
	return u
}

func mustSetUp(tb testing.TB) (*store.DB, string) {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		return shared, dbURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server, err := serverURL(ctx)
	if err != nil {
		tb.Fatalf("storetest: no Postgres server: %v", err)
	}
	name := "vigia_test_" + packageName() + "_" + randomSuffix()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		tb.Fatalf("storetest: connect: %v", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		admin.Close(ctx)
		tb.Fatalf("storetest: create database: %v", err)
	}
	admin.Close(ctx)
	cleanup = append(cleanup, func() { dropDatabase(server, name) })

	u := withDatabase(server, name)
	db, err := store.Open(ctx, u)
	if err != nil {
		tb.Fatalf("storetest: open: %v", err)
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		tb.Fatalf("storetest: migrate: %v", err)
	}
	shared, dbURL = db, u
	return db, u
}

// serverURL picks the Postgres server the tests use.
func serverURL(ctx context.Context) (string, error) {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	if c, err := pgx.Connect(ctx, localURL); err == nil {
		c.Close(ctx)
		return localURL, nil
	}
	if _, err := os.Stat("/var/run/docker.sock"); err != nil && os.Getenv("DOCKER_HOST") == "" {
		return "", fmt.Errorf("local Postgres unreachable and no Docker engine; set TEST_DATABASE_URL")
	}
	ctr, err := tcpostgres.Run(ctx, "postgres:15-alpine",
		tcpostgres.WithUsername("postgres"), tcpostgres.WithPassword("postgres"),
		testcontainers.WithWaitStrategy(wait.ForLog("database system is ready to accept connections").WithOccurrence(2)))
	if err != nil {
		return "", fmt.Errorf("start postgres container: %w", err)
	}
	cleanup = append(cleanup, func() { _ = testcontainers.TerminateContainer(ctr) })
	return ctr.ConnectionString(ctx, "sslmode=disable")
}

func dropDatabase(server, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, server)
	if err != nil {
		return
	}
	defer c.Close(ctx)
	_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func withDatabase(server, name string) string {
	cfg, err := pgx.ParseConfig(server)
	if err != nil {
		return server
	}
	pw := ""
	if cfg.Password != "" {
		pw = ":" + cfg.Password
	}
	return fmt.Sprintf("postgres://%s%s@%s:%d/%s?sslmode=disable", cfg.User, pw, cfg.Host, cfg.Port, name)
}

func packageName() string {
	wd, _ := os.Getwd()
	base := strings.ToLower(filepath.Base(wd))
	var b strings.Builder
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() > 20 {
		return b.String()[:20]
	}
	return b.String()
}

func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
