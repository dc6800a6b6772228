package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/store/storetest"
)

// `vigia bench webhooks` runs every phase end to end and reports its figures; the
// figures themselves (and whether they meet the targets on this machine) are for the
// report, not asserted here.
func TestBenchWebhooksReportsFigures(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bench", "webhooks", "--deliveries", "64", "--rounds", "1", "--workspaces", "2",
		"--channels", "2", "--schedule", "0", "--receivers", "4", "--rate", "20", "--duration", "1s", "--slow-percent", "25", "--latency-rounds", "1", "--json"},
		&out, &errb)
	if code != 0 && code != 3 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	text := out.String()
	for _, want := range []string{"round 1 signed", "round 1 unsigned", "median p99", "no slow receivers"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
	var res WebhookBenchResult
	if err := json.Unmarshal([]byte(text[strings.Index(text, "{"):]), &res); err != nil {
		t.Fatalf("JSON figures: %v\n%s", err, text)
	}
	if len(res.SignedPerSecond) != 1 || res.Signed <= 0 || res.Unsigned <= 0 || res.BaselineP99MS <= 0 || res.SlowP99MS <= 0 {
		t.Fatalf("figures %+v", res)
	}
	if (code == 0) != res.Pass {
		t.Fatalf("exit %d but pass=%v", code, res.Pass)
	}
}
