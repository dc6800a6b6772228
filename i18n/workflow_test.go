package i18n_test

import (
	"os"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/vigia-data/vigia/i18n"
)

// Every key of an area catalogue exists, translated, in the three languages.
func TestAreaCataloguesAreComplete(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]string
	b, err := os.ReadFile("locales/workflow.en.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys) < 20 {
		t.Fatalf("only %d keys", len(keys))
	}
	params := map[string]any{"ref_dataset": "vendas.clientes", "column": "c", "reason": "not_found", "min_length": 1, "max_length": 2, "status": "skipped"}
	for key := range keys {
		pt, en, es := c.Message(i18n.PT, key, params), c.Message(i18n.EN, key, params), c.Message(i18n.ES, key, params)
		if pt == key || en == key || es == key || pt == en || en == es || strings.Contains(pt+en+es, "<no value>") {
			t.Errorf("%s: pt=%q en=%q es=%q", key, pt, en, es)
		}
	}
}
