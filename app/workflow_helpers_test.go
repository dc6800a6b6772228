package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/scan"
)

// wfEnv is a running Vigia with one workspace and its people, for the rule and issue
// tests.
type wfEnv struct {
	*apptest.Env
	ws, admin, member, viewer, tok string
	root                           string
}

func newWF(t *testing.T, prefix string) *wfEnv {
	t.Helper()
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root})
	ws := env.MustWorkspace(t, prefix)
	return &wfEnv{Env: env, ws: ws, admin: env.MustSession(t, ws, vigia.RoleAdmin), member: env.MustSession(t, ws, vigia.RoleMember),
		viewer: env.MustSession(t, ws, vigia.RoleViewer), tok: env.MustToken(t, ws), root: root}
}

// connect adds a connection through the API and returns its id.
func (e *wfEnv) connect(t *testing.T, name, kind, dsn string) string {
	t.Helper()
	r := e.Do(t, http.MethodPost, "/api/v1/connections", e.admin, map[string]any{"name": name, "kind": kind, "dsn": dsn})
	if r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	var c map[string]any
	r.JSON(t, &c)
	return c["id"].(string)
}

// scan triggers a scan of a connection with the API token and waits for it.
func (e *wfEnv) scan(t *testing.T, connID string) scan.Scan {
	t.Helper()
	r := e.Do(t, http.MethodPost, "/api/v1/scans", e.tok, map[string]any{"connection_id": connID})
	if r.Status != 202 {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	sc, err := e.App.WaitScan(app.AsAdmin(context.Background(), e.ws, "test"), out["id"].(string), nil)
	if err != nil || sc.Status != scan.StatusSucceeded || sc.DatasetsFailed != 0 {
		t.Fatalf("scan %v: %+v", err, sc)
	}
	return sc
}

// dataset returns the id of a connection's dataset by table name.
func (e *wfEnv) dataset(t *testing.T, connID, table string) string {
	t.Helper()
	var ds []map[string]any
	e.Do(t, http.MethodGet, "/api/v1/datasets?connection_id="+connID, e.admin, nil).JSON(t, &ds)
	for _, d := range ds {
		if d["table"] == table {
			return d["id"].(string)
		}
	}
	t.Fatalf("no dataset %s in %v", table, ds)
	return ""
}

// get decodes a GET answer, failing unless it is 200.
func (e *wfEnv) get(t *testing.T, path, cred string) map[string]any {
	t.Helper()
	r := e.Do(t, http.MethodGet, path, cred, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	return out
}

// list decodes a list answer, failing unless it is 200.
func (e *wfEnv) list(t *testing.T, path, cred string) ([]map[string]any, string) {
	t.Helper()
	r := e.Do(t, http.MethodGet, path, cred, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var out []map[string]any
	r.JSON(t, &out)
	return out, r.Header.Get("X-Total-Count")
}

// createRule posts a rule with a member's session and returns it.
func (e *wfEnv) createRule(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do(t, http.MethodPost, "/api/v1/rules", e.member, body)
	if r.Status != 201 {
		t.Fatalf("create rule: %d %s", r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	return out
}

// score is a dataset's latest score.
func (e *wfEnv) score(t *testing.T, datasetID string) float64 {
	t.Helper()
	d := e.get(t, "/api/v1/datasets/"+datasetID, e.admin)
	s, ok := d["latest_score"].(float64)
	if !ok {
		t.Fatalf("no score: %v", d["latest_score"])
	}
	return s
}

// exec runs SQL on Vigia's own database.
func (e *wfEnv) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := e.DB.Pool().Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// userID returns the user id behind a session token.
func (e *wfEnv) userID(t *testing.T, session string) string {
	t.Helper()
	var id string
	if err := e.DB.Pool().QueryRow(context.Background(), `SELECT user_id::text FROM sessions WHERE token_hash = sha256($1::bytea)`,
		session).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
