package sqllineage_test

import (
	"fmt"
	"strings"
	"testing"

	pgquery "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

// wideJoinView builds a view over t0 joined with t1 … t20 (20 joins), each table with
// ten columns, the way a warehouse "wide fact" view looks: a CTE, aliases, CASE,
// arithmetic, unqualified names resolved through the catalog, an aggregate and a
// window function. quote is the identifier quote of the dialect.
func wideJoinView(joins int, quote string) (string, sqllineage.MapCatalog) {
	q := func(s string) string { return quote + s + quote }
	cat := sqllineage.MapCatalog{}
	for i := 0; i <= joins; i++ {
		var cols []string
		for c := 0; c < 10; c++ {
			cols = append(cols, fmt.Sprintf("c%d_%d", i, c))
		}
		cols = append(cols, "id", fmt.Sprintf("k%d", i))
		cat[fmt.Sprintf("t%d", i)] = cols
	}
	var sel, from []string
	for i := 0; i <= joins; i++ {
		a := fmt.Sprintf("a%d", i)
		sel = append(sel,
			fmt.Sprintf("%s.%s AS %s", q(a), q(fmt.Sprintf("c%d_0", i)), q(fmt.Sprintf("x%d", i))),
			fmt.Sprintf("c%d_1 * 2 + %s.%s AS %s", i, q(a), q(fmt.Sprintf("c%d_2", i)), q(fmt.Sprintf("y%d", i))),
			fmt.Sprintf("CASE WHEN c%d_3 > 0 THEN c%d_4 ELSE c%d_5 END AS %s", i, i, i, q(fmt.Sprintf("z%d", i))),
		)
		if i == 0 {
			from = append(from, fmt.Sprintf("base %s", q(a)))
			continue
		}
		from = append(from, fmt.Sprintf("LEFT JOIN %s %s ON %s.%s = a%d.%s",
			q(fmt.Sprintf("t%d", i)), q(a), q(a), q(fmt.Sprintf("k%d", i)), i-1, q("id")))
	}
	sel = append(sel, "sum(c0_6) OVER (PARTITION BY c1_7 ORDER BY c2_8) AS w")
	sql := "WITH base AS (SELECT * FROM t0 WHERE c0_9 IS NOT NULL)\nSELECT " + strings.Join(sel, ",\n  ") +
		"\nFROM " + strings.Join(from, "\n  ")
	return sql, cat
}

func TestWideJoinViewResolvesEveryColumn(t *testing.T) {
	for _, d := range []struct {
		dialect sqllineage.Dialect
		quote   string
	}{{pg, `"`}, {my, "`"}, {lite, "`"}} {
		t.Run(string(d.dialect), func(t *testing.T) {
			sql, cat := wideJoinView(20, d.quote)
			res, err := sqllineage.Analyze(d.dialect, sql, cat)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Sources) != 21 || len(res.Columns) != 21*3+1 || len(res.Unresolved) != 0 {
				t.Fatalf("sources %d, columns %d, unresolved %v", len(res.Sources), len(res.Columns), res.Unresolved)
			}
			for _, c := range res.Columns {
				if !c.Resolved || len(c.From) == 0 {
					t.Errorf("column %s: %+v", c.Name, c)
				}
			}
			if got := res.Columns[3*20+1].From; len(got) != 2 || got[0].String() != "t20.c20_1" {
				t.Errorf("y20 from %v", got)
			}
		})
	}
}

// BenchmarkAnalyze20Joins measures Analyze (parse + walk) on a 20-join view.
func BenchmarkAnalyze20Joins(b *testing.B) {
	for _, d := range []struct {
		dialect sqllineage.Dialect
		quote   string
	}{{pg, `"`}, {my, "`"}, {lite, "`"}} {
		sql, cat := wideJoinView(20, d.quote)
		b.Run(string(d.dialect), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(sql)))
			for b.Loop() {
				if _, err := sqllineage.Analyze(d.dialect, sql, cat); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseOnly20Joins measures the parsers alone on the same SQL, so that
// Analyze minus this is the cost of the walker.
func BenchmarkParseOnly20Joins(b *testing.B) {
	pgSQL, _ := wideJoinView(20, `"`)
	mySQL, _ := wideJoinView(20, "`")
	b.Run("postgres", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pgquery.Parse(pgSQL); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mysql", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := parser.New().Parse(mySQL, "", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWalkOnly20Joins measures the walker alone (scopes, joins, CTE, stars,
// catalog lookups) on an already parsed 20-join view.
func BenchmarkWalkOnly20Joins(b *testing.B) {
	for _, d := range []struct {
		dialect sqllineage.Dialect
		quote   string
	}{{pg, `"`}, {my, "`"}} {
		sql, cat := wideJoinView(20, d.quote)
		p, err := sqllineage.ParseForTest(d.dialect, sql)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(d.dialect), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := p.Resolve(cat); len(res.Columns) != 64 {
					b.Fatalf("%d columns", len(res.Columns))
				}
			}
		})
	}
}
