package rulesql_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/vigia-data/vigia/rulesql"
	// The SQLite driver, with the REGEXP function Vigia's connections use.
	_ "github.com/vigia-data/vigia/source/connect"
)

// The live tests run every generated query on a real engine holding the odd-names
// fixture and compare the ids that come back with oddFailing. Each creates its own
// database and drops it at the end; a server that cannot be reached skips the test.

const (
	pgAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	mysqlAdmin = "root@tcp(127.0.0.1:3306)/"
	pgSchema   = `vigia "sales"`
)

func pgCustomSQL() string {
	return `SELECT COUNT(*) AS failing FROM "vigia ""sales"""."order ""items""" WHERE ` + oddCustomSQLWhere
}

func mysqlCustomSQL(db string) string {
	return "SELECT COUNT(*) AS failing FROM `" + db + "`.`order \"items\"` WHERE " + oddCustomSQLWhere
}

func sqliteCustomSQL() string {
	return `SELECT COUNT(*) AS failing FROM "order ""items""" WHERE ` + oddCustomSQLWhere
}

func TestPostgresQueriesReturnTheFailingRows(t *testing.T) {
	db := mustFreshPostgres(t)
	mustExec(t, db,
		`CREATE SCHEMA "vigia ""sales"""`,
		`CREATE TABLE "vigia ""sales"""."order ""items""" (
			id integer PRIMARY KEY, "select ""x""" text, status text, email text,
			amount numeric, customer_id integer, updated_at timestamptz, "we`+"`"+`ird" text, "br]acket" integer)`,
		`CREATE TABLE "vigia ""sales""".customers (id integer PRIMARY KEY)`,
		`INSERT INTO "vigia ""sales""".customers VALUES (1), (2)`,
	)
	insert := `INSERT INTO "vigia ""sales"""."order ""items""" VALUES
		($1, $2, $3, $4, $5, $6, now() - $7::int * interval '1 hour', $8, $9)`
	for _, r := range oddRows() {
		mustInsert(t, db, insert, r, hoursArg(r.ageHours))
	}
	assertFailingRows(t, db, rulesql.Postgres, oddRules(pgSchema, pgCustomSQL()))
}

func TestMariaDBRunsMySQLQueriesAndReturnsTheFailingRows(t *testing.T) {
	db, name := mustFreshMySQL(t)
	// The collation is case-insensitive on purpose: pattern must still match case.
	mustExec(t, db,
		"CREATE TABLE `order \"items\"` (id INT PRIMARY KEY, `select \"x\"` TEXT, status VARCHAR(50),"+
			" email VARCHAR(100), amount DECIMAL(10,2), customer_id INT, updated_at DATETIME,"+
			" `we``ird` VARCHAR(10), `br]acket` INT) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
		"CREATE TABLE customers (id INT PRIMARY KEY)",
		"INSERT INTO customers VALUES (1), (2)",
	)
	insert := "INSERT INTO `order \"items\"` VALUES (?, ?, ?, ?, ?, ?, NOW() - INTERVAL ? HOUR, ?, ?)"
	for _, r := range oddRows() {
		mustInsert(t, db, insert, r, hoursArg(r.ageHours))
	}
	assertFailingRows(t, db, rulesql.MySQL, oddRules(name, mysqlCustomSQL(name)))
}

func TestSQLiteQueriesReturnTheFailingRows(t *testing.T) {
	db := mustSQLite(t)
	mustExec(t, db, `INSERT INTO customers VALUES (1), (2)`)
	// ISO 8601 with T and Z, which only compares right once datetime() normalises it.
	insert := `INSERT INTO "order ""items""" VALUES
		(?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now', ?), ?, ?)`
	for _, r := range oddRows() {
		var age any
		if r.ageHours != nil {
			age = "-" + strconv.Itoa(*r.ageHours) + " hours"
		}
		mustInsert(t, db, insert, r, age)
	}
	assertFailingRows(t, db, rulesql.SQLite, oddRules("main", sqliteCustomSQL()))
}

func hoursArg(h *int) any {
	if h == nil {
		return nil
	}
	return *h
}

func mustInsert(tb testing.TB, db *sql.DB, stmt string, r oddRow, updatedAt any) {
	tb.Helper()
	args := []any{r.id, r.quote, r.status, r.email, r.amount, r.customerID, updatedAt, r.backtick, r.bracket}
	for i, a := range args {
		// database/sql sends a typed nil pointer as NULL only through driver.Valuer.
		switch v := a.(type) {
		case *string:
			if v == nil {
				args[i] = nil
			} else {
				args[i] = *v
			}
		case *int:
			if v == nil {
				args[i] = nil
			} else {
				args[i] = *v
			}
		case *float64:
			if v == nil {
				args[i] = nil
			} else {
				args[i] = *v
			}
		}
	}
	if _, err := db.ExecContext(context.Background(), stmt, args...); err != nil {
		tb.Fatalf("insert row %d: %v", r.id, err)
	}
}

// assertFailingRows runs each rule's query and compares the ids it lists.
func assertFailingRows(t *testing.T, db *sql.DB, d rulesql.Dialect, rules []namedRule) {
	t.Helper()
	for _, nr := range rules {
		t.Run(nr.name, func(t *testing.T) {
			q, ok, reason, err := rulesql.FailingRowsSQL(nr.rule, d, 100)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				if nr.rule.Type == rulesql.TypePattern && reason == rulesql.ReasonPatternUnsupported {
					t.Skipf("%s has no regular expressions", d)
				}
				t.Fatalf("no query: %s", reason)
			}
			got := mustIDs(t, db, q)
			if want := oddFailing[nr.name]; !slices.Equal(got, want) {
				t.Errorf("failing ids = %v, want %v\n%s", got, want, q)
			}
			// The count a scan runs counts exactly the rows the query lists.
			if cq, ok, _, err := rulesql.CountSQL(nr.rule, d); err != nil {
				t.Fatal(err)
			} else if ok {
				var n int
				if err := db.QueryRowContext(context.Background(), cq).Scan(&n); err != nil {
					t.Fatalf("count: %v\n%s", err, cq)
				}
				if n != len(oddFailing[nr.name]) {
					t.Errorf("count = %d, want %d\n%s", n, len(oddFailing[nr.name]), cq)
				}
			}
		})
	}
}

// mustIDs runs q and returns the sorted values of its id column.
func mustIDs(tb testing.TB, db *sql.DB, q string) []int {
	tb.Helper()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		tb.Fatalf("run: %v\n%s", err, q)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	idAt := slices.Index(cols, "id")
	if idAt < 0 {
		tb.Fatalf("no id column in %v", cols)
	}
	ids := []int{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		id, err := strconv.Atoi(fmt.Sprint(asText(vals[idAt])))
		if err != nil {
			tb.Fatalf("id %v: %v", vals[idAt], err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("run: %v\n%s", err, q)
	}
	slices.Sort(ids)
	return ids
}

func asText(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

func randomSuffix(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// mustFreshPostgres creates a throw-away database on the local Postgres and drops it
// when the test ends.
func mustFreshPostgres(tb testing.TB) *sql.DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := sql.Open("pgx", pgAdminURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	if err := admin.PingContext(ctx); err != nil {
		tb.Skipf("no Postgres at 127.0.0.1:5432: %v", err)
	}
	name := "vigia_test_rulesql_" + randomSuffix(tb)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/"+name+"?sslmode=disable")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	return db
}

// mustFreshMySQL creates a throw-away database on the local MariaDB and drops it when
// the test ends; it returns the pool (on that database) and the database's name.
func mustFreshMySQL(tb testing.TB) (*sql.DB, string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := sql.Open("mysql", mysqlAdmin)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	if err := admin.PingContext(ctx); err != nil {
		tb.Skipf("no MariaDB at 127.0.0.1:3306: %v", err)
	}
	name := "vigia_test_rulesql_" + randomSuffix(tb)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
		tb.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", "127.0.0.1:3306", name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	return db, name
}
