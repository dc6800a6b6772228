package rulesql_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/rulesql"
)

func TestQuoteIdentKeepsOddNamesWhole(t *testing.T) {
	want := map[rulesql.Dialect][3]string{ // select "x", we`ird, br]acket
		rulesql.Postgres:   {`"select ""x"""`, "\"we`ird\"", `"br]acket"`},
		rulesql.Snowflake:  {`"select ""x"""`, "\"we`ird\"", `"br]acket"`},
		rulesql.SQLite:     {`"select ""x"""`, "\"we`ird\"", `"br]acket"`},
		rulesql.DuckDB:     {`"select ""x"""`, "\"we`ird\"", `"br]acket"`},
		rulesql.MySQL:      {"`select \"x\"`", "`we``ird`", "`br]acket`"},
		rulesql.Databricks: {"`select \"x\"`", "`we``ird`", "`br]acket`"},
		rulesql.BigQuery:   {"`select \"x\"`", "`we\\`ird`", "`br]acket`"},
		rulesql.MSSQL:      {`[select "x"]`, "[we`ird]", `[br]]acket]`},
	}
	names := [3]string{oddColumns.quote, oddColumns.backtick, oddColumns.bracket}
	for _, d := range rulesql.Dialects() {
		for i, name := range names {
			t.Run(string(d)+"/"+name, func(t *testing.T) {
				if got := rulesql.QuoteIdent(d, name); got != want[d][i] {
					t.Errorf("QuoteIdent = %s, want %s", got, want[d][i])
				}
			})
		}
	}
}

func TestQuoteIdentEscapesControlCharactersInBigQuery(t *testing.T) {
	got := rulesql.QuoteIdent(rulesql.BigQuery, "a\nb\\c\x01")
	if want := "`a\\nb\\\\c\\u0001`"; got != want {
		t.Errorf("QuoteIdent = %s, want %s", got, want)
	}
}

func TestQuoteStringEscapesQuotesAndBackslashesPerDialect(t *testing.T) {
	const in = `it's a \d`
	want := map[rulesql.Dialect]string{
		rulesql.Postgres:   `'it''s a \d'`,
		rulesql.SQLite:     `'it''s a \d'`,
		rulesql.DuckDB:     `'it''s a \d'`,
		rulesql.MSSQL:      `N'it''s a \d'`,
		rulesql.MySQL:      `'it''s a \\d'`,
		rulesql.Snowflake:  `'it''s a \\d'`,
		rulesql.BigQuery:   `'it\'s a \\d'`,
		rulesql.Databricks: `'it\'s a \\d'`,
	}
	for _, d := range rulesql.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			if got := rulesql.QuoteString(d, in); got != want[d] {
				t.Errorf("QuoteString = %s, want %s", got, want[d])
			}
		})
	}
}

func TestQuoteStringEscapesNewlinesInBigQuery(t *testing.T) {
	if got, want := rulesql.QuoteString(rulesql.BigQuery, "a\r\nb\t"), `'a\r\nb\t'`; got != want {
		t.Errorf("QuoteString = %s, want %s", got, want)
	}
}

func TestFailingRowsSQLQuotesOddColumnsInEveryDialect(t *testing.T) {
	for _, d := range rulesql.Dialects() {
		for _, col := range []string{oddColumns.quote, oddColumns.backtick, oddColumns.bracket} {
			t.Run(string(d)+"/"+col, func(t *testing.T) {
				r := rulesql.Rule{Type: rulesql.TypeNotNull, Table: rulesql.Table{Name: "t"}, Columns: []string{col}}
				sql := mustSQL(t, r, d)
				if want := "\nWHERE " + rulesql.QuoteIdent(d, col) + " IS NULL"; !strings.Contains(sql, want) {
					t.Errorf("query lacks %q:\n%s", want, sql)
				}
			})
		}
	}
}

func TestHeaderCommentCannotBeEndedByANewlineInAName(t *testing.T) {
	evil := rulesql.Table{Schema: "s\r\nDROP TABLE x; --", Name: "t\u2028\nDELETE FROM y"}
	for _, d := range rulesql.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			r := rulesql.Rule{Type: rulesql.TypeNotNull, Table: evil, Columns: []string{"c\nd"}}
			sql := mustSQL(t, r, d)
			head, rest, _ := strings.Cut(sql, "\n")
			if !strings.HasPrefix(head, "-- Vigia failing rows: rule not_null on ") || !strings.HasSuffix(head, "(dialect "+string(d)+")") {
				t.Errorf("header line broken: %q", head)
			}
			if strings.ContainsAny(head, "\r\u2028") {
				t.Errorf("header holds a line terminator: %q", head)
			}
			if !strings.HasPrefix(rest, "SELECT ") {
				t.Errorf("second line is not the query: %q", rest)
			}
		})
	}
}

func TestFailingRowsSQLHasNoRowQueryForDatasetWideRules(t *testing.T) {
	long := make([]string, 501)
	for i := range long {
		long[i] = "v" + itoa(i)
	}
	tbl := rulesql.Table{Schema: "s", Name: "t"}
	cases := []struct {
		name   string
		rule   rulesql.Rule
		reason string
	}{
		{"rowCountMin", rulesql.Rule{Type: rulesql.TypeRowCountMin, Table: tbl}, rulesql.ReasonRowCountMin},
		{"acceptedValues501", rulesql.Rule{Type: rulesql.TypeAcceptedValues, Table: tbl, Columns: []string{"c"}, Values: long}, rulesql.ReasonValueListTooLong},
		{"stream", rulesql.Rule{Type: rulesql.TypeNotNull, Table: tbl, Columns: []string{"c"}, Stream: true}, rulesql.ReasonStreamRule},
		{"unknownType", rulesql.Rule{Type: "volume_anomaly", Table: tbl}, rulesql.ReasonUnsupportedRule},
		{"customGrouped", rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: tbl, SQL: "SELECT COUNT(*) FROM t GROUP BY a"}, rulesql.ReasonCustomSQLNotRowLevel},
	}
	for _, d := range rulesql.Dialects() {
		for _, c := range cases {
			t.Run(string(d)+"/"+c.name, func(t *testing.T) {
				sql, ok, reason, err := rulesql.FailingRowsSQL(c.rule, d, 100)
				if err != nil || ok || sql != "" || reason != c.reason {
					t.Errorf("got (%q, %v, %q, %v), want no query with reason %s", sql, ok, reason, err, c.reason)
				}
			})
		}
	}
}

func TestAcceptedValuesAtTheLimitStillHasAQuery(t *testing.T) {
	vals := make([]string, rulesql.MaxValues)
	for i := range vals {
		vals[i] = "v" + itoa(i)
	}
	r := rulesql.Rule{Type: rulesql.TypeAcceptedValues, Table: rulesql.Table{Name: "t"}, Columns: []string{"c"}, Values: vals}
	sql := mustSQL(t, r, rulesql.Postgres)
	if !strings.Contains(sql, "'v499')") {
		t.Errorf("last value missing:\n%s", sql)
	}
}

func TestPatternHasNoQueryWhereTheDialectHasNoRegex(t *testing.T) {
	r := rulesql.Rule{Type: rulesql.TypePattern, Table: rulesql.Table{Name: "t"}, Columns: []string{"c"}, Pattern: "^a"}
	for _, d := range []rulesql.Dialect{rulesql.MSSQL} {
		_, ok, reason, err := rulesql.FailingRowsSQL(r, d, 10)
		if err != nil || ok || reason != rulesql.ReasonPatternUnsupported {
			t.Errorf("%s: got ok=%v reason=%q err=%v", d, ok, reason, err)
		}
	}
}

func TestLimitIsClampedToOneThroughAThousand(t *testing.T) {
	r := rulesql.Rule{Type: rulesql.TypeNotNull, Table: rulesql.Table{Name: "t"}, Columns: []string{"c"}}
	cases := []struct {
		d     rulesql.Dialect
		limit int
		want  string
	}{
		{rulesql.Postgres, 0, "\nLIMIT 1;"},
		{rulesql.Postgres, -5, "\nLIMIT 1;"},
		{rulesql.Postgres, 1000, "\nLIMIT 1000;"},
		{rulesql.Postgres, 5000, "\nLIMIT 1000;"},
		{rulesql.MSSQL, 5000, "SELECT TOP (1000) *"},
		{rulesql.MSSQL, 7, "SELECT TOP (7) *"},
	}
	for _, c := range cases {
		sql, ok, _, err := rulesql.FailingRowsSQL(r, c.d, c.limit)
		if err != nil || !ok || !strings.Contains(sql, c.want) {
			t.Errorf("%s limit %d: want %q in:\n%s", c.d, c.limit, c.want, sql)
		}
	}
}

func TestUnknownDialectIsInvalid(t *testing.T) {
	r := rulesql.Rule{Type: rulesql.TypeNotNull, Table: rulesql.Table{Name: "t"}, Columns: []string{"c"}}
	_, _, _, err := rulesql.FailingRowsSQL(r, "oracle", 10)
	if !vigia.IsKind(err, vigia.KindInvalid) {
		t.Errorf("err = %v, want KindInvalid", err)
	}
}

func TestParseDialectAcceptsOnlyContractNames(t *testing.T) {
	for _, d := range rulesql.Dialects() {
		if got, ok := rulesql.ParseDialect(string(d)); !ok || got != d {
			t.Errorf("ParseDialect(%q) = %q, %v", d, got, ok)
		}
	}
	for _, s := range []string{"", "Postgres", "postgresql", "oracle", "sqlserver"} {
		if _, ok := rulesql.ParseDialect(s); ok {
			t.Errorf("ParseDialect(%q) accepted", s)
		}
	}
}

func TestMalformedRulesAreInvalidRuleErrors(t *testing.T) {
	tbl := rulesql.Table{Name: "t"}
	cases := []struct {
		name string
		rule rulesql.Rule
	}{
		{"noTable", rulesql.Rule{Type: rulesql.TypeNotNull, Columns: []string{"c"}}},
		{"noColumn", rulesql.Rule{Type: rulesql.TypeNotNull, Table: tbl}},
		{"uniqueEmptyColumn", rulesql.Rule{Type: rulesql.TypeUnique, Table: tbl, Columns: []string{"a", ""}}},
		{"noValues", rulesql.Rule{Type: rulesql.TypeAcceptedValues, Table: tbl, Columns: []string{"c"}}},
		{"noPattern", rulesql.Rule{Type: rulesql.TypePattern, Table: tbl, Columns: []string{"c"}}},
		{"noBounds", rulesql.Rule{Type: rulesql.TypeRange, Table: tbl, Columns: []string{"c"}}},
		{"minAboveMax", rulesql.Rule{Type: rulesql.TypeRange, Table: tbl, Columns: []string{"c"}, Min: ptr(2), Max: ptr(1)}},
		{"noRef", rulesql.Rule{Type: rulesql.TypeReferential, Table: tbl, Columns: []string{"c"}}},
		{"zeroAge", rulesql.Rule{Type: rulesql.TypeFreshness, Table: tbl, Columns: []string{"c"}}},
		{"hugeAge", rulesql.Rule{Type: rulesql.TypeFreshness, Table: tbl, Columns: []string{"c"}, MaxAgeSeconds: 1 << 40}},
		{"noSQL", rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: tbl, SQL: "  "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ok, _, err := rulesql.FailingRowsSQL(c.rule, rulesql.Postgres, 10)
			if ok || !errors.Is(err, rulesql.ErrInvalidRule) || !vigia.IsKind(err, vigia.KindInternal) {
				t.Errorf("ok=%v err=%v, want an internal ErrInvalidRule", ok, err)
			}
		})
	}
}

func TestRangeRejectsNonFiniteBounds(t *testing.T) {
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		r := rulesql.Rule{Type: rulesql.TypeRange, Table: rulesql.Table{Name: "t"}, Columns: []string{"c"}, Max: ptr(v)}
		if _, _, _, err := rulesql.FailingRowsSQL(r, rulesql.Postgres, 10); !errors.Is(err, rulesql.ErrInvalidRule) {
			t.Errorf("max %v: err = %v, want ErrInvalidRule", v, err)
		}
	}
}

func mustSQL(tb testing.TB, r rulesql.Rule, d rulesql.Dialect) string {
	tb.Helper()
	sql, ok, reason, err := rulesql.FailingRowsSQL(r, d, 100)
	if err != nil || !ok {
		tb.Fatalf("FailingRowsSQL(%s): ok=%v reason=%q err=%v", d, ok, reason, err)
	}
	return sql
}
