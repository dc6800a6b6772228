package neo4jgraph

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// driverTypes are the Go types the call sites may pass as parameters, each mapped by
// the Neo4j Go driver to the Cypher type the statements expect (driver manual, "Values
// and types"): string→STRING, bool→BOOLEAN, int/int64→INTEGER, float64→FLOAT,
// []string→LIST<STRING>, []map[string]any→LIST<MAP>. Anything else (a struct, a
// pointer, a named type the driver does not know, time.Duration) is a mistake here.
var driverTypes = map[string]bool{
	"string": true, "bool": true, "int": true, "int64": true, "float64": true,
	"[]string": true, "[]map[string]any": true,
}

// A callSite is one place the Go code sends a statement constant with its parameters.
type callSite struct {
	stmt string
	pos  string
	// params: key of the parameter map → Go type of its value.
	params map[string]string
	// fields: for a list-of-maps parameter, the keys of the maps the code puts in it
	// → Go type of each value.
	fields map[string]map[string]string
	hasMap bool
}

// packageCallSites type-checks the package's non-test files (cypher.go included) and
// returns every use of a statement constant: as a call argument next to a
// map[string]any literal (a call site), or elsewhere (other, e.g. schemaStatements).
func packageCallSites(t *testing.T, consts map[string]string) (sites []callSite, other map[string]int) {
	t.Helper()
	exports := map[string]string{}
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if p, e, ok := strings.Cut(sc.Text(), "\t"); ok && e != "" {
			exports[p] = e
		}
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if e, ok := exports[path]; ok {
			return os.Open(e)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})}
	if _, err := conf.Check("github.com/vigia-data/vigia/lineage/neo4jgraph", fset, files, info); err != nil {
		t.Fatal(err)
	}
	isStmt := func(e ast.Expr) (string, bool) {
		id, ok := e.(*ast.Ident)
		if !ok {
			return "", false
		}
		c, ok := info.Uses[id].(*types.Const)
		if !ok {
			return "", false
		}
		_, ok = consts[c.Name()]
		return c.Name(), ok
	}
	// appended: object of a []map[string]any variable → the map literals appended to it.
	appended := map[types.Object][]*ast.CompositeLit{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "append" {
				return true
			}
			id, ok := call.Args[0].(*ast.Ident)
			lit, ok2 := call.Args[1].(*ast.CompositeLit)
			if ok && ok2 {
				appended[info.Uses[id]] = append(appended[info.Uses[id]], lit)
			}
			return true
		})
	}
	mapKeys := func(lit *ast.CompositeLit) map[string]string {
		m := map[string]string{}
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			k, ok := kv.Key.(*ast.BasicLit)
			if !ok || k.Kind != token.STRING {
				m["<non-literal key>"] = ""
				continue
			}
			m[strings.Trim(k.Value, "\"`")] = types.TypeString(info.Types[kv.Value].Type, nil)
		}
		return m
	}
	other = map[string]int{}
	inCall := map[*ast.Ident]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, a := range call.Args {
				name, ok := isStmt(a)
				if !ok {
					continue
				}
				inCall[a.(*ast.Ident)] = true
				s := callSite{stmt: name, pos: fset.Position(a.Pos()).String(), params: map[string]string{}, fields: map[string]map[string]string{}}
				for _, b := range call.Args {
					lit, ok := b.(*ast.CompositeLit)
					if !ok || types.TypeString(info.Types[lit].Type, nil) != "map[string]any" {
						continue
					}
					s.hasMap = true
					s.params = mapKeys(lit)
					for _, el := range lit.Elts {
						kv, ok := el.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						k, _ := kv.Key.(*ast.BasicLit)
						v, ok := kv.Value.(*ast.Ident)
						if k == nil || !ok {
							continue
						}
						for _, elem := range appended[info.Uses[v]] {
							fm := map[string]string{}
							for fk, ft := range mapKeys(elem) {
								fm[fk] = ft
							}
							s.fields[strings.Trim(k.Value, "\"`")] = fm
						}
					}
				}
				sites = append(sites, s)
			}
			return true
		})
	}
	for id, obj := range info.Uses {
		if c, ok := obj.(*types.Const); ok && !inCall[id] {
			if _, ok := consts[c.Name()]; ok {
				other[c.Name()]++
			}
		}
	}
	return sites, other
}

var unwindRE = regexp.MustCompile(`UNWIND \$([A-Za-z_][A-Za-z0-9_]*) AS ([A-Za-z_][A-Za-z0-9_]*)`)

// unwoundFields returns, for each list parameter a statement unwinds, the fields it
// reads from each element (UNWIND $edges AS e … e.source → edges: [source]).
func unwoundFields(q string) map[string][]string {
	out := map[string][]string{}
	for _, m := range unwindRE.FindAllStringSubmatch(q, -1) {
		out[m[1]] = distinctMatches(regexp.MustCompile(`\b`+m[2]+`\.([A-Za-z_][A-Za-z0-9_]*)`), q)
	}
	return out
}

// checkParams compares every statement's $parameters (and the fields it reads from
// unwound list elements) with what its call sites pass, and the Go types passed with
// driverTypes. It returns the problems found.
func checkParams(consts map[string]string, sites []callSite, other map[string]int) []string {
	var problems []string
	used := map[string]bool{}
	for _, s := range sites {
		used[s.stmt] = true
		q := consts[s.stmt]
		want := statementParams(q)
		if !s.hasMap {
			problems = append(problems, fmt.Sprintf("%s: %s is sent without a map[string]any literal of its parameters", s.pos, s.stmt))
			continue
		}
		var got []string
		for k, typ := range s.params {
			got = append(got, k)
			if !driverTypes[typ] {
				problems = append(problems, fmt.Sprintf("%s: %s: parameter %q is passed as %s, which the driver does not map as intended", s.pos, s.stmt, k, typ))
			}
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			problems = append(problems, fmt.Sprintf("%s: %s uses $%s but the call passes %s", s.pos, s.stmt, strings.Join(want, ", $"), strings.Join(got, ", ")))
		}
		for param, fields := range unwoundFields(q) {
			if s.params[param] != "[]map[string]any" {
				continue
			}
			passed, ok := s.fields[param]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: %s: cannot see the maps put into $%s", s.pos, s.stmt, param))
				continue
			}
			var pk []string
			for k, typ := range passed {
				pk = append(pk, k)
				if !driverTypes[typ] {
					problems = append(problems, fmt.Sprintf("%s: %s: $%s field %q is passed as %s", s.pos, s.stmt, param, k, typ))
				}
			}
			sort.Strings(pk)
			if strings.Join(pk, ",") != strings.Join(fields, ",") {
				problems = append(problems, fmt.Sprintf("%s: %s reads %s from $%s but the code puts %s", s.pos, s.stmt, strings.Join(fields, ", "), param, strings.Join(pk, ", ")))
			}
		}
	}
	for name, q := range consts {
		if used[name] {
			continue
		}
		if other[name] == 0 {
			problems = append(problems, fmt.Sprintf("%s is never sent", name))
		} else if len(statementParams(q)) > 0 {
			problems = append(problems, fmt.Sprintf("%s uses parameters but is never sent with a parameter map", name))
		}
	}
	sort.Strings(problems)
	return problems
}

// TestEveryParameterIsPassedWithADriverType maps each statement's $parameters to
// the parameter maps of its call sites: same names, Go types the driver maps as
// intended, and for unwound lists of maps the same element fields.
func TestEveryParameterIsPassedWithADriverType(t *testing.T) {
	consts := statementConstants(t)
	sites, other := packageCallSites(t, consts)
	for _, p := range checkParams(consts, sites, other) {
		t.Error(p)
	}
}

// TestTheParameterCheckCatchesARenamedParameter renames parameters and element fields
// in the statements only (not at the call sites) and expects the check to say so.
func TestTheParameterCheckCatchesARenamedParameter(t *testing.T) {
	consts := statementConstants(t)
	sites, other := packageCallSites(t, consts)
	for _, c := range []struct{ stmt, from, to string }{
		{"cypherExportNodes", "$ws", "$workspace"},
		{"cypherDeleteNodes", "$ids", "$nodeIDs"},
		{"cypherUpsertEdges", "e.linking_column", "e.linkingColumn"},
		{"cypherDeleteEdges", "$keys", "$edgeKeys"},
	} {
		renamed := map[string]string{}
		for k, v := range consts {
			renamed[k] = v
		}
		if !strings.Contains(renamed[c.stmt], c.from) {
			t.Fatalf("%s does not contain %s", c.stmt, c.from)
		}
		renamed[c.stmt] = strings.ReplaceAll(renamed[c.stmt], c.from, c.to)
		problems := checkParams(renamed, sites, other)
		found := false
		for _, p := range problems {
			if strings.Contains(p, c.stmt) {
				found = true
			}
		}
		if !found {
			t.Errorf("renaming %s to %s in %s went unnoticed", c.from, c.to, c.stmt)
		}
	}
}
