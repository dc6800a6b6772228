package app_test

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/source/semantic"
	"github.com/vigia-data/vigia/synthetic"
)

// synthEnv is a running Vigia over a SQLite source, scanned once.
type synthEnv struct {
	*wfEnv
	connID string
}

func newSynthEnv(t *testing.T, cfg app.Config, fill func(t *testing.T, db *sql.DB)) *synthEnv {
	t.Helper()
	root := t.TempDir()
	cfg.SecretKey, cfg.SQLiteRoot = "test-secret-key", root
	env := apptest.MustStart(t, cfg)
	ws := env.MustWorkspace(t, "synthetic")
	e := &wfEnv{Env: env, ws: ws, admin: env.MustSession(t, ws, vigia.RoleAdmin), member: env.MustSession(t, ws, vigia.RoleMember),
		viewer: env.MustSession(t, ws, vigia.RoleViewer), tok: env.MustToken(t, ws), root: root}
	path := filepath.Join(root, "source.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, db)
	db.Close()
	connID := e.connect(t, "src", "sqlite", path)
	e.scan(t, connID)
	return &synthEnv{wfEnv: e, connID: connID}
}

func fillERP(t *testing.T, db *sql.DB) {
	t.Helper()
	if err := demo.Build(context.Background(), db, demo.DialectSQLite, "erp", 42, 1); err != nil {
		t.Fatal(err)
	}
}

// erpTables are the ERP demo's tables (its views are not packed).
var erpTables = []string{"artigos", "clientes", "faturas", "fornecedores", "linhas_fatura", "stock"}

func TestSyntheticRowsAreDeterministicAndPacksLoadWithTheirKeys(t *testing.T) {
	e := newSynthEnv(t, app.Config{}, fillERP)
	clientes := e.dataset(t, e.connID, "clientes")

	t.Run("SameRequestSameBytesOtherSeedOtherRows", func(t *testing.T) {
		path := "/api/v1/datasets/" + clientes + "/synthetic?rows=300&seed=7&format=csv"
		a := e.Do(t, http.MethodGet, path, e.tok, nil)
		b := e.Do(t, http.MethodGet, path, e.tok, nil)
		if a.Status != 200 || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("got %d %s", a.Status, a.Body)
		}
		if !bytes.Equal(a.Body, b.Body) {
			t.Fatal("the same request gave different bytes")
		}
		lines := strings.Split(strings.TrimSuffix(string(a.Body), "\r\n"), "\r\n")
		if len(lines) != 301 || !strings.HasPrefix(lines[0], "id,nif,nome,email") {
			t.Fatalf("%d lines, header %q", len(lines), lines[0])
		}
		c := e.Do(t, http.MethodGet, "/api/v1/datasets/"+clientes+"/synthetic?rows=300&seed=8&format=csv", e.tok, nil)
		if c.Status != 200 || bytes.Equal(a.Body, c.Body) {
			t.Fatalf("another seed: %d, same bytes %v", c.Status, bytes.Equal(a.Body, c.Body))
		}
		other := strings.Split(string(c.Body), "\r\n")
		same := 0
		for i := 1; i < len(lines); i++ {
			if lines[i] == other[i] {
				same++
			}
		}
		if same > 0 {
			t.Fatalf("%d rows repeat under another seed", same)
		}
	})

	t.Run("JSONManifestCarriesTheEvaluation", func(t *testing.T) {
		r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+clientes+"/synthetic?rows=50&seed=1&format=json", e.tok, nil)
		if r.Status != 200 {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		var out struct {
			Manifest struct {
				Evaluation map[string]any `json:"evaluation"`
				Columns    []map[string]any
			} `json:"manifest"`
			Rows []map[string]any `json:"rows"`
		}
		r.JSON(t, &out)
		if len(out.Rows) != 50 || out.Manifest.Evaluation["privacy_verdict"] == nil || out.Manifest.Evaluation["utility_score"] == nil {
			t.Fatalf("json answer: %d rows, evaluation %v", len(out.Rows), out.Manifest.Evaluation)
		}
		if _, ok := out.Rows[0]["id"].(float64); !ok {
			t.Fatalf("keys are numbers in JSON: %v", out.Rows[0])
		}
	})

	t.Run("SQLitePackOfTheERPTables", func(t *testing.T) {
		r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, map[string]any{"connection_id": e.connID, "rows_per_table": 500,
			"seed": 3, "format": "sqlite"})
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/vnd.sqlite3" {
			t.Fatalf("pack: %d %s", r.Status, r.Body)
		}
		db := openSQLitePack(t, r.Body)
		for _, table := range erpTables {
			var n int
			if err := db.QueryRow(`SELECT COUNT(*) FROM "` + table + `"`).Scan(&n); err != nil || n != 500 {
				t.Fatalf("%s: %d rows, %v", table, n, err)
			}
			var pk int
			if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info('` + table + `') WHERE pk > 0`).Scan(&pk); err != nil || pk != 1 {
				t.Fatalf("%s: primary key columns %d, %v", table, pk, err)
			}
		}
		fks := map[string]string{}
		rows, err := db.Query(`SELECT m.name, f."from", f."table" FROM sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table'`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var table, from, parent string
			if err := rows.Scan(&table, &from, &parent); err != nil {
				t.Fatal(err)
			}
			fks[table+"."+from] = parent
		}
		rows.Close()
		want := map[string]string{"artigos.fornecedor_id": "fornecedores", "faturas.cliente_id": "clientes",
			"linhas_fatura.fatura_id": "faturas", "linhas_fatura.artigo_id": "artigos", "stock.artigo_id": "artigos"}
		for k, v := range want {
			if fks[k] != v {
				t.Errorf("foreign key %s: got %q, want %q (all: %v)", k, fks[k], v, fks)
			}
		}
		var problems int
		if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&problems); err != nil || problems != 0 {
			t.Fatalf("foreign_key_check: %d, %v", problems, err)
		}
		checks := []struct {
			table, column string
			valid         func(string) bool
		}{
			{"clientes", "nif", semantic.ValidNIF}, {"fornecedores", "nipc", semantic.ValidNIF},
			{"fornecedores", "iban", semantic.ValidIBAN}, {"clientes", "codigo_postal", semantic.IsPostalCodePT},
			{"fornecedores", "codigo_postal", semantic.IsPostalCodePT}, {"clientes", "email", semantic.IsEmail},
		}
		for _, c := range checks {
			rows, err := db.Query(`SELECT "` + c.column + `" FROM "` + c.table + `" WHERE "` + c.column + `" IS NOT NULL`)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var v string
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				n++
				if !c.valid(v) {
					t.Errorf("%s.%s: %q is not valid", c.table, c.column, v)
				}
			}
			rows.Close()
			if n == 0 {
				t.Errorf("%s.%s: no values", c.table, c.column)
			}
		}
	})

	t.Run("ZIPPackIsDeterministicWithUtilityAtLeast80", func(t *testing.T) {
		body := map[string]any{"connection_id": e.connID, "rows_per_table": 1000, "seed": 11, "format": "zip"}
		a := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.admin, body)
		b := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, body)
		if a.Status != 200 || b.Status != 200 || !bytes.Equal(a.Body, b.Body) {
			t.Fatalf("packs: %d %d, same bytes %v, entries that differ %v", a.Status, b.Status, bytes.Equal(a.Body, b.Body), zipDiff(t, a.Body, b.Body))
		}
		zr, err := zip.NewReader(bytes.NewReader(a.Body), int64(len(a.Body)))
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			files[f.Name], _ = io.ReadAll(rc)
			rc.Close()
		}
		for _, table := range erpTables {
			if len(files[table+".csv"]) == 0 {
				t.Errorf("no %s.csv in %v", table, len(files))
			}
		}
		if !strings.Contains(string(files["schema.sql"]), `FOREIGN KEY ("cliente_id") REFERENCES "clientes" ("id")`) {
			t.Errorf("schema.sql:\n%s", files["schema.sql"])
		}
		var m synthetic.Manifest
		if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Tables) != len(erpTables) {
			t.Fatalf("manifest tables: %d", len(m.Tables))
		}
		for _, mt := range m.Tables {
			ev := mt.Evaluation
			sum := 0.0
			for _, w := range ev.UtilityWeights {
				sum += w
			}
			t.Logf("%s: utility %.2f %v, verdict %s", mt.Name, ev.UtilityScore, ev.UtilityComponents, ev.PrivacyVerdict)
			if ev.UtilityScore < 80 || len(ev.UtilityComponents) == 0 || len(ev.UtilityComponents) != len(ev.UtilityWeights) || sum < 99.9 || sum > 100.1 {
				t.Errorf("%s: utility %.2f, components %v, weights %v (sum %.2f)", mt.Name, ev.UtilityScore, ev.UtilityComponents, ev.UtilityWeights, sum)
			}
			if ev.PrivacyVerdict == synthetic.VerdictFail {
				t.Errorf("%s: verdict fail %v %v", mt.Name, ev.Key, ev.Params)
			}
		}
		// The ZIP's schema.sql loads in SQLite with the foreign keys on, and so do the CSVs.
		db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "load.db")+"?_pragma=foreign_keys(1)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(string(files["schema.sql"])); err != nil {
			t.Fatalf("schema.sql: %v", err)
		}
	})

	t.Run("EvaluationAnswersTheScorecard", func(t *testing.T) {
		var ev map[string]any
		r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+clientes+"/synthetic/evaluation?rows=1000&seed=5", e.tok, nil)
		if r.Status != 200 {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		r.JSON(t, &ev)
		if ev["k_threshold"].(float64) != 5 || ev["reason"] == "" || ev["utility_score"].(float64) < 80 {
			t.Fatalf("evaluation: %v", ev)
		}
		// Generated postal codes are nearly unique in 1000 rows: the quasi-identifier's
		// smallest group is below the threshold.
		if ev["privacy_verdict"] != "warn" || ev["key"] != "k_below" || ev["k_min"].(float64) >= 5 {
			t.Fatalf("verdict: %v %v k_min %v", ev["privacy_verdict"], ev["key"], ev["k_min"])
		}
		if p := ev["params"].(map[string]any); p["k_min"] != ev["k_min"] {
			t.Fatalf("params: %v", p)
		}
	})

	t.Run("GraphQLSyntheticEvaluation", func(t *testing.T) {
		out := e.GraphQL(t, e.tok, `query($id: ID!) { dataset(id: $id) { syntheticEvaluation(rows: 1000, seed: 5) {
			rows utilityScore privacyVerdict key kMin kThreshold reason utilityWeights { name value } params { name value } } } }`,
			map[string]any{"id": clientes})
		data, _ := out["data"].(map[string]any)
		ds, _ := data["dataset"].(map[string]any)
		ev, _ := ds["syntheticEvaluation"].(map[string]any)
		if ev == nil || ev["privacyVerdict"] != "warn" || ev["key"] != "k_below" || ev["utilityScore"].(float64) < 80 || ev["reason"] == "" {
			t.Fatalf("graphql: %v", out)
		}
		// The same scorecard as REST's for the same request.
		var rest map[string]any
		e.Do(t, http.MethodGet, "/api/v1/datasets/"+clientes+"/synthetic/evaluation?rows=1000&seed=5", e.tok, nil).JSON(t, &rest)
		if rest["utility_score"] != ev["utilityScore"] || rest["k_min"] != ev["kMin"] {
			t.Fatalf("rest %v vs graphql %v", rest, ev)
		}
		bad := e.GraphQL(t, e.tok, `query($id: ID!) { dataset(id: $id) { syntheticEvaluation(rows: 0) { rows } } }`, map[string]any{"id": clientes})
		if errs, _ := bad["errors"].([]any); len(errs) == 0 {
			t.Fatalf("rows 0: %v", bad)
		}
	})

	t.Run("BadRequests", func(t *testing.T) {
		for _, c := range []struct {
			body map[string]any
			code string
		}{
			{map[string]any{"connection_id": e.connID, "dataset_ids": []string{clientes}}, "validation_error"},
			{map[string]any{}, "validation_error"},
			{map[string]any{"connection_id": e.connID, "rows": 10}, "validation_error"},
			{map[string]any{"connection_id": e.connID, "rows_per_table": 20001}, "validation_error"},
			{map[string]any{"connection_id": e.connID, "format": "parquet"}, "validation_error"},
		} {
			r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, c.body)
			if r.Status != 422 || !strings.Contains(string(r.Body), c.code) {
				t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			}
		}
		if r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+clientes+"/synthetic?rows=20001", e.tok, nil); r.Status != 422 {
			t.Errorf("rows over the bound: %d", r.Status)
		}
	})

	t.Run("404ForOtherWorkspace", func(t *testing.T) {
		other := e.MustWorkspace(t, "other")
		tok := e.MustToken(t, other)
		if r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+clientes+"/synthetic", tok, nil); r.Status != 404 {
			t.Fatalf("rows: %d", r.Status)
		}
		if r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+clientes+"/synthetic/evaluation", tok, nil); r.Status != 404 {
			t.Fatalf("evaluation: %d", r.Status)
		}
		if r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", tok, map[string]any{"dataset_ids": []string{clientes}}); r.Status != 404 {
			t.Fatalf("pack: %d", r.Status)
		}
		if r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", tok, map[string]any{"connection_id": e.connID}); r.Status != 404 {
			t.Fatalf("pack of a connection: %d", r.Status)
		}
	})
}

// realEmail is one of the source's unique emails, which the test hook forces the
// generator to reuse.
const realEmail = "maria.faria.1984@correio-real.pt"

func fillPeople(t *testing.T, db *sql.DB) {
	t.Helper()
	stmts := []string{`CREATE TABLE pessoas (id INTEGER PRIMARY KEY, email VARCHAR(120) NOT NULL UNIQUE, data_nascimento DATE NOT NULL,
		pontos INTEGER NOT NULL)`}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 400; i++ {
		email := fmt.Sprintf("pessoa%d@correio-real.pt", i)
		if i == 17 {
			email = realEmail
		}
		if _, err := tx.Exec(`INSERT INTO pessoas VALUES (?, ?, ?, ?)`, i, email,
			fmt.Sprintf("19%02d-%02d-%02d", 40+i%60, 1+i%12, 1+i%28), 100+i*7%900); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestSyntheticPrivacyFailStopsTheRows(t *testing.T) {
	e := newSynthEnv(t, app.Config{Synthetic: synthetic.Options{Inject: []synthetic.Injection{{Column: "email", Value: realEmail}}},
		RateLimitSynthetic: 2}, fillPeople)
	pessoas := e.dataset(t, e.connID, "pessoas")

	t.Run("EvaluationSaysPIILeak", func(t *testing.T) {
		var ev map[string]any
		r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+pessoas+"/synthetic/evaluation?rows=200&seed=1", e.tok, nil)
		if r.Status != 200 {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		r.JSON(t, &ev)
		if ev["privacy_verdict"] != "fail" || ev["key"] != "pii_leak" {
			t.Fatalf("evaluation: %v", ev)
		}
		p := ev["params"].(map[string]any)
		if p["column"] != "email" || p["source_rows"].(float64) != 1 || !strings.Contains(ev["reason"].(string), "email") {
			t.Fatalf("params %v reason %v", p, ev["reason"])
		}
		if strings.Contains(string(r.Body), realEmail) || strings.Contains(string(r.Body), "correio-real") {
			t.Fatal("the evaluation shows a source value")
		}
	})

	t.Run("RowsAnswer409", func(t *testing.T) {
		for _, format := range []string{"csv", "json"} {
			r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+pessoas+"/synthetic?rows=200&seed=1&format="+format, e.tok, nil)
			var out struct {
				Code   string `json:"code"`
				Detail struct {
					Code    string         `json:"code"`
					Message string         `json:"message"`
					Key     string         `json:"key"`
					Params  map[string]any `json:"params"`
				} `json:"detail"`
			}
			r.JSON(t, &out)
			if r.Status != 409 || out.Code != "synthetic_privacy_fail" || out.Detail.Key != "pii_leak" || out.Detail.Params["column"] != "email" ||
				out.Detail.Message == "" {
				t.Fatalf("%s: %d %s", format, r.Status, r.Body)
			}
			if strings.Contains(string(r.Body), "correio-real") {
				t.Fatal("the error shows a source value")
			}
		}
	})

	t.Run("PackAnswers409WithTablesThen429", func(t *testing.T) {
		body := map[string]any{"dataset_ids": []string{pessoas}, "rows_per_table": 100}
		r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, body)
		var out struct {
			Code   string `json:"code"`
			Detail struct {
				Key    string           `json:"key"`
				Tables []map[string]any `json:"tables"`
			} `json:"detail"`
		}
		r.JSON(t, &out)
		if r.Status != 409 || out.Code != "synthetic_privacy_fail" || len(out.Detail.Tables) != 1 || out.Detail.Tables[0]["name"] != "pessoas" ||
			out.Detail.Tables[0]["dataset_id"] != pessoas || out.Detail.Tables[0]["key"] != "pii_leak" || out.Detail.Tables[0]["params"] == nil {
			t.Fatalf("pack: %d %s", r.Status, r.Body)
		}
		if r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, body); r.Status != 409 {
			t.Fatalf("second pack: %d", r.Status)
		}
		r = e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, body)
		if r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Fatalf("third pack: %d %v", r.Status, r.Header)
		}
		if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < 1 || ra > 600 {
			t.Fatalf("Retry-After %d", ra)
		}
	})

	t.Run("QuasiIdentifierWithTinyGroupsWarns", func(t *testing.T) {
		// Birth dates over 400 rows: nearly every generated one is alone.
		var ev map[string]any
		e.Do(t, http.MethodGet, "/api/v1/datasets/"+pessoas+"/synthetic/evaluation?rows=200&seed=2", e.tok, nil).JSON(t, &ev)
		qi, _ := ev["quasi_identifiers"].([]any)
		if len(qi) != 1 || qi[0] != "data_nascimento" || ev["k_min"] == nil || ev["k_min"].(float64) >= 5 {
			t.Fatalf("evaluation: %v", ev)
		}
	})
}

func TestSyntheticBudget(t *testing.T) {
	e := newSynthEnv(t, app.Config{Synthetic: synthetic.Options{Budget: 1}}, fillPeople)
	pessoas := e.dataset(t, e.connID, "pessoas")
	for _, r := range []*apptest.Response{
		e.Do(t, http.MethodGet, "/api/v1/datasets/"+pessoas+"/synthetic?rows=10", e.tok, nil),
		e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, map[string]any{"dataset_ids": []string{pessoas}}),
	} {
		var out struct {
			Code   string         `json:"code"`
			Detail map[string]any `json:"detail"`
		}
		r.JSON(t, &out)
		if r.Status != 422 || out.Code != "synthetic_budget_exceeded" || out.Detail["budget_seconds"] == nil {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	}
}

// fillBuyers is a shop whose orders reference their buyer by a unique code (not by a name
// the lineage would infer a key from), with skewed order totals and buyers' birth dates.
func fillBuyers(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, s := range []string{
		`CREATE TABLE compradores (id INTEGER PRIMARY KEY, codigo VARCHAR(10) NOT NULL UNIQUE, regiao VARCHAR(20) NOT NULL,
			data_nascimento DATE NOT NULL, pontos INTEGER NOT NULL)`,
		`CREATE TABLE encomendas (id INTEGER PRIMARY KEY, comprador VARCHAR(10) NOT NULL, total NUMERIC(10,2) NOT NULL, criado TIMESTAMP NOT NULL)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	x := uint64(16)
	rnd := func() float64 {
		x = x*6364136223846793005 + 1442695040888963407
		return float64(x>>11) / (1 << 53)
	}
	regioes := []string{"Norte", "Centro", "Lisboa", "Alentejo", "Algarve"}
	for i := 1; i <= 600; i++ {
		if _, err := tx.Exec(`INSERT INTO compradores VALUES (?, ?, ?, ?, ?)`, i, fmt.Sprintf("C%05d", i), regioes[i%5],
			fmt.Sprintf("19%02d-%02d-%02d", 40+i%60, 1+i%12, 1+i%28), 100+i*7%900); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 4000; i++ {
		total := math.Round(math.Exp(5*rnd()*rnd())*1000) / 100 // most orders small, a long tail
		if _, err := tx.Exec(`INSERT INTO encomendas VALUES (?, ?, ?, ?)`, i, fmt.Sprintf("C%05d", 1+int(rnd()*600)),
			strconv.FormatFloat(total, 'f', 2, 64), fmt.Sprintf("2024-%02d-%02dT%02d:%02d:00Z", 1+i%12, 1+i%28, i%24, i%60)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestSyntheticUsesReferentialRulesSensitivityAndQuantiles: a referential rule declares a
// foreign key the names do not say, and the pack keeps it; quasi-identifiers follow the
// columns' sensitivity; numbers follow the source's distribution, not only its range.
func TestSyntheticUsesReferentialRulesSensitivityAndQuantiles(t *testing.T) {
	e := newSynthEnv(t, app.Config{}, fillBuyers)
	compradores, encomendas := e.dataset(t, e.connID, "compradores"), e.dataset(t, e.connID, "encomendas")
	pack := func(t *testing.T) map[string]string {
		t.Helper()
		r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, map[string]any{"connection_id": e.connID, "rows_per_table": 800,
			"seed": 5, "format": "sqlite"})
		if r.Status != 200 {
			t.Fatalf("pack: %d %s", r.Status, r.Body)
		}
		db := openSQLitePack(t, r.Body)
		fks := map[string]string{}
		rows, err := db.Query(`SELECT m.name, f."from", f."table", f."to" FROM sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table'`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var table, from, parent, to string
			if err := rows.Scan(&table, &from, &parent, &to); err != nil {
				t.Fatal(err)
			}
			fks[table+"."+from] = parent + "." + to
		}
		rows.Close()
		var problems, orphans int
		if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&problems); err != nil || problems != 0 {
			t.Fatalf("foreign_key_check: %d, %v", problems, err)
		}
		if fks["encomendas.comprador"] != "" {
			if err := db.QueryRow(`SELECT COUNT(*) FROM encomendas WHERE comprador NOT IN (SELECT codigo FROM compradores)`).Scan(&orphans); err != nil || orphans != 0 {
				t.Fatalf("orphans %d, %v", orphans, err)
			}
		}
		return fks
	}

	t.Run("ReferentialRuleDeclaresTheForeignKey", func(t *testing.T) {
		if fks := pack(t); len(fks) != 0 {
			t.Fatalf("without a rule the names infer no key, got %v", fks)
		}
		r := e.Do(t, http.MethodPost, "/api/v1/rules", e.admin, map[string]any{"dataset_id": encomendas, "rule_type": "referential",
			"params": map[string]any{"column": "comprador", "ref_dataset_id": compradores, "ref_column": "codigo"}})
		if r.Status != 201 {
			t.Fatalf("rule: %d %s", r.Status, r.Body)
		}
		if fks := pack(t); fks["encomendas.comprador"] != "compradores.codigo" {
			t.Fatalf("foreign keys %v", fks)
		}
	})

	t.Run("QuasiIdentifiersFollowSensitivity", func(t *testing.T) {
		qis := func() []any {
			var ev map[string]any
			r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+compradores+"/synthetic/evaluation?rows=300&seed=2", e.tok, nil)
			if r.Status != 200 {
				t.Fatalf("evaluation: %d %s", r.Status, r.Body)
			}
			r.JSON(t, &ev)
			qi, _ := ev["quasi_identifiers"].([]any)
			return qi
		}
		// Automatic: the birth date is pii by its name, and not a direct identifier.
		if got := fmt.Sprint(qis()); got != "[data_nascimento]" {
			t.Fatalf("automatic: %s", got)
		}
		set := func(col, level string) {
			if r := e.Do(t, http.MethodPut, "/api/v1/datasets/"+compradores+"/sensitivity/"+col, e.member, map[string]any{"level": level}); r.Status != 200 {
				t.Fatalf("set %s %s: %d %s", col, level, r.Status, r.Body)
			}
		}
		set("pontos", "pii")
		set("codigo", "pii") // unique: a direct identifier, never a quasi-identifier
		if got := fmt.Sprint(qis()); got != "[data_nascimento pontos]" {
			t.Fatalf("pontos set pii: %s", got)
		}
		set("data_nascimento", "public")
		if got := fmt.Sprint(qis()); got != "[pontos]" {
			t.Fatalf("birth date set public: %s", got)
		}
	})

	t.Run("NumbersFollowTheSourcesDistribution", func(t *testing.T) {
		r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+encomendas+"/synthetic?rows=4000&seed=9&format=json", e.tok, nil)
		if r.Status != 200 {
			t.Fatalf("rows: %d %s", r.Status, r.Body)
		}
		var out struct {
			Manifest struct {
				Evaluation struct {
					UtilityComponents map[string]float64 `json:"utility_components"`
				} `json:"evaluation"`
			} `json:"manifest"`
			Rows []map[string]any `json:"rows"`
		}
		r.JSON(t, &out)
		var totals []float64
		for _, row := range out.Rows {
			switch v := row["total"].(type) {
			case float64:
				totals = append(totals, v)
			case string:
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
				totals = append(totals, f)
			}
		}
		if len(totals) != 4000 {
			t.Fatalf("%d totals", len(totals))
		}
		src, err := sql.Open("sqlite", filepath.Join(e.root, "source.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		// Each generated decile's rank among the source's own values, as the source
		// answers it.
		slices.Sort(totals)
		for _, p := range []float64{0.1, 0.25, 0.5, 0.75, 0.9} {
			g := totals[int(p*float64(len(totals)-1))]
			var rank float64
			if err := src.QueryRow(`SELECT AVG(total <= ?) FROM encomendas`, g).Scan(&rank); err != nil {
				t.Fatal(err)
			}
			if math.Abs(rank-p) > 0.05 {
				t.Errorf("generated quantile %.2f (%.2f) sits at rank %.3f of the source", p, g, rank)
			}
		}
		if m := out.Manifest.Evaluation.UtilityComponents["marginals"]; m < 90 {
			t.Fatalf("marginals %v", out.Manifest.Evaluation.UtilityComponents)
		}

		// The dataset's profile answers the quantiles, the source's own (4000 rows: the
		// whole table is the sample): the value at rank p·(n−1) of its sorted totals.
		var ds struct {
			Columns []struct {
				Name    string `json:"name"`
				Profile struct {
					Quantiles []float64 `json:"quantiles"`
				} `json:"profile"`
			} `json:"columns"`
		}
		e.Do(t, http.MethodGet, "/api/v1/datasets/"+encomendas, e.tok, nil).JSON(t, &ds)
		var q []float64
		for _, c := range ds.Columns {
			if c.Name == "total" {
				q = c.Profile.Quantiles
			}
		}
		if len(q) != 21 {
			t.Fatalf("total quantiles %v", q)
		}
		for i, got := range q {
			pos := float64(i) * 3999 / 20
			lo := int(math.Floor(pos))
			var a, b float64
			if err := src.QueryRow(`SELECT total FROM encomendas ORDER BY total LIMIT 1 OFFSET ?`, lo).Scan(&a); err != nil {
				t.Fatal(err)
			}
			b = a
			if lo < 3999 {
				if err := src.QueryRow(`SELECT total FROM encomendas ORDER BY total LIMIT 1 OFFSET ?`, lo+1).Scan(&b); err != nil {
					t.Fatal(err)
				}
			}
			if want := a + (pos-float64(lo))*(b-a); math.Abs(got-want) > 1e-6 {
				t.Errorf("quantile %d: profile %v, source %v", i, got, want)
			}
		}
	})
}

// zipDiff names the entries two ZIPs hold different bytes for.
func zipDiff(t *testing.T, a, b []byte) []string {
	t.Helper()
	read := func(z []byte) map[string]string {
		out := map[string]string{}
		zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
		if err != nil {
			return out
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(rc)
			rc.Close()
			out[f.Name] = string(body)
		}
		return out
	}
	fa, fb := read(a), read(b)
	var diff []string
	for name, body := range fa {
		if fb[name] != body {
			la, lb := strings.Split(body, "\n"), strings.Split(fb[name], "\n")
			for i := range min(len(la), len(lb)) {
				if la[i] != lb[i] {
					name += fmt.Sprintf(" (line %d: %.200s | %.200s)", i+1, la[i], lb[i])
					break
				}
			}
			diff = append(diff, name)
		}
	}
	return diff
}

// TestSyntheticUtilityOnEveryDemoPack: every demo pack's tables, packed at 1000 rows,
// score a utility of at least 80 with components and weights, and pass privacy. (The
// e-commerce order lines have two non-key columns, quantity and unit price, whose rare
// combinations generated rows repeat: those rows are drawn again before the check.)
func TestSyntheticUtilityOnEveryDemoPack(t *testing.T) {
	for _, key := range []string{"ecommerce", "health", "payments"} {
		t.Run(key, func(t *testing.T) {
			e := newSynthEnv(t, app.Config{}, func(t *testing.T, db *sql.DB) {
				if err := demo.Build(context.Background(), db, demo.DialectSQLite, key, 42, 1); err != nil {
					t.Fatal(err)
				}
			})
			body := map[string]any{"connection_id": e.connID, "rows_per_table": 1000, "seed": 4, "format": "zip"}
			r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, body)
			if r.Status != 200 {
				t.Fatalf("pack: %d %s", r.Status, r.Body)
			}
			zr, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body)))
			if err != nil {
				t.Fatal(err)
			}
			var m synthetic.Manifest
			for _, f := range zr.File {
				if f.Name != "manifest.json" {
					continue
				}
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				if err := json.NewDecoder(rc).Decode(&m); err != nil {
					t.Fatal(err)
				}
				rc.Close()
			}
			if len(m.Tables) == 0 {
				t.Fatal("no tables in the manifest")
			}
			for _, mt := range m.Tables {
				ev := mt.Evaluation
				t.Logf("%s: utility %.2f %v, verdict %s", mt.Name, ev.UtilityScore, ev.UtilityComponents, ev.PrivacyVerdict)
				if ev.UtilityScore < 80 || len(ev.UtilityComponents) == 0 || len(ev.UtilityComponents) != len(ev.UtilityWeights) {
					t.Errorf("%s: utility %.2f, components %v, weights %v", mt.Name, ev.UtilityScore, ev.UtilityComponents, ev.UtilityWeights)
				}
			}
		})
	}
}

// openSQLitePack opens a SQLite synthetic pack (a response body) from a temporary file;
// the database is closed when the test ends.
func openSQLitePack(t *testing.T, body []byte) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pack.sqlite")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
