package rule_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/rule"
)

func raw(t *testing.T, s string) rule.ParamsIn {
	t.Helper()
	var p rule.ParamsIn
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Parameters sent as JSON are checked against the rule type: every problem is named
// under params, without the value sent.
func TestParamsCheck(t *testing.T) {
	cases := []struct {
		name, ruleType, params string
		want                   string // fmt of the normalised params, or the first 422 item as type@loc
	}{
		{"NotNullDefaultsMaxFailing", "not_null", `{"column":"email"}`, "email max_failing=0"},
		{"UniqueOneColumnBecomesColumns", "unique", `{"column":"id"}`, "columns=[id] max_failing=0"},
		{"UniqueSeveralColumns", "unique", `{"columns":["a","b"],"max_failing":2}`, "columns=[a b] max_failing=2"},
		{"UniqueBothForms", "unique", `{"column":"a","columns":["b"]}`, "value_error@params.columns"},
		{"UniqueRepeatedColumn", "unique", `{"columns":["a","a"]}`, "value_error@params.columns"},
		{"UniqueNothing", "unique", `{}`, "missing@params.columns"},
		{"AcceptedValuesScalars", "accepted_values", `{"column":"s","values":["a",1,true,2.5]}`, "s values=[a 1 true 2.5] max_failing=0"},
		{"AcceptedValuesEmpty", "accepted_values", `{"column":"s","values":[]}`, "too_short@params.values"},
		{"AcceptedValuesObject", "accepted_values", `{"column":"s","values":[{"x":1}]}`, "value_error@params.values"},
		{"PatternNeedsPattern", "pattern", `{"column":"s"}`, "missing@params.pattern"},
		{"RangeNeedsABound", "range", `{"column":"v"}`, "missing@params.min"},
		{"RangeMinAboveMax", "range", `{"column":"v","min":5,"max":1}`, "value_error@params.min"},
		{"RangeMinOnly", "range", `{"column":"v","min":-1}`, "v min=-1 max_failing=0"},
		{"ReferentialDefaults", "referential", `{"column":"c","ref_dataset_id":"r","ref_column":"id"}`, "c ref=r.id orphan=0"},
		{"ReferentialPctBound", "referential", `{"column":"c","ref_dataset_id":"r","ref_column":"id","max_orphan_pct":101}`,
			"less_than_equal@params.max_orphan_pct"},
		{"FreshnessNeedsAge", "freshness", `{"column":"t"}`, "missing@params.max_age_hours"},
		{"FreshnessAgeTooSmall", "freshness", `{"column":"t","max_age_hours":0}`, "greater_than_equal@params.max_age_hours"},
		{"RowCountMinInteger", "row_count_min", `{"min_rows":2.5}`, "int_parsing@params.min_rows"},
		{"RowCountMinNoColumn", "row_count_min", `{"min_rows":10,"column":"x"}`, "extra_forbidden@params.column"},
		{"CustomSQL", "custom_sql", `{"sql":"SELECT COUNT(*) FROM t"}`, "sql=SELECT COUNT(*) FROM t max_failing=0"},
		{"UnknownParamNameIsNotEchoed", "not_null", `{"column":"c","<script>":1}`, "extra_forbidden@params.?"},
		{"WrongTypeColumn", "not_null", `{"column":5}`, "string_type@params.column"},
		{"UnknownType", "magic", `{}`, "enum@rule_type"},
		{"NullIsNotGiven", "not_null", `{"column":"c","max_failing":null}`, "c max_failing=0"},
		{"NumberAsText", "not_null", `{"column":"c","max_failing":"3"}`, "float_parsing@params.max_failing"},
		{"ColumnsNotAList", "unique", `{"columns":"a"}`, "list_type@params.columns"},
		{"ColumnsOfNumbers", "unique", `{"columns":[1]}`, "value_error@params.columns"},
		{"BlankColumn", "not_null", `{"column":"  "}`, "string_too_short@params.column"},
		{"NegativeMaxFailing", "not_null", `{"column":"c","max_failing":-1}`, "greater_than_equal@params.max_failing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, fields := raw(t, c.params).Check(c.ruleType)
			var got string
			if len(fields) > 0 {
				got = fields[0].Type + "@" + strings.Join(fields[0].Loc, ".")
			} else {
				got = describe(p)
			}
			if got != c.want {
				t.Fatalf("got %q; want %q", got, c.want)
			}
		})
	}
}

func describe(p rule.Params) string {
	var parts []string
	if p.Column != "" {
		parts = append(parts, p.Column)
	}
	if len(p.Columns) > 0 {
		parts = append(parts, fmt.Sprintf("columns=%v", p.Columns))
	}
	if len(p.Values) > 0 {
		parts = append(parts, fmt.Sprintf("values=%v", p.Values))
	}
	if p.Min != nil {
		parts = append(parts, fmt.Sprintf("min=%v", *p.Min))
	}
	if p.Max != nil {
		parts = append(parts, fmt.Sprintf("max=%v", *p.Max))
	}
	if p.RefDatasetID != "" {
		parts = append(parts, "ref="+p.RefDatasetID+"."+p.RefColumn, fmt.Sprintf("orphan=%v", *p.MaxOrphanPct))
	}
	if p.SQL != "" {
		parts = append(parts, "sql="+p.SQL)
	}
	if p.MaxFailing != nil {
		parts = append(parts, fmt.Sprintf("max_failing=%d", *p.MaxFailing))
	}
	return strings.Join(parts, " ")
}

func TestParamsCheckBoundsLongLists(t *testing.T) {
	vals := make([]string, rule.MaxValues+1)
	for i := range vals {
		vals[i] = "v"
	}
	c, sql := "c", strings.Repeat("x", rule.MaxSQL+1)
	_, fields := rule.ParamsIn{Column: &c, Values: vals}.Check("accepted_values")
	if len(fields) != 1 || fields[0].Type != "too_long" || fields[0].Ctx["max_length"] != rule.MaxValues {
		t.Fatalf("fields %+v", fields)
	}
	if _, fields := (rule.ParamsIn{SQL: &sql}).Check("custom_sql"); len(fields) != 1 ||
		fields[0].Type != "string_too_long" {
		t.Fatalf("fields %+v", fields)
	}
}

// Typed parameters (as GraphQL builds them) are checked by the same rules, and every
// problem is reported at once.
func TestTypedParamsCheck(t *testing.T) {
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	p, fields := rule.ParamsIn{Column: s("v"), Min: f(0), Max: f(10)}.Check(rule.TypeRange)
	if len(fields) > 0 || *p.Min != 0 || *p.Max != 10 || p.Column != "v" || *p.MaxFailing != 0 {
		t.Fatalf("%+v %v", p, fields)
	}
	_, fields = rule.ParamsIn{Pattern: s("x"), MinRows: f(2.5), Columns: []string{}}.Check(rule.TypeRowCountMin)
	var got []string
	for _, fe := range fields {
		got = append(got, fe.Type+"@"+strings.Join(fe.Loc, "."))
	}
	if strings.Join(got, " ") != "extra_forbidden@params.columns extra_forbidden@params.pattern int_parsing@params.min_rows" {
		t.Fatalf("%v", got)
	}
}
