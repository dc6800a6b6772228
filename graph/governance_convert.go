package graph

import (
	"time"

	"github.com/vigia-data/vigia/dashboard"
	"github.com/vigia-data/vigia/finops"
	"github.com/vigia-data/vigia/graph/model"
)

func toGovernanceMetrics(g dashboard.Governance) *model.GovernanceMetrics {
	sh := func(x dashboard.Share) *model.GovernanceShare {
		return &model.GovernanceShare{Count: x.Count, Pct: x.Pct}
	}
	c := g.Coverage
	return &model.GovernanceMetrics{AsOf: g.AsOf, PeriodDays: g.PeriodDays,
		Coverage: &model.GovernanceCoverage{Datasets: c.Datasets, Profiled: sh(c.Profiled), WithOwner: sh(c.WithOwner), WithDomain: sh(c.WithDomain),
			WithRules: sh(c.WithRules), WithContract: sh(c.WithContract), SensitivityClassified: sh(c.SensitivityRev)},
		IssueFlow: &model.GovernanceIssueFlow{Opened: g.IssueFlow.Opened, Resolved: g.IssueFlow.Resolved, Ignored: g.IssueFlow.Ignored,
			OpenNow: g.IssueFlow.OpenNow, OpenCritical: g.IssueFlow.OpenCritical, OpenWarning: g.IssueFlow.OpenWarning,
			OpenSLABreached: g.IssueFlow.OpenBreached},
		SLA: &model.GovernanceSLA{ClosedInScope: g.SLA.ClosedInScope, Met: g.SLA.Met, Breached: g.SLA.Breached, AttainmentPct: g.SLA.AttainmentPct}}
}

func toChargebackRow(x finops.Row) model.ChargebackRow {
	money, fx := toMoney(x.Money)
	return model.ChargebackRow{Month: x.Month, Dimension: x.Dimension, WorkspaceID: x.WorkspaceID, WorkspaceName: x.WorkspaceName,
		EntityID: x.EntityID, EntityName: x.EntityName, Scans: x.Scans, Datasets: x.Datasets, Reports: x.Reports, ProfileBytes: x.ProfileBytes,
		LlmTokens: int(x.LLMTokens), LlmTokensByok: int(x.LLMTokensBYOK), LlmCostUsd: x.LLMCostUSD, LlmCostEur: x.LLMCostEUR,
		LlmCost: money, Fx: fx, Currency: x.Money.Currency}
}

func toMoney(m finops.Money) (*model.Money, *model.FXRate) {
	return &model.Money{Amount: m.Amount, Currency: m.Currency}, toFXRate(m.FX)
}

// toFXRate is the rate an amount was converted with; nil for EUR or without a rate.
func toFXRate(r *finops.Rate) *model.FXRate {
	if r == nil {
		return nil
	}
	return &model.FXRate{Base: finops.Base, Currency: r.Currency, Rate: r.PerEUR, RateDate: r.Date.UTC().Format(time.DateOnly)}
}

func toExecutiveDashboard(e dashboard.Executive) *model.ExecutiveDashboard {
	money, fx := toMoney(e.LLMCost)
	return &model.ExecutiveDashboard{AsOf: e.AsOf, PeriodDays: e.PeriodDays, Datasets: e.Coverage.Datasets, MeanScore: e.MeanScore,
		Verdicts:              &model.VerdictCounts{Pass: e.Verdicts["pass"], Warn: e.Verdicts["warn"], Fail: e.Verdicts["fail"], Unknown: e.Verdicts["unknown"]},
		OpenIncidentsCritical: e.OpenIncidentsCritical, OpenIncidentsWarning: e.OpenIncidentsWarning, SLAAttainmentPct: e.SLA.AttainmentPct,
		Reads: e.Reads, UntrustedReads: e.UntrustedReads, LlmCostEur: e.LLMCostEUR, LlmCost: money, Currency: e.LLMCost.Currency, Fx: fx}
}

func toManagementDashboard(e dashboard.Executive) *model.ManagementDashboard {
	g := toGovernanceMetrics(e.Governance)
	money, fx := toMoney(e.LLMCost)
	return &model.ManagementDashboard{AsOf: e.AsOf, PeriodDays: e.PeriodDays, Coverage: g.Coverage, IssueFlow: g.IssueFlow, SLA: g.SLA,
		LlmCostEur: e.LLMCostEUR, LlmCost: money, Currency: e.LLMCost.Currency, Fx: fx}
}
