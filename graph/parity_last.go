package graph

import (
	"github.com/vigia-data/vigia/blackout"
	"github.com/vigia-data/vigia/compliance"
	"github.com/vigia-data/vigia/finops"
	"github.com/vigia-data/vigia/graph/model"
)

// verticalReportPath is where REST serves a vertical's Markdown report (a file GraphQL
// points to, as REST's list does).
const verticalReportPath = "/api/v1/compliance/verticals/"

// toAISystem converts one system of the register; the datasets are in the detail only,
// as REST's.
func toAISystem(x compliance.AISystem, detail bool) *model.AISystem {
	out := &model.AISystem{ID: x.ID, Name: x.Name, Registered: x.Registered, Origins: nonNil(x.Origins),
		IntendedPurpose: x.IntendedPurpose, Provider: x.Provider, RiskCategory: x.RiskCategory, CreatedAt: x.CreatedAt,
		DatasetCount: len(x.Datasets), HiddenDatasets: x.HiddenDatasets, Gaps: nonNil(x.Gaps), GapCounts: jsonOf(x.GapCounts)}
	if !detail {
		return out
	}
	out.Datasets = make([]model.AISystemDataset, 0, len(x.Datasets))
	for _, d := range x.Datasets {
		out.Datasets = append(out.Datasets, model.AISystemDataset{DatasetID: d.ID, DatasetName: d.Name, ConnectionID: d.ConnectionID,
			ConnectionName: d.ConnectionName, SourceKind: d.ConnectionKind, DataCountry: d.DataCountry, UpstreamCount: d.Upstream,
			Domains: nonNil(d.Domains), Score: d.Score, Verdict: d.Verdict, Rules: d.RuleCount, RulesPassed: d.Passed,
			RulesFailed: d.Failed, OpenIssues: d.OpenIssues, PiiColumns: nonNil(d.PIIColumns), BiasRelevantColumns: nonNil(d.BiasColumns),
			Gaps: nonNil(d.Gaps), Uses: nonNil(d.Uses), Origins: nonNil(d.Origins), Via: nonNil(d.Via)})
	}
	return out
}

func toComplianceVertical(v compliance.Vertical) model.ComplianceVertical {
	return model.ComplianceVertical{Key: v.Key, Name: v.Name, Description: v.Description, Requirements: v.Requirements,
		ReportURL: verticalReportPath + v.Key + "/report.md"}
}

func toBlackoutWindow(w blackout.Window) model.BlackoutWindow {
	out := model.BlackoutWindow{StartsAt: w.StartsAt, EndsAt: w.EndsAt, Note: w.Note}
	if wk := w.Weekly; wk != nil {
		days := make([]string, 0, len(wk.Days))
		for _, d := range wk.Days {
			days = append(days, blackout.Weekdays[d])
		}
		out.Weekly = &model.BlackoutWeekly{Weekdays: days, StartTime: blackout.FormatClock(wk.Start), EndTime: blackout.FormatClock(wk.End),
			Timezone: wk.Timezone}
	}
	return out
}

func toFinopsDashboard(d finops.Dashboard) *model.FinopsDashboard {
	totals := toChargebackRow(d.Totals)
	out := &model.FinopsDashboard{AsOf: d.AsOf, Currency: d.Currency, Fx: toFXRate(d.FX), Totals: &totals,
		Months: make([]model.ChargebackRow, 0, len(d.Months)), Domains: make([]model.ChargebackRow, 0, len(d.Domains))}
	for _, x := range d.Months {
		out.Months = append(out.Months, toChargebackRow(x))
	}
	for _, x := range d.Domains {
		out.Domains = append(out.Domains, toChargebackRow(x))
	}
	return out
}
