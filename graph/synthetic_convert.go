package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/synthetic"
)

// SyntheticService is what the resolvers need of synthetic data.
type SyntheticService interface {
	Evaluate(ctx context.Context, datasetID string, rows int, seed int64) (synthetic.Evaluation, error)
}

func toSyntheticEvaluation(ctx context.Context, msgs *i18n.Catalog, ev synthetic.Evaluation) *model.SyntheticEvaluation {
	out := &model.SyntheticEvaluation{Rows: ev.Rows, Seed: int(ev.Seed), UtilityScore: ev.UtilityScore,
		UtilityComponents: toSyntheticMeasures(ev.UtilityComponents), UtilityWeights: toSyntheticMeasures(ev.UtilityWeights),
		PrivacyVerdict: ev.PrivacyVerdict, KMin: ev.KMin, KThreshold: ev.KThreshold, QuasiIdentifiers: ev.QuasiIdentifiers,
		Params: []model.SyntheticParam{}, DatasetID: ev.DatasetID, Findings: make([]model.SyntheticFinding, 0, len(ev.Findings))}
	for _, f := range ev.Findings {
		out.Findings = append(out.Findings, model.SyntheticFinding{Key: f.Key, Params: jsonText(f.Params)})
	}
	if out.QuasiIdentifiers == nil {
		out.QuasiIdentifiers = []string{}
	}
	if ev.Key != "" {
		k := ev.Key
		out.Key = &k
	}
	names := make([]string, 0, len(ev.Params))
	for k := range ev.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out.Params = append(out.Params, model.SyntheticParam{Name: k, Value: paramText(ev.Params[k])})
	}
	if msgs != nil {
		out.Reason = msgs.Message(vigia.Lang(ctx), ev.ReasonKey(), ev.Params)
	}
	return out
}

func toSyntheticMeasures(m map[string]float64) []model.SyntheticMeasure {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]model.SyntheticMeasure, 0, len(m))
	for _, k := range names {
		out = append(out, model.SyntheticMeasure{Name: k, Value: m[k]})
	}
	return out
}

// paramText is a param's value as text: a string as it is, anything else (numbers,
// lists of column names) as JSON.
func paramText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
