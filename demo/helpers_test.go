package demo_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

const pgAdminDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// MustSQLite opens a new SQLite file in a temporary directory; extra is appended to the DSN.
func MustSQLite(tb testing.TB, extra string) *sql.DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "demo.db")
	db, err := sql.Open("sqlite", "file:"+path+extra)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// MustPostgres creates a throw-away database demo_test_<random> on the local Postgres and
// drops it when the test ends. It skips the test when no Postgres answers.
func MustPostgres(tb testing.TB) *sql.DB {
	tb.Helper()
	admin, err := sql.Open("pgx", pgAdminDSN)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = admin.Close() })
	if err := admin.PingContext(context.Background()); err != nil {
		tb.Skipf("no Postgres at 127.0.0.1:5432: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "demo_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres@127.0.0.1:5432/%s?sslmode=disable", name))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = db.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Errorf("drop %s: %v", name, err)
		}
	})
	return db
}

// target is one database to build packs into.
type target struct {
	dialect string
	open    func(tb testing.TB) *sql.DB
}

var targets = []target{
	{"sqlite", func(tb testing.TB) *sql.DB { return MustSQLite(tb, "") }},
	{"postgres", MustPostgres},
}

// qual returns how a test query names a pack object in the dialect.
func qual(dialect, schemaDotName string) string {
	if dialect == "sqlite" {
		_, name, _ := strings.Cut(schemaDotName, ".")
		return name
	}
	return schemaDotName
}

// MustCount runs a COUNT query and returns the number.
func MustCount(tb testing.TB, db *sql.DB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// MustStrings returns the non-null values of one column as text.
func MustStrings(tb testing.TB, db *sql.DB, query string) []string {
	tb.Helper()
	rows, err := db.Query(query)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		if s.Valid {
			out = append(out, s.String)
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// MustColumnType reads a column's declared type from the catalog ("" when it is missing).
func MustColumnType(tb testing.TB, db *sql.DB, dialect, schemaDotTable, column string) string {
	tb.Helper()
	schema, tbl, _ := strings.Cut(schemaDotTable, ".")
	var typ string
	var err error
	if dialect == "sqlite" {
		err = db.QueryRow(`SELECT type FROM pragma_table_info(?) WHERE name = ?`, tbl, column).Scan(&typ)
	} else {
		err = db.QueryRow(`SELECT data_type FROM information_schema.columns
			WHERE table_schema = $1 AND table_name = $2 AND column_name = $3`, schema, tbl, column).Scan(&typ)
	}
	if err == sql.ErrNoRows {
		return ""
	}
	if err != nil {
		tb.Fatal(err)
	}
	return typ
}
