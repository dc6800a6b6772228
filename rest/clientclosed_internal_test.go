package rest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
)

// A client that disconnects is logged as what it is (info, client_closed), not as an
// internal server error, and is sent nothing; a real failure still logs an error.
func TestClientClosedIsNotAServerError(t *testing.T) {
	var logs bytes.Buffer
	s := New(Config{}, Deps{}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/api/v1/datasets", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	s.writeError(w, r, vigia.Internal(fmt.Errorf("list datasets: %w", context.Canceled)))
	if w.Body.Len() != 0 {
		t.Fatalf("answered a gone client: %d %s", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), `"level":"INFO","msg":"client_closed"`) || strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Fatalf("logs:\n%s", logs.String())
	}

	logs.Reset()
	r = httptest.NewRequest(http.MethodGet, "/api/v1/datasets", nil)
	w = httptest.NewRecorder()
	s.writeError(w, r, vigia.Internal(fmt.Errorf("list datasets: %w", context.Canceled)))
	if w.Code != 500 || !strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Fatalf("a cancellation the client did not cause: %d\n%s", w.Code, logs.String())
	}
}
