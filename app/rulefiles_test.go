package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/rule/rulefile/rulefiletest"
)

// fillShop makes clientes and encomendas, the tables the rules-as-code tests check.
func fillShop(t *testing.T, src *sourceDB) {
	t.Helper()
	src.exec(t, `CREATE TABLE clientes (id INTEGER PRIMARY KEY, nome VARCHAR(100), email VARCHAR(200))`)
	src.exec(t, `CREATE TABLE encomendas (id INTEGER PRIMARY KEY, cliente_id INTEGER, estado VARCHAR(20), total NUMERIC(10,2),
		criado_em TIMESTAMP)`)
	for i := 1; i <= 5; i++ {
		src.exec(t, fmt.Sprintf("INSERT INTO clientes VALUES (%d, 'c%d', 'c%d@example.pt')", i, i, i))
		src.exec(t, fmt.Sprintf("INSERT INTO encomendas VALUES (%d, %d, 'aberta', %d.50, '2026-11-20 10:00:00')", i, i, i*10))
	}
}

// otherWorkspace is a second workspace of the same Vigia with its own people.
func (e *wfEnv) otherWorkspace(t *testing.T, prefix string) *wfEnv {
	t.Helper()
	ws := e.MustWorkspace(t, prefix)
	return &wfEnv{Env: e.Env, ws: ws, admin: e.MustSession(t, ws, vigia.RoleAdmin), member: e.MustSession(t, ws, vigia.RoleMember),
		viewer: e.MustSession(t, ws, vigia.RoleViewer), tok: e.MustToken(t, ws), root: e.root}
}

// ruleKey is what makes two rules equivalent across workspaces: type and parameters,
// the reference dataset by name.
func ruleKey(t *testing.T, r map[string]any) string {
	t.Helper()
	p := map[string]any{}
	for k, v := range r["params"].(map[string]any) {
		p[k] = v
	}
	if id, ok := p["ref_dataset_id"]; ok && id != "" {
		delete(p, "ref_dataset_id")
		p["ref_dataset"] = r["ref_dataset_name"]
	}
	for _, k := range []string{"columns", "values"} {
		if l, ok := p[k].([]any); ok {
			s := make([]string, len(l))
			for i, v := range l {
				s[i] = fmt.Sprint(v)
			}
			slices.Sort(s)
			p[k] = s
		}
	}
	b, err := json.Marshal(map[string]any{"type": r["rule_type"], "params": p})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ruleKeys(t *testing.T, rules []map[string]any, skip map[string]bool) []string {
	t.Helper()
	var out []string
	for _, r := range rules {
		if r["active"] == true && !skip[r["id"].(string)] {
			out = append(out, ruleKey(t, r))
		}
	}
	slices.Sort(out)
	return out
}

// Must show 3: the rules of a scanned Postgres table exported as dbt (valid against
// dbt's schema), SodaCL and GX re-import into a fresh workspace of the same schema as
// equivalent rules, a second import yields only duplicates, and the rules a format
// cannot express are counted in the headers and listed in the file.
func TestRuleExportsReimportIntoAFreshWorkspace(t *testing.T) {
	e := newWF(t, "rulecode")
	src := newSource(t, "postgres", e.root)
	fillShop(t, src)
	conn := e.connect(t, "loja", "postgres", src.dsn)
	e.scan(t, conn)
	orders, customers := e.dataset(t, conn, "encomendas"), e.dataset(t, conn, "clientes")
	rule := func(typ, severity string, params map[string]any) string {
		return e.createRule(t, map[string]any{"dataset_id": orders, "rule_type": typ, "severity": severity, "params": params})["id"].(string)
	}
	rule("not_null", "critical", map[string]any{"column": "cliente_id"})
	notNullAllowance := rule("not_null", "warning", map[string]any{"column": "estado", "max_failing": 3})
	rule("unique", "warning", map[string]any{"columns": []string{"id"}})
	rule("unique", "critical", map[string]any{"columns": []string{"cliente_id", "criado_em"}})
	rule("accepted_values", "warning", map[string]any{"column": "estado", "values": []string{"aberta", "paga", "enviada"}})
	rule("pattern", "info", map[string]any{"column": "estado", "pattern": "^[a-z]+$"})
	rule("range", "warning", map[string]any{"column": "total", "min": 0, "max": 100000})
	ref := rule("referential", "critical", map[string]any{"column": "cliente_id", "ref_dataset_id": customers, "ref_column": "id"})
	refPct := rule("referential", "warning", map[string]any{"column": "cliente_id", "ref_dataset_id": customers, "ref_column": "id", "max_orphan_pct": 5})
	fresh := rule("freshness", "warning", map[string]any{"column": "criado_em", "max_age_hours": 48})
	rule("row_count_min", "warning", map[string]any{"min_rows": 1})
	custom := rule("custom_sql", "warning", map[string]any{"sql": "SELECT COUNT(*) FROM public.encomendas WHERE total < 0"})
	e.createRule(t, map[string]any{"dataset_id": orders, "rule_type": "not_null", "params": map[string]any{"column": "id"}, "active": false})
	source, _ := e.list(t, "/api/v1/rules?dataset_id="+orders, e.tok)

	doc := e.Document(t)
	for _, c := range []struct {
		format      string
		unsupported []string
		types       string
	}{
		{"sodacl", []string{refPct}, "referential"},
		{"dbt", []string{refPct, custom}, "custom_sql,referential"},
		{"gx", []string{notNullAllowance, ref, refPct, fresh, custom}, "custom_sql,freshness,not_null,referential"},
	} {
		t.Run(c.format, func(t *testing.T) {
			r := doc.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/rules/export?format="+c.format, e.tok, nil)
			skip := map[string]bool{}
			for _, id := range c.unsupported {
				skip[id] = true
			}
			want := ruleKeys(t, source, skip)
			if r.Status != 200 || r.Header.Get("X-Rules-Exported") != fmt.Sprint(len(want)) ||
				r.Header.Get("X-Rules-Unsupported") != fmt.Sprint(len(c.unsupported)) || r.Header.Get("X-Rules-Unsupported-Types") != c.types {
				t.Fatalf("%d %v\n%s", r.Status, r.Header, r.Body)
			}
			for _, id := range c.unsupported {
				if !strings.Contains(string(r.Body), id) {
					t.Errorf("unsupported rule %s not listed in the file:\n%s", id, r.Body)
				}
			}
			if c.format == "dbt" {
				rulefiletest.MustValidDBT(t, r.Body)
				same := doc.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/rules.dbt.yml", e.tok, nil)
				if same.Status != 200 || string(same.Body) != string(r.Body) || same.Header.Get("X-Rules-Unsupported") != "2" {
					t.Fatalf("rules.dbt.yml: %d %v", same.Status, same.Header)
				}
			}
			fresh := e.otherWorkspace(t, "fresh-"+c.format)
			fconn := fresh.connect(t, "loja", "postgres", src.dsn)
			fresh.scan(t, fconn)
			ctype := "Content-Type: application/yaml"
			if c.format == "gx" {
				ctype = "Content-Type: application/json"
			}
			imp := doc.Do(t, http.MethodPost, "/api/v1/rules/import", fresh.member, string(r.Body), ctype)
			var res struct {
				Format                                    string
				Created, Duplicates, Unsupported, Invalid int
				Items                                     []map[string]any
			}
			imp.JSON(t, &res)
			if imp.Status != 200 || res.Format != c.format || res.Created != len(want) || res.Duplicates+res.Unsupported+res.Invalid != 0 {
				t.Fatalf("import: %d %s", imp.Status, imp.Body)
			}
			imported, _ := fresh.list(t, "/api/v1/rules?dataset_id="+fresh.dataset(t, fconn, "encomendas"), fresh.tok)
			if got := ruleKeys(t, imported, nil); !slices.Equal(got, want) {
				t.Fatalf("re-imported rules differ:\n got %v\nwant %v", got, want)
			}
			again := doc.Do(t, http.MethodPost, "/api/v1/rules/import", fresh.member, string(r.Body), ctype)
			again.JSON(t, &res)
			if again.Status != 200 || res.Created != 0 || res.Duplicates != len(want) {
				t.Fatalf("second import: %d %s", again.Status, again.Body)
			}
			for _, it := range res.Items {
				if it["result"] != "duplicate" || it["duplicate_of"] == nil {
					t.Fatalf("second import item %v", it)
				}
			}
		})
	}

	t.Run("WorkspaceExportHasEveryVisibleDataset", func(t *testing.T) {
		e.createRule(t, map[string]any{"dataset_id": customers, "rule_type": "unique", "params": map[string]any{"column": "email"}})
		r := doc.Do(t, http.MethodGet, "/api/v1/rules/export", e.tok, nil)
		body := string(r.Body)
		if r.Status != 200 || !strings.Contains(body, "checks for public.clientes:") || !strings.Contains(body, "checks for public.encomendas:") ||
			!strings.Contains(body, "- duplicate_count(email) = 0") || r.Header.Get("X-Rules-Exported") != "12" {
			t.Fatalf("%d %v\n%s", r.Status, r.Header, body)
		}
	})
}

// Must show 4: a referential rule whose reference dataset the caller cannot see is
// exported without its name, in every format and in the workspace file; a caller who
// can see it gets it named.
func TestRuleExportNeverNamesAnInvisibleReference(t *testing.T) {
	e := newWF(t, "rulecode-hidden")
	src := newSource(t, "postgres", e.root)
	fillShop(t, src)
	conn := e.connect(t, "loja", "postgres", src.dsn)
	e.scan(t, conn)
	orders, customers := e.dataset(t, conn, "encomendas"), e.dataset(t, conn, "clientes")
	e.createRule(t, map[string]any{"dataset_id": orders, "rule_type": "referential", "params": map[string]any{"column": "cliente_id",
		"ref_dataset_id": customers, "ref_column": "id"}})
	e.createRule(t, map[string]any{"dataset_id": orders, "rule_type": "not_null", "params": map[string]any{"column": "cliente_id"}})
	domain := vigia.NewID()
	e.exec(t, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Clientes', true)`, domain, e.ws)
	e.exec(t, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, customers)
	doc := e.Document(t)
	paths := []struct{ name, path string }{
		{"DatasetSodaCL", "/api/v1/datasets/" + orders + "/rules/export?format=sodacl"},
		{"DatasetDBT", "/api/v1/datasets/" + orders + "/rules/export?format=dbt"},
		{"DatasetGX", "/api/v1/datasets/" + orders + "/rules/export?format=gx"},
		{"RulesYmlDBT", "/api/v1/datasets/" + orders + "/rules.dbt.yml"},
		{"WorkspaceSodaCL", "/api/v1/rules/export"},
		{"WorkspaceDBT", "/api/v1/rules/export?format=dbt"},
	}
	for _, p := range paths {
		for _, cred := range []struct {
			name, cred string
		}{{"Member", e.member}, {"Token", e.tok}} {
			t.Run(cred.name+p.name, func(t *testing.T) {
				r := doc.Do(t, http.MethodGet, p.path, cred.cred, nil)
				if r.Status != 200 || strings.Contains(string(r.Body), "clientes") || strings.Contains(string(r.Body), customers) ||
					r.Header.Get("X-Rules-Unsupported") != "1" || r.Header.Get("X-Rules-Unsupported-Types") != "referential" ||
					!strings.Contains(string(r.Body), "reference_not_visible") {
					t.Fatalf("%d %v\n%s", r.Status, r.Header, r.Body)
				}
				if strings.Contains(p.name, "DBT") {
					rulefiletest.MustValidDBT(t, r.Body)
				}
			})
		}
	}
	t.Run("AdminSeesItNamed", func(t *testing.T) {
		r := doc.Do(t, http.MethodGet, "/api/v1/datasets/"+orders+"/rules/export?format=sodacl", e.admin, nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), "must exist in public.clientes (id)") || r.Header.Get("X-Rules-Unsupported") != "0" {
			t.Fatalf("%d %v\n%s", r.Status, r.Header, r.Body)
		}
	})
	t.Run("InvisibleDatasetIs404", func(t *testing.T) {
		r := doc.Do(t, http.MethodGet, "/api/v1/datasets/"+customers+"/rules/export?format=sodacl", e.member, nil)
		other := doc.Do(t, http.MethodGet, "/api/v1/datasets/"+vigia.NewID()+"/rules/export?format=sodacl", e.member, nil)
		if r.Status != 404 || other.Status != 404 {
			t.Fatalf("%d %d", r.Status, other.Status)
		}
	})
	t.Run("ImportCannotReferToIt", func(t *testing.T) {
		body := "checks for public.encomendas:\n  - values in (cliente_id) must exist in public.clientes (id)\n"
		r := doc.Do(t, http.MethodPost, "/api/v1/rules/import?dry_run=true", e.member, body, "Content-Type: application/yaml")
		if r.Status != 200 || !strings.Contains(string(r.Body), `"code":"unknown_reference"`) || strings.Contains(string(r.Body), "clientes") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

// An import is a member's write, bounded, all or nothing on an unreadable file, and
// answers each check without repeating the file.
func TestRuleImportRefusesAndReports(t *testing.T) {
	e := newWF(t, "rulecode-import")
	conn := e.MustConnection(t, e.ws, "c")
	ds := e.MustDataset(t, e.ws, conn, "public", "clientes")
	doc := e.Document(t)
	count := func() int {
		var n int
		if err := e.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM rules WHERE workspace_id = $1`, e.ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	yaml := "Content-Type: application/yaml"
	good := "checks for public.clientes:\n  - missing_count(telefone) = 0\n"
	t.Run("TokenAndViewerAreRefused", func(t *testing.T) {
		if r := doc.Do(t, http.MethodPost, "/api/v1/rules/import", e.tok, good, yaml); r.Status != 403 || !strings.Contains(string(r.Body), "token_read_only") {
			t.Fatalf("token: %d %s", r.Status, r.Body)
		}
		if r := doc.Do(t, http.MethodPost, "/api/v1/rules/import", e.viewer, good, yaml); r.Status != 403 {
			t.Fatalf("viewer: %d %s", r.Status, r.Body)
		}
	})
	t.Run("UnreadableFileIs422WithItsLineAndCreatesNothing", func(t *testing.T) {
		body := good + "  - missing_count(id) = 0\n  - [segredo_por_fechar\n"
		r := doc.Do(t, http.MethodPost, "/api/v1/rules/import", e.member, body, yaml)
		if r.Status != 422 || !strings.Contains(string(r.Body), `"type":"yaml_invalid","loc":["body","line","4"]`) ||
			strings.Contains(string(r.Body), "segredo") || count() != 0 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("OverTwoMiBIs413", func(t *testing.T) {
		big := good + "# " + strings.Repeat("x", 2<<20) + "\n"
		if r := doc.Do(t, http.MethodPost, "/api/v1/rules/import", e.member, big, yaml); r.Status != 413 ||
			!strings.Contains(string(r.Body), "payload_too_large") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("ForeignConnectionIs404", func(t *testing.T) {
		other := e.otherWorkspace(t, "rulecode-import-other")
		oc := other.MustConnection(t, other.ws, "c")
		for _, id := range []string{oc, vigia.NewID(), "nao-e-um-id"} {
			if r := doc.Do(t, http.MethodPost, "/api/v1/rules/import?connection_id="+id, e.member, good, yaml); r.Status != 404 {
				t.Fatalf("%s: %d %s", id, r.Status, r.Body)
			}
		}
		if r := doc.Do(t, http.MethodPost, "/api/v1/rules/import?dry_run=true&connection_id="+conn, e.member, good, yaml); r.Status != 200 ||
			!strings.Contains(string(r.Body), `"created":1`) {
			t.Fatalf("own connection: %d %s", r.Status, r.Body)
		}
	})
	t.Run("BadFormatIs422", func(t *testing.T) {
		if r := doc.Do(t, http.MethodPost, "/api/v1/rules/import?format=great", e.member, good, yaml); r.Status != 422 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := doc.Do(t, http.MethodGet, "/api/v1/rules/export?format=gx", e.tok, nil); r.Status != 422 {
			t.Fatalf("workspace gx: %d %s", r.Status, r.Body)
		}
	})
	t.Run("ItemsSayWhatBecameOfEachCheck", func(t *testing.T) {
		body := "checks for public.clientes:\n  - missing_count(telefone) = 0\n  - missing_count(telefone) = 0\n" +
			"  - missing_count(segredo) = 0\n  - missing_percent(telefone) < 5\nchecks for public.nao_existe_segredo:\n  - row_count > 0\n"
		r := doc.Do(t, http.MethodPost, "/api/v1/rules/import", e.member, body, yaml)
		var res struct {
			Created, Duplicates, Unsupported, Invalid int
			Items                                     []map[string]any
		}
		r.JSON(t, &res)
		if r.Status != 200 || res.Created != 1 || res.Duplicates != 1 || res.Unsupported != 1 || res.Invalid != 2 || count() != 1 ||
			strings.Contains(string(r.Body), "segredo") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		want := []struct {
			result, code string
			line         float64
		}{{"created", "", 2}, {"duplicate", "", 3}, {"invalid", "unknown_column", 4}, {"unsupported", "unsupported_check", 5}, {"invalid", "unknown_dataset", 7}}
		for i, w := range want {
			it := res.Items[i]
			code, _ := it["code"].(string)
			if it["result"] != w.result || code != w.code || it["line"] != w.line {
				t.Fatalf("item %d: %v", i, it)
			}
		}
		if res.Items[0]["dataset_id"] != ds || res.Items[1]["duplicate_of_item"] != 0.0 {
			t.Fatalf("items %v", res.Items[:2])
		}
	})
	t.Run("MultipartWithFormatField", func(t *testing.T) {
		suite := `{"expectation_suite_name": "public.clientes", "expectations": [
			{"expectation_type": "expect_column_values_to_be_unique", "kwargs": {"column": "id"}, "meta": {"severity": "critical"}}]}`
		var b strings.Builder
		b.WriteString("--frontera\r\nContent-Disposition: form-data; name=\"format\"\r\n\r\ngx\r\n")
		b.WriteString("--frontera\r\nContent-Disposition: form-data; name=\"file\"; filename=\"suite.json\"\r\nContent-Type: application/json\r\n\r\n")
		b.WriteString(suite + "\r\n--frontera--\r\n")
		r := doc.Do(t, http.MethodPost, "/api/v1/rules/import", e.member, b.String(), "Content-Type: multipart/form-data; boundary=frontera")
		if r.Status != 200 || !strings.Contains(string(r.Body), `"created":1`) || !strings.Contains(string(r.Body), `"format":"gx"`) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		rules, _ := e.list(t, "/api/v1/rules?rule_type=unique&dataset_id="+ds, e.tok)
		if len(rules) != 1 || rules[0]["severity"] != "critical" {
			t.Fatalf("rules %v", rules)
		}
	})
}
