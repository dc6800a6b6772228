package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/i18n"
)

func testCatalog(t *testing.T) *i18n.Catalog {
	t.Helper()
	msgs, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// The presenter answers like REST: every fault's cause is logged with the request id
// and never shown; other kinds are not logged; 422 items keep the rule's bounds only.
func TestPresentErrorLikeREST(t *testing.T) {
	msgs := testCatalog(t)
	ctx := vigia.WithRequestID(context.Background(), "req-present")
	for _, c := range []struct {
		name   string
		err    error
		code   string
		logged bool
	}{
		{"Internal", vigia.Internal(errors.New("db said cause-internal")), vigia.CodeInternal, true},
		{"BadGateway", vigia.BadGateway("provider_failed", "error.internal", nil, errors.New("provider said cause-gateway")), "provider_failed", true},
		{"Unavailable", &vigia.Error{Kind: vigia.KindUnavailable, Code: vigia.CodeUnavailable, Key: "error.internal", Err: errors.New("cause-unavailable")}, vigia.CodeUnavailable, true},
		{"NotImplemented", &vigia.Error{Kind: vigia.KindNotImplemented, Code: "not_implemented", Key: "error.internal", Err: errors.New("cause-501")}, "not_implemented", true},
		{"PlainError", errors.New("cause-plain"), vigia.CodeInternal, true},
		{"NotFound", vigia.NotFound(), vigia.CodeNotFound, false},
		{"Conflict", &vigia.Error{Kind: vigia.KindConflict, Code: vigia.CodeConflict, Key: "error.internal", Err: errors.New("cause-conflict")}, vigia.CodeConflict, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			out := presentError(ctx, c.err, nil, msgs, slog.New(slog.NewJSONHandler(&logs, nil)))
			if out.Extensions["code"] != c.code || out.Extensions["request_id"] != "req-present" {
				t.Fatalf("extensions %v", out.Extensions)
			}
			shown, _ := json.Marshal(out)
			if strings.Contains(string(shown), "cause-") {
				t.Fatalf("cause shown: %s", shown)
			}
			var cause error
			if e := (*vigia.Error)(nil); errors.As(c.err, &e) {
				cause = e.Err
			} else {
				cause = c.err
			}
			got := logs.String()
			if c.logged && (!strings.Contains(got, cause.Error()) || !strings.Contains(got, `"request_id":"req-present"`)) {
				t.Fatalf("fault not logged with its cause and request id: %q", got)
			}
			if !c.logged && got != "" {
				t.Fatalf("logged a client error: %q", got)
			}
		})
	}

	t.Run("ValidationShowsBoundsOnly", func(t *testing.T) {
		err := vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": 500, "input": "value-sent", "reason": "text-sent"}, "limit"))
		out := presentError(ctx, err, nil, msgs, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
		shown, _ := json.Marshal(out)
		if strings.Contains(string(shown), "value-sent") || strings.Contains(string(shown), "text-sent") {
			t.Fatalf("ctx not filtered: %s", shown)
		}
		items, _ := out.Extensions["detail"].([]map[string]any)
		if len(items) != 1 {
			t.Fatalf("detail %v", out.Extensions["detail"])
		}
		c, _ := items[0]["ctx"].(map[string]any)
		if len(c) != 2 || c["ge"] != 1 || c["le"] != 500 {
			t.Fatalf("ctx %v", items[0]["ctx"])
		}
		if loc, _ := items[0]["loc"].([]string); len(loc) != 2 || loc[0] != "args" || loc[1] != "limit" {
			t.Fatalf("loc %v", items[0]["loc"])
		}
	})
}

// A panicking resolver answers internal_error with the fixed message, and the log
// carries the panic value with the request id and the field's path.
func TestPanicIsLoggedWithItsValue(t *testing.T) {
	var logs bytes.Buffer
	// No services: the scans resolver reaches a nil service and panics.
	h := NewHandler(&Resolver{}, testCatalog(t), slog.New(slog.NewJSONHandler(&logs, nil)))
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ scans { total } }"}`))
	req.Header.Set("Content-Type", "application/json")
	ctx := vigia.WithPrincipal(vigia.WithRequestID(req.Context(), "req-panic"), vigia.Principal{WorkspaceID: vigia.NewID(), TokenID: vigia.NewID(), Role: vigia.RoleViewer, ReadOnly: true})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(ctx))
	var out struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != vigia.CodeInternal || out.Errors[0].Extensions["request_id"] != "req-panic" {
		t.Fatalf("answer %s", rec.Body)
	}
	if strings.Contains(rec.Body.String(), "nil pointer") || strings.Contains(rec.Body.String(), "runtime error") {
		t.Fatalf("panic value shown: %s", rec.Body)
	}
	got := logs.String()
	if !strings.Contains(got, "panic: runtime error: invalid memory address or nil pointer dereference") ||
		!strings.Contains(got, `"request_id":"req-panic"`) || !strings.Contains(got, `"path":"scans"`) {
		t.Fatalf("log %q", got)
	}
}
