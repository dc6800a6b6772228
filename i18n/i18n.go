// Package i18n holds Vigia's message catalogues (pt-PT, en, es) and the rule that picks
// the language of a response: account locale, else workspace default, else
// Accept-Language, else pt-PT.
package i18n

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// The languages Vigia answers in.
const (
	PT = "pt-PT"
	EN = "en"
	ES = "es"
)

//go:embed locales/*.yaml
var locales embed.FS

// Catalog translates message keys into the supported languages.
type Catalog struct {
	bundle     *goi18n.Bundle
	localizers map[string]*goi18n.Localizer
	// keys are the message keys of every catalogue file, sorted, for Messages.
	keys []string
}

// New loads the embedded catalogues.
func New() (*Catalog, error) {
	b := goi18n.NewBundle(language.MustParse(PT))
	b.RegisterUnmarshalFunc("yaml", yaml.Unmarshal)
	// Each area may keep its messages in its own locales/<area>.<lang>.yaml.
	files, err := fs.Glob(locales, "locales/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("i18n: list catalogues: %w", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		mf, err := b.LoadMessageFileFS(locales, f)
		if err != nil {
			return nil, fmt.Errorf("i18n: load %s: %w", f, err)
		}
		for _, m := range mf.Messages {
			seen[m.ID] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := &Catalog{bundle: b, localizers: map[string]*goi18n.Localizer{}, keys: keys}
	for _, l := range []string{PT, EN, ES} {
		c.localizers[l] = goi18n.NewLocalizer(b, l, PT)
	}
	return c, nil
}

// Message returns the text of key in lang with params filled in. An unknown key gives
// the key itself, so a missing translation is visible but never fails a response.
func (c *Catalog) Message(lang, key string, params map[string]any) string {
	loc, ok := c.localizers[lang]
	if !ok {
		loc = c.localizers[PT]
	}
	s, err := loc.Localize(&goi18n.LocalizeConfig{MessageID: key, TemplateData: params})
	if err != nil || s == "" {
		return key
	}
	return s
}

// FieldMessage is the text of a 422 item of type typ: validation.<type>, or
// validation.<type>.<reason> when ctx names a reason the catalogue has words for
// (connection_failed: unreachable, auth_failed, ...).
func (c *Catalog) FieldMessage(lang, typ string, ctx map[string]any) string {
	key := "validation." + typ
	if reason, ok := ctx["reason"].(string); ok && c.Has(key+"."+reason) {
		key += "." + reason
	}
	return c.Message(lang, key, ctx)
}

// Messages returns every message whose key starts with prefix, in lang (pt-PT for an
// unknown language), unfilled: placeholders stay as {{.name}}. The web app reads its
// words this way, from the same catalogue as the API's.
func (c *Catalog) Messages(lang, prefix string) map[string]string {
	loc, ok := c.localizers[lang]
	if !ok {
		loc = c.localizers[PT]
	}
	out := map[string]string{}
	for _, k := range c.keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		s, err := loc.Localize(&goi18n.LocalizeConfig{MessageID: k})
		if err != nil || s == "" {
			continue
		}
		out[k] = s
	}
	return out
}

// Has reports whether key exists in the Portuguese catalogue (the reference one).
func (c *Catalog) Has(key string) bool {
	_, err := c.localizers[PT].Localize(&goi18n.LocalizeConfig{MessageID: key})
	return err == nil
}

// Normalize maps a locale tag (pt-PT, pt-BR, en-GB, es-ES, de-CH, fr-CH, ...) to the
// language Vigia answers in, or "" when the tag says nothing usable.
func Normalize(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if tag == "" {
		return ""
	}
	base, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	switch base {
	case "pt":
		return PT
	case "en", "de", "fr":
		return EN
	case "es":
		return ES
	}
	return ""
}

// FromAcceptLanguage picks the first supported language of an Accept-Language header,
// honouring q-values; "" when none is supported.
func FromAcceptLanguage(header string) string {
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil {
		return ""
	}
	for _, t := range tags {
		if l := Normalize(t.String()); l != "" {
			return l
		}
	}
	return ""
}

// Resolve applies the contract's order: account locale, workspace default,
// Accept-Language, pt-PT.
func Resolve(account, workspace, acceptLanguage string) string {
	for _, l := range []string{Normalize(account), Normalize(workspace), FromAcceptLanguage(acceptLanguage)} {
		if l != "" {
			return l
		}
	}
	return PT
}
