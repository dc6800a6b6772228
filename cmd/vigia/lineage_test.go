package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/store/storetest"
)

// `vigia lineage import-dbt`, `vigia lineage declare` and `vigia graph rebuild` write the
// record and re-project it.
func TestLineageCommandsImportDeclareAndRebuild(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "lineage-test-key")
	ctx := context.Background()
	var out, errb bytes.Buffer
	name := "cli-lineage-" + vigia.NewUUID()[:8]
	if code := run(ctx, []string{"workspace", "create", name}, &out, &errb); code != 0 {
		t.Fatalf("workspace: %s", errb.String())
	}
	ws := strings.TrimSpace(out.String())
	pool := storetest.MustDB(t).Pool()
	conn := vigia.NewID()
	if _, err := pool.Exec(ctx, `INSERT INTO connections (id, workspace_id, name, kind, dsn_encrypted) VALUES ($1, $2, 'dw', 'postgres', '\x00')`, conn, ws); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range []string{"stg_orders", "orders", "revenue"} {
		if _, err := pool.Exec(ctx, `INSERT INTO datasets (id, workspace_id, connection_id, schema_name, table_name) VALUES ($1, $2, $3, 'analytics', $4)`,
			vigia.NewID(), ws, conn, tbl); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifest, []byte(`{"metadata": {"project_name": "dw"},
		"nodes": {
		  "model.dw.stg_orders": {"resource_type": "model", "schema": "analytics", "name": "stg_orders", "depends_on": {"nodes": []}},
		  "model.dw.orders": {"resource_type": "model", "schema": "analytics", "name": "orders", "depends_on": {"nodes": ["model.dw.stg_orders"]}}},
		"sources": {}, "exposures": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(ctx, []string{"lineage", "import-dbt", "--workspace", ws, manifest}, &out, &errb); code != 0 || !strings.Contains(out.String(), "edges 1") {
		t.Fatalf("import-dbt: exit %d %s %s", code, out.String(), errb.String())
	}
	// A manifest of another project layout matches nothing: the import is refused, the
	// edge stays, and the names that matched nothing are listed.
	wrong := filepath.Join(dir, "wrong.json")
	if err := os.WriteFile(wrong, []byte(`{"metadata": {"project_name": "dw"},
		"nodes": {
		  "model.dw.stg_orders": {"resource_type": "model", "schema": "dbt_prod", "name": "stg_orders", "depends_on": {"nodes": []}},
		  "model.dw.orders": {"resource_type": "model", "schema": "dbt_prod", "name": "orders", "depends_on": {"nodes": ["model.dw.stg_orders"]}}},
		"sources": {}, "exposures": {"exposure.dw.painel": {"name": "painel", "type": "dashboard", "owner": {"email": "bi@example.pt"},
		  "depends_on": {"nodes": ["model.dw.orders"]}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dbtEdges := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM lineage_edges WHERE workspace_id = $1 AND kind = 'dbt'`, ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"lineage", "import-dbt", "--workspace", ws, wrong}, &out, &errb); code == 0 ||
		!strings.Contains(out.String(), "refused") || !strings.Contains(out.String(), "model.dw.orders") ||
		!strings.Contains(out.String(), "model.dw.stg_orders") || !strings.Contains(errb.String(), "dbt_import_would_erase") {
		t.Fatalf("import of a manifest matching nothing: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if n := dbtEdges(); n != 1 {
		t.Fatalf("a refused import changed the edges: %d", n)
	}
	out.Reset()
	if code := run(ctx, []string{"lineage", "import-dbt", "--workspace", ws, "--replace", wrong}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "edges 0") || !strings.Contains(out.String(), "replaced") {
		t.Fatalf("--replace: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if n := dbtEdges(); n != 0 {
		t.Fatalf("--replace kept %d dbt edges", n)
	}
	var owner string
	if err := pool.QueryRow(ctx, `SELECT owner FROM lineage_exposures WHERE workspace_id = $1 AND name = 'painel'`, ws).Scan(&owner); err != nil ||
		owner != "bi@example.pt" {
		t.Fatalf("exposure owner given by email: %q (%v)", owner, err)
	}
	out.Reset()
	if code := run(ctx, []string{"lineage", "import-dbt", "--workspace", ws, manifest}, &out, &errb); code != 0 || !strings.Contains(out.String(), "edges 1") {
		t.Fatalf("import-dbt again: exit %d %s %s", code, out.String(), errb.String())
	}
	decl := filepath.Join(dir, "lineage.yaml")
	if err := os.WriteFile(decl, []byte("edges:\n  - from: dw/analytics.orders\n    to: dw/analytics.revenue\nexposures:\n  - name: Receita\n    type: dashboard\n    depends_on: [analytics.revenue]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(ctx, []string{"lineage", "declare", "--workspace", name, decl}, &out, &errb); code != 0 || !strings.Contains(out.String(), "edges 1, exposures 1") {
		t.Fatalf("declare: exit %d %s %s", code, out.String(), errb.String())
	}
	if _, err := pool.Exec(ctx, `DELETE FROM pggraph_edges WHERE workspace_id = $1`, ws); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(ctx, []string{"graph", "rebuild"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "rebuilt") {
		t.Fatalf("rebuild: exit %d %s %s", code, out.String(), errb.String())
	}
	var edges, reach int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pggraph_edges WHERE workspace_id = $1`, ws).Scan(&edges); err != nil || edges != 3 {
		t.Fatalf("projected edges after rebuild: %d (%v)", edges, err)
	}
	if err := pool.QueryRow(ctx, `SELECT max(reach) FROM dataset_reach WHERE workspace_id = $1`, ws).Scan(&reach); err != nil || reach != 2 {
		t.Fatalf("reach after rebuild: %d (%v)", reach, err)
	}
	if code := run(ctx, []string{"lineage", "import-dbt", "--workspace", ws, filepath.Join(dir, "missing.json")}, &out, &errb); code == 0 {
		t.Fatal("missing file accepted")
	}
}

// `vigia bench lineage` runs end to end on a small synthetic workspace and reports
// every operation.
func TestBenchLineageReportsEveryOperation(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "bench-test-key")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"bench", "lineage", "--datasets", "1000", "--iterations", "5", "--database="}, &out, &errb); code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"GET /datasets/{id}", "traverse hops=3", "impact column=amount", "path 6 hops", "knowledge graph focus"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %s:\n%s", want, out.String())
		}
	}
}
