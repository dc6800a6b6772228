package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/identity"
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

// A batch is one round trip: recorded as one entry with its statements.
func (l *sqlLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	l.mu.Lock()
	l.sql = append(l.sql, "BATCH")
	l.mu.Unlock()
	return ctx
}

func (l *sqlLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.mu.Lock()
	if n := len(l.sql); n > 0 {
		l.sql[n-1] += "\n  " + d.SQL
	}
	l.mu.Unlock()
}

func (l *sqlLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

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
	a, err := app.New(app.Config{RateLimitToken: 1 << 20, RateLimitIP: 1 << 20}, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	srv := httptest.NewServer(a.Server().Handler())
	t.Cleanup(srv.Close)
	return &apptest.Env{App: a, DB: db, Server: srv, Logs: env.Logs}, log
}

// detailQueryBound is the most SQL round trips GET /datasets/{id} may cost with an API
// token whose authentication is cached: one batch (issue 20, S4) with the dataset, its
// columns, score history, open issues, last runs and declared foreign keys, its trust
// facts, the runs of the pipelines writing it and its open suggestions (it was 8, then
// 4 before the trust facts, the runs and the suggestions joined the batch).
const detailQueryBound = 1

func TestDatasetDetailQueryCount(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "detailq")
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "pg")
	id := env.MustDataset(t, ws, conn, "raw", "orders")
	traced, log := tracedEnv(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go traced.App.RunTokenCache(ctx)
	var fewest []string
	for i := range 200 { // until the cache listens
		log.take()
		r := traced.Do(t, http.MethodGet, "/api/v1/datasets/"+id, tok, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("status %d", r.Status)
		}
		if qs := log.take(); i == 0 || len(qs) < len(fewest) {
			fewest = qs
		}
		if len(fewest) <= detailQueryBound {
			break
		}
	}
	if len(fewest) > detailQueryBound {
		t.Fatalf("%d round trips, more than %d:\n%s", len(fewest), detailQueryBound, strings.Join(fewest, "\n"))
	}
}

// With the token cache running, a token's second request skips its lookup; revocation
// stays immediate: in the process that revokes at once, in another process as soon as
// the database's notification arrives (well before the cache's TTL), and a suspended
// workspace's cached tokens stop working the same way.
func TestTokenCacheRevocation(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "tokcache")
	conn := env.MustConnection(t, ws, "pg")
	id := env.MustDataset(t, ws, conn, "raw", "orders")
	traced, log := tracedEnv(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go traced.App.RunTokenCache(ctx)

	get := func(e *apptest.Env, tok string) (int, int) {
		t.Helper()
		log.take()
		r := e.Do(t, http.MethodGet, "/api/v1/datasets/"+id, tok, nil)
		return r.Status, len(log.take())
	}
	credentialReads := func(qs []string) int {
		n := 0
		for _, q := range qs {
			if strings.Contains(q, "FROM api_tokens t JOIN workspaces") {
				n++
			}
		}
		return n
	}
	// Wait until the cache listens: a second request reads no credential.
	tok := env.MustToken(t, ws)
	cached := false
	for range 500 {
		log.take()
		traced.Do(t, http.MethodGet, "/api/v1/datasets/"+id, tok, nil)
		if credentialReads(log.take()) == 0 {
			cached = true
			break
		}
	}
	if !cached {
		t.Fatal("the token cache never served a request")
	}

	// Revoked by the process that caches it: the next request is refused.
	if _, err := traced.App.Identity.RevokeAPIToken(context.Background(), ws, tok, "test"); err != nil {
		t.Fatal(err)
	}
	if st, _ := get(traced, tok); st != http.StatusUnauthorized {
		t.Fatalf("a token revoked in this process answers %d", st)
	}

	// Revoked by another process (env's app): refused once the notification arrives,
	// long before the TTL would have dropped it.
	waitRefused := func(what, tok string, want int) {
		t.Helper()
		deadline := time.Now().Add(identity.TokenCacheTTL / 3)
		for {
			st, _ := get(traced, tok)
			if st == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still answers %d after a third of the cache's TTL", what, st)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	tok2 := env.MustToken(t, ws)
	for range 3 {
		if st, _ := get(traced, tok2); st != http.StatusOK {
			t.Fatalf("a live token answers %d", st)
		}
	}
	if _, err := env.App.Identity.RevokeAPIToken(context.Background(), ws, tok2, "test"); err != nil {
		t.Fatal(err)
	}
	waitRefused("revoked by another process", tok2, http.StatusUnauthorized)

	// Suspended by SQL (any writer): the workspace's cached tokens are dropped.
	tok3 := env.MustToken(t, ws)
	for range 3 {
		if st, _ := get(traced, tok3); st != http.StatusOK {
			t.Fatalf("a live token answers %d", st)
		}
	}
	if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE workspaces SET suspended = true WHERE id = $1`, ws); err != nil {
		t.Fatal(err)
	}
	waitRefused("workspace suspended", tok3, http.StatusForbidden)
}

// GET /datasets?cursor= (an extension): walking the pages of each order by X-Next-Cursor
// gives the same datasets in the same order as one page of them all, with the exact
// X-Total-Count on every page; a bad cursor, a cursor of another order and a cursor
// with an offset are 422 value_error without echo; another workspace's cursor pages
// only the caller's datasets.
func TestDatasetListCursor(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "cursor")
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "pg")
	var ids []string
	for i := range 23 {
		id := env.MustDataset(t, ws, conn, fmt.Sprintf("s%d", i%3), fmt.Sprintf("t%02d", i))
		ids = append(ids, id)
		// Ties on each sort key, and nulls for usage.
		var qpd any
		if i%4 != 0 {
			qpd = float64(i % 3)
		}
		if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE datasets SET queries_per_day = $2, reach = $3 WHERE id = $1`,
			id, qpd, i%5); err != nil {
			t.Fatal(err)
		}
	}
	dom := vigia.NewID()
	exec(t, env, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'RH', true)`, dom, ws)
	exec(t, env, `INSERT INTO domain_datasets VALUES ($1, $2)`, dom, ids[7]) // hidden from the token
	type item struct {
		ID string `json:"id"`
	}
	for _, sort := range []string{"name", "usage", "impact"} {
		all := env.Do(t, http.MethodGet, "/api/v1/datasets?limit=100&sort="+sort, tok, nil)
		var want []item
		all.JSON(t, &want)
		if all.Status != http.StatusOK || len(want) != 22 || all.Header.Get("X-Next-Cursor") != "" {
			t.Fatalf("sort %s: one page: %d, %d items, cursor %q", sort, all.Status, len(want), all.Header.Get("X-Next-Cursor"))
		}
		var got []item
		path := "/api/v1/datasets?limit=5&sort=" + sort
		for pages := 0; path != ""; pages++ {
			if pages > 10 {
				t.Fatalf("sort %s: the cursor does not end", sort)
			}
			r := env.Do(t, http.MethodGet, path, tok, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("sort %s page %d: %d %s", sort, pages, r.Status, env.Logs.String())
			}
			var page []item
			r.JSON(t, &page)
			if r.Status != http.StatusOK || r.Header.Get("X-Total-Count") != "22" {
				t.Fatalf("sort %s page %d: %d, total %q", sort, pages, r.Status, r.Header.Get("X-Total-Count"))
			}
			got = append(got, page...)
			path = ""
			if c := r.Header.Get("X-Next-Cursor"); c != "" {
				path = "/api/v1/datasets?limit=5&sort=" + sort + "&cursor=" + url.QueryEscape(c)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("sort %s: %d items by cursor, %d in one page", sort, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID {
				t.Fatalf("sort %s: item %d is %s by cursor, %s in one page", sort, i, got[i].ID, want[i].ID)
			}
		}
	}
	first := env.Do(t, http.MethodGet, "/api/v1/datasets?limit=5&sort=usage", tok, nil)
	cur := first.Header.Get("X-Next-Cursor")
	for _, q := range []string{"cursor=not-a-cursor%22%3Cb%3E", "sort=impact&cursor=" + url.QueryEscape(cur),
		"sort=usage&offset=5&cursor=" + url.QueryEscape(cur)} {
		r := env.Do(t, http.MethodGet, "/api/v1/datasets?limit=5&"+q, tok, nil)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), "value_error") ||
			strings.Contains(string(r.Body), "not-a-cursor") || (cur != "" && strings.Contains(string(r.Body), cur)) {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	// Another workspace's cursor positions a page of this workspace's datasets only.
	other := env.MustWorkspace(t, "cursor-other")
	otok := env.MustToken(t, other)
	env.MustDataset(t, other, env.MustConnection(t, other, "pg"), "s9", "z")
	r := env.Do(t, http.MethodGet, "/api/v1/datasets?limit=5&sort=usage&cursor="+url.QueryEscape(cur), otok, nil)
	var page []item
	r.JSON(t, &page)
	if r.Status != http.StatusOK || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("another workspace's cursor: %d %s", r.Status, r.Body)
	}
	for _, it := range page {
		for _, id := range ids {
			if it.ID == id {
				t.Fatalf("another workspace's cursor shows dataset %s", id)
			}
		}
	}
}
