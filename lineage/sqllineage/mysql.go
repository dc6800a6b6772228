package sqllineage

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	// The parser needs a value-expression driver to build literals.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// parseMySQL parses a MySQL or MariaDB definition (VIEW_DEFINITION or CREATE VIEW).
func parseMySQL(sql string) (*statement, error) {
	// A parser is cheap next to parsing itself and is not safe for concurrent use, so
	// each call builds its own rather than sharing one.
	p := parser.New()
	stmts, _, err := p.Parse(sql, "", "")
	if err != nil {
		// TiDB's message quotes the SQL near the error; say nothing of it.
		return nil, &ParseError{Dialect: MySQL}
	}
	if len(stmts) != 1 {
		return nil, ErrNotAQuery
	}
	c := &myConv{}
	st := &statement{}
	switch s := stmts[0].(type) {
	case *ast.CreateViewStmt:
		rs, ok := s.Select.(ast.ResultSetNode)
		if !ok {
			return nil, ErrNotAQuery
		}
		st.q = c.query(rs)
		for _, col := range s.Cols {
			st.viewCols = append(st.viewCols, col.O)
		}
	case *ast.SelectStmt, *ast.SetOprStmt:
		st.q = c.query(s.(ast.ResultSetNode))
	default:
		return nil, ErrNotAQuery
	}
	return st, nil
}

// myConv translates TiDB's tree. pos numbers tables in the order the converter meets
// them, which follows the text: WITH, select list, FROM, then the other clauses.
type myConv struct {
	pos int
}

func (c *myConv) query(n ast.Node) *query {
	q := &query{}
	switch s := n.(type) {
	case *ast.SelectStmt:
		c.with(q, s.With)
		q.core = c.core(s)
	case *ast.SetOprStmt:
		c.with(q, s.With)
		if s.SelectList != nil {
			c.with(q, s.SelectList.With)
			for _, b := range s.SelectList.Selects {
				c.branch(q, b)
			}
		}
		q.filters = c.orderLimit(q.filters, s.OrderBy, s.Limit)
	case *ast.SetOprSelectList:
		c.with(q, s.With)
		for _, b := range s.Selects {
			c.branch(q, b)
		}
		q.filters = c.orderLimit(q.filters, s.OrderBy, s.Limit)
	case *ast.SubqueryExpr:
		return c.query(s.Query)
	default:
		q.core = &selectCore{}
	}
	return q
}

// branch adds one set-operation branch, flattening nested set operations that carry
// nothing of their own.
func (c *myConv) branch(q *query, n ast.Node) {
	bq := c.query(n)
	if bq.core == nil && len(bq.ctes) == 0 && len(bq.filters) == 0 {
		q.branches = append(q.branches, bq.branches...)
		return
	}
	q.branches = append(q.branches, bq)
}

func (c *myConv) with(q *query, w *ast.WithClause) {
	if w == nil {
		return
	}
	q.recursive = q.recursive || w.IsRecursive
	for _, ce := range w.CTEs {
		d := &cte{name: ce.Name.O}
		for _, col := range ce.ColNameList {
			d.cols = append(d.cols, col.O)
		}
		if ce.Query != nil {
			d.q = c.query(ce.Query.Query)
		} else {
			d.q = &query{core: &selectCore{}}
		}
		q.ctes = append(q.ctes, d)
	}
}

func (c *myConv) core(s *ast.SelectStmt) *selectCore {
	core := &selectCore{}
	switch s.Kind {
	case ast.SelectStmtKindValues:
		for _, row := range s.Lists {
			var exprs []expr
			for _, v := range row.Values {
				exprs = append(exprs, c.expr(v))
			}
			core.values = append(core.values, exprs)
		}
		core.valueNames = func(i int) string { return "column_" + strconv.Itoa(i) }
		return core
	case ast.SelectStmtKindTable:
		// TABLE t is SELECT * FROM t.
		if s.Fields == nil || len(s.Fields.Fields) == 0 {
			core.targets = append(core.targets, target{star: &qname{star: true}})
		}
	}
	if s.Fields != nil {
		for _, f := range s.Fields.Fields {
			if f.Auxiliary {
				continue
			}
			if f.WildCard != nil {
				qn := qname{star: true}
				if f.WildCard.Schema.O != "" {
					qn.parts = append(qn.parts, f.WildCard.Schema.O)
				}
				if f.WildCard.Table.O != "" {
					qn.parts = append(qn.parts, f.WildCard.Table.O)
				}
				core.targets = append(core.targets, target{star: &qn})
				continue
			}
			core.targets = append(core.targets, target{name: fieldName(f), e: c.expr(f.Expr)})
		}
	}
	if s.From != nil && s.From.TableRefs != nil {
		if it := c.from(s.From.TableRefs); it != nil {
			core.from = append(core.from, it)
		}
	}
	if s.Where != nil {
		core.filters = append(core.filters, filter{e: c.expr(s.Where)})
	}
	if s.GroupBy != nil {
		for _, it := range s.GroupBy.Items {
			core.filters = append(core.filters, filter{e: c.expr(it.Expr), outputNames: true})
		}
	}
	if s.Having != nil {
		core.filters = append(core.filters, filter{e: c.expr(s.Having.Expr), outputNames: true})
	}
	for i := range s.WindowSpecs {
		var e expr
		c.walkWindow(&s.WindowSpecs[i], &e)
		core.filters = append(core.filters, filter{e: e})
	}
	core.filters = c.orderLimit(core.filters, s.OrderBy, s.Limit)
	return core
}

// fieldName names a select-list item as MySQL does: its alias, the column name, or
// the expression's text as written.
func fieldName(f *ast.SelectField) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	e := f.Expr
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	if cn, ok := e.(*ast.ColumnNameExpr); ok {
		return cn.Name.Name.O
	}
	if t := f.Text(); t != "" {
		return t
	}
	return f.Expr.Text()
}

func (c *myConv) orderLimit(fs []filter, ob *ast.OrderByClause, lim *ast.Limit) []filter {
	if ob != nil {
		for _, it := range ob.Items {
			fs = append(fs, filter{e: c.expr(it.Expr), outputNames: true})
		}
	}
	if lim != nil {
		for _, n := range []ast.ExprNode{lim.Count, lim.Offset} {
			if n != nil {
				fs = append(fs, filter{e: c.expr(n)})
			}
		}
	}
	return fs
}

func (c *myConv) from(n ast.ResultSetNode) fromItem {
	switch v := n.(type) {
	case *ast.Join:
		if v.Right == nil {
			if v.Left == nil {
				return nil
			}
			return c.from(v.Left)
		}
		j := &fromJoin{left: c.from(v.Left), right: c.from(v.Right), natural: v.NaturalJoin}
		switch v.Tp {
		case ast.LeftJoin:
			j.kind = joinLeft
		case ast.RightJoin:
			j.kind = joinRight
		}
		for _, u := range v.Using {
			j.using = append(j.using, u.Name.O)
		}
		if v.On != nil && v.On.Expr != nil {
			e := c.expr(v.On.Expr)
			j.on = &e
		}
		if j.left == nil || j.right == nil {
			return nil
		}
		return j
	case *ast.TableSource:
		var cols []string
		for _, col := range v.ColumnNames {
			cols = append(cols, col.O)
		}
		switch src := v.Source.(type) {
		case *ast.TableName:
			c.pos++
			return &fromTable{schema: src.Schema.O, name: src.Name.O, alias: v.AsName.O, cols: cols, pos: c.pos}
		case *ast.Join:
			// A parenthesised join list: MariaDB writes FROM (a join b on ...).
			return c.from(src)
		default:
			return &fromSubquery{q: c.query(src), alias: v.AsName.O, cols: cols, lateral: v.Lateral}
		}
	case *ast.TableName:
		c.pos++
		return &fromTable{schema: v.Schema.O, name: v.Name.O, pos: c.pos}
	case *ast.SelectStmt, *ast.SetOprStmt:
		return &fromSubquery{q: c.query(v)}
	}
	return nil
}

func (c *myConv) expr(n ast.ExprNode) expr {
	var e expr
	inner := n
	for {
		p, ok := inner.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		inner = p.Expr
	}
	switch v := inner.(type) {
	case *ast.ColumnNameExpr:
		qn := colName(v.Name)
		e.bare = &qn
	case *ast.PositionExpr:
		e.ordinal = v.N
	}
	c.walk(n, &e, false)
	return e
}

func colName(cn *ast.ColumnName) qname {
	var qn qname
	if cn.Schema.O != "" {
		qn.parts = append(qn.parts, cn.Schema.O)
	}
	if cn.Table.O != "" {
		qn.parts = append(qn.parts, cn.Table.O)
	}
	qn.parts = append(qn.parts, cn.Name.O)
	return qn
}

func (c *myConv) walk(n ast.Node, e *expr, shape bool) {
	if n == nil {
		return
	}
	n.Accept(&myVisitor{c: c, e: e, shape: shape})
}

func (c *myConv) walkWindow(w *ast.WindowSpec, e *expr) {
	if w.PartitionBy != nil {
		for _, it := range w.PartitionBy.Items {
			c.walk(it.Expr, e, true)
		}
	}
	if w.OrderBy != nil {
		for _, it := range w.OrderBy.Items {
			c.walk(it.Expr, e, true)
		}
	}
}

// myVisitor collects references; it handles the nodes lineage cares about itself and
// lets TiDB's walker descend into every other expression.
type myVisitor struct {
	c     *myConv
	e     *expr
	shape bool
}

func (v *myVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.ColumnNameExpr:
		qn := colName(x.Name)
		if v.shape {
			v.e.shape = append(v.e.shape, qn)
		} else {
			v.e.refs = append(v.e.refs, qn)
		}
		return n, true
	case *ast.SubqueryExpr:
		sub := v.c.query(x.Query)
		if x.Exists || v.shape {
			v.e.shapeSubs = append(v.e.shapeSubs, sub)
		} else {
			v.e.subs = append(v.e.subs, sub)
		}
		return n, true
	case *ast.ExistsSubqueryExpr:
		var inner expr
		v.c.walk(x.Sel, &inner, true)
		v.e.shapeSubs = append(v.e.shapeSubs, inner.shapeSubs...)
		v.e.shape = append(v.e.shape, inner.shape...)
		return n, true
	case *ast.AggregateFuncExpr:
		for _, a := range x.Args {
			v.c.walk(a, v.e, v.shape)
		}
		if x.Order != nil {
			for _, it := range x.Order.Items {
				v.c.walk(it.Expr, v.e, true)
			}
		}
		return n, true
	case *ast.WindowFuncExpr:
		for _, a := range x.Args {
			v.c.walk(a, v.e, v.shape)
		}
		v.c.walkWindow(&x.Spec, v.e)
		return n, true
	case *ast.DefaultExpr, *ast.ValuesExpr, *ast.VariableExpr:
		return n, true
	}
	return n, false
}

func (v *myVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }
