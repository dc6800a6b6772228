package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/scan"
)

// exec runs SQL on the test database.
func exec(t testing.TB, env *apptest.Env, q string, args ...any) {
	t.Helper()
	if _, err := env.DB.Pool().Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// mustTeamMember puts the person of a session in a new team and returns the team id.
func mustTeamMember(t *testing.T, env *apptest.Env, ws, session, name string) string {
	t.Helper()
	team := vigia.NewID()
	exec(t, env, `INSERT INTO teams (id, workspace_id, name) VALUES ($1, $2, $3)`, team, ws, name)
	exec(t, env, `INSERT INTO team_members (team_id, user_id) SELECT $1, s.user_id FROM sessions s WHERE s.token_hash = sha256($2::bytea)`, team, session)
	return team
}

// seedScan inserts a finished scan of a connection.
func seedScan(t testing.TB, env *apptest.Env, ws, conn, status string, at time.Time) string {
	t.Helper()
	id := vigia.NewID()
	exec(t, env, `INSERT INTO scans (id, workspace_id, connection_id, status, created_at, started_at, finished_at)
		VALUES ($1, $2, $3, $4, $5, $5, $5)`, id, ws, conn, status, at)
	return id
}

// seedProfile saves a dataset's profile, score and verdict for a scan, as a scan would.
func seedProfile(t *testing.T, env *apptest.Env, ws, ds, scanID string, seq int, at time.Time, verdict string, dims map[string]any, score *float64) {
	t.Helper()
	d, err := json.Marshal(map[string]any{"score": score, "dimensions": dims})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, env, `INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, columns, metrics, profiled_at,
		latest_timestamp) VALUES ($1, $2, $3, $4, 5000, 'standard', '[]', '{}', $5, $5)`, ds, scanID, ws, seq, at)
	exec(t, env, `INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		ds, scanID, ws, seq, score, d, at)
	exec(t, env, `INSERT INTO verdicts (dataset_id, scan_id, workspace_id, seq, verdict, detail, created_at)
		VALUES ($1, $2, $3, $4, $5, '{"verdict":"pass","failing_rules":[],"reasons":[]}', $6)`, ds, scanID, ws, seq, verdict, at)
	exec(t, env, `UPDATE datasets SET latest_score = $2, last_scan_at = $3 WHERE id = $1`, ds, score, at)
}

// mustProfiledDataset makes a dataset that was profiled now with a pass verdict.
func mustProfiledDataset(t *testing.T, env *apptest.Env, ws, conn, schema, table string) string {
	t.Helper()
	ds := env.MustDataset(t, ws, conn, schema, table)
	now := time.Now().UTC()
	sc := seedScan(t, env, ws, conn, "succeeded", now)
	score := 95.0
	seedProfile(t, env, ws, ds, sc, 1, now, "pass", map[string]any{"completude": 98, "unicidade": 100}, &score)
	return ds
}

// decision is the part of a trust decision the tests read.
type decision struct {
	DatasetID string `json:"dataset_id"`
	Purpose   string `json:"purpose"`
	Decision  string `json:"decision"`
	Reasons   []struct {
		Code      string         `json:"code"`
		Severity  string         `json:"severity"`
		MessagePT string         `json:"message_pt"`
		Params    map[string]any `json:"params"`
	} `json:"reasons"`
	Verdict   string `json:"verdict"`
	Readiness struct {
		Score    float64  `json:"score"`
		Blockers []string `json:"blockers"`
	} `json:"readiness"`
	Freshness     map[string]any `json:"freshness"`
	OpenIncidents struct {
		Critical int `json:"critical"`
		Warning  int `json:"warning"`
	} `json:"open_incidents"`
	PII struct {
		Columns  []string `json:"columns"`
		Unmasked []string `json:"unmasked"`
	} `json:"pii"`
	Contract            map[string]bool `json:"contract"`
	LastScanAt          *time.Time      `json:"last_scan_at"`
	AsOf                time.Time       `json:"as_of"`
	ValidUntil          time.Time       `json:"valid_until"`
	TTLSeconds          int             `json:"ttl_seconds"`
	RecommendedActionPT string          `json:"recommended_action_pt"`
	RequiredActions     []string        `json:"required_actions"`
}

func (d decision) codes() []string {
	out := []string{}
	for _, r := range d.Reasons {
		out = append(out, r.Code)
	}
	return out
}

// Must show 1: an open critical issue makes the decision for rag untrusted with the
// reason critical_incident, ttl_seconds equals the max-age sent and the token's call is
// audited; once the issue is resolved and the dataset rescanned the decision is trusted
// or caution with the reasons that remain.
func TestTrustDecisionFollowsCriticalIssue(t *testing.T) {
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "k", SQLiteRoot: root})
	ws := env.MustWorkspace(t, "trust")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	ctx := app.AsAdmin(context.Background(), ws, "test")
	src := newSource(t, "postgres", root)
	src.exec(t, `CREATE TABLE encomendas (id INTEGER PRIMARY KEY, cliente_email VARCHAR(120), estado VARCHAR(20), valor NUMERIC(10,2),
		criada_em TIMESTAMP)`)
	now := time.Now().UTC().Truncate(time.Second)
	for i := 1; i <= 300; i++ {
		src.exec(t, `INSERT INTO encomendas VALUES ($1, $2, $3, $4, $5)`, i, fmt.Sprintf("%s%d@exemplo.pt", strings.ToLower(valueMarker), i),
			[]string{"nova", "paga", "enviada"}[i%3], float64(i)/3, now.Add(-time.Duration(i)*time.Minute))
	}
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "loja", "kind": "postgres", "dsn": src.dsn})
	if r.Status != 201 {
		t.Fatalf("connection: %d %s", r.Status, r.Body)
	}
	var conn map[string]any
	r.JSON(t, &conn)
	scanNow := func(t *testing.T) {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": conn["id"]})
		var out map[string]any
		r.JSON(t, &out)
		sc, err := env.App.WaitScan(ctx, out["id"].(string), nil)
		if err != nil || sc.Status != scan.StatusSucceeded {
			t.Fatalf("scan %v %+v", err, sc)
		}
	}
	scanNow(t)
	var ds []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/datasets?q=encomendas", tok, nil).JSON(t, &ds)
	id := ds[0]["id"].(string)
	get := func(t *testing.T, purpose string) (decision, *apptest.Response) {
		t.Helper()
		r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+id+"/trust-decision?purpose="+purpose, tok, nil)
		if r.Status != 200 {
			t.Fatalf("trust-decision: %d %s", r.Status, r.Body)
		}
		var d decision
		r.JSON(t, &d)
		return d, r
	}

	src.exec(t, "ALTER TABLE encomendas DROP COLUMN valor")
	scanNow(t)
	d, r := get(t, "rag")
	t.Run("UntrustedWithCriticalIncident", func(t *testing.T) {
		if d.Decision != "untrusted" || d.Purpose != "rag" || d.OpenIncidents.Critical < 1 {
			t.Fatalf("decision %+v", d)
		}
		found := false
		for _, rs := range d.Reasons {
			if (rs.Code == "critical_incident" || rs.Code == "readiness_blocker") && rs.Severity == "critical" && rs.MessagePT != "" {
				found = true
			}
		}
		if !found || d.Verdict != "fail" || len(d.RequiredActions) == 0 || d.RecommendedActionPT == "" {
			t.Fatalf("reasons %v verdict %s actions %v", d.Reasons, d.Verdict, d.RequiredActions)
		}
		if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age="+strconv.Itoa(d.TTLSeconds)) || d.TTLSeconds <= 0 {
			t.Fatalf("Cache-Control %q, ttl %d", cc, d.TTLSeconds)
		}
		if got := d.ValidUntil.Sub(d.AsOf); got != time.Duration(d.TTLSeconds)*time.Second {
			t.Fatalf("valid_until - as_of = %v, ttl %d", got, d.TTLSeconds)
		}
		if len(d.PII.Unmasked) != 1 || d.PII.Unmasked[0] != "cliente_email" || d.LastScanAt == nil || d.Contract == nil {
			t.Fatalf("pii %+v last scan %v contract %v", d.PII, d.LastScanAt, d.Contract)
		}
	})
	t.Run("MLIsTreinoAndBadPurposeIs422", func(t *testing.T) {
		if d, _ := get(t, "ml"); d.Purpose != "treino" {
			t.Fatalf("purpose %s", d.Purpose)
		}
		var def decision
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+id+"/trust-decision", tok, nil).JSON(t, &def)
		if def.Purpose != "agente" {
			t.Fatalf("default purpose %s", def.Purpose)
		}
		if r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+id+"/trust-decision?purpose=x", tok, nil); r.Status != 422 {
			t.Fatalf("bad purpose: %d", r.Status)
		}
	})
	t.Run("TokenCallsAreAudited", func(t *testing.T) {
		var n int
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM activity_log WHERE workspace_id = $1
			AND action = 'trust_decision.read' AND subject_id = $2 AND actor LIKE 'token:%'`, ws, id).Scan(&n); err != nil || n < 1 {
			t.Fatalf("audited %d (%v)", n, err)
		}
		before := 0
		_ = env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM activity_log WHERE action = 'trust_decision.read'`).Scan(&before)
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+id+"/trust-decision", admin, nil)
		after := 0
		_ = env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM activity_log WHERE action = 'trust_decision.read'`).Scan(&after)
		if after != before {
			t.Fatalf("a person's read was audited as a token call")
		}
	})
	t.Run("TrustScoreHasBlocker", func(t *testing.T) {
		var tr map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+id+"/trust", tok, nil).JSON(t, &tr)
		if tr["grade"] != "E" || tr["score"].(float64) > 39 || len(tr["components"].([]any)) != 6 {
			t.Fatalf("trust %v", tr)
		}
		keys := []string{}
		for _, b := range tr["blockers"].([]any) {
			m := b.(map[string]any)
			keys = append(keys, m["key"].(string))
			if m["message"] == "" {
				t.Fatalf("blocker without message: %v", m)
			}
		}
		if !contains(keys, "critical_issue") {
			t.Fatalf("blockers %v", keys)
		}
		var detail map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+id, tok, nil).JSON(t, &detail)
		if detail["trust"] == nil || len(detail["trust"].(map[string]any)["blockers"].([]any)) == 0 {
			t.Fatalf("detail trust %v", detail["trust"])
		}
	})

	// Resolve the drift (issue transitions are their own feature: the test sets the state).
	exec(t, env, `UPDATE issues SET status = 'resolved', resolved_at = now() WHERE dataset_id = $1 AND status IN ('open', 'acknowledged')`, id)
	scanNow(t)
	t.Run("TrustedOrCautionAfterResolveAndRescan", func(t *testing.T) {
		d, r := get(t, "rag")
		if d.Decision != "trusted" && d.Decision != "caution" {
			t.Fatalf("decision %s reasons %v", d.Decision, d.Reasons)
		}
		for _, rs := range d.Reasons {
			if rs.Severity == "critical" || rs.Code == "critical_incident" {
				t.Fatalf("a critical reason remains: %v", d.Reasons)
			}
		}
		// The personal-data column remains: rag reads it with caution.
		if d.Decision != "caution" || !contains(d.codes(), "readiness_warning") || d.OpenIncidents.Critical != 0 {
			t.Fatalf("remaining reasons %v", d.Reasons)
		}
		if !strings.Contains(r.Header.Get("Cache-Control"), "max-age="+strconv.Itoa(d.TTLSeconds)) {
			t.Fatalf("Cache-Control %q", r.Header.Get("Cache-Control"))
		}
		if bi, _ := get(t, "bi"); bi.Decision != "trusted" {
			t.Fatalf("bi %s %v", bi.Decision, bi.Reasons)
		}
	})
	t.Run("ReadsCarryNoValues", func(t *testing.T) {
		var all []string
		for _, p := range []string{"/trust", "/trust-decision", "/ai-readiness", "/context", "/trust-facts"} {
			r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+id+p, tok, nil)
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", p, r.Status, r.Body)
			}
			all = append(all, string(r.Body))
		}
		if strings.Contains(strings.ToLower(strings.Join(all, "")), strings.ToLower(valueMarker)) {
			t.Fatal("a value of the data leaked")
		}
		var c map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+id+"/context", tok, nil).JSON(t, &c)
		if fmt.Sprint(c["pii_columns"]) != "[cliente_email]" || len(c["columns"].([]any)) != 4 {
			t.Fatalf("context %v", c)
		}
	})
}

func allEqual(xs []int, v int) bool {
	for _, x := range xs {
		if x != v {
			return false
		}
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// Must show 5: 25 untrusted reads of 25 datasets by one consumer within an hour give at
// most 20 notices, the 20th saying the cap was reached; a replayed run_ref gives none.
func TestUntrustedReadNoticesAreCapped(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "cap")
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "c")
	var ids []string
	for i := 0; i < 25; i++ {
		ids = append(ids, env.MustDataset(t, ws, conn, "vendas", fmt.Sprintf("t%02d", i)))
	}
	read := func(t *testing.T, ds, runRef string) map[string]any {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", tok, map[string]any{
			"consumer": map[string]any{"name": "agente-vendas", "kind": "agent", "run_ref": runRef},
			"datasets": []string{ds}, "purpose": "rag", "decision_seen": map[string]any{"decision": "untrusted"}})
		if r.Status != 201 {
			t.Fatalf("consumption: %d %s", r.Status, r.Body)
		}
		var out map[string]any
		r.JSON(t, &out)
		return out
	}
	type notice struct {
		Params       map[string]any `json:"params"`
		ConsumerRead struct {
			ConsumerName string `json:"consumer_name"`
			ConsumerKind string `json:"consumer_kind"`
			Decision     string `json:"decision"`
			RunRef       string `json:"run_ref"`
			Datasets     []struct {
				DatasetID   string `json:"dataset_id"`
				DatasetName string `json:"dataset_name"`
			} `json:"datasets"`
		} `json:"consumer_read"`
	}
	notices := func(t *testing.T) []notice {
		t.Helper()
		rows, err := env.DB.Pool().Query(context.Background(), `SELECT payload FROM events WHERE workspace_id = $1
			AND type = 'consumer.untrusted_read' ORDER BY created_at, id`, ws)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []notice
		for rows.Next() {
			var b []byte
			var n notice
			if err := rows.Scan(&b); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	for i, ds := range ids {
		read(t, ds, fmt.Sprintf("run-%d", i))
	}
	ns := notices(t)
	if len(ns) != 20 {
		t.Fatalf("%d notices, want 20", len(ns))
	}
	for i, n := range ns {
		_, capped := n.Params["warnings_cap"]
		if capped != (i == 19) {
			t.Fatalf("notice %d warnings_cap present %v: %v", i+1, capped, n.Params)
		}
		if n.ConsumerRead.Decision != "untrusted" || n.ConsumerRead.ConsumerKind != "agent" || len(n.ConsumerRead.Datasets) != 1 ||
			n.ConsumerRead.RunRef != fmt.Sprintf("run-%d", i) {
			t.Fatalf("notice %d: %+v", i+1, n.ConsumerRead)
		}
	}
	if ns[19].Params["warnings_cap"].(float64) != 20 {
		t.Fatalf("cap %v", ns[19].Params)
	}

	t.Run("ConcurrentReadsKeepTheCap", func(t *testing.T) {
		ws3 := env.MustWorkspace(t, "concurrent")
		tok3 := env.MustToken(t, ws3)
		c3 := env.MustConnection(t, ws3, "c")
		var ds []string
		for i := 0; i < 25; i++ {
			ds = append(ds, env.MustDataset(t, ws3, c3, "s", fmt.Sprintf("t%02d", i)))
		}
		var wg sync.WaitGroup
		statuses := make([]int, len(ds))
		for i := range ds {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", tok3, map[string]any{
					"consumer": map[string]any{"name": "paralelo", "kind": "agent", "run_ref": fmt.Sprint("p-", i)},
					"datasets": []string{ds[i]}, "purpose": "rag", "decision_seen": map[string]any{"decision": "untrusted"}}).Status
			}(i)
		}
		wg.Wait()
		var n, capped int
		_ = env.DB.Pool().QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE payload->'params' ? 'warnings_cap')
			FROM events WHERE workspace_id = $1 AND type = 'consumer.untrusted_read'`, ws3).Scan(&n, &capped)
		if n != 20 || capped != 1 || !allEqual(statuses, 201) {
			t.Fatalf("%d notices (%d capped), statuses %v", n, capped, statuses)
		}
	})
	t.Run("ReplayProducesNone", func(t *testing.T) {
		ws2 := env.MustWorkspace(t, "replay")
		tok2 := env.MustToken(t, ws2)
		ds := env.MustDataset(t, ws2, env.MustConnection(t, ws2, "c"), "s", "t")
		body := map[string]any{"consumer": map[string]any{"name": "Relatório diário: vendas/semana", "kind": "pipeline", "run_ref": "r-1"},
			"datasets": []string{ds}, "purpose": "bi", "decision_seen": map[string]any{"decision": "untrusted", "as_of": "2026-01-02T03:04:05Z"}}
		first := env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", tok2, body)
		again := env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", tok2, body)
		var a, b map[string]any
		first.JSON(t, &a)
		again.JSON(t, &b)
		if first.Status != 201 || again.Status != 201 || a["id"] != b["id"] || a["replayed"] != false || b["replayed"] != true {
			t.Fatalf("first %s\nagain %s", first.Body, again.Body)
		}
		if a["datasets"].([]any)[0].(map[string]any)["trust_as_of"] != "2026-01-02T03:04:05Z" {
			t.Fatalf("trust_as_of %v", a["datasets"])
		}
		// The same consumer and dataset again within the hour (a new run): no second notice.
		body["consumer"].(map[string]any)["run_ref"] = "r-2"
		env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", tok2, body)
		var n, reads int
		_ = env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE workspace_id = $1 AND type = 'consumer.untrusted_read'`, ws2).Scan(&n)
		_ = env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM consumptions WHERE workspace_id = $1`, ws2).Scan(&reads)
		if n != 1 || reads != 2 {
			t.Fatalf("notices %d (want 1), reads %d (want 2)", n, reads)
		}
	})
}

// The consumer registry: rules of the body, counters, visibility, limits.
func TestConsumptionsAndConsumers(t *testing.T) {
	env := apptest.MustStart(t, app.Config{ConsumptionsPerMinute: 6})
	ws := env.MustWorkspace(t, "consumers")
	tok := env.MustToken(t, ws)
	member := env.MustSession(t, ws, vigia.RoleMember)
	conn := env.MustConnection(t, ws, "c")
	open := mustProfiledDataset(t, env, ws, conn, "public", "aberta")
	hidden := mustProfiledDataset(t, env, ws, conn, "saude", "consultas")
	domain := vigia.NewID()
	exec(t, env, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Saúde', true)`, domain, ws)
	exec(t, env, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, hidden)
	// The restricted dataset is read through a person of a granted team.
	granted := env.MustSession(t, ws, vigia.RoleMember)
	exec(t, env, `INSERT INTO domain_grants (domain_id, team_id) VALUES ($1, $2)`, domain, mustTeamMember(t, env, ws, granted, "clinica"))
	post := func(cred string, body any) *apptest.Response {
		return env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", cred, body)
	}
	body := func(name, kind string, ds ...string) map[string]any {
		return map[string]any{"consumer": map[string]any{"name": name, "kind": kind}, "datasets": ds, "purpose": "agente"}
	}

	t.Run("BadBodies422WithoutEcho", func(t *testing.T) {
		for name, b := range map[string]any{
			"UnknownField":       map[string]any{"consumer": map[string]any{"name": "a", "kind": "agent"}, "datasets": []string{open}, "purpose": "rag", "unknown_field": 1},
			"UnknownNestedField": map[string]any{"consumer": map[string]any{"name": "a", "kind": "agent", "x": 1}, "datasets": []string{open}, "purpose": "rag"},
			"BadName":            body("<script>MARKER", "agent", open),
			"BadKind":            body("a", "robot", open),
			"NoDatasets":         body("a", "agent"),
			"TooManyDatasets":    body("a", "agent", strings.Split(strings.Repeat(open+",", 51), ",")[:51]...),
			"NoPurpose":          map[string]any{"consumer": map[string]any{"name": "a", "kind": "agent"}, "datasets": []string{open}},
		} {
			r := post(tok, b)
			if r.Status != 422 || strings.Contains(string(r.Body), "MARK") || decodeError(t, r).Code != "validation_error" {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
	})
	t.Run("OtherWorkspaceDatasetIs404", func(t *testing.T) {
		other := env.MustWorkspace(t, "other")
		foreign := env.MustDataset(t, other, env.MustConnection(t, other, "c"), "s", "t")
		if r := post(tok, body("a", "agent", open, foreign)); r.Status != 404 {
			t.Fatalf("got %d", r.Status)
		}
		if r := post(tok, body("a", "agent", hidden)); r.Status != 404 {
			t.Fatalf("a token reading a restricted dataset: %d", r.Status)
		}
	})
	t.Run("NameRulesAcceptAnyLanguage", func(t *testing.T) {
		if r := post(tok, body("Análise_2026: vendas/norte-ÿ ñ", "notebook", open)); r.Status != 201 {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	if r := post(tok, body("bot", "agent", open)); r.Status != 201 {
		t.Fatalf("token read: %d %s", r.Status, r.Body)
	}
	if r := post(granted, body("bot", "agent", hidden)); r.Status != 201 {
		t.Fatalf("granted read: %d %s", r.Status, r.Body)
	}
	t.Run("CountersCountOnlyWhatTheCallerSees", func(t *testing.T) {
		find := func(cred string) map[string]any {
			r := env.Do(t, http.MethodGet, "/api/v1/consumers", cred, nil)
			var cs []map[string]any
			r.JSON(t, &cs)
			if r.Header.Get("X-Total-Count") != "2" {
				t.Fatalf("total %s: %s", r.Header.Get("X-Total-Count"), r.Body)
			}
			for _, c := range cs {
				if c["name"] == "bot" {
					return c
				}
			}
			t.Fatalf("no bot: %v", cs)
			return nil
		}
		g, m := find(granted), find(member)
		if g["consumptions_7d"].(float64) != 2 || g["datasets_30d"].(float64) != 2 || m["consumptions_7d"].(float64) != 1 ||
			m["datasets_30d"].(float64) != 1 || g["last_decision"] != "caution" || g["last_purpose"] != "agente" || g["last_consumed_at"] == nil {
			t.Fatalf("granted %v\nmember %v", g, m)
		}
		// The seeded datasets hold a phone column: agents read them with caution.
		if g["decisions_7d"].(map[string]any)["caution"].(float64) != 2 {
			t.Fatalf("decisions_7d %v", g["decisions_7d"])
		}
		var per []map[string]any
		r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+open+"/consumers", member, nil)
		r.JSON(t, &per)
		if r.Status != 200 || len(per) != 2 || r.Header.Get("X-Total-Count") != "2" {
			t.Fatalf("dataset consumers: %d %s", r.Status, r.Body)
		}
		if r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+hidden+"/consumers", member, nil); r.Status != 404 {
			t.Fatalf("restricted dataset's consumers: %d", r.Status)
		}
	})
	t.Run("RecentConsumersForIncidents", func(t *testing.T) {
		ctx := vigia.WithPrincipal(context.Background(), vigia.Principal{WorkspaceID: ws, UserID: "x", Role: vigia.RoleAdmin})
		got, err := env.App.Trust.RecentConsumers(ctx, []string{open, hidden}, time.Now().Add(-30*24*time.Hour))
		if err != nil || len(got[open]) != 2 || len(got[hidden]) != 1 || got[hidden][0].Name != "bot" || got[hidden][0].Consumptions7d != 1 {
			t.Fatalf("exposures %+v %v", got, err)
		}
		old, _ := env.App.Trust.RecentConsumers(ctx, []string{open}, time.Now().Add(time.Hour))
		if len(old[open]) != 0 {
			t.Fatalf("consumers after since: %v", old)
		}
	})
	t.Run("WorkspaceLimit429", func(t *testing.T) {
		var r *apptest.Response
		for i := 0; i < 10; i++ {
			if r = post(tok, body("burst", "application", open)); r.Status == 429 {
				break
			}
		}
		e := decodeError(t, r)
		if r.Status != 429 || r.Header.Get("Retry-After") == "" || e.RetryAfter == nil || e.Code != "rate_limited" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("SessionWriteOnlyForMarkedWrites", func(t *testing.T) {
		if r := env.Do(t, http.MethodPost, "/api/v1/domains", tok, map[string]any{"name": "x"}); r.Status != 403 || decodeError(t, r).Code != "token_read_only" {
			t.Fatalf("token creating a domain: %d %s", r.Status, r.Body)
		}
	})
}

// Batch decisions: a marked write; up to 50; unknown or invisible ids listed apart.
func TestBatchTrustDecisions(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "batch")
	tok := env.MustToken(t, ws)
	conn := env.MustConnection(t, ws, "c")
	good := mustProfiledDataset(t, env, ws, conn, "gold", "dim_clientes")
	never := env.MustDataset(t, ws, conn, "raw", "eventos")
	other := env.MustWorkspace(t, "other")
	foreign := env.MustDataset(t, other, env.MustConnection(t, other, "c"), "s", "t")
	r := env.Do(t, http.MethodPost, "/api/v1/trust-decisions", tok, map[string]any{"dataset_ids": []string{never, good, foreign, good, "x"}, "purpose": "ml"})
	if r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	var out struct {
		Purpose   string     `json:"purpose"`
		Decisions []decision `json:"decisions"`
		NotFound  []string   `json:"not_found"`
	}
	r.JSON(t, &out)
	if out.Purpose != "treino" || len(out.Decisions) != 2 || out.Decisions[0].DatasetID != never || out.Decisions[0].Decision != "unknown" ||
		out.Decisions[1].DatasetID != good || fmt.Sprint(out.NotFound) != fmt.Sprintf("[%s x]", foreign) {
		t.Fatalf("batch %s", r.Body)
	}
	if out.Decisions[1].Decision == "unknown" || out.Decisions[1].TTLSeconds <= 0 {
		t.Fatalf("profiled dataset %+v", out.Decisions[1])
	}
	ids := make([]string, 51)
	for i := range ids {
		ids[i] = good
	}
	if r := env.Do(t, http.MethodPost, "/api/v1/trust-decisions", tok, map[string]any{"dataset_ids": ids}); r.Status != 422 {
		t.Fatalf("51 ids: %d", r.Status)
	}
	var n int
	_ = env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM activity_log WHERE workspace_id = $1 AND action = 'trust_decision.batch_read'`, ws).Scan(&n)
	if n != 1 {
		t.Fatalf("batch calls audited %d", n)
	}
}

// Find, include=trust, access_role from domain grants.
func TestFindTrustListAndAccessRole(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "find")
	tok := env.MustToken(t, ws)
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	conn := env.MustConnection(t, ws, "c")
	gold := mustProfiledDataset(t, env, ws, conn, "marts", "fct_vendas")
	raw := env.MustDataset(t, ws, conn, "raw", "clientes_raw")
	exec(t, env, `UPDATE datasets SET queries_per_day = 250 WHERE id = $1`, gold)
	r := env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Vendas", "dataset_ids": []string{gold}})
	if r.Status != 201 {
		t.Fatalf("domain: %d %s", r.Status, r.Body)
	}
	var dom map[string]any
	r.JSON(t, &dom)
	find := func(t *testing.T, q string) []map[string]any {
		t.Helper()
		r := env.Do(t, http.MethodGet, "/api/v1/datasets/find?"+q, tok, nil)
		if r.Status != 200 {
			t.Fatalf("find %s: %d %s", q, r.Status, r.Body)
		}
		var out struct {
			Datasets []map[string]any `json:"datasets"`
		}
		r.JSON(t, &out)
		return out.Datasets
	}
	t.Run("Criteria", func(t *testing.T) {
		if got := find(t, "layer=gold"); len(got) != 1 || got[0]["id"] != gold || got[0]["usage_class"] != "hot" || got[0]["verdict"] != "pass" {
			t.Fatalf("gold %v", got)
		}
		if got := find(t, "layer=bronze&has_pii=true"); len(got) != 1 || got[0]["id"] != raw || fmt.Sprint(got[0]["pii_columns"]) != "[telefone]" {
			t.Fatalf("bronze pii %v", got)
		}
		if got := find(t, "domain=vendas&min_score=90"); len(got) != 1 || got[0]["id"] != gold {
			t.Fatalf("domain by name %v", got)
		}
		if got := find(t, "domain="+dom["id"].(string)+"&usage_class=dead"); len(got) != 0 {
			t.Fatalf("dead in domain %v", got)
		}
		if got := find(t, "query=clientes&has_pii=false"); len(got) != 0 {
			t.Fatalf("has_pii=false %v", got)
		}
		for _, q := range []string{"layer=platinum", "min_score=101", "usage_class=warm", "has_pii=maybe"} {
			if r := env.Do(t, http.MethodGet, "/api/v1/datasets/find?"+q, tok, nil); r.Status != 422 {
				t.Errorf("%s: %d", q, r.Status)
			}
		}
	})
	t.Run("CapsAt40", func(t *testing.T) {
		for i := 0; i < 41; i++ {
			env.MustDataset(t, ws, conn, "stg", fmt.Sprintf("stg_x%02d", i))
		}
		r := env.Do(t, http.MethodGet, "/api/v1/datasets/find?layer=bronze", tok, nil)
		var out map[string]any
		r.JSON(t, &out)
		if len(out["datasets"].([]any)) != 40 || out["truncated"] != true {
			t.Fatalf("cap: %d %v", len(out["datasets"].([]any)), out["truncated"])
		}
	})
	t.Run("IncludeTrust", func(t *testing.T) {
		var items []map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets?include=trust&q=fct", tok, nil).JSON(t, &items)
		if len(items) != 1 || items[0]["trust"] == nil || items[0]["trust"].(map[string]any)["grade"] == "" {
			t.Fatalf("include=trust %v", items)
		}
		var plain []map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets?q=fct", tok, nil).JSON(t, &plain)
		if _, ok := plain[0]["trust"]; ok {
			t.Fatalf("trust without include: %v", plain[0])
		}
	})
	t.Run("AccessRoleFromGrants", func(t *testing.T) {
		viewer := env.MustSession(t, ws, vigia.RoleViewer)
		manager := env.MustSession(t, ws, vigia.RoleMember)
		plain := env.MustSession(t, ws, vigia.RoleMember)
		exec(t, env, `INSERT INTO domain_grants (domain_id, team_id, role) VALUES ($1, $2, 'member')`, dom["id"], mustTeamMember(t, env, ws, viewer, "leitores"))
		exec(t, env, `INSERT INTO domain_grants (domain_id, team_id, role) VALUES ($1, $2, 'manager')`, dom["id"], mustTeamMember(t, env, ws, manager, "gestores"))
		for name, c := range map[string]struct{ cred, want string }{
			"TokenStaysViewer": {tok, "viewer"}, "ViewerWithMemberGrant": {viewer, "editor"}, "MemberWithManagerGrant": {manager, "owner"},
			"MemberWithoutGrant": {plain, "editor"}, "Admin": {admin, "owner"}} {
			var d map[string]any
			env.Do(t, http.MethodGet, "/api/v1/datasets/"+gold, c.cred, nil).JSON(t, &d)
			if d["access_role"] != c.want {
				t.Errorf("%s: %v, want %s", name, d["access_role"], c.want)
			}
		}
		var other map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+raw, manager, nil).JSON(t, &other)
		if other["access_role"] != "editor" {
			t.Errorf("a grant raised the role outside its domain: %v", other["access_role"])
		}
	})
}
