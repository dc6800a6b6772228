package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// openAPIDoc is the part of the published document the sweeps read.
type openAPIDoc struct {
	Paths      map[string]map[string]openAPIOp `json:"paths"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

type openAPIOp struct {
	OperationID string `json:"operationId"`
	Parameters  []struct {
		Name   string         `json:"name"`
		In     string         `json:"in"`
		Schema map[string]any `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

func loadOpenAPI(t *testing.T, env *apptest.Env) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	env.Do(t, http.MethodGet, "/api/v1/openapi.json", "", nil).JSON(t, &doc)
	if len(doc.Paths) < 20 {
		t.Fatalf("document with %d paths", len(doc.Paths))
	}
	return doc
}

// resolve follows a $ref into components.schemas.
func (d openAPIDoc) resolve(s map[string]any) map[string]any {
	for i := 0; i < 8; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = d.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
	}
	return s
}

func schemaTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

func hasType(s map[string]any, typ string) bool {
	for _, t := range schemaTypes(s) {
		if t == typ {
			return true
		}
	}
	return false
}

// stringLeaves lists the paths of every string field of a body schema (arrays through
// their first item), to depth 6.
func (d openAPIDoc) stringLeaves(s map[string]any, path []string, depth int) [][]string {
	s = d.resolve(s)
	if s == nil || depth > 6 {
		return nil
	}
	var out [][]string
	if hasType(s, "string") {
		out = append(out, path)
	}
	if hasType(s, "array") {
		if items, ok := s["items"].(map[string]any); ok {
			out = append(out, d.stringLeaves(items, append(append([]string{}, path...), "0"), depth+1)...)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if ps, ok := props[n].(map[string]any); ok {
				out = append(out, d.stringLeaves(ps, append(append([]string{}, path...), n), depth+1)...)
			}
		}
	}
	return out
}

// bodyWith builds the JSON body that holds value (raw JSON text) at path.
func bodyWith(path []string, value string) string {
	if len(path) == 0 {
		return value
	}
	inner := bodyWith(path[1:], value)
	if path[0] == "0" {
		return "[" + inner + "]"
	}
	k, _ := json.Marshal(path[0])
	return "{" + string(k) + ":" + inner + "}"
}

// fillPath puts a well-formed value in every path parameter.
func fillPath(route string, op openAPIOp) string {
	for _, p := range op.Parameters {
		if p.In != "path" {
			continue
		}
		v := vigia.NewID()
		if enum, ok := p.Schema["enum"].([]any); ok && len(enum) > 0 {
			v = fmt.Sprint(enum[0])
		}
		route = strings.ReplaceAll(route, "{"+p.Name+"}", v)
	}
	return route
}

// TestBadTextIsRefusedAtTheEdge sends a NUL character and invalid UTF-8 in every
// string field of every documented write body and in every string parameter of every
// operation: 422 value_error at the field's loc everywhere, never a 5xx.
func TestBadTextIsRefusedAtTheEdge(t *testing.T) {
	env := apptest.MustStart(t, app.Config{RateLimitIP: 1 << 20, RateLimitToken: 1 << 20})
	ws := env.MustWorkspace(t, "badtext")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	doc := loadOpenAPI(t, env)
	routes := make([]string, 0, len(doc.Paths))
	for r := range doc.Paths {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	bad := map[string]string{"nul": `"a\u0000b"`, "invalid_utf8": "\"a\xffb\"", "lone_surrogate": `"a\ud800b"`}
	badQuery := map[string]string{"nul": "a%00b", "invalid_utf8": "a%FFb"}
	sent, bodies, params := 0, 0, 0
	check := func(t *testing.T, method, target, body string, wantLoc []string) {
		t.Helper()
		var r *apptest.Response
		if body == "" {
			r = env.Do(t, method, target, admin, nil)
		} else {
			r = env.Do(t, method, target, admin, body)
		}
		sent++
		if r.Status >= 500 {
			t.Errorf("%s %s %s: %d %s", method, target, body, r.Status, r.Body)
			return
		}
		e := decodeError(t, r)
		var items []map[string]any
		_ = json.Unmarshal(e.Detail, &items)
		found := false
		for _, it := range items { // other required parameters left out add their own items
			found = found || it["type"] == "value_error" && fmt.Sprint(it["loc"]) == fmt.Sprint(wantLoc)
		}
		if r.Status != 422 || e.Code != "validation_error" || !found {
			t.Errorf("%s %s %s: want 422 value_error at %v, got %d %s", method, target, body, wantLoc, r.Status, r.Body)
		}
	}
	for _, route := range routes {
		for method, op := range doc.Paths[route] {
			method = strings.ToUpper(method)
			if !strings.HasPrefix(route, "/api/v1/") || route == "/api/v1/openapi.json" {
				continue
			}
			target := fillPath(route, op)
			if op.RequestBody != nil {
				for ct, media := range op.RequestBody.Content {
					if !strings.Contains(ct, "json") {
						continue
					}
					for _, leaf := range doc.stringLeaves(media.Schema, nil, 0) {
						bodies++
						for _, v := range bad {
							check(t, method, target, bodyWith(leaf, v), append([]string{"body"}, leaf...))
						}
					}
				}
			}
			for _, p := range op.Parameters {
				if p.In == "header" || !hasType(p.Schema, "string") && len(schemaTypes(p.Schema)) > 0 {
					continue
				}
				params++
				for _, v := range badQuery {
					if p.In == "query" {
						check(t, method, target+"?"+p.Name+"="+v, "", []string{"query", p.Name})
					} else {
						u := strings.Replace(route, "{"+p.Name+"}", v, 1)
						check(t, method, fillPath(u, op), "", []string{"path", p.Name})
					}
				}
			}
		}
	}
	if bodies < 50 || params < 30 {
		t.Fatalf("swept only %d body fields and %d parameters", bodies, params)
	}
	t.Logf("%d requests: %d body string fields, %d string parameters", sent, bodies, params)
}
