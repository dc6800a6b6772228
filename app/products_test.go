package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/internal/browsertest"
	"github.com/vigia-data/vigia/scan"
)

// productEnv is a workspace with a scanned Postgres table pedidos: 100 rows, 4 columns,
// 10 null clientes (completude 97.5), a declared primary key (unicidade 100).
type productEnv struct {
	env     *apptest.Env
	ws      string
	admin   string
	tok     string
	connID  string
	dataset string
	ctx     context.Context
}

func newProductEnv(t *testing.T) *productEnv {
	t.Helper()
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "k", SQLiteRoot: root, RateLimitPublic: 1000})
	ws := env.MustWorkspace(t, "prod")
	pe := &productEnv{env: env, ws: ws, admin: env.MustSession(t, ws, vigia.RoleAdmin), tok: env.MustToken(t, ws),
		ctx: app.AsAdmin(context.Background(), ws, "test")}
	src := newSource(t, "postgres", root)
	src.exec(t, `CREATE TABLE pedidos (id INTEGER PRIMARY KEY, cliente VARCHAR(100), estado VARCHAR(20), criado_em TIMESTAMP)`)
	now := time.Now().UTC().Truncate(time.Second)
	for i := 1; i <= 100; i++ {
		var cliente any = fmt.Sprintf("%s cliente %d", valueMarker, i)
		if i%10 == 0 {
			cliente = nil
		}
		src.exec(t, `INSERT INTO pedidos VALUES ($1, $2, $3, $4)`, i, cliente, []string{"novo", "pago"}[i%2], now.Add(-time.Duration(i)*time.Minute))
	}
	r := env.Do(t, http.MethodPost, "/api/v1/connections", pe.admin, map[string]any{"name": "erp", "kind": "postgres", "dsn": src.dsn})
	if r.Status != 201 {
		t.Fatalf("connection: %d %s", r.Status, r.Body)
	}
	var c map[string]any
	r.JSON(t, &c)
	pe.connID = c["id"].(string)
	pe.scan(t)
	var ds []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets?q=pedidos", pe.tok, nil).JSON(t, &ds)
	pe.dataset = ds[0]["id"].(string)
	return pe
}

func (pe *productEnv) scan(t *testing.T) {
	t.Helper()
	r := pe.env.Do(t, http.MethodPost, "/api/v1/scans", pe.tok, map[string]any{"connection_id": pe.connID})
	var out map[string]any
	r.JSON(t, &out)
	sc, err := pe.env.App.WaitScan(pe.ctx, out["id"].(string), nil)
	if err != nil || sc.Status != scan.StatusSucceeded {
		t.Fatalf("scan %v %+v", err, sc)
	}
}

// do sends a request and checks the status.
func (pe *productEnv) do(t *testing.T, method, path, cred string, body any, want int) map[string]any {
	t.Helper()
	r := pe.env.Do(t, method, path, cred, body)
	if r.Status != want {
		t.Fatalf("%s %s: %d (want %d) %s", method, path, r.Status, want, r.Body)
	}
	out := map[string]any{}
	if len(r.Body) > 0 && r.Body[0] == '{' {
		r.JSON(t, &out)
	}
	return out
}

// Must show 2: changing a published domain's weights and publishing bumps major,
// raising a target minor; the diff lists the change; weights 60/40/0/0/0 give the next
// score computed by hand.
func TestDomainVersionsAndWeights(t *testing.T) {
	pe := newProductEnv(t)
	admin := pe.admin
	dom := pe.do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Vendas", "owner_name": "Equipa Comercial",
		"dataset_ids": []string{pe.dataset}, "sla": map[string]any{"availability_objective_pct": 99, "retention_days": 400}}, 201)
	id := dom["id"].(string)
	base := "/api/v1/domains/" + id
	if dom["status"] != "draft" || dom["version"] != "0.0" || dom["published_at"] != nil || dom["dataset_count"].(float64) != 1 {
		t.Fatalf("new domain %v", dom)
	}
	pub := pe.do(t, http.MethodPost, base+"/publish", admin, nil, 200)
	if v := pub["version"].(map[string]any); v["version"] != "1.0" || v["bump"] != "initial" {
		t.Fatalf("first publication %v", pub)
	}
	t.Run("UnchangedPublishIs409", func(t *testing.T) {
		r := pe.env.Do(t, http.MethodPost, base+"/publish", admin, nil)
		if r.Status != 409 || decodeError(t, r).Code != "domain_unchanged" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("BadSLA422", func(t *testing.T) {
		for name, sla := range map[string]map[string]any{
			"UnknownDimension": {"dimension_weights": map[string]any{"completude": 50, "beleza": 50}},
			"SumNot100":        {"dimension_weights": map[string]any{"completude": 60, "unicidade": 30}},
			"UnknownTarget":    {"dimension_targets": map[string]any{"qualquer": 10}},
			"TargetAbove100":   {"dimension_targets": map[string]any{"completude": 101}},
			"Availability40":   {"availability_objective_pct": 40},
			"Retention0":       {"retention_days": 0},
		} {
			r := pe.env.Do(t, http.MethodPatch, base, admin, map[string]any{"sla": sla})
			if r.Status != 422 || strings.Contains(string(r.Body), "beleza") || strings.Contains(string(r.Body), "qualquer") {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		r := pe.env.Do(t, http.MethodPatch, base, admin, map[string]any{"owner_name": "ana@empresa.pt"})
		if r.Status != 422 || strings.Contains(string(r.Body), "ana@") {
			t.Errorf("email owner: %d %s", r.Status, r.Body)
		}
	})

	// Weights 60/40/0/0/0: a breaking change.
	d := pe.do(t, http.MethodPatch, base, admin, map[string]any{"sla": map[string]any{"dimension_weights": map[string]any{"completude": 60, "unicidade": 40}}}, 200)
	w := d["sla"].(map[string]any)["dimension_weights"].(map[string]any)
	if w["completude"].(float64) != 60 || w["validade"].(float64) != 0 || d["sla"].(map[string]any)["availability_objective_pct"].(float64) != 99 {
		t.Fatalf("sla after patch %v", d["sla"])
	}
	diff := pe.do(t, http.MethodGet, base+"/versions/latest/diff/current", pe.tok, nil, 200)
	if diff["bump"] != "major" || diff["next_version"] != "2.0" || diff["from_version"] != "1.0" || diff["to_version"] != "current" {
		t.Fatalf("diff latest..current %v", diff)
	}
	if v := pe.do(t, http.MethodPost, base+"/publish", admin, nil, 200)["version"].(map[string]any); v["version"] != "2.0" || v["bump"] != "major" {
		t.Fatalf("weights publication %v", v)
	}
	// A new target, then a higher one: compatible.
	pe.do(t, http.MethodPatch, base, admin, map[string]any{"sla": map[string]any{"dimension_targets": map[string]any{"completude": 90}}}, 200)
	if v := pe.do(t, http.MethodPost, base+"/publish", admin, nil, 200)["version"].(map[string]any); v["version"] != "2.1" || v["bump"] != "minor" {
		t.Fatalf("new target %v", v)
	}
	pe.do(t, http.MethodPatch, base, admin, map[string]any{"sla": map[string]any{"dimension_targets": map[string]any{"completude": 95}}}, 200)
	if v := pe.do(t, http.MethodPost, base+"/publish", admin, nil, 200)["version"].(map[string]any); v["version"] != "2.2" || v["bump"] != "minor" {
		t.Fatalf("raised target %v", v)
	}

	t.Run("VersionsNewestFirst", func(t *testing.T) {
		r := pe.env.Do(t, http.MethodGet, base+"/versions", pe.tok, nil)
		var vs []map[string]any
		r.JSON(t, &vs)
		got := []string{}
		for _, v := range vs {
			got = append(got, v["version"].(string)+":"+v["bump"].(string))
			if v["change_summary"] == "" || v["counts"].(map[string]any)["datasets"].(float64) != 1 {
				t.Errorf("version %v", v)
			}
		}
		if strings.Join(got, ",") != "2.2:minor,2.1:minor,2.0:major,1.0:initial" || r.Header.Get("X-Total-Count") != "4" {
			t.Fatalf("versions %v", got)
		}
		if vs[2]["change_summary"] != "Pesos das dimensões alterados." {
			t.Fatalf("summary %q", vs[2]["change_summary"])
		}
	})
	t.Run("DiffListsTheChange", func(t *testing.T) {
		diff := pe.do(t, http.MethodGet, base+"/versions/1.0/diff/2.0", pe.tok, nil, 200)
		ch := diff["changes"].([]any)
		if diff["bump"] != "major" || len(ch) != 1 || diff["next_version"] != nil {
			t.Fatalf("diff %v", diff)
		}
		c := ch[0].(map[string]any)
		if c["kind"] != "dimension_weights_changed" || c["impact"] != "breaking" || c["before"] != nil ||
			c["after"].(map[string]any)["unicidade"].(float64) != 40 {
			t.Fatalf("change %v", c)
		}
		diff = pe.do(t, http.MethodGet, base+"/versions/2.1/diff/2.2", pe.tok, nil, 200)
		c = diff["changes"].([]any)[0].(map[string]any)
		if diff["bump"] != "minor" || c["kind"] != "dimension_target_raised" || c["dimension"] != "completude" || c["before"].(float64) != 90 {
			t.Fatalf("raised diff %v", diff)
		}
		// Lowering the target breaks consumers.
		pe.do(t, http.MethodPatch, base, admin, map[string]any{"sla": map[string]any{"dimension_targets": map[string]any{"completude": 80}}}, 200)
		diff = pe.do(t, http.MethodGet, base+"/versions/latest/diff/current", pe.tok, nil, 200)
		c = diff["changes"].([]any)[0].(map[string]any)
		if diff["bump"] != "major" || diff["next_version"] != "3.0" || c["kind"] != "dimension_target_lowered" || c["after"].(float64) != 80 {
			t.Fatalf("lowered diff %v", diff)
		}
	})
	t.Run("Diff422And404", func(t *testing.T) {
		for path, want := range map[string]int{"/versions/current/diff/2.0": 422, "/versions/latest/diff/latest": 422,
			"/versions/1.0/diff/latest": 422, "/versions/abc/diff/current": 422, "/versions/1.0/diff/2.x": 422,
			"/versions/9.0/diff/current": 404, "/versions/1.0/diff/7.3": 404} {
			if r := pe.env.Do(t, http.MethodGet, base+path, pe.tok, nil); r.Status != want {
				t.Errorf("%s: %d (want %d) %s", path, r.Status, want, r.Body)
			}
		}
	})

	t.Run("WeightsChangeTheNextScoreAsComputedByHand", func(t *testing.T) {
		before := pe.do(t, http.MethodGet, "/api/v1/datasets/"+pe.dataset, pe.tok, nil, 200)
		prev := before["score_history"].([]any)[0].(map[string]any)
		pe.scan(t)
		after := pe.do(t, http.MethodGet, "/api/v1/datasets/"+pe.dataset, pe.tok, nil, 200)
		curr := after["score_history"].([]any)[0].(map[string]any)
		dims := curr["dimensions"].(map[string]any)
		// 100 rows × 4 columns = 400 cells, 10 null: completude 97.5; the key is unique: unicidade 100.
		if dims["completude"].(float64) != 97.5 || dims["unicidade"].(float64) != 100 {
			t.Fatalf("dimensions %v", dims)
		}
		want := 0.6*97.5 + 0.4*100 // = 98.5
		if s := curr["score"].(float64); math.Abs(s-want) > 1e-9 || after["latest_score"].(float64) != want {
			t.Fatalf("score %v, want %v (previous %v)", s, want, prev["score"])
		}
		exp := pe.do(t, http.MethodGet, "/api/v1/datasets/"+pe.dataset+"/score/explain", pe.tok, nil, 200)
		notes, _ := json.Marshal(exp["notes"])
		if !strings.Contains(string(notes), "weights_changed") {
			t.Fatalf("notes %s", notes)
		}
	})
	t.Run("ADatasetInTwoDomainsWithOtherWeightsKeepsTheDefaults", func(t *testing.T) {
		pe.do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Finanças", "dataset_ids": []string{pe.dataset},
			"sla": map[string]any{"dimension_weights": map[string]any{"completude": 100}}}, 201)
		pe.scan(t)
		after := pe.do(t, http.MethodGet, "/api/v1/datasets/"+pe.dataset, pe.tok, nil, 200)
		curr := after["score_history"].([]any)[0].(map[string]any)
		sum, n := 0.0, 0
		for _, v := range curr["dimensions"].(map[string]any) {
			if v != nil {
				sum += v.(float64)
				n++
			}
		}
		if math.Abs(curr["score"].(float64)-math.Round(sum/float64(n)*100)/100) > 0.011 {
			t.Fatalf("score %v is not the equal-weight mean of %v", curr["score"], curr["dimensions"])
		}
	})
	t.Run("ReadinessDraftDeprecatedRetention", func(t *testing.T) {
		rd := pe.do(t, http.MethodGet, base+"/readiness", pe.tok, nil, 200)
		if codes(rd, "ml", "warnings")["retention_short"] {
			t.Fatalf("retention 400 is enough for ml: %v", rd)
		}
		pe.do(t, http.MethodPatch, base, admin, map[string]any{"sla": map[string]any{"retention_days": 20}}, 200)
		rd = pe.do(t, http.MethodGet, base+"/readiness", pe.tok, nil, 200)
		if !codes(rd, "ml", "warnings")["retention_short"] || !codes(rd, "agente", "warnings")["retention_short"] {
			t.Fatalf("retention_short missing: %v", rd["use_cases"])
		}
		pe.do(t, http.MethodPost, base+"/publish", admin, nil, 200)
		dep := pe.do(t, http.MethodPost, base+"/deprecate", admin, nil, 200)
		if dep["status"] != "deprecated" {
			t.Fatalf("deprecate %v", dep)
		}
		rd = pe.do(t, http.MethodGet, base+"/readiness", pe.tok, nil, 200)
		for _, u := range []string{"rag", "ml", "agente", "bi"} {
			uc := rd["use_cases"].(map[string]any)[u].(map[string]any)
			if uc["status"] != "not_ready" || !codes(rd, u, "blockers")["deprecated"] {
				t.Fatalf("%s after deprecation %v", u, uc)
			}
		}
		if r := pe.env.Do(t, http.MethodPost, base+"/deprecate", admin, nil); r.Status != 409 {
			t.Fatalf("deprecate twice: %d", r.Status)
		}
		draft := pe.do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Rascunho"}, 201)
		rd = pe.do(t, http.MethodGet, "/api/v1/domains/"+draft["id"].(string)+"/readiness", pe.tok, nil, 200)
		if !codes(rd, "bi", "warnings")["draft"] || !codes(rd, "bi", "blockers")["no_datasets"] {
			t.Fatalf("draft readiness %v", rd)
		}
		// Republishing a deprecated domain without changes is a minor bump.
		if v := pe.do(t, http.MethodPost, base+"/publish", admin, nil, 200)["version"].(map[string]any); v["bump"] != "minor" {
			t.Fatalf("republish %v", v)
		}
	})
	t.Run("AggregatedReads", func(t *testing.T) {
		v := pe.do(t, http.MethodGet, base+"/verdict", pe.tok, nil, 200)
		if v["verdict"] == "" || len(v["datasets"].([]any)) != 1 || v["score"] == nil {
			t.Fatalf("verdict %v", v)
		}
		f := pe.do(t, http.MethodGet, base+"/trust-facts", pe.tok, nil, 200)
		if f["schema_version"] != "1.0" || f["kind"] != "domain" || len(f["facts"].(map[string]any)["datasets"].([]any)) != 1 {
			t.Fatalf("trust facts %v", f)
		}
		m := pe.do(t, http.MethodGet, base+"/metadata-quality", pe.tok, nil, 200)
		if m["datasets_total"].(float64) != 1 || m["score"] == nil {
			t.Fatalf("metadata quality %v", m)
		}
		c := pe.do(t, http.MethodPost, base+"/consumers", admin, map[string]any{"name": "Painel Direção", "kind": "user"}, 201)
		pe.do(t, http.MethodPost, "/api/v1/trust/consumptions", pe.tok, map[string]any{"consumer": map[string]any{"name": "assistente", "kind": "agent"},
			"datasets": []string{pe.dataset}, "purpose": "rag"}, 201)
		r := pe.env.Do(t, http.MethodGet, base+"/consumers", pe.tok, nil)
		var cs []map[string]any
		r.JSON(t, &cs)
		if r.Header.Get("X-Total-Count") != "2" || cs[0]["source"] != "manual" || cs[1]["source"] != "derived" || cs[1]["kind"] != "ai_system" ||
			cs[1]["consumer_kind"] != "agent" {
			t.Fatalf("consumers %s", r.Body)
		}
		rd := pe.do(t, http.MethodGet, base+"/readiness", pe.tok, nil, 200)
		cons := rd["consumers"].(map[string]any)
		if cons["total"].(float64) != 2 || cons["by_kind"].(map[string]any)["ai_system"].(float64) != 1 || cons["by_kind"].(map[string]any)["user"].(float64) != 1 {
			t.Fatalf("readiness consumers %v", cons)
		}
		pe.do(t, http.MethodDelete, base+"/consumers/"+c["id"].(string), admin, nil, 204)
		pe.do(t, http.MethodDelete, base+"/consumers/"+c["id"].(string), admin, nil, 404)
	})
}

// codes returns the codes of a domain readiness use case's blockers or warnings.
func codes(rd map[string]any, useCase, list string) map[string]bool {
	out := map[string]bool{}
	for _, it := range rd["use_cases"].(map[string]any)[useCase].(map[string]any)[list].([]any) {
		out[it.(map[string]any)["code"].(string)] = true
	}
	return out
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// allowedPublic is the public page's allowlist: every key at every level.
var allowedPublic = map[string][]string{
	"":                 {"name", "description", "owner_name", "version", "status", "score", "sla", "month_attainment", "readiness", "datasets", "generated_at"},
	"sla":              {"availability_objective_pct", "retention_days", "dimension_targets", "dimension_weights"},
	"month_attainment": {"month", "availability_pct", "met_days", "violated_days", "objective_pct", "objective_met"},
	"readiness":        {"rag", "ml", "agente", "bi"},
	"datasets[]":       {"name", "verdict", "score"},
}

// checkPublic walks the public page field by field: only allowlisted keys, and no
// value is an email, an internal id, a column name or a sample value.
func checkPublic(t *testing.T, page map[string]any, columns []string) {
	t.Helper()
	keysOf := func(m map[string]any) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	want := func(path string) string {
		w := append([]string{}, allowedPublic[path]...)
		sort.Strings(w)
		return strings.Join(w, ",")
	}
	if got := strings.Join(keysOf(page), ","); got != want("") {
		t.Fatalf("top-level fields %s, allowlist %s", got, want(""))
	}
	for _, sub := range []string{"sla", "month_attainment", "readiness"} {
		if got := strings.Join(keysOf(page[sub].(map[string]any)), ","); got != want(sub) {
			t.Fatalf("%s fields %s, allowlist %s", sub, got, want(sub))
		}
	}
	for _, dim := range []string{"dimension_targets", "dimension_weights"} {
		if m, ok := page["sla"].(map[string]any)[dim].(map[string]any); ok {
			for k := range m {
				if !contains([]string{"completude", "unicidade", "validade", "atualidade", "consistencia"}, k) {
					t.Fatalf("sla.%s has key %s", dim, k)
				}
			}
		}
	}
	for _, d := range page["datasets"].([]any) {
		if got := strings.Join(keysOf(d.(map[string]any)), ","); got != want("datasets[]") {
			t.Fatalf("dataset fields %s", got)
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				walk(path+"."+k, vv)
			}
		case []any:
			for i, vv := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), vv)
			}
		case string:
			switch {
			case strings.Contains(x, "@"):
				t.Errorf("%s holds an email: %q", path, x)
			case uuidRE.MatchString(x):
				t.Errorf("%s holds an internal id", path)
			case strings.Contains(strings.ToLower(x), strings.ToLower(valueMarker)):
				t.Errorf("%s holds a sample value", path)
			case contains(columns, x):
				t.Errorf("%s holds a column name %q", path, x)
			}
		}
	}
	walk("", page)
}

// Must show 3 and 4: a restricted-access domain's datasets are 404 without a team
// grant and visible with one; the public page carries only its allowlisted fields; the
// badge is valid SVG that Chromium renders; a revoked token is 404 for page and badge.
func TestRestrictedDomainPublicPageAndBadge(t *testing.T) {
	pe := newProductEnv(t)
	env, admin := pe.env, pe.admin
	member := env.MustSession(t, pe.ws, vigia.RoleMember)
	granted := env.MustSession(t, pe.ws, vigia.RoleMember)
	team := mustTeamMember(t, env, pe.ws, granted, "vendas-norte")
	dom := pe.do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Vendas Norte", "restricted": true,
		"description": "Encomendas do norte. Contacto: ana.silva@empresa.pt", "owner_name": "Equipa Norte",
		"dataset_ids": []string{pe.dataset}, "teams": []map[string]any{{"team_id": team, "role": "manager"}},
		"sla": map[string]any{"availability_objective_pct": 95, "dimension_targets": map[string]any{"completude": 90}}}, 201)
	id := dom["id"].(string)
	base := "/api/v1/domains/" + id
	pe.do(t, http.MethodPost, base+"/publish", admin, nil, 200)

	t.Run("404WithoutGrantVisibleWithIt", func(t *testing.T) {
		for _, p := range []string{"/api/v1/datasets/" + pe.dataset, "/api/v1/datasets/" + pe.dataset + "/trust",
			"/api/v1/datasets/" + pe.dataset + "/trust-decision", "/api/v1/datasets/" + pe.dataset + "/context", base, base + "/slo", base + "/readiness"} {
			no := env.Do(t, http.MethodGet, p, member, nil)
			yes := env.Do(t, http.MethodGet, p, granted, nil)
			if no.Status != 404 || yes.Status != 200 {
				t.Errorf("%s: without grant %d, with grant %d", p, no.Status, yes.Status)
			}
		}
		if r := env.Do(t, http.MethodGet, "/api/v1/domains", member, nil); r.Header.Get("X-Total-Count") != "0" {
			t.Errorf("member counts the restricted domain: %s", r.Header.Get("X-Total-Count"))
		}
		if r := env.Do(t, http.MethodGet, "/api/v1/datasets/find?query=pedidos", pe.tok, nil); strings.Contains(string(r.Body), pe.dataset) {
			t.Errorf("token finds the restricted dataset")
		}
		// A manager grant lets the team manage its domain, and only that.
		pe.do(t, http.MethodPatch, base, granted, map[string]any{"description": "Encomendas do norte. Contacto: ana.silva@empresa.pt"}, 200)
		if r := env.Do(t, http.MethodPatch, base, granted, map[string]any{"restricted": false}); r.Status != 403 {
			t.Errorf("a manager changed the access: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPut, base+"/public-share", member, nil); r.Status != 404 {
			t.Errorf("a member without grant shared it: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPut, base+"/public-share", pe.tok, nil); r.Status != 403 {
			t.Errorf("a token shared it: %d", r.Status)
		}
	})

	share := pe.do(t, http.MethodPut, base+"/public-share", granted, nil, 201)
	token := share["token"].(string)
	if again := pe.do(t, http.MethodPut, base+"/public-share", admin, nil, 200); again["token"] != token {
		t.Fatalf("a second PUT changed the token")
	}
	if got := pe.do(t, http.MethodGet, base+"/public-share", admin, nil, 200); got["enabled"] != true || got["token"] != token ||
		!strings.HasSuffix(got["badge_url"].(string), "/api/v1/public/badge/domains/"+token+".svg") {
		t.Fatalf("share %v", got)
	}
	var detail map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+pe.dataset, admin, nil).JSON(t, &detail)
	var columns []string
	for _, c := range detail["columns"].([]any) {
		columns = append(columns, c.(map[string]any)["name"].(string))
	}

	t.Run("PublicPageFieldByField", func(t *testing.T) {
		r := env.Do(t, http.MethodGet, "/api/v1/public/domains/"+token, "", nil)
		if r.Status != 200 || r.Header.Get("Cache-Control") != "no-cache" || r.Header.Get("ETag") == "" {
			t.Fatalf("page: %d %v %s", r.Status, r.Header, r.Body)
		}
		var page map[string]any
		r.JSON(t, &page)
		checkPublic(t, page, columns)
		if page["name"] != "Vendas Norte" || page["owner_name"] != "Equipa Norte" || page["version"] != "1.0" || page["status"] != "published" ||
			!strings.Contains(page["description"].(string), "[email]") || page["score"] == nil {
			t.Fatalf("page %v", page)
		}
		ds := page["datasets"].([]any)
		if len(ds) != 1 || ds[0].(map[string]any)["name"] != "public.pedidos" || ds[0].(map[string]any)["verdict"] == "" {
			t.Fatalf("datasets %v", ds)
		}
		if m := page["month_attainment"].(map[string]any); m["met_days"].(float64) < 1 || m["objective_pct"].(float64) != 95 {
			t.Fatalf("month %v", m)
		}
		nm := env.Do(t, http.MethodGet, "/api/v1/public/domains/"+token, "", nil, "If-None-Match: "+r.Header.Get("ETag"))
		if nm.Status != 304 || len(nm.Body) != 0 {
			t.Fatalf("If-None-Match: %d", nm.Status)
		}
	})

	t.Run("BadgeIsValidSVGThatRenders", func(t *testing.T) {
		path := "/api/v1/public/badge/domains/" + token + ".svg"
		r := env.Do(t, http.MethodGet, path, "", nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "image/svg+xml" || r.Header.Get("Cache-Control") != "public, max-age=3600" ||
			r.Header.Get("ETag") == "" {
			t.Fatalf("badge: %d %v", r.Status, r.Header)
		}
		var doc struct {
			XMLName xml.Name `xml:"http://www.w3.org/2000/svg svg"`
			Width   int      `xml:"width,attr"`
			Title   string   `xml:"title"`
		}
		if err := xml.Unmarshal(r.Body, &doc); err != nil || doc.Width < 40 || !strings.HasPrefix(doc.Title, "qualidade: ") {
			t.Fatalf("not valid SVG (%v): %s", err, r.Body)
		}
		var page map[string]any
		env.Do(t, http.MethodGet, "/api/v1/public/domains/"+token, "", nil).JSON(t, &page)
		verdict := pe.do(t, http.MethodGet, base+"/verdict", admin, nil, 200)["verdict"].(string)
		if !strings.Contains(doc.Title, verdict) || !strings.Contains(doc.Title, fmt.Sprint(page["score"])) {
			t.Fatalf("badge title %q, verdict %s, score %v", doc.Title, verdict, page["score"])
		}
		if nm := env.Do(t, http.MethodGet, path, "", nil, "If-None-Match: "+r.Header.Get("ETag")); nm.Status != 304 {
			t.Fatalf("If-None-Match: %d", nm.Status)
		}

		b := browsertest.New(t)
		b.Navigate(env.Server.URL + path)
		var rendered struct {
			Tag   string  `json:"tag"`
			Width float64 `json:"width"`
			Text  string  `json:"text"`
		}
		b.Eval(`(() => { const s = document.documentElement; const bb = s.getBBox();
			return {tag: s.tagName, width: bb.width, text: s.textContent}; })()`, &rendered)
		if rendered.Tag != "svg" || rendered.Width < 40 || !strings.Contains(rendered.Text, verdict) {
			t.Fatalf("rendered %+v", rendered)
		}
		shot := filepath.Join(t.TempDir(), "badge.png")
		b.ScreenshotElement("svg", shot)
		img, err := png.Decode(bytes.NewReader(mustRead(t, shot)))
		if err != nil {
			t.Fatal(err)
		}
		colors := map[string][3]uint32{"pass": {0x2e, 0x7d, 0x32}, "warn": {0xb2, 0x6a, 0x00}, "fail": {0xc6, 0x28, 0x28}, "unknown": {0x61, 0x61, 0x61}}
		want := colors[verdict]
		found := false
		bounds := img.Bounds()
		for x := bounds.Min.X; x < bounds.Max.X && !found; x++ {
			for y := bounds.Min.Y; y < bounds.Max.Y && !found; y++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if near(r>>8, want[0]) && near(g>>8, want[1]) && near(bl>>8, want[2]) {
					found = true
				}
			}
		}
		if bounds.Dx() < 40 || !found {
			t.Fatalf("screenshot %v has no %s pixel", bounds, verdict)
		}
		if p := b.Problems(); len(p) > 0 {
			t.Fatalf("browser problems: %v", p)
		}
	})

	t.Run("RotateAndRevokeGive404", func(t *testing.T) {
		rot := pe.do(t, http.MethodPost, base+"/public-share/rotate", admin, nil, 200)
		fresh := rot["token"].(string)
		if fresh == token {
			t.Fatal("rotation kept the token")
		}
		for _, p := range []string{"/api/v1/public/domains/" + token, "/api/v1/public/badge/domains/" + token + ".svg"} {
			if r := env.Do(t, http.MethodGet, p, "", nil); r.Status != 404 {
				t.Errorf("old token %s: %d", p, r.Status)
			}
		}
		pe.do(t, http.MethodGet, "/api/v1/public/domains/"+fresh, "", nil, 200)
		pe.do(t, http.MethodDelete, base+"/public-share", admin, nil, 204)
		unknown := "dp_" + strings.Repeat("ab", 20)
		for _, tk := range []string{fresh, unknown, "not-a-token"} {
			page := env.Do(t, http.MethodGet, "/api/v1/public/domains/"+tk, "", nil)
			badge := env.Do(t, http.MethodGet, "/api/v1/public/badge/domains/"+tk+".svg", "", nil)
			if page.Status != 404 || badge.Status != 404 {
				t.Errorf("revoked/unknown %s: page %d badge %d", tk, page.Status, badge.Status)
			}
		}
		if got := pe.do(t, http.MethodGet, base+"/public-share", admin, nil, 200); got["enabled"] != false || got["token"] != nil {
			t.Fatalf("after revoke %v", got)
		}
		var actions string
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT string_agg(action, ',' ORDER BY created_at, id) FROM activity_log
			WHERE subject_id = $1 AND action LIKE 'public_share.%'`, id).Scan(&actions); err != nil ||
			actions != "public_share.enabled,public_share.rotated,public_share.revoked" {
			t.Fatalf("activity log %q %v", actions, err)
		}
	})

	t.Run("PublicPerIPRateLimit", func(t *testing.T) {
		small := apptest.MustStart(t, app.Config{RateLimitPublic: 2, RateWindow: time.Hour})
		path := "/api/v1/public/domains/dp_" + strings.Repeat("0", 40)
		small.Do(t, http.MethodGet, path, "", nil)
		small.Do(t, http.MethodGet, path, "", nil)
		r := small.Do(t, http.MethodGet, path, "", nil)
		if r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Fatalf("third public request: %d", r.Status)
		}
	})

	t.Run("CatalogMetadataQuality", func(t *testing.T) {
		conn := env.MustConnection(t, pe.ws, "outra")
		for _, n := range []string{"zeta", "alfa", "beta", "gama", "delta", "epsilon"} {
			env.MustDataset(t, pe.ws, conn, "sem", n)
		}
		m := pe.do(t, http.MethodGet, "/api/v1/catalog/metadata-quality", admin, nil, 200)
		probs := map[string]map[string]any{}
		for _, p := range m["problems"].([]any) {
			probs[p.(map[string]any)["code"].(string)] = p.(map[string]any)
		}
		md := probs["missing_domain"]
		names := []string{}
		for _, d := range md["datasets"].([]any) {
			names = append(names, d.(map[string]any)["dataset_name"].(string))
		}
		if md["count"].(float64) != 6 || strings.Join(names, ",") != "sem.alfa,sem.beta,sem.delta,sem.epsilon,sem.gama" ||
			md["suggestion"].(map[string]any)["channel"] != "lineage" || probs["missing_owner"]["count"].(float64) != 6 {
			t.Fatalf("metadata quality %v", m)
		}
		// A member without the grant does not count the restricted dataset.
		mm := pe.do(t, http.MethodGet, "/api/v1/catalog/metadata-quality", member, nil, 200)
		if mm["datasets_total"].(float64) != 6 || m["datasets_total"].(float64) != 7 {
			t.Fatalf("totals admin %v member %v", m["datasets_total"], mm["datasets_total"])
		}
	})
}

func near(a, b uint32) bool { return a+12 >= b && b+12 >= a }

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Must show 6: SLO attainment of a month of seeded scans equals the days and the
// percentage computed by hand.
func TestSLOAttainmentOfSeededMonth(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "slo")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	connA, connB := env.MustConnection(t, ws, "a"), env.MustConnection(t, ws, "b")
	a := env.MustDataset(t, ws, connA, "vendas", "faturas")
	b := env.MustDataset(t, ws, connB, "vendas", "recibos")
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().In(lisbon)
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, lisbon).AddDate(0, -1, 0) // last month
	days := first.AddDate(0, 1, -1).Day()
	exec(t, env, `UPDATE datasets SET created_at = $2 WHERE id = ANY($1::uuid[])`, []string{a, b}, first.AddDate(0, 0, -30))
	day := func(n int) time.Time { return time.Date(first.Year(), first.Month(), n, 12, 0, 0, 0, time.UTC) }
	seq := map[string]int{}
	profile := func(ds, conn string, at time.Time, verdict string, completude any) {
		sc := seedScan(t, env, ws, conn, "succeeded", at)
		seq[ds]++
		score := 90.0
		seedProfile(t, env, ws, ds, sc, seq[ds], at, verdict, map[string]any{"completude": completude, "unicidade": 100}, &score)
	}
	// faturas (a): days 1-10 pass → 10 met; day 11 fail; day 12 fail then pass → met;
	// day 13 a scan that saved no profile; day 14 pass with completude 90 < target 95;
	// day 15 warn → met; days 16-20 no scan; day 21 a scan still running; day 22 pass
	// with completude not computable → met; a scan of the month before does not count.
	for n := 1; n <= 10; n++ {
		profile(a, connA, day(n), "pass", 99)
	}
	profile(a, connA, day(11), "fail", 99)
	profile(a, connA, day(12), "fail", 99)
	profile(a, connA, day(12).Add(3*time.Hour), "pass", 99)
	seedScan(t, env, ws, connA, "failed", day(13))
	profile(a, connA, day(14), "pass", 90)
	profile(a, connA, day(15), "warn", 96)
	exec(t, env, `INSERT INTO scans (id, workspace_id, connection_id, status, created_at, started_at) VALUES ($1, $2, $3, 'running', $4, $4)`,
		vigia.NewID(), ws, connA, day(21))
	profile(a, connA, day(22), "pass", nil)
	profile(a, connA, first.AddDate(0, 0, -3), "fail", 99)
	// recibos (b): days 1-4 pass, day 5 fail.
	for n := 1; n <= 4; n++ {
		profile(b, connB, day(n), "pass", 99)
	}
	profile(b, connB, day(5), "fail", 99)

	dom := map[string]any{}
	env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Faturação", "dataset_ids": []string{a, b},
		"sla": map[string]any{"availability_objective_pct": 99, "dimension_targets": map[string]any{"completude": 95}}}).JSON(t, &dom)
	r := env.Do(t, http.MethodGet, "/api/v1/domains/"+dom["id"].(string)+"/slo?month="+first.Format("2006-01"), admin, nil)
	if r.Status != 200 {
		t.Fatalf("slo: %d %s", r.Status, r.Body)
	}
	var rep struct {
		Month                    string   `json:"month"`
		Timezone                 string   `json:"timezone"`
		AvailabilityPct          *float64 `json:"availability_pct"`
		AvailabilityMetDays      int      `json:"availability_met_days"`
		AvailabilityViolatedDays int      `json:"availability_violated_days"`
		HistoryDays              int      `json:"history_days"`
		ObjectiveMet             *bool    `json:"objective_met"`
		Breakdown                struct {
			DimensionTarget int `json:"dimension_target"`
			VerdictFail     int `json:"verdict_fail"`
			NotProfiled     int `json:"not_profiled"`
		} `json:"breakdown"`
		Datasets []struct {
			DatasetName              string   `json:"dataset_name"`
			AvailabilityPct          *float64 `json:"availability_pct"`
			AvailabilityMetDays      int      `json:"availability_met_days"`
			AvailabilityViolatedDays int      `json:"availability_violated_days"`
			HistoryDays              int      `json:"history_days"`
			Breakdown                struct {
				DimensionTarget int `json:"dimension_target"`
				VerdictFail     int `json:"verdict_fail"`
				NotProfiled     int `json:"not_profiled"`
			} `json:"breakdown"`
		} `json:"datasets"`
	}
	r.JSON(t, &rep)
	if rep.Month != first.Format("2006-01") || rep.Timezone != "Europe/Lisbon" || len(rep.Datasets) != 2 {
		t.Fatalf("report %s", r.Body)
	}
	fa, re := rep.Datasets[0], rep.Datasets[1] // by name: faturas, recibos
	// By hand: faturas met 10 + 1 (day 12) + 1 (day 15) + 1 (day 22) = 13; violated day 11
	// (verdict_fail), 13 (not_profiled), 14 (dimension_target) = 3; 13 / 16 = 81.25%.
	if fa.DatasetName != "vendas.faturas" || fa.AvailabilityMetDays != 13 || fa.AvailabilityViolatedDays != 3 || *fa.AvailabilityPct != 81.25 ||
		fa.HistoryDays != days || fa.Breakdown.VerdictFail != 1 || fa.Breakdown.NotProfiled != 1 || fa.Breakdown.DimensionTarget != 1 {
		t.Fatalf("faturas %+v", fa)
	}
	// recibos: 4 met, 1 violated: 80%.
	if re.AvailabilityMetDays != 4 || re.AvailabilityViolatedDays != 1 || *re.AvailabilityPct != 80 || re.Breakdown.VerdictFail != 1 {
		t.Fatalf("recibos %+v", re)
	}
	// Domain: 17 met of 21 counted days = 80.95%, under the 99% objective.
	if rep.AvailabilityMetDays != 17 || rep.AvailabilityViolatedDays != 4 || *rep.AvailabilityPct != 80.95 || rep.ObjectiveMet == nil || *rep.ObjectiveMet ||
		rep.HistoryDays != 2*days || rep.Breakdown.DimensionTarget != 1 || rep.Breakdown.VerdictFail != 2 || rep.Breakdown.NotProfiled != 1 {
		t.Fatalf("domain %s", r.Body)
	}
	if r := env.Do(t, http.MethodGet, "/api/v1/domains/"+dom["id"].(string)+"/slo?month=2026-13", admin, nil); r.Status != 422 {
		t.Fatalf("bad month: %d", r.Status)
	}
}

// The trust and data product reads answer what the OpenAPI document says.
func TestTrustAndProductResponsesMatchTheDocument(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	doc := env.Document(t)
	ws := env.MustWorkspace(t, "oas-trust")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "c")
	ds := mustProfiledDataset(t, env, ws, conn, "marts", "fct_a")
	never := env.MustDataset(t, ws, conn, "raw", "b")
	var dom map[string]any
	env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "D", "owner_name": "Equipa", "dataset_ids": []string{ds, never},
		"sla": map[string]any{"availability_objective_pct": 99, "dimension_weights": map[string]any{"completude": 50, "unicidade": 50}}}).JSON(t, &dom)
	base := "/api/v1/domains/" + dom["id"].(string)
	env.Do(t, http.MethodPost, base+"/publish", admin, nil)
	env.Do(t, http.MethodPost, base+"/consumers", admin, map[string]any{"name": "Painel", "kind": "user", "channel_id": vigia.NewID()})
	env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", tok, map[string]any{"consumer": map[string]any{"name": "bot", "kind": "agent", "run_ref": "x"},
		"datasets": []string{ds}, "purpose": "rag"})
	var share map[string]any
	env.Do(t, http.MethodPut, base+"/public-share", admin, nil).JSON(t, &share)
	type call struct {
		method, path, cred string
		body               any
	}
	calls := []call{{"POST", "/api/v1/trust/consumptions", tok, map[string]any{"consumer": map[string]any{"name": "bot", "kind": "agent", "run_ref": "x"},
		"datasets": []string{ds}, "purpose": "rag"}},
		{"POST", "/api/v1/trust-decisions", tok, map[string]any{"dataset_ids": []string{ds, never, vigia.NewID()}}},
		{"PATCH", base, admin, map[string]any{"owner_name": nil, "sla": map[string]any{"retention_days": 30}}},
		{"POST", base + "/publish", admin, nil},
		{"PUT", base + "/public-share", admin, nil}}
	for _, p := range []string{"/trust", "/trust-decision?purpose=rag", "/ai-readiness", "/context", "/trust-facts", "/consumers", ""} {
		calls = append(calls, call{"GET", "/api/v1/datasets/" + ds + p, tok, nil}, call{"GET", "/api/v1/datasets/" + never + p, tok, nil})
	}
	for _, p := range []string{"", "/verdict", "/readiness", "/slo", "/slo?month=2026-01", "/consumers", "/trust-facts", "/metadata-quality",
		"/versions", "/versions/latest/diff/current", "/versions/1.0/diff/current", "/public-share"} {
		calls = append(calls, call{"GET", base + p, admin, nil})
	}
	calls = append(calls, call{"GET", "/api/v1/domains", tok, nil}, call{"GET", "/api/v1/consumers", tok, nil},
		call{"GET", "/api/v1/catalog/metadata-quality", tok, nil}, call{"GET", "/api/v1/datasets?include=trust", tok, nil},
		call{"GET", "/api/v1/datasets/find?has_pii=true&min_score=10", tok, nil}, call{"GET", "/api/v1/public/domains/" + share["token"].(string), "", nil},
		call{"GET", "/api/v1/datasets/find?layer=x", tok, nil}, call{"GET", base + "/versions/current/diff/1.0", admin, nil})
	for _, c := range calls {
		if r := doc.Do(t, c.method, c.path, c.cred, c.body); r.Status >= 500 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
}

// GraphQL answers trust decisions, domains with readiness and SLO, and consumers like REST.
func TestGraphQLTrustDomainsAndConsumers(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "gql-trust")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	member := env.MustSession(t, ws, vigia.RoleMember)
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "c")
	ds := mustProfiledDataset(t, env, ws, conn, "marts", "fct_a")
	var dom, hidden map[string]any
	env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "D", "dataset_ids": []string{ds},
		"sla": map[string]any{"availability_objective_pct": 90, "retention_days": 10, "dimension_weights": map[string]any{"completude": 100}}}).JSON(t, &dom)
	env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Secreto", "restricted": true}).JSON(t, &hidden)
	env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", tok, map[string]any{"consumer": map[string]any{"name": "bot", "kind": "agent"},
		"datasets": []string{ds}, "purpose": "rag"})

	out := env.GraphQL(t, tok, `query($d: ID!) { trustDecision(dataset: $d, purpose: "rag") { datasetId purpose decision ttlSeconds
		reasons { code severity messagePt } piiUnmasked verdict } }`, map[string]any{"d": ds})
	if out["errors"] != nil {
		t.Fatalf("errors %v", out["errors"])
	}
	g := out["data"].(map[string]any)["trustDecision"].(map[string]any)
	var rest decision
	env.Do(t, http.MethodGet, "/api/v1/datasets/"+ds+"/trust-decision?purpose=rag", tok, nil).JSON(t, &rest)
	if g["decision"] != rest.Decision || g["purpose"] != "rag" || int(g["ttlSeconds"].(float64)) != rest.TTLSeconds ||
		len(g["reasons"].([]any)) != len(rest.Reasons) || g["verdict"] != rest.Verdict {
		t.Fatalf("graphql %v\nrest %+v", g, rest)
	}

	out = env.GraphQL(t, member, `{ domains { total items { id name status version sla { retentionDays dimensionWeights { dimension value } }
		readiness { consumersTotal consumersByKind { kind count } useCases { useCase status blockers { code datasets } warnings { code datasets } } }
		slo { month availabilityPct metDays datasets { datasetName } } } } consumers { total items { name kind consumptions7d lastDecision } } }`, nil)
	if out["errors"] != nil {
		t.Fatalf("errors %v", out["errors"])
	}
	data := out["data"].(map[string]any)
	page := data["domains"].(map[string]any)
	if page["total"].(float64) != 1 {
		t.Fatalf("the member counts the restricted domain: %v", page)
	}
	d := page["items"].([]any)[0].(map[string]any)
	var rd map[string]any
	env.Do(t, http.MethodGet, "/api/v1/domains/"+dom["id"].(string)+"/readiness", member, nil).JSON(t, &rd)
	uc := d["readiness"].(map[string]any)["useCases"].([]any)
	if len(uc) != 4 || uc[1].(map[string]any)["useCase"] != "ml" ||
		uc[1].(map[string]any)["status"] != rd["use_cases"].(map[string]any)["ml"].(map[string]any)["status"] ||
		d["readiness"].(map[string]any)["consumersTotal"].(float64) != 1 {
		t.Fatalf("readiness graphql %v\nrest %v", d["readiness"], rd)
	}
	if d["slo"].(map[string]any)["metDays"].(float64) != 1 || len(d["sla"].(map[string]any)["dimensionWeights"].([]any)) != 5 {
		t.Fatalf("slo/sla %v %v", d["slo"], d["sla"])
	}
	cs := data["consumers"].(map[string]any)
	if cs["total"].(float64) != 1 || cs["items"].([]any)[0].(map[string]any)["consumptions7d"].(float64) != 1 {
		t.Fatalf("consumers %v", cs)
	}
	out = env.GraphQL(t, member, `query($id: ID!) { domain(id: $id) { id } }`, map[string]any{"id": hidden["id"]})
	errs, _ := out["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "not_found" {
		t.Fatalf("restricted domain by GraphQL: %v", out)
	}
	out = env.GraphQL(t, tok, `{ domains(limit: 501) { total } }`, nil)
	if errs, _ := out["errors"].([]any); len(errs) != 1 {
		t.Fatalf("limit 501: %v", out)
	}
}

// A domain that existed before data products is published at 1.0; its first change
// records that state as 1.0, so that publishing bumps from it.
func TestPreExistingDomainIsPublishedAt10(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "legacy")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	conn := env.MustConnection(t, ws, "c")
	a, b := env.MustDataset(t, ws, conn, "s", "a"), env.MustDataset(t, ws, conn, "s", "b")
	id := vigia.NewID()
	exec(t, env, `INSERT INTO domains (id, workspace_id, name) VALUES ($1, $2, 'Antigo')`, id, ws)
	exec(t, env, `INSERT INTO domain_datasets VALUES ($1, $2), ($1, $3)`, id, a, b)
	var d map[string]any
	env.Do(t, http.MethodGet, "/api/v1/domains/"+id, admin, nil).JSON(t, &d)
	if d["status"] != "published" || d["version"] != "1.0" {
		t.Fatalf("pre-existing domain %v", d)
	}
	var diff map[string]any
	env.Do(t, http.MethodGet, "/api/v1/domains/"+id+"/versions/latest/diff/current", admin, nil).JSON(t, &diff)
	if diff["from_version"] != "1.0" || diff["bump"] != "none" || diff["next_version"] != nil {
		t.Fatalf("diff of an unchanged legacy domain %v", diff)
	}
	if r := env.Do(t, http.MethodPatch, "/api/v1/domains/"+id, admin, map[string]any{"dataset_ids": []string{a}}); r.Status != 200 {
		t.Fatalf("patch %d %s", r.Status, r.Body)
	}
	var pub map[string]any
	env.Do(t, http.MethodPost, "/api/v1/domains/"+id+"/publish", admin, nil).JSON(t, &pub)
	v := pub["version"].(map[string]any)
	if v["version"] != "2.0" || v["bump"] != "major" || !strings.Contains(v["change_summary"].(string), "removido") {
		t.Fatalf("publication %v", pub)
	}
	r := env.Do(t, http.MethodGet, "/api/v1/domains/"+id+"/versions", admin, nil)
	var vs []map[string]any
	r.JSON(t, &vs)
	if len(vs) != 2 || vs[1]["version"] != "1.0" || vs[1]["counts"].(map[string]any)["datasets"].(float64) != 2 {
		t.Fatalf("versions %s", r.Body)
	}
}
