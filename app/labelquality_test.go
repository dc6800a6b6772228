package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type labelQualityOut struct {
	Available     bool `json:"available"`
	Configuration *struct {
		LabelColumn    string   `json:"label_column"`
		FeatureColumns []string `json:"feature_columns"`
	} `json:"configuration"`
	PIIGate struct {
		Status     string   `json:"status"`
		PIIColumns []string `json:"pii_columns"`
	} `json:"pii_gate"`
	LastResult *struct {
		Rows            int64 `json:"rows"`
		UnlabelledRows  int64 `json:"unlabelled_rows"`
		DistinctClasses int64 `json:"distinct_classes"`
		Classes         []struct {
			Rank  int   `json:"rank"`
			Count int64 `json:"count"`
		} `json:"classes"`
		ConflictGroups int64    `json:"conflict_groups"`
		ConflictRows   int64    `json:"conflict_rows"`
		FeaturesUsed   []string `json:"features_used"`
		Leakage        []struct {
			Column string `json:"column"`
			Kind   string `json:"kind"`
		} `json:"leakage"`
	} `json:"last_result"`
}

// Label quality of a training table on Postgres: class balance, conflicting labels and
// leakage hints agree with the source's own counts; the PII gate leaves a PII feature out
// and blocks a PII label; the extra follows the plan; counts only are stored.
func TestLabelQualityCountsAndGate(t *testing.T) {
	e := newWF(t, "labels")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE treino (id integer PRIMARY KEY, plano text, idade integer, email text, grupo text, codigo text,
		churn_previsto text, churn text)`)
	var rows []string
	for i := 1; i <= 200; i++ {
		churn := "'nao'"
		if i%4 < 2 {
			churn = "'sim'"
		}
		if i%25 == 0 {
			churn = "NULL"
		}
		rows = append(rows, fmt.Sprintf("(%d, '%s', %d, 'cliente%d@exemplo.pt', 'g%d', 'C%04d', '%s', %s)", i,
			[]string{"basico", "pro", "max"}[i%3], 20+i%10, i, i%4, i, []string{"x", "y"}[i%7%2], churn))
	}
	src.exec(t, "INSERT INTO treino VALUES "+strings.Join(rows, ", "))
	conn := e.connect(t, "ml", "postgres", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "treino")
	path := "/api/v1/datasets/" + ds + "/label-quality"

	get := func(cred string) labelQualityOut {
		var out labelQualityOut
		r := e.Do(t, http.MethodGet, path, cred, nil)
		if r.Status != 200 {
			t.Fatalf("GET: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &out)
		return out
	}
	put := func(cred string, body map[string]any, want int) labelQualityOut {
		var out labelQualityOut
		r := e.Do(t, http.MethodPut, path, cred, body)
		if r.Status != want {
			t.Fatalf("PUT %v: %d %s", body, r.Status, r.Body)
		}
		if want == 200 {
			r.JSON(t, &out)
		}
		return out
	}
	if g := get(e.tok); !g.Available || g.Configuration != nil || g.LastResult != nil || g.PIIGate.Status != "not_configured" {
		t.Fatalf("before: %+v", g)
	}
	if r := e.Do(t, http.MethodPost, path+"/run", e.member, nil); r.Status != 409 {
		t.Fatalf("run before configuring: %d", r.Status)
	}
	put(e.viewer, map[string]any{"label_column": "churn"}, 403)
	put(e.tok, map[string]any{"label_column": "churn"}, 403)
	put(e.member, map[string]any{"label_column": "nope"}, 422)
	put(e.member, map[string]any{"label_column": "churn", "feature_columns": []string{"churn"}}, 422)

	out := put(e.member, map[string]any{"label_column": "churn", "feature_columns": []string{"plano", "idade", "email"}}, 200)
	res := out.LastResult
	if out.PIIGate.Status != "passed" || strings.Join(out.PIIGate.PIIColumns, ",") != "email" || res == nil ||
		strings.Join(res.FeaturesUsed, ",") != "plano,idade" {
		t.Fatalf("configured: %+v %+v", out, res)
	}
	var total, unlabelled, conflictGroups, conflictRows int64
	if err := src.db.QueryRow(`SELECT count(*), count(*) - count(churn) FROM treino`).Scan(&total, &unlabelled); err != nil {
		t.Fatal(err)
	}
	if err := src.db.QueryRow(`SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) n FROM treino WHERE churn IS NOT NULL
		GROUP BY plano, idade HAVING count(DISTINCT churn) > 1) x`).Scan(&conflictGroups, &conflictRows); err != nil {
		t.Fatal(err)
	}
	var classes []int64
	r, err := src.db.Query(`SELECT count(*) FROM treino WHERE churn IS NOT NULL GROUP BY churn ORDER BY 1 DESC`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var n int64
		if err := r.Scan(&n); err != nil {
			t.Fatal(err)
		}
		classes = append(classes, n)
	}
	r.Close()
	if res.Rows != total || res.UnlabelledRows != unlabelled || res.DistinctClasses != int64(len(classes)) || len(res.Classes) != len(classes) ||
		res.ConflictGroups != conflictGroups || res.ConflictRows != conflictRows || conflictGroups == 0 {
		t.Fatalf("result %+v; source: rows %d unlabelled %d classes %v conflicts %d/%d", res, total, unlabelled, classes, conflictGroups, conflictRows)
	}
	for i, c := range res.Classes {
		if c.Count != classes[i] || c.Rank != i+1 {
			t.Fatalf("class %d: %+v, source %d", i, c, classes[i])
		}
	}

	// GraphQL answers the same counts.
	gq := e.Do(t, http.MethodPost, "/graphql", e.tok, map[string]any{"query": `query($id: ID!){ dataset(id: $id){ labelQuality {
		piiGate { status piiColumns } lastResult { rows unlabelledRows conflictGroups conflictRows featuresUsed } } } }`,
		"variables": map[string]any{"id": ds}})
	var g struct {
		Data struct {
			Dataset struct {
				LabelQuality struct {
					PiiGate    struct{ Status string }
					LastResult struct {
						Rows, UnlabelledRows, ConflictGroups, ConflictRows int64
						FeaturesUsed                                       []string
					}
				}
			}
		}
	}
	gq.JSON(t, &g)
	if lq := g.Data.Dataset.LabelQuality; lq.PiiGate.Status != "passed" || lq.LastResult.Rows != total || lq.LastResult.ConflictRows != conflictRows ||
		lq.LastResult.UnlabelledRows != unlabelled || lq.LastResult.ConflictGroups != conflictGroups {
		t.Fatalf("graphql %s", gq.Body)
	}

	// Leakage: a group that decides the label, a per-row code, a feature named after the label.
	out = put(e.member, map[string]any{"label_column": "churn", "feature_columns": []string{"grupo", "codigo", "churn_previsto", "plano"}}, 200)
	hints := map[string]string{}
	for _, h := range out.LastResult.Leakage {
		hints[h.Column] = h.Kind
	}
	if hints["grupo"] != "determines_label" || hints["codigo"] != "identifier" || hints["churn_previsto"] != "name_overlap" || hints["plano"] != "" {
		t.Fatalf("leakage %v", hints)
	}

	// Counts only in the database.
	var stored string
	if err := e.DB.Pool().QueryRow(t.Context(), `SELECT row_to_json(l)::text FROM label_quality l WHERE dataset_id = $1`, ds).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"sim", "nao", "basico", "exemplo", "C0001", "g0"} {
		if strings.Contains(stored, v) {
			t.Fatalf("stored label quality holds %q", v)
		}
	}

	// A PII label blocks the analysis.
	if r := e.Do(t, http.MethodPut, "/api/v1/datasets/"+ds+"/sensitivity/churn", e.member, map[string]any{"level": "pii"}); r.Status != 200 {
		t.Fatalf("sensitivity: %d %s", r.Status, r.Body)
	}
	r2 := e.Do(t, http.MethodPost, path+"/run", e.member, nil)
	var blocked labelQualityOut
	r2.JSON(t, &blocked)
	if r2.Status != 200 || blocked.PIIGate.Status != "blocked" || blocked.LastResult != nil {
		t.Fatalf("blocked: %d %+v", r2.Status, blocked)
	}

	// Tenancy, and the plan: without the extra it is unavailable and cannot be configured.
	other := newWF(t, "labels-other")
	if r := other.Do(t, http.MethodGet, path, other.admin, nil); r.Status != 404 {
		t.Fatalf("another workspace: %d", r.Status)
	}
	e.exec(t, `UPDATE workspaces SET plan = 'team' WHERE id = $1`, e.ws)
	if g := get(e.admin); g.Available {
		t.Fatal("available on the team plan")
	}
	put(e.member, map[string]any{"label_column": "churn"}, 402)
}
