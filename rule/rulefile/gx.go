package rulefile

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// Great Expectations: one expectation suite per dataset (expectation_suite_name is
// schema.table), an expectation per rule:
//
//	not_null         expect_column_values_to_not_be_null {column}
//	unique           expect_column_values_to_be_unique {column}; several: expect_compound_columns_to_be_unique {column_list}
//	accepted_values  expect_column_values_to_be_in_set {column, value_set}
//	pattern          expect_column_values_to_match_regex {column, regex}
//	range            expect_column_values_to_be_between {column, min_value, max_value}
//	row_count_min    expect_table_row_count_to_be_between {min_value}
//	referential, freshness, custom_sql, and any allowance of failing rows: unsupported
//
// The severity and name of a rule ride in the expectation's meta; the unsupported
// rules are listed in the suite's meta (JSON has no comments).

type gxSuite struct {
	Name         string          `json:"expectation_suite_name"`
	Expectations []gxExpectation `json:"expectations"`
	Meta         gxSuiteMeta     `json:"meta"`
}

type gxSuiteMeta struct {
	Vigia gxExport `json:"vigia"`
}

type gxExport struct {
	Exported    int             `json:"exported"`
	Unsupported []gxUnsupported `json:"unsupported"`
}

type gxUnsupported struct {
	RuleID   string `json:"rule_id"`
	RuleType string `json:"rule_type"`
	Reason   string `json:"reason"`
}

type gxExpectation struct {
	Type   string         `json:"expectation_type"`
	Kwargs map[string]any `json:"kwargs"`
	Meta   map[string]any `json:"meta,omitempty"`
}

func gxExpectationOf(r Rule) (gxExpectation, string) {
	if r.failing() > 0 {
		return gxExpectation{}, UnsupportedThresholdCount
	}
	e := gxExpectation{Kwargs: map[string]any{}}
	switch r.Type {
	case TypeNotNull:
		e.Type, e.Kwargs["column"] = "expect_column_values_to_not_be_null", r.Column
	case TypeUnique:
		if cols := r.keyColumns(); len(cols) == 1 {
			e.Type, e.Kwargs["column"] = "expect_column_values_to_be_unique", cols[0]
		} else {
			e.Type, e.Kwargs["column_list"] = "expect_compound_columns_to_be_unique", cols
		}
	case TypeAcceptedValues:
		e.Type, e.Kwargs["column"], e.Kwargs["value_set"] = "expect_column_values_to_be_in_set", r.Column, r.Values
	case TypePattern:
		e.Type, e.Kwargs["column"], e.Kwargs["regex"] = "expect_column_values_to_match_regex", r.Column, r.Pattern
	case TypeRange:
		e.Type, e.Kwargs["column"] = "expect_column_values_to_be_between", r.Column
		if r.Min != nil {
			e.Kwargs["min_value"] = *r.Min
		}
		if r.Max != nil {
			e.Kwargs["max_value"] = *r.Max
		}
	case TypeRowCountMin:
		if r.MinRows == nil {
			return e, UnsupportedNoEquivalent
		}
		e.Type, e.Kwargs["min_value"] = "expect_table_row_count_to_be_between", *r.MinRows
	case TypeReferential:
		if r.Ref == nil {
			return e, UnsupportedReferenceNotVisible
		}
		return e, UnsupportedNoEquivalent
	default:
		return e, UnsupportedNoEquivalent
	}
	meta := map[string]any{}
	if r.Severity != "" {
		meta["severity"] = r.Severity
	}
	if r.Name != "" {
		meta["name"] = r.Name
	}
	if len(meta) > 0 {
		e.Meta = meta
	}
	return e, ""
}

func encodeGX(t Table, rules []Rule) Output {
	out := Output{Format: FormatGX}
	suite := gxSuite{Name: t.String(), Expectations: []gxExpectation{}, Meta: gxSuiteMeta{Vigia: gxExport{Unsupported: []gxUnsupported{}}}}
	for _, r := range byTable([]Table{t}, rules)[0] {
		e, reason := gxExpectationOf(r)
		if reason != "" {
			out.Unsupported = append(out.Unsupported, Unsupported{RuleID: r.ID, Type: r.Type, Table: r.Table, Reason: reason})
			suite.Meta.Vigia.Unsupported = append(suite.Meta.Vigia.Unsupported, gxUnsupported{RuleID: r.ID, RuleType: r.Type, Reason: reason})
			continue
		}
		out.Exported++
		suite.Expectations = append(suite.Expectations, e)
	}
	suite.Meta.Vigia.Exported = out.Exported
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(suite) // a struct of strings, numbers and lists always encodes
	out.Body = b.Bytes()
	return out
}

func decodeGX(root *node) ([]Item, error) {
	exps := root.get("expectations")
	if root.kind != mapNode || exps == nil || exps.kind != seqNode {
		return nil, &ParseError{Line: root.line, Code: "not_a_rules_file"}
	}
	name, _ := root.get("expectation_suite_name").text()
	if name == "" {
		name, _ = root.get("name").text() // GX 1.x suites
	}
	table := tableOfName(name)
	items := make([]Item, 0, len(exps.items))
	for i, e := range exps.items {
		items = append(items, gxItem(table, e, "expectations["+strconv.Itoa(i)+"]"))
	}
	return items, nil
}

// tableOfName splits schema.table at its last dot.
func tableOfName(s string) Table {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return Table{Schema: s[:i], Name: s[i+1:]}
		}
	}
	return Table{Name: s}
}

func jsonErrorLine(body []byte) int {
	var v any
	err := json.Unmarshal(body, &v)
	var se *json.SyntaxError
	if e, ok := err.(*json.SyntaxError); ok {
		se = e
	}
	if se == nil {
		return 0
	}
	off := int(se.Offset)
	if off > len(body) {
		off = len(body)
	}
	return bytes.Count(body[:off], []byte("\n")) + 1
}

func gxItem(t Table, e *node, path string) Item {
	it := Item{Line: e.line, Path: path}
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
	typ, ok := e.get("expectation_type").str()
	if !ok {
		typ, ok = e.get("type").str() // GX 1.x
	}
	kw := e.get("kwargs")
	if !ok || kw == nil || kw.kind != mapNode {
		return invalid(CodeSyntax)
	}
	if meta := e.get("meta"); meta != nil {
		if sev, ok := meta.get("severity").str(); ok && validSeverity(sev) {
			r.Severity = sev
		}
		if n, ok := meta.get("name").text(); ok {
			r.Name = n
		}
	}
	if sev, ok := e.get("severity").str(); ok && validSeverity(sev) {
		r.Severity = sev
	}
	known := map[string]bool{"result_format": true, "catch_exceptions": true, "include_config": true, "meta": true}
	column := func() (string, bool) {
		known["column"] = true
		c, ok := kw.get("column").text()
		return c, ok && c != ""
	}
	// mostly below 1 lets a share of rows fail: Vigia counts rows, not shares.
	if m := kw.get("mostly"); m != nil {
		known["mostly"] = true
		if f, ok := m.number(); !ok || f != 1 {
			return unsupported(CodeUnsupportedThreshold)
		}
	}
	switch typ {
	case "expect_column_values_to_not_be_null":
		c, ok := column()
		if !ok {
			return invalid(CodeInvalidValue)
		}
		r.Type, r.Column = TypeNotNull, c
	case "expect_column_values_to_be_unique":
		c, ok := column()
		if !ok {
			return invalid(CodeInvalidValue)
		}
		r.Type, r.Columns = TypeUnique, []string{c}
	case "expect_compound_columns_to_be_unique", "expect_select_column_values_to_be_unique_within_record":
		if typ != "expect_compound_columns_to_be_unique" {
			return unsupported(CodeUnsupportedCheck)
		}
		known["column_list"], known["ignore_row_if"] = true, true
		if v, ok := kw.get("ignore_row_if").str(); kw.get("ignore_row_if") != nil && (!ok || v != "any_value_is_missing") {
			return unsupported(CodeUnsupportedConfig)
		}
		cols := kw.get("column_list")
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
	case "expect_column_values_to_be_in_set":
		c, ok := column()
		known["value_set"] = true
		set := kw.get("value_set")
		if !ok || set == nil || set.kind != seqNode || len(set.items) == 0 {
			return invalid(CodeInvalidValue)
		}
		for _, v := range set.items {
			s, ok := v.text()
			if !ok {
				return invalid(CodeInvalidValue)
			}
			r.Values = append(r.Values, s)
		}
		r.Type, r.Column = TypeAcceptedValues, c
	case "expect_column_values_to_match_regex":
		c, ok := column()
		known["regex"] = true
		p, ok2 := kw.get("regex").str()
		if !ok || !ok2 || p == "" {
			return invalid(CodeInvalidValue)
		}
		r.Type, r.Column, r.Pattern = TypePattern, c, p
	case "expect_column_values_to_be_between":
		c, ok := column()
		if !ok {
			return invalid(CodeInvalidValue)
		}
		for _, k := range []string{"strict_min", "strict_max"} {
			known[k] = true
			if v := kw.get(k); v != nil && v.value != false {
				return unsupported(CodeUnsupportedConfig)
			}
		}
		for _, k := range []string{"min_value", "max_value"} {
			known[k] = true
			v := kw.get(k)
			if v == nil || v.kind == scalarNode && v.value == nil {
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
		if r.Min == nil && r.Max == nil {
			return invalid(CodeInvalidValue)
		}
		r.Type, r.Column = TypeRange, c
	case "expect_table_row_count_to_be_between":
		known["min_value"], known["max_value"] = true, true
		if v := kw.get("max_value"); v != nil && !(v.kind == scalarNode && v.value == nil) {
			return unsupported(CodeUnsupportedCheck)
		}
		f, ok := kw.get("min_value").number()
		if !ok || f < 0 || f != math.Trunc(f) || f > 1e15 {
			return invalid(CodeInvalidValue)
		}
		n := int64(f)
		r.Type, r.MinRows = TypeRowCountMin, &n
	default:
		return unsupported(CodeUnsupportedCheck)
	}
	for _, k := range kw.keys {
		if !known[k] {
			return unsupported(CodeUnsupportedConfig)
		}
	}
	if r.Type != TypeRowCountMin {
		zero := int64(0)
		r.MaxFailing = &zero
	}
	it.Status = StatusRule
	return it
}
