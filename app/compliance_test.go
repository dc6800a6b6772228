package app_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/plan"
)

// Must-show 5: a team-plan workspace asking for the Art. 10 dossier gets 402 plan_limit
// with plan and limit; on business the dossier lists the visible datasets with their
// personal and bias-relevant columns and gaps; another workspace's datasets are absent.
func TestArt10DossierNeedsBusiness(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "art10")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	conn := env.MustConnection(t, ws, "pg")
	ds := env.MustDataset(t, ws, conn, "public", "utentes")
	if _, err := env.DB.Pool().Exec(ctx, `INSERT INTO dataset_columns (dataset_id, name, position, data_type, class, nullable, primary_key, profile)
		VALUES ($1, 'data_nascimento', 3, 'date', 'temporal', true, false, '{}'), ($1, 'sexo', 4, 'text', 'text', true, false, '{}')`, ds); err != nil {
		t.Fatal(err)
	}
	other := env.MustWorkspace(t, "art10-other")
	otherDS := env.MustDataset(t, other, env.MustConnection(t, other, "pg"), "public", "segredo")

	if _, err := env.App.Identity.SetPlan(ctx, ws, plan.Team); err != nil {
		t.Fatal(err)
	}
	r := env.Do(t, http.MethodGet, "/api/v1/compliance/art10", admin, nil, "Accept-Language: en")
	mustStatus(t, r, http.StatusPaymentRequired)
	var e planErrorBody
	r.JSON(t, &e)
	if e.Code != "plan_limit" || e.Plan != "team" || e.Limit == nil || *e.Limit != 0 || e.RequiredPlan != "business" || e.RequestID == "" {
		t.Fatalf("402 on team: %s", r.Body)
	}

	if _, err := env.App.Identity.SetPlan(ctx, ws, plan.Business); err != nil {
		t.Fatal(err)
	}
	r = env.Do(t, http.MethodGet, "/api/v1/compliance/art10", env.MustToken(t, ws), nil)
	mustStatus(t, r, http.StatusOK)
	var out struct {
		Datasets []struct {
			DatasetID   string   `json:"dataset_id"`
			PIIColumns  []string `json:"pii_columns"`
			BiasColumns []string `json:"bias_relevant_columns"`
			Gaps        []string `json:"gaps"`
			Rules       int      `json:"rules"`
			SourceKind  string   `json:"source_kind"`
		} `json:"datasets"`
		GapCounts map[string]int `json:"gap_counts"`
	}
	r.JSON(t, &out)
	if len(out.Datasets) != 1 || out.Datasets[0].DatasetID != ds || out.Datasets[0].DatasetID == otherDS {
		t.Fatalf("dossier datasets: %s", r.Body)
	}
	d := out.Datasets[0]
	if !slices.Equal(d.BiasColumns, []string{"data_nascimento", "sexo"}) || !slices.Contains(d.PIIColumns, "telefone") ||
		d.SourceKind != "postgres" || d.Rules != 0 {
		t.Fatalf("dossier dataset: %s", r.Body)
	}
	for _, g := range []string{"no_quality_rules", "not_profiled", "no_lineage", "no_domain", "personal_data"} {
		if !slices.Contains(d.Gaps, g) || out.GapCounts[g] != 1 {
			t.Fatalf("gap %s missing: %s", g, r.Body)
		}
	}
}
