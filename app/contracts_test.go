package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/internal/formatschema"
)

// contractsFormatSchema compiles a schema of ../shared/formats (the standards' own files).
func contractsFormatSchema(t *testing.T, rel string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../shared/formats", rel))
	if err != nil {
		t.Fatalf("the official schema %s: %v", rel, err)
	}
	s, err := formatschema.Compile(raw, filepath.Base(rel))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// contractsValidYAML checks a YAML body against a schema and returns it decoded.
func contractsValidYAML(t *testing.T, s *jsonschema.Schema, body []byte) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		t.Fatalf("not YAML: %v\n%s", err, body)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("not valid against the official schema: %v\n%s", err, body)
	}
	return v.(map[string]any)
}

// contractsItems returns the 422 items of an error body.
func contractsItems(t *testing.T, r *apptest.Response) []map[string]any {
	t.Helper()
	var items []map[string]any
	if err := json.Unmarshal(decodeError(t, r).Detail, &items); err != nil {
		t.Fatalf("422 detail: %v %s", err, r.Body)
	}
	return items
}

// contractEnv is a workspace with a scanned Postgres table clientes whose key,
// required and unique columns the database itself can tell.
type contractEnv struct {
	env     *apptest.Env
	src     *sourceDB
	ws      string
	admin   string
	member  string
	viewer  string
	tok     string
	connID  string
	dataset string
	base    string
	ctx     context.Context
}

func newContractEnv(t *testing.T) *contractEnv {
	t.Helper()
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "k", SQLiteRoot: root})
	ws := env.MustWorkspace(t, "contratos")
	ce := &contractEnv{env: env, ws: ws, admin: env.MustSession(t, ws, vigia.RoleAdmin), member: env.MustSession(t, ws, vigia.RoleMember),
		viewer: env.MustSession(t, ws, vigia.RoleViewer), tok: env.MustToken(t, ws), ctx: app.AsAdmin(context.Background(), ws, "test")}
	src := newSource(t, "postgres", root)
	ce.src = src
	src.exec(t, `CREATE TABLE clientes (id INTEGER PRIMARY KEY, email VARCHAR(200) UNIQUE, nome TEXT NOT NULL, pais TEXT, cidade TEXT,
		codigo VARCHAR(10), notas TEXT)`)
	for i := 1; i <= 60; i++ {
		var cidade any = fmt.Sprintf("%s cidade %d", valueMarker, i%7)
		if i%6 == 0 {
			cidade = nil
		}
		src.exec(t, `INSERT INTO clientes VALUES ($1, $2, $3, 'PT', $4, $5, NULL)`, i, fmt.Sprintf("c%d@example.pt", i),
			fmt.Sprintf("%s nome %d", valueMarker, i), cidade, fmt.Sprintf("K%03d", i))
	}
	r := env.Do(t, http.MethodPost, "/api/v1/connections", ce.admin, map[string]any{"name": "erp", "kind": "postgres", "dsn": src.dsn})
	if r.Status != 201 {
		t.Fatalf("connection: %d %s", r.Status, r.Body)
	}
	var c map[string]any
	r.JSON(t, &c)
	ce.connID = c["id"].(string)
	ce.scan(t)
	var ds []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets?q=clientes", ce.tok, nil).JSON(t, &ds)
	ce.dataset = ds[0]["id"].(string)
	ce.base = "/api/v1/datasets/" + ce.dataset
	return ce
}

func (ce *contractEnv) scan(t *testing.T) {
	t.Helper()
	pe := productEnv{env: ce.env, tok: ce.tok, connID: ce.connID, ctx: ce.ctx}
	pe.scan(t)
}

func (ce *contractEnv) do(t *testing.T, method, path, cred string, body any, want int, headers ...string) *apptest.Response {
	t.Helper()
	r := ce.env.Do(t, method, path, cred, body, headers...)
	if r.Status != want {
		t.Fatalf("%s %s: %d (want %d) %s", method, path, r.Status, want, r.Body)
	}
	if strings.Contains(strings.ToLower(string(r.Body)), strings.ToLower(valueMarker)) {
		t.Fatalf("%s %s: a source value came back", method, path)
	}
	return r
}

// contractDBFacts asks the source database itself which columns are the primary key, have no
// null and hold unique values.
func contractDBFacts(t *testing.T, db *sql.DB) (key, required, unique map[string]bool) {
	t.Helper()
	key, required, unique = map[string]bool{}, map[string]bool{}, map[string]bool{}
	rows, err := db.Query(`SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = 'clientes'::regclass AND i.indisprimary`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		key[n] = true
	}
	rows.Close()
	for _, col := range []string{"id", "email", "nome", "pais", "cidade", "codigo", "notas"} {
		var total, nonNull, distinct int
		if err := db.QueryRow(fmt.Sprintf(`SELECT count(*), count(%q), count(DISTINCT %q) FROM clientes`, col, col)).Scan(&total, &nonNull, &distinct); err != nil {
			t.Fatal(err)
		}
		required[col] = total > 0 && nonNull == total
		unique[col] = total > 0 && nonNull == total && distinct == total
	}
	return key, required, unique
}

func contractProps(t *testing.T, doc map[string]any) map[string]map[string]any {
	t.Helper()
	schema := doc["schema"].([]any)
	out := map[string]map[string]any{}
	for _, p := range schema[0].(map[string]any)["properties"].([]any) {
		m := p.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

// Must show 1: the observed contract of a scanned Postgres table validates against the
// ODCS JSON Schema and names its key, required and unique columns as the database
// does; source=active is 404 until a proposal is accepted, then 1.0.0. Then proposals,
// versions, diffs, dbt, tenancy and bad input.
func TestDataContracts(t *testing.T) {
	ce := newContractEnv(t)
	odcs := contractsFormatSchema(t, "odcs/odcs-json-schema-v3.0.2.json")
	// An active rule becomes a quality check of the contract.
	ce.do(t, http.MethodPost, "/api/v1/rules", ce.admin, map[string]any{"dataset_id": ce.dataset, "rule_type": "accepted_values",
		"params": map[string]any{"column": "pais", "values": []string{"PT", "ES"}}}, 201)

	var observed map[string]any
	t.Run("ObservedValidatesAndNamesKeyRequiredUnique", func(t *testing.T) {
		r := ce.do(t, http.MethodGet, ce.base+"/contract", ce.tok, nil, 200)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/yaml") {
			t.Fatalf("content type %q", r.Header.Get("Content-Type"))
		}
		observed = contractsValidYAML(t, odcs, r.Body)
		key, required, unique := contractDBFacts(t, ce.src.db)
		props := contractProps(t, observed)
		if len(props) != 7 {
			t.Fatalf("properties %v", props)
		}
		for name, p := range props {
			if p["primaryKey"] != key[name] || p["required"] != required[name] || p["unique"] != unique[name] {
				t.Errorf("%s: primaryKey %v required %v unique %v; the database says %v %v %v", name, p["primaryKey"], p["required"],
					p["unique"], key[name], required[name], unique[name])
			}
		}
		// The figures are not trivially all true or all false.
		if !unique["email"] || !unique["codigo"] || unique["pais"] || !required["pais"] || required["cidade"] || required["notas"] {
			t.Fatalf("the fixture lost its point: %v %v", required, unique)
		}
		if props["id"]["logicalType"] != "integer" || props["email"]["physicalType"] != "character varying(200)" ||
			len(props["pais"]["quality"].([]any)) != 1 {
			t.Fatalf("types and quality: %v %v %v", props["id"], props["email"], props["pais"])
		}
		// JSON by Accept, the same document.
		var j map[string]any
		ce.do(t, http.MethodGet, ce.base+"/contract?source=observed", ce.tok, nil, 200, "Accept: application/json").JSON(t, &j)
		if j["id"] != ce.dataset || j["apiVersion"] != "v3.0.2" || len(contractProps(t, j)) != 7 {
			t.Fatalf("JSON contract %v", j)
		}
	})

	t.Run("ActiveIs404BeforeAnyAcceptedProposal", func(t *testing.T) {
		r := ce.do(t, http.MethodGet, ce.base+"/contract?source=active", ce.tok, nil, 404)
		if decodeError(t, r).Code != "not_found" {
			t.Fatalf("%s", r.Body)
		}
		ce.do(t, http.MethodGet, ce.base+"/contract?source=other", ce.tok, nil, 422)
	})

	var proposalID string
	t.Run("ProposeAndAccept", func(t *testing.T) {
		body := map[string]any{"origin": "observed", "summary": "first contract"}
		if r := ce.env.Do(t, http.MethodPost, ce.base+"/contract/proposals", ce.tok, body); r.Status != 403 || decodeError(t, r).Code != "token_read_only" {
			t.Fatalf("token: %d %s", r.Status, r.Body)
		}
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.viewer, body, 403)
		var p map[string]any
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, body, 201).JSON(t, &p)
		proposalID = p["id"].(string)
		if p["status"] != "open" || p["bump"] != "initial" || p["origin"] != "observed" {
			t.Fatalf("proposal %v", p)
		}
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/comments", ce.viewer, map[string]any{"body": "ok?"}, 403)
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/comments", ce.member, map[string]any{"body": "   "}, 422)
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/comments", ce.admin, map[string]any{"body": "Parece bem."}, 201)
		// A member without a manager grant on the dataset's domain does not accept.
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/accept", ce.member, nil, 403)
		ce.do(t, http.MethodGet, ce.base+"/contract?source=active", ce.tok, nil, 404)
		var acc map[string]any
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/accept", ce.admin, map[string]any{"note": "aprovado"}, 200).JSON(t, &acc)
		if acc["status"] != "accepted" || acc["version"] != "1.0.0" || len(acc["comments"].([]any)) != 1 {
			t.Fatalf("accepted %v", acc)
		}
		r := ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/reject", ce.admin, nil, 409)
		if decodeError(t, r).Code != "proposal_not_open" {
			t.Fatalf("%s", r.Body)
		}
		active := contractsValidYAML(t, odcs, ce.do(t, http.MethodGet, ce.base+"/contract?source=active", ce.tok, nil, 200).Body)
		if active["version"] != "1.0.0" || active["status"] != "active" {
			t.Fatalf("active %v %v", active["version"], active["status"])
		}
	})

	t.Run("VersionsAndDiff", func(t *testing.T) {
		r := ce.do(t, http.MethodGet, ce.base+"/contract/versions", ce.tok, nil, 200)
		var vs []map[string]any
		r.JSON(t, &vs)
		if r.Header.Get("X-Total-Count") != "1" || len(vs) != 1 || vs[0]["version"] != "1.0.0" || vs[0]["bump"] != "initial" {
			t.Fatalf("versions %s", r.Body)
		}
		var v map[string]any
		ce.do(t, http.MethodGet, ce.base+"/contract/versions/1.0.0", ce.tok, nil, 200).JSON(t, &v)
		if v["document"].(map[string]any)["version"] != "1.0.0" {
			t.Fatalf("version %v", v)
		}
		ce.do(t, http.MethodGet, ce.base+"/contract/versions/2.0.0", ce.tok, nil, 404)
		r = ce.do(t, http.MethodGet, ce.base+"/contract/versions/latest", ce.tok, nil, 422)
		if e := contractsItems(t, r); len(e) != 1 || fmt.Sprint(e[0]["loc"]) != "[path number]" {
			t.Fatalf("%s", r.Body)
		}
		var d map[string]any
		ce.do(t, http.MethodGet, ce.base+"/contract/diff?from=1.0.0&to=observed", ce.tok, nil, 200).JSON(t, &d)
		if d["breaking"] != false || len(d["changes"].([]any)) != 0 {
			t.Fatalf("the accepted contract differs from the observed one: %v", d)
		}
		ce.do(t, http.MethodGet, ce.base+"/contract/diff?from=x&to=observed", ce.tok, nil, 422)
	})

	t.Run("UploadedBreakingProposalRejectedAndWithdrawn", func(t *testing.T) {
		var active map[string]any
		ce.do(t, http.MethodGet, ce.base+"/contract?source=active", ce.tok, nil, 200, "Accept: application/json").JSON(t, &active)
		// Drop a column and require cidade: two breaking changes.
		obj := active["schema"].([]any)[0].(map[string]any)
		var kept []any
		for _, p := range obj["properties"].([]any) {
			m := p.(map[string]any)
			if m["name"] == "cidade" {
				m["required"] = true
			}
			if m["name"] != "notas" {
				kept = append(kept, m)
			}
		}
		obj["properties"] = kept
		var p map[string]any
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, map[string]any{"origin": "document", "document": active}, 201).JSON(t, &p)
		if p["bump"] != "major" || p["origin"] != "document" {
			t.Fatalf("uploaded proposal %v", p)
		}
		breaking := 0
		for _, c := range p["changes"].([]any) {
			if c.(map[string]any)["breaking"] == true {
				breaking++
			}
		}
		if breaking != 2 {
			t.Fatalf("changes %v", p["changes"])
		}
		id := p["id"].(string)
		other := ce.env.MustSession(t, ce.ws, vigia.RoleMember)
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+id+"/withdraw", other, nil, 403)
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+id+"/withdraw", ce.member, nil, 200)
		r := ce.do(t, http.MethodGet, ce.base+"/contract/proposals?status=open", ce.tok, nil, 200)
		if r.Header.Get("X-Total-Count") != "0" {
			t.Fatalf("open proposals %s", r.Body)
		}
		r = ce.do(t, http.MethodGet, ce.base+"/contract/proposals", ce.tok, nil, 200)
		if r.Header.Get("X-Total-Count") != "2" {
			t.Fatalf("proposals %s", r.Body)
		}
		var items []map[string]any
		r.JSON(t, &items)
		if items[0]["status"] != "withdrawn" || items[1]["status"] != "accepted" || items[1]["version"] != "1.0.0" {
			t.Fatalf("proposals newest first %v", items)
		}
	})

	t.Run("UploadedYAML", func(t *testing.T) {
		y := string(ce.do(t, http.MethodGet, ce.base+"/contract", ce.tok, nil, 200).Body)
		var p map[string]any
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, map[string]any{"origin": "document", "document": y,
			"summary": "from our repository"}, 201).JSON(t, &p)
		if p["bump"] != "minor" || p["origin"] != "document" || len(p["changes"].([]any)) != 0 {
			t.Fatalf("YAML proposal %v", p)
		}
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+p["id"].(string)+"/reject", ce.admin, map[string]any{"note": "same"}, 200)
		e := contractsItems(t, ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member,
			map[string]any{"origin": "document", "document": "schema: [" + valueMarker}, 422))
		if len(e) != 1 || fmt.Sprint(e[0]["loc"]) != "[body document]" {
			t.Fatalf("broken YAML: %v", e)
		}
	})

	t.Run("InvalidUploadIs422WithLocAndSavesNothing", func(t *testing.T) {
		before := ce.env.Do(t, http.MethodGet, ce.base+"/contract/proposals", ce.tok, nil).Header.Get("X-Total-Count")
		bad := map[string]any{"apiVersion": "v3.0.2", "kind": "DataContract", "id": "x", "version": "1", "status": "draft",
			"schema": []any{map[string]any{"name": "t", "properties": []any{map[string]any{"name": "a", "logicalType": valueMarker}}}}}
		r := ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, map[string]any{"origin": "document", "document": bad}, 422)
		e := contractsItems(t, r)
		locs := []string{}
		for _, d := range e {
			locs = append(locs, fmt.Sprint(d["loc"]))
		}
		if !slices.Contains(locs, "[body document schema 0 properties 0 logicalType]") {
			t.Fatalf("locations %v", locs)
		}
		delete(bad, "kind")
		bad["schema"] = []any{}
		e = contractsItems(t, ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, map[string]any{"origin": "document", "document": bad}, 422))
		if fmt.Sprint(e[0]["loc"]) != "[body document kind]" || e[0]["type"] != "missing" {
			t.Fatalf("missing kind: %v", e)
		}
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, map[string]any{"origin": "document"}, 422)
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, map[string]any{"origin": "elsewhere"}, 422)
		if after := ce.env.Do(t, http.MethodGet, ce.base+"/contract/proposals", ce.tok, nil).Header.Get("X-Total-Count"); after != before {
			t.Fatalf("proposals %s → %s", before, after)
		}
	})

	t.Run("DBTValidatesAgainstTheDBTSchema", func(t *testing.T) {
		r := ce.do(t, http.MethodGet, ce.base+"/contract.dbt.yml?source=active", ce.tok, nil, 200)
		f := contractsValidYAML(t, contractsFormatSchema(t, "dbt/dbt_yml_files-latest.json"), r.Body)
		m := f["models"].([]any)[0].(map[string]any)
		cols := map[string]map[string]any{}
		for _, c := range m["columns"].([]any) {
			cols[c.(map[string]any)["name"].(string)] = c.(map[string]any)
		}
		if fmt.Sprint(f["version"]) != "2" || m["name"] != "clientes" || m["config"].(map[string]any)["contract"].(map[string]any)["enforced"] != true ||
			len(cols) != 7 || cols["id"]["data_type"] != "integer" || fmt.Sprint(cols["id"]["constraints"]) != "[map[type:not_null] map[type:primary_key]]" {
			t.Fatalf("dbt model %s", r.Body)
		}
	})

	t.Run("OtherWorkspace404", func(t *testing.T) {
		ws2 := ce.env.MustWorkspace(t, "outra")
		admin2 := ce.env.MustSession(t, ws2, vigia.RoleAdmin)
		tok2 := ce.env.MustToken(t, ws2)
		for _, path := range []string{"/contract", "/contract?source=active", "/contract.dbt.yml", "/contract/versions", "/contract/versions/1.0.0",
			"/contract/diff", "/contract/proposals", "/contract/proposals/" + proposalID} {
			ce.do(t, http.MethodGet, ce.base+path, tok2, nil, 404)
		}
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals", admin2, map[string]any{"origin": "observed"}, 404)
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/comments", admin2, map[string]any{"body": "x"}, 404)
		ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+proposalID+"/accept", admin2, nil, 404)
		// A proposal id under another dataset of the same workspace is unknown there.
		other := ce.env.MustDataset(t, ce.ws, ce.connID, "public", "outra")
		ce.do(t, http.MethodGet, "/api/v1/datasets/"+other+"/contract/proposals/"+proposalID, ce.tok, nil, 404)
	})
}

// Must show 2: dropping a contract column → next scan: /schema-changes says breaking, the
// trust decision has contract.valid=false with its reason code, the dataset has an issue
// of type contract, and the domain's next publication is major.
func TestContractColumnDroppedBreaksTheContract(t *testing.T) {
	ce := newContractEnv(t)
	manager := ce.env.MustSession(t, ce.ws, vigia.RoleMember)
	team := mustTeamMember(t, ce.env, ce.ws, manager, "produtores")
	var dom map[string]any
	ce.do(t, http.MethodPost, "/api/v1/domains", ce.admin, map[string]any{"name": "Clientes", "owner_name": "Equipa CRM",
		"dataset_ids": []string{ce.dataset}, "teams": []map[string]any{{"team_id": team, "role": "manager"}},
		"sla": map[string]any{"availability_objective_pct": 99, "retention_days": 365}}, 201).JSON(t, &dom)
	domain := "/api/v1/domains/" + dom["id"].(string)

	var p map[string]any
	ce.do(t, http.MethodPost, ce.base+"/contract/proposals", ce.member, map[string]any{"origin": "observed"}, 201).JSON(t, &p)
	if got := contractsValidYAML(t, contractsFormatSchema(t, "odcs/odcs-json-schema-v3.0.2.json"),
		ce.do(t, http.MethodGet, ce.base+"/contract", ce.tok, nil, 200).Body); got["domain"] != "Clientes" || len(got["slaProperties"].([]any)) != 2 {
		t.Fatalf("domain and SLA in the contract: %v %v", got["domain"], got["slaProperties"])
	}
	// The domain's manager accepts.
	var acc map[string]any
	ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+p["id"].(string)+"/accept", manager, nil, 200).JSON(t, &acc)
	if acc["version"] != "1.0.0" {
		t.Fatalf("accepted %v", acc)
	}
	var pub map[string]any
	ce.do(t, http.MethodPost, domain+"/publish", ce.admin, nil, 200).JSON(t, &pub)

	decision := func() map[string]any {
		var d map[string]any
		ce.do(t, http.MethodGet, ce.base+"/trust-decision?purpose=bi", ce.tok, nil, 200).JSON(t, &d)
		return d
	}
	if c := decision()["contract"].(map[string]any); c["active"] != true || c["valid"] != true {
		t.Fatalf("contract before the drop %v", c)
	}

	ce.src.exec(t, `ALTER TABLE clientes DROP COLUMN codigo`)
	ce.scan(t)

	var changes []map[string]any
	ce.do(t, http.MethodGet, ce.base+"/schema-changes", ce.tok, nil, 200).JSON(t, &changes)
	if len(changes) == 0 || changes[0]["contract_effect"] != "breaking" || fmt.Sprint(changes[0]["dropped"]) == "[]" {
		t.Fatalf("schema changes %v", changes)
	}
	d := decision()
	if c := d["contract"].(map[string]any); c["active"] != true || c["valid"] != false {
		t.Fatalf("contract after the drop %v", c)
	}
	var reason map[string]any
	for _, r := range d["reasons"].([]any) {
		if r.(map[string]any)["code"] == "contract_violation" {
			reason = r.(map[string]any)
		}
	}
	if reason == nil || fmt.Sprint(reason["params"].(map[string]any)["violations"]) != "[column_missing]" || d["decision"] != "untrusted" {
		t.Fatalf("decision %v", d)
	}
	var issues []map[string]any
	ce.do(t, http.MethodGet, "/api/v1/issues?type=contract&dataset_id="+ce.dataset, ce.tok, nil, 200).JSON(t, &issues)
	if len(issues) != 1 || issues[0]["severity"] != "critical" || issues[0]["status"] != "open" {
		t.Fatalf("contract issues %v", issues)
	}

	t.Run("GraphQL", func(t *testing.T) {
		out := ce.env.GraphQL(t, ce.tok, `query($d: ID!) { dataset(id: $d) { contract { active activeVersion valid violations observed activeDocument }
			contractVersions(limit: 5) { version bump changeSummary changes { kind property breaking } createdAt } } }`, map[string]any{"d": ce.dataset})
		if out["errors"] != nil {
			t.Fatalf("errors %v", out["errors"])
		}
		ds := out["data"].(map[string]any)["dataset"].(map[string]any)
		c := ds["contract"].(map[string]any)
		if c["active"] != true || c["activeVersion"] != "1.0.0" || c["valid"] != false || fmt.Sprint(c["violations"]) != "[column_missing]" {
			t.Fatalf("contract %v", c)
		}
		var observed map[string]any
		if err := json.Unmarshal([]byte(c["observed"].(string)), &observed); err != nil || len(contractProps(t, observed)) != 6 {
			t.Fatalf("observed document: %v", err)
		}
		vs := ds["contractVersions"].([]any)
		if len(vs) != 1 || vs[0].(map[string]any)["version"] != "1.0.0" || vs[0].(map[string]any)["bump"] != "initial" {
			t.Fatalf("versions %v", vs)
		}
		out = ce.env.GraphQL(t, ce.tok, `query($d: ID!) { dataset(id: $d) { contractVersions(limit: 0) { version } } }`, map[string]any{"d": ce.dataset})
		if out["errors"] == nil || !strings.Contains(fmt.Sprint(out["errors"]), "greater_than_equal") {
			t.Fatalf("limit 0: %v", out)
		}
	})

	var agg map[string]any
	ce.do(t, http.MethodGet, domain+"/contract", ce.tok, nil, 200).JSON(t, &agg)
	members := agg["members"].([]any)
	if len(members) != 1 || members[0].(map[string]any)["version"] != "1.0.0" || members[0].(map[string]any)["valid"] != false ||
		len(agg["document"].(map[string]any)["schema"].([]any)) != 1 {
		t.Fatalf("domain contract %v", agg)
	}

	var diff map[string]any
	ce.do(t, http.MethodGet, domain+"/versions/latest/diff/current", ce.tok, nil, 200).JSON(t, &diff)
	kinds := []string{}
	for _, c := range diff["changes"].([]any) {
		kinds = append(kinds, c.(map[string]any)["kind"].(string)+":"+c.(map[string]any)["impact"].(string))
	}
	sort.Strings(kinds)
	if diff["bump"] != "major" || diff["next_version"] != "2.0" || !slices.Contains(kinds, "contract_column_removed:breaking") {
		t.Fatalf("domain diff %v", diff)
	}
	ce.do(t, http.MethodPost, domain+"/publish", ce.admin, nil, 200).JSON(t, &pub)
	if v := pub["version"].(map[string]any); v["bump"] != "major" || v["version"] != "2.0" {
		t.Fatalf("publication after the drop %v", pub)
	}

	// A proposal that drops the column too restores the contract once accepted.
	var fix map[string]any
	ce.do(t, http.MethodPost, ce.base+"/contract/proposals", manager, map[string]any{"origin": "observed"}, 201).JSON(t, &fix)
	if fix["bump"] != "major" {
		t.Fatalf("a column removed is a major bump: %v", fix)
	}
	ce.do(t, http.MethodPost, ce.base+"/contract/proposals/"+fix["id"].(string)+"/accept", manager, nil, 200)
	if c := decision()["contract"].(map[string]any); c["valid"] != true {
		t.Fatalf("contract 2.0.0 %v", c)
	}
	var old map[string]any
	ce.do(t, http.MethodGet, ce.base+"/contract/versions/1.0.0", ce.tok, nil, 200).JSON(t, &old)
	if old["document"].(map[string]any)["status"] != "deprecated" {
		t.Fatalf("a superseded version %v", old["document"].(map[string]any)["status"])
	}
	// Another workspace does not see the domain's contract.
	ws2 := ce.env.MustWorkspace(t, "alheio")
	ce.do(t, http.MethodGet, domain+"/contract", ce.env.MustToken(t, ws2), nil, 404)
	ce.do(t, http.MethodGet, "/api/v1/issues?type=contract&status=open&dataset_id="+ce.dataset, ce.tok, nil, 200).JSON(t, &issues)
	if len(issues) != 0 {
		t.Fatalf("the contract issue stayed open: %v", issues)
	}
}
