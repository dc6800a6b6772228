package rulefile_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigia-data/vigia/rule/rulefile"
	"github.com/vigia-data/vigia/rule/rulefile/rulefiletest"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

var (
	orders    = rulefile.Table{Schema: "public", Name: "encomendas"}
	customers = rulefile.Table{Schema: "public", Name: "clientes"}
)

// sample is one rule of every type, with the parameters each format can say and some
// it cannot.
func sample() []rulefile.Rule {
	return []rulefile.Rule{
		{ID: "r1", Table: orders, Type: rulefile.TypeNotNull, Severity: rulefile.SeverityCritical, Column: "cliente_id", MaxFailing: i64(0)},
		{ID: "r2", Table: orders, Type: rulefile.TypeNotNull, Severity: rulefile.SeverityWarning, Column: "nota", MaxFailing: i64(5)},
		{ID: "r3", Table: orders, Type: rulefile.TypeUnique, Severity: rulefile.SeverityWarning, Columns: []string{"id"}, MaxFailing: i64(0)},
		{ID: "r4", Table: orders, Type: rulefile.TypeUnique, Severity: rulefile.SeverityCritical, Columns: []string{"cliente_id", "data"}, MaxFailing: i64(0)},
		{ID: "r5", Table: orders, Type: rulefile.TypeAcceptedValues, Severity: rulefile.SeverityWarning, Column: "estado",
			Values: []string{"aberta", "paga", "1", "yes", `a "quoted": value`}, MaxFailing: i64(0)},
		{ID: "r6", Table: orders, Type: rulefile.TypePattern, Severity: rulefile.SeverityWarning, Name: "código postal", Column: "cp",
			Pattern: `^[0-9]{4}-[0-9]{3}$`, MaxFailing: i64(0)},
		{ID: "r7", Table: orders, Type: rulefile.TypeRange, Severity: rulefile.SeverityWarning, Column: "total", Min: f64(0), Max: f64(1e6),
			MaxFailing: i64(0)},
		{ID: "r8", Table: orders, Type: rulefile.TypeReferential, Severity: rulefile.SeverityCritical, Column: "cliente_id", Ref: &customers,
			RefColumn: "id", MaxOrphanPct: f64(0)},
		{ID: "r9", Table: orders, Type: rulefile.TypeReferential, Severity: rulefile.SeverityWarning, Column: "cliente_id", Ref: nil,
			RefColumn: "id", MaxOrphanPct: f64(0)},
		{ID: "r10", Table: orders, Type: rulefile.TypeFreshness, Severity: rulefile.SeverityWarning, Column: "criado_em", MaxAgeHours: f64(1.5)},
		{ID: "r11", Table: orders, Type: rulefile.TypeRowCountMin, Severity: rulefile.SeverityWarning, MinRows: i64(10)},
		{ID: "r12", Table: orders, Type: rulefile.TypeCustomSQL, Severity: rulefile.SeverityWarning,
			SQL: "SELECT COUNT(*) FROM public.encomendas WHERE total < 0", MaxFailing: i64(0)},
		{ID: "r13", Table: orders, Type: rulefile.TypeReferential, Severity: rulefile.SeverityWarning, Column: "cliente_id", Ref: &customers,
			RefColumn: "id", MaxOrphanPct: f64(2.5)},
	}
}

// comparable strips what a format does not carry for the round trip: ids, and
// severity, names and allowances where the format drops them.
func comparable(rs []rulefile.Rule, keepSeverity, keepName bool) []rulefile.Rule {
	out := make([]rulefile.Rule, 0, len(rs))
	for _, r := range rs {
		r.ID = ""
		if !keepSeverity {
			r.Severity = ""
		}
		if !keepName {
			r.Name = ""
		}
		if r.Type == rulefile.TypeUnique && len(r.Columns) == 0 && r.Column != "" {
			r.Columns, r.Column = []string{r.Column}, ""
		}
		if r.Severity == rulefile.SeverityInfo {
			r.Severity = rulefile.SeverityWarning
		}
		out = append(out, r)
	}
	return out
}

func exported(t *testing.T, rules []rulefile.Rule, out rulefile.Output) []rulefile.Rule {
	t.Helper()
	skip := map[string]bool{}
	for _, u := range out.Unsupported {
		skip[u.RuleID] = true
	}
	var keep []rulefile.Rule
	for _, r := range rules {
		if !skip[r.ID] {
			keep = append(keep, r)
		}
	}
	return keep
}

func decodeRules(t *testing.T, format string, body []byte) []rulefile.Rule {
	t.Helper()
	got, items, err := rulefile.Decode("", body)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if got != format {
		t.Fatalf("detected %q, want %q", got, format)
	}
	var rules []rulefile.Rule
	for _, it := range items {
		if it.Status != rulefile.StatusRule {
			t.Fatalf("item at line %d: %s %s\n%s", it.Line, it.Status, it.Code, body)
		}
		rules = append(rules, it.Rule)
	}
	return rules
}

func unsupportedIDs(out rulefile.Output) map[string]string {
	m := map[string]string{}
	for _, u := range out.Unsupported {
		m[u.RuleID] = u.Reason
	}
	return m
}

func TestSodaCLRoundTrip(t *testing.T) {
	rules := sample()
	out, ok := rulefile.Encode(rulefile.FormatSodaCL, []rulefile.Table{orders, customers}, rules)
	if !ok {
		t.Fatal("encode refused")
	}
	want := map[string]string{"r9": rulefile.UnsupportedReferenceNotVisible, "r13": rulefile.UnsupportedThresholdPercent}
	if diff := cmp.Diff(want, unsupportedIDs(out)); diff != "" {
		t.Fatalf("unsupported (-want +got):\n%s", diff)
	}
	if out.Exported != len(rules)-2 || !cmp.Equal(out.UnsupportedTypes(), []string{"referential"}) {
		t.Fatalf("exported %d, types %v", out.Exported, out.UnsupportedTypes())
	}
	text := string(out.Body)
	for _, s := range []string{"# Vigia rules export (sodacl): 11 exported, 2 unsupported", "# unsupported: rule r9 (referential) on public.encomendas: reference_not_visible",
		"checks for public.encomendas:", "- missing_count(cliente_id) = 0", "missing_count(nota) <= 5", "duplicate_count(cliente_id, data) = 0",
		"freshness(criado_em) < 90m", "row_count >= 10", "values in (cliente_id) must exist in public.clientes (id)", "checks for public.clientes: []"} {
		if !strings.Contains(text, s) {
			t.Errorf("missing %q in\n%s", s, text)
		}
	}
	got := decodeRules(t, rulefile.FormatSodaCL, out.Body)
	if diff := cmp.Diff(comparable(exported(t, rules, out), false, true), comparable(got, false, true)); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s\n%s", diff, text)
	}
}

func TestDBTRoundTripAndSchema(t *testing.T) {
	rules := sample()
	out, _ := rulefile.Encode(rulefile.FormatDBT, []rulefile.Table{orders, customers}, rules)
	want := map[string]string{"r9": rulefile.UnsupportedReferenceNotVisible, "r13": rulefile.UnsupportedThresholdPercent,
		"r12": rulefile.UnsupportedNoEquivalent}
	if diff := cmp.Diff(want, unsupportedIDs(out)); diff != "" {
		t.Fatalf("unsupported (-want +got):\n%s", diff)
	}
	rulefiletest.MustValidDBT(t, out.Body)
	text := string(out.Body)
	for _, s := range []string{"version: 2", "sources:", "- name: public", "- not_null", "severity: warn", `warn_if: ">5"`,
		"dbt_utils.unique_combination_of_columns:", "to: \"source('public', 'clientes')\"", "dbt_utils.recency:",
		"dbt_expectations.expect_table_row_count_to_be_between:", "dbt_expectations.expect_column_values_to_match_regex:"} {
		if !strings.Contains(text, s) {
			t.Errorf("missing %q in\n%s", s, text)
		}
	}
	got := decodeRules(t, rulefile.FormatDBT, out.Body)
	// dbt writes column tests grouped by column after table tests: compare as sets.
	if diff := cmp.Diff(sortRules(comparable(exported(t, rules, out), true, false)), sortRules(comparable(got, true, false))); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s\n%s", diff, text)
	}
}

func TestGXRoundTrip(t *testing.T) {
	rules := sample()
	if _, ok := rulefile.Encode(rulefile.FormatGX, []rulefile.Table{orders, customers}, rules); ok {
		t.Fatal("a GX suite of two tables was written")
	}
	out, _ := rulefile.Encode(rulefile.FormatGX, []rulefile.Table{orders}, rules)
	want := map[string]string{"r2": rulefile.UnsupportedThresholdCount, "r8": rulefile.UnsupportedNoEquivalent,
		"r9": rulefile.UnsupportedReferenceNotVisible, "r10": rulefile.UnsupportedNoEquivalent, "r12": rulefile.UnsupportedNoEquivalent,
		"r13": rulefile.UnsupportedNoEquivalent}
	if diff := cmp.Diff(want, unsupportedIDs(out)); diff != "" {
		t.Fatalf("unsupported (-want +got):\n%s", diff)
	}
	var suite map[string]any
	if err := json.Unmarshal(out.Body, &suite); err != nil {
		t.Fatal(err)
	}
	if suite["expectation_suite_name"] != "public.encomendas" {
		t.Fatalf("suite %v", suite)
	}
	if !strings.Contains(string(out.Body), `"expectation_type": "expect_compound_columns_to_be_unique"`) {
		t.Fatalf("no compound unique in\n%s", out.Body)
	}
	got := decodeRules(t, rulefile.FormatGX, out.Body)
	if diff := cmp.Diff(comparable(exported(t, rules, out), true, true), comparable(got, true, true)); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s\n%s", diff, out.Body)
	}
}

func TestNoExportNamesAnInvisibleReference(t *testing.T) {
	hidden := rulefile.Rule{ID: "r1", Table: orders, Type: rulefile.TypeReferential, Column: "cliente_id", RefColumn: "id", MaxOrphanPct: f64(0)}
	for _, f := range rulefile.Formats() {
		out, _ := rulefile.Encode(f, []rulefile.Table{orders}, []rulefile.Rule{hidden})
		if len(out.Unsupported) != 1 || out.Unsupported[0].Reason != rulefile.UnsupportedReferenceNotVisible || out.Exported != 0 {
			t.Errorf("%s: %+v", f, out)
		}
		if strings.Contains(string(out.Body), "clientes") {
			t.Errorf("%s names something of the reference:\n%s", f, out.Body)
		}
	}
}

func TestSodaCLItemsCarryTheirLine(t *testing.T) {
	body := []byte(`# checks kept in the team's repository
checks for public.encomendas:
  - missing_count(cliente_id) = 0
  - invalid_count(estado) = 0:
      valid values: [aberta, paga]
  - missing_count(nota = 0
  - missing_percent(nota) < 5
  - invalid_count(email) = 0:
      valid format: email
  - duplicate_count(cliente_id, data) < 3
  - freshness(criado_em) < 1d
  - row_count > 0
  - missing_count(nota) > 5
  - invalid_count(estado) = 0:
      valid values: [a]
      valid regex: b
  - total_negativo = 0:
      total_negativo query: SELECT COUNT(*) FROM public.encomendas WHERE total < 0
checks for clientes:
  - values in (pais) must exist in public.paises (codigo)
`)
	format, items, err := rulefile.Decode("", body)
	if err != nil || format != rulefile.FormatSodaCL {
		t.Fatalf("%s %v", format, err)
	}
	type brief struct {
		Line         int
		Status, Code string
		Type         string
	}
	var got []brief
	for _, it := range items {
		got = append(got, brief{it.Line, it.Status, it.Code, it.Rule.Type})
	}
	want := []brief{
		{3, "rule", "", "not_null"},
		{4, "rule", "", "accepted_values"},
		{6, "invalid", "syntax", ""},
		{7, "unsupported", "unsupported_check", ""},
		{8, "rule", "", "pattern"},
		{10, "rule", "", "unique"},
		{11, "rule", "", "freshness"},
		{12, "rule", "", "row_count_min"},
		{13, "unsupported", "unsupported_threshold", ""},
		{14, "unsupported", "multiple_validity", ""},
		{17, "rule", "", "custom_sql"},
		{20, "rule", "", "referential"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	if r := items[5].Rule; *r.MaxFailing != 2 || len(r.Columns) != 2 {
		t.Fatalf("duplicate_count < 3: %+v", r)
	}
	if r := items[6].Rule; *r.MaxAgeHours != 24 {
		t.Fatalf("freshness 1d: %+v", r)
	}
	if r := items[11].Rule; r.Table != (rulefile.Table{Name: "clientes"}) || *r.Ref != (rulefile.Table{Schema: "public", Name: "paises"}) {
		t.Fatalf("reference: %+v", r)
	}
}

func TestUnreadableFilesAreOneErrorWithALine(t *testing.T) {
	cases := []struct {
		name, format, body string
		code               string
		line               int
	}{
		{"YAMLSyntax", "sodacl", "checks for t:\n  - missing_count(a) = 0\n  - [unclosed\n", "yaml_invalid", 3},
		{"NotSodaCL", "sodacl", "foo: bar\n", "not_a_rules_file", 1},
		{"Alias", "sodacl", "checks for t: &a\n  - row_count > 0\nchecks for u: *a\n", "yaml_invalid", 1},
		{"JSONSyntax", "gx", "{\n \"expectations\": [\n  {\"expectation_type\": }\n ]\n}", "json_invalid", 3},
		{"NotGX", "gx", `{"foo": 1}`, "not_a_rules_file", 1},
		{"NotDBT", "dbt", "version: 2\n", "not_a_rules_file", 1},
		{"Undetected", "", "hello: world\n", "format_unknown", 0},
		{"NULInAYAMLEscape", "sodacl", "checks for t:\n  - row_count > 0\n  - \"missing_count(a\\0b) = 0\"\n", "value_error", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, items, err := rulefile.Decode(c.format, []byte(c.body))
			pe, ok := err.(*rulefile.ParseError)
			if !ok || pe.Code != c.code || (c.line > 0 && pe.Line != c.line) || items != nil {
				t.Fatalf("err %v (%#v), items %v", err, err, items)
			}
		})
	}
}

func TestDBTReadsModelsAndArguments(t *testing.T) {
	body := []byte(`version: 2
models:
  - name: clientes
    columns:
      - name: id
        tests:
          - unique
          - not_null:
              config:
                severity: error
                error_if: ">3"
      - name: pais
        data_tests:
          - relationships:
              arguments:
                to: ref('paises')
                field: codigo
          - accepted_values:
              values: ['PT', 'ES']
              config:
                where: "ativo"
          - dbt_expectations.expect_column_values_to_be_between:
              min_value: 0
              max_value: 10
              strictly: true
`)
	_, items, err := rulefile.Decode(rulefile.FormatDBT, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 {
		t.Fatalf("items %+v", items)
	}
	if r := items[1].Rule; r.Type != "not_null" || r.Severity != "critical" || *r.MaxFailing != 3 || items[1].Line != 8 {
		t.Fatalf("not_null %+v", items[1])
	}
	if r := items[2].Rule; r.Type != "referential" || *r.Ref != (rulefile.Table{Name: "paises"}) || r.RefColumn != "codigo" {
		t.Fatalf("relationships %+v", items[2])
	}
	if items[3].Status != "unsupported" || items[3].Code != "unsupported_config" || items[3].Path != "models[0].columns[1].data_tests[1]" {
		t.Fatalf("accepted_values with where: %+v", items[3])
	}
	if items[4].Status != "unsupported" {
		t.Fatalf("strictly between: %+v", items[4])
	}
}

func sortRules(rs []rulefile.Rule) []rulefile.Rule {
	out := append([]rulefile.Rule{}, rs...)
	key := func(r rulefile.Rule) string {
		b, _ := json.Marshal(r)
		return string(b)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && key(out[j]) < key(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Names a database allows but a file format reads specially (quotes, colons, hashes,
// brackets, line breaks, words YAML reads as booleans, non-ASCII) survive every format.
func TestOddNamesRoundTrip(t *testing.T) {
	odd := []string{`a "quoted" col`, "col: with colon", "# not a comment", "[bracket]", "two\nlines", "yes", "123", "ção", "a,b", "x'y"}
	table := rulefile.Table{Schema: "Esquema Ímpar", Name: `tabela "x": #1`}
	refTable := rulefile.Table{Schema: "main", Name: "ref table"}
	var rules []rulefile.Rule
	for i, c := range odd {
		id := string(rune('a' + i))
		rules = append(rules,
			rulefile.Rule{ID: id + "1", Table: table, Type: rulefile.TypeNotNull, Severity: rulefile.SeverityWarning, Column: c, MaxFailing: i64(0)},
			rulefile.Rule{ID: id + "2", Table: table, Type: rulefile.TypeAcceptedValues, Severity: rulefile.SeverityWarning, Column: c,
				Values: []string{c, "true", "null", "- x"}, MaxFailing: i64(0)},
			rulefile.Rule{ID: id + "3", Table: table, Type: rulefile.TypeUnique, Severity: rulefile.SeverityWarning, Columns: []string{c, "id"}, MaxFailing: i64(0)},
			rulefile.Rule{ID: id + "4", Table: table, Type: rulefile.TypePattern, Severity: rulefile.SeverityWarning, Name: c, Column: c,
				Pattern: `^\d+"'` + c, MaxFailing: i64(0)},
		)
	}
	rules = append(rules, rulefile.Rule{ID: "ref", Table: table, Type: rulefile.TypeReferential, Severity: rulefile.SeverityWarning,
		Column: odd[0], Ref: &refTable, RefColumn: odd[1], MaxOrphanPct: f64(0)})
	for _, f := range rulefile.Formats() {
		t.Run(f, func(t *testing.T) {
			out, _ := rulefile.Encode(f, []rulefile.Table{table}, rules)
			if f == rulefile.FormatDBT {
				rulefiletest.MustValidDBT(t, out.Body)
			}
			got := decodeRules(t, f, out.Body)
			want := comparable(exported(t, rules, out), f != rulefile.FormatSodaCL, f != rulefile.FormatDBT)
			if diff := cmp.Diff(sortRules(want), sortRules(comparable(got, f != rulefile.FormatSodaCL, f != rulefile.FormatDBT))); diff != "" {
				t.Fatalf("(-want +got):\n%s\n%s", diff, out.Body)
			}
		})
	}
}

// SodaCL's warn and fail conditions are the inline threshold that passes, with the
// rule's severity; both on one check, or a condition Vigia cannot hold, is unsupported.
func TestSodaCLWarnAndFailConditions(t *testing.T) {
	body := []byte(`checks for public.encomendas:
  - missing_count(email):
      fail: when > 10
  - duplicate_count(id):
      warn: when >= 1
  - row_count:
      fail: when < 100
  - freshness(criado_em):
      warn: when > 2h
  - missing_count(nota):
      warn: when > 5
      fail: when > 50
  - missing_count(nota):
      fail: when between 1 and 5
`)
	_, items, err := rulefile.Decode(rulefile.FormatSodaCL, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 6 {
		t.Fatalf("items %+v", items)
	}
	if r := items[0].Rule; items[0].Status != "rule" || r.Type != "not_null" || *r.MaxFailing != 10 || r.Severity != "critical" {
		t.Fatalf("fail when > 10: %+v", items[0])
	}
	if r := items[1].Rule; r.Type != "unique" || *r.MaxFailing != 0 || r.Severity != "warning" {
		t.Fatalf("warn when >= 1: %+v", items[1])
	}
	if r := items[2].Rule; r.Type != "row_count_min" || *r.MinRows != 100 {
		t.Fatalf("fail when < 100: %+v", items[2])
	}
	if r := items[3].Rule; r.Type != "freshness" || *r.MaxAgeHours != 2 || r.Severity != "warning" {
		t.Fatalf("warn when > 2h: %+v", items[3])
	}
	for _, it := range items[4:] {
		if it.Status != "unsupported" || it.Code != "unsupported_threshold" {
			t.Fatalf("%+v", it)
		}
	}
}

// BenchmarkDecodeSodaCL reads a file of MaxItems checks, the most an import takes.
func BenchmarkDecodeSodaCL(b *testing.B) {
	var body strings.Builder
	body.WriteString("checks for public.encomendas:\n")
	for i := 0; i < rulefile.MaxItems; i++ {
		fmt.Fprintf(&body, "  - invalid_count(col_%d) = 0:\n      valid values: [a, b, c]\n", i)
	}
	data := []byte(body.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, items, err := rulefile.Decode("", data); err != nil || len(items) != rulefile.MaxItems {
			b.Fatal(err, len(items))
		}
	}
}

// A file built to make a reader work — deep nesting, the whole 2 MiB of an upload — is
// refused or read in well under a second, and nothing of it is kept.
func TestHostileFilesAreCheap(t *testing.T) {
	for name, body := range map[string]string{
		"FlowNesting":  strings.Repeat("[", 2<<20),
		"MapNesting":   strings.Repeat("{a: ", 1<<19),
		"BlockNesting": strings.Repeat("- ", 1<<20),
		"ManyChecks":   "checks for t:\n" + strings.Repeat("  - row_count > 0\n", 100000),
		"JSONNesting":  `{"expectations": ` + strings.Repeat("[", 1<<20),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, items, err := rulefile.Decode("", []byte(body))
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("took %s", took)
			}
			if _, ok := err.(*rulefile.ParseError); !ok || items != nil {
				t.Fatalf("err %v, %d items", err, len(items))
			}
		})
	}
}
