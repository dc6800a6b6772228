package delivery_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// vectorsMarker precedes the fenced block of test vectors in the guide.
const vectorsMarker = "<!-- webhook-test-vectors"

type vector struct {
	Name, Secret, Body, Signature string
	Timestamp                     int64
}

// MustReadVectors parses the test vectors published in docs/webhooks.md:
// the first fenced block after the marker, "key: value" lines, one blank line
// between vectors; a body is everything after "body: " on its line.
func MustReadVectors(tb testing.TB) []vector {
	tb.Helper()
	f, err := os.Open("../../docs/webhooks.md")
	if err != nil {
		tb.Fatalf("open guide: %v", err)
	}
	defer f.Close()
	var (
		out             []vector
		cur             vector
		marker, inBlock bool
		fields          int
	)
	flush := func() {
		if fields == 0 {
			return
		}
		if fields != 5 {
			tb.Fatalf("vector %q has %d fields, want 5", cur.Name, fields)
		}
		out = append(out, cur)
		cur, fields = vector{}, 0
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !marker:
			marker = strings.HasPrefix(line, vectorsMarker)
			continue
		case !inBlock:
			inBlock = strings.HasPrefix(line, "```")
			continue
		case strings.HasPrefix(line, "```"):
			flush()
			if len(out) < 3 {
				tb.Fatalf("guide publishes %d vectors, want at least 3", len(out))
			}
			return out
		case line == "":
			flush()
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			tb.Fatalf("malformed vector line %q", line)
		}
		fields++
		switch key {
		case "name":
			cur.Name = value
		case "secret":
			cur.Secret = value
		case "timestamp":
			cur.Timestamp, err = strconv.ParseInt(value, 10, 64)
			if err != nil {
				tb.Fatalf("vector %q timestamp: %v", cur.Name, err)
			}
		case "body":
			cur.Body = value
		case "signature":
			cur.Signature = value
		default:
			tb.Fatalf("unknown vector key %q", key)
		}
	}
	tb.Fatalf("no closed vector block after %q in the guide (scan error: %v)", vectorsMarker, sc.Err())
	return nil
}

func TestPublishedVectorsMatchSign(t *testing.T) {
	vectors := MustReadVectors(t)
	nonASCII := false
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			if got := delivery.Sign(v.Secret, v.Timestamp, []byte(v.Body)); got != v.Signature {
				t.Fatalf("Sign = %s, guide says %s", got, v.Signature)
			}
			now := time.Unix(v.Timestamp, 0)
			if err := delivery.Verify(v.Secret, v.Signature, v.Timestamp, []byte(v.Body), now, 0); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
		for _, r := range v.Body {
			if r > 0x7f {
				nonASCII = true
			}
		}
	}
	if !nonASCII {
		t.Fatalf("no published vector has a non-ASCII body")
	}
}

// The published bodies are what Body.Encode produces, so receivers test
// against real bytes: field order, UTF-8 left raw, <, > and & unescaped.
func TestPublishedBodiesAreEncoderOutput(t *testing.T) {
	vectors := MustReadVectors(t)
	byEvent := map[string]string{}
	for _, v := range vectors {
		if !strings.Contains(v.Body, `\u`) {
			byEvent[v.Body[len(`{"event":"`):strings.Index(v.Body, `","workspace_id"`)]] = v.Body
		}
	}
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	score := 81.5
	tests := []struct {
		event string
		body  delivery.Body
	}{
		{delivery.EventTest, delivery.Body{
			Event: delivery.EventTest, WorkspaceID: "ws_01JD5Q8X2M",
			OccurredAt: time.Date(2026, 11, 21, 9, 59, 58, 0, time.UTC),
			Title:      "Channel test", Body: "This is a test delivery from Vigia.",
			Code: delivery.CodeChannelTest,
		}},
		{delivery.EventAlerts, delivery.Body{
			Event: delivery.EventAlerts, WorkspaceID: "ws_01JD5Q8X2M",
			OccurredAt: time.Date(2026, 11, 21, 11, 4, 57, 0, time.FixedZone("WET+1", 3600)),
			Title:      "2 novos alertas em «vendas_diárias»",
			Body:       "Completude de «preço» abaixo do limiar — ação necessária. 🚨",
			Code:       delivery.CodeAlertsNew,
			Params:     map[string]any{"count": 2, "alerts": 2, "incidents": 1},
			Alerts: []delivery.Alert{
				{ID: "al_01", Severity: "critical", Title: "Completude de «preço» < 95 %", IssueID: "is_01"},
				{ID: "al_02", Severity: "warning", Title: "Unicidade de «nº_fatura» em queda", IssueID: "is_02"},
			},
			Incidents: []delivery.Incident{{
				ID: "in_01", RootDatasetID: str("ds_01"),
				IssueIDs: []string{"is_01", "is_02"}, AlertIDs: []string{"al_01", "al_02"},
				ImpactScope: str("column"), ImpactColumns: []string{"preço"},
				DownstreamCount: num(3), DownstreamColumnCount: num(5),
			}},
		}},
		{delivery.EventDatasetVerdictChanged, delivery.Body{
			Event: delivery.EventDatasetVerdictChanged, WorkspaceID: "ws_01JD5Q8X2M",
			OccurredAt:     time.Date(2026, 11, 21, 10, 9, 59, 0, time.UTC),
			Title:          "Veredito de «clientes» passou de pass a warn",
			Body:           "Confiança em <clientes> & derivados: warn",
			Code:           delivery.CodeDatasetVerdictChanged,
			Params:         map[string]any{"dataset_id": "ds_01", "from": "pass", "to": "warn", "score": 81.5},
			IdempotencyKey: event.IdempotencyKey("ds_01", "sc_42", delivery.EventDatasetVerdictChanged, ""),
			VerdictChange: &delivery.VerdictChange{
				From: "pass", To: "warn", ScanID: "sc_42",
				TrustURL: "https://vigia.example.com/api/v1/datasets/ds_01/trust",
				DatasetVerdict: &delivery.DatasetVerdict{
					DatasetID: "ds_01", DatasetName: "clientes", ConnectionID: "cn_01",
					Verdict: "warn", Score: &score,
				},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			want, ok := byEvent[tt.event]
			if !ok {
				t.Fatalf("guide has no raw-UTF-8 vector for %s", tt.event)
			}
			got, err := tt.body.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if string(got) != want {
				t.Fatalf("Encode =\n%s\nguide has\n%s", got, want)
			}
		})
	}
}
