package app_test

import (
	"fmt"
	"testing"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// A dbt test's result has no scan: GraphQL gives its rule's lastResult a null scanId
// (never an empty id), while a scan-evaluated rule keeps its scan.
func TestGraphQLDBTRuleResultHasNoScan(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, shopDDL)
	le.fillShop(t)
	le.scan(t)
	dbtRun(t, le, "run_results_v5_fail.json")
	out := env.GraphQL(t, le.tok, `{ rules(limit: 500) { items { ruleType lastResult { status scanId } } } }`, nil)
	if out["errors"] != nil {
		t.Fatalf("errors: %v", out["errors"])
	}
	items := out["data"].(map[string]any)["rules"].(map[string]any)["items"].([]any)
	dbtResults := 0
	for _, it := range items {
		r := it.(map[string]any)
		lr, _ := r["lastResult"].(map[string]any)
		if lr == nil {
			continue
		}
		if r["ruleType"] == "dbt_test" || lr["scanId"] == nil {
			dbtResults++
		}
		if id, ok := lr["scanId"].(string); ok && id == "" {
			t.Fatalf("an empty scanId: %v", r)
		}
	}
	if dbtResults == 0 {
		t.Fatalf("no dbt result with a null scanId among %s", fmt.Sprint(items))
	}
}
