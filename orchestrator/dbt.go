package orchestrator

import (
	"context"
	"time"
)

// DBTOrchestrator is the orchestrator of the runs dbt's run results record: one run per
// model, of the pipeline named by the model's unique_id, with the invocation id as run id.
const DBTOrchestrator = "dbt"

// DBTModelRun is a dbt model's result on the dataset it builds.
type DBTModelRun struct {
	UniqueID  string
	DatasetID string
	// Status is dbt's: success, error, skipped (others are not recorded).
	Status    string
	StartedAt time.Time
	EndedAt   *time.Time
}

// dbtStatus maps dbt's model statuses to run statuses: a skipped model (its upstream
// failed) did not refresh its relation, so it counts as an aborted run.
var dbtStatus = map[string]string{"success": StatusSuccess, "error": StatusFailed, "skipped": StatusAborted}

// RecordDBTModels records the model results of a dbt invocation as runs (see
// DBTOrchestrator), so the models' datasets have a pipeline health. Results of an
// unknown status, a pipeline name over MaxPipeline or an invocation without id are not
// recorded. It returns how many runs it recorded. Errors as RecordRun.
func (s *Service) RecordDBTModels(ctx context.Context, invocationID string, models []DBTModelRun) (int, error) {
	if invocationID == "" || len(invocationID) > MaxRunID {
		return 0, nil
	}
	n := 0
	for _, m := range models {
		st, ok := dbtStatus[m.Status]
		if !ok || len(m.UniqueID) > MaxPipeline {
			continue
		}
		start := m.StartedAt
		_, _, err := s.RecordRun(ctx, RunInput{Orchestrator: DBTOrchestrator, Pipeline: m.UniqueID, RunID: invocationID, Status: st,
			StartedAt: &start, EndedAt: m.EndedAt, Outputs: []DatasetRef{{DatasetID: m.DatasetID}}})
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
