// Package i18n holds Vigia's message catalogues (pt-PT, en, es) and the rule that picks
// the language of a response: account locale, else workspace default, else
// Accept-Language, else pt-PT.
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"
	texttemplate "text/template"

	"github.com/goccy/go-yaml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/nicksnyder/go-i18n/v2/i18n/template"
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
	s, err := loc.Localize(&goi18n.LocalizeConfig{MessageID: key, TemplateData: params, TemplateParser: parser})
	if err != nil || s == "" {
		return key
	}
	return s
}

// parser parses every message with the number formats below. One parser for every
// call, so the parsed templates are cached (go-i18n caches the first parse of each).
var parser = &cachedParser{template.TextParser{Funcs: texttemplate.FuncMap{
	"num": func(v any) string {
		return withFloat(v, func(f float64) string {
			if f == math.Trunc(f) && math.Abs(f) < 1e15 {
				return strconv.FormatInt(int64(f), 10)
			}
			return strconv.FormatFloat(f, 'f', -1, 64)
		})
	},
	"fixed0": func(v any) string {
		return withFloat(v, func(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) })
	},
	"pct1": func(v any) string {
		return withFloat(v, func(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) })
	},
	"hours0": func(v any) string {
		return withFloat(v, func(f float64) string { return strconv.FormatFloat(f/3600, 'f', 0, 64) })
	},
}}}

// cachedParser is a text parser with functions whose parses may be cached: the
// functions never change.
type cachedParser struct{ template.TextParser }

func (*cachedParser) Cacheable() bool { return true }

// noValue is what a template prints for a parameter it was not given (text/template's
// own word), so that a message rendered from incomplete parameters is recognisable.
const noValue = "<no value>"

// IsIncomplete reports whether a rendered message lacked a parameter it names (a row
// written before its message existed, with other parameters).
func IsIncomplete(s string) bool { return strings.Contains(s, noValue) }

// withFloat formats a number parameter (as the producer gave it, or as JSON decoded
// it); anything else is a missing parameter.
func withFloat(v any, format func(float64) string) string {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return noValue
		}
	default:
		return noValue
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return noValue
	}
	return format(f)
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
		s, err := loc.Localize(&goi18n.LocalizeConfig{MessageID: k, TemplateParser: parser})
		if err != nil || s == "" {
			continue
		}
		out[k] = s
	}
	return out
}

// Has reports whether key exists in the Portuguese catalogue (the reference one).
func (c *Catalog) Has(key string) bool {
	_, err := c.localizers[PT].Localize(&goi18n.LocalizeConfig{MessageID: key, TemplateParser: parser})
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
