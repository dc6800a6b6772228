package finops_test

import (
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/finops"
)

func TestComputeSharesADatasetBetweenItsDomains(t *testing.T) {
	f := finops.Facts{WorkspaceName: "ws",
		Domains: map[string]finops.DomainRef{"d1": {ID: "d1", Name: "Vendas", Visible: true}, "d2": {ID: "d2", Name: "Clientes", Visible: true},
			"d3": {ID: "d3", Name: "Secreto", Visible: false}},
		Profiles: []finops.ProfileUse{
			{Month: "2026-10", DatasetID: "shared", Domains: []string{"d1", "d2"}, Profiles: 2, Bytes: 1001},
			{Month: "2026-10", DatasetID: "one", Domains: []string{"d1"}, Profiles: 1, Bytes: 500},
			{Month: "2026-10", DatasetID: "loose", Profiles: 3, Bytes: 30},
			{Month: "2026-11", DatasetID: "hidden", Domains: []string{"d3"}, Profiles: 1, Bytes: 10},
		},
		Reports: []finops.ReportUse{{Month: "2026-10", DomainID: "d2"}, {Month: "2026-10", DatasetID: "shared", DatasetDomains: []string{"d1", "d2"}}, {Month: "2026-10"}},
	}
	rows := finops.Compute("w", f)
	type fig struct{ scans, datasets, reports, bytes float64 }
	got := map[string]fig{}
	var order []string
	for _, r := range rows {
		name := "(none)"
		if r.EntityName != nil {
			name = *r.EntityName
		}
		k := r.Month + " " + r.Dimension + " " + name
		order = append(order, k)
		got[k] = fig{r.Scans, r.Datasets, r.Reports, r.ProfileBytes}
	}
	want := map[string]fig{
		"2026-10 workspace ws":    {6, 3, 3, 1531},
		"2026-10 domain Vendas":   {1 + 1, 0.5 + 1, 0.5, 500.5 + 500},
		"2026-10 domain Clientes": {1, 0.5, 1 + 0.5, 500.5},
		"2026-10 domain (none)":   {3, 1, 1, 30},
		"2026-11 workspace ws":    {1, 1, 0, 10},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v", order)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	if strings.Join(order, "|") != "2026-10 workspace ws|2026-10 domain Clientes|2026-10 domain Vendas|2026-10 domain (none)|2026-11 workspace ws" {
		t.Errorf("order %v", order)
	}
}

// A dataset that moved from Vendas to Clientes in March counts in Vendas before March,
// in Clientes after, and in March in both in proportion to its profiles under each
// membership (once in the workspace row); a dataset report follows the membership of
// its own time. The workspace rows equal the sum of their domain rows.
func TestComputeCountsMembershipsOfTheTimeOfTheCost(t *testing.T) {
	f := finops.Facts{WorkspaceName: "ws",
		Domains: map[string]finops.DomainRef{"v": {ID: "v", Name: "Vendas", Visible: true}, "c": {ID: "c", Name: "Clientes", Visible: true}},
		Profiles: []finops.ProfileUse{
			{Month: "2026-02", DatasetID: "moved", Domains: []string{"v"}, Profiles: 4, Bytes: 400},
			{Month: "2026-03", DatasetID: "moved", Domains: []string{"v"}, Profiles: 1, Bytes: 100},
			{Month: "2026-03", DatasetID: "moved", Domains: []string{"c"}, Profiles: 3, Bytes: 300},
			{Month: "2026-03", DatasetID: "stay", Domains: []string{"c"}, Profiles: 2, Bytes: 20},
			{Month: "2026-04", DatasetID: "moved", Domains: []string{"c"}, Profiles: 2, Bytes: 200},
		},
		Reports: []finops.ReportUse{{Month: "2026-03", DatasetID: "moved", DatasetDomains: []string{"v"}},
			{Month: "2026-04", DatasetID: "moved", DatasetDomains: []string{"c"}}},
	}
	type fig struct{ scans, datasets, reports, bytes float64 }
	got := map[string]fig{}
	for _, r := range finops.Compute("w", f) {
		got[r.Month+" "+*r.EntityName] = fig{r.Scans, r.Datasets, r.Reports, r.ProfileBytes}
	}
	want := map[string]fig{
		"2026-02 ws":       {4, 1, 0, 400},
		"2026-02 Vendas":   {4, 1, 0, 400},
		"2026-03 ws":       {6, 2, 1, 420},
		"2026-03 Vendas":   {1, 0.25, 1, 100},
		"2026-03 Clientes": {5, 0.75 + 1, 0, 320},
		"2026-04 ws":       {2, 1, 1, 200},
		"2026-04 Clientes": {2, 1, 1, 200},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v", got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
}

func TestConvertNeedsARateOutsideEUR(t *testing.T) {
	if m := finops.Convert(10, "EUR", nil); m.Amount == nil || *m.Amount != 10 || m.FX != nil {
		t.Fatalf("EUR %+v", m)
	}
	if m := finops.Convert(10, "USD", nil); m.Amount != nil {
		t.Fatalf("USD without rate %+v", m)
	}
	r := &finops.Rate{Currency: "USD", PerEUR: 1.0832}
	if m := finops.Convert(10, "USD", r); m.Amount == nil || *m.Amount != 10.83 || m.FX != r {
		t.Fatalf("USD %+v", m)
	}
}

func TestParseRates(t *testing.T) {
	rates, err := finops.ParseRates(strings.NewReader("currency,date,per_eur\n# ECB\nUSD,2026-10-31,1.0832\ngbp, 2026-10-31, 0.8421\n"))
	if err != nil || len(rates) != 2 || rates[1].Currency != "GBP" || rates[1].PerEUR != 0.8421 || rates[0].Date.Day() != 31 {
		t.Fatalf("%+v %v", rates, err)
	}
	for _, bad := range []string{"EUR,2026-10-31,1\n", "XYZ,2026-10-31,1\n", "USD,31/10/2026,1\n", "USD,2026-10-31,-1\n", "USD,2026-10-31\n"} {
		_, err := finops.ParseRates(strings.NewReader(bad))
		if !vigia.IsKind(err, vigia.KindInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "XYZ") {
			t.Errorf("error echoes the line: %v", err)
		}
	}
}
