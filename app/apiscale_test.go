package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/store/storetest"
)

// sqlLog records the SQL text of every query of a pool.
type sqlLog struct {
	mu  sync.Mutex
	sql []string
}

func (l *sqlLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	l.sql = append(l.sql, d.SQL)
	l.mu.Unlock()
	return ctx
}

func (l *sqlLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *sqlLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.sql
	l.sql = nil
	return out
}

// tracedEnv is a second Vigia over env's database whose pool records its queries.
func tracedEnv(t *testing.T, env *apptest.Env) (*apptest.Env, *sqlLog) {
	t.Helper()
	log := &sqlLog{}
	db, err := store.OpenTraced(context.Background(), storetest.MustURL(t), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	a, err := app.New(app.Config{}, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	srv := httptest.NewServer(a.Server().Handler())
	t.Cleanup(srv.Close)
	return &apptest.Env{App: a, DB: db, Server: srv, Logs: env.Logs}, log
}

func TestDatasetDetailQueriesDiag(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "detailq")
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "pg")
	id := env.MustDataset(t, ws, conn, "raw", "orders")
	traced, log := tracedEnv(t, env)
	for i := range 3 {
		log.take()
		r := traced.Do(t, http.MethodGet, "/api/v1/datasets/"+id, tok, nil)
		if r.Status != 200 {
			t.Fatalf("status %d", r.Status)
		}
		qs := log.take()
		t.Logf("request %d: %d queries", i, len(qs))
		if i == 2 {
			for _, q := range qs {
				t.Log(q)
			}
		}
	}
}
