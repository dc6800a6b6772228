package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/scan"
)

// shopDDL is the lineage example: orders → orders_enriched (a CTE, a join with
// customers, aliases, a CASE) → revenue_daily, plus views that read orders (or
// orders_enriched) without the amount column.
const shopDDL = `
CREATE TABLE customers (id int PRIMARY KEY, name text, country text, segment varchar(20));
CREATE TABLE orders (id int PRIMARY KEY, customer_id int, amount numeric(12,2), status text, created_at timestamptz);
CREATE VIEW orders_enriched AS
WITH paid AS (
  SELECT id, customer_id, amount, created_at FROM orders WHERE status = 'paid'
)
SELECT p.id AS order_id, p.created_at, c.name AS customer_name, p.amount,
       CASE WHEN p.amount >= 1000 THEN 'large' WHEN c.segment = 'vip' THEN 'vip' ELSE 'normal' END AS size_band
FROM paid p JOIN customers c ON c.id = p.customer_id;
CREATE VIEW revenue_daily AS
SELECT CAST(created_at AS date) AS day, sum(amount) AS revenue, count(*) AS orders,
       count(DISTINCT customer_name) AS customers,
       sum(CASE WHEN size_band = 'large' THEN 1 ELSE 0 END) AS large_orders
FROM orders_enriched GROUP BY CAST(created_at AS date);
CREATE VIEW order_status AS SELECT id, status FROM orders;
CREATE VIEW customer_orders AS SELECT customer_name, order_id FROM orders_enriched;
`

// lineageEnv is a running Vigia with the shop source scanned.
type lineageEnv struct {
	env    *apptest.Env
	ws     string
	admin  string
	tok    string
	connID string
	src    *sourceDB
	ids    map[string]string // table name → dataset id
}

func (le *lineageEnv) get(t *testing.T, path, cred string, into any) *apptest.Response {
	t.Helper()
	r := le.env.Do(t, http.MethodGet, path, cred, nil)
	if into != nil {
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		r.JSON(t, into)
	}
	return r
}

func (le *lineageEnv) scan(t *testing.T) {
	t.Helper()
	mustScanConnection(t, le.env, le.ws, le.tok, le.connID)
	var ds []map[string]any
	le.get(t, "/api/v1/datasets?connection_id="+le.connID, le.admin, &ds)
	le.ids = map[string]string{}
	for _, d := range ds {
		le.ids[d["table"].(string)] = d["id"].(string)
	}
}

// mustScanConnection triggers a scan of a connection through the API, works it to its
// end and fails the test unless it succeeded.
func mustScanConnection(t *testing.T, env *apptest.Env, ws, tok, connID string) scan.Scan {
	t.Helper()
	r := env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": connID})
	if r.Status != 202 {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	sc, err := env.App.WaitScan(app.AsAdmin(context.Background(), ws, "test"), out["id"].(string), nil)
	if err != nil || sc.Status != scan.StatusSucceeded {
		t.Fatalf("scan %v: %+v", err, sc)
	}
	return sc
}

func newLineageEnv(t *testing.T, env *apptest.Env, ddl string) *lineageEnv {
	t.Helper()
	le := &lineageEnv{env: env, ws: env.MustWorkspace(t, "lineage")}
	le.admin = env.MustSession(t, le.ws, vigia.RoleAdmin)
	le.tok = env.MustToken(t, le.ws)
	le.src = newSource(t, "postgres", "")
	le.src.exec(t, ddl)
	r := env.Do(t, http.MethodPost, "/api/v1/connections", le.admin, map[string]any{"name": "shop", "kind": "postgres", "dsn": le.src.dsn})
	if r.Status != 201 {
		t.Fatalf("connection: %d %s", r.Status, r.Body)
	}
	var c map[string]any
	r.JSON(t, &c)
	le.connID = c["id"].(string)
	return le
}

func (le *lineageEnv) fillShop(t *testing.T) {
	t.Helper()
	le.src.exec(t, `INSERT INTO customers SELECT i, 'cliente ' || i, 'PT', CASE WHEN i % 5 = 0 THEN 'vip' ELSE 'normal' END FROM generate_series(1, 40) i`)
	le.src.exec(t, `INSERT INTO orders SELECT i, 1 + i % 40, (i * 37 % 2000) + 0.5, 'paid', TIMESTAMPTZ '2026-11-01' + (i % 10) * INTERVAL '1 day'
		FROM generate_series(1, 300) i`)
}

type node struct {
	Ref        string   `json:"ref"`
	ID         *string  `json:"id"`
	Name       *string  `json:"name"`
	Restricted bool     `json:"restricted"`
	Hops       int      `json:"hops"`
	Impact     string   `json:"impact"`
	Columns    []string `json:"columns"`
}

type colPair struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Direct bool   `json:"direct"`
}

type edge struct {
	Source    string    `json:"source"`
	Target    string    `json:"target"`
	Kind      string    `json:"kind"`
	Origin    *string   `json:"origin"`
	ColumnMap []colPair `json:"column_map"`
}

type traverseOut struct {
	Nodes     []node `json:"nodes"`
	Edges     []edge `json:"edges"`
	Truncated bool   `json:"truncated"`
	Exposures []struct {
		Name string `json:"name"`
	} `json:"exposures"`
}

func hasEdge(es []edge, src, dst, kind string) *edge {
	for i, e := range es {
		if e.Source == src && e.Target == dst && e.Kind == kind {
			return &es[i]
		}
	}
	return nil
}

func TestLineageFromViewSQLImpactIncidentsAndSnapshots(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, shopDDL)
	le.fillShop(t)
	le.scan(t)
	orders, enriched, revenue, status, custOrders, customers :=
		le.ids["orders"], le.ids["orders_enriched"], le.ids["revenue_daily"], le.ids["order_status"], le.ids["customer_orders"], le.ids["customers"]
	if len(le.ids) != 6 {
		t.Fatalf("datasets: %v", le.ids)
	}

	t.Run("TraverseTwoHopsListsBothViewsWithParsedEdges", func(t *testing.T) {
		var tr traverseOut
		le.get(t, "/api/v1/datasets/"+orders+"/lineage/traverse?hops=2&direction=downstream", le.tok, &tr)
		refs := map[string]int{}
		for _, n := range tr.Nodes {
			refs[n.Ref] = n.Hops
		}
		// customer_orders reads orders_enriched (parsed) and names orders' key as order_id
		// (inferred): one hop.
		if refs[enriched] != 1 || refs[revenue] != 2 || refs[status] != 1 || refs[custOrders] != 1 || len(refs) != 5 {
			t.Fatalf("nodes: %+v", tr.Nodes)
		}
		e1 := hasEdge(tr.Edges, orders, enriched, "parsed")
		e2 := hasEdge(tr.Edges, enriched, revenue, "parsed")
		if e1 == nil || e2 == nil {
			t.Fatalf("edges: %+v", tr.Edges)
		}
		if !slices.Contains(e1.ColumnMap, colPair{From: "amount", To: "amount", Direct: true}) ||
			!slices.Contains(e1.ColumnMap, colPair{From: "amount", To: "size_band"}) {
			t.Fatalf("column map orders → orders_enriched: %+v", e1.ColumnMap)
		}
		if tr.Truncated {
			t.Fatal("truncated with nothing beyond two hops")
		}
	})

	t.Run("ImpactOfAmountListsExactlyTheDerivedColumns", func(t *testing.T) {
		var im struct {
			Datasets []node `json:"datasets"`
			Columns  []struct {
				DatasetName string `json:"dataset_name"`
				Column      string `json:"column"`
			} `json:"columns"`
			ReachTotal int     `json:"reach_total"`
			ImpactNote *string `json:"impact_note"`
		}
		le.get(t, "/api/v1/datasets/"+orders+"/lineage/impact?column=amount", le.tok, &im)
		var got []string
		for _, c := range im.Columns {
			got = append(got, c.DatasetName+"."+c.Column)
		}
		sort.Strings(got)
		want := []string{"public.orders_enriched.amount", "public.orders_enriched.size_band",
			"public.revenue_daily.large_orders", "public.revenue_daily.revenue"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("derived columns %v, want %v", got, want)
		}
		impacts := map[string]string{}
		for _, n := range im.Datasets {
			impacts[n.Ref] = n.Impact
		}
		if impacts[enriched] != "column" || impacts[revenue] != "column" || impacts[status] != "table" || impacts[custOrders] != "table" {
			t.Fatalf("impacts: %v", impacts)
		}
		if im.ReachTotal != 4 || im.ImpactNote != nil {
			t.Fatalf("reach_total %d note %v", im.ReachTotal, im.ImpactNote)
		}
		if r := le.get(t, "/api/v1/datasets/"+orders+"/lineage/impact?column=nope", le.tok, nil); r.Status != 422 ||
			strings.Contains(string(r.Body), "nope") {
			t.Fatalf("unknown column: %d %s", r.Status, r.Body)
		}
	})

	t.Run("DirectLineageAndSortByImpact", func(t *testing.T) {
		var l struct {
			Upstream []struct {
				Ref          string   `json:"ref"`
				EdgeKinds    []string `json:"edge_kinds"`
				InferredOnly bool     `json:"inferred_only"`
				Linking      *string  `json:"linking_column"`
			} `json:"upstream"`
			Downstream []struct {
				Ref string `json:"ref"`
			} `json:"downstream"`
			ReachTotal int `json:"reach_total"`
		}
		le.get(t, "/api/v1/datasets/"+orders+"/lineage", le.tok, &l)
		if len(l.Downstream) != 3 || l.ReachTotal != 4 {
			t.Fatalf("lineage: %+v", l)
		}
		if len(l.Upstream) != 1 || l.Upstream[0].Ref != customers || !l.Upstream[0].InferredOnly ||
			l.Upstream[0].Linking == nil || *l.Upstream[0].Linking != "customer_id" {
			t.Fatalf("inferred upstream: %+v", l.Upstream)
		}
		var ds []map[string]any
		le.get(t, "/api/v1/datasets?sort=impact&connection_id="+le.connID, le.tok, &ds)
		var names []string
		for _, d := range ds {
			names = append(names, d["table"].(string))
		}
		// customers reaches orders (inferred) and everything below it: 5; orders 4;
		// orders_enriched 2; the rest 0, by name.
		want := []string{"customers", "orders", "orders_enriched", "customer_orders", "order_status", "revenue_daily"}
		if !reflect.DeepEqual(names, want) {
			t.Fatalf("sort=impact: %v", names)
		}
	})

	t.Run("DBTManifestAndOpenLineageAddTheirEdges", func(t *testing.T) {
		manifest := map[string]any{
			"metadata": map[string]any{"project_name": "shop"},
			"sources": map[string]any{
				"source.shop.raw.customers": map[string]any{"resource_type": "source", "schema": "public", "name": "customers", "identifier": "customers"}},
			"nodes": map[string]any{
				"model.shop.order_status": map[string]any{"resource_type": "model", "schema": "public", "name": "order_status",
					"depends_on": map[string]any{"nodes": []string{"source.shop.raw.customers"}},
					"columns": map[string]any{"status": map[string]any{"meta": map[string]any{"lineage": []any{
						map[string]any{"node": "source.shop.raw.customers", "column": "segment"}}}}}},
				"model.shop.ghost": map[string]any{"resource_type": "model", "schema": "public", "name": "ghost_table",
					"depends_on": map[string]any{"nodes": []string{"source.shop.raw.customers"}}}},
			"exposures": map[string]any{
				"exposure.shop.painel": map[string]any{"name": "painel_receita", "label": "Painel de receita", "type": "dashboard",
					"url": "https://bi.example.pt/d/7", "owner": map[string]any{"name": "Finanças"},
					"depends_on": map[string]any{"nodes": []string{"model.shop.order_status"}}}},
		}
		body := map[string]any{"run_results": map[string]any{"metadata": map[string]any{"invocation_id": "inv-1"},
			"results": []any{map[string]any{"unique_id": "model.shop.order_status", "status": "success"}}}, "manifest": manifest}
		r := env.Do(t, http.MethodPost, "/api/v1/integrations/dbt/run-results", le.tok, body)
		if r.Status != 200 {
			t.Fatalf("dbt run results: %d %s", r.Status, r.Body)
		}
		var run struct {
			Lineage struct {
				Edges, Exposures, Unmatched int
			} `json:"lineage"`
		}
		r.JSON(t, &run)
		if run.Lineage.Edges != 1 || run.Lineage.Exposures != 1 || run.Lineage.Unmatched != 1 {
			t.Fatalf("dbt import: %s", r.Body)
		}
		// The pipeline reaches the server as db:5432 (a proxy): declared as an alias.
		r = env.Do(t, http.MethodPatch, "/api/v1/connections/"+le.connID, le.admin, map[string]any{"lineage_aliases": []string{"postgres://db:5432"}})
		if r.Status != 200 {
			t.Fatalf("aliases: %d %s", r.Status, r.Body)
		}
		var conn struct {
			OpenLineage struct {
				Database string `json:"database"`
			} `json:"openlineage"`
		}
		r.JSON(t, &conn)
		shopDB := conn.OpenLineage.Database
		event := map[string]any{"eventType": "COMPLETE", "eventTime": "2026-11-21T10:00:00Z",
			"run":    map[string]any{"runId": "d8b1c2f0-0000-4000-8000-000000000001"},
			"job":    map[string]any{"namespace": "etl", "name": "load_customer_orders"},
			"inputs": []any{map[string]any{"namespace": "postgres://db:5432", "name": shopDB + ".public.customers"}},
			"outputs": []any{
				map[string]any{"namespace": "postgres://db:5432", "name": shopDB + ".public.customer_orders", "facets": map[string]any{
					"columnLineage": map[string]any{"fields": map[string]any{"customer_name": map[string]any{
						"inputFields": []any{map[string]any{"namespace": "postgres://db:5432", "name": shopDB + ".public.customers", "field": "name"}}}}}}},
				map[string]any{"namespace": "s3://exports", "name": "customers.csv"}},
			"producer": "https://example.org/producer", "schemaURL": "https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/RunEvent"}
		r = env.Do(t, http.MethodPost, "/api/v1/lineage/openlineage", le.tok, event)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"destinations":1`) {
			t.Fatalf("openlineage: %d %s", r.Status, r.Body)
		}
		var tr traverseOut
		le.get(t, "/api/v1/datasets/"+customers+"/lineage/traverse?direction=downstream", le.tok, &tr)
		dbt := hasEdge(tr.Edges, customers, status, "dbt")
		ol := hasEdge(tr.Edges, customers, custOrders, "openlineage")
		parsed := hasEdge(tr.Edges, customers, enriched, "parsed")
		if dbt == nil || ol == nil || parsed == nil {
			t.Fatalf("edges from customers: %+v", tr.Edges)
		}
		if !reflect.DeepEqual(dbt.ColumnMap, []colPair{{From: "segment", To: "status"}}) ||
			!reflect.DeepEqual(ol.ColumnMap, []colPair{{From: "name", To: "customer_name"}}) {
			t.Fatalf("column maps: dbt %+v openlineage %+v", dbt.ColumnMap, ol.ColumnMap)
		}
		var im struct {
			Exposures []struct {
				Name string `json:"name"`
			} `json:"exposures"`
			Destinations []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"destinations"`
		}
		le.get(t, "/api/v1/datasets/"+customers+"/lineage/impact", le.tok, &im)
		if len(im.Destinations) != 1 || im.Destinations[0].Name != "s3://exports/customers.csv" ||
			len(im.Exposures) != 1 || im.Exposures[0].Name != "Painel de receita" {
			t.Fatalf("impact exposures %+v destinations %+v", im.Exposures, im.Destinations)
		}
		// A token may not declare: only the marked writes are open to it.
		if r := env.Do(t, http.MethodPost, "/api/v1/lineage/edges", le.tok, map[string]any{"source_id": orders, "target_id": customers}); r.Status != 403 ||
			!strings.Contains(string(r.Body), "token_read_only") {
			t.Fatalf("token declaring: %d %s", r.Status, r.Body)
		}
	})

	t.Run("GraphQLTraversalMatchesREST", func(t *testing.T) {
		var tr traverseOut
		le.get(t, "/api/v1/datasets/"+orders+"/lineage/traverse?hops=2", le.tok, &tr)
		out := env.GraphQL(t, le.tok, `query($id: ID!) { dataset(id: $id) { lineage(direction: both, hops: 2) {
			nodes { ref restricted hops } edges { source target kind columnMap { from to direct } } truncated } } }`, map[string]any{"id": orders})
		if out["errors"] != nil {
			t.Fatalf("graphql: %v", out["errors"])
		}
		g := out["data"].(map[string]any)["dataset"].(map[string]any)["lineage"].(map[string]any)
		var gotNodes, wantNodes, gotEdges, wantEdges []string
		for _, n := range g["nodes"].([]any) {
			m := n.(map[string]any)
			gotNodes = append(gotNodes, fmt.Sprint(m["ref"], m["hops"]))
		}
		for _, n := range tr.Nodes {
			wantNodes = append(wantNodes, fmt.Sprint(n.Ref, n.Hops))
		}
		for _, e := range g["edges"].([]any) {
			m := e.(map[string]any)
			gotEdges = append(gotEdges, fmt.Sprint(m["source"], m["target"], m["kind"], len(m["columnMap"].([]any))))
		}
		for _, e := range tr.Edges {
			wantEdges = append(wantEdges, fmt.Sprint(e.Source, e.Target, e.Kind, len(e.ColumnMap)))
		}
		if !reflect.DeepEqual(gotNodes, wantNodes) || !reflect.DeepEqual(gotEdges, wantEdges) || g["truncated"] != tr.Truncated {
			t.Fatalf("graphql %v %v\nrest %v %v", gotNodes, gotEdges, wantNodes, wantEdges)
		}
		// A list of datasets asks for all their traversals in one batch.
		out = env.GraphQL(t, le.tok, `{ datasets { items { name lineage(hops: 1) { nodes { ref } } impact(column: "amount") { reachTotal } } } }`, nil)
		// Datasets without an amount column answer their own error; the others their impact.
		items := out["data"].(map[string]any)["datasets"].(map[string]any)["items"].([]any)
		impacts := 0
		for _, it := range items {
			m := it.(map[string]any)
			if m["lineage"] == nil {
				t.Fatalf("lineage missing in the list: %v", out)
			}
			if im, ok := m["impact"].(map[string]any); ok && im != nil {
				impacts++
			}
		}
		if len(items) != 6 || out["errors"] == nil || impacts < 1 {
			t.Fatalf("graphql list: %d items, %d impacts, errors %v", len(items), impacts, out["errors"])
		}
		out = env.GraphQL(t, le.tok, `query($id: ID!) { dataset(id: $id) { lineage(hops: 4) { truncated } } }`, map[string]any{"id": orders})
		if out["errors"] == nil {
			t.Fatal("hops 4 accepted")
		}
	})

	var incidentID, issueID string
	t.Run("NullSpikeOpensAnIncidentWithColumnAndTableImpact", func(t *testing.T) {
		for range 4 { // five scans of history in all
			le.scan(t)
		}
		le.src.exec(t, `UPDATE orders SET amount = NULL WHERE id % 2 = 0`)
		le.scan(t)
		var incs []map[string]any
		le.get(t, "/api/v1/incidents?status=open", le.tok, &incs)
		var inc map[string]any
		for _, in := range incs {
			if in["root_dataset_id"] == orders {
				inc = in
			}
		}
		if inc == nil {
			t.Fatalf("no incident rooted at orders: %v", incs)
		}
		incidentID = inc["id"].(string)
		issueID = inc["issue_ids"].([]any)[0].(string)
		if inc["impact_scope"] != "column" || !slices.Contains(toStrings(inc["impact_columns"]), "amount") {
			t.Fatalf("scope %v columns %v", inc["impact_scope"], inc["impact_columns"])
		}
		tree := map[string]map[string]any{}
		for _, n := range inc["impact_tree"].([]any) {
			m := n.(map[string]any)
			tree[m["ref"].(string)] = m
		}
		if tree[enriched]["impact"] != "column" || !reflect.DeepEqual(toStrings(tree[enriched]["via_columns"]), []string{"amount", "size_band"}) {
			t.Fatalf("orders_enriched: %v", tree[enriched])
		}
		if tree[revenue]["impact"] != "column" || !reflect.DeepEqual(toStrings(tree[revenue]["via_columns"]), []string{"large_orders", "revenue"}) {
			t.Fatalf("revenue_daily: %v", tree[revenue])
		}
		if tree[status]["impact"] != "table" || tree[custOrders]["impact"] != "table" || len(toStrings(tree[status]["via_columns"])) != 0 {
			t.Fatalf("table-level nodes: %v %v", tree[status], tree[custOrders])
		}
		if inc["downstream_count"].(float64) != 4 || inc["downstream_column_count"].(float64) != 4 {
			t.Fatalf("counts: %v %v", inc["downstream_count"], inc["downstream_column_count"])
		}
		var one map[string]any
		le.get(t, "/api/v1/incidents/"+incidentID, le.tok, &one)
		if one["id"] != incidentID {
			t.Fatalf("incident: %v", one)
		}
		var blast map[string]any
		le.get(t, "/api/v1/issues/"+issueID+"/impact", le.tok, &blast)
		if blast["downstream_count"].(float64) < 1 {
			t.Fatalf("issue impact: %v", blast)
		}
		gq := env.GraphQL(t, le.tok, `{ incidents(status: "open") { total items { id rootDatasetId impactScope impactTree { ref impact viaColumns } } } }`, nil)
		if gq["errors"] != nil || !strings.Contains(fmt.Sprint(gq["data"]), incidentID) {
			t.Fatalf("graphql incidents: %v", gq)
		}
	})

	t.Run("RestrictedNeighboursAreMaskedAndStillCounted", func(t *testing.T) {
		ctx := context.Background()
		domain := vigia.NewID()
		if _, err := env.DB.Pool().Exec(ctx, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Vendas', true)`, domain, le.ws); err != nil {
			t.Fatal(err)
		}
		if _, err := env.DB.Pool().Exec(ctx, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, enriched); err != nil {
			t.Fatal(err)
		}
		member := env.MustSession(t, le.ws, vigia.RoleMember)
		var tr traverseOut
		r := le.get(t, "/api/v1/datasets/"+orders+"/lineage/traverse?hops=2&direction=downstream", member, &tr)
		if strings.Contains(string(r.Body), enriched) || strings.Contains(string(r.Body), "orders_enriched") {
			t.Fatalf("restricted dataset named: %s", r.Body)
		}
		var restricted *node
		for i, n := range tr.Nodes {
			if n.Restricted {
				restricted = &tr.Nodes[i]
			}
		}
		if restricted == nil || restricted.ID != nil || restricted.Name != nil {
			t.Fatalf("nodes: %+v", tr.Nodes)
		}
		e := hasEdge(tr.Edges, orders, restricted.Ref, "parsed")
		if e == nil || e.ColumnMap != nil || e.Origin != nil {
			t.Fatalf("edge to the restricted dataset: %+v", tr.Edges)
		}
		var l struct {
			ReachTotal int `json:"reach_total"`
			Downstream []struct {
				Restricted bool      `json:"restricted"`
				ColumnMap  []colPair `json:"column_map"`
			} `json:"downstream"`
		}
		le.get(t, "/api/v1/datasets/"+orders+"/lineage", member, &l)
		if l.ReachTotal != 4 {
			t.Fatalf("reach_total for the member: %d", l.ReachTotal)
		}
		var inc map[string]any
		r = le.get(t, "/api/v1/incidents/"+incidentID, member, &inc)
		if strings.Contains(string(r.Body), enriched) || strings.Contains(string(r.Body), "orders_enriched") {
			t.Fatalf("incident names the restricted dataset: %s", r.Body)
		}
		masked := 0
		for _, n := range inc["impact_tree"].([]any) {
			m := n.(map[string]any)
			if m["restricted"] == true {
				masked++
				if len(toStrings(m["via_columns"])) != 0 {
					t.Fatalf("via_columns on a restricted node: %v", m)
				}
			}
		}
		if masked != 1 {
			t.Fatalf("masked nodes: %d", masked)
		}
		if r := le.get(t, "/api/v1/datasets/"+enriched+"/lineage", member, nil); r.Status != 404 {
			t.Fatalf("restricted dataset lineage: %d", r.Status)
		}
		if r := le.get(t, "/api/v1/datasets/"+orders+"/lineage/path?target_id="+enriched, member, nil); r.Status != 404 {
			t.Fatalf("path to a restricted target: %d", r.Status)
		}
		if _, err := env.DB.Pool().Exec(ctx, `DELETE FROM domains WHERE id = $1`, domain); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OtherWorkspaceGets404ForEveryLineageOperation", func(t *testing.T) {
		otherWS := env.MustWorkspace(t, "other")
		other := env.MustToken(t, otherWS)
		unknown := vigia.NewID()
		paths := func(ds, target, issue, incident string) []string {
			return []string{"/api/v1/datasets/" + ds + "/lineage", "/api/v1/datasets/" + ds + "/lineage/traverse?hops=2",
				"/api/v1/datasets/" + ds + "/lineage/impact?column=amount", "/api/v1/datasets/" + ds + "/lineage/path?target_id=" + target,
				"/api/v1/issues/" + issue + "/impact", "/api/v1/incidents/" + incident, "/api/v1/knowledge/graph?focus=dataset:" + ds}
		}
		theirs := paths(orders, revenue, issueID, incidentID)
		unknowns := paths(unknown, unknown, unknown, unknown)
		for i, p := range theirs {
			r := le.get(t, p, other, nil)
			u := le.get(t, unknowns[i], other, nil)
			if r.Status != 404 || u.Status != 404 || stripRequestID(r.Body) != stripRequestID(u.Body) {
				t.Fatalf("%s: %d %s vs unknown %d %s", p, r.Status, r.Body, u.Status, u.Body)
			}
		}
		// Own dataset, other workspace's target: 404 as well.
		mine := env.MustDataset(t, otherWS, env.MustConnection(t, otherWS, "c"), "public", "x")
		if r := le.get(t, "/api/v1/datasets/"+mine+"/lineage/path?target_id="+orders, other, nil); r.Status != 404 {
			t.Fatalf("path to another workspace: %d", r.Status)
		}
		var incs []any
		if r := le.get(t, "/api/v1/incidents", other, &incs); len(incs) != 0 || r.Header.Get("X-Total-Count") != "0" {
			t.Fatalf("other workspace sees incidents: %s", r.Body)
		}
	})

	t.Run("KnowledgeGraphFocusAndBadParameters", func(t *testing.T) {
		var g struct {
			Nodes []struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			} `json:"nodes"`
			Stats struct {
				ByEdgeKind map[string]int `json:"by_edge_kind"`
			} `json:"stats"`
		}
		le.get(t, "/api/v1/knowledge/graph?focus=dataset:"+orders+"&hops=1", le.tok, &g)
		kinds := map[string]int{}
		for _, n := range g.Nodes {
			kinds[n.Kind]++
		}
		if kinds["dataset"] < 3 || kinds["connection"] != 1 || kinds["issue"] < 1 || g.Stats.ByEdgeKind["feeds"] < 2 ||
			g.Stats.ByEdgeKind["member_of"] < 1 || g.Stats.ByEdgeKind["measures"] < 1 {
			t.Fatalf("focus graph kinds %v edges %v", kinds, g.Stats.ByEdgeKind)
		}
		le.get(t, "/api/v1/knowledge/graph?kinds=dataset,exposure,term", le.tok, &g)
		for _, n := range g.Nodes {
			if n.Kind != "dataset" && n.Kind != "exposure" {
				t.Fatalf("kinds filter let %s through", n.Kind)
			}
		}
		for _, bad := range []string{"hops=0", "hops=4", "kinds=dataset,planet", "focus=table:" + orders, "focus=" + orders} {
			if r := le.get(t, "/api/v1/knowledge/graph?"+bad, le.tok, nil); r.Status != 422 {
				t.Fatalf("%s: %d", bad, r.Status)
			}
		}
		for _, bad := range []string{"/lineage/traverse?hops=4", "/lineage/traverse?direction=sideways", "/lineage/impact?column=" + strings.Repeat("c", 201),
			"/lineage/path", "/lineage/path?target_id=" + strings.Repeat("a", 65)} {
			if r := le.get(t, "/api/v1/datasets/"+orders+bad, le.tok, nil); r.Status != 422 {
				t.Fatalf("%s: %d %s", bad, r.Status, r.Body)
			}
		}
	})

	t.Run("SnapshotChangeAViewSnapshotDiff", func(t *testing.T) {
		r := env.Do(t, http.MethodPost, "/api/v1/knowledge/graph/snapshot", le.admin, nil)
		if r.Status != 201 && r.Status != 200 {
			t.Fatalf("snapshot: %d %s", r.Status, r.Body)
		}
		var first map[string]any
		r.JSON(t, &first)
		if r := env.Do(t, http.MethodPost, "/api/v1/knowledge/graph/snapshot", le.admin, nil); r.Status != 200 || !strings.Contains(string(r.Body), first["id"].(string)) {
			t.Fatalf("unchanged snapshot: %d %s", r.Status, r.Body)
		}
		if r := env.Do(t, http.MethodPost, "/api/v1/knowledge/graph/snapshot", le.tok, nil); r.Status != 403 {
			t.Fatalf("token snapshot: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPost, "/api/v1/knowledge/graph/snapshot", env.MustSession(t, le.ws, vigia.RoleMember), nil); r.Status != 403 {
			t.Fatalf("member snapshot: %d", r.Status)
		}
		le.src.exec(t, `DROP VIEW revenue_daily; CREATE VIEW revenue_daily AS
			SELECT CAST(created_at AS date) AS day, sum(amount) AS revenue FROM orders GROUP BY CAST(created_at AS date)`)
		le.scan(t)
		r = env.Do(t, http.MethodPost, "/api/v1/knowledge/graph/snapshot", le.admin, nil)
		if r.Status != 200 { // the scan took it already
			t.Fatalf("snapshot after the scan: %d %s", r.Status, r.Body)
		}
		var d struct {
			AddedEdges   []map[string]any `json:"added_edges"`
			RemovedEdges []map[string]any `json:"removed_edges"`
			AddedNodes   []any            `json:"added_nodes"`
			RemovedNodes []any            `json:"removed_nodes"`
			ByKind       map[string]struct {
				Added, Removed int
			} `json:"by_kind"`
		}
		le.get(t, "/api/v1/knowledge/graph/diff?from="+first["id"].(string), le.tok, &d)
		edgeStr := func(es []map[string]any) []string {
			var out []string
			for _, e := range es {
				out = append(out, fmt.Sprint(e["source"], ">", e["target"], ":", e["kind"], ":", e["lineage_kind"]))
			}
			return out
		}
		wantAdded := []string{"dataset:" + orders + ">dataset:" + revenue + ":feeds:parsed"}
		wantRemoved := []string{"dataset:" + enriched + ">dataset:" + revenue + ":feeds:parsed"}
		if !reflect.DeepEqual(edgeStr(d.AddedEdges), wantAdded) || !reflect.DeepEqual(edgeStr(d.RemovedEdges), wantRemoved) ||
			len(d.AddedNodes)+len(d.RemovedNodes) != 0 || d.ByKind["feeds"].Added != 1 || d.ByKind["feeds"].Removed != 1 {
			t.Fatalf("diff: %+v", d)
		}
		var hist []map[string]any
		hr := le.get(t, "/api/v1/knowledge/graph/history", le.tok, &hist)
		if len(hist) < 2 || hr.Header.Get("X-Total-Count") == "" || hist[0]["trigger"] != "scan" {
			t.Fatalf("history: %s", hr.Body)
		}
		for _, bad := range []string{"from=yesterday", "from=2026-13-45", "from=latest&to=nope"} {
			if r := le.get(t, "/api/v1/knowledge/graph/diff?"+bad, le.tok, nil); r.Status != 422 {
				t.Fatalf("%s: %d", bad, r.Status)
			}
		}
		if r := le.get(t, "/api/v1/knowledge/graph/diff?from="+vigia.NewID(), le.tok, nil); r.Status != 404 {
			t.Fatalf("unknown snapshot: %d", r.Status)
		}
		if r := le.get(t, "/api/v1/knowledge/graph/diff?from=2000-01-01", le.tok, nil); r.Status != 404 {
			t.Fatalf("date before any snapshot: %d", r.Status)
		}
		le.get(t, "/api/v1/knowledge/graph/diff?from="+url.QueryEscape("2100-01-01T00:00:00Z"), le.tok, &d)
		if len(d.AddedEdges)+len(d.RemovedEdges) != 0 {
			t.Fatalf("latest against latest: %+v", d)
		}

		// A dataset in a restricted-access domain is not counted for callers who cannot
		// see it, in the history as in a diff's snapshots: one node fewer, and fewer edges.
		if r := env.Do(t, http.MethodPost, "/api/v1/domains", le.admin, map[string]any{"name": "Finanças", "restricted": true,
			"dataset_ids": []string{revenue}}); r.Status != http.StatusCreated {
			t.Fatalf("restricted domain: %d %s", r.Status, r.Body)
		}
		var asAdmin, asToken []map[string]any
		le.get(t, "/api/v1/knowledge/graph/history", le.admin, &asAdmin)
		le.get(t, "/api/v1/knowledge/graph/history", le.tok, &asToken)
		if len(asAdmin) != len(asToken) || len(asAdmin) == 0 {
			t.Fatalf("history lengths %d and %d", len(asAdmin), len(asToken))
		}
		for i := range asAdmin {
			an, ae := asAdmin[i]["nodes_count"].(float64), asAdmin[i]["edges_count"].(float64)
			tn, te := asToken[i]["nodes_count"].(float64), asToken[i]["edges_count"].(float64)
			if tn != an-1 || te >= ae {
				t.Fatalf("snapshot %v: admin %v nodes %v edges, token %v nodes %v edges", asAdmin[i]["id"], an, ae, tn, te)
			}
		}
		var diff struct {
			From map[string]any `json:"from"`
		}
		le.get(t, "/api/v1/knowledge/graph/diff?from="+asToken[0]["id"].(string), le.tok, &diff)
		if diff.From["nodes_count"] != asToken[0]["nodes_count"] || diff.From["edges_count"] != asToken[0]["edges_count"] {
			t.Fatalf("diff snapshot counts %v, history %v", diff.From, asToken[0])
		}
	})
}

func toStrings(v any) []string {
	out := []string{}
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func stripRequestID(b []byte) string {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return string(b)
	}
	delete(m, "request_id")
	out, _ := json.Marshal(m)
	return string(out)
}

// The knowledge graph shows a dataset's active rules as rule nodes that measure it.
func TestKnowledgeGraphHasRuleNodes(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "kg-rules")
	tok := env.MustToken(t, ws)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "c"), "public", "clientes")
	if _, err := env.DB.Pool().Exec(context.Background(), `INSERT INTO rules (id, workspace_id, dataset_id, rule_type, name, severity, params, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, 'not_null', 'email obrigatório', 'critical', '{"column":"telefone"}', 'test', now(), now())`, vigia.NewID(), ws, ds); err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	r := env.Do(t, http.MethodGet, "/api/v1/knowledge/graph?focus=dataset:"+ds+"&kinds=dataset,rule", tok, nil)
	r.JSON(t, &g)
	found := false
	for _, n := range g["nodes"].([]any) {
		m := n.(map[string]any)
		found = found || m["kind"] == "rule" && m["name"] == "email obrigatório"
	}
	if r.Status != 200 || !found {
		t.Fatalf("no rule node: %d %s", r.Status, r.Body)
	}
}
