package app_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

// modelingIssues lists a dataset's modeling or slo_breach issues in a status, with their details.
func (e *wfEnv) typedIssues(t *testing.T, typ, status, datasetID string) []map[string]any {
	t.Helper()
	list, _ := e.list(t, "/api/v1/issues?type="+typ+"&status="+status+"&dataset_id="+datasetID, e.member)
	out := make([]map[string]any, 0, len(list))
	for _, is := range list {
		out = append(out, e.get(t, "/api/v1/issues/"+is["id"].(string), e.member))
	}
	return out
}

func subtypes(list []map[string]any) []string {
	out := make([]string, 0, len(list))
	for _, is := range list {
		out = append(out, fmt.Sprint(is["subtype"]))
	}
	sort.Strings(out)
	return out
}

func bySubtype(list []map[string]any, sub string) map[string]any {
	for _, is := range list {
		if is["subtype"] == sub {
			return is
		}
	}
	return nil
}

// Must-show 6: a table without a primary key holding dates as text gets modeling issues
// no_key and date_as_text, each with a ddl its dialect's parser accepts (and the source
// runs); a second scan opens no duplicates; once the fix is applied the issue resolves.
func TestModelingIssuesOnEachScan(t *testing.T) {
	e := newWF(t, "modeling")
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			src := newSource(t, kind, e.root)
			src.exec(t, `CREATE TABLE eventos (codigo varchar(20), data_evento varchar(10), nota varchar(40))`)
			var rows []string
			for i := 1; i <= 60; i++ {
				nota := "'ok'"
				if i%3 == 0 {
					nota = "NULL"
				}
				rows = append(rows, fmt.Sprintf("('EV%03d', '%02d/%02d/2024', %s)", i, i%28+1, i%12+1, nota))
			}
			src.exec(t, "INSERT INTO eventos VALUES "+strings.Join(rows, ", "))
			conn := e.connect(t, "modeling-"+kind, kind, src.dsn)
			sc := e.scan(t, conn)
			ds := e.dataset(t, conn, "eventos")

			open := e.typedIssues(t, "modeling", "open", ds)
			got := subtypes(open)
			for _, want := range []string{"no_key", "date_as_text"} {
				if bySubtype(open, want) == nil {
					t.Fatalf("no %s issue; open modeling issues %v", want, got)
				}
			}
			dialect := kind
			for _, sub := range []string{"no_key", "date_as_text"} {
				is := bySubtype(open, sub)
				d := is["details"].(map[string]any)
				if d["connection_id"] != conn || d["check"] != sub || d["dialect"] != dialect || d["suggestion"] == "" {
					t.Fatalf("%s details %v", sub, d)
				}
				ddl, _ := d["ddl"].(string)
				if ddl == "" {
					t.Fatalf("%s without ddl: %v", sub, d)
				}
				if err := (sqllineage.Parser{}).CheckDDL(dialect, ddl); err != nil {
					t.Fatalf("%s ddl %q rejected by the %s parser: %v", sub, ddl, dialect, err)
				}
				if is["type"] != "modeling" {
					t.Fatalf("type %v", is["type"])
				}
			}
			cols := bySubtype(open, "date_as_text")["details"].(map[string]any)["columns"].([]any)
			if len(cols) != 1 || cols[0] != "data_evento" {
				t.Fatalf("date_as_text columns %v", cols)
			}
			if cols := bySubtype(open, "no_key")["details"].(map[string]any)["columns"].([]any); len(cols) != 1 || cols[0] != "codigo" {
				t.Fatalf("no_key candidate %v", cols)
			}
			// Modeling advice never weighs on the verdict.
			v := e.get(t, "/api/v1/datasets/"+ds+"/verdict", e.member)
			if v["verdict"] != "pass" {
				t.Fatalf("verdict with only modeling issues: %v", v)
			}

			// A second scan opens no duplicates: the same issues, one per check.
			e.scan(t, conn)
			again := e.typedIssues(t, "modeling", "open", ds)
			if strings.Join(subtypes(again), ",") != strings.Join(got, ",") {
				t.Fatalf("second scan: %v, first %v", subtypes(again), got)
			}
			for _, is := range again {
				if first := bySubtype(open, is["subtype"].(string)); first["id"] != is["id"] {
					t.Fatalf("%v reopened as a new issue", is["subtype"])
				}
			}
			var n int
			if err := e.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM issues WHERE dataset_id = $1 AND type = 'modeling'`, ds).Scan(&n); err != nil || n != len(got) {
				t.Fatalf("%d modeling issues stored (%v), want %d", n, err, len(got))
			}

			// The source runs the fixes; the next scan resolves both issues.
			for _, sub := range []string{"no_key", "date_as_text"} {
				src.exec(t, bySubtype(open, sub)["details"].(map[string]any)["ddl"].(string))
			}
			e.scan(t, conn)
			now := e.typedIssues(t, "modeling", "open", ds)
			if bySubtype(now, "no_key") != nil || bySubtype(now, "date_as_text") != nil {
				t.Fatalf("after the fixes still open: %v", subtypes(now))
			}
			resolved := e.typedIssues(t, "modeling", "resolved", ds)
			if bySubtype(resolved, "no_key") == nil || bySubtype(resolved, "date_as_text") == nil {
				t.Fatalf("resolved %v", subtypes(resolved))
			}
			_ = sc
		})
	}
}

// slo_breach: a dimension of the scan's score under a domain's dimension target opens
// an issue (subtype dimension_target, impact.dimension); met again, it resolves.
func TestSLOBreachFromDomainTargets(t *testing.T) {
	e := newWF(t, "slobreach")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE pedidos (id integer PRIMARY KEY, cliente text)`)
	var rows []string
	for i := 1; i <= 40; i++ {
		c := "'c'"
		if i%2 == 0 {
			c = "NULL"
		}
		rows = append(rows, fmt.Sprintf("(%d, %s)", i, c))
	}
	src.exec(t, "INSERT INTO pedidos VALUES "+strings.Join(rows, ", "))
	conn := e.connect(t, "slo", "postgres", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "pedidos")
	r := e.Do(t, http.MethodPost, "/api/v1/domains", e.admin, map[string]any{"name": "Vendas", "dataset_ids": []string{ds},
		"sla": map[string]any{"dimension_targets": map[string]any{"completude": 99}}})
	if r.Status != 201 {
		t.Fatalf("domain: %d %s", r.Status, r.Body)
	}
	var dom map[string]any
	r.JSON(t, &dom)
	e.scan(t, conn)
	open := e.typedIssues(t, "slo_breach", "open", ds)
	if len(open) != 1 || open[0]["subtype"] != "dimension_target" {
		t.Fatalf("slo_breach issues %v", open)
	}
	d := open[0]["details"].(map[string]any)
	if imp, _ := d["impact"].(map[string]any); imp == nil || imp["dimension"] != "completude" || imp["target"] != 99.0 || imp["observed"].(float64) >= 99 {
		t.Fatalf("impact %v", d)
	}
	e.scan(t, conn)
	if again := e.typedIssues(t, "slo_breach", "open", ds); len(again) != 1 || again[0]["id"] != open[0]["id"] {
		t.Fatalf("second scan %v", again)
	}
	if r := e.Do(t, http.MethodPatch, "/api/v1/domains/"+dom["id"].(string), e.admin, map[string]any{"sla": map[string]any{"dimension_targets": map[string]any{"completude": 10}}}); r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	e.scan(t, conn)
	if now := e.typedIssues(t, "slo_breach", "open", ds); len(now) != 0 {
		t.Fatalf("met target still open: %v", now)
	}
	if res := e.typedIssues(t, "slo_breach", "resolved", ds); len(res) != 1 {
		t.Fatalf("resolved %v", res)
	}
}

// unindexed_key and denormalized on real sources: a declared foreign key without an index
// (Postgres, SQLite) and numbered phone columns; each fix is accepted by the dialect's
// parser and run by the source, and the next scan resolves the issue. MariaDB indexes
// foreign keys itself: no unindexed_key there.
func TestModelingKeysAndRepeatingGroups(t *testing.T) {
	e := newWF(t, "modeling-keys")
	for _, kind := range []string{"postgres", "sqlite", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			src := newSource(t, kind, e.root)
			src.exec(t, `CREATE TABLE clientes (id integer PRIMARY KEY, nome varchar(40))`)
			src.exec(t, `CREATE TABLE contactos (id integer PRIMARY KEY, cliente_id integer REFERENCES clientes (id),
				telefone1 varchar(20), telefone2 varchar(20), telefone3 varchar(20))`)
			src.exec(t, `INSERT INTO clientes VALUES (1, 'a'), (2, 'b')`)
			src.exec(t, `INSERT INTO contactos VALUES (1, 1, '912000001', NULL, NULL), (2, 2, '912000002', '912000003', NULL)`)
			conn := e.connect(t, "keys-"+kind, kind, src.dsn)
			e.scan(t, conn)
			ds := e.dataset(t, conn, "contactos")
			open := e.typedIssues(t, "modeling", "open", ds)
			want := []string{"unindexed_key", "denormalized"}
			if kind == "mysql" {
				want = []string{"denormalized"}
				if bySubtype(open, "unindexed_key") != nil {
					t.Fatal("unindexed_key on MariaDB, which indexes foreign keys")
				}
			}
			for _, sub := range want {
				is := bySubtype(open, sub)
				if is == nil {
					t.Fatalf("no %s; open %v", sub, subtypes(open))
				}
				ddl, _ := is["details"].(map[string]any)["ddl"].(string)
				if err := (sqllineage.Parser{}).CheckDDL(kind, ddl); ddl == "" || err != nil {
					t.Fatalf("%s ddl %q: %v", sub, ddl, err)
				}
				for _, stmt := range strings.Split(ddl, ";\n") {
					src.exec(t, stmt)
				}
			}
			e.scan(t, conn)
			now := e.typedIssues(t, "modeling", "open", ds)
			if bySubtype(now, "unindexed_key") != nil {
				t.Fatalf("unindexed_key still open after the index: %v", subtypes(now))
			}
			if bySubtype(now, "denormalized") == nil {
				t.Fatal("the child table alone does not remove the repeating group")
			}
		})
	}
}
