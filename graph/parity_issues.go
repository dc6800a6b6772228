package graph

import (
	"encoding/json"

	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/lineage"
)

// jsonOf is v as JSON text ({} when it cannot be written).
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "{}"
	}
	return string(b)
}

func toIssueImpact(v lineage.ImpactView) *model.IssueImpact {
	out := &model.IssueImpact{ImpactScope: v.ImpactScope, ImpactColumns: nonNil(v.ImpactColumns), ImpactNote: v.ImpactNote,
		ImpactTree: make([]model.ImpactNode, 0, len(v.ImpactTree)), DownstreamCount: v.DownstreamCount,
		DownstreamColumnCount: v.DownstreamColumnCount, ExposuresCount: v.ExposuresCount,
		Exposures: make([]model.IncidentExposure, 0, len(v.Exposures)), ReachTotal: v.ReachTotal, Truncated: v.Truncated}
	for _, n := range v.ImpactTree {
		out.ImpactTree = append(out.ImpactTree, model.ImpactNode{Ref: n.Ref, ID: optString(n.ID), Name: optString(n.Name),
			Restricted: n.Restricted, Hops: n.Hops, Parent: optString(n.Parent), Impact: n.Impact, ViaColumns: nonNil(n.ViaColumns)})
	}
	for _, e := range v.Exposures {
		out.Exposures = append(out.Exposures, model.IncidentExposure{Node: e.Node, ID: e.ID, Name: e.Name, Type: e.Type})
	}
	return out
}

func toIssueExplanation(e issue.Explanation) *model.IssueExplanation {
	out := &model.IssueExplanation{IssueID: e.Issue.ID, Type: e.Issue.Type, Kind: e.Kind, Title: e.Issue.Title, Metric: e.Metric,
		Column: e.Column, Observed: e.Observed, Median: e.Median, Mad: e.MAD, Z: e.Z, Direction: e.Direction,
		HistorySize: e.HistorySize, Threshold: e.Threshold, CurrentThreshold: e.CurrentThreshold, TunedThreshold: e.TunedThreshold,
		TunedThresholdLabel: e.TunedThresholdLabel, NextOnIgnore: e.NextOnIgnore, IgnoredAsExpected: e.IgnoredAsExpected,
		Resolved: e.Resolved, Silenced: e.Silenced, Details: jsonOf(e.Details),
		SLA: &model.IssueExplanationSLA{BreachedAt: e.Issue.SLABreachedAt}}
	if e.Details == nil {
		out.Details = "{}"
	}
	if rt := e.RetuneAwaitingApproval; rt != nil {
		out.RetuneAwaitingApproval = &model.RetuneRequest{ID: rt.ID, Action: rt.Action, FromThreshold: rt.FromThreshold,
			IssueID: rt.IssueID, RequestedBy: rt.RequestedBy, RequestedAt: rt.RequestedAt}
	}
	if e.Issue.RuleID != nil {
		card := &model.IssueExplanationRule{RuleID: *e.Issue.RuleID, RuleType: e.Issue.Subtype}
		if v, ok := e.Details["observed"].(float64); ok {
			card.Observed = &v
		}
		if v, ok := e.Details["threshold"].(float64); ok {
			card.Threshold = &v
		}
		out.Rule = card
	}
	return out
}

func toIssueBoard(b issue.Board) *model.IssueBoard {
	out := &model.IssueBoard{Total: b.Total, Columns: make([]model.IssueBoardColumn, 0, len(b.Columns)),
		TeamCells: make([]model.IssueBoardTeamCell, 0, len(b.TeamCells))}
	for _, c := range b.Columns {
		out.Columns = append(out.Columns, model.IssueBoardColumn{Status: c.Status, Count: c.Count, BySeverity: jsonOf(c.BySeverity)})
	}
	for _, c := range b.TeamCells {
		out.TeamCells = append(out.TeamCells, model.IssueBoardTeamCell{Status: c.Status, TeamID: c.TeamID, TeamName: c.TeamName, Count: c.Count})
	}
	return out
}

func toSLATargets(t issue.Targets) *model.SLATargets {
	return &model.SLATargets{CriticalHours: t.CriticalHours, WarningHours: t.WarningHours, Default: t.Default}
}

func toSLAPercentiles(p issue.Percentiles) *model.SLAPercentiles {
	return &model.SLAPercentiles{MedianHours: p.Median, P90Hours: p.P90, Samples: p.Samples}
}

func toSLAGroup(g issue.SLAGroup) model.SLAGroup {
	return model.SLAGroup{Key: g.Key, Name: g.Name, Opened: g.Opened, Closed: g.Closed, Unresolved: g.Unresolved,
		Breached: g.Breached, InScope: g.InScope, Mtta: toSLAPercentiles(g.MTTA), Mttr: toSLAPercentiles(g.MTTR),
		Ageing: &model.SLAAgeing{Lt1d: g.Ageing.LT1D, D1to3: g.Ageing.D1To3, D3to7: g.Ageing.D3To7, D7to30: g.Ageing.D7To30,
			Gt30d: g.Ageing.GT30D}}
}

func toSLAReport(rep issue.SLAReport) *model.SLAReport {
	total := toSLAGroup(rep.Total)
	out := &model.SLAReport{Period: rep.Period, GroupBy: rep.GroupBy, Timezone: rep.Timezone, From: rep.From, To: rep.To,
		AsOf: rep.AsOf, Targets: toSLATargets(rep.Targets), Groups: make([]model.SLAGroup, 0, len(rep.Groups)), Total: &total}
	for _, g := range rep.Groups {
		out.Groups = append(out.Groups, toSLAGroup(g))
	}
	return out
}
