package sqllineage

// The dialect-neutral query model. Each parser front end (postgres.go, mysql.go)
// translates its tree into these types; resolve.go walks them. Only what matters for
// lineage survives the translation: which names an expression reads, whether it is a
// bare column, and which subqueries feed it.

// statement is one parsed view definition.
type statement struct {
	q *query
	// viewCols are the column names of CREATE VIEW v (a, b, ...), which rename outputs.
	viewCols []string
	// dynamic is set when the SQL runs SQL held in a string (crosstab, dblink, a query
	// passed as text): what that SQL reads is invisible to the parser.
	dynamic bool
}

// query is a query expression: a SELECT, VALUES, or a set operation, with its WITH.
type query struct {
	ctes      []*cte
	recursive bool // WITH RECURSIVE

	core *selectCore // a SELECT or VALUES ...
	// ... or a set operation: output column i comes from column i of every branch.
	// The operators and their precedence do not change that, so branches are flat.
	branches []*query

	// filters of the set operation itself (ORDER BY, LIMIT); they name output columns.
	filters []filter
}

// cte is one WITH entry.
type cte struct {
	name string
	cols []string // WITH x (a, b) AS ...
	q    *query
}

// selectCore is one SELECT (or VALUES) without set operations.
type selectCore struct {
	targets []target
	from    []fromItem
	filters []filter
	// values holds the rows of a VALUES list; valueNames names its columns.
	values     [][]expr
	valueNames func(i int) string
}

// target is one item of the select list: an expression with its output name, or a
// star (* or t.*).
type target struct {
	name string
	star *qname
	e    expr
	// exclude and replace are DuckDB's * EXCLUDE (a, b) and * REPLACE (expr AS a):
	// columns of the star left out, and columns whose value the expression computes.
	exclude []string
	replace map[string]expr
}

// filter is an expression whose columns are used but not copied (WHERE, GROUP BY ...).
type filter struct {
	e expr
	// outputNames lets the expression name an output column by alias or by position,
	// as GROUP BY, HAVING and ORDER BY may.
	outputNames bool
}

// qname is a column reference as written: column, table.column, schema.table.column,
// or a star (table.* / *) when star is set (parts then hold only the qualifier).
type qname struct {
	parts []string
	star  bool
}

// expr is what lineage needs to know about an expression.
type expr struct {
	// bare is set when the whole expression is one column reference (parentheses
	// aside), the only shape that can be a Direct copy.
	bare *qname
	// refs are the references whose values flow into the result: arguments of
	// functions, operators, casts, CASE branches and conditions.
	refs []qname
	// shape are references that only shape the result: window PARTITION BY / ORDER BY,
	// aggregate FILTER and ORDER BY.
	shape []qname
	// subs are subqueries whose output columns flow into the result (scalar, ARRAY,
	// IN / ANY / ALL); shapeSubs only shape it (EXISTS).
	subs      []*query
	shapeSubs []*query
	// ordinal is n when the expression is the integer literal n (GROUP BY 1).
	ordinal int
}

// fromItem is one item of a FROM clause: *fromTable, *fromSubquery, *fromJoin or
// *fromFunc.
type fromItem interface{ isFromItem() }

// fromTable names a table, a view or a CTE.
type fromTable struct {
	schema, name string
	alias        string
	cols         []string // alias column list: t AS x (a, b)
	pos          int      // byte offset (or visit order) for Result.Sources ordering
}

// fromSubquery is a derived table, optionally LATERAL.
type fromSubquery struct {
	q       *query
	alias   string
	cols    []string
	lateral bool
}

// fromJoin joins two items.
type fromJoin struct {
	left, right fromItem
	kind        joinKind
	natural     bool
	using       []string
	usingAlias  string // JOIN ... USING (a) AS x (Postgres 14+)
	on          *expr
	alias       string // (a JOIN b) AS j
	cols        []string
}

// fromFunc is a function in FROM (unnest, generate_series, json_to_recordset ...):
// whatever columns it returns derive from its arguments.
type fromFunc struct {
	args  expr
	name  string
	alias string
	cols  []string // explicit column names, when the SQL gives them
}

func (*fromTable) isFromItem()    {}
func (*fromSubquery) isFromItem() {}
func (*fromJoin) isFromItem()     {}
func (*fromFunc) isFromItem()     {}

type joinKind int

const (
	joinInner joinKind = iota
	joinLeft
	joinRight
	joinFull
	joinCross
)
