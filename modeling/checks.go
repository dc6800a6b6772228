package modeling

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rulesql"
)

// The schema design checks: each is the subtype of the modeling issue it opens.
const (
	CheckNaming       = "naming"
	CheckLayerPrefix  = "layer_prefix"
	CheckNoKey        = "no_key"
	CheckAllNullable  = "all_nullable"
	CheckDateAsText   = "date_as_text"
	CheckTypeMismatch = "type_mismatch"
	CheckUnindexedKey = "unindexed_key"
	CheckWideTable    = "wide_table"
	CheckDenormalized = "denormalized"
)

// Class names of catalog columns this package reads.
const (
	classText    = "text"
	classNumeric = "numeric"
)

// Finding is one check's result on one dataset: the columns involved, a suggestion
// (a stable code) and the fix as a schema change in the source's dialect.
type Finding struct {
	Check      string
	Columns    []string
	Suggestion string
	DDL        string
}

// Table is a dataset as the checks read it.
type Table struct {
	Dataset catalog.Dataset
	Dialect rulesql.Dialect
}

// Check runs the checks that read one dataset alone, plus type_mismatch against the
// other datasets of the same scan (others may include t itself). Only tables are
// checked: a view's design is its query's. Findings come in check order.
func Check(t Table, others []catalog.Dataset) []Finding {
	return CheckIn(t, NewScope(others))
}

// Scope is what the checks read of the other datasets of a scan, counted once
// (NewScope) so that checking every dataset of a 10,000-table scan costs a lookup per
// dataset, not a pass over all the others.
type Scope struct {
	ids map[string]bool
	// schemas: per connection and schema, its tables' names and layer prefixes.
	schemas map[[2]string]*schemaTables
	// columns: per column name, the key-like text and numeric columns' classes and types.
	columns map[string]*columnClasses
}

type schemaTables struct {
	tables, prefixed int
	byPrefix         map[string]int
	names            map[string]bool
}

type columnClasses struct {
	byClass map[string]int
	typeOf  map[string]map[string]int
}

// NewScope counts the datasets of a scan (t itself may be among them) for CheckIn.
func NewScope(others []catalog.Dataset) *Scope {
	sc := &Scope{ids: make(map[string]bool, len(others)), schemas: map[[2]string]*schemaTables{}, columns: map[string]*columnClasses{}}
	for _, o := range others {
		sc.ids[o.ID] = true
		if o.Kind == "table" {
			k := [2]string{o.ConnectionID, o.Schema}
			st := sc.schemas[k]
			if st == nil {
				st = &schemaTables{byPrefix: map[string]int{}, names: map[string]bool{}}
				sc.schemas[k] = st
			}
			st.names[strings.ToLower(o.Table)] = true
			st.tables++
			if p := layerOf(o.Table); p != "" {
				st.prefixed++
				st.byPrefix[p]++
			}
		}
		for _, oc := range o.Columns {
			if oc.Class != classText && oc.Class != classNumeric {
				continue
			}
			cc := sc.columns[oc.Name]
			if cc == nil {
				cc = &columnClasses{byClass: map[string]int{}, typeOf: map[string]map[string]int{}}
				sc.columns[oc.Name] = cc
			}
			cc.byClass[oc.Class]++
			if cc.typeOf[oc.Class] == nil {
				cc.typeOf[oc.Class] = map[string]int{}
			}
			cc.typeOf[oc.Class][oc.DataType]++
		}
	}
	return sc
}

// CheckIn is Check against a scope counted once for the whole scan.
func CheckIn(t Table, others *Scope) []Finding {
	d := t.Dataset
	if d.Kind != "table" || len(d.Columns) == 0 {
		return nil
	}
	var out []Finding
	for _, f := range []func(Table) *Finding{naming, noKey, allNullable, dateAsText} {
		if x := f(t); x != nil {
			out = append(out, *x)
		}
	}
	if x := typeMismatch(t, others); x != nil {
		out = append(out, *x)
	}
	if x := layerPrefix(t, others); x != nil {
		out = append(out, *x)
	}
	for _, f := range []func(Table) *Finding{unindexedKey, wideTable, denormalized} {
		if x := f(t); x != nil {
			out = append(out, *x)
		}
	}
	return out
}

// Thresholds of the checks.
const (
	// WideTableColumns: a table with more columns than this is wide.
	WideTableColumns = 100
	// RepeatingGroupMin: numbered columns of one stem from this many on are a repeating
	// group (telefone1, telefone2, telefone3).
	RepeatingGroupMin = 3
)

// layerPrefixes are the table-name prefixes of warehouse layers.
var layerPrefixes = []string{"raw_", "src_", "stg_", "staging_", "int_", "dim_", "fct_", "fact_", "mart_", "bronze_", "silver_", "gold_"}

func layerOf(name string) string {
	n := strings.ToLower(name)
	for _, p := range layerPrefixes {
		if strings.HasPrefix(n, p) && len(n) > len(p) {
			return p
		}
	}
	return ""
}

// named is a table of t's schema under another name, as DDL writes it.
func (t Table) named(name string) string {
	if t.Dialect == rulesql.SQLite || t.Dataset.Schema == "" || t.Dataset.Schema == "main" {
		return q(t.Dialect, name)
	}
	return q(t.Dialect, t.Dataset.Schema) + "." + q(t.Dialect, name)
}

// layerPrefix: a table without a layer prefix in a schema of three tables or more where
// at least two thirds carry one. The fix renames it with the schema's most frequent
// prefix.
func layerPrefix(t Table, others *Scope) *Finding {
	if layerOf(t.Dataset.Table) != "" {
		return nil
	}
	st := others.schemas[[2]string{t.Dataset.ConnectionID, t.Dataset.Schema}]
	if st == nil {
		return nil
	}
	byPrefix, tables, prefixed, names := st.byPrefix, st.tables, st.prefixed, st.names
	if tables < 3 || prefixed*3 < tables*2 {
		return nil
	}
	p := majority(byPrefix)
	to := p + t.Dataset.Table
	if names[strings.ToLower(to)] {
		return &Finding{Check: CheckLayerPrefix, Columns: []string{}, Suggestion: "rename_with_layer_prefix"}
	}
	return &Finding{Check: CheckLayerPrefix, Columns: []string{}, Suggestion: "rename_with_layer_prefix",
		DDL: fmt.Sprintf("ALTER TABLE %s RENAME TO %s", t.table(), t.renameTarget(to))}
}

// renameTarget is the new name of a renamed table: MySQL's RENAME TO names the
// database too (else the table would move to the session's database); Postgres and
// SQLite take the bare name.
func (t Table) renameTarget(name string) string {
	if t.Dialect == rulesql.MySQL {
		return t.named(name)
	}
	return q(t.Dialect, name)
}

// indexName is an index name within the engines' 63-byte limit.
func indexName(table string, cols []string) string {
	n := "ix_" + table + "_" + strings.Join(cols, "_")
	if len(n) > 60 {
		n = n[:60]
	}
	return n
}

// unindexedKey: a declared foreign key whose first column leads no index of the table
// (Postgres and SQLite do not index foreign keys themselves): every join and every
// delete of a parent row scans the table. The fix creates the index.
func unindexedKey(t Table) *Finding {
	indexed := map[string]bool{}
	for _, c := range t.Dataset.Columns {
		if c.Indexed {
			indexed[c.Name] = true
		}
	}
	var cols, stmts []string
	done := map[string]bool{}
	for _, fk := range t.Dataset.ForeignKeys {
		if len(fk.Columns) == 0 || indexed[fk.Columns[0]] || done[strings.Join(fk.Columns, ",")] {
			continue
		}
		done[strings.Join(fk.Columns, ",")] = true
		qs := make([]string, len(fk.Columns))
		for i, c := range fk.Columns {
			qs[i] = q(t.Dialect, c)
		}
		cols = append(cols, fk.Columns...)
		stmts = append(stmts, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", q(t.Dialect, indexName(t.Dataset.Table, fk.Columns)), t.table(), strings.Join(qs, ", ")))
	}
	if len(cols) == 0 {
		return nil
	}
	return &Finding{Check: CheckUnindexedKey, Columns: cols, Suggestion: "create_index", DDL: strings.Join(stmts, ";\n")}
}

// wideTable: more than WideTableColumns columns. No mechanical fix: the suggestion is
// to split the table by subject (a one-to-one side table for rarely read columns).
func wideTable(t Table) *Finding {
	if len(t.Dataset.Columns) <= WideTableColumns {
		return nil
	}
	return &Finding{Check: CheckWideTable, Columns: []string{}, Suggestion: "split_table"}
}

// stem splits a numbered column name: "telefone_2" → ("telefone", 2).
func stem(name string) (string, int, bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i == 0 || len(name)-i > 2 {
		return "", 0, false
	}
	n := 0
	for _, c := range name[i:] {
		n = n*10 + int(c-'0')
	}
	base := strings.TrimRight(name[:i], "_")
	if base == "" {
		return "", 0, false
	}
	return base, n, true
}

// denormalized: a repeating group — RepeatingGroupMin numbered columns of one stem or
// more (telefone1, telefone2, telefone3). The fix, for a table with a one-column primary
// key, creates the child table holding one row per value (the key, the position, the
// value); moving the data is left to the owner.
func denormalized(t Table) *Finding {
	groups := map[string][]catalog.Column{}
	nums := map[string]map[int]bool{}
	var order []string
	for _, c := range t.Dataset.Columns {
		base, n, ok := stem(c.Name)
		if !ok {
			continue
		}
		if groups[base] == nil {
			order = append(order, base)
			nums[base] = map[int]bool{}
		}
		groups[base] = append(groups[base], c)
		nums[base][n] = true
	}
	var pk []catalog.Column
	for _, c := range t.Dataset.Columns {
		if c.PrimaryKey {
			pk = append(pk, c)
		}
	}
	var cols, stmts []string
	for _, base := range order {
		if len(nums[base]) < RepeatingGroupMin {
			continue
		}
		for _, c := range groups[base] {
			cols = append(cols, c.Name)
		}
		if len(pk) != 1 {
			continue
		}
		child := t.Dataset.Table + "_" + strings.ToLower(base)
		keyCol := t.Dataset.Table + "_" + pk[0].Name
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s (%s %s NOT NULL, %s integer NOT NULL, %s %s, PRIMARY KEY (%s, %s), FOREIGN KEY (%s) REFERENCES %s (%s))",
			t.named(child), q(t.Dialect, keyCol), pk[0].DataType, q(t.Dialect, "position"), q(t.Dialect, strings.ToLower(base)), groups[base][0].DataType,
			q(t.Dialect, keyCol), q(t.Dialect, "position"), q(t.Dialect, keyCol), t.table(), q(t.Dialect, pk[0].Name)))
	}
	if len(cols) == 0 {
		return nil
	}
	return &Finding{Check: CheckDenormalized, Columns: cols, Suggestion: "extract_repeating_group", DDL: strings.Join(stmts, ";\n")}
}

func (t Table) table() string {
	if t.Dialect == rulesql.SQLite || t.Dataset.Schema == "" || t.Dataset.Schema == "main" {
		return q(t.Dialect, t.Dataset.Table)
	}
	return q(t.Dialect, t.Dataset.Schema) + "." + q(t.Dialect, t.Dataset.Table)
}

func q(d rulesql.Dialect, name string) string { return rulesql.QuoteIdent(d, name) }

// snake is name in lower snake case: "OrderDate" → "order_date", "Nome Cliente" →
// "nome_cliente".
func snake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r):
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return strings.Trim(s, "_")
}

// naming: column names that are not lower snake case (capitals, spaces, punctuation):
// they must be quoted in every query. The fix renames them.
func naming(t Table) *Finding {
	taken := map[string]bool{}
	for _, c := range t.Dataset.Columns {
		taken[c.Name] = true
	}
	var cols, stmts []string
	for _, c := range t.Dataset.Columns {
		to := snake(c.Name)
		if to == c.Name || to == "" || taken[to] {
			continue
		}
		taken[to] = true
		cols = append(cols, c.Name)
		stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", t.table(), q(t.Dialect, c.Name), q(t.Dialect, to)))
	}
	if len(cols) == 0 {
		return nil
	}
	return &Finding{Check: CheckNaming, Columns: cols, Suggestion: "rename_snake_case", DDL: strings.Join(stmts, ";\n")}
}

// keyCandidate is a column whose last exact profile has no nulls and as many distinct
// values as rows.
func keyCandidate(d catalog.Dataset) (string, bool) {
	if d.RowCount == nil || *d.RowCount == 0 || d.RowCountExact == nil || !*d.RowCountExact {
		return "", false
	}
	for _, c := range d.Columns {
		p := c.Profile
		if p == nil || p.Estimated || p.NullCount != 0 || p.Distinct == nil || p.Distinct.Estimated {
			continue
		}
		if int64(p.Distinct.Value) == *d.RowCount && (c.Class == classNumeric || c.Class == classText) {
			return c.Name, true
		}
	}
	return "", false
}

// noKey: a table with neither a primary key nor a single-column unique key. The fix
// declares a candidate column (no nulls, all values distinct) the key, or adds a
// surrogate identity column; on SQLite (whose rows keep a rowid) only a candidate is
// proposed, as a unique index.
func noKey(t Table) *Finding {
	for _, c := range t.Dataset.Columns {
		if c.PrimaryKey || c.Unique {
			return nil
		}
	}
	if cand, ok := keyCandidate(t.Dataset); ok {
		f := &Finding{Check: CheckNoKey, Columns: []string{cand}, Suggestion: "declare_primary_key"}
		if t.Dialect == rulesql.SQLite {
			f.Suggestion = "declare_unique_index"
			f.DDL = fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s (%s)", q(t.Dialect, "ux_"+t.Dataset.Table+"_"+cand), t.table(), q(t.Dialect, cand))
		} else {
			f.DDL = fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.table(), q(t.Dialect, cand))
		}
		return f
	}
	name := ""
	taken := map[string]bool{}
	for _, c := range t.Dataset.Columns {
		taken[strings.ToLower(c.Name)] = true
	}
	for _, n := range []string{"id", "row_id", "surrogate_id"} {
		if !taken[n] {
			name = n
			break
		}
	}
	f := &Finding{Check: CheckNoKey, Columns: []string{}, Suggestion: "add_surrogate_key"}
	switch {
	case name == "" || t.Dialect == rulesql.SQLite:
		f.Suggestion = "declare_key"
	case t.Dialect == rulesql.MySQL:
		f.DDL = fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY FIRST", t.table(), q(t.Dialect, name))
	default:
		f.DDL = fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", t.table(), q(t.Dialect, name))
	}
	return f
}

// allNullable: a table of two columns or more, every one nullable, no key. The fix
// declares NOT NULL the columns that held no null in the last exact profile; without
// such a column there is nothing safe to propose and no finding. Not on SQLite, which
// cannot change a column's nullability in place.
func allNullable(t Table) *Finding {
	if len(t.Dataset.Columns) < 2 || t.Dialect == rulesql.SQLite {
		return nil
	}
	var never []catalog.Column
	for _, c := range t.Dataset.Columns {
		if !c.Nullable || c.PrimaryKey {
			return nil
		}
		if p := c.Profile; p != nil && !p.Estimated && p.NullCount == 0 && t.Dataset.RowCount != nil && *t.Dataset.RowCount > 0 {
			never = append(never, c)
		}
	}
	if len(never) == 0 {
		return nil
	}
	cols := make([]string, 0, len(never))
	parts := make([]string, 0, len(never))
	for _, c := range never {
		cols = append(cols, c.Name)
		if t.Dialect == rulesql.MySQL {
			parts = append(parts, fmt.Sprintf("MODIFY COLUMN %s %s NOT NULL", q(t.Dialect, c.Name), c.DataType))
		} else {
			parts = append(parts, fmt.Sprintf("ALTER COLUMN %s SET NOT NULL", q(t.Dialect, c.Name)))
		}
	}
	return &Finding{Check: CheckAllNullable, Columns: cols, Suggestion: "declare_not_null",
		DDL: fmt.Sprintf("ALTER TABLE %s %s", t.table(), strings.Join(parts, ", "))}
}

// dateFormat is a text shape of dates: the masks it covers and how each dialect reads it.
type dateFormat struct {
	masks     []string
	timestamp bool
	pg        string // to_date / to_timestamp pattern; "" = a plain cast
	my        string // STR_TO_DATE pattern
}

var dateFormats = []dateFormat{
	{masks: []string{"9999-99-99"}, my: "%Y-%m-%d"},
	{masks: []string{"9999-99-99 99:99:99", "9999-99-99A99:99:99"}, timestamp: true, my: "%Y-%m-%d %H:%i:%s"},
	{masks: []string{"99/99/9999"}, pg: "DD/MM/YYYY", my: "%d/%m/%Y"},
	{masks: []string{"99-99-9999"}, pg: "DD-MM-YYYY", my: "%d-%m-%Y"},
	{masks: []string{"9999/99/99"}, pg: "YYYY/MM/DD", my: "%Y/%m/%d"},
}

// dateAsText: a text column every sampled value of which has one date shape (by its
// masks). The fix converts the column to date (or timestamp) on Postgres and adds a
// stored generated date column on MySQL/MariaDB, where a text-to-date conversion with
// a format cannot be written as one ALTER. Not on SQLite, whose convention for dates
// is ISO text.
func dateAsText(t Table) *Finding {
	if t.Dialect == rulesql.SQLite {
		return nil
	}
	var cols, parts []string
	taken := map[string]bool{}
	for _, c := range t.Dataset.Columns {
		taken[c.Name] = true
	}
	for _, c := range t.Dataset.Columns {
		if c.Class != classText || c.Profile == nil || len(c.Profile.Masks) == 0 {
			continue
		}
		f, ok := oneDateFormat(c.Profile.Masks)
		if !ok {
			continue
		}
		col := q(t.Dialect, c.Name)
		switch t.Dialect {
		case rulesql.MySQL:
			name := c.Name + "_date"
			if taken[name] {
				continue
			}
			typ := "DATE"
			if f.timestamp {
				typ = "DATETIME"
			}
			parts = append(parts, fmt.Sprintf("ADD COLUMN %s %s AS (STR_TO_DATE(%s, %s)) STORED", q(t.Dialect, name), typ, col, rulesql.QuoteString(t.Dialect, f.my)))
		default:
			typ, fn := "date", "to_date"
			if f.timestamp {
				typ, fn = "timestamp", "to_timestamp"
			}
			using := col + "::" + typ
			if f.pg != "" {
				using = fmt.Sprintf("%s(%s, %s)", fn, col, rulesql.QuoteString(t.Dialect, f.pg))
			}
			parts = append(parts, fmt.Sprintf("ALTER COLUMN %s TYPE %s USING %s", col, typ, using))
		}
		cols = append(cols, c.Name)
	}
	if len(cols) == 0 {
		return nil
	}
	sug := "convert_to_date"
	if t.Dialect == rulesql.MySQL {
		sug = "add_generated_date_column"
	}
	return &Finding{Check: CheckDateAsText, Columns: cols, Suggestion: sug, DDL: fmt.Sprintf("ALTER TABLE %s %s", t.table(), strings.Join(parts, ", "))}
}

func oneDateFormat(masks []catalog.Mask) (dateFormat, bool) {
	for _, f := range dateFormats {
		all := true
		for _, m := range masks {
			found := false
			for _, fm := range f.masks {
				if m.Mask == fm {
					found = true
					break
				}
			}
			if !found {
				all = false
				break
			}
		}
		if all {
			return f, true
		}
	}
	return dateFormat{}, false
}

// keyLike is a column name that reads as a key: id, or ending in _id / Id.
func keyLike(name string) bool {
	n := strings.ToLower(name)
	return n == "id" || strings.HasSuffix(n, "_id") || (len(name) > 2 && strings.HasSuffix(name, "Id"))
}

// typeMismatch: a key-like column stored as text here while the other tables of the
// scan hold the same column name as a number (or the reverse), with the other class
// in the majority. The fix converts the column to the majority's type (not on SQLite,
// whose columns have no fixed type).
func typeMismatch(t Table, others *Scope) *Finding {
	if t.Dialect == rulesql.SQLite {
		return nil
	}
	var cols, parts []string
	for _, c := range t.Dataset.Columns {
		if !keyLike(c.Name) || (c.Class != classText && c.Class != classNumeric) {
			continue
		}
		byClass, typeOf := others.columnsBut(c.Name, t.Dataset)
		other := classText
		if c.Class == classText {
			other = classNumeric
		}
		if byClass[other] == 0 || byClass[other] <= byClass[c.Class] {
			continue
		}
		typ := majority(typeOf[other])
		col := q(t.Dialect, c.Name)
		if t.Dialect == rulesql.MySQL {
			parts = append(parts, fmt.Sprintf("MODIFY COLUMN %s %s", col, typ))
		} else {
			parts = append(parts, fmt.Sprintf("ALTER COLUMN %s TYPE %s USING %s::%s", col, typ, col, typ))
		}
		cols = append(cols, c.Name)
	}
	if len(cols) == 0 {
		return nil
	}
	return &Finding{Check: CheckTypeMismatch, Columns: cols, Suggestion: "align_column_type", DDL: fmt.Sprintf("ALTER TABLE %s %s", t.table(), strings.Join(parts, ", "))}
}

// columnsBut counts the text and numeric columns named name of the scope's datasets
// other than d, by class and by class and type.
func (sc *Scope) columnsBut(name string, d catalog.Dataset) (map[string]int, map[string]map[string]int) {
	byClass := map[string]int{}
	typeOf := map[string]map[string]int{}
	cc := sc.columns[name]
	if cc == nil {
		return byClass, typeOf
	}
	for class, n := range cc.byClass {
		byClass[class] = n
	}
	for class, m := range cc.typeOf {
		typeOf[class] = make(map[string]int, len(m))
		for typ, n := range m {
			typeOf[class][typ] = n
		}
	}
	if sc.ids[d.ID] {
		// d's own columns of that name are not the others'.
		for _, oc := range d.Columns {
			if oc.Name != name || (oc.Class != classText && oc.Class != classNumeric) {
				continue
			}
			byClass[oc.Class]--
			if typeOf[oc.Class][oc.DataType]--; typeOf[oc.Class][oc.DataType] == 0 {
				delete(typeOf[oc.Class], oc.DataType)
			}
			if byClass[oc.Class] == 0 {
				delete(byClass, oc.Class)
				delete(typeOf, oc.Class)
			}
		}
	}
	return byClass, typeOf
}

// majority is the most frequent key, ties by name.
func majority(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys[0]
}
