package connect_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// These tests compare what Profile and Discover report with what the database itself
// answers, on shapes real schemas have and fixtures shaped like the code's assumptions
// do not: INCLUDE columns in a key, numbers past 2^53, case-insensitive collations,
// names only the search path made resolvable, never-populated materialized views.

// queryString runs one query answering one text value.
func queryString(tb testing.TB, db *sql.DB, q string) string {
	tb.Helper()
	var s sql.NullString
	if err := db.QueryRow(q).Scan(&s); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return s.String
}

func queryInt(tb testing.TB, db *sql.DB, q string) int64 {
	tb.Helper()
	var n int64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestPrimaryKeyIsTheKeyColumnsOnly(t *testing.T) {
	dsn := newPostgres(t,
		`CREATE TABLE t (id int, a text, b int, PRIMARY KEY (id) INCLUDE (a))`,
		`CREATE TABLE u (x int, y int, z text, CONSTRAINT u_pk PRIMARY KEY (x, y) INCLUDE (z))`,
		`CREATE INDEX t_b ON t (b) INCLUDE (a)`, `CLUSTER t USING t_b`)
	src := mustOpen(t, source.Postgres, dsn, source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tt := findTable(t, tables, "t")
	if !findColumn(t, tt.Columns, "id").PrimaryKey || findColumn(t, tt.Columns, "a").PrimaryKey {
		t.Fatalf("t: id must be the only key column, not the INCLUDE column a: %+v", tt.Columns)
	}
	if !findColumn(t, tt.Columns, "b").Clustering || findColumn(t, tt.Columns, "a").Clustering {
		t.Fatalf("t: b clusters, a is only included: %+v", tt.Columns)
	}
	u := findTable(t, tables, "u")
	var keys []string
	for _, c := range u.Columns {
		if c.PrimaryKey {
			keys = append(keys, c.Name)
		}
	}
	if !slices.Equal(keys, []string{"x", "y"}) {
		t.Fatalf("u key columns %v, want [x y]", keys)
	}
}

// extremes are the values whose min/max must come back digit for digit.
const (
	bigintOver53 = "9007199254740993"
	bigintMax    = "9223372036854775807"
	bigintMin    = "-9223372036854775808"
	numericBig   = "12345678901234567890.1234567891"
	numericSmall = "-0.0000000001"
	unsignedMax  = "18446744073709551615"
)

func TestLargeNumbersKeepEveryDigit(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dsn := newPostgres(t,
			`CREATE TABLE n (id bigint, k bigint, amount numeric(38,10), f float8, r real)`,
			`INSERT INTO n VALUES (1, 1, 1, 0.1, 0.1), (`+bigintOver53+`, `+bigintOver53+`, `+numericBig+`, 1e300, 3.4e38),
				(`+bigintMax+`, 2, `+numericSmall+`, -2.5, 1.5), (`+bigintMin+`, 3, 0, 5e-324, -1)`)
		_, db := reopen(t, "pgx", dsn)
		checkExtremes(t, source.Postgres, dsn, db, "n", []string{"id", "k", "amount", "f", "r"}, func(col string) (string, string) {
			return queryString(t, db, `SELECT min(`+col+`)::text FROM n`), queryString(t, db, `SELECT max(`+col+`)::text FROM n`)
		})
	})
	t.Run("mysql", func(t *testing.T) {
		dsn := newMySQL(t,
			`CREATE TABLE n (id bigint, k bigint, u bigint unsigned, amount decimal(38,10), f float, d double)`,
			`INSERT INTO n VALUES (1, 1, 0, 1, 0.1, 0.1), (`+bigintOver53+`, `+bigintOver53+`, `+unsignedMax+`, `+numericBig+`, 3.14, 1e300),
				(`+bigintMax+`, 2, 9007199254740993, `+numericSmall+`, -2.5, -2.5), (`+bigintMin+`, 3, 1, 0, 1.5, 1e-300)`)
		_, db := reopen(t, "mysql", dsn)
		checkExtremes(t, source.MySQL, dsn, db, "n", []string{"id", "k", "u", "amount", "f", "d"}, func(col string) (string, string) {
			return queryString(t, db, "SELECT CAST(MIN("+col+") AS CHAR) FROM n"), queryString(t, db, "SELECT CAST(MAX("+col+") AS CHAR) FROM n")
		})
	})
	t.Run("sqlite", func(t *testing.T) {
		dsn := newSQLite(t, `CREATE TABLE n (id INTEGER, k INTEGER, f REAL)`,
			`INSERT INTO n VALUES (1, 1, 0.1), (`+bigintOver53+`, `+bigintOver53+`, 1e300), (`+bigintMax+`, 2, -2.5), (`+bigintMin+`, 3, 5e-324)`)
		_, db := reopen(t, "sqlite", dsn)
		checkExtremes(t, source.SQLite, dsn, db, "n", []string{"id", "k", "f"}, func(col string) (string, string) {
			// SQLite prints a REAL with 15 digits; compare values, not text, for floats.
			return queryString(t, db, `SELECT min(`+col+`) FROM n`), queryString(t, db, `SELECT max(`+col+`) FROM n`)
		})
	})
}

func reopen(tb testing.TB, driver, dsn string) (string, *sql.DB) {
	tb.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return dsn, db
}

// checkExtremes profiles table and compares each column's min and max, as exact values,
// with the database's own answer, and checks that past 2^53 they reach JSON as strings.
func checkExtremes(t *testing.T, kind source.Kind, dsn string, _ *sql.DB, table string, cols []string, truth func(col string) (string, string)) {
	t.Helper()
	src := mustOpen(t, kind, dsn, source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := src.Profile(context.Background(), findTable(t, tables, table), source.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range cols {
		c := findProfile(t, p, col)
		wantLo, wantHi := truth(col)
		for _, pair := range [][2]any{{c.Min, wantLo}, {c.Max, wantHi}} {
			got, want := pair[0].(*vigia.Decimal), pair[1].(string)
			if got == nil {
				t.Fatalf("%s %s: no extreme, the database says %s", kind, col, want)
			}
			wr, ok := vigia.Decimal(want).Rat()
			if !ok {
				wd, ok2 := vigia.ParseDecimal(want)
				if wr, ok = wd.Rat(); !ok || !ok2 {
					t.Fatalf("%s %s: database answer %q unreadable", kind, col, want)
				}
			}
			gr, ok := got.Rat()
			if !ok || gr.Cmp(wr) != 0 {
				t.Errorf("%s %s: profile says %s, the database %s", kind, col, *got, want)
			}
			b, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !got.ExactFloat() && string(b) != `"`+string(*got)+`"` {
				t.Errorf("%s %s: %s would lose digits as a JSON number, got %s", kind, col, *got, b)
			}
		}
	}
	for _, want := range []string{bigintOver53, bigintMax, bigintMin} {
		found := false
		for _, col := range cols {
			c := findProfile(t, p, col)
			if c.Max != nil && string(*c.Max) == want || c.Min != nil && string(*c.Min) == want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %s not among the extremes digit for digit", kind, want)
		}
	}
}

func TestDistinctFollowsTheCollation(t *testing.T) {
	ctx := context.Background()
	t.Run("mariadb case and accent insensitive", func(t *testing.T) {
		dsn := newMySQL(t,
			`CREATE TABLE c (id int PRIMARY KEY, ci varchar(40) COLLATE utf8mb4_general_ci, cs varchar(40) COLLATE utf8mb4_bin,
				ai varchar(40) COLLATE utf8mb4_unicode_ci, pad char(5) COLLATE utf8mb4_general_ci)`)
		_, db := reopen(t, "mysql", dsn)
		vals := []string{"Lisboa", "LISBOA", "lisboa", "Évora", "evora", "EVORA", "Porto", "porto ", "Faro"}
		for i := 0; i < 3000; i++ {
			v := vals[i%len(vals)]
			mustExec(t, db, "INSERT INTO c VALUES (?, ?, ?, ?, ?)", i+1, v, v, v, v[:min(len(v), 5)])
		}
		src := mustOpen(t, source.MySQL, dsn, source.Options{})
		tables, err := src.Discover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, depth := range []string{source.DepthStandard, source.DepthDeep} {
			// A sample larger than the table reads it whole: the estimate is then exact,
			// and must be the database's count.
			p, err := src.Profile(ctx, findTable(t, tables, "c"), source.ProfileRequest{Depth: depth, SampleSize: 5000})
			if err != nil {
				t.Fatal(err)
			}
			for _, col := range []string{"ci", "cs", "ai", "pad"} {
				want := queryInt(t, db, "SELECT COUNT(DISTINCT "+col+") FROM c")
				d := findProfile(t, p, col).Distinct
				if d == nil || int64(d.Value) != want || d.Estimated {
					t.Errorf("%s %s: distinct %+v, the database counts %d", depth, col, d, want)
				}
			}
		}
	})
	t.Run("postgres nondeterministic collation and citext", func(t *testing.T) {
		dsn := newPostgres(t,
			`CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`,
			`CREATE EXTENSION IF NOT EXISTS citext`,
			`CREATE TABLE c (id int PRIMARY KEY, ci text COLLATE ci, vci varchar(40) COLLATE ci, ct citext, plain text)`,
			`INSERT INTO c SELECT g, v, v, v, v FROM generate_series(1, 3000) g,
				LATERAL (SELECT (ARRAY['Lisboa','LISBOA','lisboa','Porto','PORTO','Faro'])[1 + g % 6] AS v) x`)
		_, db := reopen(t, "pgx", dsn)
		src := mustOpen(t, source.Postgres, dsn, source.Options{})
		tables, err := src.Discover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, err := src.Profile(ctx, findTable(t, tables, "c"), source.ProfileRequest{SampleSize: 5000})
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{"ci", "vci", "ct", "plain"} {
			want := queryInt(t, db, "SELECT count(DISTINCT "+col+") FROM c")
			d := findProfile(t, p, col).Distinct
			if d == nil || int64(d.Value) != want || d.Estimated {
				t.Errorf("%s: distinct %+v, the database counts %d", col, d, want)
			}
		}
	})
}

func TestViewDefinitionsNameEverySchema(t *testing.T) {
	dsn := newPostgres(t,
		`CREATE SCHEMA legacy`,
		`CREATE TABLE public.rental (id int PRIMARY KEY, amount numeric)`,
		`CREATE TABLE legacy.rental (id int PRIMARY KEY, note text)`,
		`CREATE TABLE public.p (id int, d date) PARTITION BY RANGE (d)`,
		`CREATE TABLE public.p_2024 PARTITION OF public.p FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')`,
		// Read back by a session whose search path holds both schemas, pg_get_viewdef
		// would print both tables as plain "rental".
		`CREATE VIEW legacy.big_rentals AS SELECT r.id, r.amount FROM public.rental r WHERE r.amount > 10`,
		`CREATE VIEW legacy.own_notes AS SELECT id, note FROM legacy.rental`,
		`CREATE VIEW public.p_direct AS SELECT id FROM public.p_2024`,
		`CREATE MATERIALIZED VIEW legacy.never_refreshed AS SELECT id FROM public.rental WITH NO DATA`)
	src := mustOpen(t, source.Postgres, dsn+"&search_path=legacy,public", source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"big_rentals": {"public.rental"}, "own_notes": {"legacy.rental"}, "p_direct": {"public.p"},
		"never_refreshed": {"public.rental"},
	} {
		v := findTable(t, tables, name)
		if !strings.Contains(v.ViewDefinition, want[0]) {
			t.Errorf("%s: definition %q does not name %s", name, v.ViewDefinition, want[0])
		}
		var got []string
		for _, d := range v.DependsOn {
			got = append(got, d.Schema+"."+d.Name)
		}
		if !v.DependsOnKnown || !slices.Equal(got, want) {
			t.Errorf("%s: depends on %v (known %v), pg_depend says %v", name, got, v.DependsOnKnown, want)
		}
	}
	// The session's own search path is left as the DSN set it.
	var n int64
	n, _, err = src.QueryInt(context.Background(), "SELECT count(*) FROM rental")
	if err != nil || n != 0 {
		t.Fatalf("unqualified read on the DSN's search path: %d %v", n, err)
	}
}

func TestNeverRefreshedMaterializedViewFailsAsNotPopulated(t *testing.T) {
	dsn := newPostgres(t, `CREATE TABLE t (id int)`, `CREATE MATERIALIZED VIEW mv AS SELECT id FROM t WITH NO DATA`)
	src := mustOpen(t, source.Postgres, dsn, source.Options{})
	tables, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Profile(context.Background(), findTable(t, tables, "mv"), source.ProfileRequest{})
	if !source.IsReason(err, source.ReasonNotPopulated) {
		t.Fatalf("profile of an unpopulated materialized view: %v, want %s", err, source.ReasonNotPopulated)
	}
}

func TestMySQLURLDSNs(t *testing.T) {
	dsn := newMySQL(t, `CREATE TABLE t (id int)`)
	db := strings.TrimPrefix(dsn, "root@tcp(127.0.0.1:3306)/")
	for _, u := range []string{
		"mysql://root@127.0.0.1:3306/" + db,
		"mysql://root:@127.0.0.1/" + db + "?timeout=5s",
		"mariadb://root@127.0.0.1:3306/" + db + "?charset=utf8mb4",
	} {
		if err := connect.ValidateDSN(source.MySQL, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		src := mustOpen(t, source.MySQL, u, source.Options{})
		if n, _, err := src.QueryInt(context.Background(), "SELECT COUNT(*) FROM t"); err != nil || n != 0 {
			t.Fatalf("%s: %d %v", u, n, err)
		}
		ns, database, ok := connect.ServerIdentity(source.MySQL, u)
		if !ok || ns != "mysql://127.0.0.1:3306" || database != db {
			t.Fatalf("%s: identity %s %s %v", u, ns, database, ok)
		}
	}
	for _, bad := range []string{"mysql://" + marker + "@/db", "mysql:///db", "mysql://h:99999999/db", "mysql://h/a/b", "mysql://h/db?tls=" + marker} {
		err := connect.ValidateDSN(source.MySQL, bad)
		if !source.IsReason(err, source.ReasonInvalidDSN) || strings.Contains(err.Error(), marker) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// Passwords with URL syntax in them arrive decoded.
	if _, _, ok := connect.ServerIdentity(source.MySQL, "mysql://u:p%40ss%2Fw@db.example:3307/shop"); !ok {
		t.Fatal("encoded password refused")
	}
}

func TestServerIdentityFollowsTheNamingSpec(t *testing.T) {
	for _, c := range []struct {
		kind     source.Kind
		dsn      string
		ns, db   string
		expectOK bool
	}{
		{source.Postgres, "postgres://u:secret@DB.Example.com/shop?sslmode=require", "postgres://db.example.com:5432", "shop", true},
		{source.Postgres, "host=10.0.0.5 port=6543 dbname=dw user=x password=y", "postgres://10.0.0.5:6543", "dw", true},
		{source.MySQL, "u:secret@tcp(mariadb.local:3307)/sales", "mysql://mariadb.local:3307", "sales", true},
		{source.MySQL, "u@unix(/run/mysqld.sock)/sales", "", "", false},
	} {
		ns, db, ok := connect.ServerIdentity(c.kind, c.dsn)
		if ok != c.expectOK || ns != c.ns || db != c.db {
			t.Errorf("%s %s: %q %q %v", c.kind, c.dsn, ns, db, ok)
		}
		if strings.Contains(ns, "secret") {
			t.Errorf("identity carries a credential: %s", ns)
		}
	}
}

// TestTakeoverCancelsTheDeadAttemptsStatements runs a long statement under one label
// (the dead attempt) and cancels it from another connection of the same scan.
func TestTakeoverCancelsTheDeadAttemptsStatements(t *testing.T) {
	for _, c := range []struct {
		kind  source.Kind
		dsn   func(t *testing.T) string
		sleep string
	}{
		{source.Postgres, func(t *testing.T) string { return newPostgres(t) }, "SELECT count(*) FROM pg_sleep(60)"},
		{source.MySQL, func(t *testing.T) string { return newMySQL(t) }, "SELECT COUNT(*) FROM (SELECT SLEEP(60) AS s) x"},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			dsn := c.dsn(t)
			dead := mustOpen(t, c.kind, dsn, source.Options{Label: "vigia scan abc 1", StatementTimeout: 90 * time.Second})
			other := mustOpen(t, c.kind, dsn, source.Options{Label: "vigia scan xyz 1", StatementTimeout: 90 * time.Second})
			next := mustOpen(t, c.kind, dsn, source.Options{Label: "vigia scan abc 2"})
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := time.Now()
			for i, s := range []source.Source{dead, other} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _, errs[i] = s.QueryInt(context.Background(), c.sleep)
				}()
			}
			// cancel retries until the statement labelled prefix has started (the
			// goroutines above may not have sent it yet).
			cancel := func(prefix string) (int, error) {
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					n, err := next.CancelLabelled(context.Background(), prefix)
					if err != nil || n > 0 || time.Now().After(deadline) {
						return n, err
					}
				}
			}
			if n, err := cancel("vigia scan abc "); err != nil || n != 1 {
				t.Fatalf("cancelled %d statements, err %v; want the dead attempt's one", n, err)
			}
			// The other scan's statement was left running: cancel it ourselves to end the
			// test (it was not among those cancelled above, or this would find none).
			if m, err := cancel("vigia scan xyz "); err != nil || m != 1 {
				t.Fatalf("other scan: %d %v", m, err)
			}
			wg.Wait()
			if errs[0] == nil || time.Since(start) > 30*time.Second {
				t.Fatalf("the dead attempt's statement was not cut short: %v after %s", errs[0], time.Since(start))
			}
		})
	}
}

// TestUniqueIsADeclaredSingleColumnKey: a column is unique when it alone is the key of a
// unique constraint or index without a predicate; a composite, partial or expression
// index makes no column unique, and neither does a plain index. The primary key's only
// column is unique too.
func TestUniqueIsADeclaredSingleColumnKey(t *testing.T) {
	cases := []struct {
		kind  source.Kind
		dsn   func(t *testing.T) string
		table string
	}{
		{source.Postgres, func(t *testing.T) string {
			return newPostgres(t, `CREATE TABLE k (id int PRIMARY KEY, email text UNIQUE, a int, b int, c text, d text, e int, UNIQUE (a, b))`,
				`CREATE UNIQUE INDEX k_c ON k (c) WHERE c <> ''`, `CREATE UNIQUE INDEX k_d ON k (lower(d))`, `CREATE INDEX k_e ON k (e)`,
				`CREATE UNIQUE INDEX k_e_incl ON k (e) INCLUDE (a)`)
		}, "k"},
		{source.MySQL, func(t *testing.T) string {
			return newMySQL(t, `CREATE TABLE k (id int PRIMARY KEY, email varchar(100) UNIQUE, a int, b int, c text, d text, e int,
				UNIQUE KEY k_ab (a, b), KEY k_c (c(10)), UNIQUE KEY k_e (e))`)
		}, "k"},
		{source.SQLite, func(t *testing.T) string {
			return newSQLite(t, `CREATE TABLE k (id INTEGER PRIMARY KEY, email TEXT UNIQUE, a INT, b INT, c TEXT, d TEXT, e INT, UNIQUE (a, b))`,
				`CREATE UNIQUE INDEX k_c ON k (c) WHERE c <> ''`, `CREATE UNIQUE INDEX k_d ON k (lower(d))`, `CREATE UNIQUE INDEX k_e ON k (e)`)
		}, "k"},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			src := mustOpen(t, c.kind, c.dsn(t), source.Options{})
			tables, err := src.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var unique []string
			for _, col := range findTable(t, tables, c.table).Columns {
				if col.Unique {
					unique = append(unique, col.Name)
				}
			}
			if !slices.Equal(unique, []string{"id", "email", "e"}) {
				t.Fatalf("unique columns %v, want [id email e]", unique)
			}
		})
	}
}

// Declared foreign keys, single-column and composite, across schemas on Postgres, with
// SQLite's implicit reference to the parent's primary key; the same answer on each engine.
func TestDiscoverReadsDeclaredForeignKeys(t *testing.T) {
	cases := []struct {
		kind   source.Kind
		dsn    func(t *testing.T) string
		refSch string
		named  bool
	}{
		{source.Postgres, func(t *testing.T) string {
			return newPostgres(t, `CREATE SCHEMA ref`, `CREATE TABLE ref.paises (codigo text PRIMARY KEY)`,
				`CREATE TABLE clientes (id int PRIMARY KEY, pais text REFERENCES ref.paises (codigo))`,
				`CREATE TABLE linhas (fatura int, n int, PRIMARY KEY (fatura, n))`,
				`CREATE TABLE notas (id int PRIMARY KEY, cliente_id int, fatura int, n int,
					CONSTRAINT notas_cliente FOREIGN KEY (cliente_id) REFERENCES clientes (id) NOT VALID,
					CONSTRAINT notas_linha FOREIGN KEY (fatura, n) REFERENCES linhas (fatura, n))`)
		}, "ref", true},
		{source.MySQL, func(t *testing.T) string {
			return newMySQL(t, `CREATE TABLE paises (codigo varchar(2) PRIMARY KEY)`,
				`CREATE TABLE clientes (id int PRIMARY KEY, pais varchar(2), CONSTRAINT clientes_pais FOREIGN KEY (pais) REFERENCES paises (codigo))`,
				`CREATE TABLE linhas (fatura int, n int, PRIMARY KEY (fatura, n))`,
				`CREATE TABLE notas (id int PRIMARY KEY, cliente_id int, fatura int, n int,
					CONSTRAINT notas_cliente FOREIGN KEY (cliente_id) REFERENCES clientes (id),
					CONSTRAINT notas_linha FOREIGN KEY (fatura, n) REFERENCES linhas (fatura, n))`)
		}, "", true},
		{source.SQLite, func(t *testing.T) string {
			return newSQLite(t, `CREATE TABLE paises (codigo TEXT PRIMARY KEY)`,
				`CREATE TABLE clientes (id INTEGER PRIMARY KEY, pais TEXT REFERENCES paises)`,
				`CREATE TABLE linhas (fatura INT, n INT, PRIMARY KEY (fatura, n))`,
				`CREATE TABLE notas (id INTEGER PRIMARY KEY, cliente_id INT, fatura INT, n INT,
					FOREIGN KEY (cliente_id) REFERENCES clientes (id), FOREIGN KEY (fatura, n) REFERENCES linhas (fatura, n))`)
		}, "main", false},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			src := mustOpen(t, c.kind, c.dsn(t), source.Options{})
			tables, err := src.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			cl := findTable(t, tables, "clientes")
			if len(cl.ForeignKeys) != 1 {
				t.Fatalf("clientes: %+v", cl.ForeignKeys)
			}
			fk := cl.ForeignKeys[0]
			refSch := c.refSch
			if refSch == "" {
				refSch = cl.Schema
			}
			if fk.References != (source.TableName{Schema: refSch, Name: "paises"}) || !slices.Equal(fk.Columns, []string{"pais"}) ||
				!slices.Equal(fk.RefColumns, []string{"codigo"}) || fk.Name == "" {
				t.Fatalf("clientes' key %+v", fk)
			}
			notas := findTable(t, tables, "notas")
			if len(notas.ForeignKeys) != 2 {
				t.Fatalf("notas: %+v", notas.ForeignKeys)
			}
			var single, composite *source.ForeignKey
			for i, k := range notas.ForeignKeys {
				if len(k.Columns) == 1 {
					single = &notas.ForeignKeys[i]
				} else {
					composite = &notas.ForeignKeys[i]
				}
			}
			if single == nil || composite == nil || single.References.Name != "clientes" || single.References.Schema != notas.Schema ||
				!slices.Equal(single.RefColumns, []string{"id"}) || composite.References.Name != "linhas" ||
				!slices.Equal(composite.Columns, []string{"fatura", "n"}) || !slices.Equal(composite.RefColumns, []string{"fatura", "n"}) {
				t.Fatalf("notas' keys %+v", notas.ForeignKeys)
			}
			if c.named && (single.Name != "notas_cliente" || composite.Name != "notas_linha") {
				t.Fatalf("names %q %q", single.Name, composite.Name)
			}
			if len(findTable(t, tables, "linhas").ForeignKeys) != 0 {
				t.Fatal("linhas has no key")
			}
			// Indexed: primary keys lead theirs; notas.cliente_id has none (MySQL and
			// MariaDB index every foreign key themselves).
			var indexed []string
			for _, col := range notas.Columns {
				if col.Indexed {
					indexed = append(indexed, col.Name)
				}
			}
			want := []string{"id"}
			if c.kind == source.MySQL {
				want = []string{"id", "cliente_id", "fatura"}
			}
			if !slices.Equal(indexed, want) || !findColumn(t, findTable(t, tables, "linhas").Columns, "fatura").Indexed {
				t.Fatalf("indexed columns of notas %v, want %v", indexed, want)
			}
		})
	}
}
