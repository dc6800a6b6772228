package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
)

// newRule creates an active rule on a dataset at minute n.
func (f *fx) newRule(ws, datasetID, typ, severity string, n int, p rule.Params) string {
	f.t.Helper()
	id := vigia.NewID()
	f.must(f.db.Rules().CreateRule(f.ctx, rule.Rule{ID: id, WorkspaceID: ws, DatasetID: datasetID, Type: typ, Name: typ + " rule",
		Severity: severity, Params: p, Active: true, CreatedBy: "tester", CreatedAt: at(n), UpdatedAt: at(n)}))
	return id
}

func TestRules(t *testing.T) {
	f := newFx(t)
	s := f.db.Rules()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "customers", "secret")
	f.restrict(ws, ds[2:])
	notNull := f.newRule(ws, ds[0], "not_null", "critical", 1, rule.Params{Column: "id"})
	ref := f.newRule(ws, ds[0], "referential", "warning", 2, rule.Params{Column: "name", RefDatasetID: ds[1], RefColumn: "id"})
	minRows := f.newRule(ws, ds[1], "row_count_min", "info", 3, rule.Params{MinRows: vigia.Ptr[int64](0)})
	hidden := f.newRule(ws, ds[2], "unique", "critical", 4, rule.Params{Columns: []string{"id", "name"}})
	f.fails(vigia.KindInternal, "a rule type the schema refuses", func(ctx ctxT) error {
		return s.CreateRule(ctx, rule.Rule{ID: vigia.NewID(), WorkspaceID: ws, DatasetID: ds[0], Type: "magic", Severity: "info",
			Active: true, CreatedBy: "t", CreatedAt: t0, UpdatedAt: t0})
	})
	f.fails(vigia.KindNotFound, "a rule on a dataset that does not exist", func(ctx ctxT) error {
		return s.CreateRule(ctx, rule.Rule{ID: vigia.NewID(), WorkspaceID: ws, DatasetID: vigia.NewID(), Type: "not_null", Severity: "info",
			Active: true, CreatedBy: "t", CreatedAt: t0, UpdatedAt: t0})
	})

	// A scan's results become the rules' last results; a failed rule's issue is current.
	sc := f.newScan(ws, conn, 5)
	issueID := vigia.NewID()
	f.result(ws, ds[0], sc, 5, 60, func(r *scan.DatasetResult) {
		r.RuleResults = []scan.RuleResult{{RuleID: notNull, Status: quality.RuleFailed, Observed: vigia.Ptr(3.0), Threshold: vigia.Ptr(0.0)},
			{RuleID: ref, Status: quality.RuleNotEvaluated, ReasonCode: "ref_dropped", ReasonParams: map[string]any{"ref": "x"}},
			{RuleID: vigia.NewID(), Status: quality.RulePassed}} // a rule deleted meanwhile leaves nothing
		r.NewIssues = []scan.NewIssue{{ID: issueID, Type: "rule", Subtype: "not_null", Severity: "critical", Title: "nulls", RuleID: notNull}}
	})

	r, err := s.RuleByID(f.ctx, v, notNull)
	f.must(err)
	if r.DatasetSchema != "public" || r.DatasetTable != "orders" || r.ConnectionKind != "postgres" || r.Params.Column != "id" ||
		r.LastResult == nil || r.LastResult.Status != "failed" || *r.LastResult.Observed != 3 || r.CurrentIssueID == nil || *r.CurrentIssueID != issueID {
		t.Fatalf("rule with its last result %+v", r)
	}
	rr, err := s.RuleByID(f.ctx, v, ref)
	f.must(err)
	if rr.RefDataset == nil || rr.RefDataset.ID != ds[1] || rr.LastResult.Reason == nil || rr.LastResult.Reason.Code != "ref_dropped" {
		t.Fatalf("referential rule %+v", rr)
	}
	f.fails(vigia.KindNotFound, "a rule on a restricted dataset", func(ctx ctxT) error { _, err := s.RuleByID(ctx, member(ws), hidden); return err })
	f.fails(vigia.KindNotFound, "another workspace's rule", func(ctx ctxT) error { _, err := s.RuleByID(ctx, f.workspace(), notNull); return err })

	list := func(vw catalogViewer, flt rule.Filter) ([]string, int) {
		t.Helper()
		if flt.Page.Limit == 0 {
			flt.Page.Limit = 10
		}
		l, err := s.Rules(f.ctx, vw, flt)
		f.must(err)
		return names(l.Items, func(r rule.Rule) string { return r.ID }), l.Total
	}
	if got, n := list(v, rule.Filter{}); n != 4 || !slices.Equal(got, []string{notNull, ref, minRows, hidden}) {
		t.Fatalf("rules oldest first: %d", n)
	}
	if got, n := list(member(ws), rule.Filter{Page: vigia.Page{Limit: 2, Offset: 2}}); n != 3 || !slices.Equal(got, []string{minRows}) {
		t.Fatalf("a member's last page: %v of %d", got, n)
	}
	if got, _ := list(v, rule.Filter{DatasetID: &ds[0], Severity: vigia.Ptr("warning")}); !slices.Equal(got, []string{ref}) {
		t.Fatalf("by dataset and severity: %v", got)
	}
	if got, _ := list(v, rule.Filter{RuleType: vigia.Ptr("row_count_min")}); !slices.Equal(got, []string{minRows}) {
		t.Fatalf("by type: %v", got)
	}
	if got, n := list(v, rule.Filter{Status: vigia.Ptr("failed")}); n != 1 || !slices.Equal(got, []string{notNull}) {
		t.Fatalf("by last status: %v", got)
	}
	if _, n := list(f.workspace(), rule.Filter{}); n != 0 {
		t.Fatalf("another workspace lists %d rules", n)
	}

	nm, err := s.VisibleDatasetNames(f.ctx, member(ws), []string{ds[0], ds[2], "not-an-id"})
	f.must(err)
	if len(nm) != 1 || nm[ds[0]] != "public.orders" {
		t.Fatalf("visible names %v", nm)
	}

	// Update, deactivate, and the scan's view of the active rules.
	r.Severity, r.Name, r.Params = "warning", "ids present", rule.Params{Column: "name"}
	r.UpdatedAt = at(6)
	f.must(s.UpdateRule(f.ctx, r))
	m := rr
	m.Active = false
	f.must(s.UpdateRule(f.ctx, m))
	intruder := r
	intruder.WorkspaceID = f.workspace().WorkspaceID
	f.fails(vigia.KindNotFound, "updating from another workspace", func(ctx ctxT) error { return s.UpdateRule(ctx, intruder) })
	active, err := s.ActiveRulesOf(f.ctx, ds[0])
	f.must(err)
	if len(active) != 1 || active[0].ID != notNull || active[0].Severity != "warning" || active[0].Params.Column != "name" {
		t.Fatalf("active rules %+v", active)
	}
	f.newRule(ws, ds[1], "referential", "info", 7, rule.Params{Column: "id", RefDatasetID: ds[0], RefColumn: "id"})
	act, _ := s.ActiveRulesOf(f.ctx, ds[1])
	if len(act) != 2 || act[1].Ref == nil || act[1].Ref.ConnectionID != conn || !slices.Equal(act[1].Ref.Columns, []string{"id", "name"}) {
		t.Fatalf("a referential rule's reference %+v", act)
	}

	// Deleting resolves the current issue with its history; another workspace cannot.
	f.fails(vigia.KindNotFound, "deleting from another workspace", func(ctx ctxT) error {
		return s.DeleteRule(ctx, f.workspace().WorkspaceID, notNull, "user:x", at(8))
	})
	f.must(s.DeleteRule(f.ctx, ws, notNull, "user:tester", at(8)))
	f.fails(vigia.KindNotFound, "a deleted rule", func(ctx ctxT) error { _, err := s.RuleByID(ctx, v, notNull); return err })
	f.fails(vigia.KindNotFound, "deleting twice", func(ctx ctxT) error { return s.DeleteRule(ctx, ws, notNull, "user:tester", at(9)) })
	is, err := f.db.Issues().IssueByID(f.ctx, v, issueID)
	f.must(err)
	if is.Status != "resolved" || is.RuleCurrent || len(is.History) != 2 || is.History[1].Event != "rule_deleted" || is.History[1].Origin != "user:tester" {
		t.Fatalf("the deleted rule's issue %+v", is)
	}
}

func ruleMinRows(n int64) rule.Params { return rule.Params{MinRows: &n} }
