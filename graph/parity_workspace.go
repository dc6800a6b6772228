package graph

import (
	"context"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/compliance"
	"github.com/vigia-data/vigia/datapolicy"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/knowledge"
	"github.com/vigia-data/vigia/report"
	"github.com/vigia-data/vigia/routine"
	"github.com/vigia-data/vigia/suggest"
)

func toAccount(ctx context.Context, a identity.Account) *model.Account {
	return &model.Account{ID: a.User.ID, Email: a.User.Email, Role: string(a.User.Role), WorkspaceID: a.Workspace.ID,
		WorkspaceName: a.Workspace.Name, Plan: string(a.Workspace.Plan), Locale: a.User.Locale, Timezone: a.User.Timezone,
		EffectiveLocale: a.EffectiveLocale(), EffectiveTimezone: a.EffectiveTimezone(), WorkspaceLocale: a.Workspace.Locale,
		WorkspaceTimezone: a.Workspace.Timezone, ResponseLanguage: vigia.Lang(ctx)}
}

func toWorkspaceSettings(w identity.Workspace) *model.WorkspaceSettings {
	return &model.WorkspaceSettings{Locale: w.Locale, EffectiveLocale: w.EffectiveLocale(), Timezone: w.Timezone,
		Currency: &model.WorkspaceCurrency{Currency: w.EffectiveCurrency(), Default: w.Currency == nil}}
}

// art10Article names the regulation article the dossier answers, as REST does.
const art10Article = "EU AI Act Article 10"

func toArt10Dossier(d compliance.Art10) *model.Art10Dossier {
	out := &model.Art10Dossier{Article: art10Article, GeneratedAt: d.GeneratedAt, GapCounts: jsonOf(d.GapCounts),
		Datasets: make([]model.Art10Dataset, 0, len(d.Datasets))}
	if d.GapCounts == nil {
		out.GapCounts = "{}"
	}
	for _, x := range d.Datasets {
		out.Datasets = append(out.Datasets, model.Art10Dataset{DatasetID: x.ID, DatasetName: x.Name, ConnectionID: x.ConnectionID,
			ConnectionName: x.ConnectionName, SourceKind: x.ConnectionKind, DataCountry: x.DataCountry, UpstreamCount: x.Upstream,
			Domains: nonNil(x.Domains), Score: x.Score, Verdict: x.Verdict, Rules: x.RuleCount, RulesPassed: x.Passed,
			RulesFailed: x.Failed, OpenIssues: x.OpenIssues, PiiColumns: nonNil(x.PIIColumns), BiasRelevantColumns: nonNil(x.BiasColumns),
			Gaps: nonNil(x.Gaps)})
	}
	return out
}

func toDataPolicy(p datapolicy.Policy) *model.DataPolicy {
	out := &model.DataPolicy{Scope: "workspace", DomainID: p.DomainID, Rules: make([]model.DataPolicyRule, 0, len(p.Rules)),
		UpdatedAt: p.UpdatedAt}
	if p.DomainID != nil {
		out.Scope = "domain"
	}
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, model.DataPolicyRule{Rule: r.Key, Enabled: r.Enabled, MaxAgeDays: r.MaxAgeDays,
			Severity: optString(r.Severity), Column: optString(r.Column)})
	}
	return out
}

func toKnowledgeEntry(e knowledge.Entry, search bool) model.KnowledgeEntry {
	out := model.KnowledgeEntry{ID: e.ID, Kind: e.Kind, Title: e.Title, Body: e.Body, Tags: nonNil(e.Tags),
		Links: make([]model.KnowledgeLink, 0, len(e.Links)), Outdated: e.Outdated, AuthorID: optString(e.AuthorID),
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	for _, l := range e.Links {
		out.Links = append(out.Links, model.KnowledgeLink{DatasetID: l.DatasetID, Column: optString(l.Column)})
	}
	if search {
		sc := e.Score
		out.Score = &sc
	}
	return out
}

func toReport(r report.Report) model.Report {
	return model.Report{ID: r.ID, Type: r.Type, Persona: r.Persona, SubjectID: r.SubjectID, Title: r.Title, Language: r.Language,
		ContentMd: r.ContentMD, Score: r.Facts.Score, AiGenerated: r.AIGenerated, AiModel: r.AIModel, GeneratedAt: r.GeneratedAt,
		RoutineID: r.RoutineID}
}

func toRoutine(r routine.Routine) model.Routine {
	out := model.Routine{Key: r.Key, Cadence: r.Cadence, LocalTime: time.Date(0, 1, 1, r.Hour, 0, 0, 0, time.UTC).Format("15:04"),
		Timezone: r.TimeZone, Enabled: r.Enabled, NextRunAt: r.NextRunAt, LastRunAt: r.LastRunAt, LastStatus: r.LastStatus,
		LastReportID: r.LastReportID}
	if r.Cadence == routine.Weekly {
		d := strings.ToLower(r.Weekday.String())
		out.Weekday = &d
	}
	if len(r.LastResult) > 0 && string(r.LastResult) != "null" {
		res := string(r.LastResult)
		out.LastResult = &res
	}
	return out
}

func optInt(n *int64) *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

// toSuggestion is a suggestion as REST answers it; a rehearsal's reason is worded in
// pt-PT, as there.
func toSuggestion(msgs *i18n.Catalog, sg suggest.Suggestion) model.Suggestion {
	out := model.Suggestion{ID: sg.ID, DatasetID: sg.DatasetID, DatasetName: sg.DatasetName, Category: sg.Category,
		Signature: sg.Signature, Column: optString(sg.Column), Status: sg.Status, Params: jsonText(sg.Params),
		CreatedAt: sg.CreatedAt, UpdatedAt: sg.UpdatedAt,
		Impact: &model.SuggestionImpact{EstimatedRows: optInt(sg.EstimatedRowsSample), EstimatedRowsSample: optInt(sg.EstimatedRowsSample),
			RowsSource: "sample", RuleID: sg.RuleID}}
	if h := sg.Rehearsal; h != nil {
		ro := &model.SuggestionRehearsal{Version: h.Version, Status: h.Status, AffectedRows: optInt(h.AffectedRows),
			TotalRows: optInt(h.TotalRows), Pct: h.Pct, RequestedAt: h.RequestedAt, Actor: h.Actor}
		if !h.RanAt.IsZero() {
			ran, d := h.RanAt, int(h.DurationMS)
			ro.RanAt, ro.DurationMs = &ran, &d
		}
		if h.Reason != nil {
			params := h.Reason.Params
			if params == nil {
				params = map[string]any{}
			}
			ro.Reason = &model.SuggestionReason{Code: h.Reason.Code, Params: jsonText(params),
				Message: msgs.Message(i18n.PT, "rehearsal."+h.Reason.Code, params)}
		}
		out.Rehearsal = ro
		if h.Status == suggest.RehearsalOK {
			out.Impact.EstimatedRows, out.Impact.RowsSource = optInt(h.AffectedRows), suggest.RowsSourceRehearsal
		}
	}
	return out
}
