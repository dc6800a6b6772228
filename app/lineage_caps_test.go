package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/ingest"
	"github.com/vigia-data/vigia/jobs"
	"github.com/vigia-data/vigia/lineage"
)

// chainDDL builds c0 (a table) → c1 → … → c50 (views) and hub (a table) read by 45 views.
func chainDDL() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE c0 (id int PRIMARY KEY, val numeric);\nINSERT INTO c0 SELECT i, i FROM generate_series(1, 20) i;\n")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "CREATE VIEW c%d AS SELECT id, val FROM c%d;\n", i, i-1)
	}
	b.WriteString("CREATE TABLE hub (id int PRIMARY KEY, val numeric);\n")
	for i := 1; i <= 45; i++ {
		fmt.Fprintf(&b, "CREATE VIEW h%02d AS SELECT id, val * %d AS v FROM hub;\n", i, i)
	}
	return b.String()
}

func TestLineageCapsAndPaths(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, chainDDL())
	le.scan(t)
	c := func(i int) string { return le.ids[fmt.Sprintf("c%d", i)] }

	t.Run("ChainTraversalStopsAtTheHopCapAndSaysTruncated", func(t *testing.T) {
		var tr traverseOut
		le.get(t, "/api/v1/datasets/"+c(0)+"/lineage/traverse?hops=3&direction=downstream", le.tok, &tr)
		if len(tr.Nodes) != 4 || !tr.Truncated || tr.Nodes[3].Ref != c(3) {
			t.Fatalf("traverse: %+v truncated %v", tr.Nodes, tr.Truncated)
		}
		le.get(t, "/api/v1/datasets/"+c(47)+"/lineage/traverse?hops=3&direction=downstream", le.tok, &tr)
		if len(tr.Nodes) != 4 || tr.Truncated {
			t.Fatalf("end of the chain: %d nodes truncated %v", len(tr.Nodes), tr.Truncated)
		}
		le.get(t, "/api/v1/datasets/"+c(25)+"/lineage/traverse?hops=3", le.tok, &tr)
		if len(tr.Nodes) != 7 || len(tr.Edges) != 6 || !tr.Truncated {
			t.Fatalf("both ways: %d nodes %d edges", len(tr.Nodes), len(tr.Edges))
		}
	})

	t.Run("FanOutStopsAtFortyDatasets", func(t *testing.T) {
		var tr traverseOut
		le.get(t, "/api/v1/datasets/"+le.ids["hub"]+"/lineage/traverse?hops=1", le.tok, &tr)
		if len(tr.Nodes) != 40 || len(tr.Edges) != 39 || !tr.Truncated {
			t.Fatalf("fan-out: %d nodes %d edges truncated %v", len(tr.Nodes), len(tr.Edges), tr.Truncated)
		}
		var l struct {
			ReachTotal int `json:"reach_total"`
		}
		le.get(t, "/api/v1/datasets/"+le.ids["hub"]+"/lineage", le.tok, &l)
		if l.ReachTotal != 45 {
			t.Fatalf("reach_total %d", l.ReachTotal)
		}
	})

	type pathOut struct {
		Found     bool    `json:"found"`
		Direction *string `json:"direction"`
		Hops      *int    `json:"hops"`
		Nodes     []node  `json:"nodes"`
		Edges     []edge  `json:"edges"`
	}
	t.Run("PathWithinSixHopsIsExactAndSevenIsNotFound", func(t *testing.T) {
		var p pathOut
		le.get(t, "/api/v1/datasets/"+c(0)+"/lineage/path?target_id="+c(7), le.tok, &p)
		if p.Found || len(p.Nodes) != 0 || p.Hops != nil {
			t.Fatalf("7 hops found: %+v", p)
		}
		le.get(t, "/api/v1/datasets/"+c(0)+"/lineage/path?target_id="+c(6), le.tok, &p)
		if !p.Found || *p.Direction != "downstream" || *p.Hops != 6 || len(p.Nodes) != 7 || len(p.Edges) != 6 {
			t.Fatalf("6 hops: %+v", p)
		}
		for i, n := range p.Nodes {
			if n.Ref != c(i) || n.Hops != i {
				t.Fatalf("node %d: %+v", i, n)
			}
		}
		for i, e := range p.Edges {
			if e.Source != c(i) || e.Target != c(i+1) || e.Kind != "parsed" {
				t.Fatalf("edge %d: %+v", i, e)
			}
		}
		le.get(t, "/api/v1/datasets/"+c(10)+"/lineage/path?target_id="+c(5), le.tok, &p)
		if !p.Found || *p.Direction != "upstream" || *p.Hops != 5 || p.Nodes[5].Ref != c(5) {
			t.Fatalf("reverse path: %+v", p)
		}
		le.get(t, "/api/v1/datasets/"+c(3)+"/lineage/path?target_id="+le.ids["hub"], le.tok, &p)
		if p.Found {
			t.Fatal("path between unconnected datasets")
		}
		if r := le.get(t, "/api/v1/datasets/"+c(3)+"/lineage/path?target_id="+vigia.NewID(), le.tok, nil); r.Status != 404 {
			t.Fatalf("unknown target: %d", r.Status)
		}
	})

	t.Run("GraphQLPathAndImpact", func(t *testing.T) {
		out := env.GraphQL(t, le.tok, `query($a: ID!, $b: ID!) { dataset(id: $a) { path(to: $b) { found hops nodes { ref } }
			impact(column: "val") { datasets { ref impact columns } reachTotal truncated } } }`, map[string]any{"a": c(0), "b": c(6)})
		if out["errors"] != nil {
			t.Fatalf("graphql: %v", out["errors"])
		}
		d := out["data"].(map[string]any)["dataset"].(map[string]any)
		p := d["path"].(map[string]any)
		im := d["impact"].(map[string]any)
		if p["found"] != true || p["hops"].(float64) != 6 || len(im["datasets"].([]any)) != 3 || im["reachTotal"].(float64) != 50 || im["truncated"] != true {
			t.Fatalf("path %v impact %v", p, im)
		}
	})

	t.Run("DeclaredEdgesAndExposuresNeedAnAdminSession", func(t *testing.T) {
		member := env.MustSession(t, le.ws, vigia.RoleMember)
		body := map[string]any{"source_id": c(50), "target_id": le.ids["hub"], "column_map": []any{map[string]any{"from": "val", "to": "val"}}}
		if r := env.Do(t, http.MethodPost, "/api/v1/lineage/edges", member, body); r.Status != 403 {
			t.Fatalf("member declaring: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPost, "/api/v1/lineage/edges", le.admin, body); r.Status != 204 {
			t.Fatalf("admin declaring: %d %s", r.Status, r.Body)
		}
		var p struct {
			Found bool `json:"found"`
		}
		le.get(t, "/api/v1/datasets/"+c(48)+"/lineage/path?target_id="+le.ids["hub"], le.tok, &p)
		if !p.Found {
			t.Fatal("declared edge not followed")
		}
		r := env.Do(t, http.MethodPost, "/api/v1/lineage/exposures", le.admin, map[string]any{"name": "Modelo de churn", "type": "ml_model",
			"dataset_ids": []string{le.ids["h01"], le.ids["h02"]}})
		if r.Status != 201 {
			t.Fatalf("exposure: %d %s", r.Status, r.Body)
		}
		if r := env.Do(t, http.MethodPost, "/api/v1/lineage/exposures", le.admin, map[string]any{"name": "x", "type": "spaceship", "dataset_ids": []string{}}); r.Status != 422 {
			t.Fatalf("bad type: %d", r.Status)
		}
		if r := env.Do(t, http.MethodPost, "/api/v1/lineage/exposures", le.admin, map[string]any{"name": "x", "type": "dashboard", "dataset_ids": []string{vigia.NewID()}}); r.Status != 404 {
			t.Fatalf("unknown dataset: %d", r.Status)
		}
		var tr traverseOut
		le.get(t, "/api/v1/datasets/"+le.ids["hub"]+"/lineage/traverse?hops=1&direction=downstream", le.tok, &tr)
		if len(tr.Exposures) != 1 || tr.Exposures[0].Name != "Modelo de churn" {
			t.Fatalf("exposures: %+v", tr.Exposures)
		}
		if r := env.Do(t, http.MethodDelete, "/api/v1/lineage/edges?source_id="+c(50)+"&target_id="+le.ids["hub"], le.admin, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := env.Do(t, http.MethodDelete, "/api/v1/lineage/edges?source_id="+c(50)+"&target_id="+le.ids["hub"], le.admin, nil); r.Status != 404 {
			t.Fatalf("delete again: %d", r.Status)
		}
		ctx := app.AsAdmin(context.Background(), le.ws, "cli")
		declare := func(body string) (lineage.ImportResult, error) {
			if err := env.App.Lineage.MayDeclare(ctx); err != nil {
				return lineage.ImportResult{}, err
			}
			f, err := ingest.DecodeDeclarations([]byte(body))
			if err != nil {
				return lineage.ImportResult{}, err
			}
			return env.App.Lineage.LoadDeclarations(ctx, f)
		}
		res, err := declare(`
edges:
  - from: shop/public.c50
    to: shop/public.hub
exposures:
  - name: Painel operacional
    type: dashboard
    depends_on: [public.h03]
`)
		if err != nil || res.Edges != 1 || res.Exposures != 1 {
			t.Fatalf("declarations: %+v %v", res, err)
		}
		if _, err := declare("edges:\n  - from: shop/public.nothing\n    to: shop/public.hub\n"); !vigia.IsKind(err, vigia.KindInvalid) {
			t.Fatalf("unknown name: %v", err)
		}
		if _, err := declare("edges: [oops"); !vigia.IsKind(err, vigia.KindInvalid) {
			t.Fatalf("bad yaml: %v", err)
		}
	})

	t.Run("DomainSuggestionsByLineageMajority", func(t *testing.T) {
		ctx := context.Background()
		domain, team := vigia.NewID(), vigia.NewID()
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := env.DB.Pool().Exec(ctx, q, args...); err != nil {
				t.Fatal(err)
			}
		}
		exec(`INSERT INTO domains (id, workspace_id, name) VALUES ($1, $2, 'Cadeia')`, domain, le.ws)
		for _, i := range []int{9, 11} {
			exec(`INSERT INTO domain_datasets VALUES ($1, $2)`, domain, c(i))
		}
		var sg struct {
			HasLineage  bool `json:"has_lineage"`
			Suggestions []struct {
				DatasetID  string   `json:"dataset_id"`
				DomainName string   `json:"domain_name"`
				Votes      int      `json:"votes"`
				TotalLinks int      `json:"total_links"`
				EdgeKinds  []string `json:"edge_kinds"`
				ViaColumns []string `json:"via_columns"`
			} `json:"suggestions"`
		}
		le.get(t, "/api/v1/domains/suggestions", le.admin, &sg)
		found := map[string]int{}
		for _, s := range sg.Suggestions {
			found[s.DatasetID] = s.Votes
			if s.DatasetID == c(10) && (s.Votes != 2 || s.TotalLinks != 2 || s.DomainName != "Cadeia" || len(s.ViaColumns) == 0) {
				t.Fatalf("c10: %+v", s)
			}
		}
		// c10 sits between two members; c8 and c12 have one of two links in the domain.
		if !sg.HasLineage || found[c(10)] != 2 || found[c(8)] != 1 || found[c(12)] != 1 || len(found) != 3 {
			t.Fatalf("suggestions: %+v", sg)
		}
		member := env.MustSession(t, le.ws, vigia.RoleMember)
		if r := le.get(t, "/api/v1/domains/suggestions", member, nil); r.Status != 403 {
			t.Fatalf("member: %d", r.Status)
		}
		if r := le.get(t, "/api/v1/domains/suggestions", le.tok, nil); r.Status != 403 {
			t.Fatalf("token: %d", r.Status)
		}
		manager := env.MustSession(t, le.ws, vigia.RoleMember)
		exec(`INSERT INTO teams (id, workspace_id, name) VALUES ($1, $2, 'dados')`, team, le.ws)
		exec(`INSERT INTO team_members (team_id, user_id) SELECT $1, s.user_id FROM sessions s WHERE s.token_hash = sha256($2::bytea)`, team, manager)
		exec(`INSERT INTO domain_grants (domain_id, team_id, role) VALUES ($1, $2, 'manager')`, domain, team)
		le.get(t, "/api/v1/domains/suggestions", manager, &sg)
		if len(sg.Suggestions) != 3 {
			t.Fatalf("manager: %+v", sg)
		}
	})

	t.Run("ResponsesMatchTheOpenAPIDocument", func(t *testing.T) {
		doc := env.Document(t)
		inc := ""
		var incs []map[string]any
		le.get(t, "/api/v1/incidents", le.tok, &incs)
		if len(incs) > 0 {
			inc = incs[0]["id"].(string)
		}
		for _, path := range []string{"/datasets/" + c(0) + "/lineage", "/datasets/" + c(5) + "/lineage/traverse?hops=3",
			"/datasets/" + c(0) + "/lineage/impact?column=val", "/datasets/" + c(0) + "/lineage/path?target_id=" + c(4),
			"/datasets/" + c(0) + "/lineage/path?target_id=" + c(40), "/knowledge/graph", "/knowledge/graph?focus=dataset:" + c(3),
			"/knowledge/graph/history", "/knowledge/graph/diff?from=latest", "/lineage/exposures", "/incidents", "/incidents/" + inc,
			"/datasets?sort=impact", "/datasets/" + c(0) + "/lineage/traverse?hops=9"} {
			if strings.HasSuffix(path, "/incidents/") {
				continue
			}
			doc.Do(t, http.MethodGet, "/api/v1"+path, le.tok, nil)
		}
	})
}

// Views of MariaDB and SQLite sources give parsed edges too, through their own parsers.
func TestParsedLineageOnMariaDBAndSQLite(t *testing.T) {
	for _, kind := range []string{"mysql", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root})
			le := &lineageEnv{env: env, ws: env.MustWorkspace(t, "lineage-"+kind)}
			le.admin = env.MustSession(t, le.ws, vigia.RoleAdmin)
			le.tok = env.MustToken(t, le.ws)
			le.src = newSource(t, kind, root)
			for _, q := range []string{
				`CREATE TABLE orders (id INTEGER PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(10))`,
				`INSERT INTO orders VALUES (1, 10.5, 'paid'), (2, 20, 'open')`,
				`CREATE VIEW paid_orders AS SELECT id AS order_id, amount * 2 AS doubled FROM orders WHERE status = 'paid'`,
				// Names as users write them: the database reports CustomerName, and so must
				// lineage (a lower-cased name would be a column asking about answers 422).
				`CREATE TABLE Customers (CustomerID INTEGER PRIMARY KEY, CustomerName VARCHAR(40), Country VARCHAR(2))`,
				`INSERT INTO Customers VALUES (1, 'Ana', 'PT'), (2, 'Rui', 'ES')`,
				`CREATE VIEW CustomerNames AS SELECT CustomerID, CustomerName FROM Customers`,
				`CREATE VIEW ShortNames AS SELECT CustomerName AS Short FROM CustomerNames WHERE CustomerID > 1 UNION ALL SELECT CustomerName FROM CustomerNames`,
			} {
				le.src.exec(t, q)
			}
			le.connID = mustCreateConnection(t, env, le.admin, map[string]any{"name": "src", "kind": kind, "dsn": le.src.dsn})
			le.scan(t)
			var tr traverseOut
			le.get(t, "/api/v1/datasets/"+le.ids["orders"]+"/lineage/traverse?direction=downstream", le.tok, &tr)
			e := hasEdge(tr.Edges, le.ids["orders"], le.ids["paid_orders"], "parsed")
			if e == nil {
				t.Fatalf("edges: %+v", tr.Edges)
			}
			got := fmt.Sprint(e.ColumnMap)
			if !strings.Contains(got, "{id order_id true}") || !strings.Contains(got, "{amount doubled false}") {
				t.Fatalf("column map: %s", got)
			}
			le.get(t, "/api/v1/datasets/"+le.ids["Customers"]+"/lineage/traverse?direction=downstream&hops=2", le.tok, &tr)
			if e := hasEdge(tr.Edges, le.ids["Customers"], le.ids["CustomerNames"], "parsed"); e == nil ||
				!strings.Contains(fmt.Sprint(e.ColumnMap), "{CustomerName CustomerName true}") {
				t.Fatalf("Customers → CustomerNames: %+v", tr.Edges)
			}
			// Column impact follows both hops, with the names the database reports.
			var im impactColumnsOut
			le.get(t, "/api/v1/datasets/"+le.ids["Customers"]+"/lineage/impact?column=CustomerName", le.tok, &im)
			got = fmt.Sprint(im.Columns)
			if !strings.Contains(got, "CustomerNames CustomerName 1}") || !strings.Contains(got, "ShortNames Short 2}") {
				t.Fatalf("impact of CustomerName: %s", got)
			}
			for _, c := range im.Columns {
				r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+le.ids[c.DatasetName[strings.LastIndex(c.DatasetName, ".")+1:]]+
					"/lineage/impact?column="+c.Column, le.tok, nil)
				if r.Status != 200 {
					t.Fatalf("asking about %s.%s, which impact named: %d", c.DatasetName, c.Column, r.Status)
				}
			}
		})
	}
}

// An outbox row left behind (a writer that died before projecting) is applied by the
// projector job on the queue, reach counts included.
func TestProjectorJobAppliesTheOutbox(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "projector")
	conn := env.MustConnection(t, ws, "c")
	a, b := env.MustDataset(t, ws, conn, "s", "a"), env.MustDataset(t, ws, conn, "s", "b")
	e := lineage.Edge{Source: a, Target: b, Kind: lineage.KindDeclared}
	if err := env.DB.InTx(ctx, func(ctx context.Context) error {
		if err := env.DB.Lineage().UpsertEdges(ctx, ws, []lineage.RecordEdge{{Edge: e}}); err != nil {
			return err
		}
		if err := env.DB.Lineage().AddOutbox(ctx, ws, lineage.Change{UpsertEdges: []lineage.Edge{e}}); err != nil {
			return err
		}
		_, err := env.App.Jobs.Enqueue(ctx, lineage.ProjectionJobKind, map[string]string{"workspace_id": ws}, jobs.EnqueueOpts{WorkspaceID: ws})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Other tests of the package share the queue: work projector jobs until none is left.
	for range 100 {
		ran, err := env.App.Jobs.RunOne(ctx, lineage.ProjectionJobKind)
		if err != nil {
			t.Fatal(err)
		}
		if !ran {
			break
		}
	}
	var edges, outbox, reach int
	pool := env.DB.Pool()
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pggraph_edges WHERE workspace_id = $1`, ws).Scan(&edges); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM lineage_outbox WHERE workspace_id = $1`, ws).Scan(&outbox); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(reach), 0) FROM dataset_reach WHERE dataset_id = $1`, a).Scan(&reach); err != nil {
		t.Fatal(err)
	}
	if edges != 1 || outbox != 0 || reach != 1 {
		t.Fatalf("edges %d outbox %d reach %d", edges, outbox, reach)
	}
}
