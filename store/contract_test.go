package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
)

// contractDoc is a one-table contract with the given columns.
func contractDoc(version string, cols ...string) contract.Document {
	d := contract.Document{APIVersion: contract.APIVersion, Kind: "DataContract", ID: "x", Version: version, Status: "active",
		Schema: []contract.Object{{Name: "t"}}}
	for _, c := range cols {
		typ := "text"
		if c == "id" {
			typ = "integer"
		}
		d.Schema[0].Properties = append(d.Schema[0].Properties, contract.Property{Name: c, PhysicalType: typ, Required: true})
	}
	return d
}

func TestContracts(t *testing.T) {
	f := newFx(t)
	s := f.db.Contracts()
	v, conn, ds := f.warehouse("orders", "customers")
	ws := v.WorkspaceID
	otherWS, _, otherDS := f.warehouse("foreign")
	mgr := f.team(ws, "producers")
	dom := f.domain(ws, "sales", false, ds[0])
	f.exec(`UPDATE domains SET owner_name = 'Equipa', sla = '{"availability_objective_pct": 99.5, "retention_days": 30, "dimension_targets": {"completude": 90}}' WHERE id = $1`, dom)
	f.exec(`INSERT INTO domain_grants (domain_id, team_id, role) VALUES ($1, $2, 'manager')`, dom, mgr)

	doms, err := s.DatasetDomains(f.ctx, ds[0])
	f.must(err)
	if len(doms) != 1 || doms[0].Name != "sales" || *doms[0].OwnerName != "Equipa" || *doms[0].AvailabilityObjectivePct != 99.5 ||
		*doms[0].RetentionDays != 30 || doms[0].DimensionTargets["completude"] != 90 || len(doms[0].Teams) != 1 ||
		doms[0].Teams[0].TeamID != mgr || doms[0].Teams[0].Role != "manager" {
		t.Fatalf("domains %+v", doms)
	}

	t.Run("Versions", func(t *testing.T) {
		if _, ok, err := s.ActiveVersion(f.ctx, ds[0]); ok || err != nil {
			t.Fatalf("active before any version: %v %v", ok, err)
		}
		for i, n := range []contract.Version{{Major: 1}, {Major: 1, Minor: 1}, {Major: 2}} {
			f.must(s.CreateVersion(f.ctx, contract.VersionRecord{ID: vigia.NewID(), WorkspaceID: ws, DatasetID: ds[0], Number: n, Bump: "minor",
				Document: contractDoc(n.String(), "id", "name"), Changes: []contract.Change{{Kind: "added", Property: "name", Breaking: i == 2}},
				Summary: "s", AuthorID: "ana", AcceptedBy: "bea", CreatedAt: at(i)}))
		}
		f.fails(vigia.KindConflict, "a version number taken", func(ctx ctxT) error {
			return s.CreateVersion(ctx, contract.VersionRecord{ID: vigia.NewID(), WorkspaceID: ws, DatasetID: ds[0], Number: contract.Version{Major: 2},
				Bump: "major", Document: contractDoc("2.0.0"), CreatedAt: t0})
		})
		a, ok, err := s.ActiveVersion(f.ctx, ds[0])
		f.must(err)
		if !ok || a.Number.String() != "2.0.0" || a.Document.Version != "2.0.0" || len(a.Changes) != 1 || !a.Changes[0].Breaking || a.AcceptedBy != "bea" {
			t.Fatalf("active %+v", a)
		}
		list, err := s.Versions(f.ctx, ds[0], vigia.Page{Limit: 2, Offset: 1})
		f.must(err)
		if list.Total != 3 || !slices.Equal(names(list.Items, func(v contract.VersionRecord) string { return v.Number.String() }), []string{"1.1.0", "1.0.0"}) {
			t.Fatalf("versions newest first %+v", list)
		}
		if _, err := s.VersionByNumber(f.ctx, ds[0], contract.Version{Major: 3}); !vigia.IsKind(err, vigia.KindNotFound) {
			t.Fatalf("unknown number: %v", err)
		}
		all, err := s.ActiveVersions(f.ctx, []string{ds[0], ds[1]})
		f.must(err)
		if len(all) != 1 || all[ds[0]].Number.String() != "2.0.0" {
			t.Fatalf("active versions %+v", all)
		}
	})

	t.Run("Proposals", func(t *testing.T) {
		ids := []string{}
		for i, status := range []string{"open", "open"} {
			p := contract.Proposal{ID: vigia.NewID(), WorkspaceID: ws, DatasetID: ds[1], Status: status, Origin: "observed",
				Document: contractDoc("0.0.0", "id"), AuthorID: "ana", CreatedAt: at(i), UpdatedAt: at(i)}
			f.must(s.CreateProposal(f.ctx, p))
			ids = append(ids, p.ID)
		}
		f.must(s.AddComment(f.ctx, contract.Comment{ID: vigia.NewID(), ProposalID: ids[0], AuthorID: "bea", Body: "ok", CreatedAt: at(5)}))
		p, err := s.Proposal(f.ctx, ds[1], ids[0])
		f.must(err)
		if len(p.Comments) != 1 || p.Comments[0].Body != "ok" || p.Document.Table().Properties[0].Name != "id" {
			t.Fatalf("proposal %+v", p)
		}
		if _, err := s.Proposal(f.ctx, ds[0], ids[0]); !vigia.IsKind(err, vigia.KindNotFound) {
			t.Fatalf("a proposal under another dataset: %v", err)
		}
		by, version, now := "bea", "1.0.0", at(9)
		p.Status, p.DecidedBy, p.DecidedAt, p.Version, p.UpdatedAt = "accepted", &by, &now, &version, now
		f.must(s.DecideProposal(f.ctx, p))
		f.fails(vigia.KindConflict, "deciding a decided proposal", func(ctx ctxT) error { return s.DecideProposal(ctx, p) })
		open := "open"
		list, err := s.Proposals(f.ctx, ds[1], &open, vigia.Page{Limit: 10})
		f.must(err)
		if list.Total != 1 || list.Items[0].ID != ids[1] {
			t.Fatalf("open proposals %+v", list)
		}
		list, err = s.Proposals(f.ctx, ds[1], nil, vigia.Page{Limit: 10})
		f.must(err)
		if list.Total != 2 || list.Items[0].ID != ids[1] || *list.Items[1].Version != "1.0.0" {
			t.Fatalf("proposals newest first %+v", list)
		}
	})

	t.Run("ChecksOpenAndResolveOneIssue", func(t *testing.T) {
		// ds[0]'s active contract (2.0.0) names id and name; the table has both.
		notNull := f.newRule(ws, ds[0], "not_null", "critical", 1, rule.Params{Column: "name"})
		sc := f.newScan(ws, conn, 1)
		f.result(ws, ds[0], sc, 1, 90, func(r *scan.DatasetResult) {
			r.RuleResults = []scan.RuleResult{{RuleID: notNull, Status: "failed"}}
			r.Columns[1].Unique = true
		})
		d, err := f.db.Catalog().DatasetByID(f.ctx, v, ds[0])
		f.must(err)
		if !d.Columns[1].Unique || d.Columns[0].Unique {
			t.Fatalf("declared unique columns %+v", d.Columns)
		}
		subs, err := s.Subjects(f.ctx, ws, conn, nil)
		f.must(err)
		if len(subs) != 1 || subs[0].DatasetID != ds[0] || len(subs[0].Columns) != 2 || subs[0].Columns[1].Profile == nil || !subs[0].Columns[1].Unique ||
			subs[0].Columns[1].Profile.NullCount != 1 || len(subs[0].Rules) != 1 || subs[0].Rules[0].Status != "failed" ||
			subs[0].Active.Number.String() != "2.0.0" {
			t.Fatalf("subjects %+v", subs)
		}
		if other, err := s.Subjects(f.ctx, otherWS.WorkspaceID, "", otherDS); err != nil || len(other) != 0 {
			t.Fatalf("a dataset without contract is no subject: %v %v", other, err)
		}
		openIssues := func() int {
			return f.count(`SELECT count(*) FROM issues WHERE dataset_id = $1 AND type = 'contract' AND status = 'open'`, ds[0])
		}
		bad := contract.CheckResult{WorkspaceID: ws, DatasetID: ds[0], DatasetName: "public.orders", ScanID: &sc, Version: "2.0.0",
			Violations: contract.Check(subs[0].Active.Document, subs[0].Columns, subs[0].Rules), At: at(2)}
		if len(bad.Violations) != 1 || bad.Violations[0].Code != contract.ViolationNulls {
			t.Fatalf("violations %+v", bad.Violations)
		}
		f.must(s.SaveCheck(f.ctx, bad))
		f.must(s.SaveCheck(f.ctx, bad)) // the consumer's retry for the same scan
		if n := openIssues(); n != 1 {
			t.Fatalf("%d open contract issues, want 1", n)
		}
		if n := f.count(`SELECT detections FROM issues WHERE dataset_id = $1 AND type = 'contract'`, ds[0]); n != 1 {
			t.Fatalf("a retry counted a detection: %d", n)
		}
		st, err := s.States(f.ctx, []string{ds[0], ds[1]})
		f.must(err)
		if len(st) != 1 || st[ds[0]].Valid || st[ds[0]].Version != "2.0.0" || st[ds[0]].Violations[0].Column != "name" {
			t.Fatalf("states %+v", st)
		}
		good := bad
		good.Violations = nil
		f.must(s.SaveCheck(f.ctx, good))
		if n := openIssues(); n != 0 {
			t.Fatalf("the issue stayed open")
		}
		if n := f.count(`SELECT count(*) FROM issue_history h JOIN issues i ON i.id = h.issue_id WHERE i.dataset_id = $1 AND h.event = 'auto_resolved'`, ds[0]); n != 1 {
			t.Fatalf("history rows %d", n)
		}
		st, err = s.States(f.ctx, []string{ds[0]})
		f.must(err)
		if !st[ds[0]].Valid {
			t.Fatalf("state after a good check %+v", st)
		}
	})

	t.Run("DomainSnapshotKeepsLiveContractColumns", func(t *testing.T) {
		f.exec(`DELETE FROM dataset_columns WHERE dataset_id = $1 AND name = 'name'`, ds[0])
		members, err := f.db.Products().AllMembers(f.ctx, dom)
		f.must(err)
		if len(members) != 1 || !slices.Equal(members[0].ContractColumns, []string{"id"}) {
			t.Fatalf("members %+v", members)
		}
		n, err := s.DatasetNames(f.ctx, []string{ds[0], ds[1], otherDS[0]})
		f.must(err)
		if n[ds[0]] != "public.orders" || len(n) != 3 {
			t.Fatalf("names %v", n)
		}
	})
}
