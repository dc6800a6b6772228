package issue_test

import (
	"fmt"
	"testing"

	"github.com/vigia-data/vigia/issue"
)

func TestNextStatus(t *testing.T) {
	cases := []struct {
		from, action, to, event string
		ok                      bool
	}{
		{"open", "acknowledge", "acknowledged", "acknowledged", true},
		{"acknowledged", "acknowledge", "", "", false},
		{"open", "resolve", "resolved", "resolved", true},
		{"acknowledged", "resolve", "resolved", "resolved", true},
		{"resolved", "resolve", "", "", false},
		{"ignored", "resolve", "", "", false},
		{"open", "ignore", "ignored", "ignored", true},
		{"acknowledged", "ignore_expected", "ignored", "ignored_expected", true},
		{"ignored", "ignore_expected", "", "", false},
		{"resolved", "reopen", "open", "reopened", true},
		{"ignored", "reopen", "open", "reopened", true},
		{"open", "reopen", "", "", false},
		{"acknowledged", "reopen", "", "", false},
		{"open", "delete", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.from+"/"+c.action, func(t *testing.T) {
			to, event, ok := issue.NextStatus(c.from, c.action)
			if ok != c.ok || ok && (to != c.to || event != c.event) {
				t.Fatalf("got %s %s %v; want %s %s %v", to, event, ok, c.to, c.event, c.ok)
			}
		})
	}
}

func TestBuildBoard(t *testing.T) {
	s := func(v string) *string { return &v }
	b := issue.BuildBoard([]issue.BoardRow{
		{Status: "open", Severity: "critical", TeamID: s("t2"), TeamName: s("zeta"), Count: 2},
		{Status: "open", Severity: "warning", TeamID: s("t2"), TeamName: s("zeta"), Count: 1},
		{Status: "open", Severity: "warning", Count: 4},
		{Status: "open", Severity: "info", TeamID: s("t1"), TeamName: s("alfa"), Count: 1},
		{Status: "ignored", Severity: "warning", Count: 3},
		{Status: "unknown", Severity: "warning", Count: 9},
	})
	if b.Total != 11 || len(b.Columns) != 4 || b.Columns[0].Count != 8 || b.Columns[0].BySeverity["warning"] != 5 ||
		b.Columns[1].Count != 0 || b.Columns[3].Status != "ignored" || b.Columns[3].Count != 3 {
		t.Fatalf("columns %+v total %d", b.Columns, b.Total)
	}
	var cells []string
	for _, c := range b.TeamCells {
		name := "none"
		if c.TeamName != nil {
			name = *c.TeamName
		}
		cells = append(cells, fmt.Sprintf("%s/%s=%d", c.Status, name, c.Count))
	}
	if got := fmt.Sprint(cells); got != "[open/alfa=1 open/zeta=3 open/none=4 ignored/none=3]" {
		t.Fatalf("cells %s", got)
	}
}

func TestTargetsFor(t *testing.T) {
	c, w := 4, 8
	tg := issue.Targets{CriticalHours: &c, WarningHours: &w}
	if *tg.For("critical") != 4 || *tg.For("warning") != 8 || tg.For("info") != nil {
		t.Fatal("targets per severity")
	}
}
