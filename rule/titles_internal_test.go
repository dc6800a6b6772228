package rule

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/i18n"
)

// A failed rule's issue title is stored as a message key and parameters and rendered in
// the reader's language: for every rule type, named or not, the Portuguese rendering of
// the stored key and parameters (as the jsonb column gives them back) is exactly the
// title stored for old readers, and English and Spanish are other words with the same
// figures. Fails if a type's title is frozen (no message) or the message drifts from it.
func TestRuleIssueTitlesRenderInTheReadersLanguage(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	types := append(Types(), TypeDBTTest)
	for _, typ := range types {
		for _, name := range []string{"", "clientes_nif"} {
			thr := 2.5
			r := ScanRule{Rule: Rule{Type: typ, Name: name, Params: Params{Columns: []string{"nif", "pais"}}}}
			stored, key, params := issueTitle("public.clientes", r, 1234567, &thr)
			raw, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if !c.Has(key) {
				t.Fatalf("%s: no message %s: the title is frozen in Portuguese", typ, key)
			}
			pt, en, es := c.Message(i18n.PT, key, back), c.Message(i18n.EN, key, back), c.Message(i18n.ES, key, back)
			if pt != stored {
				t.Errorf("%s %q: pt renders %q, stored %q", typ, name, pt, stored)
			}
			for lang, s := range map[string]string{"en": en, "es": es} {
				if s == pt || i18n.IsIncomplete(s) || !strings.Contains(s, "1234567") || !strings.Contains(s, "2.5") ||
					!strings.Contains(s, "public.clientes") {
					t.Errorf("%s %q: %s renders %q", typ, name, lang, s)
				}
				if name != "" && !strings.Contains(s, name) {
					t.Errorf("%s: %s rendering drops the rule's name: %q", typ, lang, s)
				}
			}
			if strings.Contains(en, "falhou") || strings.Contains(en, "linha") {
				t.Errorf("%s: en is Portuguese: %q", typ, en)
			}
		}
	}
}
