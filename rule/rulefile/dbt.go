package rulefile

import (
	"bytes"
	"math"
	"strconv"
	"strings"
)

// dbt: a property file (version 2) whose sources are the tables Vigia watches — one
// source per schema, a table per dataset — with the rules as data tests:
//
//	not_null         column test not_null
//	unique           column test unique; several columns: dbt_utils.unique_combination_of_columns
//	accepted_values  column test accepted_values {values}
//	pattern          dbt_expectations.expect_column_values_to_match_regex {regex}
//	range            dbt_utils.accepted_range {min_value, max_value}
//	referential      column test relationships {to: source('schema', 'table'), field}   (max_orphan_pct 0 only)
//	freshness        dbt_utils.recency {datepart: minute, field, interval}
//	row_count_min    dbt_expectations.expect_table_row_count_to_be_between {min_value}
//	custom_sql       unsupported
//
// A rule's severity is the test's config.severity (critical: error, else warn) and its
// allowance of failing rows error_if/warn_if ">N". Import also reads models (named by
// table), tests or data_tests, arguments nested under "arguments" (dbt 1.10), and
// relationships to ref('table').

// dbtSourceName is the source a table belongs to: its schema (main for a schemaless
// SQLite table).
func dbtSourceName(t Table) string {
	if t.Schema == "" {
		return "main"
	}
	return t.Schema
}

// dbtTest is one rendered test: at the column (column set) or the table.
type dbtTest struct {
	column string
	lines  []string // the test's YAML, first line after "- "
}

func dbtConfig(r Rule) []string {
	var cfg []string
	sev := severityToDBT(r.Severity)
	if r.Severity != "" && sev != "error" {
		cfg = append(cfg, "severity: "+sev)
	}
	if n := r.failing(); n > 0 {
		key := "error_if"
		if sev == "warn" && r.Severity != "" {
			key = "warn_if"
		}
		cfg = append(cfg, key+": "+jsonText(">"+strconv.FormatInt(n, 10)))
	}
	return cfg
}

// dbtRender writes a test with its arguments (key: value lines) and config.
func dbtRender(name string, args [][2]string, cfg []string) []string {
	if len(args) == 0 && len(cfg) == 0 {
		return []string{name}
	}
	lines := []string{name + ":"}
	for _, a := range args {
		lines = append(lines, "  "+a[0]+": "+a[1])
	}
	if len(cfg) > 0 {
		lines = append(lines, "  config:")
		for _, c := range cfg {
			lines = append(lines, "    "+c)
		}
	}
	return lines
}

func flowList(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = jsonText(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func sqlLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func dbtTestOf(r Rule) (dbtTest, string) {
	cfg := dbtConfig(r)
	switch r.Type {
	case TypeNotNull:
		return dbtTest{column: r.Column, lines: dbtRender("not_null", nil, cfg)}, ""
	case TypeUnique:
		cols := r.keyColumns()
		if len(cols) == 1 {
			return dbtTest{column: cols[0], lines: dbtRender("unique", nil, cfg)}, ""
		}
		return dbtTest{lines: dbtRender("dbt_utils.unique_combination_of_columns",
			[][2]string{{"combination_of_columns", flowList(cols)}}, cfg)}, ""
	case TypeAcceptedValues:
		return dbtTest{column: r.Column, lines: dbtRender("accepted_values", [][2]string{{"values", flowList(r.Values)}}, cfg)}, ""
	case TypePattern:
		return dbtTest{column: r.Column, lines: dbtRender("dbt_expectations.expect_column_values_to_match_regex",
			[][2]string{{"regex", jsonText(r.Pattern)}}, cfg)}, ""
	case TypeRange:
		var args [][2]string
		if r.Min != nil {
			args = append(args, [2]string{"min_value", formatNumber(*r.Min)})
		}
		if r.Max != nil {
			args = append(args, [2]string{"max_value", formatNumber(*r.Max)})
		}
		return dbtTest{column: r.Column, lines: dbtRender("dbt_utils.accepted_range", args, cfg)}, ""
	case TypeReferential:
		if r.Ref == nil {
			return dbtTest{}, UnsupportedReferenceNotVisible
		}
		if r.MaxOrphanPct != nil && *r.MaxOrphanPct != 0 {
			return dbtTest{}, UnsupportedThresholdPercent
		}
		to := "source(" + sqlLiteral(dbtSourceName(*r.Ref)) + ", " + sqlLiteral(r.Ref.Name) + ")"
		return dbtTest{column: r.Column, lines: dbtRender("relationships",
			[][2]string{{"to", jsonText(to)}, {"field", yamlText(r.RefColumn)}}, cfg)}, ""
	case TypeFreshness:
		if r.MaxAgeHours == nil {
			return dbtTest{}, UnsupportedNoEquivalent
		}
		n, unit := ageText(*r.MaxAgeHours)
		part := "minute"
		if unit == "s" {
			part = "second"
		}
		return dbtTest{lines: dbtRender("dbt_utils.recency", [][2]string{{"datepart", part}, {"field", yamlText(r.Column)},
			{"interval", strconv.FormatInt(n, 10)}}, cfg)}, ""
	case TypeRowCountMin:
		if r.MinRows == nil {
			return dbtTest{}, UnsupportedNoEquivalent
		}
		return dbtTest{lines: dbtRender("dbt_expectations.expect_table_row_count_to_be_between",
			[][2]string{{"min_value", strconv.FormatInt(*r.MinRows, 10)}}, cfg)}, ""
	}
	return dbtTest{}, UnsupportedNoEquivalent
}

func encodeDBT(tables []Table, rules []Rule) Output {
	out := Output{Format: FormatDBT}
	var body bytes.Buffer
	body.WriteString("version: 2\n")
	groups := byTable(tables, rules)
	// Sources in the order their schemas first appear.
	var sources []string
	for _, t := range tables {
		if s := dbtSourceName(t); !containsString(sources, s) {
			sources = append(sources, s)
		}
	}
	if len(sources) > 0 {
		body.WriteString("sources:\n")
	}
	for _, src := range sources {
		body.WriteString("  - name: " + yamlText(src) + "\n    tables:\n")
		for i, t := range tables {
			if dbtSourceName(t) != src {
				continue
			}
			body.WriteString("      - name: " + yamlText(t.Name) + "\n")
			var tableTests []dbtTest
			var columns []string
			byColumn := map[string][]dbtTest{}
			for _, r := range groups[i] {
				test, reason := dbtTestOf(r)
				if reason != "" {
					out.Unsupported = append(out.Unsupported, Unsupported{RuleID: r.ID, Type: r.Type, Table: r.Table, Reason: reason})
					continue
				}
				out.Exported++
				if test.column == "" {
					tableTests = append(tableTests, test)
					continue
				}
				if _, seen := byColumn[test.column]; !seen {
					columns = append(columns, test.column)
				}
				byColumn[test.column] = append(byColumn[test.column], test)
			}
			writeTests := func(indent string, tests []dbtTest) {
				body.WriteString(indent + "data_tests:\n")
				for _, tt := range tests {
					for j, l := range tt.lines {
						if j == 0 {
							body.WriteString(indent + "  - " + l + "\n")
						} else {
							body.WriteString(indent + "    " + l + "\n")
						}
					}
				}
			}
			if len(tableTests) > 0 {
				writeTests("        ", tableTests)
			}
			if len(columns) > 0 {
				body.WriteString("        columns:\n")
				for _, c := range columns {
					body.WriteString("          - name: " + yamlText(c) + "\n")
					writeTests("            ", byColumn[c])
				}
			}
		}
	}
	var head bytes.Buffer
	header(&head, FormatDBT, out.Exported, out.Unsupported)
	head.Write(body.Bytes())
	out.Body = head.Bytes()
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func decodeDBT(root *node) ([]Item, error) {
	if root.kind != mapNode || (root.get("models") == nil && root.get("sources") == nil) {
		return nil, &ParseError{Line: root.line, Code: "not_a_rules_file"}
	}
	var items []Item
	tableTests := func(t Table, tn *node, path string) {
		for _, key := range []string{"data_tests", "tests"} {
			if tests := tn.get(key); tests != nil && tests.kind == seqNode {
				for j, test := range tests.items {
					items = append(items, dbtItem(t, "", test, path+"."+key+"["+strconv.Itoa(j)+"]"))
				}
			}
		}
		if cols := tn.get("columns"); cols != nil && cols.kind == seqNode {
			for ci, col := range cols.items {
				name, ok := col.get("name").text()
				cpath := path + ".columns[" + strconv.Itoa(ci) + "]"
				for _, key := range []string{"data_tests", "tests"} {
					tests := col.get(key)
					if tests == nil || tests.kind != seqNode {
						continue
					}
					for j, test := range tests.items {
						p := cpath + "." + key + "[" + strconv.Itoa(j) + "]"
						if !ok || name == "" {
							items = append(items, Item{Line: test.line, Path: p, Status: StatusInvalid, Code: CodeSyntax})
							continue
						}
						items = append(items, dbtItem(t, name, test, p))
					}
				}
			}
		}
	}
	if models := root.get("models"); models != nil && models.kind == seqNode {
		for i, m := range models.items {
			name, _ := m.get("name").text()
			tableTests(Table{Name: name}, m, "models["+strconv.Itoa(i)+"]")
		}
	}
	if sources := root.get("sources"); sources != nil && sources.kind == seqNode {
		for i, s := range sources.items {
			schema, _ := s.get("name").text()
			if v, ok := s.get("schema").text(); ok && v != "" {
				schema = v
			}
			tables := s.get("tables")
			if tables == nil || tables.kind != seqNode {
				continue
			}
			for j, tn := range tables.items {
				name, _ := tn.get("name").text()
				if v, ok := tn.get("identifier").text(); ok && v != "" {
					name = v
				}
				tableTests(Table{Schema: schema, Name: name}, tn, "sources["+strconv.Itoa(i)+"].tables["+strconv.Itoa(j)+"]")
			}
		}
	}
	return items, nil
}

// dbtItem reads one test of a table (column empty) or of a column.
func dbtItem(t Table, column string, test *node, path string) Item {
	it := Item{Line: test.line, Path: path}
	r := &it.Rule
	r.Table = t
	invalid := func(code string) Item {
		it.Status, it.Code, it.Rule = StatusInvalid, code, Rule{}
		return it
	}
	unsupported := func(code string) Item {
		it.Status, it.Code, it.Rule = StatusUnsupported, code, Rule{}
		return it
	}
	if t.Name == "" {
		return invalid(CodeMissingTable)
	}
	var name string
	var args *node
	switch test.kind {
	case scalarNode:
		s, ok := test.str()
		if !ok {
			return invalid(CodeSyntax)
		}
		name = s
	case mapNode:
		if len(test.keys) != 1 {
			return invalid(CodeSyntax)
		}
		name, args = test.keys[0], test.items[0]
		if args.kind == scalarNode && args.value == nil {
			args = nil
		} else if args.kind != mapNode {
			return invalid(CodeSyntax)
		}
	default:
		return invalid(CodeSyntax)
	}
	// Arguments may sit under "arguments" (dbt 1.10) or beside config (before).
	arg := func(k string) *node {
		if a := args.get("arguments"); a != nil {
			if v := a.get(k); v != nil {
				return v
			}
		}
		return args.get(k)
	}
	known := map[string]bool{"config": true, "name": true, "arguments": true, "description": true, "meta": true}
	if cfg := args.get("config"); cfg != nil {
		if sev, ok := cfg.get("severity").str(); ok {
			r.Severity = severityFromDBT(sev)
		}
		for _, k := range []string{"error_if", "warn_if"} {
			s, ok := cfg.get(k).str()
			if !ok {
				continue
			}
			if (k == "warn_if") != (r.Severity == SeverityWarning) {
				continue // the condition of the other severity does not apply
			}
			s = strings.ReplaceAll(s, " ", "")
			n, err := strconv.ParseInt(strings.TrimPrefix(s, ">"), 10, 64)
			switch {
			case s == "!=0":
				n = 0
			case !strings.HasPrefix(s, ">") || strings.HasPrefix(s, ">=") || err != nil || n < 0:
				return unsupported(CodeUnsupportedThreshold)
			}
			r.MaxFailing = &n
		}
		for _, k := range cfg.keys {
			if k == "where" || k == "limit" || k == "fail_calc" {
				return unsupported(CodeUnsupportedConfig)
			}
		}
	}
	if args.get("where") != nil {
		return unsupported(CodeUnsupportedConfig)
	}
	if n, ok := args.get("name").text(); ok {
		r.Name = n
	}
	needColumn := func() bool { return column != "" }
	text := func(k string) (string, bool) {
		v, ok := arg(k).text()
		known[k] = true
		return v, ok && v != ""
	}
	short := name
	for _, p := range []string{"dbt_utils.", "dbt_expectations.", "dbt."} {
		short = strings.TrimPrefix(short, p)
	}
	switch short {
	case "not_null", "expect_column_values_to_not_be_null":
		if !needColumn() {
			return invalid(CodeSyntax)
		}
		r.Type, r.Column = TypeNotNull, column
	case "unique", "expect_column_values_to_be_unique":
		if !needColumn() {
			return invalid(CodeSyntax)
		}
		r.Type, r.Columns = TypeUnique, []string{column}
	case "unique_combination_of_columns", "expect_compound_columns_to_be_unique":
		key := "combination_of_columns"
		if short == "expect_compound_columns_to_be_unique" {
			key = "column_list"
		}
		known[key] = true
		cols := arg(key)
		if cols == nil || cols.kind != seqNode || len(cols.items) == 0 {
			return invalid(CodeInvalidValue)
		}
		for _, c := range cols.items {
			s, ok := c.text()
			if !ok || s == "" {
				return invalid(CodeInvalidValue)
			}
			r.Columns = append(r.Columns, s)
		}
		r.Type = TypeUnique
	case "accepted_values", "expect_column_values_to_be_in_set":
		key := "values"
		if short != "accepted_values" {
			key = "value_set"
		}
		known[key], known["quote"] = true, true
		vals := arg(key)
		if !needColumn() || vals == nil || vals.kind != seqNode || len(vals.items) == 0 {
			return invalid(CodeInvalidValue)
		}
		for _, v := range vals.items {
			s, ok := v.text()
			if !ok {
				return invalid(CodeInvalidValue)
			}
			r.Values = append(r.Values, s)
		}
		r.Type, r.Column = TypeAcceptedValues, column
	case "expect_column_values_to_match_regex":
		p, ok := text("regex")
		if !needColumn() || !ok {
			return invalid(CodeInvalidValue)
		}
		r.Type, r.Column, r.Pattern = TypePattern, column, p
	case "accepted_range", "expect_column_values_to_be_between":
		known["inclusive"], known["strictly"] = true, true
		if v := arg("inclusive"); v != nil && v.value != true {
			return unsupported(CodeUnsupportedConfig)
		}
		if v := arg("strictly"); v != nil && v.value != false {
			return unsupported(CodeUnsupportedConfig)
		}
		for _, k := range []string{"min_value", "max_value"} {
			known[k] = true
			v := arg(k)
			if v == nil {
				continue
			}
			f, ok := v.number()
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				return invalid(CodeInvalidValue)
			}
			if k == "min_value" {
				r.Min = &f
			} else {
				r.Max = &f
			}
		}
		if !needColumn() || r.Min == nil && r.Max == nil {
			return invalid(CodeInvalidValue)
		}
		r.Type, r.Column = TypeRange, column
	case "relationships":
		to, ok1 := text("to")
		field, ok2 := text("field")
		if !needColumn() || !ok1 || !ok2 {
			return invalid(CodeInvalidValue)
		}
		ref, ok := dbtRelation(to)
		if !ok {
			return invalid(CodeInvalidValue)
		}
		zero := 0.0
		r.Type, r.Column, r.Ref, r.RefColumn, r.MaxOrphanPct = TypeReferential, column, &ref, field, &zero
	case "recency":
		part, ok1 := text("datepart")
		field, ok2 := text("field")
		interval, ok3 := arg("interval").number()
		known["interval"] = true
		if !ok1 || !ok2 || !ok3 || interval <= 0 {
			return invalid(CodeInvalidValue)
		}
		perHour := map[string]float64{"second": 3600, "minute": 60, "hour": 1, "day": 1.0 / 24, "week": 1.0 / 168}[strings.ToLower(part)]
		if perHour == 0 {
			return unsupported(CodeUnsupportedThreshold)
		}
		hours := interval / perHour
		r.Type, r.Column, r.MaxAgeHours = TypeFreshness, field, &hours
	case "expect_table_row_count_to_be_between":
		known["min_value"], known["max_value"] = true, true
		if arg("max_value") != nil {
			return unsupported(CodeUnsupportedCheck)
		}
		f, ok := arg("min_value").number()
		if !ok || f < 0 || f != math.Trunc(f) || f > 1e15 {
			return invalid(CodeInvalidValue)
		}
		n := int64(f)
		r.Type, r.MinRows, r.MaxFailing = TypeRowCountMin, &n, nil
	default:
		return unsupported(CodeUnsupportedCheck)
	}
	if args != nil {
		for _, k := range args.keys {
			if !known[k] {
				return unsupported(CodeUnsupportedConfig)
			}
		}
		if a := args.get("arguments"); a != nil {
			for _, k := range a.keys {
				if !known[k] {
					return unsupported(CodeUnsupportedConfig)
				}
			}
		}
	}
	switch r.Type {
	case TypeReferential, TypeFreshness, TypeRowCountMin:
		r.MaxFailing = nil
	default:
		if r.MaxFailing == nil {
			r.MaxFailing = new(int64)
		}
	}
	if r.Severity == "" {
		r.Severity = SeverityCritical // dbt's default severity is error
	}
	it.Status = StatusRule
	return it
}

// dbtRelation reads source('schema', 'table') or ref('table').
func dbtRelation(s string) (Table, bool) {
	s = strings.TrimSpace(s)
	fn, rest, ok := strings.Cut(s, "(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return Table{}, false
	}
	var args []string
	for _, a := range strings.Split(strings.TrimSuffix(rest, ")"), ",") {
		a = strings.TrimSpace(a)
		if len(a) < 2 || (a[0] != '\'' && a[0] != '"') || a[len(a)-1] != a[0] {
			return Table{}, false
		}
		args = append(args, strings.ReplaceAll(a[1:len(a)-1], string(a[0])+string(a[0]), string(a[0])))
	}
	switch {
	case strings.TrimSpace(fn) == "source" && len(args) == 2:
		return Table{Schema: args[0], Name: args[1]}, args[1] != ""
	case strings.TrimSpace(fn) == "ref" && len(args) == 1:
		return Table{Name: args[0]}, args[0] != ""
	}
	return Table{}, false
}
