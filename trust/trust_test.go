package trust_test

import (
	"fmt"
	"github.com/vigia-data/vigia"
	"testing"
	"time"

	"github.com/vigia-data/vigia/trust"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// healthy is a dataset profiled an hour ago: score 90, fresh, in a domain with an owner,
// read recently, no personal data.
func healthy() trust.Facts {
	return trust.Facts{DatasetID: "d1", Schema: "vendas", Table: "encomendas", Profiled: true, Verdict: "pass",
		LatestScore: ptr(90.0), Dimensions: map[string]*float64{"completude": ptr(95.0), "unicidade": ptr(80.0), "consistencia": ptr(100.0)},
		LastScanAt: ptr(now.Add(-time.Hour)), LatestTimestamp: ptr(now.Add(-2 * time.Hour)), RowCount: ptr(int64(5000)),
		Domains:         []trust.DomainFact{{ID: "dm", Name: "Vendas", OwnerName: ptr("Equipa")}},
		Consumptions30d: 3, Columns: []trust.ColumnFact{{Name: "id"}, {Name: "estado"}}}
}

func keys(fs []trust.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Key)
	}
	return out
}

func TestComputeScore(t *testing.T) {
	cases := []struct {
		name     string
		mod      func(f *trust.Facts)
		score    float64
		grade    string
		blockers string
		warnings string
	}{
		// 0.3×90 + 0.25×100 + 0.15×100 + 0.1×100 + 0.1×100 + 0.1×100 = 97
		{"Healthy", func(*trust.Facts) {}, 97, "A", "[]", "[]"},
		// issues 100 − 40 = 60 → 97 − 0.25×40 = 87, capped at 39 by the blocker
		{"CriticalIssueCaps", func(f *trust.Facts) { f.CriticalIssues = 1 }, 39, "E", "[critical_issue]", "[]"},
		// issues 100 − 15 = 85 → 97 − 3.75 = 93.25
		{"WarningIssue", func(f *trust.Facts) { f.WarningIssues = 1 }, 93.25, "A", "[]", "[warning_issue]"},
		// stability 75 → 97 − 2.5 = 94.5; 3 days old is within the 7 grace days
		{"FreshSchemaChangeWarns", func(f *trust.Facts) {
			f.UnackedSchemaChanges, f.OldestUnackedSchemaChange = 1, ptr(now.Add(-72*time.Hour))
		}, 94.5, "A", "[]", "[schema_change_unacknowledged]"},
		{"OldSchemaChangeBlocks", func(f *trust.Facts) {
			f.UnackedSchemaChanges, f.OldestUnackedSchemaChange = 1, ptr(now.Add(-10*24*time.Hour))
		}, 39, "E", "[schema_change_unacknowledged]", "[]"},
		// freshness at 36 h with a 24 h SLA: 50 → 97 − 7.5 = 89.5
		{"StaleData", func(f *trust.Facts) { f.LatestTimestamp = ptr(now.Add(-36 * time.Hour)) }, 89.5, "A", "[]", "[stale_data]"},
		// no timestamp: freshness 50 but no stale warning
		{"NoTimestamp", func(f *trust.Facts) { f.LatestTimestamp = nil }, 89.5, "A", "[]", "[]"},
		{"Unused", func(f *trust.Facts) { f.Consumptions30d, f.QueriesPerDay = 0, vigia.Ptr(0.0) }, 97, "A", "[]", "[unused_dataset]"},
		// a source without usage counters is not evidence of disuse
		{"UsageUnknown", func(f *trust.Facts) { f.Consumptions30d, f.QueriesPerDay = 0, nil }, 97, "A", "[]", "[]"},
		{"UsedByQueries", func(f *trust.Facts) { f.Consumptions30d, f.QueriesPerDay = 0, vigia.Ptr(3.0) }, 97, "A", "[]", "[]"},
		// ownership: a domain without owner 50, no domain 0
		{"DomainWithoutOwner", func(f *trust.Facts) { f.Domains[0].OwnerName = nil }, 92, "A", "[]", "[]"},
		{"NoDomain", func(f *trust.Facts) { f.Domains = nil }, 87, "A", "[]", "[]"},
		// monitoring: scanned 5 days ago 60 → 93
		{"ScannedDaysAgo", func(f *trust.Facts) { f.LastScanAt = ptr(now.Add(-5 * 24 * time.Hour)) }, 93, "A", "[]", "[]"},
		// issues 25 + freshness 7.5 + stability 10 = 42.5, capped at 39
		{"NeverProfiled", func(f *trust.Facts) {
			*f = trust.Facts{DatasetID: "d1", Verdict: "unknown", QueriesPerDay: vigia.Ptr(0.0)}
		}, 39, "E", "[no_profile]", "[unused_dataset]"},
		// 0.3×50 + 0.25×70 + 15 + 10 + 10 + 0 = 67.5
		{"GradeC", func(f *trust.Facts) { f.LatestScore = ptr(50.0); f.WarningIssues = 2; f.Domains = nil }, 67.5, "C", "[]", "[warning_issue]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := healthy()
			c.mod(&f)
			s := trust.ComputeScore(f, now, trust.Config{})
			if s.Score != c.score || s.Grade != c.grade || fmt.Sprint(keys(s.Blockers)) != c.blockers || fmt.Sprint(keys(s.Warnings)) != c.warnings {
				t.Fatalf("score %v grade %s blockers %v warnings %v", s.Score, s.Grade, keys(s.Blockers), keys(s.Warnings))
			}
			total := 0.0
			for _, comp := range s.Components {
				total += comp.Weight
				if comp.Score < 100 && comp.Action == nil || comp.Score >= 100 && comp.Action != nil {
					t.Fatalf("component %s score %v action %v", comp.Key, comp.Score, comp.Action)
				}
			}
			if total != 100 || len(s.Components) != 6 {
				t.Fatalf("weights sum %v over %d components", total, len(s.Components))
			}
		})
	}
	t.Run("SchemaChangeParams", func(t *testing.T) {
		f := healthy()
		f.UnackedSchemaChanges, f.OldestUnackedSchemaChange = 2, ptr(now.Add(-9*24*time.Hour-time.Hour))
		s := trust.ComputeScore(f, now, trust.Config{SchemaGraceDays: 7})
		p := s.Blockers[0].Params
		if p["count"] != 2 || p["grace_days"] != 7 || p["oldest_days"] != 9 {
			t.Fatalf("params %v", p)
		}
	})
}

func TestPII(t *testing.T) {
	cols := []trust.ColumnFact{
		{Name: "email", SemanticType: "email", SemanticMatches: 10},
		{Name: "email_hash"}, // named like PII, values masked
		{Name: "contacto", SemanticType: "phone_pt", SemanticMatches: 3}, // detected by values
		{Name: "nif_cliente"},
		{Name: "zip"}, {Name: "description"}, {Name: "ipsum"},
		{Name: "x", SemanticType: "uuid", SemanticMatches: 10},
	}
	all, unmasked := trust.PII(cols)
	if fmt.Sprint(all) != "[contacto email email_hash nif_cliente]" || fmt.Sprint(unmasked) != "[contacto email]" {
		t.Fatalf("pii %v unmasked %v", all, unmasked)
	}
}

func useCase(r trust.Readiness, p string) (string, []string, []string) {
	u := r.UseCase(p)
	return u.Status, keys(u.Blockers), keys(u.Warnings)
}

func TestComputeReadiness(t *testing.T) {
	cases := []struct {
		name string
		mod  func(f *trust.Facts)
		want map[string]string // purpose → "status blockers warnings"
	}{
		{"Healthy", func(*trust.Facts) {}, map[string]string{
			"rag": "ready [] []", "treino": "ready_with_warnings [] [low_unicidade]", "agente": "ready [] []", "bi": "ready [] []"}},
		{"PII", func(f *trust.Facts) {
			f.Columns = append(f.Columns, trust.ColumnFact{Name: "email", SemanticType: "email", SemanticMatches: 5})
		}, map[string]string{"rag": "ready_with_warnings [] [pii_unmasked]", "treino": "not_ready [pii_unmasked] [low_unicidade]",
			"agente": "ready_with_warnings [] [pii_unmasked]", "bi": "ready [] []"}},
		{"Stale", func(f *trust.Facts) { f.LatestTimestamp = ptr(now.Add(-30 * time.Hour)) }, map[string]string{
			"rag": "ready_with_warnings [] [stale_data]", "agente": "not_ready [stale_data] []", "bi": "ready_with_warnings [] [stale_data]"}},
		{"Critical", func(f *trust.Facts) { f.CriticalIssues, f.Verdict = 2, "fail" }, map[string]string{
			"rag": "not_ready [critical_issue] []", "bi": "not_ready [critical_issue] []"}},
		{"FailWithoutIssue", func(f *trust.Facts) { f.Verdict = "fail" }, map[string]string{"bi": "not_ready [verdict_fail] []"}},
		{"Warn", func(f *trust.Facts) { f.Verdict = "warn" }, map[string]string{"bi": "ready_with_warnings [] [verdict_warn]"}},
		{"SmallAndIncomplete", func(f *trust.Facts) {
			f.RowCount, f.Dimensions["completude"], f.Dimensions["unicidade"] = ptr(int64(10)), ptr(50.0), ptr(100.0)
		}, map[string]string{"treino": "ready_with_warnings [] [small_dataset low_completude]"}},
		{"NoTimestamp", func(f *trust.Facts) { f.LatestTimestamp = nil }, map[string]string{"agente": "ready_with_warnings [] [no_timestamp]",
			"rag": "ready [] []"}},
		{"ContractViolated", func(f *trust.Facts) { f.Contract = trust.ContractFact{Active: true, Valid: false} },
			map[string]string{"bi": "not_ready [contract_violated] []"}},
		{"NeverProfiled", func(f *trust.Facts) { *f = trust.Facts{DatasetID: "d"} }, map[string]string{
			"rag": "not_ready [no_profile] []", "treino": "not_ready [no_profile] []"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := healthy()
			c.mod(&f)
			r := trust.ComputeReadiness(f, now, trust.Config{})
			for p, want := range c.want {
				st, b, w := useCase(r, p)
				if got := fmt.Sprintf("%s %v %v", st, b, w); got != want {
					t.Errorf("%s: %s, want %s", p, got, want)
				}
			}
		})
	}
	t.Run("Scores", func(t *testing.T) {
		f := healthy()
		f.Columns = append(f.Columns, trust.ColumnFact{Name: "email", SemanticType: "email", SemanticMatches: 5})
		r := trust.ComputeReadiness(f, now, trust.Config{})
		// rag 90 − 10 = 80; treino blocked: min(90 − 20, 40) = 40; agente 80; bi 90; mean 72.5
		if r.UseCase("rag").Score != 80 || r.UseCase("treino").Score != 40 || r.UseCase("bi").Score != 90 || r.Score != 72.5 {
			t.Fatalf("scores %+v global %v", r.UseCases, r.Score)
		}
		if len(r.Recommendations) != 2 || r.Recommendations[0].Code != "pii_unmasked" || fmt.Sprint(r.Recommendations[0].UseCases) != "[rag treino agente]" {
			t.Fatalf("recommendations %+v", r.Recommendations)
		}
	})
}

func TestNormalizePurpose(t *testing.T) {
	for in, want := range map[string]string{"": "agente", "ml": "treino", "rag": "rag", "bi": "bi", "treino": "treino", "x": ""} {
		got, ok := trust.NormalizePurpose(in)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v", in, got, ok)
		}
	}
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name     string
		mod      func(f *trust.Facts)
		purpose  string
		decision string
		reasons  string
		ttl      time.Duration
		actions  string
	}{
		{"Trusted", func(*trust.Facts) {}, "bi", "trusted", "[]", 15 * time.Minute, "[]"},
		{"CriticalIncident", func(f *trust.Facts) { f.CriticalIssues, f.Verdict = 1, "fail" }, "rag", "untrusted",
			"[critical_incident]", 2 * time.Minute, "[resolve_critical_issues]"},
		{"ReadinessBlocker", func(f *trust.Facts) {
			f.Columns = append(f.Columns, trust.ColumnFact{Name: "nif", SemanticType: "nif_pt", SemanticMatches: 9})
		}, "treino", "untrusted", "[readiness_blocker readiness_warning]", 2 * time.Minute, "[mask_pii_columns remove_duplicates]"},
		{"CautionForRAGWithPII", func(f *trust.Facts) {
			f.Columns = append(f.Columns, trust.ColumnFact{Name: "nif", SemanticType: "nif_pt", SemanticMatches: 9})
		}, "rag", "caution", "[readiness_warning]", 5 * time.Minute, "[mask_pii_columns]"},
		{"VerdictWarn", func(f *trust.Facts) { f.Verdict = "warn" }, "bi", "caution", "[verdict_warn]", 5 * time.Minute, "[review_warnings]"},
		{"WarningIncident", func(f *trust.Facts) { f.WarningIssues, f.Verdict = 3, "warn" }, "bi", "caution", "[warning_incident]",
			5 * time.Minute, "[resolve_warning_issues]"},
		{"VerdictFailWithoutIssue", func(f *trust.Facts) { f.Verdict = "fail" }, "bi", "untrusted", "[verdict_fail]", 2 * time.Minute,
			"[fix_failing_checks]"},
		{"StaleBlocksAgents", func(f *trust.Facts) { f.LatestTimestamp = ptr(now.Add(-72 * time.Hour)) }, "agente", "untrusted",
			"[readiness_blocker]", 2 * time.Minute, "[refresh_data]"},
		{"ContractViolation", func(f *trust.Facts) { f.Contract = trust.ContractFact{Active: true, Valid: false} }, "bi", "untrusted",
			"[contract_violation]", 2 * time.Minute, "[restore_contract]"},
		{"Unknown", func(f *trust.Facts) { *f = trust.Facts{DatasetID: "d"} }, "rag", "unknown", "[no_profile]", time.Minute, "[run_scan]"},
		{"EmptyIsNotTrusted", func(f *trust.Facts) { f.RowCount = ptr(int64(0)) }, "bi", "untrusted", "[readiness_blocker]",
			2 * time.Minute, "[load_data]"},
		{"EmptyExpectedByARule", func(f *trust.Facts) { f.RowCount, f.EmptyExpected = ptr(int64(0)), true }, "bi", "trusted", "[]",
			15 * time.Minute, "[]"},
		{"FailedBeforeAnyProfile", func(f *trust.Facts) {
			*f = trust.Facts{DatasetID: "d", LastFailure: ptr("not_populated")}
		}, "bi", "unknown", "[profile_failed]", time.Minute, "[fix_profile_failure]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := healthy()
			c.mod(&f)
			r := trust.ComputeReadiness(f, now, trust.Config{})
			d := trust.Decide(f, r, c.purpose, now, trust.Config{})
			codes := []string{}
			for _, rs := range d.Reasons {
				codes = append(codes, rs.Code)
			}
			if d.Decision != c.decision || fmt.Sprint(codes) != c.reasons || d.TTL != c.ttl || fmt.Sprint(d.RequiredActions) != c.actions {
				t.Fatalf("decision %s reasons %v ttl %v actions %v", d.Decision, codes, d.TTL, d.RequiredActions)
			}
			if !d.ValidUntil.Equal(now.Add(c.ttl)) || d.Purpose != c.purpose || d.SLAHours == nil || *d.SLAHours != 24 {
				t.Fatalf("valid_until %v purpose %s sla %v", d.ValidUntil, d.Purpose, d.SLAHours)
			}
		})
	}
}

func TestUsageClassOf(t *testing.T) {
	for _, c := range []struct {
		qpd   float64
		reads int
		last  *time.Time
		want  string
	}{{150, 0, nil, "hot"}, {0, 120, nil, "hot"}, {2, 0, nil, "active"}, {0, 1, nil, "active"}, {0.2, 0, nil, "cold"},
		{0, 0, ptr(now.Add(-100 * 24 * time.Hour)), "cold"}, {0, 0, ptr(now.Add(-200 * 24 * time.Hour)), "dead"}, {0, 0, nil, "dead"}} {
		if got := trust.UsageClassOf(&c.qpd, c.reads, c.last, now); got != c.want {
			t.Errorf("%v %v %v: %s, want %s", c.qpd, c.reads, c.last, got, c.want)
		}
	}
	if got := trust.UsageClassOf(nil, 2, nil, now); got != "active" {
		t.Errorf("unknown query usage with reads: %s, want active", got)
	}
}
