package graph

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/ide"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
)

// maxLen refuses an argument longer than n characters as REST refuses the same query
// parameter: 422 validation_error, string_too_long, naming the argument only.
func maxLen(name string, v *string, n int) error {
	if v != nil && utf8.RuneCountInString(*v) > n {
		return vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": n}, name))
	}
	return nil
}

func toRulePack(p rule.Pack) *model.RulePack {
	out := &model.RulePack{Name: p.Name, Version: p.Version, Title: p.Title, Description: p.Description,
		Items: make([]model.RulePackItem, 0, len(p.Items))}
	for _, it := range p.Items {
		out.Items = append(out.Items, model.RulePackItem{Key: it.Key, SemanticType: it.SemanticType, RuleType: it.RuleType,
			Title: it.Title, Severity: it.Severity, Pattern: optString(it.Pattern), CheckDigit: optString(it.CheckDigit)})
	}
	return out
}

func toRulePackPlan(plan rule.PackPlan) *model.RulePackPlan {
	out := &model.RulePackPlan{Pack: plan.Pack.Name, Version: plan.Pack.Version, Datasets: plan.Datasets, New: plan.New,
		Existing: plan.Existing, Matches: make([]model.RulePackMatch, 0, len(plan.Matches))}
	for _, m := range plan.Matches {
		mo := model.RulePackMatch{DatasetID: m.Dataset.ID, DatasetName: m.Rule.DatasetName(), Column: m.Column,
			SemanticType: m.SemanticType, Item: m.Item.Key, RuleType: m.Rule.Type, RuleName: m.Rule.Name, Severity: m.Rule.Severity,
			Params: toRule(m.Rule).Params, Status: "new"}
		switch {
		case m.ExistingRuleID != "":
			mo.Status, mo.RuleID = "existing", optString(m.ExistingRuleID)
		case m.RuleID != "":
			mo.Status, mo.RuleID = "created", optString(m.RuleID)
		}
		out.Matches = append(out.Matches, mo)
	}
	return out
}

func toReconcileCheck(c datadiff.Check) model.ReconcileCheck {
	out := model.ReconcileCheck{ID: c.ID, Name: c.Name, DatasetID: c.DatasetID, OtherID: c.OtherID, GroupBy: nonNil(c.GroupBy),
		SumColumns: nonNil(c.SumColumns), TolerancePct: c.TolerancePct, CreatedAt: c.CreatedAt}
	if r := c.LastResult; r != nil {
		lr := &model.ReconcileCheckResult{Status: r.Status, Code: optString(r.Code), Groups: r.Groups, FailedGroups: r.FailedGroups,
			ScanID: r.ScanID, RunAt: r.RunAt, Differing: make([]model.ReconcileGroup, 0, len(r.Differing))}
		for _, d := range r.Differing {
			sums := d.Sums
			if sums == nil {
				sums = map[string][2]string{}
			}
			lr.Differing = append(lr.Differing, model.ReconcileGroup{Group: d.Group, Code: d.Code, CountA: int(d.CountA),
				CountB: int(d.CountB), Sums: jsonOf(sums)})
		}
		out.LastResult = lr
	}
	return out
}

func toOrchestratorRun(r orchestrator.Run) model.OrchestratorRun {
	out := model.OrchestratorRun{ID: r.ID, Orchestrator: r.Orchestrator, Pipeline: r.Pipeline, RunID: r.RunID, Status: r.Status,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, Inputs: nonNil(r.Inputs), Outputs: nonNil(r.Outputs),
		Unmatched: nonNil(r.Unmatched), Facets: "{}", ReceivedAt: r.ReceivedAt, UpdatedAt: r.UpdatedAt,
		NextScans: make([]model.OrchestratorNextScan, 0, len(r.NextScans))}
	for _, n := range r.NextScans {
		out.NextScans = append(out.NextScans, model.OrchestratorNextScan{DatasetID: n.DatasetID, ScanID: n.ScanID, ProfiledAt: n.ProfiledAt})
	}
	var facets map[string]any
	if len(r.Facets) > 0 && json.Unmarshal(r.Facets, &facets) == nil && facets != nil {
		out.Facets = jsonOf(facets)
	}
	return out
}

func toEditorColumn(c ide.Column) model.EditorColumn {
	out := model.EditorColumn{Name: c.Name, Position: c.Position, DataType: c.DataType, Class: c.Class, Nullable: c.Nullable,
		PrimaryKey: c.PrimaryKey, SemanticType: c.SemanticType, Sensitivity: c.Sensitivity, Profiled: c.Profiled,
		NullRate: c.NullRate, Distinct: c.Distinct, DistinctEstimated: c.DistinctEstim}
	if c.NullCount != nil {
		n := int(*c.NullCount)
		out.NullCount = &n
	}
	return out
}

func toEditorResolution(res ide.Resolution) *model.EditorResolution {
	d, b := res.Dataset, res.Brief
	out := &model.EditorResolution{DatasetID: d.ID, Name: d.Schema + "." + d.Table, Schema: d.Schema, Table: d.Table, Kind: d.Kind,
		ConnectionID: d.ConnectionID, ConnectionName: d.ConnectionName, Verdict: b.Decision.Verdict, Score: b.Score,
		Decision: b.Decision.Decision, Reasons: []string{}, Owner: b.Owner, PiiColumns: nonNil(b.PII),
		OtherMatches: make([]model.EditorMatch, 0, len(res.Others))}
	for _, rs := range b.Decision.Reasons {
		out.Reasons = append(out.Reasons, rs.Code)
	}
	for _, o := range res.Others {
		out.OtherMatches = append(out.OtherMatches, model.EditorMatch{DatasetID: o.ID, ConnectionID: o.ConnectionID,
			ConnectionName: o.ConnectionName, Schema: o.Schema, Table: o.Table})
	}
	return out
}

func toPublicShare(sh product.ShareInfo) *model.PublicShare {
	return &model.PublicShare{DomainID: sh.DomainID, Enabled: sh.Enabled, Token: sh.Token, PageURL: sh.PageURL,
		BadgeURL: sh.BadgeURL, CreatedAt: sh.CreatedAt, RotatedAt: sh.RotatedAt}
}

// orchestratorRuns is the orchestratorRuns field: the REST parameters' bounds, then the
// service's filter (which checks the page and the status).
func (r *queryResolver) orchestratorRuns(ctx context.Context, name, pipeline, status, datasetID, scanID *string, limit, offset *int) (*model.OrchestratorRunPage, error) {
	for _, c := range []struct {
		name string
		v    *string
		n    int
	}{{"orchestrator", name, 50}, {"pipeline", pipeline, 200}, {"datasetId", datasetID, 64}, {"scanId", scanID, 64}} {
		if err := maxLen(c.name, c.v, c.n); err != nil {
			return nil, err
		}
	}
	l, err := r.Ops.Orchestrators.Runs(ctx, orchestrator.RunFilter{Orchestrator: name, Pipeline: pipeline, Status: status,
		DatasetID: datasetID, ScanID: scanID, Page: vigia.PageOf(limit, offset, orchestrator.RunPageDefault)})
	if err != nil {
		return nil, err
	}
	out := &model.OrchestratorRunPage{Total: l.Total, Items: make([]model.OrchestratorRun, 0, len(l.Items))}
	for _, run := range l.Items {
		out.Items = append(out.Items, toOrchestratorRun(run))
	}
	return out, nil
}
