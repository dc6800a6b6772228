package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/vigia-data/vigia"
)

// fillOrders makes clientes (ids 1-50) and encomendas (100 rows, 3 of them pointing to
// customers that do not exist: 3% orphans) with the value marker in a text column.
func fillOrders(t *testing.T, src *sourceDB) {
	t.Helper()
	src.exec(t, `CREATE TABLE clientes (id INTEGER PRIMARY KEY, nome VARCHAR(100))`)
	src.exec(t, `CREATE TABLE encomendas (id INTEGER PRIMARY KEY, cliente_id INTEGER, nota VARCHAR(100))`)
	for i := 1; i <= 50; i++ {
		src.exec(t, fmt.Sprintf("INSERT INTO clientes VALUES (%d, %s)", i, src.ph(1)), valueMarker+" cliente")
	}
	for i := 1; i <= 100; i++ {
		c := (i % 50) + 1
		if i <= 3 {
			c = 900 + i
		}
		src.exec(t, fmt.Sprintf("INSERT INTO encomendas VALUES (%d, %d, %s)", i, c, src.ph(1)), valueMarker+" nota")
	}
}

// Must show 1: a referential rule with 3% orphans and max_orphan_pct 1 fails, opens one
// issue (not two after a second scan) with observed 3 and threshold 1; once the
// reference table is dropped the rule is not_evaluated, opens nothing and the score is
// the score without the rule.
func TestReferentialRuleFailsOnceAndIsNotEvaluatedWithoutItsReference(t *testing.T) {
	e := newWF(t, "referential")
	src := newSource(t, "postgres", e.root)
	fillOrders(t, src)
	conn := e.connect(t, "loja", "postgres", src.dsn)
	e.scan(t, conn)
	orders, customers := e.dataset(t, conn, "encomendas"), e.dataset(t, conn, "clientes")
	withoutRule := e.score(t, orders)

	rule := e.createRule(t, map[string]any{"dataset_id": orders, "rule_type": "referential", "severity": "critical",
		"params": map[string]any{"column": "cliente_id", "ref_dataset_id": customers, "ref_column": "id", "max_orphan_pct": 1}})
	ruleID := rule["id"].(string)
	if rule["last_result"] != nil || rule["ref_dataset_name"] != "public.clientes" {
		t.Fatalf("new rule: %v", rule)
	}

	ruleIssues := func(t *testing.T) []map[string]any {
		t.Helper()
		items, _ := e.list(t, "/api/v1/issues?type=rule&dataset_id="+orders, e.tok)
		return items
	}
	e.scan(t, conn)
	t.Run("FailsWithObserved3Threshold1", func(t *testing.T) {
		r := e.get(t, "/api/v1/rules/"+ruleID, e.tok)
		lr := r["last_result"].(map[string]any)
		if lr["status"] != "failed" || lr["observed"] != 3.0 || lr["threshold"] != 1.0 || lr["reason"] != nil || lr["scan_id"] == "" {
			t.Fatalf("last_result %v", lr)
		}
		is := ruleIssues(t)
		if len(is) != 1 || is[0]["status"] != "open" || is[0]["severity"] != "critical" || is[0]["rule_id"] != ruleID ||
			r["current_issue_id"] != is[0]["id"] {
			t.Fatalf("issues %v", is)
		}
		if s := e.score(t, orders); s >= withoutRule {
			t.Fatalf("a failed rule did not lower the score: %v >= %v", s, withoutRule)
		}
		v := e.get(t, "/api/v1/datasets/"+orders+"/verdict", e.tok)
		fr := v["failing_rules"].([]any)
		if v["verdict"] != "fail" || len(fr) != 1 || fr[0].(map[string]any)["rule_id"] != ruleID {
			t.Fatalf("verdict %v", v)
		}
	})
	e.scan(t, conn)
	t.Run("SecondScanKeepsOneIssue", func(t *testing.T) {
		is := ruleIssues(t)
		if len(is) != 1 || is[0]["detections"] != 2.0 {
			t.Fatalf("issues %v", is)
		}
	})

	src.exec(t, `DROP TABLE clientes`)
	e.scan(t, conn)
	t.Run("UnreachableReferenceIsNotEvaluated", func(t *testing.T) {
		r := e.get(t, "/api/v1/rules/"+ruleID, e.admin)
		lr := r["last_result"].(map[string]any)
		reason, _ := lr["reason"].(map[string]any)
		if lr["status"] != "not_evaluated" || lr["observed"] != nil || reason == nil || reason["code"] != "reference_unreachable" {
			t.Fatalf("last_result %v", lr)
		}
		if len(ruleIssues(t)) != 1 {
			t.Fatalf("a not_evaluated rule opened an issue")
		}
		if s := e.score(t, orders); s != withoutRule {
			t.Fatalf("score %v; want %v, the score without the rule", s, withoutRule)
		}
		if v := e.get(t, "/api/v1/datasets/"+orders+"/verdict", e.tok); len(v["failing_rules"].([]any)) != 0 {
			t.Fatalf("verdict still lists the rule: %v", v)
		}
	})

	t.Run("ReferenceOnAnotherConnectionIsNotEvaluated", func(t *testing.T) {
		other := newSource(t, "sqlite", e.root)
		other.exec(t, `CREATE TABLE paises (codigo INTEGER PRIMARY KEY)`)
		oc := e.connect(t, "outra", "sqlite", other.dsn)
		e.scan(t, oc)
		rr := e.createRule(t, map[string]any{"dataset_id": orders, "rule_type": "referential",
			"params": map[string]any{"column": "cliente_id", "ref_dataset_id": e.dataset(t, oc, "paises"), "ref_column": "codigo"}})
		before := len(ruleIssues(t))
		e.scan(t, conn)
		lr := e.get(t, "/api/v1/rules/"+rr["id"].(string), e.tok)["last_result"].(map[string]any)
		if lr["status"] != "not_evaluated" || lr["reason"].(map[string]any)["code"] != "reference_other_connection" {
			t.Fatalf("last_result %v", lr)
		}
		if len(ruleIssues(t)) != before {
			t.Fatal("opened an issue")
		}
	})

	t.Run("InvisibleReferenceIsNeverNamed", func(t *testing.T) {
		// The last result names the dropped reference (reference_unreachable). The
		// reference dataset goes into a restricted-access domain the member's teams have no
		// grant on; the rule's own dataset stays visible. Visibility applies when reading.
		domain := vigia.NewID()
		e.exec(t, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Clientes', true)`, domain, e.ws)
		e.exec(t, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, customers)
		seen := e.get(t, "/api/v1/rules/"+ruleID, e.member)
		reason := seen["last_result"].(map[string]any)["reason"].(map[string]any)
		body := fmt.Sprint(seen)
		if strings.Contains(body, "clientes") || strings.Contains(body, customers) || seen["ref_dataset_name"] != nil ||
			seen["ref_dataset_restricted"] != true ||
			reason["code"] != "reference_unreachable" || reason["message"] == "" {
			t.Fatalf("member sees the reference: %v", seen)
		}
		byAdmin := e.get(t, "/api/v1/rules/"+ruleID, e.admin)
		ar := byAdmin["last_result"].(map[string]any)["reason"].(map[string]any)
		if ar["params"].(map[string]any)["ref_dataset"] != "public.clientes" || !strings.Contains(ar["message"].(string), "public.clientes") {
			t.Fatalf("admin reason %v", ar)
		}
		r := e.Do(t, http.MethodGet, "/api/v1/rules/"+ruleID+"/failing-rows.sql", e.member, nil)
		if r.Status != 204 || r.Header.Get("X-Vigia-Reason") != "reference_not_visible" || len(r.Body) != 0 {
			t.Fatalf("failing rows for the member: %d %v %s", r.Status, r.Header, r.Body)
		}
		r = e.Do(t, http.MethodGet, "/api/v1/rules/"+ruleID+"/failing-rows.sql", e.admin, nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"public"."clientes"`) {
			t.Fatalf("failing rows for the admin: %d %s", r.Status, r.Body)
		}
	})

	t.Run("NoValueStoredOrReturned", func(t *testing.T) {
		var n int
		if err := e.DB.Pool().QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM rule_results WHERE reason_params::text LIKE '%' || $1 || '%') +
			(SELECT count(*) FROM issues WHERE details::text LIKE '%' || $1 || '%' OR title LIKE '%' || $1 || '%')`, valueMarker).
			Scan(&n); err != nil || n != 0 {
			t.Fatalf("marker stored %d (%v)", n, err)
		}
		if strings.Contains(e.Logs.String(), valueMarker) || strings.Contains(e.Logs.String(), passwordMarker) {
			t.Fatal("marker in the logs")
		}
	})
}

// Must show 2: failing-rows.sql of a unique rule on a column named `select "x"` in
// each of the seven dialects, accepted by the Postgres and MySQL parsers (and compiled
// by SQLite); row_count_min answers 204 with the reason header; every read is audited.
func TestFailingRowsSQLInEveryDialect(t *testing.T) {
	e := newWF(t, "failingrows")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE pedidos (id INTEGER PRIMARY KEY, "select ""x""" TEXT, total NUMERIC(10,2))`)
	src.exec(t, `INSERT INTO pedidos VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 3)`)
	conn := e.connect(t, "vendas", "postgres", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "pedidos")
	unique := e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "unique", "params": map[string]any{"columns": []string{`select "x"`}}})
	rowCount := e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "row_count_min", "params": map[string]any{"min_rows": 10}})
	path := "/api/v1/rules/" + unique["id"].(string) + "/failing-rows.sql"
	reads := 0
	get := func(t *testing.T, query, cred string) *struct {
		status  int
		dialect string
		reason  string
		body    string
	} {
		t.Helper()
		r := e.Do(t, http.MethodGet, path+query, cred, nil)
		reads++
		return &struct {
			status  int
			dialect string
			reason  string
			body    string
		}{r.Status, r.Header.Get("dialect"), r.Header.Get("X-Vigia-Reason"), string(r.Body)}
	}

	quoted := map[string]string{
		"postgres": `"select ""x"""`, "sqlite": `"select ""x"""`, "snowflake": `"select ""x"""`, "duckdb": `"select ""x"""`,
		"mysql": "`select \"x\"`", "databricks": "`select \"x\"`", "bigquery": "`select \"x\"`", "mssql": `[select "x"]`,
	}
	sqlite, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer sqlite.Close()
	if _, err := sqlite.Exec(`CREATE TABLE pedidos (id INTEGER, "select ""x""" TEXT)`); err != nil {
		t.Fatal(err)
	}
	mysqlParser := parser.New()
	for _, d := range []string{"postgres", "mysql", "mssql", "bigquery", "snowflake", "databricks", "sqlite", "duckdb"} {
		t.Run(d, func(t *testing.T) {
			r := get(t, "?dialect="+d+"&limit=25", e.tok)
			if r.status != 200 || r.dialect != d {
				t.Fatalf("%d dialect %q: %s", r.status, r.dialect, r.body)
			}
			if !strings.Contains(r.body, quoted[d]) || (!strings.Contains(r.body, "LIMIT 25") && !strings.Contains(r.body, "TOP (25)")) {
				t.Fatalf("query:\n%s", r.body)
			}
			switch d {
			case "postgres":
				res, err := pg_query.Parse(r.body)
				if err != nil || len(res.Stmts) != 1 || res.Stmts[0].Stmt.GetSelectStmt() == nil {
					t.Fatalf("postgres parser: %v\n%s", err, r.body)
				}
			case "mysql":
				if _, err := mysqlParser.ParseOneStmt(r.body, "", ""); err != nil {
					t.Fatalf("mysql parser: %v\n%s", err, r.body)
				}
			case "sqlite":
				q := strings.ReplaceAll(r.body, `"public".`, "")
				if _, err := sqlite.Exec("EXPLAIN " + q); err != nil {
					t.Fatalf("sqlite: %v\n%s", err, q)
				}
			}
		})
	}
	t.Run("TheQueryListsTheFailingRows", func(t *testing.T) {
		r := get(t, "", e.admin)
		if r.status != 200 || r.dialect != "postgres" {
			t.Fatalf("default dialect: %d %q", r.status, r.dialect)
		}
		rows, err := src.db.Query(r.body)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 2 {
			t.Fatalf("%d failing rows, want 2", n)
		}
	})
	t.Run("RowCountMinHasNoRowQuery", func(t *testing.T) {
		r := e.Do(t, http.MethodGet, "/api/v1/rules/"+rowCount["id"].(string)+"/failing-rows.sql?dialect=mysql", e.tok, nil)
		reads++
		if r.Status != 204 || r.Header.Get("X-Vigia-Reason") != "row_count_min" || r.Header.Get("dialect") != "mysql" || len(r.Body) != 0 {
			t.Fatalf("got %d %v %q", r.Status, r.Header, r.Body)
		}
	})
	t.Run("BadParametersAre422", func(t *testing.T) {
		for _, q := range []string{"?limit=0", "?limit=1001", "?dialect=oracle", "?limit=x"} {
			if r := e.Do(t, http.MethodGet, path+q, e.tok, nil); r.Status != 422 || strings.Contains(string(r.Body), "oracle") {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
		}
	})
	t.Run("OtherWorkspaceGets404", func(t *testing.T) {
		other := e.MustToken(t, e.MustWorkspace(t, "other"))
		if r := e.Do(t, http.MethodGet, path, other, nil); r.Status != 404 {
			t.Fatalf("got %d", r.Status)
		}
	})
	t.Run("EveryReadIsAudited", func(t *testing.T) {
		var n, tokens int
		if err := e.DB.Pool().QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE actor LIKE 'token:%')
			FROM activity_log WHERE workspace_id = $1 AND action = 'failing_rows_sql_read' AND subject_type = 'rule'`, e.ws).
			Scan(&n, &tokens); err != nil {
			t.Fatal(err)
		}
		if n != reads || tokens != reads-1 {
			t.Fatalf("%d audit rows (%d by token); want %d", n, tokens, reads)
		}
	})
}

// Rules are changed only by a person's session of a member or an administrator, and
// their parameters are checked against the dataset.
func TestRuleChangesNeedAMemberSession(t *testing.T) {
	e := newWF(t, "rulecrud")
	src := newSource(t, "sqlite", e.root)
	src.exec(t, `CREATE TABLE t (id INTEGER PRIMARY KEY, estado TEXT, valor REAL, criado TEXT)`)
	src.exec(t, `INSERT INTO t VALUES (1, 'pago', 10, datetime('now')), (2, 'PAGO', -5, datetime('now', '-3 days')), (3, NULL, 200, NULL)`)
	conn := e.connect(t, "s", "sqlite", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "t")
	body := map[string]any{"dataset_id": ds, "rule_type": "not_null", "params": map[string]any{"column": "estado"}}

	t.Run("TokenAndViewerCannot", func(t *testing.T) {
		r := e.Do(t, http.MethodPost, "/api/v1/rules", e.tok, body)
		if r.Status != 403 || decodeError(t, r).Code != "token_read_only" {
			t.Fatalf("token: %d %s", r.Status, r.Body)
		}
		r = e.Do(t, http.MethodPost, "/api/v1/rules", e.viewer, body)
		if r.Status != 403 || decodeError(t, r).Code != "forbidden" {
			t.Fatalf("viewer: %d %s", r.Status, r.Body)
		}
		g := e.GraphQL(t, e.viewer, `mutation($i: CreateRuleInput!){ createRule(input: $i){ id } }`,
			map[string]any{"i": map[string]any{"datasetId": ds, "ruleType": "not_null", "params": map[string]any{"column": "estado"}}})
		if fmt.Sprint(g["errors"]) == "<nil>" || !strings.Contains(fmt.Sprint(g["errors"]), "forbidden") {
			t.Fatalf("graphql viewer: %v", g)
		}
	})
	t.Run("BadParametersAre422WithoutValues", func(t *testing.T) {
		for name, b := range map[string]map[string]any{
			"UnknownColumn":  {"dataset_id": ds, "rule_type": "not_null", "params": map[string]any{"column": "nao_existe"}},
			"ExtraParam":     {"dataset_id": ds, "rule_type": "not_null", "params": map[string]any{"column": "estado", "values": []string{"x"}}},
			"RangeWithout":   {"dataset_id": ds, "rule_type": "range", "params": map[string]any{"column": "valor"}},
			"WritingSQL":     {"dataset_id": ds, "rule_type": "custom_sql", "params": map[string]any{"sql": "DELETE FROM t WHERE id = 1"}},
			"UnknownType":    {"dataset_id": ds, "rule_type": "magic", "params": map[string]any{}},
			"BadSeverity":    {"dataset_id": ds, "rule_type": "not_null", "severity": "urgent", "params": map[string]any{"column": "estado"}},
			"NegativeOrphan": {"dataset_id": ds, "rule_type": "referential", "params": map[string]any{"column": "id", "ref_dataset_id": ds, "ref_column": "id", "max_orphan_pct": -1}},
		} {
			r := e.Do(t, http.MethodPost, "/api/v1/rules", e.member, b)
			if r.Status != 422 || decodeError(t, r).Code != "validation_error" || strings.Contains(string(r.Body), "DELETE") ||
				strings.Contains(string(r.Body), "nao_existe") {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
	})
	// The service names the field; REST says it came in the body, GraphQL in the input.
	t.Run("ItemsSayWhereTheFieldCameFrom", func(t *testing.T) {
		for name, c := range map[string]struct {
			params map[string]any
			want   string
		}{
			"UnknownColumn":  {map[string]any{"column": "nao_existe"}, "unknown_column@params.column"},
			"ExtraParam":     {map[string]any{"column": "estado", "values": []string{"x"}}, "extra_forbidden@params.values"},
			"MissingColumn":  {map[string]any{}, "missing@params.column"},
			"ColumnNotAText": {map[string]any{"column": 3}, "string_type@params.column"},
		} {
			r := e.Do(t, http.MethodPost, "/api/v1/rules", e.member, map[string]any{"dataset_id": ds, "rule_type": "not_null", "params": c.params})
			var items []struct {
				Type string   `json:"type"`
				Loc  []string `json:"loc"`
			}
			if err := json.Unmarshal(decodeError(t, r).Detail, &items); err != nil || len(items) == 0 ||
				items[0].Type+"@"+strings.Join(items[0].Loc, ".") != strings.Replace(c.want, "@", "@body.", 1) {
				t.Errorf("REST %s: %d %s", name, r.Status, r.Body)
			}
			g := e.GraphQL(t, e.member, `mutation($i: CreateRuleInput!){ createRule(input: $i){ id } }`,
				map[string]any{"i": map[string]any{"datasetId": ds, "ruleType": "not_null", "params": c.params}})
			if got := fmt.Sprint(g["errors"]); !strings.Contains(got, "loc:[args input "+strings.ReplaceAll(strings.SplitN(c.want, "@", 2)[1], ".", " ")+"]") {
				t.Errorf("GraphQL %s: %s", name, got)
			}
		}
	})
	t.Run("UnknownOrForeignDatasetIs404", func(t *testing.T) {
		foreign := e.MustDataset(t, e.MustWorkspace(t, "x"), e.MustConnection(t, e.ws, "fake"), "public", "t")
		for _, id := range []string{vigia.NewID(), foreign} {
			r := e.Do(t, http.MethodPost, "/api/v1/rules", e.member, map[string]any{"dataset_id": id, "rule_type": "row_count_min",
				"params": map[string]any{"min_rows": 1}})
			if r.Status != 404 {
				t.Errorf("%s: %d %s", id, r.Status, r.Body)
			}
		}
	})

	notNull := e.createRule(t, body)
	rules := []map[string]any{notNull,
		e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "accepted_values", "params": map[string]any{"column": "estado", "values": []any{"pago", "pendente"}}}),
		e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "range", "params": map[string]any{"column": "valor", "min": 0, "max": 100}}),
		e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "freshness", "params": map[string]any{"column": "criado", "max_age_hours": 1}}),
		e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "row_count_min", "params": map[string]any{"min_rows": 2}}),
		e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "custom_sql", "params": map[string]any{"sql": "SELECT COUNT(*) FROM t WHERE valor < 0"}}),
		e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "pattern", "params": map[string]any{"column": "estado", "pattern": "^[a-z]+$"}}),
		e.createRule(t, map[string]any{"dataset_id": ds, "rule_type": "unique", "severity": "info", "params": map[string]any{"column": "id"}}),
	}
	e.scan(t, conn)
	t.Run("EveryTypeIsEvaluated", func(t *testing.T) {
		want := []struct {
			status   string
			observed any
		}{{"failed", 1.0}, {"failed", 1.0}, {"failed", 2.0}, {"passed", nil}, {"passed", 3.0}, {"failed", 1.0}, {"failed", 1.0}, {"passed", 0.0}}
		for i, r := range rules {
			lr := e.get(t, "/api/v1/rules/"+r["id"].(string), e.tok)["last_result"].(map[string]any)
			if lr["status"] != want[i].status || (want[i].observed != nil && lr["observed"] != want[i].observed) {
				t.Errorf("%s: %v", r["rule_type"], lr)
			}
		}
		fresh := e.get(t, "/api/v1/rules/"+rules[3]["id"].(string), e.tok)["last_result"].(map[string]any)
		if o, _ := fresh["observed"].(float64); o < 0 || o > 2 {
			t.Errorf("freshness observed %v hours", fresh["observed"])
		}
		// SQLite has no regular expressions of its own: Vigia's connections add REGEXP,
		// case-sensitive like the other dialects ('PAGO' fails ^[a-z]+$).
		items, total := e.list(t, "/api/v1/rules?dataset_id="+ds+"&status=failed", e.tok)
		if total != "5" || len(items) != 5 {
			t.Errorf("failed rules: %s", total)
		}
		if _, total := e.list(t, "/api/v1/issues?type=rule", e.tok); total != "5" {
			t.Errorf("rule issues: %s", total)
		}
	})
	t.Run("PassingAgainResolvesTheIssue", func(t *testing.T) {
		src.exec(t, `UPDATE t SET estado = 'pago' WHERE estado IS NULL`)
		e.scan(t, conn)
		r := e.get(t, "/api/v1/rules/"+notNull["id"].(string), e.tok)
		if r["last_result"].(map[string]any)["status"] != "passed" || r["current_issue_id"] != nil {
			t.Fatalf("rule %v", r)
		}
		items, _ := e.list(t, "/api/v1/issues?type=rule&status=resolved", e.tok)
		if len(items) != 1 {
			t.Fatalf("resolved rule issues: %v", items)
		}
		d := e.get(t, "/api/v1/issues/"+items[0]["id"].(string), e.tok)
		h := d["history"].([]any)
		last := h[len(h)-1].(map[string]any)
		if last["event"] != "auto_resolved" || !strings.HasPrefix(last["origin"].(string), "scan:") {
			t.Fatalf("history %v", h)
		}
	})
	t.Run("PatchAndDelete", func(t *testing.T) {
		id := rules[4]["id"].(string)
		r := e.Do(t, http.MethodPatch, "/api/v1/rules/"+id, e.member, map[string]any{"severity": "critical", "params": map[string]any{"min_rows": 5}})
		var out map[string]any
		r.JSON(t, &out)
		if r.Status != 200 || out["severity"] != "critical" || out["params"].(map[string]any)["min_rows"] != 5.0 {
			t.Fatalf("patch: %d %s", r.Status, r.Body)
		}
		if r := e.Do(t, http.MethodPatch, "/api/v1/rules/"+id, e.tok, map[string]any{"active": false}); r.Status != 403 {
			t.Fatalf("token patch: %d", r.Status)
		}
		failing := rules[5]["id"].(string)
		cur := e.get(t, "/api/v1/rules/"+failing, e.tok)["current_issue_id"].(string)
		if r := e.Do(t, http.MethodDelete, "/api/v1/rules/"+failing, e.member, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := e.Do(t, http.MethodGet, "/api/v1/rules/"+failing, e.tok, nil); r.Status != 404 {
			t.Fatalf("deleted rule: %d", r.Status)
		}
		if is := e.get(t, "/api/v1/issues/"+cur, e.tok); is["status"] != "resolved" {
			t.Fatalf("issue of a deleted rule: %v", is)
		}
	})
	t.Run("RulesOfInvisibleDatasetsAreNotCounted", func(t *testing.T) {
		_, before := e.list(t, "/api/v1/rules", e.member)
		domain := vigia.NewID()
		e.exec(t, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Fechado', true)`, domain, e.ws)
		e.exec(t, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, ds)
		defer e.exec(t, `DELETE FROM domains WHERE id = $1`, domain)
		if _, total := e.list(t, "/api/v1/rules", e.member); total != "0" || before == "0" {
			t.Fatalf("member counts %s rules (before %s)", total, before)
		}
		if _, total := e.list(t, "/api/v1/rules", e.admin); total != before {
			t.Fatalf("admin counts %s; want %s", total, before)
		}
		if r := e.Do(t, http.MethodGet, "/api/v1/rules/"+notNull["id"].(string), e.member, nil); r.Status != 404 {
			t.Fatalf("member reads a rule of an invisible dataset: %d", r.Status)
		}
		if _, total := e.list(t, "/api/v1/issues?type=rule", e.member); total != "0" {
			t.Fatalf("member counts %s rule issues", total)
		}
	})
	t.Run("GraphQLListsRulesWithLastResult", func(t *testing.T) {
		g := e.GraphQL(t, e.tok, `query($d: ID){ rules(datasetId: $d, limit: 50) { total items { id ruleType lastResult { status observed threshold reason { code } } } } }`,
			map[string]any{"d": ds})
		if g["errors"] != nil {
			t.Fatalf("errors %v", g["errors"])
		}
		_, total := e.list(t, "/api/v1/rules?dataset_id="+ds, e.tok)
		if fmt.Sprint(g["data"].(map[string]any)["rules"].(map[string]any)["total"]) != total {
			t.Fatalf("graphql %v, rest total %s", g, total)
		}
	})
}
