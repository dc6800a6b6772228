package app_test

import (
	"net/http"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

type ideResolveOut struct {
	DatasetID      string   `json:"dataset_id"`
	Name           string   `json:"name"`
	ConnectionName string   `json:"connection_name"`
	Verdict        string   `json:"verdict"`
	Score          *float64 `json:"score"`
	Decision       string   `json:"decision"`
	PIIColumns     []string `json:"pii_columns"`
	OtherMatches   []struct {
		DatasetID string `json:"dataset_id"`
	} `json:"other_matches"`
}

// Must-show 3 of issue 19: "Sales"."Orders" and sales.orders resolve to the same
// dataset, with a connection hint among same-named ones; columns carry metadata, never
// values; the p99 of 1000 resolve calls is logged.
func TestIDEResolveAndColumns(t *testing.T) {
	env := apptest.MustStart(t, app.Config{RateLimitToken: 100000})
	ws := env.MustWorkspace(t, "ide")
	token := env.MustToken(t, ws)
	orders := env.MustDataset(t, ws, env.MustConnection(t, ws, "warehouse"), "Sales", "Orders")
	replica := env.MustDataset(t, ws, env.MustConnection(t, ws, "replica"), "Sales", "Orders")
	other := env.MustWorkspace(t, "ide-other")
	foreign := env.MustDataset(t, other, env.MustConnection(t, other, "solo"), "sales", "customers")

	resolve := func(name string, extra ...string) (*apptest.Response, ideResolveOut) {
		t.Helper()
		q := url.Values{"name": {name}}
		if len(extra) > 0 {
			q.Set("connection", extra[0])
		}
		res := env.Do(t, http.MethodGet, "/api/v1/ide/resolve?"+q.Encode(), token, nil)
		var out ideResolveOut
		if res.Status == http.StatusOK {
			res.JSON(t, &out)
		}
		return res, out
	}
	for _, name := range []string{`"Sales"."Orders"`, `sales.orders`, `shop.sales.ORDERS`, "`Sales`.`Orders`", `orders`} {
		res, out := resolve(name, "warehouse")
		if res.Status != http.StatusOK || out.DatasetID != orders || out.Name != "Sales.Orders" || out.ConnectionName != "warehouse" ||
			len(out.OtherMatches) != 1 || out.OtherMatches[0].DatasetID != replica || out.Score == nil || out.Decision == "" ||
			len(out.PIIColumns) != 1 || out.PIIColumns[0] != "telefone" {
			t.Fatalf("%s: %d %s", name, res.Status, res.Body)
		}
	}
	if res, out := resolve(`sales.orders`, "replica"); res.Status != http.StatusOK || out.DatasetID != replica {
		t.Fatalf("hint replica: %d %s", res.Status, res.Body)
	}
	// Quoted identifiers match exactly; another workspace's datasets are not found.
	for _, name := range []string{`"sales"."orders"`, `sales.customers`, `nope`} {
		if res, _ := resolve(name); res.Status != http.StatusNotFound {
			t.Fatalf("%s: %d %s", name, res.Status, res.Body)
		}
	}
	for _, q := range []string{"", "?name=", "?name=a.b.c.d", "?name=" + url.QueryEscape("sales.orders;drop")} {
		if res := env.Do(t, http.MethodGet, "/api/v1/ide/resolve"+q, token, nil); res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("resolve%s: %d %s", q, res.Status, res.Body)
		}
	}

	// Columns: metadata only.
	res := env.Do(t, http.MethodGet, "/api/v1/ide/datasets/"+orders+"/columns", token, nil)
	var cols []map[string]any
	res.JSON(t, &cols)
	if res.Status != http.StatusOK || len(cols) != 2 || cols[1]["name"] != "telefone" || cols[1]["semantic_type"] != "phone_pt" ||
		cols[1]["sensitivity"] != "pii" || cols[1]["null_count"] != 3.0 || cols[0]["sensitivity"] != nil {
		t.Fatalf("columns: %d %s", res.Status, res.Body)
	}
	for _, c := range cols {
		for _, k := range []string{"min", "max", "sample", "values", "masks"} {
			if _, ok := c[k]; ok {
				t.Fatalf("a column carries %s: %v", k, c)
			}
		}
	}
	if res := env.Do(t, http.MethodGet, "/api/v1/ide/datasets/"+foreign+"/columns", token, nil); res.Status != http.StatusNotFound {
		t.Fatalf("foreign columns: %d", res.Status)
	}
	if res := env.Do(t, http.MethodGet, "/api/v1/ide/datasets/"+vigia.NewID()+"/columns", env.MustToken(t, other), nil); res.Status != http.StatusNotFound {
		t.Fatalf("unknown columns: %d", res.Status)
	}

	// 1000 resolve calls, alternating spellings: the p99 is reported, not asserted.
	durs := make([]time.Duration, 0, 1000)
	for i := 0; i < 1000; i++ {
		name := `sales.orders`
		if i%2 == 1 {
			name = `"Sales"."Orders"`
		}
		start := time.Now()
		res := env.Do(t, http.MethodGet, "/api/v1/ide/resolve?name="+url.QueryEscape(name), token, nil)
		durs = append(durs, time.Since(start))
		if res.Status != http.StatusOK {
			t.Fatalf("call %d: %d", i, res.Status)
		}
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	t.Logf("ide/resolve over 1000 calls: p50 %v, p99 %v, max %v", durs[500], durs[989], durs[999])
}
