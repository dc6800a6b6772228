package contract_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/internal/formatschema"
	"github.com/vigia-data/vigia/rule"
)

// formats is where the official schemas of the standards live, beside the repository.
const formats = "../../shared/formats"

// mustSchema compiles one of the official JSON Schemas.
func mustSchema(t *testing.T, rel string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(formats, rel))
	if err != nil {
		t.Fatalf("the official schema %s: %v", rel, err)
	}
	s, err := formatschema.Compile(raw, filepath.Base(rel))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustYAMLValue converts YAML to the JSON value a schema validates.
func mustYAMLValue(t *testing.T, y []byte) any {
	t.Helper()
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("not YAML: %v\n%s", err, y)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// sample is a dataset with a primary key, a unique e-mail, a nullable column without
// nulls, one with nulls and a composite of checks.
func sample() contract.Observed {
	rows, exact := int64(50), true
	prof := func(nulls int64, distinct float64) *catalog.ColumnProfile {
		return &catalog.ColumnProfile{NullCount: nulls, Distinct: &catalog.Estimate{Value: distinct}}
	}
	d := catalog.Dataset{ID: vigia.NewID(), Schema: "public", Table: "clientes", Kind: "table", ConnectionName: "erp", RowCount: &rows, RowCountExact: &exact,
		Columns: []catalog.Column{
			{Name: "id", Position: 1, DataType: "integer", Class: "numeric", PrimaryKey: true, Profile: prof(0, 50)},
			{Name: "email", Position: 2, DataType: "character varying(200)", Class: "text", Nullable: true,
				Profile: &catalog.ColumnProfile{Distinct: &catalog.Estimate{Value: 50}, Semantic: &catalog.Semantic{Type: "email", Matches: 40}}},
			{Name: "pais", Position: 3, DataType: "text", Class: "text", Nullable: true, Profile: prof(0, 1)},
			{Name: "cidade", Position: 4, DataType: "text", Class: "text", Nullable: true, Profile: prof(5, 10)},
			// Declared unique by the source, sampled: unique on the database's word, not required.
			{Name: "ref", Position: 6, DataType: "text", Class: "text", Nullable: true, Unique: true, Profile: &catalog.ColumnProfile{Estimated: true}},
			{Name: "total", Position: 5, DataType: "numeric(10,2)", Class: "numeric", Nullable: true, Profile: &catalog.ColumnProfile{Estimated: true}},
		}}
	rules := []rule.Rule{
		{ID: vigia.NewID(), Type: rule.TypeNotNull, Name: "email preenchido", Severity: "critical", Active: true, Params: rule.Params{Column: "email"}},
		{ID: vigia.NewID(), Type: rule.TypeRowCountMin, Name: "volume", Severity: "warning", Active: true, Params: rule.Params{MinRows: ptr(int64(10))}},
		{ID: vigia.NewID(), Type: rule.TypeAcceptedValues, Name: "paises", Severity: "warning", Active: true, Params: rule.Params{Column: "pais", Values: []string{"PT", "ES"}}},
		{ID: vigia.NewID(), Type: rule.TypeRange, Name: "inactive", Severity: "warning", Active: false, Params: rule.Params{Column: "total"}},
	}
	owner := "Equipa Comercial"
	domains := []contract.DomainInfo{{ID: vigia.NewID(), Name: "Vendas", OwnerName: &owner, AvailabilityObjectivePct: ptr(99.5), RetentionDays: ptr(400),
		DimensionTargets: map[string]float64{"completude": 95}, Teams: []contract.TeamGrant{{TeamID: vigia.NewID(), Name: "dados", Role: "manager"}}}}
	return contract.Observed{Dataset: d, Rules: rules, Domains: domains}
}

func TestObservedContractValidatesAndNamesKeys(t *testing.T) {
	doc := contract.ObservedDocument(sample())
	y, err := doc.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if err := mustSchema(t, "odcs/odcs-json-schema-v3.0.2.json").Validate(mustYAMLValue(t, y)); err != nil {
		t.Fatalf("the observed contract is not ODCS v3.0.2: %v\n%s", err, y)
	}
	props := map[string]contract.Property{}
	for _, p := range doc.Table().Properties {
		props[p.Name] = p
	}
	want := map[string][3]bool{ // required, unique, primary key
		"id": {true, true, true}, "email": {true, true, false}, "pais": {true, false, false},
		"cidade": {false, false, false}, "total": {false, false, false}, "ref": {false, true, false},
	}
	for name, w := range want {
		p := props[name]
		if got := [3]bool{p.Required, p.Unique, p.PrimaryKey}; got != w {
			t.Errorf("%s: required, unique, key = %v, want %v", name, got, w)
		}
	}
	if props["email"].Classification != "pii" || props["pais"].Classification != "internal" || props["id"].LogicalType != "integer" ||
		props["total"].LogicalType != "number" || props["email"].LogicalType != "string" || props["id"].PrimaryKeyPosition != 1 {
		t.Errorf("types and classification: %+v", props)
	}
	if len(props["email"].Quality) != 1 || len(props["pais"].Quality) != 1 || len(doc.Table().Quality) != 1 || len(props["total"].Quality) != 0 {
		t.Errorf("quality checks: email %v, pais %v, table %v", props["email"].Quality, props["pais"].Quality, doc.Table().Quality)
	}
	if doc.Domain != "Vendas" || len(doc.SLAProperties) != 3 || len(doc.Team) != 2 || doc.Team[0].Role != "owner" {
		t.Errorf("domain, SLA and team: %q %+v %+v", doc.Domain, doc.SLAProperties, doc.Team)
	}
}

func TestEmbeddedSchemaIsTheOfficialOne(t *testing.T) {
	official, err := os.ReadFile(filepath.Join(formats, "odcs/odcs-json-schema-v3.0.2.json"))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := os.ReadFile("odcs/odcs-json-schema-v3.0.2.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(official, embedded) {
		t.Fatal("contract/odcs differs from the official schema in ../shared/formats")
	}
}

func TestUploadedDocuments(t *testing.T) {
	t.Run("OfficialExampleParses", func(t *testing.T) {
		y, err := os.ReadFile(filepath.Join(formats, "odcs/example-postgresql-adventureworks.odcs.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatal(err)
		}
		// The example describes many tables: valid ODCS, but a dataset's contract has one.
		_, err = contract.ParseDocument(j, "document")
		if e := vigia.AsError(err); e.Kind != vigia.KindInvalid || len(e.Fields) != 1 || strings.Join(e.Fields[0].Loc, ".") != "document.schema" {
			t.Fatalf("multi-table document: %v", err)
		}
	})
	t.Run("InvalidIsLocatedWithoutEcho", func(t *testing.T) {
		raw := `{"apiVersion": "v9-SECRETVALUE", "kind": "DataContract", "id": "x", "version": "1.0.0",
			"schema": [{"name": "t", "properties": [{"name": "a", "logicalType": "SECRETVALUE2", "bogus": 1}]}]}`
		_, err := contract.ParseDocument([]byte(raw), "document")
		e := vigia.AsError(err)
		if e.Kind != vigia.KindInvalid {
			t.Fatalf("got %v", err)
		}
		locs := []string{}
		for _, f := range e.Fields {
			locs = append(locs, f.Type+":"+strings.Join(f.Loc, "."))
		}
		for _, want := range []string{"missing:document.status", "enum:document.apiVersion", "enum:document.schema.0.properties.0.logicalType",
			"extra_forbidden:document.schema.0.properties.0.bogus"} {
			if !slices.Contains(locs, want) {
				t.Errorf("missing %s in %v", want, locs)
			}
		}
		b, _ := json.Marshal(e.Fields)
		if strings.Contains(string(b), "SECRETVALUE") {
			t.Fatalf("a value came back: %s", b)
		}
	})
	t.Run("OtherEnginesChecksAreKeptAndNotRun", func(t *testing.T) {
		raw := `{"apiVersion": "v3.0.2", "kind": "DataContract", "id": "x", "version": "1.0.0", "status": "active",
			"schema": [{"name": "t", "properties": [{"name": "a", "physicalType": "integer",
				"quality": [{"type": "custom", "engine": "soda", "implementation": "checks for t:\n  - row_count > 0"},
					{"type": "custom", "engine": "vigia", "implementation": {"rule_type": "not_null", "params": {"column": "a"}}}]}]}]}`
		d, err := contract.ParseDocument([]byte(raw), "document")
		if err != nil {
			t.Fatal(err)
		}
		q := d.Table().Properties[0].Quality
		if _, ok := q[0].VigiaRule(); ok || q[0].Implementation != "checks for t:\n  - row_count > 0" {
			t.Fatalf("soda check %+v", q[0])
		}
		if impl, ok := q[1].VigiaRule(); !ok || impl.RuleType != "not_null" {
			t.Fatalf("vigia check %+v", q[1])
		}
		cols := []catalog.Column{{Name: "a", DataType: "integer"}}
		vs := contract.Check(d, cols, []contract.RuleState{{Type: rule.TypeNotNull, Params: rule.Params{Column: "a"}, Status: rule.StatusFailed}})
		if len(vs) != 1 || vs[0].Quality != "not_null(a)" {
			t.Fatalf("violations %+v", vs)
		}
		y, err := d.YAML()
		if err != nil || !strings.Contains(string(y), "row_count > 0") {
			t.Fatalf("the soda check was lost: %v\n%s", err, y)
		}
	})
	t.Run("NotJSON", func(t *testing.T) {
		if _, err := contract.ParseDocument([]byte("{"), "document"); !vigia.IsKind(err, vigia.KindInvalid) {
			t.Fatalf("got %v", err)
		}
	})
}

func doc(props ...contract.Property) contract.Document {
	return contract.Document{APIVersion: contract.APIVersion, Kind: "DataContract", ID: "x", Version: "1.0.0", Status: "active",
		Schema: []contract.Object{{Name: "t", Properties: props}}}
}

func notNull(col string, maxFailing *int64) contract.Quality {
	return contract.QualityOf(rule.Rule{Type: rule.TypeNotNull, Params: rule.Params{Column: col, MaxFailing: maxFailing}})
}

func TestDiffAndBump(t *testing.T) {
	base := doc(contract.Property{Name: "id", PhysicalType: "integer", Required: true},
		contract.Property{Name: "nome", PhysicalType: "varchar(50)", Quality: []contract.Quality{notNull("nome", ptr(int64(5)))}})
	cases := []struct {
		name     string
		edit     func(d *contract.Document)
		breaking bool
		field    string
	}{
		{"ColumnAdded", func(d *contract.Document) {
			d.Schema[0].Properties = append(d.Schema[0].Properties, contract.Property{Name: "x", PhysicalType: "text"})
		}, false, ""},
		{"ColumnRemoved", func(d *contract.Document) { d.Schema[0].Properties = d.Schema[0].Properties[:1] }, true, ""},
		{"TypeWidened", func(d *contract.Document) { d.Schema[0].Properties[0].PhysicalType = "bigint" }, false, "physicalType"},
		{"TypeNarrowed", func(d *contract.Document) { d.Schema[0].Properties[1].PhysicalType = "varchar(20)" }, true, "physicalType"},
		{"TypeConverted", func(d *contract.Document) { d.Schema[0].Properties[0].PhysicalType = "text" }, true, "physicalType"},
		{"RequiredAdded", func(d *contract.Document) { d.Schema[0].Properties[1].Required = true }, true, "required"},
		{"RequiredDropped", func(d *contract.Document) { d.Schema[0].Properties[0].Required = false }, false, "required"},
		{"QualityTightened", func(d *contract.Document) {
			d.Schema[0].Properties[1].Quality = []contract.Quality{notNull("nome", ptr(int64(0)))}
		}, true, "quality"},
		{"QualityLoosened", func(d *contract.Document) {
			d.Schema[0].Properties[1].Quality = []contract.Quality{notNull("nome", ptr(int64(10)))}
		}, false, "quality"},
		{"QualityRemoved", func(d *contract.Document) { d.Schema[0].Properties[1].Quality = nil }, false, "quality"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _ := json.Marshal(base)
			var to contract.Document
			_ = json.Unmarshal(b, &to)
			c.edit(&to)
			changes := contract.Diff(base, to)
			if len(changes) != 1 || changes[0].Breaking != c.breaking || changes[0].Field != c.field {
				t.Fatalf("changes %+v", changes)
			}
			want := contract.BumpMinor
			if c.breaking {
				want = contract.BumpMajor
			}
			if got := contract.BumpOf(changes); got != want {
				t.Fatalf("bump %s, want %s", got, want)
			}
		})
	}
	if len(contract.Diff(base, base)) != 0 {
		t.Fatal("a contract differs from itself")
	}
	v := contract.Version{}
	for _, step := range []struct{ bump, want string }{{contract.BumpInitial, "1.0.0"}, {contract.BumpMinor, "1.1.0"}, {contract.BumpMajor, "2.0.0"}, {contract.BumpMinor, "2.1.0"}} {
		v = v.Next(step.bump)
		if v.String() != step.want {
			t.Fatalf("after %s: %s, want %s", step.bump, v, step.want)
		}
	}
	if _, err := contract.ParseVersion("1.0", "number"); !vigia.IsKind(err, vigia.KindInvalid) {
		t.Fatal("1.0 is not MAJOR.MINOR.PATCH")
	}
}

func TestWidens(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"integer", "bigint", true}, {"bigint", "integer", false}, {"smallint", "numeric", true}, {"integer", "text", false},
		{"character varying(50)", "character varying(100)", true}, {"character varying(100)", "character varying(50)", false},
		{"varchar(10)", "text", true}, {"text", "varchar(10)", false}, {"numeric(10,2)", "numeric(12,2)", true},
		{"numeric(10,2)", "numeric(10,4)", false}, {"numeric(10,2)", "numeric", true}, {"real", "double precision", true},
		{"Timestamp  With Time Zone", "timestamp with time zone", true}, {"timestamp", "date", false},
	} {
		if got := contract.Widens(c.from, c.to); got != c.want {
			t.Errorf("%s → %s: %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestCheckAndEffect(t *testing.T) {
	d := doc(contract.Property{Name: "id", PhysicalType: "integer", Required: true},
		contract.Property{Name: "email", PhysicalType: "varchar(50)", Required: true, Quality: []contract.Quality{notNull("email", nil)}},
		contract.Property{Name: "nota", PhysicalType: "text"})
	cols := []catalog.Column{{Name: "id", DataType: "bigint", Profile: &catalog.ColumnProfile{}},
		{Name: "email", DataType: "varchar(50)", Profile: &catalog.ColumnProfile{NullCount: 3}}}
	vs := contract.Check(d, cols, []contract.RuleState{{Type: rule.TypeNotNull, Params: rule.Params{Column: "email"}, Status: rule.StatusFailed}})
	got := []string{}
	for _, v := range vs {
		got = append(got, v.Code+":"+v.Column+v.Quality)
	}
	want := []string{"column_missing:nota", "quality_rule_failed:not_null(email)", "required_has_nulls:email"}
	if !slices.Equal(got, want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	cols = append(cols, catalog.Column{Name: "nota", DataType: "text"})
	cols[1].Profile.NullCount = 0
	if vs := contract.Check(d, cols, []contract.RuleState{{Type: rule.TypeNotNull, Params: rule.Params{Column: "email"}, Status: rule.StatusPassed}}); len(vs) != 0 {
		t.Fatalf("a honoured contract: %v", vs)
	}
	cols[0].DataType = "text"
	if vs := contract.Check(d, cols, nil); len(vs) != 1 || vs[0].Code != contract.ViolationTypeChanged {
		t.Fatalf("converted type: %v", vs)
	}

	for _, c := range []struct {
		name    string
		changes []contract.ColumnChange
		want    string
	}{
		{"DropOfContractColumn", []contract.ColumnChange{{Change: "drop", Column: "nota"}}, contract.EffectBreaking},
		{"DropOfOtherColumn", []contract.ColumnChange{{Change: "drop", Column: "outra"}}, contract.EffectNone},
		{"Added", []contract.ColumnChange{{Change: "add", Column: "nova", ToType: ptr("text")}}, contract.EffectCompatible},
		{"Widened", []contract.ColumnChange{{Change: "type_change", Column: "id", ToType: ptr("bigint")}}, contract.EffectCompatible},
		{"Narrowed", []contract.ColumnChange{{Change: "type_change", Column: "email", ToType: ptr("varchar(10)")}}, contract.EffectBreaking},
	} {
		if got := contract.EffectOf(d, c.changes); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestDBTValidatesAgainstTheDBTSchema(t *testing.T) {
	o := sample()
	o.Dataset.Columns[2].PrimaryKey = true // a composite key: a model-level constraint
	y, err := contract.DBT(contract.ObservedDocument(o))
	if err != nil {
		t.Fatal(err)
	}
	if err := mustSchema(t, "dbt/dbt_yml_files-latest.json").Validate(mustYAMLValue(t, y)); err != nil {
		t.Fatalf("not a dbt properties file: %v\n%s", err, y)
	}
	var f struct {
		Version int `yaml:"version"`
		Models  []struct {
			Name   string `yaml:"name"`
			Config struct {
				Contract struct {
					Enforced bool `yaml:"enforced"`
				} `yaml:"contract"`
			} `yaml:"config"`
			Constraints []map[string]any `yaml:"constraints"`
			Columns     []struct {
				Name        string           `yaml:"name"`
				DataType    string           `yaml:"data_type"`
				Constraints []map[string]any `yaml:"constraints"`
				DataTests   []any            `yaml:"data_tests"`
			} `yaml:"columns"`
		} `yaml:"models"`
	}
	if err := yaml.Unmarshal(y, &f); err != nil {
		t.Fatal(err)
	}
	m := f.Models[0]
	if f.Version != 2 || m.Name != "clientes" || !m.Config.Contract.Enforced || len(m.Columns) != 6 || len(m.Constraints) != 1 ||
		m.Columns[1].DataType != "character varying(200)" {
		t.Fatalf("model %+v", m)
	}
	if fmtAny(m.Columns[1].DataTests) != "[not_null unique]" || fmtAny(m.Columns[2].DataTests) != "[not_null map[accepted_values:map[values:[PT ES]]]]" {
		t.Fatalf("tests: email %v, pais %v", m.Columns[1].DataTests, m.Columns[2].DataTests)
	}
}

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	s := strings.NewReplacer(`"`, "", ",", " ", "{", "map[", "}", "]", ":", ":").Replace(string(b))
	return s
}
