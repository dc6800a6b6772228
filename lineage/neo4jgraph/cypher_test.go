package neo4jgraph

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// statementConstants returns every Cypher statement constant of cypher.go (the names
// starting with "cypher"), by name, with its value as the compiler sees it. A new
// statement is checked by the tests below without being listed anywhere.
func statementConstants(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cypher.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Imports) != 0 {
		t.Fatal("cypher.go must stay free of imports: it holds the statements and nothing else")
	}
	pkg, err := new(types.Config).Check("neo4jgraph", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok || !strings.HasPrefix(name, "cypher") || c.Val().Kind() != constant.String {
			continue
		}
		out[name] = constant.StringVal(c.Val())
	}
	if len(out) < 10 {
		t.Fatalf("found only %d statements in cypher.go", len(out))
	}
	return out
}

var paramRE = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// statementParams returns the $parameters a statement uses, sorted, without repeats.
func statementParams(q string) []string { return distinctMatches(paramRE, q) }

// distinctMatches returns re's first group over q, sorted, without repeats (never nil).
func distinctMatches(re *regexp.Regexp, q string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, m := range re.FindAllStringSubmatch(q, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// The graph vocabulary the statements may use: an unknown label, relationship type
// or property (a typo) is reported by the linter.
var (
	lintLabels            = []string{"VigiaNode"}
	lintRelationshipTypes = []string{"FEEDS"}
	lintPropertyKeys      = []string{"workspace_id", "id", "kind", "name", "type", "origin", "column_map", "column_level", "linking_column"}
)

type lintStatement struct {
	Name       string   `json:"name"`
	Query      string   `json:"query"`
	Parameters []string `json:"parameters"`
}

type lintResult struct {
	Name        string `json:"name"`
	Diagnostics []struct {
		Severity  int    `json:"severity"`
		Message   string `json:"message"`
		Line      int    `json:"line"`
		Character int    `json:"character"`
	} `json:"diagnostics"`
}

// cypherLinter installs the pinned npm project of testdata/cypherlint into a cache
// directory named after its lock file (once; later runs need no network) and returns
// the directory to run lint.mjs in. Node and npm come from Debian (.ci/run installs
// them when missing).
func cypherLinter(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed (Debian package nodejs; .ci/run installs it): the Cypher statements cannot be validated")
	}
	src := filepath.Join("testdata", "cypherlint")
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkgJSON, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(src, "lint.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	base := os.Getenv("VIGIA_CYPHERLINT_CACHE")
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		base = filepath.Join(cache, "vigia")
	}
	sum := sha256.Sum256(append(append([]byte{}, pkgJSON...), lock...))
	dir := filepath.Join(base, "cypherlint-"+hex.EncodeToString(sum[:])[:16])
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@neo4j-cypher", "language-support", "package.json")); err != nil {
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
		// Install next to the target and rename into place, so a half-finished
		// install is never taken for a finished one.
		tmp, err := os.MkdirTemp(base, "cypherlint-install-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		for name, b := range map[string][]byte{"package.json": pkgJSON, "package-lock.json": lock} {
			if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci of testdata/cypherlint: %v\n%s", err, out)
		}
		if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
			if _, statErr := os.Stat(dir); statErr != nil {
				t.Fatal(err)
			}
		}
	}
	// lint.mjs is small and may change without the lock file: always write the
	// current one (through a rename, for tests running at the same time).
	f, err := os.CreateTemp(dir, "lint-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(script); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, "lint.mjs")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lintCypher runs Neo4j's Cypher language library over the statements.
func lintCypher(t *testing.T, stmts []lintStatement) map[string]lintResult {
	t.Helper()
	dir := cypherLinter(t)
	in, err := json.Marshal(map[string]any{"labels": lintLabels, "relationshipTypes": lintRelationshipTypes,
		"propertyKeys": lintPropertyKeys, "statements": stmts})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "lint.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node lint.mjs: %v\n%s", err, stderr.String())
	}
	var res []lintResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("lint output: %v", err)
	}
	m := map[string]lintResult{}
	for _, r := range res {
		m[r.Name] = r
	}
	if len(m) != len(stmts) {
		t.Fatalf("linted %d of %d statements", len(m), len(stmts))
	}
	return m
}

// plantedBroken are statements that must fail the check, one per kind of mistake the
// check exists for; they prove the check can fail.
var plantedBroken = map[string]string{
	"plantedSyntax":        "MATCH (n:VigiaNode {workspace_id: $ws} RETURN n.id",
	"plantedUnknownFunc":   "MATCH (n:VigiaNode {workspace_id: $ws}) RETURN toStrin(n.id)",
	"plantedArgCount":      "MATCH (n:VigiaNode {workspace_id: $ws}) RETURN coalesce(), size(n.id, 1)",
	"plantedOutOfScope":    "MATCH (n:VigiaNode {workspace_id: $ws}) WITH n.id AS nid RETURN n.name",
	"plantedDeprecated":    "MATCH (n:VigiaNode {workspace_id: $ws}) RETURN id(n)",
	"plantedRemovedSyntax": "MATCH (n:VigiaNode) WHERE exists(n.name) RETURN n.id",
	"plantedPropertyTypo":  "MATCH (n:VigiaNode {workspace_id: $ws}) RETURN n.nmae",
	"plantedUnknownParam":  "MATCH (n:VigiaNode {workspace_id: $workspace}) RETURN n.id",
}

// TestEveryCypherStatementIsValidForNeo4j5 validates each statement of cypher.go with
// Neo4j's own Cypher language library: any diagnostic, error or warning (syntax,
// semantic analysis, unknown function, label, type or property, deprecated syntax),
// fails the test. The planted broken statements must each be reported.
func TestEveryCypherStatementIsValidForNeo4j5(t *testing.T) {
	consts := statementConstants(t)
	var stmts []lintStatement
	for name, q := range consts {
		stmts = append(stmts, lintStatement{Name: name, Query: q, Parameters: statementParams(q)})
	}
	for name, q := range plantedBroken {
		params := statementParams(q)
		if name == "plantedUnknownParam" {
			params = []string{"ws"} // the call site passes ws, the statement reads $workspace
		}
		stmts = append(stmts, lintStatement{Name: name, Query: q, Parameters: params})
	}
	res := lintCypher(t, stmts)
	for name := range consts {
		for _, d := range res[name].Diagnostics {
			t.Errorf("%s, line %d col %d: %s", name, d.Line+1, d.Character+1, d.Message)
		}
	}
	for name := range plantedBroken {
		if len(res[name].Diagnostics) == 0 {
			t.Errorf("planted broken statement %s passed the check", name)
		}
	}
}
