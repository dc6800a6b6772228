package catalog_test

import (
	"context"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/i18n"
)

// Every read that shows an issue title renders it with RenderTitle: in the request's
// language from the stored key and parameters (an anomaly title in English), the stored
// text for a row without a key the catalogue knows, or whose parameters lack one the
// message names.
func TestRenderTitleInTheRequestsLanguage(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	stored := "Anomalia de volume em public.vendas: 1520 linhas (mediana 12000)"
	params := map[string]any{"dataset": "public.vendas", "column": "", "value": float64(1520), "median": float64(12000)}
	en := vigia.WithLang(context.Background(), i18n.EN)
	if got := catalog.RenderTitle(en, c, "issue.anomaly.volume", params, stored); got != "Volume anomaly on public.vendas: 1520 rows (median 12000)" {
		t.Errorf("en: %q", got)
	}
	if got := catalog.RenderTitle(vigia.WithLang(context.Background(), i18n.PT), c, "issue.anomaly.volume", params, stored); got != stored {
		t.Errorf("pt: %q", got)
	}
	if got := catalog.RenderTitle(en, c, "issue.anomaly.nonexistent", params, stored); got != stored {
		t.Errorf("unknown key: %q", got)
	}
	if got := catalog.RenderTitle(en, c, "issue.anomaly.volume", map[string]any{"dataset": "public.vendas"}, stored); got != stored {
		t.Errorf("older parameters: %q", got)
	}
}
