package i18n_test

import (
	"strings"
	"testing"

	"github.com/vigia-data/vigia/i18n"
)

func TestResolveFollowsContractOrder(t *testing.T) {
	cases := []struct {
		name, account, workspace, accept, want string
	}{
		{"NoneGivesPortuguese", "", "", "", i18n.PT},
		{"AcceptEnglish", "", "", "en", i18n.EN},
		{"AcceptSpanish", "", "", "es-ES,es;q=0.9", i18n.ES},
		{"GermanGetsEnglish", "", "", "de-DE", i18n.EN},
		{"FrenchGetsEnglish", "", "", "fr", i18n.EN},
		{"UnsupportedFallsThrough", "", "", "ja, es;q=0.5", i18n.ES},
		{"WorkspaceBeatsHeader", "", "es-ES", "en", i18n.ES},
		{"AccountBeatsWorkspace", "en-GB", "es-ES", "pt", i18n.EN},
		{"AccountSwissGerman", "de-CH", "", "", i18n.EN},
		{"GarbageHeader", "", "", ";;;", i18n.PT},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := i18n.Resolve(c.account, c.workspace, c.accept); got != c.want {
				t.Fatalf("Resolve(%q,%q,%q) = %q, want %q", c.account, c.workspace, c.accept, got, c.want)
			}
		})
	}
}

func TestCataloguesHaveTheSameKeys(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"error.not_found", "error.token_read_only", "validation.less_than_equal"} {
		pt, en, es := c.Message(i18n.PT, key, map[string]any{"le": 500}), c.Message(i18n.EN, key, map[string]any{"le": 500}), c.Message(i18n.ES, key, map[string]any{"le": 500})
		if pt == key || en == key || es == key || pt == en || en == es {
			t.Errorf("%s: pt=%q en=%q es=%q", key, pt, en, es)
		}
	}
	if got := c.Message(i18n.EN, "validation.less_than_equal", map[string]any{"le": 500}); got != "Must be less than or equal to 500." {
		t.Errorf("params not applied: %q", got)
	}
}

// A connection test that fails says why in words, per reason, never as a raw key.
func TestConnectionFailedSaysWhy(t *testing.T) {
	c, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{i18n.PT, i18n.EN, i18n.ES} {
		generic := c.FieldMessage(lang, "connection_failed", nil)
		auth := c.FieldMessage(lang, "connection_failed", map[string]any{"reason": "auth_failed"})
		unknown := c.FieldMessage(lang, "connection_failed", map[string]any{"reason": "no_such_reason"})
		if strings.HasPrefix(generic, "validation.") || strings.HasPrefix(auth, "validation.") || auth == generic || unknown != generic {
			t.Errorf("%s: generic %q, auth_failed %q, unknown reason %q", lang, generic, auth, unknown)
		}
	}
}
