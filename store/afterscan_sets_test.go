package store_test

import (
	"context"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/modeling"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/store/storetest"
	"github.com/vigia-data/vigia/suggest"
)

// A scan reads once which of the connection's datasets have rules, reported (dbt)
// rules or domains; the others skip those reads.
func TestScanDatasetExtras(t *testing.T) {
	f := newFx(t)
	v, conn, ds := f.warehouse("orders", "customers", "ledger", "plain")
	ws := v.WorkspaceID
	f.newRule(ws, ds[0], "not_null", "critical", 1, rule.Params{Column: "id"})
	dbt := f.newRule(ws, ds[1], "not_null", "warning", 2, rule.Params{Column: "id"})
	f.exec(`UPDATE rules SET dbt_unique_id = 'test.shop.not_null_customers_id' WHERE id = $1`, dbt)
	off := f.newRule(ws, ds[3], "not_null", "info", 3, rule.Params{Column: "id"})
	f.exec(`UPDATE rules SET active = false WHERE id = $1`, off)
	f.domain(ws, "finance", false, ds[2], ds[0])
	// Another connection's rules are not this one's.
	ov, _, others := f.warehouse("orders")
	f.newRule(ov.WorkspaceID, others[0], "not_null", "info", 4, rule.Params{Column: "id"})
	ex, err := f.db.Scans().DatasetExtras(f.ctx, conn)
	f.must(err)
	set := func(m map[string]bool) []string {
		var out []string
		for _, id := range ds {
			if m[id] {
				out = append(out, id)
			}
		}
		return out
	}
	if got := set(ex.Rules); len(got) != 1 || got[0] != ds[0] || len(ex.Rules) != 1 {
		t.Fatalf("datasets with scan rules %v", got)
	}
	if got := set(ex.Reported); len(got) != 1 || got[0] != ds[1] || len(ex.Reported) != 1 {
		t.Fatalf("datasets with reported rules %v", got)
	}
	if got := set(ex.Domains); len(got) != 2 || got[0] != ds[0] || got[1] != ds[2] || len(ex.Domains) != 2 {
		t.Fatalf("datasets with domains %v", got)
	}
}

// A scan's suggestions are written at once: new ones added, open ones refreshed, the
// retired categories' open ones no longer proposed deleted, the rest left alone.
func TestSaveScanSuggestions(t *testing.T) {
	f := newFx(t)
	v, _, ds := f.warehouse("orders", "customers", "untouched")
	ws := v.WorkspaceID
	s := f.db.Suggestions()
	rule := func(sig string, n int) suggest.Suggestion {
		return suggest.Suggestion{Category: suggest.CategoryRule, Signature: sig, Column: "id", Params: map[string]any{"n": n}}
	}
	domain := func(sig string) suggest.Suggestion {
		return suggest.Suggestion{Category: suggest.CategoryDomain, Signature: sig, Params: map[string]any{"domain": sig}}
	}
	retire := []string{suggest.CategoryDomain, suggest.CategoryOwner}
	f.must(s.SaveScanSuggestions(f.ctx, ws, []suggest.DatasetSuggestions{
		{DatasetID: ds[0], Suggestions: []suggest.Suggestion{rule("not_null:id", 1), domain("domain:a")}},
		{DatasetID: ds[1], Suggestions: []suggest.Suggestion{rule("not_null:name", 1), domain("domain:z"), domain("domain:w")}},
		{DatasetID: ds[2], Suggestions: []suggest.Suggestion{domain("domain:u")}},
	}, retire, t0))
	if n := f.count(`SELECT count(*) FROM suggestions WHERE workspace_id = $1`, ws); n != 6 {
		t.Fatalf("%d suggestions after the first scan, want 6", n)
	}
	f.exec(`UPDATE suggestions SET status = 'dismissed' WHERE dataset_id = $1 AND signature = 'domain:w'`, ds[1])
	// The next scan: orders proposes not_null:id twice (the later wins) and domain:b
	// instead of domain:a; customers proposes domain:y only; untouched is not scanned.
	f.must(s.SaveScanSuggestions(f.ctx, ws, []suggest.DatasetSuggestions{
		{DatasetID: ds[0], Suggestions: []suggest.Suggestion{rule("not_null:id", 2), rule("not_null:id", 3), domain("domain:b")}},
		{DatasetID: ds[1], Suggestions: []suggest.Suggestion{domain("domain:y")}},
	}, retire, at(5)))
	got := map[string]string{}
	rows, err := f.tx.Query(f.ctx, `SELECT d.table_name || ' ' || s.signature, s.status || coalesce(' ' || (s.params->>'n'), '')
		FROM suggestions s JOIN datasets d ON d.id = s.dataset_id WHERE s.workspace_id = $1`, ws)
	f.must(err)
	for rows.Next() {
		var k, v string
		f.must(rows.Scan(&k, &v))
		got[k] = v
	}
	f.must(rows.Err())
	want := map[string]string{
		"orders not_null:id":      "open 3", // refreshed with the later proposal
		"orders domain:b":         "open",
		"customers not_null:name": "open 1", // not a retired category
		"customers domain:y":      "open",
		"customers domain:w":      "dismissed", // dismissed ones stay
		"untouched domain:u":      "open",      // not in this scan
	}
	if len(got) != len(want) {
		t.Fatalf("suggestions %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("suggestion %q is %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	// Nothing to write is no statement and no error.
	f.must(s.SaveScanSuggestions(f.ctx, ws, nil, retire, at(6)))
}

// A scan's modeling outcomes are written per chunk: issues opened, updated without a
// second detection for the same scan, resolved when the check finds nothing, and an
// ignored one left alone.
func TestSaveModelingOutcomes(t *testing.T) {
	f := newFx(t)
	v, conn, ds := f.warehouse("orders", "customers")
	ws := v.WorkspaceID
	m := f.db.Modeling()
	scan1, scan2 := f.newScan(ws, conn, 1), f.newScan(ws, conn, 2)
	d := func(i int) catalog.Dataset {
		return catalog.Dataset{ID: ds[i], Schema: "public", Table: []string{"orders", "customers"}[i], Kind: "table"}
	}
	noKey := modeling.Finding{Check: modeling.CheckNoKey, Columns: []string{}, Suggestion: "add_primary_key"}
	naming := modeling.Finding{Check: modeling.CheckNaming, Columns: []string{"Name"}, Suggestion: "rename"}
	breach := modeling.Breach{Dimension: "completeness", Target: 99, Observed: 90, DomainIDs: []string{}}
	save := func(scanID string, n int, outs ...modeling.DatasetOutcome) {
		t.Helper()
		f.must(m.SaveOutcomes(f.ctx, ws, conn, scanID, "postgres", outs, at(n)))
	}
	open := func(datasetID, typ string) int {
		return f.count(`SELECT count(*) FROM issues WHERE dataset_id = $1 AND type = $2 AND status = 'open'`, datasetID, typ)
	}
	save(scan1, 10, modeling.DatasetOutcome{Dataset: d(0), Modeling: true, Findings: []modeling.Finding{noKey, naming}, Breaches: []modeling.Breach{breach}},
		modeling.DatasetOutcome{Dataset: d(1), Modeling: true, Findings: []modeling.Finding{noKey}})
	save(scan1, 11, modeling.DatasetOutcome{Dataset: d(0), Modeling: true, Findings: []modeling.Finding{noKey, naming}, Breaches: []modeling.Breach{breach}},
		modeling.DatasetOutcome{Dataset: d(1), Modeling: true, Findings: []modeling.Finding{noKey}})
	if open(ds[0], modeling.IssueTypeModeling) != 2 || open(ds[1], modeling.IssueTypeModeling) != 1 || open(ds[0], modeling.IssueTypeSLOBreach) != 1 {
		t.Fatal("the first scan's issues are not open once each")
	}
	if n := f.count(`SELECT max(detections) FROM issues WHERE dataset_id = ANY($1::uuid[])`, ds); n != 1 {
		t.Fatalf("a second run for the same scan counted %d detections", n)
	}
	f.exec(`UPDATE issues SET status = 'ignored' WHERE dataset_id = $1 AND subtype = $2`, ds[1], modeling.CheckNoKey)
	// The next scan: orders has no naming finding and meets its target; customers' ignored
	// check is found again and stays ignored; a view's modeling issues are left alone.
	save(scan2, 20, modeling.DatasetOutcome{Dataset: d(0), Modeling: true, Findings: []modeling.Finding{noKey}},
		modeling.DatasetOutcome{Dataset: d(1), Modeling: true, Findings: []modeling.Finding{noKey}})
	if open(ds[0], modeling.IssueTypeModeling) != 1 || open(ds[0], modeling.IssueTypeSLOBreach) != 0 {
		t.Fatal("the resolved checks and breach are still open")
	}
	if n := f.count(`SELECT count(*) FROM issues WHERE dataset_id = $1 AND status = 'resolved'`, ds[0]); n != 2 {
		t.Fatalf("%d issues of orders resolved, want 2", n)
	}
	if n := f.count(`SELECT count(*) FROM issue_history WHERE event = 'auto_resolved' AND origin = $1`, "scan:"+scan2); n != 2 {
		t.Fatalf("%d auto_resolved history rows, want 2", n)
	}
	if n := f.count(`SELECT detections FROM issues WHERE dataset_id = $1 AND subtype = $2 AND status = 'open'`, ds[0], modeling.CheckNoKey); n != 2 {
		t.Fatalf("orders' no-key issue counted %d detections, want 2", n)
	}
	if open(ds[1], modeling.IssueTypeModeling) != 0 || f.count(`SELECT count(*) FROM issues WHERE dataset_id = $1 AND status = 'ignored'`, ds[1]) != 1 {
		t.Fatal("an ignored check was opened again")
	}
}

// A dataset's result without issues or events is one batch, sent outside any
// transaction of the caller's: it still lands whole or not at all.
func TestSaveDatasetResultBatchIsAtomic(t *testing.T) {
	// Committed data, so that the save runs on the pool, not in the test's transaction.
	f := &fx{t: t, ctx: context.Background(), db: storetest.MustDB(t)}
	pool := f.db.Pool()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(f.ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	count := func(sql string, args ...any) (n int) {
		t.Helper()
		f.must(pool.QueryRow(f.ctx, sql, args...).Scan(&n))
		return n
	}
	v, conn, ds := f.warehouse("orders")
	ws := v.WorkspaceID
	first, second := f.newScan(ws, conn, 1), f.newScan(ws, conn, 2)
	f.result(ws, ds[0], first, 1, 90, nil)
	// The second scan's score row is there already, so its save fails at the score,
	// after the profile and the columns were queued.
	exec(`INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at) VALUES ($1, $2, $3, 2, 50, '{}', $4)`,
		ds[0], second, ws, at(2))
	err := f.db.Scans().SaveDatasetResult(f.ctx, scan.DatasetResult{DatasetID: ds[0], WorkspaceID: ws, ScanID: second, Seq: 2, At: at(2),
		Profile: &source.TableProfile{RowCount: 7, Depth: "standard", Columns: []source.ColumnProfile{{Name: "only"}}},
		Columns: []source.Column{{Name: "only", Position: 1, DataType: "text", Class: "text"}},
		Metrics: scan.Metrics{"volume": 7}, Score: quality.Score{Score: vigia.Ptr(80.0), Dimensions: quality.Dimensions{}},
		Verdict: quality.VerdictResult{Verdict: quality.VerdictPass, FailingRules: []quality.RuleOutcome{}, Reasons: []quality.VerdictReason{}}})
	if err == nil {
		t.Fatal("a save whose score conflicts succeeded")
	}
	if n := count(`SELECT count(*) FROM dataset_profiles WHERE dataset_id = $1 AND scan_id = $2`, ds[0], second); n != 0 {
		t.Fatal("the failed save left its profile")
	}
	if n := count(`SELECT count(*) FROM dataset_columns WHERE dataset_id = $1 AND name IN ('id', 'name')`, ds[0]); n != 2 {
		t.Fatalf("the failed save replaced the columns: %d of the first scan's left", n)
	}
	exec(`DELETE FROM workspaces WHERE id = $1`, ws)
}
