package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

func TestIssuesListAndChange(t *testing.T) {
	f := newFx(t)
	s := f.db.Issues()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "secret")
	f.restrict(ws, ds[1:])
	data := f.team(ws, "data")
	a := f.issue(ws, conn, ds[0], "critical", 1, nil)
	b := f.issue(ws, conn, ds[0], "warning", 2, func(ni *scan.NewIssue) { ni.Type, ni.Metric = "schema_drift", "schema" })
	c := f.issue(ws, conn, ds[0], "info", 3, nil)
	hidden := f.issue(ws, conn, ds[1], "critical", 4, nil)

	list := func(vw catalogViewer, flt issue.StoreFilter) ([]string, int) {
		t.Helper()
		if flt.Page.Limit == 0 {
			flt.Page.Limit = 10
		}
		l, err := s.Issues(f.ctx, vw, flt)
		f.must(err)
		return names(l.Items, func(i issue.Issue) string { return i.ID }), l.Total
	}
	if got, n := list(v, issue.StoreFilter{}); n != 4 || !slices.Equal(got, []string{hidden, c, b, a}) {
		t.Fatalf("issues newest first: %d", n)
	}
	if got, n := list(member(ws), issue.StoreFilter{Page: vigia.Page{Limit: 2, Offset: 1}}); n != 3 || !slices.Equal(got, []string{b, a}) {
		t.Fatalf("a member's second page: %v of %d", got, n)
	}
	if got, _ := list(v, issue.StoreFilter{Severities: []string{"critical", "warning"}, Types: []string{"anomaly"}, DatasetID: &ds[0]}); !slices.Equal(got, []string{a}) {
		t.Fatalf("by severity, type and dataset: %v", got)
	}
	if _, n := list(f.workspace(), issue.StoreFilter{}); n != 0 {
		t.Fatalf("another workspace lists %d issues", n)
	}

	// A status change locks, writes and keeps history; the assignee filters lists.
	locked, err := s.LockIssue(f.ctx, ws, &v, a)
	f.must(err)
	f.fails(vigia.KindNotFound, "locking a restricted issue as a member", func(ctx ctxT) error {
		vw := member(ws)
		_, err := s.LockIssue(ctx, ws, &vw, hidden)
		return err
	})
	f.fails(vigia.KindNotFound, "locking another workspace's issue", func(ctx ctxT) error {
		_, err := s.LockIssue(ctx, f.workspace().WorkspaceID, nil, a)
		return err
	})
	f.must(s.ApplyChange(f.ctx, issue.Change{IssueID: a, WorkspaceID: ws, From: locked.Status, To: "acknowledged", Event: "acknowledged",
		Origin: "user:ana", Note: "looking", At: at(10)}))
	f.must(s.ApplyChange(f.ctx, issue.Change{IssueID: a, WorkspaceID: ws, From: "acknowledged", To: "resolved", Event: "resolved",
		Origin: "user:ana", Reason: vigia.Ptr("expected"), At: at(11)}))
	if ok, err := s.TeamExists(f.ctx, ws, data); err != nil || !ok {
		t.Fatalf("team exists %v %v", ok, err)
	}
	if ok, _ := s.TeamExists(f.ctx, f.workspace().WorkspaceID, data); ok {
		t.Fatal("another workspace's team exists")
	}
	f.must(s.SetAssignee(f.ctx, issue.Change{IssueID: b, WorkspaceID: ws, From: "open", To: "open", Event: "assigned", Origin: "user:ana", At: at(12)}, &data))
	got, err := s.IssueByID(f.ctx, v, a)
	f.must(err)
	if got.Status != "resolved" || *got.ResolutionReason != "expected" || !got.AcknowledgedAt.Equal(at(10)) || !got.ResolvedAt.Equal(at(11)) ||
		len(got.History) != 3 || got.History[0].Event != "opened" || got.History[1].Note != "looking" || got.DatasetName != "public.orders" {
		t.Fatalf("changed issue %+v", got)
	}
	hs, err := s.Histories(f.ctx, member(ws), []string{a, b, hidden})
	f.must(err)
	if len(hs) != 2 || len(hs[b]) != 2 || hs[b][1].Event != "assigned" {
		t.Fatalf("histories a member sees %+v", hs)
	}
	if got, _ := list(v, issue.StoreFilter{TeamIDs: []string{data}}); !slices.Equal(got, []string{b}) {
		t.Fatalf("by team: %v", got)
	}
	if got, _ := list(v, issue.StoreFilter{NoTeam: true, Statuses: []string{"open"}}); !slices.Equal(got, []string{hidden, c}) {
		t.Fatalf("open without a team: %v", got)
	}
	if got, _ := list(v, issue.StoreFilter{TeamIDs: []string{}}); len(got) != 0 {
		t.Fatalf("an empty team list gives %v", got)
	}
	board, err := s.Board(f.ctx, member(ws), issue.StoreFilter{})
	f.must(err)
	counts := map[string]int{}
	for _, r := range board {
		team := ""
		if r.TeamName != nil {
			team = *r.TeamName
		}
		counts[r.Status+"/"+r.Severity+"/"+team] += r.Count
	}
	if len(counts) != 3 || counts["resolved/critical/"] != 1 || counts["open/warning/data"] != 1 || counts["open/info/"] != 1 {
		t.Fatalf("board %v", counts)
	}
	f.fails(vigia.KindInternal, "a status the schema refuses", func(ctx ctxT) error {
		return s.ApplyChange(ctx, issue.Change{IssueID: c, WorkspaceID: ws, From: "open", To: "closed", Event: "x", Origin: "user:ana", At: at(13)})
	})
	f.fails(vigia.KindNotFound, "assigning a team that does not exist", func(ctx ctxT) error {
		return s.SetAssignee(ctx, issue.Change{IssueID: c, WorkspaceID: ws, From: "open", To: "open", Event: "assigned", Origin: "u", At: at(13)}, vigia.Ptr(vigia.NewID()))
	})
	// Deleting the team unassigns its issues.
	f.must(f.db.Teams().DeleteTeam(f.ctx, ws, data))
	if got, _ := s.IssueByID(f.ctx, v, b); got.AssigneeTeamID != nil {
		t.Fatalf("an issue keeps a deleted team %v", *got.AssigneeTeamID)
	}
}

func TestIssueRuleCurrentAndTuning(t *testing.T) {
	f := newFx(t)
	s := f.db.Issues()
	ws := f.workspace().WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders")[0]
	rid := f.newRule(ws, ds, "not_null", "critical", 1, rule.Params{Column: "id"})
	first := f.issue(ws, conn, ds, "critical", 2, func(ni *scan.NewIssue) { ni.Type, ni.RuleID = "rule", rid })
	if other, err := s.OtherCurrentIssue(f.ctx, rid, first); err != nil || other {
		t.Fatalf("another current issue: %v %v", other, err)
	}
	f.fails(vigia.KindConflict, "two current issues of a rule", func(ctx ctxT) error {
		return f.db.Scans().SaveDatasetResult(ctx, scan.DatasetResult{DatasetID: ds, WorkspaceID: ws, ScanID: f.newScan(ws, conn, 3), Seq: 3, At: at(3),
			Profile: &source.TableProfile{}, Metrics: scan.Metrics{}, Verdict: scanVerdictPass(),
			NewIssues: []scan.NewIssue{{ID: vigia.NewID(), Type: "rule", Severity: "critical", Title: "t", RuleID: rid}}})
	})
	if other, _ := s.OtherCurrentIssue(f.ctx, rid, vigia.NewID()); !other {
		t.Fatal("the rule's current issue is not seen from another")
	}

	// Tuning: the default until locked, then saved values.
	tn, ok, err := s.TuningOf(f.ctx, ds, "volume", "")
	f.must(err)
	if ok || tn.Threshold != quality.DefaultThreshold {
		t.Fatalf("tuning before any %+v %v", tn, ok)
	}
	tn, err = s.LockTuning(f.ctx, ds, "volume", "", at(4))
	f.must(err)
	tn.Threshold, tn.Ignored, tn.Silenced = 5, 2, true
	f.must(s.SaveTuning(f.ctx, ds, "volume", "", tn, at(5)))
	if again, _ := s.LockTuning(f.ctx, ds, "volume", "", at(6)); again != tn {
		t.Fatalf("locked again %+v, saved %+v", again, tn)
	}
	rows, err := f.db.Scans().Tunings(f.ctx, ds)
	f.must(err)
	if len(rows) != 1 || rows[0].Threshold != 5 || !rows[0].Silenced || rows[0].Retune != nil {
		t.Fatalf("tunings %+v", rows)
	}

	// Retunes: one pending per metric; decided, it leaves room for the next.
	if p, err := s.PendingRetune(f.ctx, ds, "volume", ""); err != nil || p != nil {
		t.Fatalf("a pending retune before any: %v %v", p, err)
	}
	rt := issue.Retune{ID: vigia.NewID(), WorkspaceID: ws, DatasetID: ds, Metric: "volume", Action: "silence", FromThreshold: 5,
		IssueID: &first, RequestedBy: "ana", RequestedAt: at(7)}
	f.must(s.CreateRetune(f.ctx, rt))
	dup := rt
	dup.ID = vigia.NewID()
	f.must(s.CreateRetune(f.ctx, dup)) // a second pending one is not recorded
	p, err := s.PendingRetune(f.ctx, ds, "volume", "")
	f.must(err)
	if p == nil || p.ID != rt.ID || p.Status != "pending" {
		t.Fatalf("pending retune %+v", p)
	}
	if rows, _ := f.db.Scans().Tunings(f.ctx, ds); rows[0].Retune == nil || rows[0].Retune.ID != rt.ID {
		t.Fatalf("the tuning's retune %+v", rows[0].Retune)
	}
	f.fails(vigia.KindNotFound, "another workspace's retune", func(ctx ctxT) error {
		_, err := s.LockRetune(ctx, f.workspace().WorkspaceID, ds, rt.ID)
		return err
	})
	l, err := s.LockRetune(f.ctx, ws, ds, rt.ID)
	f.must(err)
	l.Status, l.DecidedBy, l.DecidedAt = "approved", vigia.Ptr("bea"), vigia.Ptr(at(8))
	f.must(s.DecideRetune(f.ctx, l))
	if p, _ := s.PendingRetune(f.ctx, ds, "volume", ""); p != nil {
		t.Fatalf("still pending after the decision: %+v", p)
	}
	f.must(s.CreateRetune(f.ctx, dup))
	if p, _ := s.PendingRetune(f.ctx, ds, "volume", ""); p == nil || p.ID != dup.ID {
		t.Fatalf("the next retune %+v", p)
	}
}

func TestIssueTargetsAndBreaches(t *testing.T) {
	f := newFx(t)
	s := f.db.Issues()
	v := f.workspace()
	ws := v.WorkspaceID
	tg, err := s.Targets(f.ctx, ws)
	f.must(err)
	if !tg.Default || *tg.CriticalHours != issue.DefaultCriticalHours || *tg.WarningHours != issue.DefaultWarningHours {
		t.Fatalf("default targets %+v", tg)
	}
	f.must(s.SetTargets(f.ctx, ws, issue.Targets{CriticalHours: vigia.Ptr(2), WarningHours: nil}, "ana", at(0)))
	f.must(s.SetTargets(f.ctx, ws, issue.Targets{CriticalHours: vigia.Ptr(1), WarningHours: nil}, "ana", at(0)))
	if tg, _ = s.Targets(f.ctx, ws); tg.Default || *tg.CriticalHours != 1 || tg.WarningHours != nil {
		t.Fatalf("set targets %+v", tg)
	}
	f.fails(vigia.KindInternal, "a target out of the schema's bounds", func(ctx ctxT) error {
		return s.SetTargets(ctx, ws, issue.Targets{CriticalHours: vigia.Ptr(0)}, "ana", at(0))
	})
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders")[0]
	crit := f.issue(ws, conn, ds, "critical", 0, nil)
	f.issue(ws, conn, ds, "warning", 0, nil) // no warning target: never due
	acked := f.issue(ws, conn, ds, "critical", 0, nil)
	f.must(s.ApplyChange(f.ctx, issue.Change{IssueID: acked, WorkspaceID: ws, From: "open", To: "resolved", Event: "resolved", Origin: "u", At: at(30)}))

	if b, err := s.MarkBreaches(f.ctx, at(59), 10); err != nil || len(b) != 0 {
		t.Fatalf("breaches before the target: %+v %v", b, err)
	}
	b, err := s.MarkBreaches(f.ctx, at(90), 10)
	f.must(err)
	if len(b) != 1 || b[0].IssueID != crit || b[0].TargetHours != 1 || !b[0].BreachedAt.Equal(at(60)) {
		t.Fatalf("breaches %+v", b)
	}
	if again, _ := s.MarkBreaches(f.ctx, at(120), 10); len(again) != 0 {
		t.Fatalf("breached twice: %+v", again)
	}
	if n := f.count(`SELECT count(*) FROM events WHERE workspace_id = $1 AND type = $2 AND subject_id = $3`, ws, issue.EventSLABreached, crit); n != 1 {
		t.Fatalf("%d breach events", n)
	}
	l, err := s.Issues(f.ctx, v, issue.StoreFilter{SLABreached: true, Page: vigia.Page{Limit: 10}})
	f.must(err)
	if l.Total != 1 || l.Items[0].ID != crit || l.Items[0].SLABreachedAt == nil {
		t.Fatalf("breached issues %+v", l)
	}
}
