package lineage

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/ingest"
)

// olTestEvent builds a run event as JSON; facet maps output field → input "name.field"
// with a transformation subtype ("" for none).
func olTestEvent(typ, at string, inputs []string, facet map[string][2]string) json.RawMessage {
	ev := map[string]any{
		"eventType": typ, "eventTime": at, "producer": "test", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
		"run": map[string]any{"runId": "0176a8c2-fe01-7439-87e6-56a1a1b4029f"},
		"job": map[string]any{"namespace": "airflow", "name": "orders_etl.load"},
	}
	var ins []any
	for _, n := range inputs {
		ins = append(ins, map[string]any{"namespace": "postgres://db:5432", "name": n})
	}
	ev["inputs"] = ins
	out := map[string]any{"namespace": "postgres://db:5432", "name": "shop.public.orders_clean"}
	if facet != nil {
		fields := map[string]any{}
		for f, src := range facet {
			table, field, _ := strings.Cut(src[0], ".")
			in := map[string]any{"namespace": "postgres://db:5432", "name": "shop.public." + table, "field": field}
			if src[1] != "" {
				in["transformations"] = []any{map[string]any{"type": "DIRECT", "subtype": src[1]}}
			}
			fields[f] = map[string]any{"inputFields": []any{in}}
		}
		out["facets"] = map[string]any{"columnLineage": map[string]any{"fields": fields}}
	}
	if typ != "RUNNING" || inputs != nil {
		ev["outputs"] = []any{out}
	}
	b, _ := json.Marshal(ev)
	return b
}

// decodeAll decodes a batch as the transport does and gives its events as the merge
// reads them.
func decodeAll(t *testing.T, raw []json.RawMessage) []olEvent {
	t.Helper()
	b, err := ingest.DecodeOpenLineage(raw, false)
	if err != nil || len(b.Refused) > 0 || len(b.Lineage) != len(raw) {
		t.Fatalf("batch refused: %v %+v", err, b.Refused)
	}
	var events []olEvent
	for _, ev := range b.Lineage {
		events = append(events, olEventOf(ev))
	}
	return events
}

func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

func TestOpenLineageMergeIsOrderIndependent(t *testing.T) {
	raw := []json.RawMessage{
		olTestEvent("START", "2026-11-20T10:00:00Z", []string{"shop.public.orders"}, nil),
		olTestEvent("COMPLETE", "2026-11-20T10:05:00Z", []string{"shop.public.orders", "shop.public.customers"},
			map[string][2]string{"x": {"orders.x", "IDENTITY"}, "y": {"customers.y", "TRANSFORMATION"}}),
		olTestEvent("RUNNING", "2026-11-20T10:07:00Z", nil, nil),
		olTestEvent("START", "2026-11-19T10:00:00Z", []string{"shop.public.legacy"}, nil),
		olTestEvent("COMPLETE", "2026-11-20T10:05:00Z", []string{"shop.public.orders", "shop.public.customers"},
			map[string][2]string{"x": {"orders.x", "IDENTITY"}, "y": {"customers.y", "TRANSFORMATION"}}),
		olTestEvent("START", "2026-11-21T09:00:00Z", []string{"shop.public.orders", "shop.public.rates"}, nil),
	}
	events := decodeAll(t, raw)
	type view struct {
		In, Out []olRef
		Pairs   []olPair
	}
	var want *view
	for _, perm := range permutations(len(events)) {
		st := &olState{}
		for _, i := range perm {
			st.merge(events[i])
		}
		in, out, pairs := st.effective()
		got := &view{in, out, pairs}
		if want == nil {
			want = got
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v gives %+v, another order %+v", perm, got, want)
		}
	}
	names := func(rs []olRef) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	// The later START adds rates; the old START's legacy is superseded by the COMPLETE;
	// the RUNNING event without datasets removes nothing.
	if got := names(want.In); !reflect.DeepEqual(got, []string{"shop.public.customers", "shop.public.orders", "shop.public.rates"}) {
		t.Fatalf("inputs %v", got)
	}
	direct := map[string]bool{}
	for _, p := range want.Pairs {
		direct[p.Field] = p.Direct
	}
	if len(want.Pairs) != 2 || !direct["x"] || direct["y"] {
		t.Fatalf("column pairs %+v: x must be direct (DIRECT/IDENTITY), y not (DIRECT/TRANSFORMATION)", want.Pairs)
	}
}

func TestOpenLineageCompleteWithoutFacetKeepsColumns(t *testing.T) {
	withCols := olTestEvent("COMPLETE", "2026-11-20T10:00:00Z", []string{"shop.public.orders"}, map[string][2]string{"x": {"orders.x", "IDENTITY"}})
	without := olTestEvent("COMPLETE", "2026-11-20T11:00:00Z", []string{"shop.public.orders"}, nil)
	for _, order := range [][]json.RawMessage{{withCols, without}, {without, withCols}} {
		st := &olState{}
		for _, ev := range decodeAll(t, order) {
			st.merge(ev)
		}
		if _, _, pairs := st.effective(); len(pairs) != 1 {
			t.Fatalf("a later COMPLETE without the facet erased the column map: %+v", pairs)
		}
	}
}
