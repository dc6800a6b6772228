package scan

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
)

// Kinds of signals.
const (
	SignalAnomaly     = "anomaly"      // a metric judged against the dataset's history
	SignalSchemaDrift = "schema_drift" // the columns changed since the previous scan
	// SignalPipeline is a late or failing writer of the dataset (orchestrator runs),
	// raised with no scan; the orchestrator package writes them with the same names.
	SignalPipeline = "pipeline"
)

// Who raised a signal.
const (
	SourceScan         = "scan"
	SourceOrchestrator = "orchestrator"
)

// Metrics of pipeline signals: consecutive failed runs (failing), or the seconds since
// the last run started against the learned cadence (late).
const (
	MetricRunFailures = "run_failures"
	MetricRunInterval = "run_interval"
)

// MethodPipelineHealth is the method of pipeline signals: the writer's health judged
// from its reported runs.
const MethodPipelineHealth = "pipeline_health"

// MetricSchema is the metric of schema_drift signals.
const MetricSchema = "schema"

// MethodSchemaDiff is the method of schema_drift signals: the columns compared with the
// previous scan's (anomaly signals carry quality.MethodRobustZ or MethodGross).
const MethodSchemaDiff = "schema_diff"

// SignalFilter narrows the signal list; empty fields do not filter. Types and Metrics
// are comma-list values as sent; Since and Until are RFC 3339 timestamps (Since
// inclusive, Until exclusive).
type SignalFilter struct {
	DatasetID *string
	Types     []string
	Metrics   []string
	Since     *string
	Until     *string
	Page      vigia.Page
}

// SignalQuery is a validated SignalFilter, as the store reads it.
type SignalQuery struct {
	DatasetID *string
	Kinds     []string
	Metrics   []string
	Since     *time.Time
	Until     *time.Time
	Page      vigia.Page
}

func validSignalKind(k string) bool {
	return k == SignalAnomaly || k == SignalSchemaDrift || k == SignalPipeline
}

func validSignalMetric(m string) bool {
	switch quality.Metric(m) {
	case quality.MetricVolume, quality.MetricNullRate, quality.MetricDistinctRatio, quality.MetricFreshnessLag:
		return true
	}
	return m == MetricSchema || m == MetricRunFailures || m == MetricRunInterval
}

// Query validates the filter. It returns KindInvalid (with the locations query.type,
// query.metric, query.since, query.until, never the value sent) for an unknown type or
// metric, a timestamp that is not RFC 3339, or a period that ends before it starts.
func (f SignalFilter) Query() (SignalQuery, error) {
	q := SignalQuery{DatasetID: f.DatasetID, Page: f.Page}
	fields := vigia.FieldsOf(f.Page.Validate())
	for _, k := range f.Types {
		if !validSignalKind(k) {
			fields = append(fields, vigia.Field("enum", map[string]any{"expected": SignalAnomaly + ", " + SignalSchemaDrift + ", " + SignalPipeline}, "type"))
			break
		}
		q.Kinds = append(q.Kinds, k)
	}
	for _, m := range f.Metrics {
		if !validSignalMetric(m) {
			fields = append(fields, vigia.Field("enum", map[string]any{"expected": "volume, null_rate, distinct_ratio, freshness_lag, schema, run_failures, run_interval"}, "metric"))
			break
		}
		q.Metrics = append(q.Metrics, m)
	}
	parse := func(v *string, name string) *time.Time {
		if v == nil {
			return nil
		}
		t, err := time.Parse(time.RFC3339Nano, *v)
		if err != nil {
			fields = append(fields, vigia.Field("datetime_parsing", nil, name))
			return nil
		}
		return &t
	}
	q.Since, q.Until = parse(f.Since, "since"), parse(f.Until, "until")
	if q.Since != nil && q.Until != nil && !q.Until.After(*q.Since) {
		fields = append(fields, vigia.Field("greater_than", nil, "until"))
	}
	if len(fields) > 0 {
		return SignalQuery{}, vigia.Invalid(fields...)
	}
	return q, nil
}

// Signals lists what scans measured and flagged, and the late or failing writers
// (pipeline signals, no scan), on the datasets the caller can see,
// newest first, filtered by dataset, type (kind), metric and period. A dataset id that is
// malformed, of another workspace or invisible to the caller gives an empty list, as an
// unknown one does. Returns KindInvalid for a bad filter (see SignalFilter.Query).
func (s *Service) Signals(ctx context.Context, f SignalFilter) (vigia.List[Signal], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Signal]{}, err
	}
	q, err := f.Query()
	if err != nil {
		return vigia.List[Signal]{}, err
	}
	if q.DatasetID != nil && !vigia.ValidID(*q.DatasetID) {
		return vigia.List[Signal]{Items: []Signal{}}, nil
	}
	return s.store.Signals(ctx, catalog.ViewerOf(p), q)
}
