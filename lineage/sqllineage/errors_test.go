package sqllineage_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

// secret stands for a customer value held in a view's literal; no error may echo it.
const secret = "4111-1111-1111-1111"

func TestAnalyzeFailsWithFixedMessages(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dialect sqllineage.Dialect
		sql     string
		want    error
	}{
		{"UnparsableWithOffset", pg, `SELECT amount FROM orders WHERE card = '` + secret + `' AND (`, sqllineage.ErrUnparsable},
		{"UnparsableTypo", pg, `SELEC amount FROM orders WHERE card = '` + secret + `'`, sqllineage.ErrUnparsable},
		{"Unparsable", my, "select `amount` from `shop`.`orders` where `card` = '" + secret + "' and (", sqllineage.ErrUnparsable},
		{"Unparsable", lite, `CREATE VIEW v AS SELECT amount FROM orders INDEXED BY ix WHERE card = '` + secret + `'`, sqllineage.ErrUnparsable},
		{"NotAQuery", pg, `DELETE FROM orders WHERE card = '` + secret + `'`, sqllineage.ErrNotAQuery},
		{"NotAQuery", my, "delete from `shop`.`orders` where `card` = '" + secret + "'", sqllineage.ErrNotAQuery},
		{"TwoStatements", pg, `SELECT 1; SELECT '` + secret + `'`, sqllineage.ErrNotAQuery},
		{"TwoStatements", my, "select 1; select '" + secret + "'", sqllineage.ErrNotAQuery},
		{"Empty", pg, "  ", sqllineage.ErrNotAQuery},
		{"Empty", my, "", sqllineage.ErrNotAQuery},
		{"UnknownDialect", sqllineage.Dialect("oracle"), `SELECT '` + secret + `' FROM dual`, sqllineage.ErrUnsupportedDialect},
		{"TooLarge", pg, "SELECT '" + secret + strings.Repeat(" ", sqllineage.MaxSQLBytes) + "'", sqllineage.ErrTooLarge},
	} {
		t.Run(string(tc.dialect)+"/"+tc.name, func(t *testing.T) {
			res, err := sqllineage.Analyze(tc.dialect, tc.sql, shopCatalog())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "orders") {
				t.Errorf("error message carries SQL text: %q", err.Error())
			}
			if res.ColumnLevel || len(res.Columns) > 0 {
				t.Errorf("a failed analysis returned lineage: %+v", res)
			}
		})
	}
}

func TestParseErrorReportsOffsetOnly(t *testing.T) {
	_, err := sqllineage.Analyze(pg, `SELECT amount FROM orders WHERE card = '`+secret+`' AND (`, nil)
	var pe *sqllineage.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *ParseError", err)
	}
	if pe.Dialect != pg || pe.Offset <= 0 {
		t.Errorf("ParseError = %+v, want postgres with an offset", pe)
	}
}

func TestNestedRecursiveCTEsStopAtTheWorkBudget(t *testing.T) {
	// Each level's recursive step holds the next level, and its lineage needs a few
	// rounds to settle, so the work grows as 3^depth without a budget.
	sql := "SELECT 1"
	for k := 1; k <= 14; k++ {
		sql = fmt.Sprintf("WITH RECURSIVE r%d(a, b) AS (SELECT id, amount FROM orders UNION ALL SELECT b, a + (%s) FROM r%d) SELECT a FROM r%d", k, sql, k, k)
	}
	res, err := sqllineage.Analyze(pg, sql, shopCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Unresolved, sqllineage.ReasonTooComplex) {
		t.Errorf("unresolved = %v, want %s", res.Unresolved, sqllineage.ReasonTooComplex)
	}
	for _, c := range res.Columns {
		if c.Resolved {
			t.Errorf("column %s resolved past the budget", c.Name)
		}
	}
}

func TestAnalyzeIsSafeForConcurrentUse(t *testing.T) {
	cases := []struct {
		d   sqllineage.Dialect
		sql string
	}{{pg, pgOrdersEnriched}, {my, myOrdersEnriched}, {lite, liteOrdersEnriched}, {pg, "SELEC"}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 20; i++ {
				tc := cases[(g+i)%len(cases)]
				res, err := sqllineage.Analyze(tc.d, tc.sql, shopCatalog())
				if tc.sql == "SELEC" {
					if !errors.Is(err, sqllineage.ErrUnparsable) {
						errs <- fmt.Errorf("want ErrUnparsable, got %v", err)
					}
					continue
				}
				if err != nil || len(res.Columns) != 5 {
					errs <- fmt.Errorf("%s: %v, %d columns", tc.d, err, len(res.Columns))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
