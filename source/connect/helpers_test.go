package connect_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/vigia-data/vigia/source"
)

// marker is put in text values and in bad passwords; it must never come back.
const marker = "QZXMARKER7731"

const (
	pgAdminDSN    = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	mysqlAdminDSN = "root@tcp(127.0.0.1:3306)/"
)

// Column names that need quoting in every dialect.
const (
	colSegment = `select "x"` // low cardinality text
	colCode    = "cod`igo"    // low cardinality integer
)

// recorder keeps every QueryRecord.
type recorder struct {
	mu   sync.Mutex
	recs []source.QueryRecord
}

func (r *recorder) Record(_ context.Context, q source.QueryRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, q)
}

func (r *recorder) take() []source.QueryRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.recs
	r.recs = nil
	return out
}

// cliente is one row of the fixture table.
type cliente struct {
	id       int
	nome     string
	email    *string
	telefone string
	nif      string
	saldo    float64
	criado   time.Time
	segmento string
	codigo   int
	postal   string
	ativo    bool
}

// nif builds a NIF from eight digits with a correct (or, when bad, a wrong) check digit.
func nif(first8 string, bad bool) string {
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(first8[i]-'0') * (9 - i)
	}
	c := 11 - sum%11
	if c > 9 {
		c = 0
	}
	if bad {
		c = (c + 1) % 10
	}
	return first8 + strconv.Itoa(c)
}

var fixtureStart = time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)

// clientes builds n deterministic rows: unique id, nome holding the marker, 5% null emails,
// PT mobile numbers (a fifth with +351), NIFs with a wrong check digit in one row in ten,
// saldo, criado_em a minute apart, five segments, seven codes, postal codes, ativo.
func clientes(n int) []cliente {
	rows := make([]cliente, n)
	prefixes := []string{"91", "93", "96"}
	for i := range rows {
		id := i + 1
		r := cliente{
			id:       id,
			nome:     fmt.Sprintf("Cliente %s %d", marker, id),
			telefone: fmt.Sprintf("%s%07d", prefixes[id%3], (id*7919)%10000000),
			nif:      nif(fmt.Sprintf("2%07d", id*131), id%10 == 0),
			saldo:    float64((id*37)%100000)/100 - 100,
			criado:   fixtureStart.Add(time.Duration(id) * time.Minute),
			segmento: string(rune('A' + id%5)),
			codigo:   id % 7,
			postal:   fmt.Sprintf("%04d-%03d", 1000+id%9000, id%1000),
			ativo:    id%3 != 0,
		}
		if id%5 == 0 {
			r.telefone = "+351 " + r.telefone
		}
		if id%20 != 0 {
			e := fmt.Sprintf("cliente%d@exemplo.pt", id)
			r.email = &e
		}
		rows[i] = r
	}
	return rows
}

func minMaxSaldo(rows []cliente) (float64, float64) {
	lo, hi := rows[0].saldo, rows[0].saldo
	for _, r := range rows {
		lo, hi = min(lo, r.saldo), max(hi, r.saldo)
	}
	return lo, hi
}

// backend is one kind of source under test.
type backend struct {
	kind source.Kind
	// setup creates a fresh database with the fixture and returns its DSN and a writable
	// handle on it.
	setup func(tb testing.TB, rows []cliente) (dsn string, db *sql.DB)
	// badDSNs are DSNs carrying the marker that must fail without echoing it.
	badDSNs func(dsn string) []string
	// slowView creates a view whose count takes longer than a short statement timeout.
	slowView func(tb testing.TB, db *sql.DB)
}

func randomSuffix(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func mustExec(tb testing.TB, db *sql.DB, stmt string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(stmt, args...); err != nil {
		tb.Fatalf("exec %.80s: %v", stmt, err)
	}
}

// insertClientes inserts rows in batches; ph renders the k-th placeholder (1-based);
// conv adapts values the driver cannot take as they are.
func insertClientes(tb testing.TB, db *sql.DB, table string, cols []string, rows []cliente, ph func(k int) string, conv func(v any) any) {
	tb.Helper()
	const batch = 250
	for start := 0; start < len(rows); start += batch {
		end := min(start+batch, len(rows))
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
		var args []any
		for i, r := range rows[start:end] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			vals := []any{r.id, r.nome, r.email, r.telefone, r.nif, r.saldo, r.criado, r.segmento, r.codigo, r.postal, r.ativo}
			for j, v := range vals {
				if j > 0 {
					b.WriteString(", ")
				}
				if conv != nil {
					v = conv(v)
				}
				args = append(args, v)
				b.WriteString(ph(len(args)))
			}
			b.WriteString(")")
		}
		mustExec(tb, db, b.String(), args...)
	}
}

// freshPostgres creates a database that is dropped when the test ends, and returns its
// DSN and a pool on it (closed at the end too); it skips the test without a server.
func freshPostgres(tb testing.TB) (string, *sql.DB) {
	tb.Helper()
	admin, err := sql.Open("pgx", pgAdminDSN)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	if err := admin.Ping(); err != nil {
		tb.Skipf("postgres not reachable: %v", err)
	}
	name := "src_test_" + randomSuffix(tb)
	mustExec(tb, admin, "CREATE DATABASE "+name)
	tb.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	dsn := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return dsn, db
}

// freshMySQL is freshPostgres for MariaDB/MySQL; params are the pool's DSN parameters
// ("?parseTime=true"), not part of the DSN returned.
func freshMySQL(tb testing.TB, params string) (string, *sql.DB) {
	tb.Helper()
	admin, err := sql.Open("mysql", mysqlAdminDSN)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	if err := admin.Ping(); err != nil {
		tb.Skipf("mysql not reachable: %v", err)
	}
	name := "src_test_" + randomSuffix(tb)
	mustExec(tb, admin, "CREATE DATABASE "+name)
	tb.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name) })
	dsn := "root@tcp(127.0.0.1:3306)/" + name
	db, err := sql.Open("mysql", dsn+params)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return dsn, db
}

func pgBackend() backend {
	return backend{
		kind: source.Postgres,
		setup: func(tb testing.TB, rows []cliente) (string, *sql.DB) {
			tb.Helper()
			dsn, db := freshPostgres(tb)
			mustExec(tb, db, `CREATE TABLE clientes (id integer PRIMARY KEY, nome text NOT NULL, email text,
				telefone text, nif varchar(9), saldo numeric(12,2), criado_em timestamp,
				"select ""x""" text, "cod`+"`"+`igo" integer, codigo_postal text, ativo boolean)`)
			cols := []string{"id", "nome", "email", "telefone", "nif", "saldo", "criado_em", `"select ""x"""`, "\"cod`igo\"", "codigo_postal", "ativo"}
			insertClientes(tb, db, "clientes", cols, rows, func(k int) string { return "$" + strconv.Itoa(k) }, nil)
			mustExec(tb, db, `CREATE VIEW clientes_ativos AS SELECT id, nome, email FROM clientes WHERE ativo`)
			mustExec(tb, db, `CREATE MATERIALIZED VIEW saldos AS SELECT id, saldo FROM clientes`)
			mustExec(tb, db, `CREATE TABLE eventos (id integer, dia date NOT NULL, v integer) PARTITION BY RANGE (dia)`)
			mustExec(tb, db, `CREATE TABLE eventos_2024 PARTITION OF eventos FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')`)
			mustExec(tb, db, `INSERT INTO eventos SELECT g, date '2024-01-01' + (g % 300), g FROM generate_series(1, 3000) g`)
			mustExec(tb, db, `CLUSTER clientes USING clientes_pkey`)
			mustExec(tb, db, `ANALYZE`)
			return dsn, db
		},
		badDSNs: func(dsn string) []string {
			return []string{
				"postgres://postgres:" + marker + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
				"postgres://postgres:" + marker + "@127.0.0.1:5432/nodb_" + marker + "?sslmode=disable",
				"postgres://u:" + marker + "@[::1",
				"host=127.0.0.1 password=" + marker + " passfile=/etc/" + marker,
			}
		},
		slowView: func(tb testing.TB, db *sql.DB) {
			tb.Helper()
			mustExec(tb, db, `CREATE VIEW lenta AS SELECT g AS x FROM generate_series(1, 5) g, pg_sleep(3) s`)
		},
	}
}

func mysqlBackend() backend {
	return backend{
		kind: source.MySQL,
		setup: func(tb testing.TB, rows []cliente) (string, *sql.DB) {
			tb.Helper()
			dsn, db := freshMySQL(tb, "?parseTime=true")
			mustExec(tb, db, "CREATE TABLE clientes (id int PRIMARY KEY, nome varchar(200) NOT NULL, email varchar(200),"+
				" telefone varchar(30), nif varchar(9), saldo decimal(12,2), criado_em datetime,"+
				" `select \"x\"` varchar(10), `cod``igo` int, codigo_postal varchar(8), ativo boolean)")
			cols := []string{"id", "nome", "email", "telefone", "nif", "saldo", "criado_em", "`select \"x\"`", "`cod``igo`", "codigo_postal", "ativo"}
			insertClientes(tb, db, "clientes", cols, rows, func(int) string { return "?" }, nil)
			mustExec(tb, db, "CREATE VIEW clientes_ativos AS SELECT id, nome, email FROM clientes WHERE ativo")
			mustExec(tb, db, "CREATE TABLE eventos (id int NOT NULL, dia date NOT NULL, v int, PRIMARY KEY (id, dia))"+
				" PARTITION BY RANGE COLUMNS(dia) (PARTITION p0 VALUES LESS THAN ('2024-07-01'), PARTITION p1 VALUES LESS THAN (MAXVALUE))")
			mustExec(tb, db, "INSERT INTO eventos VALUES (1, '2024-01-01', 1), (2, '2024-08-01', 2)")
			return dsn, db
		},
		badDSNs: func(dsn string) []string {
			return []string{
				strings.Replace(dsn, "root@", "root:"+marker+"@", 1),
				"root:" + marker + "@tcp(127.0.0.1:1)/x?timeout=2s",
				"root:" + marker + "@tcp(127.0.0.1:3306",
			}
		},
		slowView: func(tb testing.TB, db *sql.DB) {
			tb.Helper()
			mustExec(tb, db, "CREATE VIEW lenta AS SELECT SLEEP(3) AS x")
		},
	}
}

func sqliteBackend() backend {
	return backend{
		kind: source.SQLite,
		setup: func(tb testing.TB, rows []cliente) (string, *sql.DB) {
			tb.Helper()
			path := filepath.Join(tb.TempDir(), "src_test_"+randomSuffix(tb)+".db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { db.Close() })
			mustExec(tb, db, `CREATE TABLE clientes (id INTEGER PRIMARY KEY, nome TEXT NOT NULL, email TEXT,
				telefone TEXT, nif VARCHAR(9), saldo NUMERIC(12,2), criado_em TIMESTAMP,
				"select ""x""" TEXT, "cod`+"`"+`igo" INTEGER, codigo_postal TEXT, ativo BOOLEAN)`)
			cols := []string{"id", "nome", "email", "telefone", "nif", "saldo", "criado_em", `"select ""x"""`, "\"cod`igo\"", "codigo_postal", "ativo"}
			insertClientes(tb, db, "clientes", cols, rows, func(int) string { return "?" }, func(v any) any {
				if t, ok := v.(time.Time); ok {
					return t.Format("2006-01-02 15:04:05")
				}
				return v
			})
			mustExec(tb, db, `CREATE VIEW "clientes_ativos" ("id", "nome", "email") AS SELECT id, nome, email FROM clientes WHERE ativo`)
			return path, db
		},
		badDSNs: func(dsn string) []string {
			return []string{
				filepath.Join(filepath.Dir(dsn), marker+".db"),
				"file://" + marker + "/x.db",
				":memory:",
			}
		},
		slowView: func(tb testing.TB, db *sql.DB) {
			tb.Helper()
			mustExec(tb, db, `CREATE VIEW lenta AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT x FROM c`)
		},
	}
}

// assertNoMarker fails when the marker appears in any string reachable from v.
func assertNoMarker(tb testing.TB, what string, v any) {
	tb.Helper()
	var walk func(path string, rv reflect.Value)
	walk = func(path string, rv reflect.Value) {
		switch rv.Kind() {
		case reflect.String:
			if strings.Contains(rv.String(), marker) {
				tb.Errorf("%s: marker found at %s", what, path)
			}
		case reflect.Pointer, reflect.Interface:
			if !rv.IsNil() {
				walk(path, rv.Elem())
			}
		case reflect.Struct:
			for i := 0; i < rv.NumField(); i++ {
				if rv.Type().Field(i).IsExported() {
					walk(path+"."+rv.Type().Field(i).Name, rv.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < rv.Len(); i++ {
				walk(fmt.Sprintf("%s[%d]", path, i), rv.Index(i))
			}
		case reflect.Map:
			for _, k := range rv.MapKeys() {
				walk(path+"[key]", k)
				walk(path+"[value]", rv.MapIndex(k))
			}
		}
	}
	walk(what, reflect.ValueOf(v))
}

func findTable(tb testing.TB, tables []source.Table, name string) source.Table {
	tb.Helper()
	for _, t := range tables {
		if t.Name == name {
			return t
		}
	}
	tb.Fatalf("table %s not discovered (got %d tables)", name, len(tables))
	return source.Table{}
}

func findColumn(tb testing.TB, cols []source.Column, name string) source.Column {
	tb.Helper()
	for _, c := range cols {
		if c.Name == name {
			return c
		}
	}
	tb.Fatalf("column %s not found", name)
	return source.Column{}
}

func findProfile(tb testing.TB, p *source.TableProfile, name string) source.ColumnProfile {
	tb.Helper()
	for _, c := range p.Columns {
		if c.Name == name {
			return c
		}
	}
	tb.Fatalf("column profile %s not found", name)
	return source.ColumnProfile{}
}
