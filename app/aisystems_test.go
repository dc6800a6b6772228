package app_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/compliance"
	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/plan"
	"github.com/vigia-data/vigia/scan"
)

type aiSystemBody struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Registered     bool     `json:"registered"`
	Origins        []string `json:"origins"`
	RiskCategory   string   `json:"risk_category"`
	DatasetCount   int      `json:"dataset_count"`
	HiddenDatasets int      `json:"hidden_datasets"`
	Gaps           []string `json:"gaps"`
	Datasets       []struct {
		DatasetID   string   `json:"dataset_id"`
		DatasetName string   `json:"dataset_name"`
		Uses        []string `json:"uses"`
		Origins     []string `json:"origins"`
		PIIColumns  []string `json:"pii_columns"`
		BiasColumns []string `json:"bias_relevant_columns"`
	} `json:"datasets"`
}

// healthSource is a Portuguese health source: utentes with NIFs (some with a wrong check
// digit), e-mails, birth dates and sex; consultas without personal data.
func healthSource(t *testing.T) (*sourceDB, int) {
	t.Helper()
	src := newSource(t, "postgres", "")
	src.exec(t, `CREATE TABLE utentes (id integer PRIMARY KEY, nif text NOT NULL, email text, data_nascimento date, sexo text)`)
	r := rand.New(rand.NewPCG(17, 17))
	invalid := 0
	for i := 1; i <= 200; i++ {
		nif := demo.ValidNIF(r)
		if i%10 == 0 {
			nif = demo.InvalidNIF(r)
			invalid++
		}
		src.exec(t, `INSERT INTO utentes VALUES ($1, $2, $3, date '1950-01-01' + $1 * 70, $4)`, i, nif, fmt.Sprintf("utente%d@exemplo.pt", i), []string{"F", "M"}[i%2])
	}
	src.exec(t, `CREATE TABLE consultas (id integer PRIMARY KEY, especialidade text NOT NULL, realizada_em timestamptz NOT NULL)`)
	src.exec(t, `INSERT INTO consultas SELECT g, (ARRAY['cardiologia', 'pediatria', 'ortopedia'])[1 + g % 3], now() - g * interval '1 hour' FROM generate_series(1, 300) g`)
	return src, invalid
}

// The AI-system register: a registered system, a domain consumer of kind ai_system of the
// same name (it joins the registered one) and an agent reading for RAG (a system known
// through its reads); each with the Article 10 facts of its datasets; another workspace
// never sees them; the plan gates it.
func TestAISystemRegisterFromRegistrationsAndConsumers(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "aiact")
	admin, member := env.MustSession(t, ws, vigia.RoleAdmin), env.MustSession(t, ws, vigia.RoleMember)
	token := env.MustToken(t, ws)
	ctx := app.AsAdmin(context.Background(), ws, "test")
	src, _ := healthSource(t)
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "hospital", "kind": "postgres", "dsn": src.dsn})
	mustStatus(t, r, http.StatusCreated)
	var conn map[string]any
	r.JSON(t, &conn)
	MustRunWorkers(t, env)
	r = env.Do(t, http.MethodPost, "/api/v1/scans", admin, map[string]any{"connection_id": conn["id"]})
	mustStatus(t, r, http.StatusAccepted)
	var sc map[string]any
	r.JSON(t, &sc)
	if got, err := env.App.WaitScan(ctx, sc["id"].(string), nil); err != nil || got.Status != scan.StatusSucceeded {
		t.Fatalf("scan: %v %+v", err, got)
	}
	ids := map[string]string{}
	for _, table := range []string{"utentes", "consultas"} {
		var id string
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT id::text FROM datasets WHERE workspace_id = $1 AND table_name = $2`, ws, table).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[table] = id
	}
	r = env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": "Clínico", "dataset_ids": []string{ids["utentes"]}})
	mustStatus(t, r, http.StatusCreated)
	var dom map[string]any
	r.JSON(t, &dom)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/domains/"+dom["id"].(string)+"/consumers", admin,
		map[string]any{"name": "Triagem", "kind": "ai_system"}), http.StatusCreated)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/trust/consumptions", token, map[string]any{
		"consumer": map[string]any{"name": "assistente-rag", "kind": "agent"}, "datasets": []string{ids["consultas"]}, "purpose": "rag"}), http.StatusCreated)

	// Registration: a member session; tokens are read-only; a foreign dataset is 404.
	other := env.MustWorkspace(t, "aiact-other")
	otherAdmin := env.MustSession(t, other, vigia.RoleAdmin)
	otherDS := env.MustDataset(t, other, env.MustConnection(t, other, "pg"), "public", "alheia")
	body := map[string]any{"name": "triagem", "risk_category": "high", "intended_purpose": "Triagem de urgência",
		"datasets": []any{map[string]any{"dataset_id": ids["consultas"], "use": "training"}}}
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/compliance/ai-systems", token, body), http.StatusForbidden)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/compliance/ai-systems", member, map[string]any{"name": "x",
		"datasets": []any{map[string]any{"dataset_id": otherDS, "use": "training"}}}), http.StatusNotFound)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/compliance/ai-systems", member, map[string]any{"name": "x", "risk_category": "extreme"}),
		http.StatusUnprocessableEntity)
	r = env.Do(t, http.MethodPost, "/api/v1/compliance/ai-systems", member, body)
	mustStatus(t, r, http.StatusCreated)
	var created aiSystemBody
	r.JSON(t, &created)
	r = env.Do(t, http.MethodPost, "/api/v1/compliance/ai-systems", member, map[string]any{"name": "TRIAGEM"})
	mustStatus(t, r, http.StatusConflict)
	if !strings.Contains(string(r.Body), compliance.CodeSystemExists) {
		t.Fatalf("409 code: %s", r.Body)
	}

	r = env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems", token, nil)
	mustStatus(t, r, http.StatusOK)
	var list []aiSystemBody
	r.JSON(t, &list)
	if len(list) != 2 || r.Header.Get("X-Total-Count") != "2" || list[0].Name != "assistente-rag" || list[1].ID != created.ID {
		t.Fatalf("register: %s", r.Body)
	}
	rag, triagem := list[0], list[1]
	if rag.Registered || !slices.Equal(rag.Origins, []string{"consumption"}) || rag.DatasetCount != 1 ||
		!slices.Contains(rag.Gaps, "risk_not_classified") || !slices.Contains(rag.Gaps, "no_intended_purpose") {
		t.Fatalf("derived system: %+v", rag)
	}
	if !triagem.Registered || !slices.Equal(triagem.Origins, []string{"domain_consumer", "registered"}) || triagem.DatasetCount != 2 ||
		triagem.RiskCategory != "high" || slices.Contains(triagem.Gaps, "risk_not_classified") {
		t.Fatalf("registered system fed by its domain consumer: %+v", triagem)
	}

	// The detail: each dataset with its uses and Article 10 facts.
	r = env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems/"+triagem.ID, token, nil)
	mustStatus(t, r, http.StatusOK)
	var detail aiSystemBody
	r.JSON(t, &detail)
	if len(detail.Datasets) != 2 {
		t.Fatalf("detail: %s", r.Body)
	}
	for _, d := range detail.Datasets {
		switch d.DatasetID {
		case ids["consultas"]:
			if !slices.Equal(d.Uses, []string{"training"}) || len(d.PIIColumns) != 0 {
				t.Fatalf("consultas: %s", r.Body)
			}
		case ids["utentes"]:
			if !slices.Equal(d.Uses, []string{"input"}) || !slices.Contains(d.PIIColumns, "nif") || !slices.Contains(d.PIIColumns, "email") ||
				!slices.Equal(d.BiasColumns, []string{"data_nascimento", "sexo"}) {
				t.Fatalf("utentes: %s", r.Body)
			}
		default:
			t.Fatalf("unexpected dataset: %s", r.Body)
		}
	}
	r = env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems/"+rag.ID, admin, nil)
	mustStatus(t, r, http.StatusOK)
	r.JSON(t, &detail)
	if len(detail.Datasets) != 1 || !slices.Equal(detail.Datasets[0].Uses, []string{"retrieval"}) {
		t.Fatalf("rag detail: %s", r.Body)
	}

	// Another workspace: both ids are 404 like an unknown one; its register is empty.
	unknown := env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems/"+vigia.NewID(), otherAdmin, nil)
	mustStatus(t, unknown, http.StatusNotFound)
	for _, id := range []string{triagem.ID, rag.ID} {
		r := env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems/"+id, otherAdmin, nil)
		mustStatus(t, r, http.StatusNotFound)
		if strings.Replace(string(r.Body), r.Header.Get("X-Request-ID"), "", 1) != strings.Replace(string(unknown.Body), unknown.Header.Get("X-Request-ID"), "", 1) {
			t.Fatalf("foreign 404 differs: %s", r.Body)
		}
	}
	mustStatus(t, env.Do(t, http.MethodDelete, "/api/v1/compliance/ai-systems/"+triagem.ID, otherAdmin, nil), http.StatusNotFound)
	r = env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems", otherAdmin, nil)
	mustStatus(t, r, http.StatusOK)
	if r.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("foreign register: %s", r.Body)
	}

	// Deleting the registration leaves the system its domain consumer still feeds.
	mustStatus(t, env.Do(t, http.MethodDelete, "/api/v1/compliance/ai-systems/"+triagem.ID, member, nil), http.StatusForbidden)
	mustStatus(t, env.Do(t, http.MethodDelete, "/api/v1/compliance/ai-systems/"+triagem.ID, admin, nil), http.StatusNoContent)
	r = env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems", token, nil)
	list = nil
	r.JSON(t, &list)
	if len(list) != 2 || list[1].Registered || list[1].Name != "Triagem" || list[1].DatasetCount != 1 || list[1].ID != compliance.SystemID(ws, "Triagem") {
		t.Fatalf("after delete: %s", r.Body)
	}

	// The plan: team answers 402 plan_limit.
	if _, err := env.App.Identity.SetPlan(context.Background(), ws, plan.Team); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/compliance/ai-systems", "/api/v1/compliance/ai-systems/" + rag.ID, "/api/v1/compliance/verticals/saude_pt/report.md"} {
		r := env.Do(t, http.MethodGet, path, token, nil)
		mustStatus(t, r, http.StatusPaymentRequired)
		if !strings.Contains(string(r.Body), `"plan_limit"`) || !strings.Contains(string(r.Body), `"plan":"team"`) {
			t.Fatalf("%s on team: %s", path, r.Body)
		}
	}
}

// The saude_pt vertical: requirements judged on a scanned health source; the NIF
// evidence matches the source's own count; a retention policy turns SPT-02 from Em falta
// to Coberto.
func TestVerticalSaudePTReport(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "saude")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	token := env.MustToken(t, ws)
	ctx := app.AsAdmin(context.Background(), ws, "test")
	src, invalid := healthSource(t)
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "hospital", "kind": "postgres", "dsn": src.dsn})
	mustStatus(t, r, http.StatusCreated)
	var conn map[string]any
	r.JSON(t, &conn)
	MustRunWorkers(t, env)
	r = env.Do(t, http.MethodPost, "/api/v1/scans", admin, map[string]any{"connection_id": conn["id"]})
	mustStatus(t, r, http.StatusAccepted)
	var sc map[string]any
	r.JSON(t, &sc)
	if got, err := env.App.WaitScan(ctx, sc["id"].(string), nil); err != nil || got.Status != scan.StatusSucceeded {
		t.Fatalf("scan: %v %+v", err, got)
	}

	r = env.Do(t, http.MethodGet, "/api/v1/compliance/verticals", token, nil)
	mustStatus(t, r, http.StatusOK)
	if r.Header.Get("X-Total-Count") != "1" || !strings.Contains(string(r.Body), `"key":"saude_pt"`) ||
		!strings.Contains(string(r.Body), `"report_url":"/api/v1/compliance/verticals/saude_pt/report.md"`) {
		t.Fatalf("verticals: %s", r.Body)
	}
	mustStatus(t, env.Do(t, http.MethodGet, "/api/v1/compliance/verticals/saude_xx/report.md", token, nil), http.StatusNotFound)

	report := func() string {
		t.Helper()
		r := env.Do(t, http.MethodGet, "/api/v1/compliance/verticals/saude_pt/report.md", token, nil)
		mustStatus(t, r, http.StatusOK)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/markdown") {
			t.Fatalf("content type %q", r.Header.Get("Content-Type"))
		}
		return string(r.Body)
	}
	status := func(md, id string) string {
		t.Helper()
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| "+id+" ") {
				cells := strings.Split(strings.Trim(line, "| "), " | ")
				return cells[len(cells)-1]
			}
		}
		t.Fatalf("no row %s in:\n%s", id, md)
		return ""
	}
	md := report()
	// The source's own answer: how many nif values have the shape, how many are wrong.
	shaped := src.int(t, `SELECT count(*) FROM utentes WHERE nif ~ '^[0-9]{9}$'`)
	wantNIF := fmt.Sprintf("utentes.nif: %d de %d valores amostrados com dígito de controlo válido", shaped-int64(invalid), shaped)
	if !strings.Contains(md, wantNIF) {
		t.Fatalf("NIF evidence %q missing:\n%s", wantNIF, md)
	}
	for id, want := range map[string]string{
		"SPT-01": compliance.StatusCovered,       // both datasets profiled
		"SPT-02": compliance.StatusMissing,       // no retention policy yet
		"SPT-03": compliance.StatusMissing,       // NIF measured but no rule on utentes
		"SPT-04": compliance.StatusMissing,       // no rules at all
		"SPT-05": compliance.StatusMissing,       // no lineage
		"SPT-06": compliance.StatusMissing,       // personal data in no restricted domain
		"SPT-07": compliance.StatusCovered,       // PT, the workspace default
		"SPT-08": compliance.StatusMissing,       // no domain
		"SPT-09": compliance.StatusCovered,       // just scanned
		"SPT-10": compliance.StatusNotApplicable, // legal basis is no fact of the data
	} {
		if got := status(md, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if !strings.Contains(md, "# Relatório de conformidade — Saúde (Portugal)") || !strings.Contains(md, "ai-generated: false") ||
		!strings.Contains(md, "## Evidência") {
		t.Fatalf("report shape:\n%s", md)
	}
	if strings.Contains(md, "@exemplo.pt") {
		t.Fatalf("a source value in the report:\n%s", md)
	}
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/data-policy", admin,
		map[string]any{"rules": []any{map[string]any{"rule": "pii_retention_max_age", "max_age_days": 365}}}), http.StatusOK)
	md = report()
	if status(md, "SPT-02") != compliance.StatusCovered || !strings.Contains(md, "máximo 365 dias") {
		t.Fatalf("retention with a policy:\n%s", md)
	}
}
