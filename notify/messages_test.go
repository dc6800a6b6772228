package notify_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/vigia-data/vigia/notify"
)

// Every message key this package uses exists in the three catalogues: a missing one
// would put the key itself in a title, a body or an error detail.
func TestEveryMessageKeyIsTranslated(t *testing.T) {
	catalogues := map[string]map[string]string{}
	for _, lang := range []string{"pt-PT", "en", "es"} {
		raw, err := os.ReadFile(filepath.Join("..", "i18n", "locales", lang+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		if err := yaml.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		catalogues[lang] = m
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`"((?:webhook|error)\.[a-z_.]+)"`)
	var keys []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			k := m[1]
			switch {
			case k == notify.JobKind:
			case k == "webhook.word.":
				for _, w := range []string{"pass", "warn", "fail", "unknown", "info", "warning", "critical"} {
					keys = append(keys, k+w)
				}
			case k == "webhook.test.":
				for _, r := range []string{notify.TestAcceptedSigned, notify.TestAcceptedUnsigned, notify.TestSignatureRefused,
					notify.TestHTTPError, notify.TestTimeout, notify.TestDestinationRefused, notify.TestFailed} {
					keys = append(keys, k+r)
				}
			case strings.HasSuffix(k, "."):
				t.Fatalf("unhandled key prefix %q", k)
			case catalogues["pt-PT"][k+".title"] != "":
				keys = append(keys, k+".title", k+".body")
			default:
				keys = append(keys, k)
			}
		}
	}
	for _, code := range []string{"url_invalid", "url_scheme", "url_userinfo", "destination_refused", "unresolvable",
		"uuid_parsing", "too_long", "too_short", "key_mismatch", "project_mismatch"} {
		keys = append(keys, "validation."+code)
	}
	if len(keys) < 40 {
		t.Fatalf("found only %d keys: the scan is broken", len(keys))
	}
	for _, k := range keys {
		for lang, m := range catalogues {
			if m[k] == "" {
				t.Errorf("%s: %s missing", lang, k)
			}
		}
	}
}
