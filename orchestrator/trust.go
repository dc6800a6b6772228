package orchestrator

import (
	"context"
	"time"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/trust"
)

// TrustPipelines tells trust decisions the failing and late pipelines writing datasets
// (trust.Pipelines), from the store alone: trust is built before the services this
// package's Service needs.
type TrustPipelines struct{ Store Store }

var _ trust.Pipelines = TrustPipelines{}

// PipelineFacts judges the pipelines writing each dataset at now and returns the
// failing and late ones, in Assess's order. The caller (trust) has checked visibility.
func (t TrustPipelines) PipelineFacts(ctx context.Context, workspaceID string, datasetIDs []string, now time.Time) (map[string][]trust.PipelineFact, error) {
	// Only statuses, pipeline names and run ids leave: the runs' dataset lists are not
	// read, so the workspace-wide view is safe.
	runs, err := t.Store.RunsWriting(ctx, catalog.Viewer{WorkspaceID: workspaceID, Admin: true, TeamIDs: []string{}}, datasetIDs, historyPerPipeline)
	if err != nil {
		return nil, err
	}
	out := map[string][]trust.PipelineFact{}
	for id, rs := range runs {
		for _, p := range Assess(rs, now).Pipelines {
			f := trust.PipelineFact{Orchestrator: p.Orchestrator, Pipeline: p.Pipeline, RunID: p.LastRun.RunID,
				ConsecutiveFailures: p.ConsecutiveFailures, ExpectedBy: p.ExpectedBy}
			switch p.Status {
			case HealthFailing:
				f.Status, f.RunID = trust.PipelineFailing, p.FailingRun.RunID
			case HealthLate:
				f.Status = trust.PipelineLate
			default:
				continue
			}
			out[id] = append(out[id], f)
		}
	}
	return out, nil
}
