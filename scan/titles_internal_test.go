package scan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/quality"
)

// roundTrip gives params back as the issues' title_params jsonb column does.
func roundTrip(t *testing.T, params map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// Anomaly and schema-drift issue titles are stored as a key and parameters: the
// Portuguese rendering is exactly the stored title, English and Spanish other words
// with the same figures. Fails if one of them is frozen in Portuguese (no message) or
// its message drifts from the stored text.
func TestScanIssueTitlesRenderInTheReadersLanguage(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	d := DatasetRef{Schema: "public", Table: "vendas"}
	type title struct {
		stored, key string
		params      map[string]any
		figures     []string
	}
	var titles []title
	for _, m := range []struct {
		metric        quality.Metric
		value, median float64
		figures       []string
	}{
		{quality.MetricVolume, 1520, 12000, []string{"1520", "12000"}},
		{quality.MetricNullRate, 0.4567, 0.05, []string{"45.7", "5.0"}},
		{quality.MetricFreshnessLag, 7 * 3600, 3600, []string{"7", "1"}},
		{quality.MetricDistinctRatio, 0.123, 0.98, []string{"12.3", "98.0"}},
	} {
		stored, params := anomalyTitle(d, string(m.metric), "email", m.value, m.median)
		titles = append(titles, title{stored, "issue.anomaly." + string(m.metric), params, m.figures})
	}
	var res DatasetResult
	res.addDrift(d, quality.Drift{Added: []quality.ColumnShape{{Name: "a"}}, Dropped: []quality.ColumnShape{{Name: "b"}, {Name: "c"}}})
	if len(res.NewIssues) != 1 {
		t.Fatalf("drift issues %+v", res.NewIssues)
	}
	ni := res.NewIssues[0]
	titles = append(titles, title{ni.Title, ni.TitleKey, ni.TitleParams, []string{"2", "0", "1"}})
	for _, x := range titles {
		if !c.Has(x.key) {
			t.Fatalf("no message %s: the title is frozen in Portuguese", x.key)
		}
		params := roundTrip(t, x.params)
		pt, en, es := c.Message(i18n.PT, x.key, params), c.Message(i18n.EN, x.key, params), c.Message(i18n.ES, x.key, params)
		if pt != x.stored {
			t.Errorf("%s: pt renders %q, stored %q", x.key, pt, x.stored)
		}
		for lang, s := range map[string]string{"en": en, "es": es} {
			if s == pt || i18n.IsIncomplete(s) || !strings.Contains(s, "public.vendas") {
				t.Errorf("%s: %s renders %q", x.key, lang, s)
			}
			for _, f := range x.figures {
				if !strings.Contains(s, f) {
					t.Errorf("%s: %s rendering %q lacks %s", x.key, lang, s, f)
				}
			}
		}
	}
}
