package graph

import (
	"encoding/json"

	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/rule"
)

func toRule(r rule.Rule) model.Rule {
	p := r.Params
	out := model.Rule{ID: r.ID, DatasetID: r.DatasetID, DatasetName: r.DatasetName(), RuleType: r.Type, Name: r.Name, Severity: r.Severity,
		Active: r.Active, CurrentIssueID: r.CurrentIssueID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		RefDatasetRestricted: r.RefRestricted, Params: &model.RuleParams{Columns: p.Columns, Values: p.Values, Min: p.Min, Max: p.Max, MaxOrphanPct: p.MaxOrphanPct,
			MaxAgeHours: p.MaxAgeHours}}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	num := func(n *int64) *float64 {
		if n == nil {
			return nil
		}
		f := float64(*n)
		return &f
	}
	out.Params.Column, out.Params.Pattern, out.Params.RefDatasetID = str(p.Column), str(p.Pattern), str(p.RefDatasetID)
	out.Params.RefColumn, out.Params.SQL = str(p.RefColumn), str(p.SQL)
	out.Params.MinRows, out.Params.MaxFailing = num(p.MinRows), num(p.MaxFailing)
	if r.RefDataset != nil {
		name := r.RefDataset.Name()
		out.RefDatasetName = &name
	}
	if lr := r.LastResult; lr != nil {
		out.LastResult = &model.RuleResult{Status: lr.Status, EvaluatedAt: lr.EvaluatedAt, Observed: lr.Observed,
			Threshold: lr.Threshold}
		if lr.ScanID != "" {
			// A dbt test's result has no scan: null, never an empty id.
			scanID := lr.ScanID
			out.LastResult.ScanID = &scanID
		}
		if lr.Reason != nil {
			params := lr.Reason.Params
			if params == nil {
				params = map[string]any{}
			}
			b, err := json.Marshal(params)
			if err != nil {
				b = []byte("{}")
			}
			out.LastResult.Reason = &model.RuleReason{Code: lr.Reason.Code, Message: lr.Reason.Message, Params: string(b)}
		}
	}
	return out
}

// ruleParams turns GraphQL parameters into the raw parameters the service checks: only
// the fields sent.
func ruleParams(in *model.RuleParamsInput) rule.ParamsIn {
	if in == nil {
		return rule.ParamsIn{}
	}
	return rule.ParamsIn{Column: in.Column, Columns: in.Columns, Values: in.Values, Pattern: in.Pattern, Min: in.Min, Max: in.Max,
		RefDatasetID: in.RefDatasetID, RefColumn: in.RefColumn, MaxOrphanPct: in.MaxOrphanPct, MaxAgeHours: in.MaxAgeHours,
		MinRows: in.MinRows, SQL: in.SQL, MaxFailing: in.MaxFailing}
}

func toIssue(is issue.Issue, withHistory bool) model.Issue {
	out := model.Issue{ID: is.ID, DatasetID: is.DatasetID, DatasetName: is.DatasetName, Title: is.Title, Type: is.Type, Subtype: is.Subtype,
		Severity: is.Severity, Status: is.Status, ResolutionReason: is.ResolutionReason, SLABreachedAt: is.SLABreachedAt,
		AssigneeTeamID: is.AssigneeTeamID, AssigneeTeamName: is.AssigneeTeamName, RuleID: is.RuleID,
		AwaitingVerification: is.AwaitingVerification(), Detections: is.Detections, CreatedAt: is.CreatedAt, UpdatedAt: is.UpdatedAt,
		AcknowledgedAt: is.AcknowledgedAt, ResolvedAt: is.ResolvedAt}
	if withHistory {
		out.History = toHistory(is.History)
	}
	return out
}

func toHistory(hs []issue.HistoryEntry) []model.IssueHistoryEntry {
	out := make([]model.IssueHistoryEntry, 0, len(hs))
	for _, h := range hs {
		out = append(out, model.IssueHistoryEntry{FromStatus: h.FromStatus, ToStatus: h.ToStatus, Event: h.Event, Origin: h.Origin,
			Note: h.Note, At: h.At})
	}
	return out
}

func noteOf(note *string) string {
	if note == nil {
		return ""
	}
	return *note
}
