package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/finops"
)

type shareBody struct {
	Count int      `json:"count"`
	Pct   *float64 `json:"pct"`
}

type governanceBody struct {
	PeriodDays int `json:"period_days"`
	Coverage   struct {
		Datasets              int       `json:"datasets"`
		Profiled              shareBody `json:"profiled"`
		WithOwner             shareBody `json:"with_owner"`
		WithDomain            shareBody `json:"with_domain"`
		WithRules             shareBody `json:"with_rules"`
		WithContract          shareBody `json:"with_contract"`
		SensitivityClassified shareBody `json:"sensitivity_classified"`
	} `json:"coverage"`
	IssueFlow struct {
		Opened          int `json:"opened"`
		Resolved        int `json:"resolved"`
		Ignored         int `json:"ignored"`
		OpenNow         int `json:"open_now"`
		OpenCritical    int `json:"open_critical"`
		OpenWarning     int `json:"open_warning"`
		OpenSLABreached int `json:"open_sla_breached"`
	} `json:"issue_flow"`
	SLA struct {
		ClosedInScope int      `json:"closed_in_scope"`
		Met           int      `json:"met"`
		Breached      int      `json:"breached"`
		AttainmentPct *float64 `json:"attainment_pct"`
	} `json:"sla"`
}

// Governance metrics and the dashboards over a seeded workspace: each figure is the
// hand count of what was seeded, over the datasets the caller can see (a restricted
// domain's dataset counts for the admin only); the money fields follow the currency.
func TestGovernanceMetricsAndDashboards(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "govmetrics")
	admin, member := env.MustSession(t, ws, vigia.RoleAdmin), env.MustSession(t, ws, vigia.RoleMember)
	conn := env.MustConnection(t, ws, "pg")
	a, b := env.MustDataset(t, ws, conn, "public", "a"), env.MustDataset(t, ws, conn, "public", "b")
	c, d := env.MustDataset(t, ws, conn, "public", "c"), env.MustDataset(t, ws, conn, "public", "d")
	secret := env.MustDataset(t, ws, conn, "public", "segredo")
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := env.DB.Pool().Exec(context.Background(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`UPDATE datasets SET latest_score = 70 WHERE id = $1`, a)
	exec(`UPDATE datasets SET latest_score = 90 WHERE id = $1`, b)
	exec(`UPDATE datasets SET latest_score = 85 WHERE id = $1`, c)
	exec(`UPDATE datasets SET latest_score = 95 WHERE id = $1`, d)
	owner := "Equipa Vendas"
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Vendas", "owner_name": owner, "dataset_ids": []string{a, b}}), http.StatusCreated)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Sem dono", "dataset_ids": []string{c}}), http.StatusCreated)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Reservado", "owner_name": owner, "restricted": true,
		"dataset_ids": []string{secret}}), http.StatusCreated)
	now := time.Now().UTC()
	exec(`INSERT INTO rules (id, workspace_id, dataset_id, rule_type, severity, params, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, 'not_null', 'warning', '{"column":"id"}', 'test', $4, $4)`, vigia.NewID(), ws, a, now)
	exec(`INSERT INTO contract_versions (id, workspace_id, dataset_id, major, minor, bump, document, created_at)
		VALUES ($1, $2, $3, 1, 0, 'initial', '{}', $4)`, vigia.NewID(), ws, b, now)
	exec(`INSERT INTO column_sensitivity (dataset_id, column_name, level, author_id, set_at) VALUES ($1, 'telefone', 'pii', 'test', $2)`, c, now)
	issue := func(ds, severity, status string, created time.Time, resolved, breached *time.Time) {
		t.Helper()
		exec(`INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at, resolved_at, sla_breached_at)
			VALUES ($1, $2, $3, 'anomaly', $4, $5, 'x', $6, $6, $7, $8)`, vigia.NewID(), ws, ds, severity, status, created, resolved, breached)
	}
	hourAgo, old := now.Add(-time.Hour), now.AddDate(0, 0, -60)
	issue(a, "critical", "open", hourAgo, nil, nil)
	issue(b, "warning", "resolved", hourAgo, &now, nil)
	issue(c, "warning", "resolved", hourAgo, &now, &hourAgo)
	issue(d, "critical", "ignored", hourAgo, &now, nil)
	issue(d, "warning", "acknowledged", old, nil, &old)
	issue(secret, "critical", "open", hourAgo, nil, nil) // the member cannot see it
	exec(`INSERT INTO incidents (id, workspace_id, status, severity, issue_ids, dataset_ids, impact, created_at, updated_at)
		VALUES ($1, $2, 'open', 'critical', '{}', ARRAY[$3::uuid], '{}', $4, $4)`, vigia.NewID(), ws, a, now)

	r := env.Do(t, http.MethodGet, "/api/v1/governance/metrics", member, nil)
	mustStatus(t, r, http.StatusOK)
	var g governanceBody
	r.JSON(t, &g)
	cov := g.Coverage
	pct := func(s shareBody) float64 {
		if s.Pct == nil {
			return -1
		}
		return *s.Pct
	}
	if g.PeriodDays != 30 || cov.Datasets != 4 || cov.Profiled.Count != 0 || cov.WithOwner.Count != 2 || pct(cov.WithOwner) != 50 ||
		cov.WithDomain.Count != 3 || pct(cov.WithDomain) != 75 || cov.WithRules.Count != 1 || pct(cov.WithRules) != 25 ||
		cov.WithContract.Count != 1 || cov.SensitivityClassified.Count != 1 {
		t.Fatalf("coverage: %s", r.Body)
	}
	f := g.IssueFlow
	if f.Opened != 4 || f.Resolved != 2 || f.Ignored != 1 || f.OpenNow != 2 || f.OpenCritical != 1 || f.OpenWarning != 1 || f.OpenSLABreached != 1 {
		t.Fatalf("issue flow: %s", r.Body)
	}
	if g.SLA.ClosedInScope != 2 || g.SLA.Met != 1 || g.SLA.Breached != 1 || g.SLA.AttainmentPct == nil || *g.SLA.AttainmentPct != 50 {
		t.Fatalf("sla: %s", r.Body)
	}
	// The admin sees the restricted domain's dataset and its issue.
	r = env.Do(t, http.MethodGet, "/api/v1/governance/metrics?days=90", admin, nil)
	g = governanceBody{}
	r.JSON(t, &g)
	if g.PeriodDays != 90 || g.Coverage.Datasets != 5 || g.Coverage.WithOwner.Count != 3 || g.IssueFlow.Opened != 6 || g.IssueFlow.OpenCritical != 2 {
		t.Fatalf("admin metrics: %s", r.Body)
	}
	mustStatus(t, env.Do(t, http.MethodGet, "/api/v1/governance/metrics?days=0", member, nil), http.StatusUnprocessableEntity)

	// Executive: mean score (70+90+85+95)/4, verdicts unknown, one critical incident.
	token := env.MustToken(t, ws)
	r = env.Do(t, http.MethodGet, "/api/v1/dashboard/executive", token, nil)
	mustStatus(t, r, http.StatusOK)
	var ex struct {
		Datasets              int            `json:"datasets"`
		MeanScore             *float64       `json:"mean_score"`
		Verdicts              map[string]int `json:"verdicts"`
		OpenIncidentsCritical int            `json:"open_incidents_critical"`
		SLAAttainmentPct      *float64       `json:"sla_attainment_pct"`
		LLMCostEUR            *float64       `json:"llm_cost_eur"`
		LLMCost               struct {
			Amount   *float64 `json:"amount"`
			Currency string   `json:"currency"`
		} `json:"llm_cost"`
		Currency string          `json:"currency"`
		FX       *map[string]any `json:"fx"`
	}
	r.JSON(t, &ex)
	if ex.Datasets != 4 || ex.MeanScore == nil || *ex.MeanScore != 85 || ex.Verdicts["unknown"] != 4 || ex.OpenIncidentsCritical != 1 ||
		ex.SLAAttainmentPct == nil || *ex.SLAAttainmentPct != 50 || ex.LLMCostEUR == nil || *ex.LLMCostEUR != 0 ||
		ex.Currency != "EUR" || ex.LLMCost.Currency != "EUR" || ex.LLMCost.Amount == nil || ex.FX != nil {
		t.Fatalf("executive: %s", r.Body)
	}
	// GBP with a loaded rate: every *_eur figure has its amount, the rate and its date.
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/currency", admin, map[string]any{"currency": "GBP"}), http.StatusOK)
	day := now.AddDate(0, 0, -1)
	if err := env.App.Finops.LoadRates(context.Background(), []finops.Rate{{Currency: "GBP", Date: day, PerEUR: 0.8421}}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/dashboard/executive", "/api/v1/dashboard/management", "/api/v1/dashboard/finops"} {
		r := env.Do(t, http.MethodGet, path, token, nil)
		mustStatus(t, r, http.StatusOK)
		body := string(r.Body)
		if !strings.Contains(body, `"currency":"GBP"`) || !strings.Contains(body, `"rate":0.8421`) ||
			!strings.Contains(body, `"rate_date":"`+day.Format(time.DateOnly)+`"`) {
			t.Fatalf("%s in GBP: %s", path, body)
		}
	}
	r = env.Do(t, http.MethodGet, "/api/v1/dashboard/management", member, nil)
	if !strings.Contains(string(r.Body), `"llm_cost":{"amount":0,"currency":"GBP"}`) || !strings.Contains(string(r.Body), `"attainment_pct":50`) {
		t.Fatalf("management: %s", r.Body)
	}

	// Another workspace sees none of it.
	other := env.MustWorkspace(t, "govmetrics-other")
	r = env.Do(t, http.MethodGet, "/api/v1/governance/metrics", env.MustSession(t, other, vigia.RoleAdmin), nil)
	g = governanceBody{}
	r.JSON(t, &g)
	if g.Coverage.Datasets != 0 || g.IssueFlow.Opened != 0 || g.SLA.AttainmentPct != nil {
		t.Fatalf("other workspace: %s", r.Body)
	}
}

// Stored text rendered at read time: an issue's title is kept as a message key with its
// parameters and read in the reader's language; a title without a known key stays as
// stored.
func TestIssueTitleRenderedInTheReadersLanguage(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "titles")
	member := env.MustSession(t, ws, vigia.RoleMember)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "pessoas")
	now := time.Now().UTC()
	keyed, plain := vigia.NewID(), vigia.NewID()
	for _, q := range []struct {
		id, title, key string
	}{{keyed, "Política de dados retenção violada em public.pessoas", "issue.policy_violation"}, {plain, "Título antigo", ""}} {
		if _, err := env.DB.Pool().Exec(context.Background(), `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title,
			title_key, title_params, created_at, updated_at) VALUES ($1, $2, $3, 'policy_violation', 'warning', 'open', $4, $5,
			'{"label":"retenção","dataset":"public.pessoas"}', $6, $6)`, q.id, ws, ds, q.title, q.key, now); err != nil {
			t.Fatal(err)
		}
	}
	title := func(id, lang string) string {
		t.Helper()
		r := env.Do(t, http.MethodGet, "/api/v1/issues/"+id, member, nil, "Accept-Language: "+lang)
		mustStatus(t, r, http.StatusOK)
		var out struct {
			Title string `json:"title"`
		}
		r.JSON(t, &out)
		return out.Title
	}
	if got := title(keyed, "en"); got != "Data policy retenção violated on public.pessoas" {
		t.Fatalf("en title %q", got)
	}
	if got := title(keyed, "es"); !strings.HasPrefix(got, "Política de datos") {
		t.Fatalf("es title %q", got)
	}
	if got := title(keyed, "pt"); !strings.HasPrefix(got, "Política de dados") {
		t.Fatalf("pt title %q", got)
	}
	if got := title(plain, "en"); got != "Título antigo" {
		t.Fatalf("unkeyed title %q", got)
	}
	for _, path := range []string{"/api/v1/issues", "/api/v1/datasets/" + ds} {
		r := env.Do(t, http.MethodGet, path, member, nil, "Accept-Language: en")
		mustStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.Body), "Data policy retenção violated on public.pessoas") || !strings.Contains(string(r.Body), "Título antigo") {
			t.Fatalf("%s in en: %s", path, r.Body)
		}
	}
}

// The knowledge graph's issue nodes carry the issue's title in the reader's language, as
// the issue reads do; an unkeyed issue keeps its stored text.
func TestKnowledgeGraphIssueTitlesInTheReadersLanguage(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "kgtitles")
	member := env.MustSession(t, ws, vigia.RoleMember)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "pg"), "public", "pessoas")
	now := time.Now().UTC()
	keyed, plain := vigia.NewID(), vigia.NewID()
	for _, q := range []struct {
		id, title, key string
	}{{keyed, "Política de dados retenção violada em public.pessoas", "issue.policy_violation"}, {plain, "Título antigo", ""}} {
		if _, err := env.DB.Pool().Exec(context.Background(), `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title,
			title_key, title_params, created_at, updated_at) VALUES ($1, $2, $3, 'policy_violation', 'warning', 'open', $4, $5,
			'{"label":"retenção","dataset":"public.pessoas"}', $6, $6)`, q.id, ws, ds, q.title, q.key, now); err != nil {
			t.Fatal(err)
		}
	}
	type node struct {
		ID, Kind, Name string
	}
	names := func(nodes []node) map[string]string {
		out := map[string]string{}
		for _, n := range nodes {
			if n.Kind == "issue" {
				out[n.ID] = n.Name
			}
		}
		return out
	}
	for _, c := range []struct{ lang, keyed string }{
		{"en", "Data policy retenção violated on public.pessoas"},
		{"pt", "Política de dados retenção violada em public.pessoas"},
	} {
		for _, path := range []string{"/api/v1/knowledge/graph", "/api/v1/knowledge/graph?focus=dataset:" + ds} {
			r := env.Do(t, http.MethodGet, path, member, nil, "Accept-Language: "+c.lang)
			mustStatus(t, r, http.StatusOK)
			var g struct{ Nodes []node }
			r.JSON(t, &g)
			got := names(g.Nodes)
			if len(got) != 2 || got["issue:"+keyed] != c.keyed || got["issue:"+plain] != "Título antigo" {
				t.Fatalf("%s in %s: issue nodes %v", path, c.lang, got)
			}
		}
		r := env.Do(t, http.MethodPost, "/graphql", member, map[string]any{"query": `{ knowledgeGraph { nodes { id kind name } } }`},
			"Accept-Language: "+c.lang)
		mustStatus(t, r, http.StatusOK)
		var out struct {
			Data struct{ KnowledgeGraph struct{ Nodes []node } }
		}
		r.JSON(t, &out)
		if got := names(out.Data.KnowledgeGraph.Nodes); got["issue:"+keyed] != c.keyed || got["issue:"+plain] != "Título antigo" {
			t.Fatalf("GraphQL in %s: issue nodes %v", c.lang, got)
		}
	}
}
