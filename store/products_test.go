package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

// domain creates a published domain with datasets.
func (f *fx) domain(ws, name string, restricted bool, datasetIDs ...string) string {
	f.t.Helper()
	id := vigia.NewID()
	f.must(f.db.Products().CreateDomain(f.ctx, product.Domain{ID: id, WorkspaceID: ws, Name: name, Restricted: restricted, Status: "published",
		Version: product.Version{Major: 1}, SLA: product.SLA{DimensionTargets: map[string]float64{}}, CreatedAt: t0, UpdatedAt: t0}, datasetIDs))
	return id
}

func TestProductDomains(t *testing.T) {
	f := newFx(t)
	s := f.db.Products()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "customers", "ledger")
	fin, ops := f.team(ws, "finance"), f.team(ws, "ops")
	sales := f.domain(ws, "sales", false, ds[0], ds[1])
	finance := f.domain(ws, "finance", true, ds[2], ds[0])
	f.domain(ws, "archive", false)
	f.fails(vigia.KindConflict, "a taken domain name", func(ctx ctxT) error {
		return s.CreateDomain(ctx, product.Domain{ID: vigia.NewID(), WorkspaceID: ws, Name: "sales", Status: "draft", CreatedAt: t0, UpdatedAt: t0}, nil)
	})
	f.fails(vigia.KindNotFound, "a domain with a dataset that does not exist", func(ctx ctxT) error {
		return s.CreateDomain(ctx, product.Domain{ID: vigia.NewID(), WorkspaceID: ws, Name: "x", Status: "draft", CreatedAt: t0, UpdatedAt: t0}, []string{vigia.NewID()})
	})
	f.must(s.ReplaceGrants(f.ctx, finance, []product.TeamGrant{{TeamID: fin, Role: "manager"}, {TeamID: ops, Role: "member"}}))
	f.fails(vigia.KindNotFound, "a grant to a team that does not exist", func(ctx ctxT) error {
		return s.ReplaceGrants(ctx, finance, []product.TeamGrant{{TeamID: vigia.NewID(), Role: "member"}})
	})

	list := func(vw catalogViewer, page vigia.Page) ([]string, int) {
		t.Helper()
		l, err := s.Domains(f.ctx, vw, page)
		f.must(err)
		return names(l.Items, func(d product.Domain) string { return d.Name }), l.Total
	}
	if got, n := list(v, vigia.Page{Limit: 10}); n != 3 || !slices.Equal(got, []string{"archive", "finance", "sales"}) {
		t.Fatalf("domains by name: %v", got)
	}
	if got, n := list(member(ws), vigia.Page{Limit: 1, Offset: 1}); n != 2 || !slices.Equal(got, []string{"sales"}) {
		t.Fatalf("a member's second page: %v of %d", got, n)
	}
	if _, n := list(f.workspace(), vigia.Page{Limit: 10}); n != 0 {
		t.Fatalf("another workspace lists %d domains", n)
	}
	d, err := s.DomainByID(f.ctx, member(ws, fin, ops), finance)
	f.must(err)
	if d.CallerRole != "manager" || len(d.Teams) != 2 || d.Teams[0].TeamName != "finance" || !slices.Equal(d.DatasetIDs, []string{ds[2], ds[0]}) {
		t.Fatalf("a granted member's domain %+v", d)
	}
	// A member who cannot see the restricted domain's datasets does not see them in the open one either.
	sd, err := s.DomainByID(f.ctx, member(ws), sales)
	f.must(err)
	if !slices.Equal(sd.DatasetIDs, []string{ds[1]}) || sd.CallerRole != "" {
		t.Fatalf("the open domain as a member %+v", sd)
	}
	f.fails(vigia.KindNotFound, "a restricted domain without a grant", func(ctx ctxT) error { _, err := s.DomainByID(ctx, member(ws), finance); return err })
	f.fails(vigia.KindNotFound, "another workspace's domain", func(ctx ctxT) error { _, err := s.DomainByID(ctx, f.workspace(), sales); return err })

	// Members: a member replaces what they see; what they cannot see stays.
	f.must(s.ReplaceMembers(f.ctx, member(ws), sales, []string{ds[1]}))
	all, err := s.AllMembers(f.ctx, sales)
	f.must(err)
	if got := names(all, func(m product.SnapshotDataset) string { return m.Name }); !slices.Equal(got, []string{"public.customers", "public.orders"}) {
		t.Fatalf("members after a member's replace %v", got)
	}
	f.must(s.ReplaceMembers(f.ctx, v, sales, []string{ds[1]}))
	if all, _ = s.AllMembers(f.ctx, sales); len(all) != 1 {
		t.Fatalf("members after an admin's replace %v", all)
	}

	d.Name, d.Description, d.Status, d.OwnerName = "money", "ledgers", "deprecated", vigia.Ptr("Rita")
	d.SLA = product.SLA{DimensionWeights: map[string]float64{"completude": 2}, DimensionTargets: map[string]float64{"validade": 90}}
	f.must(s.LockDomain(f.ctx, finance))
	f.must(s.UpdateDomain(f.ctx, d))
	got, err := s.DomainByID(f.ctx, v, finance)
	f.must(err)
	if got.Name != "money" || got.Status != "deprecated" || *got.OwnerName != "Rita" || got.SLA.DimensionTargets["validade"] != 90 {
		t.Fatalf("updated domain %+v", got)
	}
	f.fails(vigia.KindInternal, "a status the schema refuses", func(ctx ctxT) error {
		bad := got
		bad.Status = "retired"
		return s.UpdateDomain(ctx, bad)
	})
	w, err := s.DomainWeights(f.ctx, ds[2])
	f.must(err)
	if len(w) != 1 || w[0][quality.Completude] != 2 {
		t.Fatalf("weights of a dataset in one domain: %v", w)
	}
	if w, _ := s.DomainWeights(f.ctx, ds[1]); len(w) != 1 || w[0] != nil {
		t.Fatalf("a domain without weights gives %v", w)
	}

	names2, err := s.TeamNames(f.ctx, ws, []string{fin, vigia.NewID()})
	f.must(err)
	if len(names2) != 1 || names2[fin] != "finance" {
		t.Fatalf("team names %v", names2)
	}
	if n, _ := s.TeamNames(f.ctx, f.workspace().WorkspaceID, []string{fin}); len(n) != 0 {
		t.Fatalf("another workspace names %v", n)
	}
	vn, err := s.VisibleDatasetNames(f.ctx, member(ws), ds)
	f.must(err)
	if len(vn) != 1 || vn[ds[1]] != "public.customers" {
		t.Fatalf("names a member sees %v", vn)
	}
	meta, err := s.DatasetMeta(f.ctx, v)
	f.must(err)
	has := map[string][2]bool{}
	for _, m := range meta {
		has[m.Name] = [2]bool{m.HasDomain, m.HasOwner}
	}
	if len(meta) != 3 || has["public.ledger"] != [2]bool{true, true} || has["public.customers"] != [2]bool{true, false} || has["public.orders"] != [2]bool{true, true} {
		t.Fatalf("dataset meta %v", has)
	}
	if tz, err := s.WorkspaceTimezone(f.ctx, ws); err != nil || tz != "Europe/Lisbon" {
		t.Fatalf("time zone %q %v", tz, err)
	}
	f.fails(vigia.KindNotFound, "the time zone of no workspace", func(ctx ctxT) error { _, err := s.WorkspaceTimezone(ctx, vigia.NewID()); return err })
}

func TestProductVersionsSharesConsumers(t *testing.T) {
	f := newFx(t)
	s := f.db.Products()
	ws := f.workspace().WorkspaceID
	dom := f.domain(ws, "sales", false)
	for i, bump := range []string{"initial", "minor", "major"} {
		f.must(s.InsertVersion(f.ctx, product.VersionRow{DomainID: dom, WorkspaceID: ws, Version: product.Version{Major: 1 + i/2, Minor: i % 2},
			Bump: bump, ChangeSummary: bump, Changes: []product.Change{{Kind: "dataset_added", Impact: "compatible", DatasetName: "public.x"}},
			Snapshot: product.Snapshot{Name: "sales", Datasets: []product.SnapshotDataset{}}, Counts: product.Counts{Datasets: i, Changes: 1},
			PublishedAt: at(i), PublishedBy: "ana"}))
	}
	f.fails(vigia.KindConflict, "a version twice", func(ctx ctxT) error {
		return s.InsertVersion(ctx, product.VersionRow{DomainID: dom, WorkspaceID: ws, Version: product.Version{Major: 1}, Bump: "initial", PublishedAt: t0, PublishedBy: "x"})
	})
	vs, err := s.Versions(f.ctx, dom)
	f.must(err)
	if got := names(vs, func(v product.VersionRow) string { return v.Version.String() }); !slices.Equal(got, []string{"2.0", "1.1", "1.0"}) {
		t.Fatalf("versions newest first %v", got)
	}
	if vs[0].Counts.Datasets != 2 || len(vs[0].Changes) != 1 || vs[0].Changes[0].DatasetName != "public.x" || vs[0].Snapshot.SLA.DimensionTargets == nil {
		t.Fatalf("version read back %+v", vs[0])
	}

	if _, ok, err := s.Share(f.ctx, dom); ok || err != nil {
		t.Fatalf("a share before any: %v %v", ok, err)
	}
	sh := product.Share{DomainID: dom, WorkspaceID: ws, TokenHash: hash("share"), TokenSealed: []byte("sealed"), CreatedBy: "ana", CreatedAt: t0}
	f.must(s.SaveShare(f.ctx, sh))
	sh.TokenHash, sh.RotatedAt = hash("share2"), vigia.Ptr(at(5))
	f.must(s.SaveShare(f.ctx, sh)) // rotated
	f.fails(vigia.KindNotFound, "the old token after a rotation", func(ctx ctxT) error { _, err := s.ShareByHash(ctx, hash("share")); return err })
	got, err := s.ShareByHash(f.ctx, hash("share2"))
	f.must(err)
	if got.DomainID != dom || !got.RotatedAt.Equal(at(5)) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("share %+v", got)
	}
	other := f.domain(ws, "other", false)
	f.fails(vigia.KindConflict, "one token for two domains", func(ctx ctxT) error {
		return s.SaveShare(ctx, product.Share{DomainID: other, WorkspaceID: ws, TokenHash: hash("share2"), TokenSealed: []byte("x"), CreatedBy: "a", CreatedAt: t0})
	})
	if ok, err := s.DeleteShare(f.ctx, dom); err != nil || !ok {
		t.Fatalf("delete share %v %v", ok, err)
	}
	if ok, _ := s.DeleteShare(f.ctx, dom); ok {
		t.Fatal("a share deleted twice")
	}

	add := func(name, kind string) string {
		id := vigia.NewID()
		f.must(s.AddManualConsumer(f.ctx, product.DomainConsumer{ID: id, DomainID: dom, WorkspaceID: ws, Name: name, Kind: kind, CreatedBy: "ana", CreatedAt: t0}))
		return id
	}
	bot := add("pricing bot", "ai_system")
	add("CFO", "user")
	add("pricing bot", "user") // the same name of another kind is another consumer
	f.fails(vigia.KindConflict, "a consumer twice", func(ctx ctxT) error {
		return s.AddManualConsumer(ctx, product.DomainConsumer{ID: vigia.NewID(), DomainID: dom, WorkspaceID: ws, Name: "CFO", Kind: "user", CreatedBy: "a", CreatedAt: t0})
	})
	cs, err := s.ManualConsumers(f.ctx, dom)
	f.must(err)
	if len(cs) != 3 || cs[0].Name != "CFO" || cs[1].Source != product.SourceManual {
		t.Fatalf("consumers by name %+v", cs)
	}
	if ok, _ := s.DeleteManualConsumer(f.ctx, other, bot); ok {
		t.Fatal("a consumer deleted through another domain")
	}
	if ok, err := s.DeleteManualConsumer(f.ctx, dom, bot); err != nil || !ok {
		t.Fatalf("delete consumer %v %v", ok, err)
	}
}

func TestProductCoverageAndVerdictEvents(t *testing.T) {
	f := newFx(t)
	s := f.db.Products()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "customers")
	dom := f.domain(ws, "sales", false, ds...)
	sc := f.newScan(ws, conn, 10)
	f.result(ws, ds[0], sc, 10, 75, func(r *scan.DatasetResult) {
		r.Verdict.Verdict = quality.VerdictWarn
		r.Events = []scan.Event{{ID: vigia.NewID(), Type: "dataset.verdict_changed", SubjectType: "dataset", SubjectID: ds[0], IdempotencyKey: "v1",
			Payload: map[string]any{"from": "pass", "to": "warn"}}}
	})
	f.must(f.db.Scans().FinishScan(f.ctx, sc, "succeeded", nil, at(11)))
	f.newScan(ws, conn, 12) // not finished: covers nothing

	cov, err := s.Coverage(f.ctx, v, dom, t0, at(60))
	f.must(err)
	got := map[string]product.Coverage{}
	for _, c := range cov {
		got[c.DatasetID] = c
	}
	if len(cov) != 2 || !got[ds[0]].Profiled || got[ds[0]].Verdict != "warn" || got[ds[1]].Profiled || got[ds[1]].Verdict != "unknown" {
		t.Fatalf("coverage %+v", cov)
	}
	if c, _ := s.Coverage(f.ctx, v, dom, at(12), at(60)); len(c) != 0 {
		t.Fatalf("coverage outside the window %+v", c)
	}
	if c, _ := s.Coverage(f.ctx, f.workspace(), dom, t0, at(60)); len(c) != 0 {
		t.Fatalf("coverage from another workspace %+v", c)
	}

	mv, err := s.ScanMemberVerdicts(f.ctx, ws, sc)
	f.must(err)
	if len(mv) != 2 {
		t.Fatalf("member verdicts %+v", mv)
	}
	for _, m := range mv {
		if m.DatasetID == ds[0] && (m.Verdict != "warn" || m.Before == nil || *m.Before != "pass") || m.DatasetID == ds[1] && (m.Verdict != "" || m.Before != nil) {
			t.Fatalf("member verdict %+v", m)
		}
	}
	if mv, _ := s.ScanMemberVerdicts(f.ctx, f.workspace().WorkspaceID, sc); len(mv) != 0 {
		t.Fatalf("member verdicts of another workspace %+v", mv)
	}
	ev := product.DomainVerdictEvent{WorkspaceID: ws, ScanID: sc, DomainID: dom, IdempotencyKey: "dv1", Payload: map[string]any{"x": 1}}
	f.must(s.InsertDomainVerdictEvent(f.ctx, ev, at(11)))
	f.must(s.InsertDomainVerdictEvent(f.ctx, ev, at(12)))
	if n := f.count(`SELECT count(*) FROM events WHERE workspace_id = $1 AND type = $2`, ws, product.EventDomainVerdictChanged); n != 1 {
		t.Fatalf("%d domain verdict events for one key", n)
	}
}
