package sqllineage

import (
	"slices"
	"strconv"
	"strings"
)

// lin is the lineage of one column: the source columns it derives from.
type lin struct {
	from     []ColumnRef
	direct   bool
	resolved bool
}

// add merges o into l; the result is never direct (a merge is an expression).
func (l *lin) add(o lin) {
	for _, c := range o.from {
		l.addCol(c)
	}
	l.resolved = l.resolved && o.resolved
}

func (l *lin) addCol(c ColumnRef) {
	for _, have := range l.from {
		if have == c {
			return
		}
	}
	l.from = append(l.from, c)
}

// rel is a relation in scope: a table, a CTE, a derived table, a function, or an
// aliased join, with the lineage of each of its columns.
type rel struct {
	qual   string    // the name that qualifies its columns (alias or table name)
	schema string    // schema of an unaliased base table, for schema.table.column
	base   *TableRef // a base table or view: any column c of it is {base, c}
	fn     *lin      // a function in FROM: any column of it derives from its arguments
	// opaque, when set, is the reason any column of this relation is unresolved
	// (a recursive CTE referenced before its lineage is known).
	opaque   string
	cols     []string
	lins     []lin
	complete bool // cols lists every column

	idx    map[string]int // key(column) → index, built on demand by find
	idxLen int            // len(cols) when idx was built
}

// node is a resolved FROM item: a relation, or a join of two nodes.
type node struct {
	leaf        *rel
	left, right *node
	// merged holds the columns a USING or NATURAL join merges; unqualified names
	// reach these instead of either side's. Its qual is the USING alias, if any.
	merged *rel
	// uncertain: a NATURAL join over a side with unknown columns, so it is not known
	// which names it merges.
	uncertain bool
}

// scope is what names can refer to at one query level.
type scope struct {
	nodes  []*node
	parent *scope // the enclosing query level, for correlated references
	ctes   *cteEnv
	// outputs are the select-list columns, which GROUP BY, HAVING and ORDER BY may name.
	outputs *rel
}

// cteEnv is one visible WITH entry, chained to the ones visible before it.
type cteEnv struct {
	def       *cte
	recursive bool
	env       *cteEnv // the entries the definition can see
	outer     *scope  // the query level the WITH belongs to
	state     cteState
	rel       *rel
	parent    *cteEnv
}

type cteState int

const (
	ctePending cteState = iota
	cteResolving
	cteIterating
	cteDone
)

// maxQueries bounds the query levels one analysis resolves. Each level is resolved
// once per use, except inside a recursive CTE's fixpoint, where nested recursive CTEs
// multiply; real definitions stay in the hundreds.
const maxQueries = 100_000

// recursionLimit bounds the fixpoint iterations of a recursive CTE. Lineage only grows
// and is bounded by the columns in the query, so real definitions settle in two or
// three rounds.
const recursionLimit = 8

type analyzer struct {
	fold     bool // names compare without regard to case (mysql, sqlite)
	cat      Catalog
	catCache map[TableRef]catEntry

	sources    []sourceSeen
	seenSource map[TableRef]bool
	filters    []ColumnRef
	seenFilter map[ColumnRef]bool
	reasons    []string
	seenReason map[string]bool

	queries int // query levels resolved so far, against maxQueries
}

type catEntry struct {
	cols []string
	ok   bool
}

type sourceSeen struct {
	ref TableRef
	pos int
}

func resolveStatement(d Dialect, st *statement, cat Catalog) Result {
	a := &analyzer{
		fold:       d != Postgres,
		cat:        cat,
		catCache:   map[TableRef]catEntry{},
		seenSource: map[TableRef]bool{},
		seenFilter: map[ColumnRef]bool{},
		seenReason: map[string]bool{},
	}
	out := a.resolveQuery(st.q, nil, nil)
	a.renameCols(out, st.viewCols)
	if d == SQLite {
		sqliteUniqueNames(out.cols)
	}
	if d == DuckDB {
		duckUniqueNames(out.cols)
	}

	if st.dynamic {
		a.reason(ReasonDynamicSQL)
	}
	res := Result{FilterColumns: a.filters, Unresolved: a.reasons}
	// Sources are ordered by where they appear in the SQL, not by the order the
	// resolver met them (it reads FROM before the select list).
	sortSources(a.sources)
	for _, s := range a.sources {
		res.Sources = append(res.Sources, s.ref)
	}
	for i, name := range out.cols {
		l := out.lins[i]
		res.Columns = append(res.Columns, OutputColumn{
			Name:     name,
			From:     append([]ColumnRef(nil), l.from...),
			Direct:   l.direct && l.resolved && len(l.from) > 0,
			Resolved: l.resolved,
		})
		if l.resolved || len(l.from) > 0 {
			res.ColumnLevel = true
		}
	}
	return res
}

// sqliteUniqueNames renames repeated view columns as SQLite does ("id", "id:1"), so
// that the names match what PRAGMA table_info reports for the view.
func sqliteUniqueNames(cols []string) {
	seen := map[string]bool{}
	cnt := 0
	for i, c := range cols {
		name := c
		for seen[strings.ToLower(name)] {
			base := name
			if j := strings.LastIndexByte(base, ':'); j > 0 && isDigits(base[j+1:]) {
				base = base[:j]
			}
			cnt++
			name = base + ":" + strconv.Itoa(cnt)
		}
		seen[strings.ToLower(name)] = true
		cols[i] = name
	}
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func sortSources(s []sourceSeen) {
	// insertion sort: stable and the lists are short
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].pos < s[j-1].pos; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func (a *analyzer) eq(x, y string) bool {
	if a.fold {
		return strings.EqualFold(x, y)
	}
	return x == y
}

func (a *analyzer) reason(code string) {
	if !a.seenReason[code] {
		a.seenReason[code] = true
		a.reasons = append(a.reasons, code)
	}
}

func (a *analyzer) addSource(ref TableRef, pos int) {
	if !a.seenSource[ref] {
		a.seenSource[ref] = true
		a.sources = append(a.sources, sourceSeen{ref: ref, pos: pos})
	}
}

func (a *analyzer) addFilter(l lin) {
	for _, c := range l.from {
		if !a.seenFilter[c] {
			a.seenFilter[c] = true
			a.filters = append(a.filters, c)
		}
	}
}

func (a *analyzer) columns(ref TableRef) ([]string, bool) {
	if e, ok := a.catCache[ref]; ok {
		return e.cols, e.ok
	}
	var e catEntry
	if a.cat != nil {
		e.cols, e.ok = a.cat.Columns(ref)
	}
	a.catCache[ref] = e
	return e.cols, e.ok
}

// indexFrom is the width from which a relation's column lookups go through a map:
// wide tables in many-join views would otherwise cost a scan per reference.
const indexFrom = 8

func (r *rel) find(a *analyzer, name string) int {
	return r.findKey(a, name, a.key(name))
}

// findKey is find with key = a.key(name) computed once by a caller that looks the
// same name up in many relations.
func (r *rel) findKey(a *analyzer, name, key string) int {
	if len(r.cols) < indexFrom {
		for i, c := range r.cols {
			if a.eq(c, name) {
				return i
			}
		}
		return -1
	}
	if r.idx == nil || r.idxLen != len(r.cols) {
		r.idx = make(map[string]int, len(r.cols))
		for i := len(r.cols) - 1; i >= 0; i-- {
			r.idx[a.key(r.cols[i])] = i // first occurrence wins, as in the scan
		}
		r.idxLen = len(r.cols)
	}
	if i, ok := r.idx[key]; ok {
		return i
	}
	return -1
}

// key is the form names are compared in.
func (a *analyzer) key(name string) string {
	if a.fold {
		return strings.ToLower(name)
	}
	return name
}

// renameCols applies a column alias list (view, CTE, derived table) to r in place.
func (a *analyzer) renameCols(r *rel, names []string) {
	if len(names) == 0 {
		return
	}
	if len(names) > len(r.cols) && r.complete {
		a.reason(ReasonColumnAliasArity)
	}
	for i, n := range names {
		if i < len(r.cols) {
			r.cols[i] = n
			r.idx = nil
			continue
		}
		// Aliases past the known columns name columns we could not see (a star over
		// an unknown table): the name is real, its lineage is not known.
		r.cols = append(r.cols, n)
		r.lins = append(r.lins, lin{})
	}
}

// copyRel returns a copy of r under a new qualifier; the copy's slices are its own so
// that renaming it does not rename a shared CTE.
func copyRel(r *rel, qual string) *rel {
	c := *r
	c.qual = qual
	c.schema = ""
	c.cols = append([]string(nil), r.cols...)
	c.lins = append([]lin(nil), r.lins...)
	c.idx = nil
	return &c
}

// ---- queries ----

// resolveQuery resolves q at a new query level below outer and returns its output.
func (a *analyzer) resolveQuery(q *query, outer *scope, env *cteEnv) *rel {
	a.queries++
	if a.queries > maxQueries {
		a.reason(ReasonTooComplex)
		return &rel{opaque: ReasonTooComplex}
	}
	env = a.bindCTEs(q, outer, env)
	if q.core != nil {
		return a.resolveCore(q.core, outer, env)
	}
	var out *rel
	for _, b := range q.branches {
		r := a.resolveQuery(b, outer, env)
		if out == nil {
			out = copyRel(r, "")
			continue
		}
		n := min(len(out.cols), len(r.cols))
		if len(out.cols) != len(r.cols) {
			if out.complete && r.complete {
				a.reason(ReasonSetOperationArity)
			}
			out.cols, out.lins = out.cols[:n], out.lins[:n]
		}
		for i := range n {
			out.lins[i] = unionLin(out.lins[i], r.lins[i])
		}
		out.complete = out.complete && r.complete
	}
	if out == nil {
		return &rel{complete: true}
	}
	if len(q.filters) > 0 {
		// ORDER BY / LIMIT of a set operation can only name its output columns.
		sc := &scope{nodes: []*node{{leaf: out}}, parent: outer, ctes: env, outputs: out}
		for _, f := range q.filters {
			a.resolveFilter(f, sc)
		}
	}
	return out
}

// unionLin combines column i of two set-operation branches: still direct when each
// branch copies a column as it is (every row's value is then a plain copy of one of
// them, whichever branch it came from).
func unionLin(x, y lin) lin {
	l := lin{resolved: true}
	l.add(x)
	l.add(y)
	l.direct = x.direct && y.direct
	return l
}

// bindCTEs makes q's WITH entries visible and resolves them in order, so that the
// tables they read count as sources even when the main query does not use them.
func (a *analyzer) bindCTEs(q *query, outer *scope, env *cteEnv) *cteEnv {
	if len(q.ctes) == 0 {
		return env
	}
	var entries []*cteEnv
	for _, c := range q.ctes {
		e := &cteEnv{def: c, recursive: q.recursive, outer: outer, parent: env}
		// A plain WITH entry sees the entries before it; a RECURSIVE one sees them all.
		e.env = env
		env = e
		entries = append(entries, e)
	}
	if q.recursive {
		for _, e := range entries {
			e.env = env
		}
	}
	for _, e := range entries {
		a.resolveCTE(e)
	}
	return env
}

func (a *analyzer) lookupCTE(env *cteEnv, name string) *cteEnv {
	for e := env; e != nil; e = e.parent {
		if a.eq(e.def.name, name) {
			return e
		}
	}
	return nil
}

// cteRel returns the relation of a referenced CTE, resolving it first if needed.
func (a *analyzer) cteRel(e *cteEnv) *rel {
	switch e.state {
	case ctePending:
		a.resolveCTE(e)
	case cteResolving:
		// A self-reference met outside the fixpoint (or mutual recursion, which
		// Postgres rejects anyway): its columns cannot be known yet.
		return &rel{qual: e.def.name, opaque: ReasonRecursiveCTE, cols: append([]string(nil), e.def.cols...)}
	}
	return e.rel
}

func (a *analyzer) resolveCTE(e *cteEnv) {
	if e.state != ctePending {
		return
	}
	e.state = cteResolving
	q := e.def.q
	if !e.recursive || len(q.branches) < 2 || len(q.ctes) > 0 {
		out := a.resolveQuery(q, e.outer, e.env)
		a.renameCols(out, e.def.cols)
		e.rel, e.state = out, cteDone
		return
	}
	// WITH RECURSIVE x AS (anchor UNION ALL step): a column of x derives from the
	// anchor's column and from whatever the step computes out of x's own columns.
	// Start from the anchor and feed the step its own output until nothing changes.
	cur := a.resolveQuery(q.branches[0], e.outer, e.env)
	a.renameCols(cur, e.def.cols)
	e.state = cteIterating
	settled := false
	for range recursionLimit {
		e.rel = cur
		next := a.resolveQuery(q, e.outer, e.env)
		a.renameCols(next, e.def.cols)
		if sameLineage(cur, next) {
			settled = true
			break
		}
		cur = next
	}
	if !settled {
		a.reason(ReasonRecursiveCTE)
		for i := range cur.lins {
			cur.lins[i].resolved = false
		}
	}
	e.rel, e.state = cur, cteDone
}

func sameLineage(x, y *rel) bool {
	if len(x.lins) != len(y.lins) {
		return false
	}
	for i := range x.lins {
		a, b := x.lins[i], y.lins[i]
		if a.resolved != b.resolved || a.direct != b.direct || len(a.from) != len(b.from) {
			return false
		}
		for _, c := range a.from {
			found := false
			for _, d := range b.from {
				if c == d {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}

func (a *analyzer) resolveCore(c *selectCore, outer *scope, env *cteEnv) *rel {
	sc := &scope{parent: outer, ctes: env}
	for _, item := range c.from {
		// Items already resolved are visible to a LATERAL item after them.
		sc.nodes = append(sc.nodes, a.resolveFrom(item, sc, sc.nodes))
	}
	out := &rel{complete: true}
	if c.values != nil {
		for _, row := range c.values {
			for i, e := range row {
				l := a.resolveExpr(e, sc)
				l.direct = false // a VALUES column mixes one value per row
				if i < len(out.lins) {
					out.lins[i] = unionLin(out.lins[i], l)
					out.lins[i].direct = false
					continue
				}
				out.cols = append(out.cols, c.valueNames(i))
				out.lins = append(out.lins, l)
			}
		}
		return out
	}
	for _, t := range c.targets {
		if t.star != nil {
			cols, lins, complete := a.expandStar(sc, *t.star)
			if len(t.exclude) > 0 || len(t.replace) > 0 {
				cols, lins = a.starModifiers(t, cols, lins, sc)
			}
			out.cols = append(out.cols, cols...)
			out.lins = append(out.lins, lins...)
			out.complete = out.complete && complete
			continue
		}
		out.cols = append(out.cols, t.name)
		out.lins = append(out.lins, a.resolveExpr(t.e, sc))
	}
	sc.outputs = out
	for _, f := range c.filters {
		a.resolveFilter(f, sc)
	}
	return out
}

// ---- FROM ----

// resolveFrom resolves one FROM item of the query level sc; lateral are the items
// before it, which a LATERAL subquery or a function may reference.
func (a *analyzer) resolveFrom(item fromItem, sc *scope, lateral []*node) *node {
	switch it := item.(type) {
	case *fromTable:
		return &node{leaf: a.resolveTable(it, sc)}
	case *fromSubquery:
		outer := sc.parent
		if it.lateral {
			outer = &scope{nodes: lateral, parent: sc.parent, ctes: sc.ctes}
		}
		out := a.resolveQuery(it.q, outer, sc.ctes)
		r := copyRel(out, it.alias)
		a.renameCols(r, it.cols)
		return &node{leaf: r}
	case *fromFunc:
		// Functions in FROM are implicitly lateral in Postgres.
		lsc := &scope{nodes: lateral, parent: sc.parent, ctes: sc.ctes}
		args := a.resolveExpr(it.args, lsc)
		args.direct = false
		qual := it.alias
		if qual == "" {
			qual = it.name
		}
		r := &rel{qual: qual, fn: &args, complete: len(it.cols) > 0}
		for _, c := range it.cols {
			r.cols = append(r.cols, c)
			r.lins = append(r.lins, args)
		}
		return &node{leaf: r}
	case *fromJoin:
		return a.resolveJoin(it, sc, lateral)
	}
	return &node{leaf: &rel{}}
}

func (a *analyzer) resolveTable(t *fromTable, sc *scope) *rel {
	qual := t.alias
	if qual == "" {
		qual = t.name
	}
	if t.schema == "" {
		if e := a.lookupCTE(sc.ctes, t.name); e != nil {
			r := copyRel(a.cteRel(e), qual)
			a.renameCols(r, t.cols)
			return r
		}
	}
	ref := TableRef{Schema: t.schema, Name: t.name}
	a.addSource(ref, t.pos)
	cols, ok := a.columns(ref)
	r := &rel{qual: qual, base: &ref, complete: ok}
	if t.alias == "" {
		r.schema = t.schema
	}
	if ok {
		// One backing array for the columns' single-element From lists; the capacity
		// limit makes any later append copy instead of overwriting a neighbour.
		refs := make([]ColumnRef, len(cols))
		r.cols = append(make([]string, 0, len(cols)), cols...)
		r.lins = make([]lin, len(cols))
		for i, c := range cols {
			refs[i] = ColumnRef{Table: ref, Column: c}
			r.lins[i] = lin{from: refs[i : i+1 : i+1], direct: true, resolved: true}
		}
	}
	if len(t.cols) > 0 && !ok {
		// t AS x (a, b) over an unknown table: a and b are its first columns, whose
		// real names we do not know.
		for _, c := range t.cols {
			r.cols = append(r.cols, c)
			r.lins = append(r.lins, lin{})
		}
		return r
	}
	a.renameCols(r, t.cols)
	return r
}

func (a *analyzer) resolveJoin(j *fromJoin, sc *scope, lateral []*node) *node {
	l := a.resolveFrom(j.left, sc, lateral)
	r := a.resolveFrom(j.right, sc, append(lateral[:len(lateral):len(lateral)], l))
	n := &node{left: l, right: r}

	names := j.using
	if j.natural {
		lcols, _, lok := a.expandNodeQuiet(l)
		rcols, _, rok := a.expandNodeQuiet(r)
		names = nil
		for _, c := range lcols {
			for _, d := range rcols {
				if a.eq(c, d) {
					names = append(names, c)
					break
				}
			}
		}
		if !lok || !rok {
			n.uncertain = true
			a.reason(ReasonNaturalJoinUnknownColumns)
		}
	}
	if len(names) > 0 {
		m := &rel{qual: j.usingAlias, complete: true}
		for _, name := range names {
			ll := a.attributeIn([]*node{l}, name)
			rl := a.attributeIn([]*node{r}, name)
			a.addFilter(ll)
			a.addFilter(rl)
			var ml lin
			switch j.kind {
			case joinRight:
				ml = rl
			case joinFull:
				// FULL JOIN USING yields COALESCE(left, right).
				ml = unionLin(ll, rl)
				ml.direct = false
			default:
				ml = ll
			}
			m.cols = append(m.cols, name)
			m.lins = append(m.lins, ml)
		}
		n.merged = m
	}
	if j.on != nil {
		// ON sees the two sides of this join and the enclosing query levels.
		on := &scope{nodes: []*node{l, r}, parent: sc.parent, ctes: sc.ctes}
		a.resolveFilter(filter{e: *j.on}, on)
	}
	if j.alias != "" {
		// (a JOIN b) AS j hides a and b behind j.
		cols, lins, complete := a.expandNode(n)
		jr := &rel{qual: j.alias, cols: cols, lins: lins, complete: complete}
		a.renameCols(jr, j.cols)
		return &node{leaf: jr}
	}
	return n
}

// duckUniqueNames renames repeated view columns as DuckDB does when it creates a view
// ("id", "id_1"); names compare without regard to case.
func duckUniqueNames(cols []string) {
	seen := map[string]bool{}
	for i, c := range cols {
		name := c
		for n := 1; seen[strings.ToLower(name)]; n++ {
			name = c + "_" + strconv.Itoa(n)
		}
		seen[strings.ToLower(name)] = true
		cols[i] = name
	}
}

// ---- stars ----

// starModifiers applies DuckDB's EXCLUDE and REPLACE to the columns of a star: names
// compare without regard to case, as DuckDB compares them.
func (a *analyzer) starModifiers(t target, cols []string, lins []lin, sc *scope) ([]string, []lin) {
	var oc []string
	var ol []lin
	for i, c := range cols {
		if slices.ContainsFunc(t.exclude, func(x string) bool { return strings.EqualFold(x, c) }) {
			continue
		}
		l := lins[i]
		for k, e := range t.replace {
			if strings.EqualFold(k, c) {
				l = a.resolveExpr(e, sc)
				l.direct = false
			}
		}
		oc = append(oc, c)
		ol = append(ol, l)
	}
	return oc, ol
}

// expandStar expands * or t.* into columns; complete is false when some columns
// could not be listed.
func (a *analyzer) expandStar(sc *scope, q qname) ([]string, []lin, bool) {
	if len(q.parts) == 0 {
		var cols []string
		var lins []lin
		complete := true
		for _, n := range sc.nodes {
			c, l, ok := a.expandNode(n)
			cols = append(cols, c...)
			lins = append(lins, l...)
			complete = complete && ok
		}
		return cols, lins, complete
	}
	schema, qual := qualifierOf(q.parts)
	for s := sc; s != nil; s = s.parent {
		r, n := a.findQualified(s.nodes, schema, qual)
		if n == 1 {
			return a.expandLeaf(r)
		}
		if n > 1 {
			a.reason(ReasonColumnAmbiguous)
			return nil, nil, false
		}
	}
	a.reason(ReasonQualifierNotFound)
	return nil, nil, false
}

func (a *analyzer) expandLeaf(r *rel) ([]string, []lin, bool) {
	if !r.complete || r.opaque != "" {
		a.reason(ReasonStarUnknownTable)
		if r.opaque != "" {
			a.reason(r.opaque)
		}
		return append([]string(nil), r.cols...), append([]lin(nil), r.lins...), false
	}
	return append([]string(nil), r.cols...), append([]lin(nil), r.lins...), true
}

// expandNode lists a FROM item's columns as * does: merged USING columns first, then
// the left side's other columns, then the right side's.
func (a *analyzer) expandNode(n *node) ([]string, []lin, bool) {
	if n.leaf != nil {
		return a.expandLeaf(n.leaf)
	}
	lc, ll, lok := a.expandNode(n.left)
	rc, rl, rok := a.expandNode(n.right)
	return a.mergeJoinCols(n, lc, ll, rc, rl, lok && rok && !n.uncertain)
}

// expandNodeQuiet is expandNode without reasons, to find NATURAL join columns.
func (a *analyzer) expandNodeQuiet(n *node) ([]string, []lin, bool) {
	if n.leaf != nil {
		return n.leaf.cols, n.leaf.lins, n.leaf.complete && n.leaf.opaque == ""
	}
	lc, ll, lok := a.expandNodeQuiet(n.left)
	rc, rl, rok := a.expandNodeQuiet(n.right)
	return a.mergeJoinCols(n, lc, ll, rc, rl, lok && rok && !n.uncertain)
}

func (a *analyzer) mergeJoinCols(n *node, lc []string, ll []lin, rc []string, rl []lin, complete bool) ([]string, []lin, bool) {
	if n.merged == nil {
		return append(lc, rc...), append(ll, rl...), complete
	}
	cols := append([]string(nil), n.merged.cols...)
	lins := append([]lin(nil), n.merged.lins...)
	for i, c := range lc {
		if n.merged.find(a, c) < 0 {
			cols, lins = append(cols, c), append(lins, ll[i])
		}
	}
	for i, c := range rc {
		if n.merged.find(a, c) < 0 {
			cols, lins = append(cols, c), append(lins, rl[i])
		}
	}
	return cols, lins, complete
}

// ---- expressions ----

func (a *analyzer) resolveExpr(e expr, sc *scope) lin {
	l := lin{resolved: true}
	var single lin
	for _, r := range e.refs {
		single = a.resolveRef(r, sc, false)
		l.add(single)
	}
	for _, s := range e.subs {
		out := a.resolveQuery(s, sc, sc.ctes)
		for _, sl := range out.lins {
			l.add(sl)
		}
		if !out.complete {
			l.resolved = false
		}
	}
	for _, r := range e.shape {
		a.addFilter(a.resolveRef(r, sc, false))
	}
	for _, s := range e.shapeSubs {
		out := a.resolveQuery(s, sc, sc.ctes)
		for _, sl := range out.lins {
			a.addFilter(sl)
		}
	}
	l.direct = e.bare != nil && len(e.refs) == 1 && len(e.subs) == 0 && single.direct
	return l
}

func (a *analyzer) resolveFilter(f filter, sc *scope) {
	if f.outputNames && f.e.ordinal > 0 && sc.outputs != nil && f.e.ordinal <= len(sc.outputs.lins) {
		a.addFilter(sc.outputs.lins[f.e.ordinal-1])
		return
	}
	for _, r := range f.e.refs {
		a.addFilter(a.resolveRef(r, sc, f.outputNames))
	}
	for _, r := range f.e.shape {
		a.addFilter(a.resolveRef(r, sc, f.outputNames))
	}
	for _, s := range append(f.e.subs, f.e.shapeSubs...) {
		out := a.resolveQuery(s, sc, sc.ctes)
		for _, sl := range out.lins {
			a.addFilter(sl)
		}
	}
}

// qualifierOf splits the qualifier of table.column, schema.table.column or
// catalog.schema.table.column (parts without the column for a star).
func qualifierOf(parts []string) (schema, qual string) {
	switch len(parts) {
	case 0:
		return "", ""
	case 1:
		return "", parts[0]
	default:
		return parts[len(parts)-2], parts[len(parts)-1]
	}
}

// resolveRef attributes one column reference; outputNames lets an unqualified name
// fall back to a select-list alias (GROUP BY, HAVING, ORDER BY).
func (a *analyzer) resolveRef(q qname, sc *scope, outputNames bool) lin {
	if q.star {
		_, lins, complete := a.expandStar(sc, q)
		l := lin{resolved: complete}
		for _, x := range lins {
			l.add(x)
		}
		return l
	}
	if len(q.parts) == 1 {
		return a.resolveUnqualified(q.parts[0], sc, outputNames)
	}
	schema, qual := qualifierOf(q.parts[:len(q.parts)-1])
	col := q.parts[len(q.parts)-1]
	for s := sc; s != nil; s = s.parent {
		r, n := a.findQualified(s.nodes, schema, qual)
		if n > 1 {
			a.reason(ReasonColumnAmbiguous)
			return lin{}
		}
		if n == 1 {
			return a.columnOf(r, col)
		}
	}
	a.reason(ReasonQualifierNotFound)
	return lin{}
}

// columnOf returns column col of relation r, named by a qualified reference.
func (a *analyzer) columnOf(r *rel, col string) lin {
	if r.opaque != "" {
		a.reason(r.opaque)
		return lin{}
	}
	if i := r.find(a, col); i >= 0 {
		return r.lins[i]
	}
	if r.complete {
		a.reason(ReasonColumnNotFound)
		return lin{}
	}
	return a.deduce(r, col)
}

// deduce attributes col to r when the SQL says it is r's and only the catalog does not
// list r's columns: a base table's column is that table's column, a function's column
// comes from its arguments. A derived table with unknown columns cannot say.
func (a *analyzer) deduce(r *rel, col string) lin {
	switch {
	case r.base != nil:
		return lin{from: []ColumnRef{{Table: *r.base, Column: col}}, direct: true, resolved: true}
	case r.fn != nil:
		return *r.fn
	}
	a.reason(ReasonColumnUnknownTable)
	return lin{}
}

// findQualified returns the first relation of nodes a qualifier names, and how many
// it names.
func (a *analyzer) findQualified(nodes []*node, schema, qual string) (*rel, int) {
	var first *rel
	n := 0
	for _, nd := range nodes {
		first, n = a.findQualifiedIn(nd, schema, qual, first, n)
	}
	return first, n
}

func (a *analyzer) findQualifiedIn(nd *node, schema, qual string, first *rel, n int) (*rel, int) {
	match := func(r *rel) {
		if n == 0 {
			first = r
		}
		n++
	}
	if nd.leaf != nil {
		r := nd.leaf
		if a.eq(r.qual, qual) && (schema == "" || r.schema == "" || a.eq(r.schema, schema)) {
			match(r)
		}
		return first, n
	}
	if nd.merged != nil && nd.merged.qual != "" && schema == "" && a.eq(nd.merged.qual, qual) {
		match(nd.merged)
	}
	first, n = a.findQualifiedIn(nd.left, schema, qual, first, n)
	return a.findQualifiedIn(nd.right, schema, qual, first, n)
}

// lookup is what an unqualified name finds in some FROM items: how many columns
// match (and the lineage of the first), and how many relations with unknown columns
// might also hold it (and the first of them).
type lookup struct {
	cand     lin
	nCand    int
	unknown  *rel
	nUnknown int
}

func (l *lookup) addCand(x lin) {
	if l.nCand == 0 {
		l.cand = x
	}
	l.nCand++
}

func (l *lookup) addUnknown(r *rel) {
	if l.nUnknown == 0 {
		l.unknown = r
	}
	l.nUnknown++
}

// candidates looks an unqualified name up in nodes.
func (a *analyzer) candidates(nodes []*node, name string) lookup {
	var l lookup
	key := a.key(name)
	for _, n := range nodes {
		a.candidatesIn(n, name, key, &l)
	}
	return l
}

func (a *analyzer) candidatesIn(n *node, name, key string, l *lookup) {
	if n.leaf != nil {
		r := n.leaf
		if i := r.findKey(a, name, key); i >= 0 && r.opaque == "" {
			l.addCand(r.lins[i])
		} else if !r.complete || r.opaque != "" {
			l.addUnknown(r)
		}
		return
	}
	if n.merged != nil {
		if i := n.merged.findKey(a, name, key); i >= 0 {
			l.addCand(n.merged.lins[i])
			return
		}
	}
	before := l.nCand
	a.candidatesIn(n.left, name, key, l)
	a.candidatesIn(n.right, name, key, l)
	if n.uncertain && l.nCand > before {
		// A NATURAL join over unknown columns may have merged this name.
		l.addUnknown(&rel{opaque: ReasonNaturalJoinUnknownColumns})
	}
}

// attributeIn attributes an unqualified name within nodes alone (USING columns),
// deducing it when exactly one relation with unknown columns could hold it.
func (a *analyzer) attributeIn(nodes []*node, name string) lin {
	l := a.candidates(nodes, name)
	switch {
	case l.nCand > 1:
		a.reason(ReasonColumnAmbiguous)
		return lin{}
	case l.nCand == 1 && l.nUnknown == 0:
		return l.cand
	case l.nCand == 0 && l.nUnknown == 1:
		return a.columnOf(l.unknown, name)
	case l.nCand == 0 && l.nUnknown == 0:
		a.reason(ReasonColumnNotFound)
		return lin{}
	}
	a.reason(ReasonColumnUnknownTable)
	return lin{}
}

func (a *analyzer) resolveUnqualified(name string, sc *scope, outputNames bool) lin {
	for s := sc; s != nil; s = s.parent {
		l := a.candidates(s.nodes, name)
		switch {
		case l.nCand > 1:
			a.reason(ReasonColumnAmbiguous)
			return lin{}
		case l.nCand == 1 && l.nUnknown == 0:
			return l.cand
		case l.nCand == 1:
			// A table with unknown columns might hold the same name: never guess.
			a.reason(ReasonColumnUnknownTable)
			return lin{}
		case l.nUnknown > 0:
			// A name is attributed only when exactly one relation can hold it: here no
			// known relation has it, so it is the one relation with unknown columns,
			// provided no enclosing level and no select-list alias could hold it too.
			if l.nUnknown == 1 && !a.anyHolder(s.parent, name) && !(outputNames && s.outputs != nil && s.outputs.find(a, name) >= 0) {
				return a.columnOf(l.unknown, name)
			}
			a.reason(ReasonColumnUnknownTable)
			return lin{}
		}
		if outputNames && s == sc && s.outputs != nil {
			if i := s.outputs.find(a, name); i >= 0 {
				return s.outputs.lins[i]
			}
		}
	}
	// Postgres reads a bare table name as the whole row (row_to_json(t)).
	for s := sc; s != nil; s = s.parent {
		if r, n := a.findQualified(s.nodes, "", name); n == 1 {
			_, lins, complete := a.expandLeaf(r)
			l := lin{resolved: complete}
			for _, x := range lins {
				l.add(x)
			}
			return l
		}
	}
	a.reason(ReasonColumnNotFound)
	return lin{}
}

// anyHolder reports whether a relation of s or its enclosing levels could hold name.
func (a *analyzer) anyHolder(s *scope, name string) bool {
	for ; s != nil; s = s.parent {
		if l := a.candidates(s.nodes, name); l.nCand+l.nUnknown > 0 {
			return true
		}
	}
	return false
}
