package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
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

// `vigia bench rebuild` runs both sizes and the stopped and resumed runs, and the
// resumed run writes less than a full one.
func TestBenchRebuildReportsEveryRun(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "bench-test-key")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"bench", "rebuild", "--datasets", "8000"}, &out, &errb); code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	text := out.String()
	for _, want := range []string{"2000 datasets, from zero", "8000 datasets, from zero", "stopped at half", "resumed", "heap pages", "the resumed run wrote"} {
		if !strings.Contains(text, want) {
			t.Fatalf("report lacks %q:\n%s", want, text)
		}
	}
	var stopped, resumed, full int
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "8000 datasets, from zero") && len(f) > 5:
			full, _ = strconv.Atoi(f[5])
		case strings.HasPrefix(line, "stopped at half") && len(f) > 4:
			stopped, _ = strconv.Atoi(f[4])
		case strings.HasPrefix(line, "resumed") && len(f) > 2:
			resumed, _ = strconv.Atoi(f[2])
		}
	}
	if full == 0 || stopped < full/2 || stopped+resumed != full {
		t.Fatalf("full %d, stopped after %d, resumed wrote %d: the two parts must add up to one full run\n%s", full, stopped, resumed, text)
	}
}

// `vigia bench ide` times every editor read and the baseline under concurrent clients
// and says whether the resolve p99 met its target (exit 3 when not); the figures are
// for docs/benchmarks.md, not asserted here.
func TestBenchIDEReportsFigures(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "bench-test-key")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bench", "ide", "--datasets", "200", "--iterations", "40", "--clients", "2"}, &out, &errb)
	if code != 0 && code != 3 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	text := out.String()
	for _, want := range []string{"seeded 200 datasets", "40 requests per operation from 2 concurrent clients", "GET /datasets/{id}",
		"ide/resolve schema.table", `ide/resolve "schema"."table"`, "ide/resolve + connection hint", "ide/datasets/{id}/columns", "(floor)",
		"target: ide/resolve p99 <= 20ms"} {
		if !strings.Contains(text, want) {
			t.Fatalf("report lacks %q:\n%s", want, text)
		}
	}
	if (code == 0) != strings.Contains(text, ": met") {
		t.Fatalf("exit %d does not match the verdict:\n%s", code, text)
	}
}
