package graph

import (
	"context"

	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/labelquality"
)

// LabelQualityService is what the resolvers need of label quality.
type LabelQualityService interface {
	Get(ctx context.Context, datasetID string) (labelquality.Report, error)
}

func toLabelQuality(r labelquality.Report) *model.LabelQuality {
	out := &model.LabelQuality{DatasetID: r.DatasetID, Available: r.Available,
		PiiGate: &model.LabelGate{Status: r.Gate.Status, PiiColumns: r.Gate.PIIColumns}}
	if out.PiiGate.PiiColumns == nil {
		out.PiiGate.PiiColumns = []string{}
	}
	if c := r.Config; c != nil {
		out.Configuration = &model.LabelConfig{LabelColumn: c.LabelColumn, FeatureColumns: c.FeatureColumns, UpdatedBy: c.UpdatedBy, UpdatedAt: c.UpdatedAt}
		if out.Configuration.FeatureColumns == nil {
			out.Configuration.FeatureColumns = []string{}
		}
	}
	if x := r.LastResult; x != nil {
		lr := &model.LabelResult{Trigger: x.Trigger, ScanID: x.ScanID, RanAt: x.RanAt, DurationMs: int(x.DurationMS), Rows: int(x.Rows), UnlabelledRows: int(x.UnlabelledRows),
			DistinctClasses: int(x.DistinctClasses), Classes: []model.LabelClass{}, ClassesTruncated: x.ClassesTruncated,
			ImbalanceRatio: x.ImbalanceRatio, ConflictGroups: int(x.ConflictGroups), ConflictRows: int(x.ConflictRows),
			FeaturesUsed: x.FeaturesUsed, Leakage: []model.LabelHint{}}
		if lr.FeaturesUsed == nil {
			lr.FeaturesUsed = []string{}
		}
		for _, c := range x.Classes {
			lr.Classes = append(lr.Classes, model.LabelClass{Rank: c.Rank, Count: int(c.Count), Share: c.Share})
		}
		for _, h := range x.Leakage {
			lr.Leakage = append(lr.Leakage, model.LabelHint{Column: h.Column, Kind: h.Kind, Groups: int(h.Groups), PureGroups: int(h.PureGroups)})
		}
		out.LastResult = lr
	}
	return out
}
