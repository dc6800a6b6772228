package rulesql_test

import (
	"strings"
	"testing"

	"github.com/vigia-data/vigia/rulesql"
)

func BenchmarkFailingRowsSQL(b *testing.B) {
	vals := make([]string, rulesql.MaxValues)
	for i := range vals {
		vals[i] = "value-" + itoa(i)
	}
	tbl := rulesql.Table{Schema: "sales", Name: "orders"}
	cases := []struct {
		name string
		rule rulesql.Rule
	}{
		{"not_null", rulesql.Rule{Type: rulesql.TypeNotNull, Table: tbl, Columns: []string{"email"}}},
		{"unique3", rulesql.Rule{Type: rulesql.TypeUnique, Table: tbl, Columns: []string{"a", "b", "c"}}},
		{"accepted_values500", rulesql.Rule{Type: rulesql.TypeAcceptedValues, Table: tbl, Columns: []string{"s"}, Values: vals}},
		{"custom_sql4KB", rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: tbl,
			SQL: "SELECT COUNT(*) FROM sales.orders WHERE " + strings.Repeat("(a = 'x''y' OR b IN (SELECT c FROM d)) AND ", 90) + "TRUE"}},
	}
	for _, c := range cases {
		for _, d := range []rulesql.Dialect{rulesql.Postgres, rulesql.MySQL} {
			b.Run(c.name+"/"+string(d), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, ok, _, err := rulesql.FailingRowsSQL(c.rule, d, 100); err != nil || !ok {
						b.Fatal(ok, err)
					}
				}
			})
		}
	}
}
