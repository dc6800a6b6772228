package app_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/catalog"
)

// Issue 20, S4: the detail derives the trust facts from its own reads (columns, latest
// score, issues, latest profile and failure) plus one smaller statement; they are
// exactly what TrustStore.Facts reads — null rates present, absent and without a
// profile, semantic types, open and acknowledged schema drift (count and oldest),
// a failure after the profile, profiles in 30 days, a verdict, an empty-expected rule,
// a domain with its owner and a broken contract.
func TestDatasetDetailFactsAreTrustFacts(t *testing.T) {
	clock := newTestClock()
	env := apptest.MustStart(t, app.Config{Clock: clock})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "detailfacts")
	conn := env.MustConnection(t, ws, "pg")
	orders := env.MustDataset(t, ws, conn, "stg_sales", "orders")
	bare := env.MustDataset(t, ws, conn, "mart", "customers")
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := env.DB.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	now := clock.Now()
	v := catalog.Viewer{WorkspaceID: ws, Admin: true}
	compare := func(what, id string) {
		t.Helper()
		want, err := env.DB.Trust().Facts(ctx, v, []string{id}, now)
		if err != nil {
			t.Fatal(err)
		}
		got, err := env.DB.DatasetDetail(ctx, v, id, now, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want[id], got.Facts) {
			t.Fatalf("%s: the detail's facts differ:\n facts  %+v\n detail %+v", what, want[id], got.Facts)
		}
	}
	compare("bare", bare)

	exec(`DELETE FROM dataset_columns WHERE dataset_id = $1`, orders)
	for i, c := range []struct{ name, typ, profile string }{
		{"id", "bigint", `{"null_rate": 0, "null_count": 0}`},
		{"email", "text", `{"null_rate": 0.25, "semantic": {"type": "email", "matches": 7}}`},
		{"note", "text", `{"null_count": 3}`},
		{"raw", "text", ``},
	} {
		var profile any
		if c.profile != "" {
			profile = c.profile
		}
		exec(`INSERT INTO dataset_columns (dataset_id, name, position, data_type, primary_key, profile) VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
			orders, c.name, i+1, c.typ, i == 0, profile)
	}
	scan1, scan2, scan3 := vigia.NewID(), vigia.NewID(), vigia.NewID()
	for i, s := range []string{scan1, scan2, scan3} {
		exec(`INSERT INTO scans (id, workspace_id, connection_id, status, created_at) VALUES ($1, $2, $3, 'succeeded', $4)`,
			s, ws, conn, now.Add(time.Duration(i-3)*time.Hour))
	}
	for i, s := range []string{scan1, scan2} {
		at := now.Add(time.Duration(i-3) * time.Hour)
		exec(`INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, orders, s, ws, i+1, 80+i, `{"dimensions": {"completeness": 90, "validity": null}}`, at)
		exec(`INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, columns, metrics, profiled_at, row_count_exact, latest_timestamp)
			VALUES ($1, $2, $3, $4, $5, 'standard', '[]', '{}', $6, $7, $8)`, orders, s, ws, i+1, 1000+i, at, i == 0, at.Add(-time.Hour))
		exec(`INSERT INTO verdicts (dataset_id, scan_id, workspace_id, seq, verdict, detail, created_at) VALUES ($1, $2, $3, $4, $5, '{}', $6)`,
			orders, s, ws, i+1, []string{"pass", "warn"}[i], at)
	}
	exec(`UPDATE datasets SET latest_score = 81, last_scan_at = $2, queries_per_day = 3.5 WHERE id = $1`, orders, now.Add(-2*time.Hour))
	exec(`INSERT INTO scan_failures (scan_id, dataset_id, workspace_id, code, failed_at) VALUES ($1, $2, $3, 'permission_denied', $4)`,
		scan3, orders, ws, now.Add(-time.Hour))
	for i, is := range []struct{ typ, sev, status string }{
		{"schema_drift", "warning", "open"}, {"schema_drift", "warning", "open"}, {"schema_drift", "critical", "acknowledged"},
		{"anomaly", "critical", "open"}, {"freshness", "warning", "resolved"},
	} {
		at := now.Add(-time.Duration(10-i) * time.Hour)
		exec(`INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, 'x', $7, $7)`, vigia.NewID(), ws, orders, is.typ, is.sev, is.status, at)
	}
	exec(`INSERT INTO rules (id, workspace_id, dataset_id, rule_type, severity, params, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, 'row_count_min', 'warning', '{"min_rows": 0}', 'test', $4, $4)`, vigia.NewID(), ws, orders, now)
	dom := vigia.NewID()
	exec(`INSERT INTO domains (id, workspace_id, name, owner_name, created_at, updated_at) VALUES ($1, $2, 'Sales', 'Ana', $3, $3)`, dom, ws, now)
	exec(`INSERT INTO domain_datasets (domain_id, dataset_id) VALUES ($1, $2)`, dom, orders)
	exec(`INSERT INTO contract_versions (id, workspace_id, dataset_id, major, minor, bump, document, created_at)
		VALUES ($1, $2, $3, 1, 0, 'major', '{}', $4)`, vigia.NewID(), ws, orders, now)
	exec(`INSERT INTO contract_checks (dataset_id, workspace_id, version, violations, checked_at)
		VALUES ($1, $2, '1.0.0', '[{"code": "type_changed"}, {"code": "column_missing"}, {"code": "type_changed"}]', $3)`, orders, ws, now)
	compare("orders", orders)

	// Not trivially equal: every derived fact is there.
	got, err := env.DB.DatasetDetail(ctx, v, orders, now, 5)
	if err != nil {
		t.Fatal(err)
	}
	f := got.Facts
	if len(f.Columns) != 4 || f.Columns[0].NullRate == nil || f.Columns[2].NullRate != nil || f.Columns[3].NullRate != nil ||
		f.Columns[1].SemanticType != "email" || f.Columns[1].SemanticMatches != 7 || len(f.Issues) != 4 ||
		f.UnackedSchemaChanges != 2 || f.OldestUnackedSchemaChange == nil || f.LastFailure == nil || *f.LastFailure != "permission_denied" ||
		f.Scans30d != 2 || f.Verdict != "warn" || !f.EmptyExpected || len(f.Domains) != 1 || !f.Contract.Active || f.Contract.Valid ||
		len(f.Contract.Violations) != 2 || f.Layer == nil || f.RowCount == nil || *f.RowCount != 1001 || len(f.Dimensions) != 2 || !f.Profiled {
		t.Fatalf("facts: %+v", f)
	}
	// A failure before the latest profile is no failure of it.
	exec(`UPDATE scan_failures SET failed_at = $2 WHERE dataset_id = $1`, orders, now.Add(-5*time.Hour))
	compare("orders, old failure", orders)
}
