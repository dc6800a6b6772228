package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/identity"
)

type errorBody struct {
	Detail     json.RawMessage `json:"detail"`
	Code       string          `json:"code"`
	RequestID  string          `json:"request_id"`
	RetryAfter *int            `json:"retry_after"`
}

func decodeError(t *testing.T, r *apptest.Response) errorBody {
	t.Helper()
	var e errorBody
	r.JSON(t, &e)
	if e.RequestID == "" || e.RequestID != r.Header.Get("X-Request-ID") {
		t.Fatalf("request_id %q does not equal X-Request-ID %q", e.RequestID, r.Header.Get("X-Request-ID"))
	}
	return e
}

func TestTokens(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "acme")

	t.Run("FormatAndOnlyHashStored", func(t *testing.T) {
		tok := env.MustToken(t, ws)
		if !regexp.MustCompile(`^svc_[0-9a-f]{48}$`).MatchString(tok) {
			t.Fatalf("token %q has the wrong form", tok)
		}
		want := sha256.Sum256([]byte(tok))
		var n int
		err := env.DB.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM api_tokens WHERE token_hash = $1`, want[:]).Scan(&n)
		if err != nil || n != 1 {
			t.Fatalf("hash rows = %d, %v", n, err)
		}
		// Nowhere in the database is the token itself.
		var leaks int
		err = env.DB.Pool().QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM api_tokens t WHERE t::text LIKE '%' || $1 || '%') +
			(SELECT count(*) FROM activity_log a WHERE a::text LIKE '%' || $1 || '%')`, tok[4:]).Scan(&leaks)
		if err != nil || leaks != 0 {
			t.Fatalf("token text stored %d times (%v)", leaks, err)
		}
	})

	t.Run("401AuthRequiredWithoutToken", func(t *testing.T) {
		r := env.Do(t, http.MethodGet, "/api/v1/datasets", "", nil)
		if r.Status != 401 || decodeError(t, r).Code != "auth_required" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})

	for name, cred := range map[string]string{
		"Malformed": "svc_123", "Unknown": "svc_" + strings.Repeat("ab", 24), "UpperHex": "svc_" + strings.Repeat("AB", 24),
	} {
		t.Run("401TokenInvalid"+name, func(t *testing.T) {
			r := env.Do(t, http.MethodGet, "/api/v1/datasets", cred, nil)
			if r.Status != 401 || decodeError(t, r).Code != "token_invalid" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
	t.Run("401TokenInvalidForOtherScheme", func(t *testing.T) {
		r := env.Do(t, http.MethodGet, "/api/v1/datasets", "", nil, "Authorization: Basic dXNlcjpwYXNz")
		if r.Status != 401 || decodeError(t, r).Code != "token_invalid" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})

	t.Run("RevokedAtOnce", func(t *testing.T) {
		tok := env.MustToken(t, ws)
		if r := env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil); r.Status != 200 {
			t.Fatalf("before revoke: %d %s", r.Status, r.Body)
		}
		if _, err := env.App.Identity.RevokeAPIToken(context.Background(), ws, tok, "test"); err != nil {
			t.Fatal(err)
		}
		r := env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil)
		if r.Status != 401 || decodeError(t, r).Code != "token_invalid" {
			t.Fatalf("after revoke: %d %s", r.Status, r.Body)
		}
		var actions []string
		rows, err := env.DB.Pool().Query(context.Background(), `SELECT action FROM activity_log WHERE workspace_id = $1 ORDER BY created_at`, ws)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a string
			_ = rows.Scan(&a)
			actions = append(actions, a)
		}
		joined := strings.Join(actions, ",")
		if !strings.Contains(joined, "api_token.created") || !strings.Contains(joined, "api_token.revoked") {
			t.Fatalf("activity log = %v", actions)
		}
	})

	t.Run("ExpiredIsRefusedAsRevoked", func(t *testing.T) {
		for _, bad := range []time.Time{time.Now().Add(-time.Minute), time.Now().Add(identity.MaxTokenLifetime + time.Hour)} {
			if _, _, err := env.App.Identity.CreateAPIToken(context.Background(), ws, "bad", "test", &bad); !vigia.IsKind(err, vigia.KindInvalid) {
				t.Fatalf("expiry %v: %v", bad, err)
			}
		}
		end := time.Now().Add(time.Hour)
		tk, tok, err := env.App.Identity.CreateAPIToken(context.Background(), ws, "ci", "test", &end)
		if err != nil || tk.ExpiresAt == nil || !tk.ExpiresAt.Equal(end.UTC()) {
			t.Fatalf("create: %+v %v", tk, err)
		}
		if r := env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil); r.Status != 200 {
			t.Fatalf("before its end: %d %s", r.Status, r.Body)
		}
		if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, tk.ID); err != nil {
			t.Fatal(err)
		}
		r := env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil)
		if r.Status != 401 || decodeError(t, r).Code != "token_invalid" {
			t.Fatalf("after its end: %d %s", r.Status, r.Body)
		}
	})

	t.Run("LastUseVisibleAndWrittenAtMostOncePerMinute", func(t *testing.T) {
		tok := env.MustToken(t, ws)
		lastUse := func() *time.Time {
			var at *time.Time
			h := sha256.Sum256([]byte(tok))
			if err := env.DB.Pool().QueryRow(context.Background(), `SELECT last_used_at FROM api_tokens WHERE token_hash = $1`, h[:]).Scan(&at); err != nil {
				t.Fatal(err)
			}
			return at
		}
		if lastUse() != nil {
			t.Fatal("fresh token already used")
		}
		env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil)
		first := lastUse()
		if first == nil {
			t.Fatal("last use not recorded")
		}
		env.Do(t, http.MethodGet, "/api/v1/datasets", tok, nil)
		if second := lastUse(); !second.Equal(*first) {
			t.Fatalf("last use rewritten within a minute: %v then %v", first, second)
		}
		toks, err := env.App.Identity.APITokens(context.Background(), ws)
		if err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, tk := range toks {
			seen = seen || tk.LastUsedAt != nil
		}
		if !seen {
			t.Fatal("last use not visible in the token list")
		}
	})
}

func TestRequestID(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	t.Run("CallerValueKept", func(t *testing.T) {
		r := env.Do(t, http.MethodGet, "/api/v1/health", "", nil, "X-Request-ID: abc.DEF_123-x")
		if got := r.Header.Get("X-Request-ID"); got != "abc.DEF_123-x" {
			t.Fatalf("X-Request-ID = %q", got)
		}
	})
	for name, bad := range map[string]string{"TooLong": strings.Repeat("a", 65), "BadChars": "abc def<script>"} {
		t.Run("Replaced"+name, func(t *testing.T) {
			r := env.Do(t, http.MethodGet, "/api/v1/datasets", "", nil, "X-Request-ID: "+bad)
			got := r.Header.Get("X-Request-ID")
			if got == bad || !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(got) {
				t.Fatalf("X-Request-ID = %q", got)
			}
			if strings.Contains(string(r.Body), bad) {
				t.Fatal("bad request id echoed")
			}
			decodeError(t, r)
		})
	}
}

func TestTokenIsReadOnly(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "ro")
	tok := env.MustToken(t, ws)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "c"), "public", "t")
	paths := []string{"/api/v1/datasets", "/api/v1/datasets/" + ds, "/api/v1/connections", "/api/v1/rules",
		"/api/v1/issues/x/resolve", "/api/v1/notification-channels", "/api/v1/no-such-thing"}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		for _, p := range paths {
			t.Run(m+p, func(t *testing.T) {
				r := env.Do(t, m, p, tok, map[string]any{"x": 1})
				if r.Status != 403 || decodeError(t, r).Code != "token_read_only" {
					t.Fatalf("got %d %s", r.Status, r.Body)
				}
			})
		}
	}
	t.Run("ReadsStillWork", func(t *testing.T) {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			if r := env.Do(t, m, "/api/v1/datasets", tok, nil); r.Status != 200 {
				t.Fatalf("%s: %d", m, r.Status)
			}
		}
	})
}

func TestValidationNeverEchoesInput(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "val")
	tok := env.MustToken(t, ws)
	const marker = "ZZMARKER9431"
	cases := []struct {
		name, query, typ string
		loc              []string
		ctx              map[string]any
	}{
		{"LimitAbove500", "limit=501", "less_than_equal", []string{"query", "limit"}, map[string]any{"le": float64(500)}},
		{"LimitZero", "limit=0", "greater_than_equal", []string{"query", "limit"}, map[string]any{"ge": float64(1)}},
		{"OffsetNegative", "offset=-1", "greater_than_equal", []string{"query", "offset"}, map[string]any{"ge": float64(0)}},
		{"LimitNotANumber", "limit=" + marker, "int_parsing", []string{"query", "limit"}, map[string]any{}},
		{"SortUnknown", "sort=" + marker, "enum", []string{"query", "sort"}, map[string]any{}},
		{"QueryTooLong", "q=" + strings.Repeat(marker, 20), "string_too_long", []string{"query", "q"}, map[string]any{"max_length": float64(200)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.Do(t, http.MethodGet, "/api/v1/datasets?"+c.query, tok, nil)
			if r.Status != 422 {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			e := decodeError(t, r)
			var items []map[string]any
			if e.Code != "validation_error" || json.Unmarshal(e.Detail, &items) != nil || len(items) != 1 {
				t.Fatalf("body %s", r.Body)
			}
			it := items[0]
			if it["type"] != c.typ || fmt.Sprint(it["loc"]) != fmt.Sprint(c.loc) || it["msg"] == "" {
				t.Fatalf("item %v", it)
			}
			if diff := cmp.Diff(c.ctx, it["ctx"]); diff != "" {
				t.Fatalf("ctx (-want +got):\n%s", diff)
			}
			for k := range it {
				if k != "type" && k != "loc" && k != "msg" && k != "ctx" {
					t.Fatalf("unexpected key %q in %v", k, it)
				}
			}
			if strings.Contains(string(r.Body), marker) {
				t.Fatalf("marker echoed: %s", r.Body)
			}
		})
	}
	// GraphQL checks windows and hops by the same rules as REST, located under args.
	t.Run("GraphQLWindowsAndHops", func(t *testing.T) {
		for _, c := range []struct{ query, want string }{
			{`{ datasets(limit: 0) { total } }`, "greater_than_equal [args limit] map[ge:1]"},
			{`{ scans(limit: 501) { total } }`, "less_than_equal [args limit] map[le:500]"},
			{`{ incidents(limit: 0, offset: -1) { total } }`, "greater_than_equal [args limit] map[ge:1] greater_than_equal [args offset] map[ge:0]"},
			{`{ signals(offset: -2) { total } }`, "greater_than_equal [args offset] map[ge:0]"},
			{`{ knowledgeGraph(hops: 0) { hops } }`, "greater_than_equal [args hops] map[ge:1]"},
			{`{ knowledgeGraph(hops: 4) { hops } }`, "less_than_equal [args hops] map[le:3]"},
		} {
			g := env.GraphQL(t, tok, c.query, nil)
			errs, _ := g["errors"].([]any)
			if len(errs) != 1 {
				t.Fatalf("%s: %v", c.query, g)
			}
			ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
			items, _ := ext["detail"].([]any)
			var got []string
			for _, it := range items {
				m := it.(map[string]any)
				got = append(got, fmt.Sprint(m["type"], " ", m["loc"], " ", m["ctx"]))
			}
			if ext["code"] != "validation_error" || strings.Join(got, " ") != c.want {
				t.Errorf("%s: %v, want %s", c.query, got, c.want)
			}
		}
	})
	t.Run("MarkerInPathAndHeadersNowhere", func(t *testing.T) {
		for _, p := range []string{"/api/v1/datasets/" + marker, "/api/v1/" + marker, "/api/v1/datasets?connection_id=" + marker} {
			r := env.Do(t, http.MethodGet, p, tok, nil, "X-Request-ID: "+marker+" x")
			if strings.Contains(string(r.Body), marker) || strings.Contains(fmt.Sprint(r.Header), marker) {
				t.Fatalf("%s echoed marker: %s", p, r.Body)
			}
		}
		if strings.Contains(env.Logs.String(), marker) {
			t.Fatal("marker reached the log")
		}
		if strings.Contains(env.Logs.String(), tok) || strings.Contains(env.Logs.String(), tok[4:20]) {
			t.Fatal("token reached the log")
		}
	})
}

func TestTenancy(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	wsA, wsB := env.MustWorkspace(t, "a"), env.MustWorkspace(t, "b")
	tokA := env.MustToken(t, wsA)
	dsA := env.MustDataset(t, wsA, env.MustConnection(t, wsA, "ca"), "public", "clientes")
	dsB := env.MustDataset(t, wsB, env.MustConnection(t, wsB, "cb"), "public", "clientes")

	t.Run("404ForOtherWorkspaceIdenticalToUnknown", func(t *testing.T) {
		other := env.Do(t, http.MethodGet, "/api/v1/datasets/"+dsB, tokA, nil)
		unknown := env.Do(t, http.MethodGet, "/api/v1/datasets/"+vigia.NewID(), tokA, nil)
		if other.Status != 404 || unknown.Status != 404 {
			t.Fatalf("statuses %d %d", other.Status, unknown.Status)
		}
		a, b := decodeError(t, other), decodeError(t, unknown)
		a.RequestID, b.RequestID = "", ""
		if diff := cmp.Diff(b, a); diff != "" {
			t.Fatalf("bodies differ beyond request_id:\n%s", diff)
		}
		if len(other.Body)-len(a.RequestID) != len(unknown.Body)-len(b.RequestID) {
			t.Fatal("body lengths differ")
		}
	})
	t.Run("ListAndTotalNeverCountIt", func(t *testing.T) {
		r := env.Do(t, http.MethodGet, "/api/v1/datasets", tokA, nil)
		var items []map[string]any
		r.JSON(t, &items)
		if r.Header.Get("X-Total-Count") != "1" || len(items) != 1 || items[0]["id"] != dsA {
			t.Fatalf("total %s items %v", r.Header.Get("X-Total-Count"), items)
		}
	})
	t.Run("GraphQLToo", func(t *testing.T) {
		out := env.GraphQL(t, tokA, `query($id: ID!){ dataset(id: $id){ name } datasets { total } }`, map[string]any{"id": dsB})
		errs, _ := out["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "not_found" {
			t.Fatalf("errors %v", out)
		}
		if fmt.Sprint(out["data"].(map[string]any)["datasets"].(map[string]any)["total"]) != "1" {
			t.Fatalf("graphql total %v", out["data"])
		}
	})
}

func TestLanguage(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	detail := func(h ...string) string {
		r := env.Do(t, http.MethodGet, "/api/v1/datasets", "", nil, h...)
		var s string
		_ = json.Unmarshal(decodeError(t, r).Detail, &s)
		return s
	}
	pt, en, es, de := detail(), detail("Accept-Language: en"), detail("Accept-Language: es"), detail("Accept-Language: de")
	if !strings.Contains(en, "Authentication required") || !strings.Contains(es, "Se requiere") ||
		de != en || !strings.Contains(pt, "É necessária") {
		t.Fatalf("pt=%q en=%q es=%q de=%q", pt, en, es, de)
	}
	t.Run("TokenCallsFollowAcceptLanguageWhenWorkspaceHasNoLocale", func(t *testing.T) {
		ws := env.MustWorkspace(t, "lang")
		tok := env.MustToken(t, ws)
		r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+vigia.NewID(), tok, nil, "Accept-Language: es")
		var s string
		_ = json.Unmarshal(decodeError(t, r).Detail, &s)
		if s != "Recurso no encontrado." {
			t.Fatalf("detail %q", s)
		}
	})
	t.Run("WorkspaceLocaleBeatsHeader", func(t *testing.T) {
		ws := env.MustWorkspace(t, "lang-en")
		if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE workspaces SET locale = 'en-GB' WHERE id = $1`, ws); err != nil {
			t.Fatal(err)
		}
		tok := env.MustToken(t, ws)
		r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+vigia.NewID(), tok, nil, "Accept-Language: es")
		var s string
		_ = json.Unmarshal(decodeError(t, r).Detail, &s)
		if s != "Resource not found." {
			t.Fatalf("detail %q", s)
		}
	})
}
