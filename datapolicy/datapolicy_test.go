package datapolicy_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/datapolicy"
)

func days(n int) *int { return &n }

func TestEvaluatePIIRetention(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ago := func(d int) *time.Time { t := now.AddDate(0, 0, -d); return &t }
	rule := datapolicy.Rule{Key: datapolicy.RulePIIRetention, Enabled: true, MaxAgeDays: days(30), Severity: "warning"}
	ws := datapolicy.Policy{Rules: []datapolicy.Rule{rule}}
	email := datapolicy.Column{Name: "contacto", Class: "text", SemanticType: "email", SemanticMatches: 10}
	cases := []struct {
		name     string
		cols     []datapolicy.Column
		violated bool
	}{
		{"old record with personal data", []datapolicy.Column{email, {Name: "criado_em", Class: "temporal", MinTime: ago(45)}}, true},
		{"recent records", []datapolicy.Column{email, {Name: "criado_em", Class: "temporal", MinTime: ago(5)}}, false},
		{"no personal data", []datapolicy.Column{{Name: "valor", Class: "numeric"}, {Name: "criado_em", Class: "temporal", MinTime: ago(400)}}, false},
		// A birth date is personal data, not a record's date.
		{"birth date only", []datapolicy.Column{email, {Name: "data_nascimento", Class: "temporal", MinTime: ago(9000)}}, false},
		// Every record-date column must be older than the limit.
		{"one recent date column", []datapolicy.Column{email, {Name: "inicio_contrato", Class: "temporal", MinTime: ago(900)},
			{Name: "criado_em", Class: "temporal", MinTime: ago(3)}}, false},
		{"a PII name without a detected type", []datapolicy.Column{{Name: "telefone", Class: "text"}, {Name: "criado_em", Class: "temporal", MinTime: ago(31)}}, true},
	}
	for _, c := range cases {
		out := datapolicy.Evaluate(datapolicy.Dataset{ID: "d", Columns: c.cols}, ws, nil, now)
		if len(out) != 1 || out[0].Violated != c.violated || out[0].Source != "workspace" {
			t.Errorf("%s: %+v, want violated %v", c.name, out, c.violated)
		}
	}

	// A domain's rule replaces the workspace's; a disabled rule applies nothing.
	d := datapolicy.Dataset{ID: "d", Columns: []datapolicy.Column{email, {Name: "criado_em", Class: "temporal", MinTime: ago(45)}},
		Domains: []datapolicy.Domain{{ID: "b", Name: "vendas"}, {ID: "a", Name: "clientes"}}}
	byDomain := map[string]datapolicy.Policy{
		"a": {Rules: []datapolicy.Rule{{Key: datapolicy.RulePIIRetention, Enabled: true, MaxAgeDays: days(60), Severity: "critical"}}},
		"b": {Rules: []datapolicy.Rule{{Key: datapolicy.RulePIIRetention, Enabled: true, MaxAgeDays: days(10), Severity: "critical"}}},
	}
	out := datapolicy.Evaluate(d, ws, byDomain, now)
	if len(out) != 1 || out[0].Violated || out[0].Source != "domain:clientes" || out[0].Domain == nil || *out[0].Domain != "clientes" {
		t.Fatalf("domain override (first domain by name): %+v", out)
	}
	off := datapolicy.Policy{Rules: []datapolicy.Rule{{Key: datapolicy.RulePIIRetention, Enabled: false, MaxAgeDays: days(1)}}}
	if out := datapolicy.Evaluate(d, off, nil, now); len(out) != 0 {
		t.Fatalf("disabled rule: %+v", out)
	}
}
