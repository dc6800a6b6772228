package connect_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// benchRows is the size of the benchmark table; the lead's 5M-row benchmark lives
// elsewhere, this one keeps `go test -bench` under a minute.
const benchRows = 200000

// benchSetup creates the benchmark table with generated rows and returns a DSN.
type benchSetup func(b *testing.B) (source.Kind, string)

func benchSQLite(b *testing.B) (source.Kind, string) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	mustExec(b, db, `CREATE TABLE clientes (id INTEGER PRIMARY KEY, nome TEXT, email TEXT, telefone TEXT,
		nif TEXT, saldo NUMERIC, criado_em TIMESTAMP, segmento TEXT, codigo INTEGER)`)
	mustExec(b, db, fmt.Sprintf(`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d)
		INSERT INTO clientes SELECT i, 'Cliente ' || i, CASE WHEN i %% 20 = 0 THEN NULL ELSE 'c' || i || '@exemplo.pt' END,
		'91' || (1000000 + (i * 7919) %% 9000000), '2' || (10000000 + i), (i * 37 %% 100000) / 100.0,
		datetime('2024-01-01', '+' || i || ' minutes'), char(65 + i %% 5), i %% 7 FROM g`, benchRows))
	return source.SQLite, path
}

func benchPostgres(b *testing.B) (source.Kind, string) {
	b.Helper()
	dsn, db := freshPostgres(b)
	mustExec(b, db, `CREATE TABLE clientes (id integer PRIMARY KEY, nome text, email text, telefone text,
		nif text, saldo numeric(12,2), criado_em timestamp, segmento text, codigo integer)`)
	mustExec(b, db, fmt.Sprintf(`INSERT INTO clientes SELECT i, 'Cliente ' || i,
		CASE WHEN i %% 20 = 0 THEN NULL ELSE 'c' || i || '@exemplo.pt' END,
		'91' || (1000000 + (i * 7919) %% 9000000), '2' || (10000000 + i), (i * 37 %% 100000) / 100.0,
		timestamp '2024-01-01' + i * interval '1 minute', chr(65 + i %% 5), i %% 7
		FROM generate_series(1, %d) i`, benchRows))
	mustExec(b, db, "ANALYZE clientes")
	return source.Postgres, dsn
}

func benchMySQL(b *testing.B) (source.Kind, string) {
	b.Helper()
	dsn, db := freshMySQL(b, "")
	mustExec(b, db, `CREATE TABLE clientes (id int PRIMARY KEY, nome varchar(100), email varchar(100), telefone varchar(20),
		nif varchar(9), saldo decimal(12,2), criado_em datetime, segmento varchar(1), codigo int)`)
	// Six cross-joined digit tables count to a million without recursion limits.
	digits := "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4" +
		" UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	gen := "(SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 100000 * h.d AS i FROM " +
		digits + " a, " + digits + " b, " + digits + " c, " + digits + " e, " + digits + " f, " + digits + " h) g"
	mustExec(b, db, fmt.Sprintf(`INSERT INTO clientes
		SELECT i, CONCAT('Cliente ', i), IF(i %% 20 = 0, NULL, CONCAT('c', i, '@exemplo.pt')),
		CONCAT('91', 1000000 + (i * 7919) %% 9000000), CONCAT('2', 10000000 + i), (i * 37 %% 100000) / 100.0,
		TIMESTAMPADD(MINUTE, i, '2024-01-01'), CHAR(65 + i %% 5), i %% 7 FROM %s WHERE i <= %d`, gen, benchRows))
	return source.MySQL, dsn
}

// BenchmarkProfile measures one Profile of a 200k-row table per depth and kind: one
// aggregate statement plus one 10k-row sample reduced in Go.
func BenchmarkProfile(b *testing.B) {
	for _, setup := range []struct {
		name string
		fn   benchSetup
	}{{"sqlite", benchSQLite}, {"postgres", benchPostgres}, {"mysql", benchMySQL}} {
		b.Run(setup.name, func(b *testing.B) {
			kind, dsn := setup.fn(b)
			ctx := context.Background()
			src, err := connect.Open(ctx, kind, dsn, source.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			tables, err := src.Discover(ctx)
			if err != nil {
				b.Fatal(err)
			}
			t := findTable(b, tables, "clientes")
			for _, depth := range []string{source.DepthBasic, source.DepthStandard, source.DepthDeep} {
				b.Run(depth, func(b *testing.B) {
					for b.Loop() {
						p, err := src.Profile(ctx, t, source.ProfileRequest{Depth: depth})
						if err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(float64(p.SampleSize), "sampled_rows")
					}
				})
			}
		})
	}
}
