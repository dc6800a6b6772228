package delivery_test

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/vigia-data/vigia/webhook/delivery"
)

// The changelog's deprecation of the previous product name's headers says when they
// stop, and deliveries stop sending them then: the sunset day is the last day sent.
func TestChangelogAnnouncesLegacyHeadersSunset(t *testing.T) {
	b, err := os.ReadFile("../../docs/CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)### Deprecated.*?- Webhook headers `" + regexp.QuoteMeta(delivery.DefaultLegacyPrefix) +
		`\*` + "`" + `[^\n]*(?:\n  [^\n]*)*?sunset (\d{4}-\d{2}-\d{2})`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the changelog does not announce the end of the %s* headers under Deprecated", delivery.DefaultLegacyPrefix)
	}
	sunset, err := time.Parse(time.DateOnly, string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if want := delivery.DefaultLegacyUntil().AddDate(0, 0, -1); !sunset.Equal(want) {
		t.Fatalf("changelog sunset %s, deliveries send the legacy headers through %s", sunset.Format(time.DateOnly), want.Format(time.DateOnly))
	}
	last := delivery.Headers("scan.finished", "d1", 1, "v1=x", "", delivery.DefaultLegacyPrefix, delivery.DefaultLegacyUntil(),
		sunset.Add(23*time.Hour))
	after := delivery.Headers("scan.finished", "d1", 1, "v1=x", "", delivery.DefaultLegacyPrefix, delivery.DefaultLegacyUntil(),
		sunset.AddDate(0, 0, 1))
	if last.Get(delivery.DefaultLegacyPrefix+"Event") == "" || after.Get(delivery.DefaultLegacyPrefix+"Event") != "" {
		t.Fatalf("on the sunset day %v, the day after %v", last, after)
	}
}
