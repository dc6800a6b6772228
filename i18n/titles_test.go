package i18n_test

import (
	"testing"

	"github.com/vigia-data/vigia/i18n"
)

// Every issue-title key a producer stores (with the parameters it stores) has its
// message in the three catalogues, in other words than the Portuguese: a missing one
// leaves that producer's titles frozen in the language they were stored in. The rule,
// anomaly and schema-drift titles are checked against their producers' stored text in
// the rule and scan packages.
func TestEveryIssueTitleKeyIsTranslated(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	producers := map[string]map[string]any{
		"issue.contract":               {"dataset": "public.vendas", "version": "1.2.0", "violations": "column_missing, type_changed"},
		"issue.reconciliation":         {"check": "vendas_erp", "dataset": "public.vendas", "failed_groups": 3},
		"issue.modeling":               {"check": "fan_out", "dataset": "public.vendas", "columns": "cliente_id"},
		"issue.slo_breach":             {"dimension": "completude", "dataset": "public.vendas", "observed": "91.0", "target": "95.0"},
		"issue.pipeline.failing":       {"pipeline": "vendas_diarias", "orchestrator": "airflow", "failures": 3},
		"issue.pipeline.late":          {"pipeline": "vendas_diarias", "orchestrator": "airflow", "failures": 0},
		"issue.bi_refresh.failed":      {"bi_dataset": "Vendas", "tool": "powerbi"},
		"issue.bi_refresh.delayed":     {"bi_dataset": "Vendas", "tool": "powerbi"},
		"issue.policy_violation":       {"dataset": "public.vendas", "rule": "pii_retention_max_age", "label": "pii_retention_max_age 30d", "source": "workspace"},
		"issue.schema_drift":           {"dataset": "public.vendas", "added": 1, "dropped": 2, "type_changed": 0},
		"issue.anomaly.volume":         {"dataset": "public.vendas", "column": "", "value": 10.0, "median": 1000.0},
		"issue.anomaly.null_rate":      {"dataset": "public.vendas", "column": "email", "value": 0.5, "median": 0.01},
		"issue.anomaly.freshness_lag":  {"dataset": "public.vendas", "column": "", "value": 7200.0, "median": 3600.0},
		"issue.anomaly.distinct_ratio": {"dataset": "public.vendas", "column": "email", "value": 0.5, "median": 0.99},
	}
	for _, typ := range []string{"not_null", "unique", "accepted_values", "pattern", "range", "referential", "freshness",
		"row_count_min", "custom_sql", "dbt_test"} {
		producers["issue.rule."+typ] = map[string]any{"dataset": "public.vendas", "rule_type": typ, "column": "email", "observed": 3.0, "threshold": 0.0}
	}
	for key, params := range producers {
		if !c.Has(key) {
			t.Errorf("%s: no message", key)
			continue
		}
		pt, en, es := c.Message(i18n.PT, key, params), c.Message(i18n.EN, key, params), c.Message(i18n.ES, key, params)
		for lang, s := range map[string]string{"pt-PT": pt, "en": en, "es": es} {
			if s == key || i18n.IsIncomplete(s) {
				t.Errorf("%s in %s: %q", key, lang, s)
			}
		}
		if en == pt || es == pt {
			t.Errorf("%s: en %q, es %q, pt %q", key, en, es, pt)
		}
	}
}
