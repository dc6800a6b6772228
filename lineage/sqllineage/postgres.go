package sqllineage

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// parsePostgres parses sql with the Postgres parser. For SQLite, sql is the rewritten
// text and original what the catalog held (same length, same offsets), from which
// unaliased expression columns take their names as SQLite does.
func parsePostgres(sql, original string, d Dialect) (*statement, error) {
	tree, err := pg.Parse(sql)
	if err != nil {
		// The parser's message quotes the SQL near the error: keep only the offset.
		pe := &ParseError{Dialect: d}
		var perr *pgparser.Error
		if errors.As(err, &perr) && perr.Cursorpos > 0 {
			pe.Offset = perr.Cursorpos
		}
		return nil, pe
	}
	if len(tree.GetStmts()) != 1 {
		return nil, ErrNotAQuery
	}
	c := &pgConv{d: d, src: sql, original: original}
	st := &statement{}
	switch s := tree.Stmts[0].GetStmt().GetNode().(type) {
	case *pg.Node_SelectStmt:
		st.q = c.query(s.SelectStmt)
	case *pg.Node_ViewStmt:
		sel := s.ViewStmt.GetQuery().GetSelectStmt()
		if sel == nil {
			return nil, ErrNotAQuery
		}
		st.q = c.query(sel)
		st.viewCols = strs(s.ViewStmt.GetAliases())
	case *pg.Node_CreateTableAsStmt:
		// CREATE MATERIALIZED VIEW (and CREATE TABLE AS, which reads the same way).
		sel := s.CreateTableAsStmt.GetQuery().GetSelectStmt()
		if sel == nil {
			return nil, ErrNotAQuery
		}
		st.q = c.query(sel)
		st.viewCols = strs(s.CreateTableAsStmt.GetInto().GetColNames())
	default:
		return nil, ErrNotAQuery
	}
	st.dynamic = c.dynamic
	return st, nil
}

// dynamicSQLFuncs run SQL given as text (tablefunc, dblink, the SQL/XML mapping
// functions): what that SQL reads is not in the view's parse tree.
var dynamicSQLFuncs = map[string]bool{
	"crosstab": true, "crosstab2": true, "crosstab3": true, "crosstab4": true, "connectby": true,
	"dblink": true, "dblink_exec": true, "dblink_open": true, "dblink_send_query": true,
	"query_to_xml": true, "query_to_xmlschema": true, "query_to_xml_and_xmlschema": true,
	"table_to_xml": true, "table_to_xmlschema": true, "table_to_xml_and_xmlschema": true,
}

// dynamicSQLFunc reports whether a call runs SQL held in a string: a known function, or
// any function given a string literal that reads as a query (SELECT, WITH, TABLE,
// VALUES ...), the way a user-defined function running EXECUTE is called.
func dynamicSQLFunc(name string, args []*pg.Node) bool {
	if dynamicSQLFuncs[strings.ToLower(name)] {
		return true
	}
	for _, a := range args {
		if sv := a.GetAConst().GetSval(); sv != nil && looksLikeQuery(sv.GetSval()) {
			return true
		}
	}
	return false
}

// looksLikeQuery reports whether text reads as a query that reads tables: SELECT or
// WITH ... FROM, or TABLE name.
func looksLikeQuery(text string) bool {
	f := strings.Fields(strings.ToLower(strings.TrimLeft(text, " \t\r\n(")))
	if len(f) < 2 {
		return false
	}
	switch f[0] {
	case "select", "with":
		return slices.Contains(f[2:], "from")
	case "table":
		return true
	}
	return false
}

type pgConv struct {
	d        Dialect
	src      string
	original string
	dynamic  bool            // a call runs SQL held in a string (see dynamicSQLFunc)
	tokens   []*pg.ScanToken // scanned on first need (SQLite column names)
	scanned  bool
}

// strs returns the String values of a list of String nodes.
func strs(nodes []*pg.Node) []string {
	var out []string
	for _, n := range nodes {
		if s := n.GetString_(); s != nil {
			out = append(out, s.GetSval())
		}
	}
	return out
}

func (c *pgConv) query(s *pg.SelectStmt) *query {
	q := &query{}
	if s == nil {
		return q
	}
	if w := s.GetWithClause(); w != nil {
		q.recursive = w.GetRecursive()
		for _, n := range w.GetCtes() {
			ce := n.GetCommonTableExpr()
			if ce == nil {
				continue
			}
			q.ctes = append(q.ctes, &cte{
				name: ce.GetCtename(),
				cols: strs(ce.GetAliascolnames()),
				q:    c.query(ce.GetCtequery().GetSelectStmt()),
			})
		}
	}
	if s.GetOp() != pg.SetOperation_SETOP_NONE && s.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED {
		for _, b := range []*pg.SelectStmt{s.GetLarg(), s.GetRarg()} {
			bq := c.query(b)
			if bq.core == nil && len(bq.ctes) == 0 && len(bq.filters) == 0 {
				q.branches = append(q.branches, bq.branches...)
			} else {
				q.branches = append(q.branches, bq)
			}
		}
		for _, n := range s.GetSortClause() {
			q.filters = append(q.filters, filter{e: c.expr(n), outputNames: true})
		}
		q.filters = c.appendLimit(q.filters, s)
		return q
	}
	core := &selectCore{}
	q.core = core
	if vl := s.GetValuesLists(); len(vl) > 0 {
		for _, row := range vl {
			var exprs []expr
			for _, item := range row.GetList().GetItems() {
				exprs = append(exprs, c.expr(item))
			}
			core.values = append(core.values, exprs)
		}
		core.valueNames = func(i int) string { return "column" + strconv.Itoa(i+1) }
		return q
	}
	for _, n := range s.GetTargetList() {
		rt := n.GetResTarget()
		if rt == nil {
			continue
		}
		if cr := rt.GetVal().GetColumnRef(); cr != nil && isStar(cr) {
			qn := qnameOf(cr)
			core.targets = append(core.targets, target{star: &qn})
			continue
		}
		name := rt.GetName()
		if name == "" {
			name = c.targetName(rt)
		}
		core.targets = append(core.targets, target{name: name, e: c.expr(rt.GetVal())})
	}
	for _, n := range s.GetFromClause() {
		if it := c.from(n); it != nil {
			core.from = append(core.from, it)
		}
	}
	if w := s.GetWhereClause(); w != nil {
		core.filters = append(core.filters, filter{e: c.expr(w)})
	}
	for _, n := range s.GetGroupClause() {
		core.filters = append(core.filters, filter{e: c.expr(n), outputNames: true})
	}
	if h := s.GetHavingClause(); h != nil {
		core.filters = append(core.filters, filter{e: c.expr(h), outputNames: true})
	}
	for _, n := range s.GetDistinctClause() {
		if n.GetNode() != nil {
			core.filters = append(core.filters, filter{e: c.expr(n), outputNames: true})
		}
	}
	for _, n := range s.GetWindowClause() {
		var e expr
		c.walk(n, &e, true)
		core.filters = append(core.filters, filter{e: e})
	}
	for _, n := range s.GetSortClause() {
		core.filters = append(core.filters, filter{e: c.expr(n), outputNames: true})
	}
	core.filters = c.appendLimit(core.filters, s)
	return q
}

func (c *pgConv) appendLimit(fs []filter, s *pg.SelectStmt) []filter {
	for _, n := range []*pg.Node{s.GetLimitCount(), s.GetLimitOffset()} {
		if n != nil {
			fs = append(fs, filter{e: c.expr(n)})
		}
	}
	return fs
}

func isStar(cr *pg.ColumnRef) bool {
	f := cr.GetFields()
	return len(f) > 0 && f[len(f)-1].GetAStar() != nil
}

func qnameOf(cr *pg.ColumnRef) qname {
	var qn qname
	for _, f := range cr.GetFields() {
		if s := f.GetString_(); s != nil {
			qn.parts = append(qn.parts, s.GetSval())
		} else if f.GetAStar() != nil {
			qn.star = true
		}
	}
	return qn
}

func (c *pgConv) from(n *pg.Node) fromItem {
	switch v := n.GetNode().(type) {
	case *pg.Node_RangeVar:
		rv := v.RangeVar
		return &fromTable{
			schema: rv.GetSchemaname(),
			name:   rv.GetRelname(),
			alias:  rv.GetAlias().GetAliasname(),
			cols:   strs(rv.GetAlias().GetColnames()),
			pos:    int(rv.GetLocation()),
		}
	case *pg.Node_RangeSubselect:
		rs := v.RangeSubselect
		return &fromSubquery{
			q:       c.query(rs.GetSubquery().GetSelectStmt()),
			alias:   rs.GetAlias().GetAliasname(),
			cols:    strs(rs.GetAlias().GetColnames()),
			lateral: rs.GetLateral(),
		}
	case *pg.Node_JoinExpr:
		je := v.JoinExpr
		j := &fromJoin{
			left:       c.from(je.GetLarg()),
			right:      c.from(je.GetRarg()),
			natural:    je.GetIsNatural(),
			using:      strs(je.GetUsingClause()),
			usingAlias: je.GetJoinUsingAlias().GetAliasname(),
			alias:      je.GetAlias().GetAliasname(),
			cols:       strs(je.GetAlias().GetColnames()),
		}
		switch je.GetJointype() {
		case pg.JoinType_JOIN_LEFT:
			j.kind = joinLeft
		case pg.JoinType_JOIN_RIGHT:
			j.kind = joinRight
		case pg.JoinType_JOIN_FULL:
			j.kind = joinFull
		}
		if q := je.GetQuals(); q != nil {
			e := c.expr(q)
			j.on = &e
		}
		if j.left == nil || j.right == nil {
			return nil
		}
		return j
	case *pg.Node_RangeFunction:
		rf := v.RangeFunction
		f := &fromFunc{alias: rf.GetAlias().GetAliasname(), cols: strs(rf.GetAlias().GetColnames())}
		for _, item := range rf.GetFunctions() {
			// Each item is a list: the call, then its column definition list.
			parts := item.GetList().GetItems()
			if len(parts) == 0 {
				continue
			}
			c.walk(parts[0], &f.args, false)
			if f.name == "" {
				if fc := parts[0].GetFuncCall(); fc != nil {
					f.name = lastString(fc.GetFuncname())
				}
			}
			if len(parts) > 1 && len(f.cols) == 0 {
				for _, cd := range parts[1].GetList().GetItems() {
					if def := cd.GetColumnDef(); def != nil {
						f.cols = append(f.cols, def.GetColname())
					}
				}
			}
		}
		if len(f.cols) == 0 {
			for _, cd := range rf.GetColdeflist() {
				if def := cd.GetColumnDef(); def != nil {
					f.cols = append(f.cols, def.GetColname())
				}
			}
		}
		return f
	case *pg.Node_RangeTableSample:
		return c.from(v.RangeTableSample.GetRelation())
	case *pg.Node_RangeTableFunc:
		// XMLTABLE: its columns come from the document expression.
		f := &fromFunc{name: "xmltable", alias: v.RangeTableFunc.GetAlias().GetAliasname()}
		c.walk(v.RangeTableFunc.GetDocexpr(), &f.args, false)
		c.walk(v.RangeTableFunc.GetRowexpr(), &f.args, false)
		for _, cn := range v.RangeTableFunc.GetColumns() {
			if col := cn.GetRangeTableFuncCol(); col != nil {
				f.cols = append(f.cols, col.GetColname())
			}
		}
		return f
	case nil:
		return nil
	}
	// Anything newer (JSON_TABLE ...): whatever it yields comes from what it reads.
	f := &fromFunc{}
	c.walk(n, &f.args, false)
	return f
}

func lastString(nodes []*pg.Node) string {
	for i := len(nodes) - 1; i >= 0; i-- {
		if s := nodes[i].GetString_(); s != nil {
			return s.GetSval()
		}
	}
	return ""
}

// expr translates one expression.
func (c *pgConv) expr(n *pg.Node) expr {
	var e expr
	if sb := n.GetSortBy(); sb != nil {
		n = sb.GetNode()
	}
	if cr := n.GetColumnRef(); cr != nil && !isStar(cr) {
		qn := qnameOf(cr)
		e.bare = &qn
	}
	if ac := n.GetAConst(); ac != nil {
		if iv := ac.GetIval(); iv != nil {
			e.ordinal = int(iv.GetIval())
		}
	}
	c.walk(n, &e, false)
	return e
}

// walk collects the references of n into e; shape marks a part that only shapes the
// value (window clauses, aggregate FILTER and ORDER BY, EXISTS).
func (c *pgConv) walk(n *pg.Node, e *expr, shape bool) {
	if n == nil {
		return
	}
	switch v := n.GetNode().(type) {
	case nil, *pg.Node_AConst, *pg.Node_ParamRef, *pg.Node_SqlvalueFunction, *pg.Node_TypeName:
		return
	case *pg.Node_ColumnRef:
		qn := qnameOf(v.ColumnRef)
		if shape {
			e.shape = append(e.shape, qn)
		} else {
			e.refs = append(e.refs, qn)
		}
	case *pg.Node_FuncCall:
		fc := v.FuncCall
		if dynamicSQLFunc(lastString(fc.GetFuncname()), fc.GetArgs()) {
			c.dynamic = true
		}
		for _, a := range fc.GetArgs() {
			c.walk(a, e, shape)
		}
		for _, a := range fc.GetAggOrder() {
			c.walk(a, e, true)
		}
		c.walk(fc.GetAggFilter(), e, true)
		if w := fc.GetOver(); w != nil {
			c.walkWindow(w, e)
		}
	case *pg.Node_WindowDef:
		c.walkWindow(v.WindowDef, e)
	case *pg.Node_SubLink:
		sl := v.SubLink
		sub := c.query(sl.GetSubselect().GetSelectStmt())
		if sl.GetSubLinkType() == pg.SubLinkType_EXISTS_SUBLINK || shape {
			e.shapeSubs = append(e.shapeSubs, sub)
		} else {
			e.subs = append(e.subs, sub)
		}
		c.walk(sl.GetTestexpr(), e, shape)
	case *pg.Node_SelectStmt:
		sub := c.query(v.SelectStmt)
		if shape {
			e.shapeSubs = append(e.shapeSubs, sub)
		} else {
			e.subs = append(e.subs, sub)
		}
	case *pg.Node_TypeCast:
		c.walk(v.TypeCast.GetArg(), e, shape)
	case *pg.Node_AExpr:
		c.walk(v.AExpr.GetLexpr(), e, shape)
		c.walk(v.AExpr.GetRexpr(), e, shape)
	case *pg.Node_BoolExpr:
		c.walkAll(v.BoolExpr.GetArgs(), e, shape)
	case *pg.Node_CaseExpr:
		ce := v.CaseExpr
		c.walk(ce.GetArg(), e, shape)
		c.walkAll(ce.GetArgs(), e, shape)
		c.walk(ce.GetDefresult(), e, shape)
	case *pg.Node_CaseWhen:
		c.walk(v.CaseWhen.GetExpr(), e, shape)
		c.walk(v.CaseWhen.GetResult(), e, shape)
	case *pg.Node_CoalesceExpr:
		c.walkAll(v.CoalesceExpr.GetArgs(), e, shape)
	case *pg.Node_MinMaxExpr:
		c.walkAll(v.MinMaxExpr.GetArgs(), e, shape)
	case *pg.Node_NullIfExpr:
		c.walkAll(v.NullIfExpr.GetArgs(), e, shape)
	case *pg.Node_NullTest:
		c.walk(v.NullTest.GetArg(), e, shape)
	case *pg.Node_BooleanTest:
		c.walk(v.BooleanTest.GetArg(), e, shape)
	case *pg.Node_List:
		c.walkAll(v.List.GetItems(), e, shape)
	case *pg.Node_SortBy:
		c.walk(v.SortBy.GetNode(), e, shape)
	case *pg.Node_CollateClause:
		c.walk(v.CollateClause.GetArg(), e, shape)
	default:
		// Every other node (arrays, rows, indirection, JSON and XML constructors ...)
		// derives from all the expressions inside it.
		c.walkMessage(n.ProtoReflect(), e, shape)
	}
}

func (c *pgConv) walkAll(nodes []*pg.Node, e *expr, shape bool) {
	for _, n := range nodes {
		c.walk(n, e, shape)
	}
}

func (c *pgConv) walkWindow(w *pg.WindowDef, e *expr) {
	c.walkAll(w.GetPartitionClause(), e, true)
	c.walkAll(w.GetOrderClause(), e, true)
	c.walk(w.GetStartOffset(), e, true)
	c.walk(w.GetEndOffset(), e, true)
}

// walkMessage descends into every message-typed field of m.
func (c *pgConv) walkMessage(m protoreflect.Message, e *expr, shape bool) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				c.walkAny(l.Get(i).Message(), e, shape)
			}
			return true
		}
		c.walkAny(v.Message(), e, shape)
		return true
	})
}

func (c *pgConv) walkAny(m protoreflect.Message, e *expr, shape bool) {
	if n, ok := m.Interface().(*pg.Node); ok {
		c.walk(n, e, shape)
		return
	}
	c.walkMessage(m, e, shape)
}

// ---- output column names ----

// targetName names an unaliased select-list item the way the database does: Postgres
// by FigureColname's rules, SQLite by the item's text.
func (c *pgConv) targetName(rt *pg.ResTarget) string {
	val := rt.GetVal()
	if c.d == SQLite && val.GetColumnRef() == nil {
		if s := c.spanText(int(rt.GetLocation())); s != "" {
			return s
		}
	}
	name, _ := figureName(val)
	if name == "" {
		return "?column?"
	}
	return name
}

// figureName follows Postgres' FigureColnameInternal: a name and its strength.
func figureName(n *pg.Node) (string, int) {
	switch v := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		if s := lastString(v.ColumnRef.GetFields()); s != "" {
			return s, 2
		}
	case *pg.Node_AIndirection:
		if s := lastString(v.AIndirection.GetIndirection()); s != "" {
			return s, 2
		}
		return figureName(v.AIndirection.GetArg())
	case *pg.Node_FuncCall:
		if s := lastString(v.FuncCall.GetFuncname()); s != "" {
			return s, 2
		}
	case *pg.Node_AExpr:
		if v.AExpr.GetKind() == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case *pg.Node_TypeCast:
		name, strength := figureName(v.TypeCast.GetArg())
		if strength <= 1 && v.TypeCast.GetTypeName() != nil {
			if s := lastString(v.TypeCast.GetTypeName().GetNames()); s != "" {
				return s, 1
			}
		}
		return name, strength
	case *pg.Node_CollateClause:
		return figureName(v.CollateClause.GetArg())
	case *pg.Node_GroupingFunc:
		return "grouping", 2
	case *pg.Node_SubLink:
		switch v.SubLink.GetSubLinkType() {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg.SubLinkType_EXPR_SUBLINK:
			// The subquery's single column names it.
			if sel := v.SubLink.GetSubselect().GetSelectStmt(); sel != nil {
				for sel.GetOp() != pg.SetOperation_SETOP_NONE && sel.GetLarg() != nil {
					sel = sel.GetLarg()
				}
				if tl := sel.GetTargetList(); len(tl) > 0 {
					rt := tl[0].GetResTarget()
					if rt.GetName() != "" {
						return rt.GetName(), 2
					}
					if s, _ := figureName(rt.GetVal()); s != "" {
						return s, 2
					}
					return "?column?", 2
				}
			}
		}
	case *pg.Node_CaseExpr:
		return "case", 1
	case *pg.Node_AArrayExpr:
		return "array", 1
	case *pg.Node_RowExpr:
		return "row", 1
	case *pg.Node_CoalesceExpr:
		return "coalesce", 1
	case *pg.Node_MinMaxExpr:
		if v.MinMaxExpr.GetOp() == pg.MinMaxOp_IS_GREATEST {
			return "greatest", 1
		}
		return "least", 1
	case *pg.Node_SqlvalueFunction:
		op := v.SqlvalueFunction.GetOp().String()
		return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(op, "SVFOP_"), "_N")), 2
	case *pg.Node_XmlSerialize:
		return "xmlserialize", 2
	}
	return "", 0
}

// spanText returns the original text of the select-list item starting at offset, up
// to the comma, closing parenthesis or clause keyword that ends it: SQLite names an
// unaliased expression column by that text.
func (c *pgConv) spanText(offset int) string {
	if !c.scanned {
		c.scanned = true
		if sr, err := pg.Scan(c.src); err == nil {
			c.tokens = sr.GetTokens()
		}
	}
	start, end, depth := -1, -1, 0
	for _, t := range c.tokens {
		if int(t.GetStart()) < offset {
			continue
		}
		if start < 0 {
			start = int(t.GetStart())
		}
		switch t.GetToken() {
		case pg.Token_ASCII_40: // (
			depth++
		case pg.Token_ASCII_41: // )
			if depth == 0 {
				return c.slice(start, end)
			}
			depth--
		case pg.Token_ASCII_44, pg.Token_ASCII_59, pg.Token_FROM, pg.Token_WHERE, pg.Token_GROUP_P,
			pg.Token_HAVING, pg.Token_WINDOW, pg.Token_ORDER, pg.Token_LIMIT, pg.Token_OFFSET,
			pg.Token_UNION, pg.Token_INTERSECT, pg.Token_EXCEPT, pg.Token_FETCH, pg.Token_INTO,
			pg.Token_FOR:
			if depth == 0 {
				return c.slice(start, end)
			}
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT:
			continue
		}
		end = int(t.GetEnd())
	}
	return c.slice(start, end)
}

func (c *pgConv) slice(start, end int) string {
	if start < 0 || end <= start || end > len(c.original) {
		return ""
	}
	return strings.TrimSpace(c.original[start:end])
}
