package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/vigia-data/vigia/labelquality"
)

// LabelQualityService is what the transport needs of label quality.
type LabelQualityService interface {
	Get(ctx context.Context, datasetID string) (labelquality.Report, error)
	Configure(ctx context.Context, datasetID, label string, features []string) (labelquality.Report, error)
	Run(ctx context.Context, datasetID string) (labelquality.Report, error)
}

// LabelConfigOut is a dataset's label configuration.
type LabelConfigOut struct {
	LabelColumn    string    `json:"label_column"`
	FeatureColumns []string  `json:"feature_columns"`
	UpdatedBy      string    `json:"updated_by" doc:"user:<id> of the session that configured it"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// LabelGateOut is the PII gate's verdict.
type LabelGateOut struct {
	Status     string   `json:"status" enum:"passed,blocked,not_configured" doc:"blocked when the label column's sensitivity is pii (no analysis runs)"`
	PIIColumns []string `json:"pii_columns" doc:"Configured columns whose sensitivity is pii; pii feature columns are left out of the analysis"`
}

// LabelClassOut is one class of the label by rank, never its value.
type LabelClassOut struct {
	Rank  int     `json:"rank"`
	Count int64   `json:"count"`
	Share float64 `json:"share"`
}

// LabelHintOut is a leakage hint.
type LabelHintOut struct {
	Column     string `json:"column"`
	Kind       string `json:"kind" enum:"identifier,determines_label,name_overlap"`
	Groups     int64  `json:"groups" doc:"Distinct values of the feature among labelled rows"`
	PureGroups int64  `json:"pure_groups" doc:"Of those, values whose rows all carry one label"`
}

// LabelResultOut is the last analysis: counts only.
type LabelResultOut struct {
	Trigger          string          `json:"trigger" enum:"manual,scan" doc:"manual: a session's run or configuration; scan: analysed again after a scan that profiled the dataset"`
	ScanID           *string         `json:"scan_id" doc:"The scan of an after-scan analysis; null for a manual one"`
	RanAt            time.Time       `json:"ran_at"`
	DurationMS       int64           `json:"duration_ms"`
	Rows             int64           `json:"rows"`
	UnlabelledRows   int64           `json:"unlabelled_rows"`
	DistinctClasses  int64           `json:"distinct_classes"`
	Classes          []LabelClassOut `json:"classes" doc:"Class balance by rank, most frequent first (at most 50)"`
	ClassesTruncated bool            `json:"classes_truncated"`
	ImbalanceRatio   *float64        `json:"imbalance_ratio" doc:"Largest class over smallest; null with fewer than two classes"`
	ConflictGroups   int64           `json:"conflict_groups" doc:"Combinations of identical feature values labelled more than one way"`
	ConflictRows     int64           `json:"conflict_rows"`
	FeaturesUsed     []string        `json:"features_used"`
	Leakage          []LabelHintOut  `json:"leakage"`
}

// LabelQualityOut answers GET …/label-quality.
type LabelQualityOut struct {
	DatasetID     string          `json:"dataset_id"`
	Available     bool            `json:"available" doc:"The label-quality extra is on: the workspace's plan includes it (Business)"`
	Configuration *LabelConfigOut `json:"configuration"`
	PIIGate       LabelGateOut    `json:"pii_gate"`
	LastResult    *LabelResultOut `json:"last_result"`
}

// LabelQualityIn configures a dataset's labels.
type LabelQualityIn struct {
	LabelColumn    string   `json:"label_column" minLength:"1" maxLength:"200"`
	FeatureColumns []string `json:"feature_columns,omitempty" maxItems:"30" doc:"Default: every other column except the primary key (at most 30)"`
}

func (s *Server) labelQualityRoutes() {
	s.register(operation{ID: "datasetLabelQuality", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/label-quality",
		Tag: "datasets", Params: []param{datasetIDParam}, Response: LabelQualityOut{},
		Summary: "Availability of the extra, configuration, PII gate, last result",
		Desc: "For datasets used to train models: class balance, conflicting labels for identical features and leakage hints, " +
			"counted on the source (never values). The PII gate blocks a label column whose sensitivity is pii and leaves pii features out."},
		s.handleLabelQuality)
	s.register(operation{ID: "configureLabelQuality", Method: http.MethodPut, Path: "/api/v1/datasets/{dataset_id}/label-quality",
		Tag: "datasets", Params: []param{datasetIDParam}, Body: LabelQualityIn{}, Response: LabelQualityOut{},
		Summary: "Configure the label and feature columns and analyse them (member or admin session; Business plan)",
		Errors:  map[int]string{http.StatusPaymentRequired: "plan_limit: the plan does not include the label-quality extra"}},
		s.handleLabelQualityConfigure)
	s.register(operation{ID: "runLabelQuality", Method: http.MethodPost, Path: "/api/v1/datasets/{dataset_id}/label-quality/run",
		Tag: "datasets", Params: []param{datasetIDParam}, Response: LabelQualityOut{},
		Summary: "Analyse the configured labels again (member or admin session; Business plan)",
		Errors: map[int]string{http.StatusPaymentRequired: "plan_limit: the plan does not include the label-quality extra",
			http.StatusConflict: "label_quality_not_configured: no label column configured; blackout_active: a blackout window of the dataset's connection is in force"}},
		s.handleLabelQualityRun)
}

func toLabelQualityOut(r labelquality.Report) LabelQualityOut {
	out := LabelQualityOut{DatasetID: r.DatasetID, Available: r.Available,
		PIIGate: LabelGateOut{Status: r.Gate.Status, PIIColumns: r.Gate.PIIColumns}}
	if out.PIIGate.PIIColumns == nil {
		out.PIIGate.PIIColumns = []string{}
	}
	if c := r.Config; c != nil {
		out.Configuration = &LabelConfigOut{LabelColumn: c.LabelColumn, FeatureColumns: c.FeatureColumns, UpdatedBy: c.UpdatedBy, UpdatedAt: c.UpdatedAt}
		if out.Configuration.FeatureColumns == nil {
			out.Configuration.FeatureColumns = []string{}
		}
	}
	if x := r.LastResult; x != nil {
		lr := &LabelResultOut{Trigger: x.Trigger, ScanID: x.ScanID, RanAt: x.RanAt, DurationMS: x.DurationMS, Rows: x.Rows, UnlabelledRows: x.UnlabelledRows,
			DistinctClasses: x.DistinctClasses, Classes: []LabelClassOut{}, ClassesTruncated: x.ClassesTruncated,
			ImbalanceRatio: x.ImbalanceRatio, ConflictGroups: x.ConflictGroups, ConflictRows: x.ConflictRows,
			FeaturesUsed: x.FeaturesUsed, Leakage: []LabelHintOut{}}
		if lr.FeaturesUsed == nil {
			lr.FeaturesUsed = []string{}
		}
		for _, c := range x.Classes {
			lr.Classes = append(lr.Classes, LabelClassOut{Rank: c.Rank, Count: c.Count, Share: c.Share})
		}
		for _, h := range x.Leakage {
			lr.Leakage = append(lr.Leakage, LabelHintOut{Column: h.Column, Kind: h.Kind, Groups: h.Groups, PureGroups: h.PureGroups})
		}
		out.LastResult = lr
	}
	return out
}

func (s *Server) handleLabelQuality(w http.ResponseWriter, r *http.Request, in *input) {
	rep, err := s.deps.LabelQuality.Get(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return toLabelQualityOut(rep) })
}

func (s *Server) handleLabelQualityConfigure(w http.ResponseWriter, r *http.Request, in *input) {
	var body LabelQualityIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	rep, err := s.deps.LabelQuality.Configure(r.Context(), in.Path("dataset_id"), body.LabelColumn, body.FeatureColumns)
	s.reply(w, r, err, func() any { return toLabelQualityOut(rep) })
}

func (s *Server) handleLabelQualityRun(w http.ResponseWriter, r *http.Request, in *input) {
	rep, err := s.deps.LabelQuality.Run(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return toLabelQualityOut(rep) })
}
