package graph

import (
	"github.com/vigia-data/vigia/dashboard"
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
