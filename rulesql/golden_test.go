package rulesql_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vigia-data/vigia/rulesql"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const sectionMark = "-- ==== "

// renderGolden is the golden file of one dialect: one section per rule, holding the
// query or, without one, the reason.
func renderGolden(tb testing.TB, d rulesql.Dialect) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, nr := range goldenRules() {
		sql, ok, reason, err := rulesql.FailingRowsSQL(nr.rule, d, 100)
		if err != nil {
			tb.Fatalf("%s/%s: %v", d, nr.name, err)
		}
		if !ok {
			sql = "-- no row-level query: " + reason + "\n"
		}
		out[nr.name] = sql
	}
	return out
}

func goldenPath(d rulesql.Dialect) string {
	return filepath.Join("testdata", "golden", string(d)+".sql")
}

func readGolden(tb testing.TB, d rulesql.Dialect) map[string]string {
	tb.Helper()
	raw, err := os.ReadFile(goldenPath(d))
	if err != nil {
		tb.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	out := map[string]string{}
	for _, sec := range strings.Split(string(raw), sectionMark)[1:] {
		name, body, _ := strings.Cut(sec, "\n")
		out[name] = strings.TrimSuffix(body, "\n")
	}
	return out
}

func writeGolden(tb testing.TB, d rulesql.Dialect, got map[string]string) {
	tb.Helper()
	var b strings.Builder
	for _, nr := range goldenRules() {
		b.WriteString(sectionMark + nr.name + "\n" + got[nr.name] + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(goldenPath(d)), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(goldenPath(d), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func TestFailingRowsSQLMatchesGoldenTextInEveryDialect(t *testing.T) {
	for _, d := range rulesql.Dialects() {
		got := renderGolden(t, d)
		if *update {
			writeGolden(t, d, got)
			continue
		}
		want := readGolden(t, d)
		for _, nr := range goldenRules() {
			t.Run(string(d)+"/"+nr.name, func(t *testing.T) {
				w, ok := want[nr.name]
				if !ok {
					t.Fatalf("no golden section %q in %s", nr.name, goldenPath(d))
				}
				if diff := cmp.Diff(w, got[nr.name]); diff != "" {
					t.Errorf("query differs from golden (-want +got):\n%s", diff)
				}
			})
		}
	}
}
