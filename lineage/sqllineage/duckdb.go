package sqllineage

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/vigia-data/vigia/source"
)

// DuckDB definitions are parsed by DuckDB itself: json_serialize_sql turns a SELECT
// into DuckDB's parse tree as JSON. Running DuckDB needs cgo and the build tag
// `duckdb`, so the call lives in lineage/duckview; this file only reads the tree, in
// plain Go, into the same query model as the other dialects.

// DuckDB is the dialect of DuckDB databases and of the files a duckdb connection reads.
const DuckDB Dialect = "duckdb"

// fileTableFuncs read files: a view over read_parquet('sales/*.parquet') reads the file
// dataset source.FileDatasetName names, in schema source.FilesSchema.
var fileTableFuncs = map[string]bool{
	"read_parquet": true, "parquet_scan": true, "read_csv": true, "read_csv_auto": true,
	"read_json": true, "read_json_auto": true, "read_ndjson": true, "read_ndjson_auto": true,
}

// fileExtensions are the endings DuckDB's replacement scans read as a file when a
// quoted name in FROM is not a table ('sales.parquet', 'logs/*.json.gz').
var fileExtensions = []string{".parquet", ".parq", ".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".txt",
	".csv.gz", ".tsv.gz", ".json.gz", ".jsonl.gz", ".ndjson.gz", ".csv.zst", ".json.zst", ".parquet.gz"}

// duckDynamicFuncs run SQL given as text.
var duckDynamicFuncs = map[string]bool{"query": true, "query_table": true}

// AnalyzeDuckDBTree reads the JSON json_serialize_sql returned for one SELECT (the body
// of a DuckDB view) and returns its lineage. viewCols are the view's column list
// (CREATE VIEW v (a, b) AS ...), nil when it has none. A tree DuckDB marked as an
// error is ErrUnparsable, one that is not exactly one SELECT ErrNotAQuery; like
// Analyze, errors never carry the SQL.
func AnalyzeDuckDBTree(tree []byte, viewCols []string, cat Catalog) (Result, error) {
	if len(tree) > 4*MaxSQLBytes {
		return Result{}, ErrTooLarge
	}
	var doc struct {
		Error      bool `json:"error"`
		Statements []struct {
			Node map[string]any `json:"node"`
		} `json:"statements"`
	}
	dec := json.NewDecoder(bytes.NewReader(tree))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return Result{}, &ParseError{Dialect: DuckDB}
	}
	if doc.Error {
		return Result{}, &ParseError{Dialect: DuckDB}
	}
	if len(doc.Statements) != 1 || doc.Statements[0].Node == nil {
		return Result{}, ErrNotAQuery
	}
	c := &duckConv{cat: cat}
	st := &statement{q: c.query(doc.Statements[0].Node), viewCols: viewCols}
	st.dynamic = c.dynamic
	res := resolveStatement(DuckDB, st, cat)
	if c.starInExpr && !slices.Contains(res.Unresolved, ReasonStarUnknownTable) {
		res.Unresolved = append(res.Unresolved, ReasonStarUnknownTable)
	}
	return res, nil
}

type duckConv struct {
	cat     Catalog
	dynamic bool
	// starInExpr is set by a star inside an expression (COLUMNS(*), struct_pack(*)):
	// the columns it reads are not attributed.
	starInExpr bool
	lambdas    []map[string]bool // lambda parameters in scope, innermost last
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func strList(v any) []string {
	var out []string
	for _, x := range arr(v) {
		out = append(out, str(x))
	}
	return out
}

func location(m map[string]any) int {
	if n, ok := m["query_location"].(json.Number); ok {
		if i, err := n.Int64(); err == nil && i >= 0 && i < 1<<40 {
			return int(i)
		}
	}
	return 0
}

// query translates a QueryNode: SELECT_NODE, SET_OPERATION_NODE, RECURSIVE_CTE_NODE or
// CTE_NODE, with its WITH entries and modifiers.
func (c *duckConv) query(n map[string]any) *query {
	q := &query{}
	if n == nil {
		return q
	}
	for _, e := range arr(obj(n["cte_map"])["map"]) {
		em := obj(e)
		v := obj(em["value"])
		sub := obj(obj(v["query"])["node"])
		if obj(sub)["type"] == "RECURSIVE_CTE_NODE" {
			q.recursive = true
		}
		q.ctes = append(q.ctes, &cte{name: str(em["key"]), cols: strList(v["aliases"]), q: c.query(sub)})
	}
	var filters []filter
	for _, mod := range arr(n["modifiers"]) {
		mm := obj(mod)
		for _, o := range arr(mm["orders"]) {
			filters = append(filters, filter{e: c.expr(obj(obj(o)["expression"])), outputNames: true})
		}
		for _, k := range []string{"limit", "offset"} {
			if x := obj(mm[k]); x != nil {
				filters = append(filters, filter{e: c.expr(x)})
			}
		}
		for _, x := range arr(mm["distinct_on_targets"]) {
			filters = append(filters, filter{e: c.expr(obj(x)), outputNames: true})
		}
	}
	switch str(n["type"]) {
	case "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE":
		kids := arr(n["children"])
		if len(kids) == 0 {
			kids = []any{n["left"], n["right"]}
		}
		for _, k := range kids {
			bq := c.query(obj(k))
			if bq.core == nil && len(bq.ctes) == 0 && len(bq.filters) == 0 {
				q.branches = append(q.branches, bq.branches...)
			} else {
				q.branches = append(q.branches, bq)
			}
		}
		q.filters = filters
		return q
	case "CTE_NODE":
		// A materialized CTE wraps the query that uses it.
		inner := c.query(obj(n["child"]))
		inner.ctes = append(q.ctes, append([]*cte{{name: str(n["ctename"]), q: c.query(obj(n["query"]))}}, inner.ctes...)...)
		inner.filters = append(inner.filters, filters...)
		return inner
	}
	core := &selectCore{}
	q.core = core
	for _, t := range arr(n["select_list"]) {
		tm := obj(t)
		if str(tm["class"]) == "STAR" && !isTrue(tm["columns"]) && tm["expr"] == nil {
			star := &qname{star: true}
			if r := str(tm["relation_name"]); r != "" {
				star.parts = []string{r}
			}
			tg := target{star: star, exclude: strList(tm["exclude_list"])}
			for _, x := range arr(tm["exclude_list"]) {
				// DuckDB 1.5 writes qualified exclusions as objects.
				if xm := obj(x); xm != nil {
					if parts := strList(xm["column_names"]); len(parts) > 0 {
						tg.exclude = append(tg.exclude, parts[len(parts)-1])
					}
				}
			}
			for _, r := range arr(tm["replace_list"]) {
				rm := obj(r)
				if tg.replace == nil {
					tg.replace = map[string]expr{}
				}
				tg.replace[str(rm["key"])] = c.expr(obj(rm["value"]))
			}
			core.targets = append(core.targets, tg)
			continue
		}
		name := str(tm["alias"])
		if name == "" {
			name = duckName(tm)
		}
		core.targets = append(core.targets, target{name: name, e: c.expr(tm)})
	}
	if it := c.from(obj(n["from_table"])); it != nil {
		core.from = append(core.from, it)
	}
	for _, k := range []string{"where_clause"} {
		if x := obj(n[k]); x != nil {
			core.filters = append(core.filters, filter{e: c.expr(x)})
		}
	}
	for _, g := range arr(n["group_expressions"]) {
		core.filters = append(core.filters, filter{e: c.expr(obj(g)), outputNames: true})
	}
	for _, k := range []string{"having", "qualify"} {
		if x := obj(n[k]); x != nil {
			core.filters = append(core.filters, filter{e: c.expr(x), outputNames: true})
		}
	}
	core.filters = append(core.filters, filters...)
	return q
}

func isTrue(v any) bool { b, _ := v.(bool); return b }

// duckName names an unaliased select-list item as far as the tree tells: a column
// reference by its column. DuckDB names other expressions by their SQL text, which the
// caller may put back (lineage/duckview does, from the names DuckDB gives the columns).
func duckName(m map[string]any) string {
	if str(m["class"]) == "COLUMN_REF" {
		if parts := strList(m["column_names"]); len(parts) > 0 {
			return parts[len(parts)-1]
		}
	}
	if f := str(m["function_name"]); f != "" {
		return f
	}
	return "?column?"
}

// from translates a TableRef.
func (c *duckConv) from(n map[string]any) fromItem {
	if n == nil {
		return nil
	}
	alias := str(n["alias"])
	cols := strList(n["column_name_alias"])
	switch str(n["type"]) {
	case "BASE_TABLE":
		schema, name := str(n["schema_name"]), str(n["table_name"])
		if schema == "" && str(n["catalog_name"]) == "" && c.isFile(name) {
			if ds := source.FileDatasetName(name); ds != "" {
				schema, name = source.FilesSchema, ds
			}
		}
		return &fromTable{schema: schema, name: name, alias: alias, cols: cols, pos: location(n)}
	case "SUBQUERY":
		return &fromSubquery{q: c.query(obj(obj(n["subquery"])["node"])), alias: alias, cols: cols,
			lateral: true}
	case "JOIN":
		j := &fromJoin{left: c.from(obj(n["left"])), right: c.from(obj(n["right"])), alias: alias, cols: cols,
			using: strList(n["using_columns"])}
		switch str(n["join_type"]) {
		case "LEFT":
			j.kind = joinLeft
		case "RIGHT":
			j.kind = joinRight
		case "OUTER":
			j.kind = joinFull
		}
		switch str(n["ref_type"]) {
		case "NATURAL":
			j.natural = true
		case "CROSS", "POSITIONAL":
			j.kind = joinCross
		}
		if cond := obj(n["condition"]); cond != nil {
			e := c.expr(cond)
			j.on = &e
		}
		if j.left == nil || j.right == nil {
			return nil
		}
		return j
	case "TABLE_FUNCTION":
		fn := obj(n["function"])
		name := strings.ToLower(str(fn["function_name"]))
		if fileTableFuncs[name] {
			if ds := c.fileArg(fn); ds != "" {
				return &fromTable{schema: source.FilesSchema, name: ds, alias: alias, cols: cols, pos: location(n)}
			}
		}
		if duckDynamicFuncs[name] {
			c.dynamic = true
		}
		f := &fromFunc{name: name, alias: alias, cols: cols}
		c.walk(fn, &f.args, false)
		return f
	case "EXPRESSION_LIST":
		// VALUES in FROM: a derived table of constants (or outer references).
		sub := &query{core: &selectCore{valueNames: func(i int) string { return "col" + itoaDuck(i) }}}
		for _, row := range arr(n["values"]) {
			var exprs []expr
			for _, v := range arr(row) {
				exprs = append(exprs, c.expr(obj(v)))
			}
			sub.core.values = append(sub.core.values, exprs)
		}
		return &fromSubquery{q: sub, alias: alias, cols: cols}
	case "EMPTY", "EMPTY_FROM", "":
		return nil
	}
	// PIVOT, SHOW and the like: whatever they yield comes from what they read.
	f := &fromFunc{alias: alias, cols: cols}
	c.walk(n, &f.args, false)
	return f
}

func itoaDuck(i int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

// isFile reports whether an unqualified name in FROM reads a file, as DuckDB's
// replacement scan does: the catalog has no such table and the name reads as a path.
func (c *duckConv) isFile(name string) bool {
	if c.cat != nil {
		if _, ok := c.cat.Columns(TableRef{Name: name}); ok {
			return false
		}
	}
	low := strings.ToLower(name)
	for _, ext := range fileExtensions {
		if strings.HasSuffix(low, ext) {
			return true
		}
	}
	return false
}

// fileArg returns the file dataset a read_* call reads: its first argument, a path or
// a list of paths that all name the same dataset; "" otherwise.
func (c *duckConv) fileArg(fn map[string]any) string {
	kids := arr(fn["children"])
	if len(kids) == 0 {
		return ""
	}
	first := obj(kids[0])
	var paths []string
	switch {
	case str(first["class"]) == "CONSTANT":
		if p, ok := obj(first["value"])["value"].(string); ok {
			paths = append(paths, p)
		}
	case str(first["class"]) == "FUNCTION" && str(first["function_name"]) == "list_value":
		for _, k := range arr(first["children"]) {
			p, ok := obj(obj(k)["value"])["value"].(string)
			if !ok || str(obj(k)["class"]) != "CONSTANT" {
				return ""
			}
			paths = append(paths, p)
		}
	}
	ds := ""
	for i, p := range paths {
		n := source.FileDatasetName(p)
		if n == "" || (i > 0 && n != ds) {
			return ""
		}
		ds = n
	}
	return ds
}

// expr translates one expression.
func (c *duckConv) expr(n map[string]any) expr {
	var e expr
	if n == nil {
		return e
	}
	switch str(n["class"]) {
	case "COLUMN_REF":
		if !c.isLambdaParam(n) {
			qn := qname{parts: strList(n["column_names"])}
			e.bare = &qn
		}
	case "CONSTANT":
		if v, ok := obj(n["value"])["value"].(json.Number); ok {
			if i, err := v.Int64(); err == nil && i > 0 && i < 1<<20 {
				e.ordinal = int(i)
			}
		}
	}
	c.walk(n, &e, false)
	return e
}

func (c *duckConv) isLambdaParam(n map[string]any) bool {
	parts := strList(n["column_names"])
	if len(parts) != 1 {
		return false
	}
	for i := len(c.lambdas) - 1; i >= 0; i-- {
		if c.lambdas[i][strings.ToLower(parts[0])] {
			return true
		}
	}
	return false
}

// walk collects the references of v into e; shape marks a part that only shapes the
// value (window PARTITION BY / ORDER BY, aggregate FILTER and ORDER BY, EXISTS).
func (c *duckConv) walk(v any, e *expr, shape bool) {
	switch x := v.(type) {
	case []any:
		for _, it := range x {
			c.walk(it, e, shape)
		}
		return
	case map[string]any:
		c.walkNode(x, e, shape)
	}
}

func (c *duckConv) walkNode(n map[string]any, e *expr, shape bool) {
	switch str(n["class"]) {
	case "CONSTANT", "PARAMETER", "DEFAULT", "POSITIONAL_REFERENCE":
		return
	case "COLUMN_REF":
		if c.isLambdaParam(n) {
			return
		}
		qn := qname{parts: strList(n["column_names"])}
		if shape {
			e.shape = append(e.shape, qn)
		} else {
			e.refs = append(e.refs, qn)
		}
		return
	case "SUBQUERY":
		sub := c.query(obj(obj(n["subquery"])["node"]))
		if t := str(n["subquery_type"]); t == "EXISTS" || t == "NOT_EXISTS" || shape {
			e.shapeSubs = append(e.shapeSubs, sub)
		} else {
			e.subs = append(e.subs, sub)
		}
		c.walk(n["child"], e, shape)
		return
	case "FUNCTION":
		if duckDynamicFuncs[strings.ToLower(str(n["function_name"]))] {
			c.dynamic = true
		}
		c.walk(n["children"], e, shape)
		c.walk(n["filter"], e, true)
		c.walk(n["order_bys"], e, true)
		return
	case "WINDOW":
		c.walk(n["children"], e, shape)
		c.walk(n["default_expr"], e, shape)
		c.walk(n["offset_expr"], e, shape)
		for _, k := range []string{"partitions", "orders", "filter_expr", "start_expr", "end_expr", "arg_orders"} {
			c.walk(n[k], e, true)
		}
		return
	case "LAMBDA":
		params := map[string]bool{}
		lhs := obj(n["lhs"])
		for _, p := range append([]any{lhs}, arr(lhs["children"])...) {
			if parts := strList(obj(p)["column_names"]); len(parts) == 1 {
				params[strings.ToLower(parts[0])] = true
			}
		}
		c.lambdas = append(c.lambdas, params)
		c.walk(n["expr"], e, shape)
		c.lambdas = c.lambdas[:len(c.lambdas)-1]
		return
	case "STAR":
		// COLUMNS(*) or a star inside an expression: which columns it reads depends on
		// the relations' columns, which the walker cannot attach to an expression.
		c.starInExpr = true
		c.walk(n["expr"], e, shape)
		return
	}
	// Every other node (CASE, CAST, COMPARISON, CONJUNCTION, OPERATOR, BETWEEN,
	// COLLATE, order modifiers ...) derives from all the expressions inside it, read
	// in a fixed order so that the answer does not change from run to run.
	keys := make([]string, 0, len(n))
	for k := range n {
		if k != "value" && k != "cast_type" && k != "type" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		c.walk(n[k], e, shape)
	}
}
