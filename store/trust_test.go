package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/trust"
)

func TestTrustFactsAndFind(t *testing.T) {
	f := newFx(t)
	s := f.db.Trust()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	col := func(n string) []source.Column {
		return []source.Column{{Name: n, Position: 1, DataType: "text", Class: "text"}}
	}
	refs, err := f.db.Scans().SyncDatasets(f.ctx, ws, conn, []source.Table{
		{Schema: "mart", Name: "fct_sales", Kind: "table", Columns: col("amount")},
		{Schema: "raw", Name: "customers", Kind: "table", Columns: col("email")},
		{Schema: "public", Name: "sales", Kind: "view", Columns: col("total")},
		{Schema: "public", Name: "secret", Kind: "table", Columns: col("x")},
	}, t0)
	f.must(err)
	ids := names(refs, func(r scan.DatasetRef) string { return r.ID })
	f.restrict(ws, ids[3:])
	dom := f.domain(ws, "Sales", false, ids[0])
	f.issue(ws, conn, ids[0], "critical", 1, func(ni *scan.NewIssue) { ni.Type, ni.Metric = "schema_drift", "schema" })
	f.result(ws, ids[0], f.newScan(ws, conn, 2), 2, 95, func(r *scan.DatasetResult) {
		r.Columns = col("amount")
		r.Verdict.Verdict = quality.VerdictWarn
	})
	f.newRule(ws, ids[1], "row_count_min", "info", 3, ruleMinRows(0))
	f.must(f.db.Scans().RecordFailure(f.ctx, f.newScan(ws, conn, 4), ws, ids[1], "permission_denied", at(4)))
	f.exec(`UPDATE datasets SET queries_per_day = 500 WHERE id = $1`, ids[2])

	facts, err := s.Facts(f.ctx, v, ids, at(60))
	f.must(err)
	if len(facts) != 4 {
		t.Fatalf("facts of %d datasets", len(facts))
	}
	fs := facts[ids[0]]
	if fs.Verdict != "warn" || !fs.Profiled || *fs.RowCount != 200 || fs.Scans30d != 2 || *fs.Layer != "gold" || len(fs.Issues) != 1 ||
		fs.UnackedSchemaChanges != 1 || len(fs.Domains) != 1 || fs.Domains[0].Name != "Sales" || fs.Domains[0].Version != "1.0" ||
		len(fs.Columns) != 1 || fs.Columns[0].Name != "amount" || fs.Columns[0].NullRate == nil {
		t.Fatalf("facts of a scanned dataset %+v", fs)
	}
	raw := facts[ids[1]]
	if raw.Verdict != "unknown" || raw.Profiled || *raw.Layer != "bronze" || !raw.EmptyExpected || raw.LastFailure == nil || *raw.LastFailure != "permission_denied" {
		t.Fatalf("facts of an unscanned dataset %+v", raw)
	}
	if facts[ids[2]].UsageClass != "hot" || facts[ids[2]].Layer != nil {
		t.Fatalf("facts of a busy view %+v", facts[ids[2]])
	}
	if mf, _ := s.Facts(f.ctx, member(ws), ids, at(60)); len(mf) != 3 {
		t.Fatalf("facts a member sees: %d", len(mf))
	}
	if of, _ := s.Facts(f.ctx, f.workspace(), ids, at(60)); len(of) != 0 {
		t.Fatalf("facts another workspace sees: %d", len(of))
	}

	find := func(vw catalogViewer, flt trust.FindFilter, limit int) ([]string, bool) {
		t.Helper()
		found, more, err := s.FindDatasets(f.ctx, vw, flt, at(60), limit)
		f.must(err)
		return names(found, func(fd trust.Found) string { return fd.Name() }), more
	}
	if got, more := find(v, trust.FindFilter{}, 10); more || !slices.Equal(got, []string{"mart.fct_sales", "public.sales", "public.secret", "raw.customers"}) {
		t.Fatalf("found by score then name: %v", got)
	}
	if got, more := find(member(ws), trust.FindFilter{}, 2); !more || !slices.Equal(got, []string{"mart.fct_sales", "public.sales"}) {
		t.Fatalf("a member's first two: %v %v", got, more)
	}
	if got, _ := find(v, trust.FindFilter{Query: vigia.Ptr("sales")}, 10); !slices.Equal(got, []string{"public.sales", "mart.fct_sales"}) {
		t.Fatalf("an exact name first: %v", got)
	}
	if got, _ := find(v, trust.FindFilter{HasPII: vigia.Ptr(true)}, 10); !slices.Equal(got, []string{"raw.customers"}) {
		t.Fatalf("with personal data: %v", got)
	}
	if got, _ := find(v, trust.FindFilter{Layer: vigia.Ptr("bronze")}, 10); !slices.Equal(got, []string{"raw.customers"}) {
		t.Fatalf("bronze: %v", got)
	}
	if got, _ := find(v, trust.FindFilter{Domain: vigia.Ptr("sales"), MinScore: vigia.Ptr(50.0)}, 10); !slices.Equal(got, []string{"mart.fct_sales"}) {
		t.Fatalf("by domain name and score: %v", got)
	}
	if got, _ := find(v, trust.FindFilter{Domain: &dom, UsageClass: vigia.Ptr("hot")}, 10); len(got) != 0 {
		t.Fatalf("hot in the domain: %v", got)
	}
	if got, _ := find(f.workspace(), trust.FindFilter{}, 10); len(got) != 0 {
		t.Fatalf("another workspace finds %v", got)
	}
}

func TestTrustConsumers(t *testing.T) {
	f := newFx(t)
	s := f.db.Trust()
	v := f.workspace()
	ws := v.WorkspaceID
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "secret")
	f.restrict(ws, ds[1:])
	f.must(s.LockWorkspace(f.ctx, ws))
	bot, err := s.EnsureConsumer(f.ctx, trust.Consumer{ID: vigia.NewID(), WorkspaceID: ws, Name: "pricing", Kind: "agent", CreatedAt: t0})
	f.must(err)
	again, err := s.EnsureConsumer(f.ctx, trust.Consumer{ID: vigia.NewID(), WorkspaceID: ws, Name: "pricing", Kind: "agent", Framework: vigia.Ptr("langchain"), CreatedAt: at(1)})
	f.must(err)
	if again.ID != bot.ID || again.Framework == nil || *again.Framework != "langchain" || !again.CreatedAt.Equal(t0) {
		t.Fatalf("a consumer registered twice %+v / %+v", bot, again)
	}
	f.fails(vigia.KindInternal, "a consumer kind the schema refuses", func(ctx ctxT) error {
		_, err := s.EnsureConsumer(ctx, trust.Consumer{ID: vigia.NewID(), WorkspaceID: ws, Name: "x", Kind: "robot", CreatedAt: t0})
		return err
	})
	bi, _ := s.EnsureConsumer(f.ctx, trust.Consumer{ID: vigia.NewID(), WorkspaceID: ws, Name: "dashboards", Kind: "application", CreatedAt: t0})

	read := func(c trust.Consumer, ref *string, n int, decisions map[string]string) trust.Consumption {
		cs := trust.Consumption{ID: vigia.NewID(), WorkspaceID: ws, ConsumerID: c.ID, RunRef: ref, Purpose: "agente", Actor: "tok", CreatedAt: at(n)}
		for _, d := range ds {
			if dec, ok := decisions[d]; ok {
				cs.Datasets = append(cs.Datasets, trust.ConsumedDataset{DatasetID: d, Decision: dec, TrustAsOf: at(n)})
			}
		}
		f.must(s.InsertConsumption(f.ctx, cs))
		return cs
	}
	first := read(bot, vigia.Ptr("run-1"), 10, map[string]string{ds[0]: "trusted", ds[1]: "untrusted"})
	read(bot, nil, 20, map[string]string{ds[0]: "caution"})
	read(bi, nil, 30, map[string]string{ds[1]: "trusted"})
	f.fails(vigia.KindConflict, "a run reference twice", func(ctx ctxT) error {
		return s.InsertConsumption(ctx, trust.Consumption{ID: vigia.NewID(), WorkspaceID: ws, ConsumerID: bot.ID, RunRef: vigia.Ptr("run-1"), Purpose: "rag", Actor: "t", CreatedAt: at(40)})
	})
	got, ok, err := s.ConsumptionByRunRef(f.ctx, bot.ID, "run-1")
	f.must(err)
	if !ok || got.ID != first.ID || len(got.Datasets) != 2 || got.Datasets[0].DatasetName != "public.orders" || got.Datasets[1].Decision != "untrusted" {
		t.Fatalf("consumption by run %+v", got)
	}
	if _, ok, _ := s.ConsumptionByRunRef(f.ctx, bi.ID, "run-1"); ok {
		t.Fatal("another consumer's run reference")
	}
	if n, oldest, err := s.ConsumptionsSince(f.ctx, ws, at(15)); err != nil || n != 2 || !oldest.Equal(at(20)) {
		t.Fatalf("consumptions since: %d %v %v", n, oldest, err)
	}
	if n, oldest, _ := s.ConsumptionsSince(f.ctx, ws, at(99)); n != 0 || !oldest.Equal(at(99)) {
		t.Fatalf("none since: %d %v", n, oldest)
	}

	list := func(vw catalogViewer, flt trust.ConsumerFilter) vigia.List[trust.Consumer] {
		t.Helper()
		if flt.Page.Limit == 0 {
			flt.Page.Limit = 10
		}
		l, err := s.Consumers(f.ctx, vw, flt, at(60))
		f.must(err)
		return l
	}
	all := list(v, trust.ConsumerFilter{})
	if all.Total != 2 || all.Items[0].Name != "dashboards" || all.Items[1].Consumptions7d != 2 || all.Items[1].Datasets30d != 2 ||
		all.Items[1].Decisions7d["untrusted"] != 1 || *all.Items[1].LastDecision != "caution" {
		t.Fatalf("consumers %+v", all.Items)
	}
	// A member does not count reads of datasets they cannot see.
	if m := list(member(ws), trust.ConsumerFilter{}); m.Items[0].Consumptions7d != 0 || m.Items[1].Datasets30d != 1 {
		t.Fatalf("consumers a member sees %+v", m.Items)
	}
	if p := list(v, trust.ConsumerFilter{Page: vigia.Page{Limit: 1, Offset: 1}}); p.Total != 2 || len(p.Items) != 1 || p.Items[0].ID != bot.ID {
		t.Fatalf("second page %+v", p)
	}
	if d := list(v, trust.ConsumerFilter{DatasetIDs: []string{ds[1]}, Since: vigia.Ptr(at(25))}); d.Total != 1 || d.Items[0].ID != bi.ID {
		t.Fatalf("consumers of a dataset lately %+v", d.Items)
	}
	if o := list(f.workspace(), trust.ConsumerFilter{}); o.Total != 0 {
		t.Fatalf("another workspace lists %d consumers", o.Total)
	}
	ex, err := s.ConsumerExposures(f.ctx, v, ds, at(15), at(60))
	f.must(err)
	if len(ex[ds[0]]) != 1 || ex[ds[0]][0].ConsumerID != bot.ID || *ex[ds[0]][0].LastDecision != "caution" || len(ex[ds[1]]) != 1 || ex[ds[1]][0].Name != "dashboards" {
		t.Fatalf("exposures %+v", ex)
	}
	if ex, _ := s.ConsumerExposures(f.ctx, member(ws), ds, t0, at(60)); len(ex[ds[1]]) != 0 {
		t.Fatalf("a member sees exposures of a restricted dataset %+v", ex)
	}

	n := trust.Notice{EventID: vigia.NewID(), WorkspaceID: ws, ConsumerID: bot.ID, DatasetIDs: []string{ds[1]}, IdempotencyKey: "n1",
		Payload: map[string]any{"consumer": "pricing"}, CreatedAt: at(10)}
	f.must(s.InsertNotice(f.ctx, n))
	f.fails(vigia.KindConflict, "a notice's idempotency key twice", func(ctx ctxT) error {
		n2 := n
		n2.EventID = vigia.NewID()
		return s.InsertNotice(ctx, n2)
	})
	notified, err := s.NotifiedDatasets(f.ctx, bot.ID, ds, at(5))
	f.must(err)
	if len(notified) != 1 || !notified[ds[1]] {
		t.Fatalf("notified %v", notified)
	}
	if later, _ := s.NotifiedDatasets(f.ctx, bot.ID, ds, at(11)); len(later) != 0 {
		t.Fatalf("notified later %v", later)
	}
	if c, err := s.NoticesSince(f.ctx, ws, at(10)); err != nil || c != 1 {
		t.Fatalf("notices since %d %v", c, err)
	}
	if c, _ := s.NoticesSince(f.ctx, f.workspace().WorkspaceID, t0); c != 0 {
		t.Fatalf("notices of another workspace %d", c)
	}
}
