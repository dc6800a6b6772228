package rulefile

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SodaCL: one "checks for <schema>.<table>:" section per table, a check per rule:
//
//	not_null         missing_count(col) = 0            (<= N with max_failing N)
//	unique           duplicate_count(a, b) = 0
//	accepted_values  invalid_count(col) = 0 + valid values: [...]
//	pattern          invalid_count(col) = 0 + valid regex: ...
//	range            invalid_count(col) = 0 + valid min / valid max
//	referential      values in (col) must exist in <schema>.<table> (ref_col)   (max_orphan_pct 0 only)
//	freshness        freshness(col) < 90m
//	row_count_min    row_count >= N
//	custom_sql       vigia_custom_sql_N = 0 + vigia_custom_sql_N query: <sql>   (a user-defined metric)

// sodaFormats are the SodaCL valid formats Vigia reads, as the pattern they mean.
var sodaFormats = map[string]string{
	"email":            `^[^@ ]+@[^@ ]+\.[A-Za-z]{2,}$`,
	"uuid":             `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`,
	"integer":          `^[-+]?[0-9]+$`,
	"positive integer": `^[+]?[0-9]+$`,
	"date iso 8601":    `^[0-9]{4}-[0-9]{2}-[0-9]{2}`,
}

// sodaIdent writes a name for a SodaCL expression, double-quoted unless plain.
func sodaIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func sodaTable(t Table) string {
	if t.Schema == "" {
		return sodaIdent(t.Name)
	}
	return sodaIdent(t.Schema) + "." + sodaIdent(t.Name)
}

func sodaColumns(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = sodaIdent(c)
	}
	return strings.Join(parts, ", ")
}

func sodaCountThreshold(n int64) string {
	if n == 0 {
		return "= 0"
	}
	return "<= " + strconv.FormatInt(n, 10)
}

type sodaConfig struct{ key, value string }

// sodaCheck is a rule's check expression and configuration, or why it has none.
func sodaCheck(r Rule, custom *int) (string, []sodaConfig, string) {
	switch r.Type {
	case TypeNotNull:
		return "missing_count(" + sodaIdent(r.Column) + ") " + sodaCountThreshold(r.failing()), nil, ""
	case TypeUnique:
		return "duplicate_count(" + sodaColumns(r.keyColumns()) + ") " + sodaCountThreshold(r.failing()), nil, ""
	case TypeAcceptedValues:
		vals := make([]string, len(r.Values))
		for i, v := range r.Values {
			vals[i] = jsonText(v)
		}
		return "invalid_count(" + sodaIdent(r.Column) + ") " + sodaCountThreshold(r.failing()),
			[]sodaConfig{{"valid values", "[" + strings.Join(vals, ", ") + "]"}}, ""
	case TypePattern:
		return "invalid_count(" + sodaIdent(r.Column) + ") " + sodaCountThreshold(r.failing()),
			[]sodaConfig{{"valid regex", jsonText(r.Pattern)}}, ""
	case TypeRange:
		var cfg []sodaConfig
		if r.Min != nil {
			cfg = append(cfg, sodaConfig{"valid min", formatNumber(*r.Min)})
		}
		if r.Max != nil {
			cfg = append(cfg, sodaConfig{"valid max", formatNumber(*r.Max)})
		}
		return "invalid_count(" + sodaIdent(r.Column) + ") " + sodaCountThreshold(r.failing()), cfg, ""
	case TypeReferential:
		if r.Ref == nil {
			return "", nil, UnsupportedReferenceNotVisible
		}
		if r.MaxOrphanPct != nil && *r.MaxOrphanPct != 0 {
			return "", nil, UnsupportedThresholdPercent
		}
		return "values in (" + sodaIdent(r.Column) + ") must exist in " + sodaTable(*r.Ref) + " (" + sodaIdent(r.RefColumn) + ")", nil, ""
	case TypeFreshness:
		if r.MaxAgeHours == nil {
			return "", nil, UnsupportedNoEquivalent
		}
		n, unit := ageText(*r.MaxAgeHours)
		return "freshness(" + sodaIdent(r.Column) + ") < " + strconv.FormatInt(n, 10) + unit, nil, ""
	case TypeRowCountMin:
		if r.MinRows == nil {
			return "", nil, UnsupportedNoEquivalent
		}
		return "row_count >= " + strconv.FormatInt(*r.MinRows, 10), nil, ""
	case TypeCustomSQL:
		*custom++
		metric := "vigia_custom_sql_" + strconv.Itoa(*custom)
		return metric + " " + sodaCountThreshold(r.failing()), []sodaConfig{{metric + " query", jsonText(r.SQL)}}, ""
	}
	return "", nil, UnsupportedNoEquivalent
}

func encodeSodaCL(tables []Table, rules []Rule) Output {
	out := Output{Format: FormatSodaCL}
	var body bytes.Buffer
	custom := 0
	for i, group := range byTable(tables, rules) {
		body.WriteString(yamlText("checks for "+sodaTable(tables[i])) + ":")
		n := 0
		for _, r := range group {
			check, cfg, reason := sodaCheck(r, &custom)
			if reason != "" {
				out.Unsupported = append(out.Unsupported, Unsupported{RuleID: r.ID, Type: r.Type, Table: r.Table, Reason: reason})
				continue
			}
			if n == 0 {
				body.WriteString("\n")
			}
			n++
			out.Exported++
			if r.Name != "" {
				cfg = append([]sodaConfig{{"name", yamlText(r.Name)}}, cfg...)
			}
			if len(cfg) == 0 {
				body.WriteString("  - " + yamlText(check) + "\n")
				continue
			}
			body.WriteString("  - " + yamlText(check) + ":\n")
			for _, c := range cfg {
				body.WriteString("      " + yamlText(c.key) + ": " + c.value + "\n")
			}
		}
		if n == 0 {
			body.WriteString(" []\n")
		}
	}
	var head bytes.Buffer
	header(&head, FormatSodaCL, out.Exported, out.Unsupported)
	head.Write(body.Bytes())
	out.Body = head.Bytes()
	return out
}

// sodaTok is a token of a SodaCL check expression.
type sodaTok struct {
	kind byte // 'w' word, 'q' quoted name, 'n' number, 'o' operator, 'p' punctuation ( ) ,
	text string
}

func sodaLex(s string) ([]sodaTok, bool) {
	var out []sodaTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return nil, false
			}
			out = append(out, sodaTok{'q', b.String()})
			i = j
		case c == '(' || c == ')' || c == ',' || c == '.' && (i+1 >= len(s) || s[i+1] < '0' || s[i+1] > '9'):
			out = append(out, sodaTok{'p', string(c)})
			i++
		case c == '<' || c == '>' || c == '=' || c == '!':
			j := i + 1
			if j < len(s) && s[j] == '=' {
				j++
			}
			out = append(out, sodaTok{'o', s[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '-' || c == '.':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] >= 'a' && s[j] <= 'z' || s[j] == '%') {
				j++
			}
			out = append(out, sodaTok{'n', s[i:j]})
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			out = append(out, sodaTok{'w', s[i:j]})
			i = j
		default:
			return nil, false
		}
	}
	return out, true
}

// sodaExpr reads a token list.
type sodaExpr struct {
	toks []sodaTok
	pos  int
}

func (e *sodaExpr) peek() (sodaTok, bool) {
	if e.pos < len(e.toks) {
		return e.toks[e.pos], true
	}
	return sodaTok{}, false
}

func (e *sodaExpr) next() (sodaTok, bool) {
	t, ok := e.peek()
	if ok {
		e.pos++
	}
	return t, ok
}

func (e *sodaExpr) punct(p string) bool {
	if t, ok := e.peek(); ok && t.kind == 'p' && t.text == p {
		e.pos++
		return true
	}
	return false
}

func (e *sodaExpr) word(w string) bool {
	if t, ok := e.peek(); ok && t.kind == 'w' && strings.EqualFold(t.text, w) {
		e.pos++
		return true
	}
	return false
}

func (e *sodaExpr) name() (string, bool) {
	t, ok := e.peek()
	if ok && (t.kind == 'w' || t.kind == 'q') {
		e.pos++
		return t.text, true
	}
	return "", false
}

// names reads "(a, b, ...)".
func (e *sodaExpr) names() ([]string, bool) {
	if !e.punct("(") {
		return nil, false
	}
	var out []string
	for {
		n, ok := e.name()
		if !ok {
			return nil, false
		}
		out = append(out, n)
		if e.punct(")") {
			return out, true
		}
		if !e.punct(",") {
			return nil, false
		}
	}
}

// table reads name or schema.name.
func (e *sodaExpr) table() (Table, bool) {
	first, ok := e.name()
	if !ok {
		return Table{}, false
	}
	if e.punct(".") {
		second, ok := e.name()
		if !ok {
			return Table{}, false
		}
		return Table{Schema: first, Name: second}, true
	}
	return Table{Name: first}, true
}

func (e *sodaExpr) done() bool { return e.pos == len(e.toks) }

// threshold reads "<op> <number>" to the end.
func (e *sodaExpr) threshold() (string, float64, bool) {
	op, ok := e.next()
	if !ok || op.kind != 'o' {
		return "", 0, false
	}
	n, ok := e.next()
	if !ok || n.kind != 'n' || !e.done() {
		return "", 0, false
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return op.text, 0, false
	}
	return op.text, f, true
}

// countAllowance turns a count threshold into max_failing; ok false when the
// threshold is not "at most N".
func countAllowance(op string, n float64) (int64, bool) {
	if n != math.Trunc(n) || n < 0 || n > 1e15 {
		return 0, false
	}
	switch op {
	case "=":
		return 0, n == 0
	case "<=":
		return int64(n), true
	case "<":
		return int64(n) - 1, n >= 1
	}
	return 0, false
}

// sodaDuration reads 90m, 2h, 1d, 30s or combinations (1d12h) as hours.
func sodaDuration(s string) (float64, bool) {
	total, num := 0.0, ""
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9' || c == '.':
			num += string(c)
		default:
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, false
			}
			switch c {
			case 'd':
				total += v * 24
			case 'h':
				total += v
			case 'm':
				total += v / 60
			case 's':
				total += v / 3600
			default:
				return 0, false
			}
			num = ""
		}
	}
	return total, num == "" && total > 0
}

func decodeSodaCL(root *node) ([]Item, error) {
	if root.kind != mapNode {
		return nil, &ParseError{Line: root.line, Code: "not_a_rules_file"}
	}
	var items []Item
	sections := 0
	for i, key := range root.keys {
		val := root.items[i]
		rest, ok := strings.CutPrefix(key, "checks for ")
		if !ok {
			items = append(items, Item{Line: val.line, Status: StatusUnsupported, Code: CodeUnsupportedSection})
			continue
		}
		sections++
		toks, lexed := sodaLex(strings.TrimSpace(rest))
		e := &sodaExpr{toks: toks}
		table, named := e.table()
		if !lexed || !named || !e.done() {
			code := CodeSyntax
			if lexed && named {
				code = CodeUnsupportedConfig // a partition or filter: "checks for t [daily]"
			}
			items = append(items, Item{Line: val.line, Status: StatusInvalid, Code: code})
			continue
		}
		switch val.kind {
		case scalarNode:
			if val.value != nil {
				items = append(items, Item{Line: val.line, Status: StatusInvalid, Code: CodeSyntax})
			}
			continue
		case mapNode:
			items = append(items, Item{Line: val.line, Status: StatusInvalid, Code: CodeSyntax})
			continue
		}
		for _, check := range val.items {
			it := sodaItem(check)
			it.Rule.Table = table
			items = append(items, it)
		}
	}
	if sections == 0 {
		return nil, &ParseError{Line: root.line, Code: "not_a_rules_file"}
	}
	return items, nil
}

// sodaItem reads one check: "expr" or "expr: {config}".
func sodaItem(check *node) Item {
	it := Item{Line: check.line}
	invalid := func(code string) Item {
		it.Status, it.Code, it.Rule = StatusInvalid, code, Rule{}
		return it
	}
	unsupported := func(code string) Item {
		it.Status, it.Code, it.Rule = StatusUnsupported, code, Rule{}
		return it
	}
	var expr string
	var cfg *node
	switch check.kind {
	case scalarNode:
		s, ok := check.str()
		if !ok {
			return invalid(CodeSyntax)
		}
		expr = s
	case mapNode:
		if len(check.keys) != 1 {
			return invalid(CodeSyntax)
		}
		expr, cfg = check.keys[0], check.items[0]
		if cfg.kind == scalarNode && cfg.value == nil {
			cfg = nil
		} else if cfg.kind != mapNode {
			return invalid(CodeSyntax)
		}
	default:
		return invalid(CodeSyntax)
	}
	toks, ok := sodaLex(expr)
	if !ok || len(toks) == 0 {
		return invalid(CodeSyntax)
	}
	r := &it.Rule
	// Configuration keys every check may carry; the rest belongs to the check kind.
	allowed := map[string]bool{"name": true, "attributes": true, "identity": true}
	// A threshold may come as a warn or fail condition instead of inline: "fail: when > 10"
	// is the inline "<= 10" of a critical rule, "warn: when > 10" of a warning one.
	if !slices.ContainsFunc(toks, func(t sodaTok) bool { return t.kind == 'o' }) && !(toks[0].kind == 'w' && toks[0].text == "values") {
		cond, severity, code := sodaCondition(cfg)
		if code != "" {
			return unsupported(code)
		}
		if cond == nil {
			return invalid(CodeSyntax)
		}
		toks = append(toks, cond...)
		allowed["fail"], allowed["warn"] = true, true
		r.Severity = severity
	}
	e := &sodaExpr{toks: toks}
	if cfg != nil {
		if n := cfg.get("name"); n != nil {
			s, ok := n.text()
			if !ok {
				return invalid(CodeInvalidValue)
			}
			r.Name = s
		}
		if a := cfg.get("attributes"); a != nil {
			if sev, ok := a.get("severity").str(); ok && validSeverity(sev) {
				r.Severity = sev
			}
		}
	}
	first := toks[0]
	switch {
	case first.kind == 'w' && first.text == "row_count":
		e.pos++
		op, n, ok := e.threshold()
		if !ok {
			return invalid(CodeSyntax)
		}
		if n != math.Trunc(n) || n < 0 || n > 1e15 {
			return unsupported(CodeUnsupportedThreshold)
		}
		var min int64
		switch op {
		case ">=":
			min = int64(n)
		case ">":
			min = int64(n) + 1
		case "!=":
			if n != 0 {
				return unsupported(CodeUnsupportedThreshold)
			}
			min = 1
		default:
			return unsupported(CodeUnsupportedThreshold)
		}
		r.Type, r.MinRows = TypeRowCountMin, &min
	case first.kind == 'w' && first.text == "values" && len(toks) > 1 && toks[1].kind == 'w' && toks[1].text == "in":
		e.pos += 2
		cols, ok := e.names()
		if !ok || !e.word("must") {
			return invalid(CodeSyntax)
		}
		if e.word("not") {
			return unsupported(CodeUnsupportedCheck)
		}
		if !e.word("exist") || !e.word("in") {
			return invalid(CodeSyntax)
		}
		ref, ok := e.table()
		if !ok {
			return invalid(CodeSyntax)
		}
		refCols, ok := e.names()
		if !ok || !e.done() {
			return invalid(CodeSyntax)
		}
		if len(cols) != 1 || len(refCols) != 1 {
			return unsupported(CodeUnsupportedCheck)
		}
		zero := 0.0
		r.Type, r.Column, r.Ref, r.RefColumn, r.MaxOrphanPct = TypeReferential, cols[0], &ref, refCols[0], &zero
	case first.kind == 'w' && (first.text == "missing_count" || first.text == "duplicate_count" || first.text == "invalid_count" || first.text == "freshness"):
		e.pos++
		cols, ok := e.names()
		if !ok {
			return invalid(CodeSyntax)
		}
		if first.text == "freshness" {
			op, ok1 := e.next()
			d, ok2 := e.next()
			if !ok1 || !ok2 || op.kind != 'o' || d.kind != 'n' || !e.done() || len(cols) != 1 {
				return invalid(CodeSyntax)
			}
			hours, ok := sodaDuration(d.text)
			if !ok {
				return invalid(CodeSyntax)
			}
			if op.text != "<" && op.text != "<=" {
				return unsupported(CodeUnsupportedThreshold)
			}
			r.Type, r.Column, r.MaxAgeHours = TypeFreshness, cols[0], &hours
			break
		}
		op, n, ok := e.threshold()
		if !ok {
			return invalid(CodeSyntax)
		}
		allowance, ok := countAllowance(op, n)
		if !ok {
			return unsupported(CodeUnsupportedThreshold)
		}
		r.MaxFailing = &allowance
		switch first.text {
		case "missing_count":
			if len(cols) != 1 {
				return invalid(CodeSyntax)
			}
			r.Type, r.Column = TypeNotNull, cols[0]
		case "duplicate_count":
			r.Type = TypeUnique
			r.Columns = cols
		case "invalid_count":
			if len(cols) != 1 {
				return invalid(CodeSyntax)
			}
			r.Column = cols[0]
			code := sodaValidity(cfg, r, allowed)
			if code != "" {
				if code == CodeInvalidValue || code == CodeSyntax {
					return invalid(code)
				}
				return unsupported(code)
			}
		}
	case first.kind == 'w' && len(toks) >= 3 && toks[1].kind == 'o':
		// A user-defined metric: "<metric> <op> N" with "<metric> query: SELECT ...".
		metric := first.text
		q := cfg.get(metric + " query")
		if q == nil {
			return unsupported(CodeUnsupportedCheck)
		}
		sql, ok := q.str()
		if !ok || strings.TrimSpace(sql) == "" {
			return invalid(CodeInvalidValue)
		}
		e.pos++
		op, n, ok := e.threshold()
		if !ok {
			return invalid(CodeSyntax)
		}
		allowance, ok := countAllowance(op, n)
		if !ok {
			return unsupported(CodeUnsupportedThreshold)
		}
		allowed[metric+" query"] = true
		r.Type, r.SQL, r.MaxFailing = TypeCustomSQL, sql, &allowance
	default:
		return unsupported(CodeUnsupportedCheck)
	}
	if cfg != nil {
		for _, k := range cfg.keys {
			if !allowed[k] {
				return unsupported(CodeUnsupportedConfig)
			}
		}
	}
	it.Status = StatusRule
	return it
}

// passInverse is the pass condition of a fail or warn condition.
var passInverse = map[string]string{">": "<=", ">=": "<", "!=": "=", "<": ">=", "<=": ">", "=": "!="}

// sodaCondition reads a check's "fail: when <op> <value>" or "warn: when <op> <value>"
// as the tokens of the inline threshold that passes, with the rule's severity. Both,
// or neither, is a threshold Vigia's one rule cannot hold; nil tokens with no code is a
// condition that cannot be read.
func sodaCondition(cfg *node) ([]sodaTok, string, string) {
	fail, warn := cfg.get("fail"), cfg.get("warn")
	if (fail == nil) == (warn == nil) {
		return nil, "", CodeUnsupportedThreshold
	}
	c, severity := fail, SeverityCritical
	if warn != nil {
		c, severity = warn, SeverityWarning
	}
	s, ok := c.str()
	if !ok {
		return nil, "", ""
	}
	toks, ok := sodaLex(s)
	if !ok || len(toks) != 3 || toks[0].kind != 'w' || toks[0].text != "when" || toks[1].kind != 'o' || toks[2].kind != 'n' {
		if ok && len(toks) > 0 && toks[0].kind == 'w' && toks[0].text == "when" {
			return nil, "", CodeUnsupportedThreshold // between, percentages ...
		}
		return nil, "", ""
	}
	inv, known := passInverse[toks[1].text]
	if !known {
		return nil, "", ""
	}
	return []sodaTok{{'o', inv}, toks[2]}, severity, ""
}

// sodaValidity reads invalid_count's validity keys into the rule (accepted_values,
// pattern or range) and marks them allowed; it returns a reason code when it cannot.
func sodaValidity(cfg *node, r *Rule, allowed map[string]bool) string {
	if cfg == nil {
		return CodeUnsupportedCheck
	}
	var kinds []string
	for _, k := range cfg.keys {
		if strings.HasPrefix(k, "valid ") {
			allowed[k] = true
			kind := k
			if k == "valid min" || k == "valid max" {
				kind = "range"
			}
			if len(kinds) == 0 || kinds[len(kinds)-1] != kind {
				kinds = append(kinds, kind)
			}
		}
	}
	switch {
	case len(kinds) == 0:
		return CodeUnsupportedCheck
	case len(kinds) > 1:
		return CodeMultipleValidity
	}
	switch kinds[0] {
	case "valid values":
		v := cfg.get("valid values")
		if v.kind != seqNode || len(v.items) == 0 {
			return CodeInvalidValue
		}
		for _, it := range v.items {
			s, ok := it.text()
			if !ok {
				return CodeInvalidValue
			}
			r.Values = append(r.Values, s)
		}
		r.Type = TypeAcceptedValues
	case "valid regex":
		s, ok := cfg.get("valid regex").str()
		if !ok || s == "" {
			return CodeInvalidValue
		}
		r.Type, r.Pattern = TypePattern, s
	case "valid format":
		s, ok := cfg.get("valid format").str()
		if !ok {
			return CodeInvalidValue
		}
		p, known := sodaFormats[strings.ToLower(strings.TrimSpace(s))]
		if !known {
			return CodeUnsupportedFormat
		}
		r.Type, r.Pattern = TypePattern, p
	case "range":
		for _, k := range []string{"valid min", "valid max"} {
			v := cfg.get(k)
			if v == nil {
				continue
			}
			f, ok := v.number()
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				return CodeInvalidValue
			}
			if k == "valid min" {
				r.Min = &f
			} else {
				r.Max = &f
			}
		}
		r.Type = TypeRange
	default:
		return CodeUnsupportedConfig // valid length, valid min length ...
	}
	return ""
}
