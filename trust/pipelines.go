package trust

import (
	"context"
	"time"
)

// Pipeline statuses trust reads (orchestrator pipeline health).
const (
	PipelineFailing = "failing"
	PipelineLate    = "late"
)

// PipelineFact is a pipeline writing a dataset that is failing (its latest finished run
// failed) or late (its next run is overdue), as orchestrator runs tell.
type PipelineFact struct {
	Orchestrator string
	Pipeline     string
	// Status is PipelineFailing or PipelineLate.
	Status string
	// RunID is the orchestrator's id of the failing run, or of the last run when late.
	RunID               string
	ConsecutiveFailures int
	ExpectedBy          *time.Time
}

// Pipelines reports the failing and late pipelines writing datasets of a workspace
// (the orchestrator feature); datasets without such a pipeline are absent.
type Pipelines interface {
	PipelineFacts(ctx context.Context, workspaceID string, datasetIDs []string, now time.Time) (map[string][]PipelineFact, error)
}
