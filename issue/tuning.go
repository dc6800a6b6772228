package issue

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
)

// RetuneSilence is the only retune that waits for approval: silencing a metric whose
// threshold is already at quality.MaxThreshold and whose anomalies keep being ignored as
// expected. A silenced metric keeps its signals but opens no issue.
const RetuneSilence = "silence"

// tune feeds the anomaly tuning of the issue's metric: an anomaly ignored as expected
// raises its threshold by quality.ThresholdStep (up to quality.MaxThreshold; past it,
// a silence retune waits for an administrator), and a resolved anomaly is counted as a
// real problem without changing anything. The next scan reads the threshold.
func (s *Service) tune(ctx context.Context, is Issue, action, origin string, at time.Time) error {
	switch action {
	case ActionIgnoreExpected:
		t, err := s.store.LockTuning(ctx, is.DatasetID, is.Metric, is.Column, at)
		if err != nil {
			return err
		}
		atMax := t.Threshold >= quality.MaxThreshold
		t.Ignored++
		if !atMax {
			t.Threshold = quality.NextThreshold(quality.DefaultThreshold, t.Ignored)
		}
		if err := s.store.SaveTuning(ctx, is.DatasetID, is.Metric, is.Column, t, at); err != nil {
			return err
		}
		if atMax && !t.Silenced {
			id := is.ID
			return s.store.CreateRetune(ctx, Retune{ID: vigia.NewID(), WorkspaceID: is.WorkspaceID, DatasetID: is.DatasetID,
				Metric: is.Metric, Column: is.Column, Action: RetuneSilence, FromThreshold: t.Threshold, IssueID: &id,
				Status: "pending", RequestedBy: origin, RequestedAt: at})
		}
	case ActionResolve:
		t, err := s.store.LockTuning(ctx, is.DatasetID, is.Metric, is.Column, at)
		if err != nil {
			return err
		}
		t.Resolved++
		return s.store.SaveTuning(ctx, is.DatasetID, is.Metric, is.Column, t, at)
	}
	return nil
}

// DecideRetune approves or rejects a retune waiting for approval; approving a silence
// retune silences the metric from the next scan. Administrator sessions only (tokens
// get token_read_only, others forbidden). Returns KindNotFound for a retune of another
// workspace or dataset, and KindConflict (retune_decided) when it was already decided.
func (s *Service) DecideRetune(ctx context.Context, datasetID, retuneID string, approve bool) (Retune, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Retune{}, err
	}
	if !vigia.ValidID(datasetID) || !vigia.ValidID(retuneID) {
		return Retune{}, vigia.NotFound()
	}
	var out Retune
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		r, err := s.store.LockRetune(ctx, p.WorkspaceID, datasetID, retuneID)
		if err != nil {
			return err
		}
		if r.Status != "pending" {
			return vigia.Conflict("retune_decided", "error.retune_decided", nil)
		}
		now := s.clock.Now()
		by := "user:" + p.UserID
		r.DecidedBy, r.DecidedAt = &by, &now
		r.Status = "rejected"
		if approve {
			r.Status = "approved"
			t, err := s.store.LockTuning(ctx, r.DatasetID, r.Metric, r.Column, now)
			if err != nil {
				return err
			}
			t.Silenced = true
			if err := s.store.SaveTuning(ctx, r.DatasetID, r.Metric, r.Column, t, now); err != nil {
				return err
			}
		}
		out = r
		return s.store.DecideRetune(ctx, r)
	})
	return out, err
}

// Explanation is the card that explains an issue: for an anomaly, what was measured
// against the dataset's history and the threshold tuning of its metric.
type Explanation struct {
	Issue Issue
	// Kind is anomaly, rule, schema_drift or other.
	Kind        string
	Metric      *string
	Column      *string
	Observed    *float64
	Median      *float64
	MAD         *float64
	Z           *float64
	Direction   *string
	HistorySize *int
	// Threshold is the one the scan that detected the anomaly used.
	Threshold *float64
	// CurrentThreshold is the one the next scan uses; TunedThreshold and its label are
	// nil while the metric has its calibrated default.
	CurrentThreshold       *float64
	TunedThreshold         *float64
	TunedThresholdLabel    *string
	NextOnIgnore           *float64
	IgnoredAsExpected      int
	Resolved               int
	Silenced               bool
	RetuneAwaitingApproval *Retune
	// Details are the issue's own details (counts, column names, the rule's measure):
	// never a value of the data.
	Details map[string]any
}

// Explain returns the explanation card of an issue. Returns KindNotFound for an issue
// the caller cannot see.
func (s *Service) Explain(ctx context.Context, id string) (Explanation, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Explanation{}, err
	}
	if !vigia.ValidID(id) {
		return Explanation{}, vigia.NotFound()
	}
	is, err := s.store.IssueByID(ctx, catalog.ViewerOf(p), id)
	if err != nil {
		return Explanation{}, err
	}
	out := Explanation{Issue: s.localize(ctx, is), Kind: "other", Details: is.Details}
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	switch is.Type {
	case quality.IssueTypeAnomaly:
		out.Kind = "anomaly"
	case quality.IssueTypeSchemaDrift:
		out.Kind = "schema_drift"
		return out, nil
	case "rule":
		out.Kind = "rule"
		return out, nil
	default:
		return out, nil
	}
	num := func(k string) *float64 {
		if f, ok := is.Details[k].(float64); ok {
			return &f
		}
		return nil
	}
	metric, column := is.Metric, is.Column
	out.Metric = &metric
	if column != "" {
		out.Column = &column
	}
	out.Observed, out.Median, out.MAD, out.Z, out.Threshold = num("observed"), num("median"), num("mad"), num("z"), num("threshold")
	if d, ok := is.Details["direction"].(string); ok && d != "" {
		out.Direction = &d
	}
	if h := num("history_size"); h != nil {
		n := int(*h)
		out.HistorySize = &n
	}
	t, _, err := s.store.TuningOf(ctx, is.DatasetID, metric, column)
	if err != nil {
		return Explanation{}, err
	}
	tuned := quality.TuningFor(quality.Metric(metric), column, t.Ignored, t.Resolved, t.Silenced, vigia.Lang(ctx))
	current := quality.DefaultThreshold
	if t.Threshold > 0 {
		current = t.Threshold
	}
	next := tuned.NextOnIgnore
	out.CurrentThreshold, out.NextOnIgnore = &current, &next
	out.TunedThreshold, out.TunedThresholdLabel = tuned.TunedThreshold, tuned.TunedThresholdLabel
	out.IgnoredAsExpected, out.Resolved, out.Silenced = t.Ignored, t.Resolved, t.Silenced
	out.RetuneAwaitingApproval, err = s.store.PendingRetune(ctx, is.DatasetID, metric, column)
	return out, err
}

// CodeThresholdNotRaised is a threshold to set that is not above the metric's current
// one (tuning never lowers a threshold).
const CodeThresholdNotRaised = "threshold_not_raised"

// RaiseThreshold sets the anomaly threshold of a dataset's metric (an accepted tuning
// suggestion; the next scan reads it): member or admin session (tokens get
// token_read_only), a threshold above the current one and at most quality.MaxThreshold
// (else KindInvalid), KindConflict (threshold_not_raised) when the current one is
// already at or above it. The caller has checked the dataset.
func (s *Service) RaiseThreshold(ctx context.Context, datasetID, metric, column string, threshold float64) error {
	if _, err := vigia.RequireSession(ctx, vigia.RoleMember); err != nil {
		return err
	}
	if !(threshold > quality.DefaultThreshold) || threshold > quality.MaxThreshold {
		return vigia.Invalid(vigia.Field("value_error", map[string]any{"le": quality.MaxThreshold}, "threshold"))
	}
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		now := s.clock.Now()
		t, err := s.store.LockTuning(ctx, datasetID, metric, column, now)
		if err != nil {
			return err
		}
		if t.Threshold >= threshold {
			return vigia.Conflict(CodeThresholdNotRaised, "error.threshold_not_raised", nil)
		}
		t.Threshold = threshold
		return s.store.SaveTuning(ctx, datasetID, metric, column, t, now)
	})
}
