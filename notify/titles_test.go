package notify_test

import (
	"testing"

	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/notify"
)

// Deliveries and ticket comments name an issue by its title in the channel's language,
// rendered from the stored key and parameters: a rule issue's title in English and
// Spanish, not the Portuguese stored at creation. A row whose parameters lack one the
// message names (written before the message existed) keeps its stored text rather
// than a half-rendered title.
func TestIssueTitleInTheChannelsLanguage(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	is := notify.AlertIssue{Title: "Regra not_null falhou em public.clientes.nif: 3 linha(s) com nulos (máximo 0)",
		TitleKey: "issue.rule.not_null", Params: map[string]any{"dataset": "public.clientes", "column": "nif",
			"rule_type": "not_null", "observed": float64(3), "threshold": float64(0)}}
	want := map[string]string{
		i18n.PT: is.Title,
		i18n.EN: "Rule not_null failed on public.clientes.nif: 3 row(s) with nulls (maximum 0)",
		i18n.ES: "La regla not_null falló en public.clientes.nif: 3 fila(s) con nulos (máximo 0)",
	}
	for lang, w := range want {
		if got := notify.IssueTitle(c, lang, is); got != w {
			t.Errorf("%s: %q, want %q", lang, got, w)
		}
	}
	old := is
	old.Params = map[string]any{"dataset": "public.clientes"}
	if got := notify.IssueTitle(c, i18n.EN, old); got != is.Title {
		t.Errorf("a row with older parameters: %q, want its stored text", got)
	}
}
