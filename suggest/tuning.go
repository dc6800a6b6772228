package suggest

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/rule"
)

// CategoryTuning proposes tuning an existing check from its own history: a metric's
// anomaly threshold (signature anomaly_threshold:<metric>:<column>) when its anomalies
// keep being ignored, and a rule's tolerance (signature rule_tolerance:<rule id>) when
// the rule fails every recent scan by a stable tiny fraction of the rows.
const CategoryTuning = "tuning"

// Tuning bounds.
const (
	// MinIgnoredAnomalies is how many anomalies of one metric, ignored within
	// TuningWindowDays, make a threshold proposal (and at least twice as many ignored as
	// resolved: resolved ones were real problems).
	MinIgnoredAnomalies = 3
	TuningWindowDays    = 90
	// ToleranceScans is how many latest evaluations of a rule must all have failed.
	ToleranceScans = 3
	// MaxToleranceFraction is the largest failing fraction of the rows (or orphan
	// percentage / 100) read as tiny; MaxToleranceSpread the largest ratio between the
	// biggest and smallest failing count read as stable.
	MaxToleranceFraction = 0.01
	MaxToleranceSpread   = 1.5
)

// AnomalyFact is the recent history of one metric's anomalies on a dataset.
type AnomalyFact struct {
	DatasetID string
	Metric    string
	Column    string
	// Ignored and Resolved count the metric's anomaly issues closed so within
	// TuningWindowDays; MaxZ is the largest |z| among the ignored ones.
	Ignored   int
	Resolved  int
	MaxZ      float64
	Threshold float64
	Silenced  bool
	// MaxThreshold is the ceiling of a threshold (quality.MaxThreshold); Step the
	// rounding of a proposal (quality.ThresholdStep).
	MaxThreshold float64
	Step         float64
}

// RuleFact is a rule's latest evaluations (newest first) and its dataset's rows.
type RuleFact struct {
	DatasetID string
	Rule      rule.Rule
	// Statuses and Observed of the latest evaluations, newest first (at most
	// ToleranceScans).
	Statuses []string
	Observed []float64
	Rows     int64
}

// TuningFacts reads the facts of the tuning proposals.
type TuningFacts interface {
	// TuningFacts returns, for the datasets, their anomaly histories with at least
	// MinIgnoredAnomalies ignored since since, and their active rules' latest
	// evaluations.
	TuningFacts(ctx context.Context, workspaceID string, datasetIDs []string, since time.Time) ([]AnomalyFact, []RuleFact, error)
}

// Tuner applies an accepted threshold proposal (issue.Service.RaiseThreshold).
type Tuner interface {
	RaiseThreshold(ctx context.Context, datasetID, metric, column string, threshold float64) error
}

// RuleUpdater changes the rule of an accepted tolerance proposal.
type RuleUpdater interface {
	Rule(ctx context.Context, id string) (rule.Rule, error)
	UpdateRule(ctx context.Context, id string, u rule.Update) (rule.Rule, error)
}

// WithTuning turns the tuning proposals on: facts read them, tuner and rules apply
// accepted ones through their owning services.
func (s *Service) WithTuning(facts TuningFacts, tuner Tuner, rules RuleUpdater) *Service {
	s.tuningFacts, s.tuner, s.ruleUpdater = facts, tuner, rules
	return s
}

// toleranceTypes are the rule types whose tolerance is max_failing (a row count);
// referential's is max_orphan_pct.
var toleranceTypes = map[string]bool{rule.TypeNotNull: true, rule.TypeUnique: true, rule.TypeAcceptedValues: true,
	rule.TypePattern: true, rule.TypeRange: true}

// TuningProposals turns the facts into suggestions, by dataset.
func TuningProposals(anomalies []AnomalyFact, rules []RuleFact) map[string][]Suggestion {
	out := map[string][]Suggestion{}
	for _, a := range anomalies {
		if a.Silenced || a.Ignored < MinIgnoredAnomalies || a.Ignored < 2*a.Resolved || a.Step <= 0 || math.IsNaN(a.MaxZ) {
			continue
		}
		// Just above the largest ignored |z|, on the step's grid, at most the ceiling.
		proposed := math.Min(a.MaxThreshold, (math.Floor(a.MaxZ/a.Step)+1)*a.Step)
		if !(proposed > a.Threshold) {
			continue
		}
		out[a.DatasetID] = append(out[a.DatasetID], Suggestion{Category: CategoryTuning, Column: a.Column,
			Signature: fmt.Sprintf("anomaly_threshold:%s:%s", a.Metric, a.Column),
			Params: map[string]any{"kind": "anomaly_threshold", "metric": a.Metric, "column": a.Column, "current_threshold": a.Threshold,
				"proposed_threshold": proposed, "ignored": a.Ignored, "resolved": a.Resolved, "max_ignored_z": round2(a.MaxZ),
				"window_days": TuningWindowDays}})
	}
	for _, f := range rules {
		r := f.Rule
		if len(f.Statuses) < ToleranceScans || len(f.Observed) < ToleranceScans || f.Rows <= 0 || !r.Active {
			continue
		}
		lo, hi := math.Inf(1), 0.0
		failedAll := true
		for i := 0; i < ToleranceScans; i++ {
			if f.Statuses[i] != rule.StatusFailed || !(f.Observed[i] > 0) {
				failedAll = false
				break
			}
			lo, hi = math.Min(lo, f.Observed[i]), math.Max(hi, f.Observed[i])
		}
		if !failedAll || hi > lo*MaxToleranceSpread {
			continue
		}
		params := map[string]any{"kind": "rule_tolerance", "rule_id": r.ID, "rule_type": r.Type, "column": r.Params.Column,
			"observed": f.Observed[:ToleranceScans], "rows": f.Rows, "scans": ToleranceScans}
		switch {
		case toleranceTypes[r.Type]:
			if hi/float64(f.Rows) > MaxToleranceFraction {
				continue
			}
			params["param"], params["proposed"] = "max_failing", int64(math.Ceil(hi))
			if r.Params.MaxFailing != nil {
				params["current"] = *r.Params.MaxFailing
			} else {
				params["current"] = 0
			}
			params["fraction"] = round4(hi / float64(f.Rows))
		case r.Type == rule.TypeReferential:
			if hi/100 > MaxToleranceFraction {
				continue
			}
			params["param"], params["proposed"] = "max_orphan_pct", math.Ceil(hi*100)/100
			if r.Params.MaxOrphanPct != nil {
				params["current"] = *r.Params.MaxOrphanPct
			} else {
				params["current"] = 0.0
			}
			params["fraction"] = round4(hi / 100)
		default:
			continue
		}
		out[f.DatasetID] = append(out[f.DatasetID], Suggestion{Category: CategoryTuning, Column: r.Params.Column,
			Signature: "rule_tolerance:" + r.ID, Params: params})
	}
	return out
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
func round4(f float64) float64 { return math.Round(f*10000) / 10000 }

// acceptTuning applies an accepted tuning proposal through its owning service: the
// metric's threshold (issues' anomaly tuning) or the rule's tolerance (rules' update,
// with its permissions; a rule changed meanwhile keeps a larger tolerance).
func (s *Service) acceptTuning(ctx context.Context, sg Suggestion) error {
	kind, _ := sg.Params["kind"].(string)
	switch {
	case kind == "anomaly_threshold" && s.tuner != nil:
		metric, _ := sg.Params["metric"].(string)
		column, _ := sg.Params["column"].(string)
		thr, _ := sg.Params["proposed_threshold"].(float64)
		return s.tuner.RaiseThreshold(ctx, sg.DatasetID, metric, column, thr)
	case kind == "rule_tolerance" && s.ruleUpdater != nil:
		id, _ := sg.Params["rule_id"].(string)
		proposed, _ := sg.Params["proposed"].(float64)
		r, err := s.ruleUpdater.Rule(ctx, id)
		if err != nil {
			return err
		}
		in := r.Params.In()
		switch sg.Params["param"] {
		case "max_failing":
			if r.Params.MaxFailing != nil && float64(*r.Params.MaxFailing) >= proposed {
				return &vigia.Error{Kind: vigia.KindConflict, Code: CodeNoLongerHolds, Key: "error.suggestion_no_longer_holds"}
			}
			in.MaxFailing = &proposed
		case "max_orphan_pct":
			if r.Params.MaxOrphanPct != nil && *r.Params.MaxOrphanPct >= proposed {
				return &vigia.Error{Kind: vigia.KindConflict, Code: CodeNoLongerHolds, Key: "error.suggestion_no_longer_holds"}
			}
			in.MaxOrphanPct = &proposed
		}
		_, err = s.ruleUpdater.UpdateRule(ctx, id, rule.Update{Params: &in})
		return err
	}
	return &vigia.Error{Kind: vigia.KindConflict, Code: CodeNoLongerHolds, Key: "error.suggestion_no_longer_holds"}
}
