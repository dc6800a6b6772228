package orchestrator

import (
	"context"
	"time"

	"github.com/vigia-data/vigia/catalog"
)

// IssueType is the type of the issues a failing or late writer opens on the datasets
// it writes (the contract's list of types is open; see docs/decisions.md).
const IssueType = "pipeline"

// Subtypes of pipeline issues.
const (
	SubtypeFailing = "failing"
	SubtypeLate    = "late"
)

// Thresholds past which a writer's health becomes an issue: FailuresForIssue
// consecutive failed or aborted runs, or no run started within LateCadencesForIssue
// cadences of its last start (health says late from LateFactor cadences).
const (
	FailuresForIssue     = 3
	LateCadencesForIssue = 2.0
)

// PipelineProblem is a writer past a threshold: the store opens the dataset's issue of
// that pipeline, or updates the open one.
type PipelineProblem struct {
	WorkspaceID         string
	DatasetID           string
	Orchestrator        string
	Pipeline            string
	Subtype             string
	Severity            string
	RunID               string
	ConsecutiveFailures int
	ExpectedBy          *time.Time
	At                  time.Time
	Origin              string
}

// Key is what the issue carries to be found again (details.pipeline_key).
func (p PipelineProblem) Key() string { return PipelineKey(p.Orchestrator, p.Pipeline) }

// PipelineKey is a pipeline's key in its issues: orchestrator:pipeline.
func PipelineKey(orchestrator, pipeline string) string { return orchestrator + ":" + pipeline }

// Signals of late and failing writers, as the signal list (scan.Signals) shows them:
// kind SignalKind, method SignalMethod, metric MetricRunFailures (observed the
// consecutive failed or aborted runs, threshold FailuresForIssue) or MetricRunInterval
// (observed the seconds since the last run started, baseline the learned cadence,
// threshold LateFactor cadences).
const (
	SignalKind        = "pipeline"
	SignalMethod      = "pipeline_health"
	MetricRunFailures = "run_failures"
	MetricRunInterval = "run_interval"
)

// PipelineSignal is a late or failing writer of a dataset, raised once per failed run
// (failing) or per run missed after the last one (late): Key says which.
type PipelineSignal struct {
	WorkspaceID  string
	DatasetID    string
	Orchestrator string
	Pipeline     string
	// RunID is the failed run (failing) or the last run before the missed one (late).
	RunID     string
	Metric    string
	Observed  float64
	Baseline  *float64
	Threshold float64
	Severity  string
	At        time.Time
}

// Key is what makes the signal once: orchestrator:pipeline:failing|late:run_id.
func (s PipelineSignal) Key() string {
	what := SubtypeLate
	if s.Metric == MetricRunFailures {
		what = SubtypeFailing
	}
	return PipelineKey(s.Orchestrator, s.Pipeline) + ":" + what + ":" + s.RunID
}

// IssueStore keeps the pipeline issues and signals of datasets.
type IssueStore interface {
	// RecordPipelineSignal writes the signal unless one of its key exists; the signal
	// names the dataset's open issue of the pipeline, if any (an existing signal gets it
	// when the issue opened later).
	RecordPipelineSignal(ctx context.Context, s PipelineSignal) error
	// RaisePipelineIssue opens the dataset's issue of the pipeline, or updates its open
	// one (one more detection when the subtype or run changed).
	RaisePipelineIssue(ctx context.Context, p PipelineProblem) (bool, error)
	// ResolvePipelineIssue resolves the dataset's open issue of the pipeline, if any.
	ResolvePipelineIssue(ctx context.Context, workspaceID, datasetID, key, origin string, at time.Time) (bool, error)
	// RecentWrites lists, per workspace, the datasets runs started since since wrote.
	RecentWrites(ctx context.Context, since time.Time) (map[string][]string, error)
}

// judgeWriters turns the health of the pipelines writing datasets into signals and
// issues: a failing or late writer is a signal of each dataset it writes (once per
// failed run, once per missed run); past a threshold it opens (or updates) the
// dataset's issue of that pipeline, which the signal then names; a writer whose newest
// run succeeded resolves it. The runs are read workspace-wide (only statuses, names,
// times and run ids are used).
func (s *Service) judgeWriters(ctx context.Context, workspaceID string, datasetIDs []string, now time.Time) (int, error) {
	if s.issues == nil || len(datasetIDs) == 0 {
		return 0, nil
	}
	runs, err := s.store.RunsWriting(ctx, catalog.Viewer{WorkspaceID: workspaceID, Admin: true, TeamIDs: []string{}}, datasetIDs, historyPerPipeline)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range datasetIDs {
		for _, ph := range Assess(runs[id], now).Pipelines {
			p := PipelineProblem{WorkspaceID: workspaceID, DatasetID: id, Orchestrator: ph.Orchestrator, Pipeline: ph.Pipeline, At: now,
				ConsecutiveFailures: ph.ConsecutiveFailures}
			switch {
			case ph.ConsecutiveFailures >= FailuresForIssue:
				p.Subtype, p.Severity, p.RunID = SubtypeFailing, "critical", ph.FailingRun.RunID
				p.Origin = "orchestrator:" + ph.Orchestrator + ":" + ph.FailingRun.RunID
			case ph.ConsecutiveFailures == 0 && ph.Cadence != nil && now.After(lateForIssue(ph)):
				by := lateForIssue(ph)
				p.Subtype, p.Severity, p.RunID, p.ExpectedBy = SubtypeLate, "warning", ph.LastRun.RunID, &by
				p.Origin = "system:pipeline_late"
			case ph.LastRun.Status == StatusSuccess:
				if _, err := s.issues.ResolvePipelineIssue(ctx, workspaceID, id, p.Key(), "orchestrator:"+ph.Orchestrator+":"+ph.LastRun.RunID, now); err != nil {
					return n, err
				}
			}
			if p.Subtype != "" {
				if _, err := s.issues.RaisePipelineIssue(ctx, p); err != nil {
					return n, err
				}
				n++
			}
			if sg, ok := signalOf(workspaceID, id, ph, now); ok {
				if err := s.issues.RecordPipelineSignal(ctx, sg); err != nil {
					return n, err
				}
			}
		}
	}
	return n, nil
}

// signalOf is the signal of a failing or late writer of a dataset at now; a healthy one
// has none.
func signalOf(workspaceID, datasetID string, ph PipelineHealth, now time.Time) (PipelineSignal, bool) {
	sg := PipelineSignal{WorkspaceID: workspaceID, DatasetID: datasetID, Orchestrator: ph.Orchestrator, Pipeline: ph.Pipeline, At: now}
	switch ph.Status {
	case HealthFailing:
		sg.Metric, sg.RunID = MetricRunFailures, ph.FailingRun.RunID
		sg.Observed, sg.Threshold, sg.Severity = float64(ph.ConsecutiveFailures), FailuresForIssue, "warning"
		if ph.ConsecutiveFailures >= FailuresForIssue {
			sg.Severity = "critical"
		}
	case HealthLate:
		cadence := ph.Cadence.Seconds()
		sg.Metric, sg.RunID, sg.Severity = MetricRunInterval, ph.LastRun.RunID, "warning"
		sg.Observed, sg.Baseline, sg.Threshold = now.Sub(ph.LastRun.StartedAt).Seconds(), &cadence, cadence*LateFactor
	default:
		return PipelineSignal{}, false
	}
	return sg, true
}

// lateForIssue is when a late writer becomes an issue: LateCadencesForIssue cadences
// after its last start.
func lateForIssue(ph PipelineHealth) time.Time {
	return ph.LastRun.StartedAt.Add(time.Duration(float64(*ph.Cadence) * LateCadencesForIssue))
}

// CheckJobKind is the job that runs CheckPipelines (queued every minute, one at a time).
const CheckJobKind = "orchestrator.check_pipelines"

// recentWindow is how far back the periodic check looks for written datasets.
const recentWindow = 60 * 24 * time.Hour

// CheckPipelines judges the writers of every dataset a run wrote recently at the
// service clock's now, so a run that never came opens its late issue without a new
// report. It runs as a job without a principal and returns how many writers are past a
// threshold.
func (s *Service) CheckPipelines(ctx context.Context) (int, error) {
	if s.issues == nil {
		return 0, nil
	}
	now := s.clock.Now()
	byWorkspace, err := s.issues.RecentWrites(ctx, now.Add(-recentWindow))
	if err != nil {
		return 0, err
	}
	n := 0
	for ws, ids := range byWorkspace {
		k, err := s.judgeWriters(ctx, ws, ids, now)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
