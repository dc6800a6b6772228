package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
)

// Services and handlers name fields; the answer says where each came from, from the
// operation's own declaration: a path or query parameter of that name, else the body.
func TestItemsAreLocatedByTheOperation(t *testing.T) {
	s := New(Config{}, Deps{}, nil)
	type body struct {
		Name string `json:"name"`
	}
	s.register(operation{ID: "locateProbe", Method: http.MethodPost, Path: "/api/v1/locate-probe/{probe_id}", Tag: "health", Public: true,
		Params: []param{{Name: "probe_id", In: "path", Type: "string", Required: true, MaxLen: 8},
			{Name: "mode", In: "query", Type: "string", Enum: []string{"a", "b"}}},
		List: true, Body: body{}, Response: HealthOut{}},
		func(w http.ResponseWriter, r *http.Request, in *input) {
			var b body
			if err := in.Decode(&b, 0); err != nil {
				s.writeError(w, r, err)
				return
			}
			// What a service answers: fields by name only.
			s.writeError(w, r, vigia.Invalid(vigia.Field("enum", nil, "mode"), vigia.Field("missing", nil, "probe_id"),
				vigia.Field("string_too_long", map[string]any{"max_length": 3}, "name"), vigia.Field("value_error", nil, "params", "column"),
				vigia.Field("greater_than_equal", map[string]any{"ge": 1}, "limit"), vigia.Field("json_invalid", nil)))
		})
	locs := func(target, payload string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(payload))
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
		}
		var out struct {
			Detail []ValidationItem `json:"detail"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range out.Detail {
			got = append(got, strings.Join(it.Loc, "."))
		}
		return strings.Join(got, " ")
	}
	// The transport's own checks: parameters and the body.
	if got := locs("/api/v1/locate-probe/toolongid?mode=c&limit=0&offset=-1", `{}`); got != "path.probe_id query.mode query.limit query.offset" {
		t.Errorf("parameters: %s", got)
	}
	if got := locs("/api/v1/locate-probe/p1", ``); got != "body" {
		t.Errorf("no body: %s", got)
	}
	if got := locs("/api/v1/locate-probe/p1", `{"name": 3}`); got != "body.name" {
		t.Errorf("wrong type: %s", got)
	}
	if got := locs("/api/v1/locate-probe/p1", `{"nome": "x"}`); got != "body.nome" {
		t.Errorf("unknown field: %s", got)
	}
	// A service's items.
	if got := locs("/api/v1/locate-probe/p1", `{"name": "x"}`); got != "query.mode path.probe_id body.name body.params.column query.limit body" {
		t.Errorf("service items: %s", got)
	}
}

// A body field never shares its name with a parameter of its operation, so that a
// field's name says where it came from.
func TestBodyFieldsAreNotParameterNames(t *testing.T) {
	s := New(Config{}, Deps{}, nil)
	for _, op := range s.ops {
		if op.Body == nil {
			continue
		}
		typ := reflect.TypeOf(op.Body)
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			continue
		}
		names := map[string]bool{}
		for _, f := range reflect.VisibleFields(typ) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			names[name] = true
		}
		for _, p := range op.allParams() {
			if names[p.Name] {
				t.Errorf("%s: body field %s is also a %s parameter", op.ID, p.Name, p.In)
			}
		}
	}
	if len(s.ops) < 50 {
		t.Fatal(fmt.Sprint("only ", len(s.ops), " operations"))
	}
}
