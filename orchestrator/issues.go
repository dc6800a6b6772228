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

// IssueStore keeps the pipeline issues of datasets.
type IssueStore interface {
	// RaisePipelineIssue opens the dataset's issue of the pipeline, or updates its open
	// one (one more detection when the subtype or run changed).
	RaisePipelineIssue(ctx context.Context, p PipelineProblem) (bool, error)
	// ResolvePipelineIssue resolves the dataset's open issue of the pipeline, if any.
	ResolvePipelineIssue(ctx context.Context, workspaceID, datasetID, key, origin string, at time.Time) (bool, error)
	// RecentWrites lists, per workspace, the datasets runs started since since wrote.
	RecentWrites(ctx context.Context, since time.Time) (map[string][]string, error)
}

// judgeWriters turns the health of the pipelines writing datasets into issues: past a
// threshold a writer opens (or updates) the dataset's issue of that pipeline; a writer
// whose newest run succeeded resolves it. The runs are read workspace-wide (only
// statuses, names and run ids are used).
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
				continue
			default:
				continue
			}
			if _, err := s.issues.RaisePipelineIssue(ctx, p); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
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
