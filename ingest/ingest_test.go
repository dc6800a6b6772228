package ingest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/ingest"
)

func fieldLoc(t *testing.T, err error) string {
	t.Helper()
	var ve *vigia.Error
	if !vigia.IsKind(err, vigia.KindInvalid) || !asError(err, &ve) || len(ve.Fields) == 0 {
		t.Fatalf("want KindInvalid with fields, got %v", err)
	}
	return strings.Join(ve.Fields[0].Loc, ".") + ":" + ve.Fields[0].Type
}

func TestDecodeDBTManifest(t *testing.T) {
	m, err := ingest.DecodeDBTManifest([]byte(`{"metadata":{"project_name":"shop"},"nodes":{"model.shop.orders":{"resource_type":"model","schema":"analytics","name":"orders","alias":"orders_v2",
		"depends_on":{"nodes":["source.shop.raw.orders"]},"columns":{"id":{"meta":{"lineage":[{"node":"source.shop.raw.orders","column":"id"}]}}}}},
		"sources":{"source.shop.raw.orders":{"resource_type":"source","schema":"raw","name":"orders","identifier":"orders_src"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	n := m.Nodes["model.shop.orders"]
	if m.Metadata.ProjectName != "shop" || n.Relation() != "analytics.orders_v2" || m.Sources["source.shop.raw.orders"].Relation() != "raw.orders_src" ||
		len(n.Columns["id"].Meta.Lineage) != 1 || n.DependsOn.Nodes[0] != "source.shop.raw.orders" {
		t.Fatalf("manifest read as %+v", m)
	}
	for _, body := range []string{``, `[]`, `{"metadata":{}}`, `{"nodes":`} {
		if got := fieldLoc(t, decodeErr(ingest.DecodeDBTManifest([]byte(body)))); got != "manifest:value_error" {
			t.Errorf("%q: %s", body, got)
		}
	}
	big := make([]byte, ingest.MaxImportBytes+1)
	if _, err := ingest.DecodeDBTManifest(big); !vigia.IsKind(err, vigia.KindTooLarge) {
		t.Fatalf("oversized manifest: %v", err)
	}
}

func decodeErr[T any](_ T, err error) error { return err }

func TestDecodeDBTRunResults(t *testing.T) {
	run, err := ingest.DecodeDBTRunResults([]byte(`{"metadata":{"invocation_id":"inv-1"},"results":[{"status":"success"},{"status":"error"},{"status":"success"},
		{"status":"` + strings.Repeat("x", 33) + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if run.InvocationID != "inv-1" || run.Results != 4 || run.ByStatus["success"] != 2 || run.ByStatus["error"] != 1 || run.ByStatus["other"] != 1 {
		t.Fatalf("run %+v", run)
	}
	for _, body := range []string{``, `{}`, `{"results":null}`, `nope`} {
		if got := fieldLoc(t, decodeErr(ingest.DecodeDBTRunResults([]byte(body)))); got != "run_results:value_error" {
			t.Errorf("%q: %s", body, got)
		}
	}
}

func TestDecodeDeclarations(t *testing.T) {
	d, err := ingest.DecodeDeclarations([]byte("edges:\n  - from: w/public.a\n    to: w/public.b\n    columns: [{from: x, to: y}]\nexposures:\n  - name: Board\n    type: dashboard\n    depends_on: [w/public.b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Edges) != 1 || d.Edges[0].Columns[0] != (ingest.ColumnPair{From: "x", To: "y"}) || d.Exposures[0].DependsOn[0] != "w/public.b" {
		t.Fatalf("declarations %+v", d)
	}
	secret := "edges: [oops s3cr3t"
	_, err = ingest.DecodeDeclarations([]byte(secret))
	if got := fieldLoc(t, err); got != "file:value_error" {
		t.Fatalf("bad YAML: %s", got)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatal("the refusal echoes the file")
	}
	// Unknown keys are refused, not ignored.
	if _, err := ingest.DecodeDeclarations([]byte("edgez: []\n")); !vigia.IsKind(err, vigia.KindInvalid) {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := ingest.DecodeDeclarations(make([]byte, ingest.MaxImportBytes+1)); !vigia.IsKind(err, vigia.KindTooLarge) {
		t.Fatalf("oversized file: %v", err)
	}
}

func TestDecodeOpenLineageBatch(t *testing.T) {
	good := json.RawMessage(`{"eventType":"COMPLETE","eventTime":"2026-11-20T10:00:00Z","run":{"runId":"r"},"job":{"namespace":"n","name":"j"},
		"inputs":[{"namespace":"postgres://db:5432","name":"shop.public.a"}],
		"outputs":[{"namespace":"postgres://db:5432","name":"shop.public.b","facets":{"columnLineage":{"fields":{"y":{"inputFields":[
			{"namespace":"postgres://db:5432","name":"shop.public.a","field":"x","transformations":[{"type":"DIRECT","subtype":"IDENTITY"}]},
			{"namespace":"postgres://db:5432","name":"shop.public.a","field":"f","transformations":[{"type":"INDIRECT","subtype":"FILTER"}]}]}}}}}]}`)
	failed := json.RawMessage(`{"eventType":"FAIL","eventTime":"2026-11-20T10:00:00Z","run":{"runId":"r"},"job":{"namespace":"n","name":"j"}}`)
	bad := json.RawMessage(`{"eventTime":"2026-11-20T10:00:00Z","producer":"x"}`)
	b, err := ingest.DecodeOpenLineage([]json.RawMessage{good, bad, failed}, false)
	if err != nil {
		t.Fatal(err)
	}
	if b.Events != 3 || b.Accepted != 2 || len(b.Lineage) != 1 || len(b.Refused) != 1 || b.Refused[0].Index != 1 ||
		strings.Join(b.Refused[0].Fields[0].Loc, ".") != "1" || b.Refused[0].Fields[0].Type != ingest.TypeOpenLineageKind {
		t.Fatalf("batch %+v", b)
	}
	ev := b.Lineage[0]
	out := ingest.OLRef{Namespace: "postgres://db:5432", Name: "shop.public.b"}
	cols := ev.Columns[out]
	if ev.Job != "n/j" || !ev.Complete || len(ev.Inputs) != 1 || len(cols) != 1 || cols[0].From != "x" || !cols[0].Direct {
		t.Fatalf("event %+v", ev)
	}
	// One event alone: refused is 422 with no index in its loc.
	if got := fieldLoc(t, decodeErr(ingest.DecodeOpenLineage([]json.RawMessage{bad}, true))); got != ":"+ingest.TypeOpenLineageKind {
		t.Fatalf("single refused: %s", got)
	}
	many := make([]json.RawMessage, ingest.MaxOpenLineageBatch+1)
	if got := fieldLoc(t, decodeErr(ingest.DecodeOpenLineage(many, false))); got != ":too_long" {
		t.Fatalf("oversized batch: %s", got)
	}
}

func asError(err error, target **vigia.Error) bool { return errors.As(err, target) }
