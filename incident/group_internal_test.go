package incident

import (
	"context"
	"testing"

	"github.com/vigia-data/vigia"
)

func TestRootIsTheMostUpstreamMember(t *testing.T) {
	cases := []struct {
		name    string
		members []string
		reaches map[string][]string
		want    string
	}{
		{"chain", []string{"b", "c", "a"}, map[string][]string{"a": {"b", "c"}, "b": {"c"}}, "a"},
		{"two sources, the one reaching more wins", []string{"x", "y", "z"}, map[string][]string{"y": {"z"}, "x": {}}, "y"},
		{"tie on reach: smallest id", []string{"q", "p"}, map[string][]string{}, "p"},
		{"cycle: first member", []string{"m", "n"}, map[string][]string{"m": {"n"}, "n": {"m"}}, "m"},
	}
	for _, c := range cases {
		if got := rootOf(c.members, c.reaches); got != c.want {
			t.Errorf("%s: root %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSeverityIsTheWorstOfTheIssues(t *testing.T) {
	sev := "info"
	for _, s := range []string{"warning", "info", "critical", "warning"} {
		sev = maxSeverity(sev, s)
	}
	if sev != "critical" {
		t.Fatalf("severity %q, want critical", sev)
	}
	if got := maxSeverity("warning", "info"); got != "warning" {
		t.Fatalf("warning then info: %q", got)
	}
}

func TestIncidentsChecksWindowAndStatusBeforeReading(t *testing.T) {
	// No store and no lineage: a bad filter must be refused before either is called.
	s := NewService(nil, nil, nil)
	ctx := vigia.WithPrincipal(context.Background(), vigia.Principal{WorkspaceID: "w", UserID: "u", Role: vigia.RoleViewer})
	bad := "closed"
	_, err := s.Incidents(ctx, Filter{Status: &bad, Page: vigia.Page{Limit: 0, Offset: -1}})
	if !vigia.IsKind(err, vigia.KindInvalid) {
		t.Fatalf("want invalid, got %v", err)
	}
	var names []string
	for _, f := range vigia.FieldsOf(err) {
		names = append(names, f.Loc[len(f.Loc)-1]+":"+f.Type)
	}
	want := []string{"limit:greater_than_equal", "offset:greater_than_equal", "status:enum"}
	if len(names) != len(want) {
		t.Fatalf("items %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("items %v, want %v", names, want)
		}
	}
}
