package connect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// QueryInt is the path rule evaluation takes: one read-only statement, one integer, the
// statement timeout, the query log and the error reduction of every other statement.
func TestQueryIntRunsOneReadOnlyCount(t *testing.T) {
	rows := clientes(200)
	for _, b := range backends() {
		t.Run(string(b.kind), func(t *testing.T) {
			t.Parallel()
			dsn, db := b.setup(t, rows)
			ctx := context.Background()
			rec := &recorder{}
			src, err := connect.Open(ctx, b.kind, dsn, source.Options{Recorder: rec})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { src.Close() })
			quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
			if b.kind == source.MySQL {
				quote = func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
			}
			rec.take()

			t.Run("CountIsExactAndLogged", func(t *testing.T) {
				n, ok, err := src.QueryInt(ctx, "SELECT COUNT(*) FROM clientes WHERE email IS NULL")
				if err != nil || !ok || n != 10 {
					t.Fatalf("got %d %v %v; want 10", n, ok, err)
				}
				logged := rec.take()
				if len(logged) != 1 || logged[0].Operation != source.OpScan || logged[0].Rows != 1 || logged[0].Err {
					t.Fatalf("query log %+v", logged)
				}
				if !strings.Contains(logged[0].Statement, "COUNT(*)") {
					t.Fatalf("statement %q", logged[0].Statement)
				}
			})
			t.Run("OperationComesFromTheContext", func(t *testing.T) {
				if _, _, err := src.QueryInt(source.WithOperation(ctx, source.OpTest), "SELECT 1"); err != nil {
					t.Fatal(err)
				}
				if logged := rec.take(); len(logged) != 1 || logged[0].Operation != source.OpTest {
					t.Fatalf("query log %+v", logged)
				}
			})
			t.Run("QuotedOddColumn", func(t *testing.T) {
				n, ok, err := src.QueryInt(ctx, "SELECT COUNT("+quote(colSegment)+") FROM clientes")
				if err != nil || !ok || n != 200 {
					t.Fatalf("got %d %v %v", n, ok, err)
				}
			})
			t.Run("NullIsNotOK", func(t *testing.T) {
				n, ok, err := src.QueryInt(ctx, "SELECT MAX(id) FROM clientes WHERE id < 0")
				if err != nil || ok || n != 0 {
					t.Fatalf("got %d %v %v", n, ok, err)
				}
			})
			t.Run("DecimalWithZeroFractionIsAnInteger", func(t *testing.T) {
				n, ok, err := src.QueryInt(ctx, "SELECT FLOOR(SUM(saldo) * 0 + 42) FROM clientes")
				if err != nil || !ok || n != 42 {
					t.Fatalf("got %d %v %v", n, ok, err)
				}
			})
			t.Run("NotOneIntegerIsABadResult", func(t *testing.T) {
				for _, stmt := range []string{
					"SELECT id FROM clientes",                 // many rows
					"SELECT id FROM clientes WHERE id < 0",    // no row
					"SELECT COUNT(*), COUNT(*) FROM clientes", // two columns
					"SELECT nome FROM clientes WHERE id = 1",  // text holding the marker
					"SELECT AVG(saldo) + 0.5 FROM clientes",   // a fraction
				} {
					_, _, err := src.QueryInt(ctx, stmt)
					if !source.IsReason(err, source.ReasonResult) {
						t.Errorf("%s: got %v; want %s", stmt, err, source.ReasonResult)
					}
					assertNoMarker(t, "error", err)
				}
				for _, r := range rec.take() {
					assertNoMarker(t, "query log", r)
				}
			})
			t.Run("WritesAreRefused", func(t *testing.T) {
				stmt := "DELETE FROM clientes WHERE id = 1"
				if b.kind == source.Postgres {
					stmt = "WITH d AS (DELETE FROM clientes WHERE id = 1 RETURNING id) SELECT COUNT(*) FROM d"
				}
				_, _, err := src.QueryInt(ctx, stmt)
				if err == nil {
					t.Fatal("a write ran")
				}
				var n int
				if err := db.QueryRow("SELECT COUNT(*) FROM clientes").Scan(&n); err != nil || n != 200 {
					t.Fatalf("rows now %d (%v)", n, err)
				}
				assertNoMarker(t, "error", err)
			})
			t.Run("MissingTableIsReduced", func(t *testing.T) {
				_, _, err := src.QueryInt(ctx, "SELECT COUNT(*) FROM no_such_table_"+marker)
				var se *source.Error
				if err == nil || !asSourceError(err, &se) || se.Reason == "" {
					t.Fatalf("got %v", err)
				}
				assertNoMarker(t, "error", err)
				if b.kind != source.SQLite && se.Reason != source.ReasonNotFound {
					t.Errorf("reason %s; want not_found", se.Reason)
				}
			})
			t.Run("StatementTimeoutApplies", func(t *testing.T) {
				b.slowView(t, db)
				short, err := connect.Open(ctx, b.kind, dsn, source.Options{StatementTimeout: 300 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer short.Close()
				_, _, err = short.QueryInt(ctx, "SELECT COUNT(*) FROM lenta")
				if !source.IsReason(err, source.ReasonTimeout) {
					t.Fatalf("got %v; want timeout", err)
				}
			})
			t.Run("ClosedSourceRefuses", func(t *testing.T) {
				other, err := connect.Open(ctx, b.kind, dsn, source.Options{})
				if err != nil {
					t.Fatal(err)
				}
				other.Close()
				if _, _, err := other.QueryInt(ctx, "SELECT 1"); !source.IsReason(err, source.ReasonClosed) {
					t.Fatalf("got %v", err)
				}
			})
		})
	}
}

func asSourceError(err error, target **source.Error) bool {
	e, ok := err.(*source.Error)
	if ok {
		*target = e
	}
	return ok
}
