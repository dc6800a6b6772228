package product_test

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/trust"
)

func ptr[T any](v T) *T { return &v }

func snap(mod func(s *product.Snapshot)) product.Snapshot {
	s := product.Snapshot{Name: "Vendas", Description: "d", OwnerName: ptr("Equipa"), Status: "published",
		SLA:      product.SLA{AvailabilityObjectivePct: ptr(99.0), RetentionDays: ptr(365), DimensionTargets: map[string]float64{"completude": 90}},
		Datasets: []product.SnapshotDataset{{ID: "a", Name: "s.a", ContractColumns: []string{"id", "valor"}}, {ID: "b", Name: "s.b"}}}
	if mod != nil {
		mod(&s)
	}
	return s
}

func TestDiffAndBump(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(s *product.Snapshot)
		kinds string
		bump  string
	}{
		{"Nothing", nil, "[]", "none"},
		{"DatasetLeft", func(s *product.Snapshot) { s.Datasets = s.Datasets[:1] }, "[dataset_removed]", "major"},
		{"DatasetAdded", func(s *product.Snapshot) {
			s.Datasets = append(s.Datasets, product.SnapshotDataset{ID: "c", Name: "s.c"})
		},
			"[dataset_added]", "minor"},
		{"ContractColumnVanished", func(s *product.Snapshot) { s.Datasets[0].ContractColumns = []string{"id"} }, "[contract_column_removed]", "major"},
		{"ContractColumnAdded", func(s *product.Snapshot) { s.Datasets[1].ContractColumns = []string{"x"} }, "[contract_column_added]", "minor"},
		{"AvailabilityLowered", func(s *product.Snapshot) { s.SLA.AvailabilityObjectivePct = ptr(95.0) }, "[availability_objective_lowered]", "major"},
		{"AvailabilityRaised", func(s *product.Snapshot) { s.SLA.AvailabilityObjectivePct = ptr(99.9) }, "[availability_objective_raised]", "minor"},
		{"AvailabilityRemoved", func(s *product.Snapshot) { s.SLA.AvailabilityObjectivePct = nil }, "[availability_objective_removed]", "major"},
		{"RetentionLowered", func(s *product.Snapshot) { s.SLA.RetentionDays = ptr(30) }, "[retention_lowered]", "major"},
		{"RetentionRaised", func(s *product.Snapshot) { s.SLA.RetentionDays = ptr(730) }, "[retention_raised]", "minor"},
		{"WeightsSet", func(s *product.Snapshot) {
			s.SLA.DimensionWeights = map[string]float64{"completude": 60, "unicidade": 40, "validade": 0, "atualidade": 0, "consistencia": 0}
		}, "[dimension_weights_changed]", "major"},
		{"DefaultWeightsWrittenOutAreNoChange", func(s *product.Snapshot) {
			s.SLA.DimensionWeights = map[string]float64{"completude": 20, "unicidade": 20, "validade": 20, "atualidade": 20, "consistencia": 20}
		}, "[]", "none"},
		{"TargetRaised", func(s *product.Snapshot) { s.SLA.DimensionTargets["completude"] = 95 }, "[dimension_target_raised]", "minor"},
		{"TargetAdded", func(s *product.Snapshot) { s.SLA.DimensionTargets["unicidade"] = 99 }, "[dimension_target_added]", "minor"},
		{"TargetLowered", func(s *product.Snapshot) { s.SLA.DimensionTargets["completude"] = 80 }, "[dimension_target_lowered]", "major"},
		{"TargetRemoved", func(s *product.Snapshot) { s.SLA.DimensionTargets = map[string]float64{} }, "[dimension_target_removed]", "major"},
		{"TextAndAccess", func(s *product.Snapshot) { s.Name, s.OwnerName, s.Restricted = "Vendas PT", nil, true },
			"[name_changed owner_changed access_changed]", "minor"},
		{"MixedIsMajor", func(s *product.Snapshot) {
			s.SLA.DimensionTargets["completude"] = 95
			s.Datasets = s.Datasets[1:]
		}, "[dataset_removed dimension_target_raised]", "major"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from := snap(nil)
			to := snap(c.mod)
			ch := product.Diff(from, to)
			kinds := []string{}
			for _, x := range ch {
				kinds = append(kinds, x.Kind)
			}
			if fmt.Sprint(kinds) != c.kinds || product.BumpOf(ch) != c.bump {
				t.Fatalf("kinds %v bump %s", kinds, product.BumpOf(ch))
			}
		})
	}
}

func TestNextVersion(t *testing.T) {
	for _, c := range []struct {
		from product.Version
		bump string
		want string
	}{{product.Version{}, "initial", "1.0"}, {product.Version{Major: 1}, "initial", "1.0"}, {product.Version{Major: 1, Minor: 3}, "major", "2.0"},
		{product.Version{Major: 2, Minor: 1}, "minor", "2.2"}} {
		if got := product.Next(c.from, c.bump).String(); got != c.want {
			t.Errorf("%v %s: %s", c.from, c.bump, got)
		}
	}
	for in, ok := range map[string]bool{"1.0": true, "10.25": true, "01.0": false, "1": false, "1.0.0": false, "latest": false, "-1.0": false} {
		if _, got := product.ParseVersion(in); got != ok {
			t.Errorf("ParseVersion(%q) %v", in, got)
		}
	}
}

func TestSummaryPT(t *testing.T) {
	ch := product.Diff(snap(nil), snap(func(s *product.Snapshot) {
		s.Datasets = nil
		s.SLA.DimensionTargets["unicidade"] = 90
	}))
	if got := product.SummaryPT(product.BumpOf(ch), ch); got != "2 conjuntos de dados removidos; 1 meta de dimensão nova." {
		t.Fatalf("summary %q", got)
	}
	if got := product.SummaryPT(product.BumpInitial, nil); got != "Primeira publicação." {
		t.Fatalf("initial %q", got)
	}
}

var lisbon, _ = time.LoadLocation("Europe/Lisbon")

func TestComputeSLO(t *testing.T) {
	at := func(day, hour int) time.Time { return time.Date(2026, 3, day, hour, 0, 0, 0, time.UTC) }
	cov := func(ds string, t time.Time, profiled bool, verdict string, completude *float64) product.Coverage {
		return product.Coverage{DatasetID: ds, At: t, Profiled: profiled, Verdict: verdict, Dimensions: map[string]*float64{"completude": completude}}
	}
	in := product.SLOInput{Month: at(15, 0), Location: lisbon, Now: time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC), HistoryDays: 365,
		SLA:      product.SLA{AvailabilityObjectivePct: ptr(75.0), DimensionTargets: map[string]float64{"completude": 95}},
		Datasets: []product.SLODataset{{DatasetID: "b", DatasetName: "s.b"}, {DatasetID: "a", DatasetName: "s.a"}},
		Coverage: []product.Coverage{
			cov("a", at(1, 10), true, "pass", ptr(99.0)),
			cov("a", at(2, 10), true, "fail", ptr(99.0)),
			cov("a", at(3, 10), false, "unknown", nil),
			cov("a", at(4, 10), true, "pass", ptr(90.0)),
			cov("a", at(5, 10), true, "fail", ptr(99.0)), cov("a", at(5, 20), true, "warn", ptr(99.0)), // a good scan that day
			cov("a", at(6, 10), true, "pass", nil), // not computable: no miss
			// Days are read in Lisbon: 31 March 23:30 UTC is 1 April there (summer time, UTC+1)
			// and 28 February 23:30 UTC is still February (UTC+0): neither counts in March.
			cov("a", time.Date(2026, 3, 31, 23, 30, 0, 0, time.UTC), true, "pass", ptr(99.0)),
			cov("a", time.Date(2026, 2, 28, 23, 30, 0, 0, time.UTC), true, "fail", ptr(99.0)),
			cov("b", at(1, 10), true, "pass", ptr(96.0)),
		}}
	r := product.ComputeSLO(in)
	a, b := r.Datasets[0], r.Datasets[1]
	if a.DatasetName != "s.a" || a.MetDays != 3 || a.ViolatedDays != 3 || *a.AvailabilityPct != 50 || a.HistoryDays != 31 ||
		a.Breakdown["verdict_fail"] != 1 || a.Breakdown["not_profiled"] != 1 || a.Breakdown["dimension_target"] != 1 {
		t.Fatalf("a %+v", a)
	}
	if b.MetDays != 1 || b.ViolatedDays != 0 || *b.AvailabilityPct != 100 {
		t.Fatalf("b %+v", b)
	}
	// 4 met of 7 counted days: 57.14% < 75%.
	if r.Month != "2026-03" || r.MetDays != 4 || r.ViolatedDays != 3 || *r.AvailabilityPct != 57.14 || *r.ObjectiveMet || r.HistoryDays != 62 {
		t.Fatalf("report %+v", r)
	}
	t.Run("HistoryWindowAndFuture", func(t *testing.T) {
		in := in
		in.Now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) // March 10: days 11-31 are in the future
		in.HistoryDays = 5                                     // window: March 6-10
		r := product.ComputeSLO(in)
		if r.Datasets[0].HistoryDays != 5 || r.Datasets[0].MetDays != 1 || r.Datasets[0].ViolatedDays != 0 {
			t.Fatalf("windowed %+v", r.Datasets[0])
		}
		if r.Datasets[1].AvailabilityPct != nil || r.Datasets[1].HistoryDays != 5 {
			t.Fatalf("no counted day must give null: %+v", r.Datasets[1])
		}
	})
}

func TestBadgeIsValidSVG(t *testing.T) {
	for _, c := range []struct {
		verdict string
		score   *float64
		text    string
		color   string
	}{{"pass", ptr(92.456), "pass · 92.46", "#2e7d32"}, {"fail", ptr(41.0), "fail · 41", "#c62828"},
		{"warn", nil, "warn", "#b26a00"}, {"<script>", nil, "unknown", "#616161"}} {
		b := product.Badge(c.verdict, c.score)
		var doc struct {
			XMLName xml.Name `xml:"http://www.w3.org/2000/svg svg"`
			Title   string   `xml:"title"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v\n%s", c.verdict, err, b)
		}
		if doc.Title != "qualidade: "+c.text || !strings.Contains(string(b), `fill="`+c.color+`"`) || strings.Contains(string(b), "<script") {
			t.Fatalf("%s: title %q\n%s", c.verdict, doc.Title, b)
		}
	}
}

func readiness(status string, blockers, warnings []string, score float64) trust.Readiness {
	mk := func(keys []string) []trust.Finding {
		out := []trust.Finding{}
		for _, k := range keys {
			out = append(out, trust.Finding{Key: k})
		}
		return out
	}
	var ucs []trust.UseCase
	for _, p := range trust.Purposes() {
		ucs = append(ucs, trust.UseCase{UseCase: p, Status: status, Score: score, Blockers: mk(blockers), Warnings: mk(warnings)})
	}
	return trust.Readiness{UseCases: ucs}
}

func TestComputeDomainReadiness(t *testing.T) {
	ok := readiness("ready", nil, nil, 90)
	warn := readiness("ready_with_warnings", nil, []string{"stale_data"}, 70)
	bad := readiness("not_ready", []string{"critical_issue"}, nil, 30)
	cases := []struct {
		name   string
		d      product.Domain
		ds     []trust.Readiness
		pct    *float64
		status string
		items  string
	}{
		{"Ready", product.Domain{Status: "published"}, []trust.Readiness{ok, ok}, nil, "ready", "[] []"},
		{"Draft", product.Domain{Status: "draft"}, []trust.Readiness{ok}, nil, "ready_with_warnings", "[] [draft]"},
		{"Deprecated", product.Domain{Status: "deprecated"}, []trust.Readiness{ok}, nil, "not_ready", "[deprecated] []"},
		{"NoDatasets", product.Domain{Status: "published"}, nil, nil, "not_ready", "[no_datasets] []"},
		{"RetentionShortForML", product.Domain{Status: "published", SLA: product.SLA{RetentionDays: ptr(100)}}, []trust.Readiness{ok}, nil,
			"ready_with_warnings", "[] [retention_short]"},
		{"SLOBelowObjective", product.Domain{Status: "published", SLA: product.SLA{AvailabilityObjectivePct: ptr(99.0)}}, []trust.Readiness{ok},
			ptr(95.0), "ready_with_warnings", "[] [slo_below_objective]"},
		{"DatasetFindingsAggregate", product.Domain{Status: "published"}, []trust.Readiness{warn, bad, warn}, nil, "not_ready",
			"[critical_issue] [stale_data]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := product.ComputeReadiness(c.d, c.ds, c.pct, product.ConsumerCounts{})
			u := r.UseCase(product.UseML)
			var b, w []string
			for _, i := range u.Blockers {
				b = append(b, i.Code)
			}
			for _, i := range u.Warnings {
				w = append(w, i.Code)
			}
			if got := fmt.Sprintf("%v %v", nonNil(b), nonNil(w)); u.Status != c.status || got != c.items {
				t.Fatalf("ml: %s %s", u.Status, got)
			}
		})
	}
	r := product.ComputeReadiness(product.Domain{Status: "published"}, []trust.Readiness{warn, bad, warn}, nil, product.ConsumerCounts{})
	u := r.UseCase(product.UseRAG)
	if *u.Score != 56.67 || u.DatasetsReady != 2 || u.DatasetsTotal != 3 || u.Warnings[0].Params["datasets"] != 2 {
		t.Fatalf("aggregate %+v", u)
	}
	if rag := product.ComputeReadiness(product.Domain{Status: "published", SLA: product.SLA{RetentionDays: ptr(100)}}, []trust.Readiness{ok}, nil,
		product.ConsumerCounts{}).UseCase(product.UseRAG); rag.Status != "ready" {
		t.Fatalf("100 days are enough for rag: %+v", rag)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestDomainKindOf(t *testing.T) {
	for in, want := range map[string]string{"agent": "ai_system", "notebook": "user", "application": "external", "pipeline": "external"} {
		if got := product.DomainKindOf(in); got != want {
			t.Errorf("%s: %s", in, got)
		}
	}
	got := product.CountConsumers([]product.DomainConsumer{{Kind: "user"}, {Kind: "ai_system"}, {Kind: "ai_system"}})
	if got.Total != 3 || got.ByKind["ai_system"] != 2 || got.ByKind["dbt_exposure"] != 0 {
		t.Fatalf("counts %+v", got)
	}
}
