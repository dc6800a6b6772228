package vigia_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The import rules of docs/architecture.md. Each package of the module is in one room:
//
//   - kernel: the root package and event; the standard library only.
//   - adapters: the packages that wrap a technology (the database, the job queue, a
//     transport, a graph backend, the SQL parsers, the source drivers, a ticket
//     provider's API); each room of them is one adapter and never imports another.
//   - infrastructure: internal/..., helpers the adapters share (pgtx carries the
//     Postgres transaction the store and the job queue both use).
//   - composition: app, cmd and bench, which wire everything.
//   - features: everything else (the services and their libraries); they never import
//     an adapter, the composition or a driver, directly or through another package.
//   - client: the typed REST client generated from the OpenAPI document; it links no
//     package of the module (it knows the service only through the document).

const module = "github.com/vigia-data/vigia"

// adapterRooms are the adapters; a package belongs to the room of the longest prefix.
var adapterRooms = []string{
	"store", "jobs", "rest", "graph", "lineage/pggraph", "lineage/neo4jgraph", "lineage/sqllineage", "source/connect",
	"ticket/jira", "ticket/linear", "ticket/generic", "ui", "synthetic/sqlitepack",
}

// compositionRooms wire everything and may import anything but the kernel's rules.
var compositionRooms = []string{"app", "cmd", "bench"}

// drivers are the database and graph drivers.
var drivers = []string{
	"github.com/jackc/pgx", "github.com/go-sql-driver/mysql", "modernc.org/sqlite", "github.com/neo4j/neo4j-go-driver",
}

// ingestLibraries are the libraries ingest may link besides the standard library.
var ingestLibraries = []string{"go.yaml.in/yaml/v3"}

// sqlParsers are the cgo Postgres parser and the TiDB parser.
var sqlParsers = []string{"github.com/pganalyze/pg_query_go", "github.com/pingcap/tidb/pkg/parser"}

// forbidden is the table of forbidden pairs: a package of room `from` may not depend on
// a package matched by `to` (directly unless transitive is set). Rooms and targets are
// "kernel", "adapter", "other-adapter", "feature", "infrastructure", "composition",
// "non-parser", "driver", "parser", "nonstd", "beyond-ingest", "module" (any package of the module) or a
// package path of the module (relative, a prefix).
var forbidden = []struct {
	from, to   string
	transitive bool
	why        string
}{
	{"kernel", "nonstd", false, "the kernel imports the standard library only"},
	{"feature", "adapter", false, "features never import adapters"},
	{"feature", "composition", false, "features never import the composition"},
	{"feature", "infrastructure", false, "features never import the adapters' infrastructure"},
	{"feature", "driver", true, "features never link a driver"},
	{"adapter", "other-adapter", false, "adapters never import each other"},
	{"adapter", "composition", false, "adapters never import the composition"},
	{"cmd", "driver", false, "cmd never imports a driver"},
	{"rest", "store", true, "transports call services, never the store"},
	{"graph", "store", true, "transports call services, never the store"},
	{"rest", "driver", true, "transports never link a driver"},
	{"graph", "driver", true, "transports never link a driver"},
	{"non-parser", "parser", true, "only lineage/sqllineage, app and cmd link the SQL parsers"},
	{"ingest", "beyond-ingest", true, "ingest decodes with the standard library, the YAML library and the kernel only"},
	{"client", "module", true, "the generated client knows the service only through the OpenAPI document"},
	{"rule/rulefile", "module", false, "the rule file formats are pure: the standard library and YAML, no package of Vigia"},
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func hasPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	if strings.HasPrefix(path, module+"/") {
		return strings.TrimPrefix(path, module+"/"), true
	}
	return "", false
}

// roomOf returns the room of a module package and, for adapters, which adapter.
func roomOf(path string) (room, adapter string) {
	r, ok := rel(path)
	if !ok {
		return "", ""
	}
	if r == "" || hasPrefix(r, "event") {
		return "kernel", ""
	}
	if hasPrefix(r, "internal") {
		return "infrastructure", ""
	}
	for _, c := range compositionRooms {
		if hasPrefix(r, c) {
			return "composition", c
		}
	}
	best := ""
	for _, a := range adapterRooms {
		if hasPrefix(r, a) && len(a) > len(best) {
			best = a
		}
	}
	if best != "" {
		return "adapter", best
	}
	return "feature", ""
}

func matchesAny(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if hasPrefix(path, p) {
			return true
		}
	}
	return false
}

// fromMatches reports whether rule.from applies to package p.
func fromMatches(from string, p pkg) bool {
	room, _ := roomOf(p.ImportPath)
	r, inModule := rel(p.ImportPath)
	switch from {
	case "kernel", "feature", "adapter", "composition", "infrastructure":
		return room == from
	case "non-parser":
		return inModule && !hasPrefix(r, "lineage/sqllineage") && !hasPrefix(r, "app") && !hasPrefix(r, "cmd")
	}
	return inModule && hasPrefix(r, from)
}

// toMatches reports whether dependency dep of package p breaks rule.to.
func toMatches(to string, p pkg, dep string) bool {
	switch to {
	case "nonstd":
		first, _, _ := strings.Cut(dep, "/")
		return strings.Contains(first, ".")
	case "beyond-ingest":
		if room, _ := roomOf(dep); room != "" {
			return room != "kernel"
		}
		first, _, _ := strings.Cut(dep, "/")
		return strings.Contains(first, ".") && !matchesAny(dep, ingestLibraries)
	case "module":
		_, ok := rel(dep)
		return ok
	case "driver":
		return matchesAny(dep, drivers)
	case "parser":
		return matchesAny(dep, sqlParsers)
	case "adapter", "composition", "infrastructure":
		room, _ := roomOf(dep)
		return room == to
	case "other-adapter":
		_, mine := roomOf(p.ImportPath)
		room, theirs := roomOf(dep)
		return room == "adapter" && theirs != mine
	}
	r, ok := rel(dep)
	return ok && hasPrefix(r, to)
}

// violations applies the table to packages and returns one line per broken rule.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		for _, rule := range forbidden {
			if !fromMatches(rule.from, p) {
				continue
			}
			deps := p.Imports
			if rule.transitive {
				deps = p.Deps
			}
			for _, d := range deps {
				if toMatches(rule.to, p, d) {
					out = append(out, p.ImportPath+" -> "+d+": "+rule.why)
					break // one line per package and rule
				}
			}
		}
	}
	return out
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-test=false", "-json=ImportPath,Imports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// Each rule of the table fails on a package that breaks it, and a package that keeps
// to its room passes.
func TestImportRulesCatchEveryBreak(t *testing.T) {
	m := func(r string) string { return module + "/" + r }
	cases := []struct {
		name string
		p    pkg
	}{
		{"kernel imports a library", pkg{ImportPath: module, Imports: []string{"github.com/goccy/go-yaml"}}},
		{"event imports a feature's library", pkg{ImportPath: m("event"), Imports: []string{"golang.org/x/text/language"}}},
		{"feature imports the store", pkg{ImportPath: m("trust"), Imports: []string{m("store")}}},
		{"feature imports a parser adapter", pkg{ImportPath: m("lineage"), Imports: []string{m("lineage/sqllineage")}}},
		{"feature imports app", pkg{ImportPath: m("scan"), Imports: []string{m("app")}}},
		{"feature imports pgtx", pkg{ImportPath: m("issue"), Imports: []string{m("internal/pgtx")}}},
		{"feature links a driver", pkg{ImportPath: m("connection"), Deps: []string{"github.com/jackc/pgx/v5"}}},
		{"jobs imports the store", pkg{ImportPath: m("jobs"), Imports: []string{m("store")}}},
		{"store imports the job queue", pkg{ImportPath: m("store"), Imports: []string{m("jobs")}}},
		{"graph imports rest", pkg{ImportPath: m("graph/model"), Imports: []string{m("rest")}}},
		{"adapter imports cmd", pkg{ImportPath: m("lineage/pggraph"), Imports: []string{m("cmd/vigia")}}},
		{"cmd imports a driver", pkg{ImportPath: m("cmd/vigia"), Imports: []string{"github.com/go-sql-driver/mysql"}}},
		{"rest links the store", pkg{ImportPath: m("rest"), Deps: []string{m("store")}}},
		{"graph links a driver", pkg{ImportPath: m("graph"), Deps: []string{"github.com/neo4j/neo4j-go-driver/v5/neo4j"}}},
		{"jobs links the Postgres parser", pkg{ImportPath: m("jobs"), Deps: []string{"github.com/pganalyze/pg_query_go/v6"}}},
		{"rest links the TiDB parser", pkg{ImportPath: m("rest"), Deps: []string{"github.com/pingcap/tidb/pkg/parser/ast"}}},
		{"notify imports the store", pkg{ImportPath: m("notify"), Imports: []string{m("store")}}},
		{"oncall imports the job queue", pkg{ImportPath: m("oncall"), Imports: []string{m("jobs")}}},
		{"ticket imports its Jira adapter", pkg{ImportPath: m("ticket"), Imports: []string{m("ticket/jira")}}},
		{"ticket adapter imports another", pkg{ImportPath: m("ticket/jira"), Imports: []string{m("ticket/linear")}}},
		{"ticket adapter imports the store", pkg{ImportPath: m("ticket/generic"), Imports: []string{m("store")}}},
		{"ide imports the store", pkg{ImportPath: m("ide"), Imports: []string{m("store")}}},
		{"ide imports a transport", pkg{ImportPath: m("ide"), Imports: []string{m("rest")}}},
		{"orchestrator imports the store", pkg{ImportPath: m("orchestrator"), Imports: []string{m("store")}}},
		{"orchestrator links a driver", pkg{ImportPath: m("orchestrator"), Deps: []string{"github.com/jackc/pgx/v5"}}},
		{"orchestrator links the SQL parser", pkg{ImportPath: m("orchestrator"), Deps: []string{"github.com/pganalyze/pg_query_go/v6"}}},
		{"ingest imports lineage", pkg{ImportPath: m("ingest"), Imports: []string{m("lineage")}, Deps: []string{m("lineage")}}},
		{"ingest links the store", pkg{ImportPath: m("ingest"), Deps: []string{m("store")}}},
		{"ingest links a transport's library", pkg{ImportPath: m("ingest"), Deps: []string{"github.com/danielgtaylor/huma/v2"}}},
		{"client imports the kernel", pkg{ImportPath: m("client"), Imports: []string{module}, Deps: []string{module}}},
		{"client links rest", pkg{ImportPath: m("client"), Deps: []string{m("rest")}}},
		{"rulefile imports the kernel", pkg{ImportPath: m("rule/rulefile"), Imports: []string{module}}},
		{"synthetic imports its SQLite adapter", pkg{ImportPath: m("synthetic"), Imports: []string{m("synthetic/sqlitepack")}}},
		{"synthetic links the SQLite driver", pkg{ImportPath: m("synthetic"), Deps: []string{"modernc.org/sqlite"}}},
		{"confcode imports the store", pkg{ImportPath: m("confcode"), Imports: []string{m("store")}}},
		{"confcode links a driver", pkg{ImportPath: m("confcode"), Deps: []string{"github.com/jackc/pgx/v5"}}},
		{"bi imports the store", pkg{ImportPath: m("bi"), Imports: []string{m("store")}}},
		{"report imports the store", pkg{ImportPath: m("report"), Imports: []string{m("store")}}},
		{"report links a driver", pkg{ImportPath: m("report"), Deps: []string{"github.com/jackc/pgx/v5"}}},
		{"routine imports the job queue", pkg{ImportPath: m("routine"), Imports: []string{m("jobs")}}},
	}
	for _, c := range cases {
		if v := violations([]pkg{c.p}); len(v) == 0 {
			t.Errorf("%s: no rule broken", c.name)
		}
	}
	keep := []pkg{
		{ImportPath: module, Imports: []string{"context", "time"}},
		{ImportPath: m("trust"), Imports: []string{module, m("catalog"), m("event")}, Deps: []string{module, m("catalog"), "context"}},
		{ImportPath: m("lineage/sqllineage"), Imports: []string{m("lineage"), "github.com/pganalyze/pg_query_go/v6"},
			Deps: []string{"github.com/pganalyze/pg_query_go/v6"}},
		{ImportPath: m("store"), Imports: []string{m("lineage"), m("internal/pgtx"), "github.com/jackc/pgx/v5"}},
		{ImportPath: m("app"), Imports: []string{m("store"), m("rest"), m("lineage/sqllineage")}, Deps: []string{"github.com/pingcap/tidb/pkg/parser"}},
		{ImportPath: m("oncall"), Imports: []string{module, m("event"), m("notify"), m("webhook/delivery")}},
		{ImportPath: m("ticket"), Imports: []string{module, m("catalog"), m("notify"), m("netguard"), m("secret")}},
		{ImportPath: m("ticket/linear"), Imports: []string{m("ticket"), "net/http"}},
		{ImportPath: m("app"), Imports: []string{m("ticket/jira"), m("ticket/linear"), m("ticket/generic"), m("oncall")}},
		{ImportPath: m("ide"), Imports: []string{module, m("catalog"), m("trust")}},
		{ImportPath: m("orchestrator"), Imports: []string{module, m("catalog"), m("lineage"), m("trust")}},
		{ImportPath: m("knowledge"), Imports: []string{module, m("catalog"), m("source/semantic")}},
		{ImportPath: m("sensitivity"), Imports: []string{module, m("catalog"), m("trust")}},
		{ImportPath: m("readme"), Imports: []string{module, m("catalog"), m("lineage"), m("sensitivity")}},
		{ImportPath: m("ingest"), Imports: []string{module, "encoding/json", "go.yaml.in/yaml/v3"},
			Deps: []string{module, "encoding/json", "go.yaml.in/yaml/v3"}},
		{ImportPath: m("confcode"), Imports: []string{module, m("catalog"), m("connection"), m("notify"), m("product"), m("rule"), m("team"),
			"go.yaml.in/yaml/v3"}},
		{ImportPath: m("report"), Imports: []string{module, m("catalog"), "github.com/go-pdf/fpdf"}},
		{ImportPath: m("routine"), Imports: []string{module, m("report")}},
		{ImportPath: m("client"), Imports: []string{"net/http", "github.com/oapi-codegen/runtime"},
			Deps: []string{"net/http", "github.com/oapi-codegen/runtime", "github.com/apapsch/go-jsonmerge/v2"}},
		{ImportPath: m("bi"), Imports: []string{module, m("catalog"), m("lineage"), m("orchestrator")}},
	}
	if v := violations(keep); len(v) > 0 {
		t.Errorf("packages that keep to their rooms: %v", v)
	}
}
