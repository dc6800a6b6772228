package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/vigia-data/vigia/plan"
)

// parityTableLast maps the last GET operations issue 23 gave a GraphQL field: the
// AI-system register, the compliance verticals, a connection's blackout windows and the
// finops dashboard.
func parityTableLast() map[string]parity {
	art10 := `datasetId datasetName connectionId connectionName sourceKind dataCountry upstreamCount domains score verdict rules
		rulesPassed rulesFailed openIssues piiColumns biasRelevantColumns gaps`
	system := `id name registered origins intendedPurpose provider riskCategory createdAt datasetCount hiddenDatasets gaps gapCounts`
	row := `month dimension workspaceId workspaceName entityId entityName scans datasets reports profileBytes llmTokens llmTokensByok
		llmCostUsd llmCostEur llmCost { amount currency } fx { base currency rate rateDate } currency`
	return map[string]parity{
		"listAISystems": {rest: "/api/v1/compliance/ai-systems", query: `{ aiSystems { items { ` + system + ` } total } }`,
			at: "aiSystems.items", total: "aiSystems.total"},
		"getAISystem": {rest: "/api/v1/compliance/ai-systems/{id}", sample: "aisystem",
			query: `query($id: ID!){ aiSystem(id: $id){ ` + system + ` datasets { ` + art10 + ` uses origins via } } }`, at: "aiSystem"},
		"listComplianceVerticals": {rest: "/api/v1/compliance/verticals",
			query: `{ complianceVerticals { items { key name description requirements reportUrl } total } }`,
			at:    "complianceVerticals.items", total: "complianceVerticals.total"},
		"listConnectionBlackouts": {rest: "/api/v1/connections/{id}/blackouts", sample: "connection",
			query: `query($id: ID!){ connection(id: $id){ blackouts { items { startsAt endsAt note weekly { weekdays startTime endTime timezone } } total } } }`,
			at:    "connection.blackouts.items", total: "connection.blackouts.total"},
		"getFinopsDashboard": {rest: "/api/v1/dashboard/finops",
			query: `{ finopsDashboard { asOf currency fx { base currency rate rateDate } totals { ` + row + ` } months { ` + row + ` }
				domains { ` + row + ` } } }`, at: "finopsDashboard"},
	}
}

// addLastFixture adds what the last reads answer (the workspace is on the business plan):
// a registered AI system using two datasets, a domain consumer of kind ai_system (a
// system known through its consumers) and two blackout windows on the first connection.
func (f *parityFixture) addLastFixture(t *testing.T) {
	t.Helper()
	env := f.env
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/api/v1/compliance/ai-systems", map[string]any{"name": "Previsão de procura", "risk_category": "limited",
			"intended_purpose": "Prever encomendas", "provider": "Equipa de dados", "datasets": []any{
				map[string]any{"dataset_id": f.ids["dataset"][0], "use": "training"},
				map[string]any{"dataset_id": f.ids["dataset"][1], "use": "validation"}}}},
		{http.MethodPost, "/api/v1/domains/" + f.ids["domain"][0] + "/consumers", map[string]any{"name": "Assistente de vendas",
			"kind": "ai_system"}},
		{http.MethodPut, "/api/v1/connections/" + f.ids["connection"][0] + "/blackouts", map[string]any{"windows": []any{
			map[string]any{"starts_at": "2026-12-30T22:00:00Z", "ends_at": "2027-01-02T06:00:00Z", "note": "fecho do ano"},
			map[string]any{"starts_at": "2026-11-30T20:00:00Z", "ends_at": "2026-12-01T04:00:00+01:00"},
			map[string]any{"weekly": map[string]any{"weekdays": []string{"sat", "sun"}, "start_time": "22:00", "end_time": "02:00",
				"timezone": "Europe/Lisbon"}, "note": "lote de fim de semana"}}}},
	} {
		if r := env.Do(t, w.method, w.path, f.admin, w.body); r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", w.method, w.path, r.Status, r.Body)
		}
	}
	var systems []struct{ ID string }
	env.Do(t, http.MethodGet, "/api/v1/compliance/ai-systems", f.tok, nil).JSON(t, &systems)
	if len(systems) != 2 {
		t.Fatalf("the register: %v", systems)
	}
	for _, s := range systems {
		f.ids["aisystem"] = append(f.ids["aisystem"], s.ID)
	}
}

// checkLastGates asks the last reads as another workspace (the fixture's ids are
// not_found, as REST answers 404) and then on the team plan (the register is
// plan_limit, as REST answers 402): GraphQL carries REST's code each time.
func checkLastGates(t *testing.T, f *parityFixture) {
	env := f.env
	ws := env.MustWorkspace(t, "parity-last")
	tok := env.MustToken(t, ws)
	system, conn := f.ids["aisystem"][0], f.ids["connection"][0]
	type gate struct{ rest, query, id, code string }
	for _, step := range []struct {
		plan  plan.Plan
		gates []gate
	}{
		{plan.Business, []gate{
			{"/api/v1/compliance/ai-systems/" + system, `query($id: ID!){ aiSystem(id: $id){ id } }`, system, "not_found"},
			{"/api/v1/connections/" + conn + "/blackouts", `query($id: ID!){ connection(id: $id){ blackouts { total } } }`, conn,
				"not_found"},
		}},
		{plan.Team, []gate{
			{"/api/v1/compliance/ai-systems", `{ aiSystems { total } }`, "", "plan_limit"},
			{"/api/v1/compliance/ai-systems/" + system, `query($id: ID!){ aiSystem(id: $id){ id } }`, system, "plan_limit"},
		}},
	} {
		if _, err := env.App.Identity.SetPlan(context.Background(), ws, step.plan); err != nil {
			t.Fatal(err)
		}
		for _, g := range step.gates {
			rr := env.Do(t, http.MethodGet, g.rest, tok, nil)
			var restErr struct{ Code string }
			rr.JSON(t, &restErr)
			if restErr.Code != g.code {
				t.Errorf("REST %s on %s: %d %s, want %s", g.rest, step.plan, rr.Status, rr.Body, g.code)
				continue
			}
			var vars map[string]any
			if g.id != "" {
				vars = map[string]any{"id": g.id}
			}
			out := env.GraphQL(t, tok, g.query, vars)
			errs, _ := out["errors"].([]any)
			if len(errs) == 0 {
				t.Errorf("GraphQL %s on %s answered: %v", g.query, step.plan, out)
				continue
			}
			ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
			if ext["code"] != g.code {
				t.Errorf("GraphQL %s on %s: code %v, REST %s", g.query, step.plan, ext["code"], g.code)
			}
		}
	}
}
