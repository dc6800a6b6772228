package rulesql_test

import (
	"strconv"

	"github.com/vigia-data/vigia/rulesql"
)

// namedRule is a rule of a fixture with the name its golden section carries.
type namedRule struct {
	name string
	rule rulesql.Rule
}

func ptr(f float64) *float64 { return &f }

// goldenRules are one rule of every type (and a few variants) on an ordinary table;
// their text in every dialect is kept in testdata/golden.
func goldenRules() []namedRule {
	orders := rulesql.Table{Catalog: "analytics", Schema: "sales", Name: "orders"}
	customers := rulesql.Table{Catalog: "analytics", Schema: "sales", Name: "customers"}
	return []namedRule{
		{"not_null", rulesql.Rule{Type: rulesql.TypeNotNull, Table: orders, Columns: []string{"email"}}},
		{"unique", rulesql.Rule{Type: rulesql.TypeUnique, Table: orders, Columns: []string{"order_no"}}},
		{"unique_compound", rulesql.Rule{Type: rulesql.TypeUnique, Table: orders, Columns: []string{"customer_id", "order_no"}}},
		{"accepted_values", rulesql.Rule{Type: rulesql.TypeAcceptedValues, Table: orders, Columns: []string{"status"},
			Values: []string{"paid", "it's", `back\slash`}}},
		{"pattern", rulesql.Rule{Type: rulesql.TypePattern, Table: orders, Columns: []string{"email"},
			Pattern: `^[a-z0-9._]+@[a-z0-9-]+\.pt$`}},
		{"range", rulesql.Rule{Type: rulesql.TypeRange, Table: orders, Columns: []string{"amount"}, Min: ptr(0), Max: ptr(2500.5)}},
		{"range_min_only", rulesql.Rule{Type: rulesql.TypeRange, Table: orders, Columns: []string{"amount"}, Min: ptr(-10)}},
		{"range_max_only", rulesql.Rule{Type: rulesql.TypeRange, Table: orders, Columns: []string{"amount"}, Max: ptr(1e22)}},
		{"referential", rulesql.Rule{Type: rulesql.TypeReferential, Table: orders, Columns: []string{"customer_id"},
			RefTable: customers, RefColumn: "id"}},
		{"freshness", rulesql.Rule{Type: rulesql.TypeFreshness, Table: orders, Columns: []string{"updated_at"}, MaxAgeSeconds: 86400}},
		{"row_count_min", rulesql.Rule{Type: rulesql.TypeRowCountMin, Table: orders}},
		{"custom_sql", rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: orders,
			SQL: "SELECT COUNT(*) AS failing FROM sales.orders WHERE amount < 0 AND status <> 'void';"}},
		{"custom_sql_grouped", rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: orders,
			SQL: "SELECT COUNT(*) FROM sales.orders GROUP BY customer_id"}},
	}
}

// oddColumns are column names that break naive quoting in one dialect or another.
var oddColumns = struct{ quote, backtick, bracket string }{
	quote:    `select "x"`,
	backtick: "we`ird",
	bracket:  "br]acket",
}

// oddTableName is a table name with a double quote and a space.
const oddTableName = `order "items"`

// oddRules are rules on a table and columns with awkward names, as the live databases
// of the tests create them; customSQL is the custom_sql rule's text for the dialect.
func oddRules(schema, customSQL string) []namedRule {
	items := rulesql.Table{Schema: schema, Name: oddTableName}
	customers := rulesql.Table{Schema: schema, Name: "customers"}
	return []namedRule{
		{"not_null", rulesql.Rule{Type: rulesql.TypeNotNull, Table: items, Columns: []string{oddColumns.quote}}},
		{"unique", rulesql.Rule{Type: rulesql.TypeUnique, Table: items, Columns: []string{oddColumns.backtick, oddColumns.bracket}}},
		{"accepted_values", rulesql.Rule{Type: rulesql.TypeAcceptedValues, Table: items, Columns: []string{"status"},
			Values: []string{"paid", "it's", `back\slash`}}},
		{"pattern", rulesql.Rule{Type: rulesql.TypePattern, Table: items, Columns: []string{"email"},
			Pattern: `^[a-z]+@[a-z]+\.pt$`}},
		{"range", rulesql.Rule{Type: rulesql.TypeRange, Table: items, Columns: []string{"amount"}, Min: ptr(0), Max: ptr(100.5)}},
		{"referential", rulesql.Rule{Type: rulesql.TypeReferential, Table: items, Columns: []string{"customer_id"},
			RefTable: customers, RefColumn: "id"}},
		{"freshness", rulesql.Rule{Type: rulesql.TypeFreshness, Table: items, Columns: []string{"updated_at"}, MaxAgeSeconds: 86400}},
		{"custom_sql", rulesql.Rule{Type: rulesql.TypeCustomSQL, Table: items, SQL: customSQL}},
	}
}

// oddRows are the rows of the odd table, and oddFailing the ids each rule of oddRules
// lists. A nil field is NULL; ageHours is how old updated_at is.
type oddRow struct {
	id         int
	quote      *string
	status     *string
	email      *string
	amount     *float64
	customerID *int
	ageHours   *int
	backtick   *string
	bracket    *int
}

func s(v string) *string { return &v }
func n(v int) *int       { return &v }

func oddRows() []oddRow {
	return []oddRow{
		{1, s("a"), s("paid"), s("ana@mail.pt"), ptr(10), n(1), n(1), s("k1"), n(1)},
		// Uppercase fails the pattern even where the collation ignores case.
		{2, nil, s("it's"), s("BOB@mail.pt"), ptr(-5), n(99), n(48), s("k1"), n(1)},
		{3, s("c"), s("refunded"), nil, nil, nil, nil, s("k2"), nil},
		// Same key as row 3, but a NULL part is never a duplicate.
		{4, nil, nil, s("not an email"), ptr(100.5), n(2), n(72), s("k2"), nil},
		{5, s("e"), s(`back\slash`), s("eve@mail.pt"), ptr(101), n(2), n(1), s("k3"), n(2)},
		{6, s("f"), s("paid"), s("x@y.pt"), ptr(0), n(1), n(1), s("k1"), n(1)},
	}
}

// oddCustomSQLWhere is the custom_sql rule's condition; with the rows above it fails
// row 5 only.
const oddCustomSQLWhere = "amount > 100.5"

var oddFailing = map[string][]int{
	"not_null":        {2, 4},
	"unique":          {1, 2, 6},
	"accepted_values": {3},
	"pattern":         {2, 4},
	"range":           {2, 5},
	"referential":     {2},
	"freshness":       {2, 4},
	"custom_sql":      {5},
}

func itoa(i int) string { return strconv.Itoa(i) }
