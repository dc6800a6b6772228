package plan_test

import (
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/plan"
)

func TestEntitlements(t *testing.T) {
	if err := plan.Require(plan.Business, plan.ComplianceDossiers); err != nil {
		t.Fatalf("business has the dossiers: %v", err)
	}
	e := vigia.AsError(plan.Require(plan.Team, plan.ComplianceDossiers))
	if e.Kind != vigia.KindPaymentRequired || e.Code != plan.CodePlanLimit || e.Plan == nil ||
		e.Plan.Plan != "team" || e.Plan.Required != "business" || e.Plan.Limit != 0 {
		t.Fatalf("team asking for a dossier: %+v %+v", e, e.Plan)
	}
	if plan.Require(plan.Team, plan.APITokens) != nil || plan.Require(plan.Free, plan.APITokens) == nil {
		t.Fatal("API tokens need team")
	}
	if err := plan.Within(plan.Free, plan.ScansPerDay, plan.Free.Limit(plan.ScansPerDay)-1); err != nil {
		t.Fatalf("below the quota: %v", err)
	}
	q := vigia.AsError(plan.Within(plan.Free, plan.ScansPerDay, plan.Free.Limit(plan.ScansPerDay)))
	if q.Code != plan.CodeOrgQuota || q.Plan.Limit != plan.Free.Limit(plan.ScansPerDay) || q.Plan.Quota != "scans_per_day" {
		t.Fatalf("at the quota: %+v", q.Plan)
	}
	if plan.Within(plan.Business, plan.Datasets, 1_000_000) != nil || !plan.Default.Valid() || plan.Plan("gold").Valid() {
		t.Fatal("business is unlimited and the default")
	}
}
