package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// refWorld is one workspace's objects that bodies refer to.
type refWorld struct {
	ws, admin                                                string
	conn, ds, ds2, team, domain, channel, issue, integ, user string
}

func newRefWorld(t *testing.T, env *apptest.Env, name string) refWorld {
	t.Helper()
	w := refWorld{ws: env.MustWorkspace(t, name)}
	w.admin = env.MustSession(t, w.ws, vigia.RoleAdmin)
	w.conn = env.MustConnection(t, w.ws, "pg")
	w.ds = env.MustDataset(t, w.ws, w.conn, "vendas", "encomendas")
	w.ds2 = env.MustDataset(t, w.ws, w.conn, "vendas", "faturas")
	ctx := context.Background()
	pool := env.DB.Pool()
	now := time.Now()
	w.team, w.domain, w.channel, w.issue, w.integ = vigia.NewID(), vigia.NewID(), vigia.NewID(), vigia.NewID(), vigia.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO teams (id, workspace_id, name) VALUES ($1, $2, 'dados')`, []any{w.team, w.ws}},
		{`INSERT INTO domains (id, workspace_id, name) VALUES ($1, $2, 'vendas')`, []any{w.domain, w.ws}},
		{`INSERT INTO notification_channels (id, workspace_id, name, url_sealed, created_at, updated_at)
			VALUES ($1, $2, 'canal', '\x00', $3, $3)`, []any{w.channel, w.ws, now}},
		{`INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at)
			VALUES ($1, $2, $3, 'anomaly', 'warning', 'open', 'volume', $4, $4)`, []any{w.issue, w.ws, w.ds, now}},
		{`INSERT INTO ticket_integrations (id, workspace_id, name, provider, created_at, updated_at)
			VALUES ($1, $2, 'tickets', 'generic', $3, $3)`, []any{w.integ, w.ws, now}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := pool.QueryRow(ctx, `SELECT id::text FROM users WHERE workspace_id = $1 LIMIT 1`, w.ws).Scan(&w.user); err != nil {
		t.Fatal(err)
	}
	return w
}

// storedTables are the tables a write with body references may add to or change.
var storedTables = []string{"domains", "domain_datasets", "domain_grants", "domain_consumers", "issues", "lineage_edges",
	"lineage_exposures", "notification_channels", "notification_mutes", "oncall_rotas", "rules", "scans", "ticket_links",
	"consumers", "consumptions", "consumption_datasets", "team_members", "lineage_outbox",
	"orchestrator_runs", "orchestrator_run_datasets", "kb_entries", "kb_entry_links"}

func tableDigest(t *testing.T, env *apptest.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range storedTables {
		var d string
		err := env.DB.Pool().QueryRow(context.Background(),
			`SELECT count(*)::text || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM `+tb+` t`).Scan(&d)
		if err != nil {
			t.Fatal(err)
		}
		out[tb] = d
	}
	return out
}

// TestForeignReferencesInBodiesAre404 posts every write route whose body names objects by
// id with another workspace's id (and a random one) in each id-typed field: 404, nothing
// stored. The same body with the caller's own ids is accepted, so the 404 is the
// reference's. POST /trust-decisions is left out: it stores nothing and answers the ids
// it cannot decide on in its not_found list (the contract's batch answer).
func TestForeignReferencesInBodiesAre404(t *testing.T) {
	env := apptest.MustStart(t, app.Config{RateLimitIP: 1 << 20, RateLimitToken: 1 << 20})
	a, b := newRefWorld(t, env, "refs-a"), newRefWorld(t, env, "refs-b")
	tokA := env.MustToken(t, a.ws)
	ends := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	// body builds the request body with id in the swept field (the others own).
	cases := []struct {
		method, path, cred string
		ok                 int // status with own ids; 0: not sent (the write has effects beyond the test)
		fields             []string
		body               func(ids map[string]string) any
	}{
		{http.MethodPost, "/api/v1/domains", a.admin, 201, []string{"dataset", "team"}, func(id map[string]string) any {
			return map[string]any{"name": "dom-" + vigia.NewUUID()[:6], "dataset_ids": []string{id["dataset"]},
				"teams": []any{map[string]any{"team_id": id["team"], "role": "member"}}}
		}},
		{http.MethodPatch, "/api/v1/domains/" + a.domain, a.admin, 200, []string{"dataset", "team"}, func(id map[string]string) any {
			return map[string]any{"dataset_ids": []string{id["dataset"]}, "teams": []any{map[string]any{"team_id": id["team"]}}}
		}},
		{http.MethodPost, "/api/v1/domains/" + a.domain + "/consumers", a.admin, 201, []string{"channel"}, func(id map[string]string) any {
			return map[string]any{"name": "painel " + vigia.NewUUID()[:6], "kind": "user", "channel_id": id["channel"]}
		}},
		{http.MethodPatch, "/api/v1/issues/" + a.issue, a.admin, 200, []string{"team"}, func(id map[string]string) any {
			return map[string]any{"assignee_team_id": id["team"]}
		}},
		{http.MethodPost, "/api/v1/lineage/edges", a.admin, 204, []string{"dataset", "dataset2"}, func(id map[string]string) any {
			return map[string]any{"source_id": id["dataset"], "target_id": id["dataset2"]}
		}},
		{http.MethodPost, "/api/v1/lineage/exposures", a.admin, 201, []string{"dataset"}, func(id map[string]string) any {
			return map[string]any{"name": "painel-" + vigia.NewUUID()[:6], "type": "dashboard", "dataset_ids": []string{id["dataset"]}}
		}},
		{http.MethodPatch, "/api/v1/notification-channels/" + a.channel, a.admin, 0, []string{"team", "connection", "dataset", "domain"},
			func(id map[string]string) any {
				return map[string]any{"team_id": id["team"], "scope": map[string]any{"connection_ids": []string{id["connection"]},
					"dataset_ids": []string{id["dataset"]}, "domain_ids": []string{id["domain"]}}}
			}},
		{http.MethodPost, "/api/v1/notification-mutes", a.admin, 201, []string{"connection"}, func(id map[string]string) any {
			return map[string]any{"scope": "connection", "connection_id": id["connection"], "ends_at": ends}
		}},
		{http.MethodPost, "/api/v1/notification-mutes", a.admin, 201, []string{"dataset"}, func(id map[string]string) any {
			return map[string]any{"scope": "dataset", "dataset_id": id["dataset"], "ends_at": ends}
		}},
		{http.MethodPut, "/api/v1/oncall/rota", a.admin, 200, []string{"user", "team"}, func(id map[string]string) any {
			return map[string]any{"team_id": id["team"], "levels": []any{map[string]any{"user_id": id["user"], "minutes": 5}}}
		}},
		{http.MethodPost, "/api/v1/knowledge", a.admin, 201, []string{"dataset", "dataset2"}, func(id map[string]string) any {
			return map[string]any{"kind": "term", "title": "Encomenda", "links": []any{map[string]any{"dataset_id": id["dataset"]},
				map[string]any{"dataset_id": id["dataset2"], "column": "id"}}}
		}},
		{http.MethodPost, "/api/v1/orchestrator-runs", tokA, 201, []string{"dataset", "dataset2"}, func(id map[string]string) any {
			return map[string]any{"orchestrator": "airflow", "pipeline": "load", "run_id": vigia.NewUUID(), "status": "success",
				"started_at": ends, "inputs": []any{map[string]any{"dataset_id": id["dataset2"]}},
				"outputs": []any{map[string]any{"dataset_id": id["dataset"]}}}
		}},
		{http.MethodPost, "/api/v1/bi/refreshes", tokA, 201, []string{"dataset"}, func(id map[string]string) any {
			return map[string]any{"tool": "metabase", "bi_dataset_id": "q-1", "bi_dataset_name": "Vendas", "refresh_id": vigia.NewUUID(),
				"status": "success", "started_at": ends, "datasets": []any{map[string]any{"dataset_id": id["dataset"]}}}
		}},
		{http.MethodPost, "/api/v1/rules", a.admin, 201, []string{"dataset"}, func(id map[string]string) any {
			return map[string]any{"dataset_id": id["dataset"], "rule_type": "not_null", "params": map[string]any{"column": "id"}}
		}},
		{http.MethodPost, "/api/v1/scans", a.admin, 0, []string{"connection"}, func(id map[string]string) any {
			return map[string]any{"connection_id": id["connection"]}
		}},
		{http.MethodPost, "/api/v1/tickets/link", a.admin, 0, []string{"issue", "integration"}, func(id map[string]string) any {
			return map[string]any{"issue_id": id["issue"], "integration_id": id["integration"], "key": "VND-1", "url": "https://tickets.example.pt/VND-1"}
		}},
		{http.MethodPost, "/api/v1/teams/" + a.team + "/members", a.admin, 0, []string{"user"}, func(id map[string]string) any {
			return map[string]any{"user": id["user"]}
		}},
		{http.MethodPost, "/api/v1/trust/consumptions", tokA, 201, []string{"dataset"}, func(id map[string]string) any {
			return map[string]any{"consumer": map[string]any{"name": "bot", "kind": "agent"}, "datasets": []string{id["dataset"]}, "purpose": "rag"}
		}},
	}
	idsOf := func(w refWorld) map[string]string {
		return map[string]string{"dataset": w.ds, "dataset2": w.ds2, "team": w.team, "domain": w.domain, "channel": w.channel,
			"issue": w.issue, "integration": w.integ, "connection": w.conn, "user": w.user}
	}
	swept := 0
	for _, c := range cases {
		for _, f := range c.fields {
			for variant, id := range map[string]string{"other_workspace": idsOf(b)[f], "unknown": vigia.NewID()} {
				t.Run(fmt.Sprintf("%s %s %s %s", c.method, c.path, f, variant), func(t *testing.T) {
					ids := idsOf(a)
					ids[f] = id
					before := tableDigest(t, env)
					r := env.Do(t, c.method, c.path, c.cred, c.body(ids))
					if r.Status != 404 || decodeError(t, r).Code != "not_found" {
						t.Fatalf("want 404 not_found, got %d %s", r.Status, r.Body)
					}
					if strings.Contains(string(r.Body), id) {
						t.Fatalf("the id is echoed: %s", r.Body)
					}
					after := tableDigest(t, env)
					for tb := range before {
						if before[tb] != after[tb] {
							t.Errorf("%s changed", tb)
						}
					}
					swept++
				})
			}
		}
		if c.ok != 0 {
			t.Run(fmt.Sprintf("%s %s own ids", c.method, c.path), func(t *testing.T) {
				if r := env.Do(t, c.method, c.path, c.cred, c.body(idsOf(a))); r.Status != c.ok {
					t.Fatalf("own ids: want %d, got %d %s", c.ok, r.Status, r.Body)
				}
			})
		}
	}
	t.Logf("%d foreign references swept", swept)
}
