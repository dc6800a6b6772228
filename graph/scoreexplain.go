package graph

import (
	"encoding/json"

	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

// jsonText is a parameters object as JSON text ({} for none).
func jsonText(m map[string]any) string {
	if m == nil {
		return "{}"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func toDimensionMeta(m quality.DimensionMeta, ok bool) *model.DimensionMeta {
	if !ok {
		return nil
	}
	out := &model.DimensionMeta{Checks: m.Checks, Reason: optString(m.Reason), AgeHours: m.AgeHours, SLAHours: m.SLAHours}
	if m.FailedRules != 0 {
		n := m.FailedRules
		out.FailedRules = &n
	}
	if m.Estimated {
		e := true
		out.Estimated = &e
	}
	if m.CI95 != nil {
		out.Ci95 = []float64{m.CI95[0], m.CI95[1]}
	}
	if w := m.WorstColumn; w != nil {
		out.WorstColumn = &model.ColumnCompletude{Column: w.Column, Completude: w.Completude, NullCount: int(w.NullCount), Rows: int(w.Rows)}
	}
	return out
}

func toScoreExplanation(e scan.ScoreExplanation) *model.ScoreExplanation {
	meta := func(d quality.Dimension) *model.DimensionMeta {
		m, ok := e.Meta[d]
		return toDimensionMeta(m, ok)
	}
	dims := e.Dimensions
	out := &model.ScoreExplanation{DatasetID: e.DatasetID, ScanID: e.ScanID, Score: e.Explanation.Score,
		PreviousScore: e.Explanation.PreviousScore,
		Dimensions: &model.Dimensions{Completude: dims.Completude, Unicidade: dims.Unicidade, Validade: dims.Validade,
			Atualidade: dims.Atualidade, Consistencia: dims.Consistencia},
		DimensionsMeta: &model.DimensionsMeta{Completude: meta("completude"), Unicidade: meta("unicidade"), Validade: meta("validade"),
			Atualidade: meta("atualidade"), Consistencia: meta("consistencia")},
		Drivers: make([]model.ScoreDriver, 0, len(e.Explanation.Drivers)), Notes: make([]model.ScoreNote, 0, len(e.Explanation.Notes)),
		OpenIssues: &model.IssueCounts{Critical: e.OpenIssues.Critical, Warning: e.OpenIssues.Warning,
			CriticalIssueIds: nonNil(e.OpenIssues.CriticalIDs), WarningIssueIds: nonNil(e.OpenIssues.WarningIDs)}}
	for _, d := range e.Explanation.Drivers {
		out.Drivers = append(out.Drivers, model.ScoreDriver{Kind: d.Kind, IssueID: optString(d.IssueID), Params: jsonText(d.Params)})
	}
	for _, n := range e.Explanation.Notes {
		sn := model.ScoreNote{Code: n.Code}
		if len(n.Params) > 0 {
			p := jsonText(n.Params)
			sn.Params = &p
		}
		out.Notes = append(out.Notes, sn)
	}
	return out
}

func toTuning(ts []quality.Tuning) []model.Tuning {
	out := make([]model.Tuning, 0, len(ts))
	for _, t := range ts {
		out = append(out, model.Tuning{Metric: string(t.Metric), Column: optString(t.Column), Threshold: t.Threshold, Silenced: t.Silenced,
			Ignored: t.Ignored, Resolved: t.Resolved, NextOnIgnore: t.NextOnIgnore, TunedThreshold: t.TunedThreshold,
			TunedThresholdLabel: t.TunedThresholdLabel})
	}
	return out
}
