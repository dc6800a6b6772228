package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/graph/explorer"
	"github.com/vigia-data/vigia/graph/explorer/explorertest"
	"github.com/vigia-data/vigia/internal/browsertest"
)

// exampleVariables fills an explorer example's variables with the fixture's ids: the
// first dataset (which has a dataset downstream) and its first column.
func exampleVariables(t *testing.T, f *parityFixture, ex explorer.Example) string {
	t.Helper()
	var vars map[string]any
	if err := json.Unmarshal([]byte(ex.Variables), &vars); err != nil {
		t.Fatalf("%s: variables are no JSON object: %v", ex.ID, err)
	}
	if _, ok := vars["dataset"]; ok {
		vars["dataset"] = f.ids["dataset"][0]
	}
	if _, ok := vars["column"]; ok {
		out := f.env.GraphQL(t, f.tok, `query($id: ID!){ dataset(id: $id){ columns { name } } }`, map[string]any{"id": f.ids["dataset"][0]})
		cols, _ := dig(out["data"], "dataset.columns").([]any)
		if len(cols) == 0 {
			t.Fatalf("the fixture's dataset has no columns: %v", out)
		}
		vars["column"] = cols[0].(map[string]any)["name"]
	}
	b, _ := json.Marshal(vars)
	return string(b)
}

// wantInExample is what each example's answer must hold on the fixture (the demo pack
// scanned, two datasets with open issues joined by lineage, hence a critical incident;
// the first dataset's latest verdict a fail).
var wantInExample = map[string][]string{
	"failing-datasets":         {`"verdict": "fail"`, `"ownerName"`},
	"column-impact":            {`"reachTotal"`, `"hops": 1`},
	"incident-consumers":       {`"severity": "critical"`, `"root"`, `"downstream"`},
	"upstream-critical-issues": {`"nullCount"`, `"upstream"`, `nulos em id`},
}

// Must-show 4, at the API: every example of the explorer's menu runs against the served
// schema without errors and answers the fixture's data.
func TestExplorerExamplesRunAgainstTheSchema(t *testing.T) {
	f := newParityFixture(t)
	failLatestVerdict(t, f, f.ids["dataset"][0])
	if len(explorer.Examples) < 3 {
		t.Fatalf("%d examples", len(explorer.Examples))
	}
	for _, ex := range explorer.Examples {
		t.Run(ex.ID, func(t *testing.T) {
			if ex.TitlePT == "" || ex.TitleEN == "" {
				t.Fatal("an example needs a Portuguese and an English title")
			}
			var vars map[string]any
			_ = json.Unmarshal([]byte(exampleVariables(t, f, ex)), &vars)
			out := f.env.GraphQL(t, f.tok, ex.Query, vars)
			if out["errors"] != nil || out["data"] == nil {
				t.Fatalf("errors: %v", out["errors"])
			}
			b, _ := json.MarshalIndent(out["data"], "", " ")
			want, ok := wantInExample[ex.ID]
			if !ok {
				t.Fatalf("no expectation for example %s", ex.ID)
			}
			for _, w := range want {
				if !strings.Contains(string(b), w) {
					t.Fatalf("answer lacks %s: %s", w, b)
				}
			}
		})
	}
}

// Must-show 4, in the browser: each example, chosen from the explorer's Examples menu
// (its variables filled in the variables editor), runs without errors.
func TestExplorerExamplesRunInChromium(t *testing.T) {
	b := browsertest.New(t)
	f := newParityFixture(t)
	failLatestVerdict(t, f, f.ids["dataset"][0])
	for _, ex := range explorer.Examples {
		vars := ""
		if ex.Variables != "{}" {
			vars = exampleVariables(t, f, ex)
		}
		out, err := explorertest.RunExample(b.Context(), f.env.Server.URL+"/graphql#token="+f.tok, ex.ID, vars)
		if err != nil {
			t.Fatalf("%s: %v", ex.ID, err)
		}
		var res struct {
			Data   map[string]any `json:"data"`
			Errors []any          `json:"errors"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: result pane is not a GraphQL answer: %s", ex.ID, out)
		}
		if len(res.Errors) > 0 || len(res.Data) == 0 {
			t.Fatalf("%s failed in the explorer: %s", ex.ID, out)
		}
		for _, w := range wantInExample[ex.ID] {
			if !strings.Contains(out, w) {
				t.Fatalf("%s: result pane lacks %s: %s", ex.ID, w, out)
			}
		}
	}
	if p := b.Problems(); len(p) > 0 {
		t.Fatalf("browser problems: %v", p)
	}
}
