package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/orchestrator"
)

var _ orchestrator.IssueStore = (*OrchestratorStore)(nil)

// RaisePipelineIssue opens or updates the dataset's one open issue of a pipeline.
func (s *OrchestratorStore) RaisePipelineIssue(ctx context.Context, p orchestrator.PipelineProblem) (bool, error) {
	details := map[string]any{"pipeline_key": p.Key(), "orchestrator": p.Orchestrator, "pipeline": p.Pipeline, "run_id": p.RunID,
		"consecutive_failures": p.ConsecutiveFailures}
	if p.ExpectedBy != nil {
		details["expected_by"] = p.ExpectedBy.UTC().Format(time.RFC3339)
	}
	det, err := json.Marshal(details)
	if err != nil {
		return false, vigia.Internal(err)
	}
	params, err := json.Marshal(map[string]any{"pipeline": p.Pipeline, "orchestrator": p.Orchestrator, "failures": p.ConsecutiveFailures})
	if err != nil {
		return false, vigia.Internal(err)
	}
	key := "issue.pipeline." + p.Subtype
	title := fmt.Sprintf("Pipeline %s (%s) failed %d times in a row", p.Pipeline, p.Orchestrator, p.ConsecutiveFailures)
	if p.Subtype == orchestrator.SubtypeLate {
		title = fmt.Sprintf("Pipeline %s (%s) is late", p.Pipeline, p.Orchestrator)
	}
	var opened bool
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var id, prev, prevRun string
		err := q.QueryRow(ctx, `SELECT id::text, coalesce(subtype, ''), coalesce(details->>'run_id', '') FROM issues
			WHERE dataset_id = $1 AND type = 'pipeline' AND details->>'pipeline_key' = $2 AND status IN ('open', 'acknowledged') FOR UPDATE`,
			p.DatasetID, p.Key()).Scan(&id, &prev, &prevRun)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return translate(err)
		default:
			// The same problem seen again (the periodic check) is no new detection.
			_, err := q.Exec(ctx, `UPDATE issues SET subtype = $2, severity = $3, title = $4, title_key = $5, title_params = $6,
				details = $7, updated_at = $8, detections = detections + CASE WHEN $9 THEN 1 ELSE 0 END WHERE id = $1`,
				id, p.Subtype, p.Severity, title, key, params, det, p.At, prev != p.Subtype || prevRun != p.RunID)
			return translate(err)
		}
		id, opened = vigia.NewID(), true
		if _, err := q.Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, subtype, severity, title, title_key, title_params,
			details, created_at, updated_at) VALUES ($1, $2, $3, 'pipeline', $4, $5, $6, $7, $8, $9, $10, $10)`,
			id, p.WorkspaceID, p.DatasetID, p.Subtype, p.Severity, title, key, params, det, p.At); err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), id, p.WorkspaceID, p.Origin, p.At); err != nil {
			return translate(err)
		}
		return writeIssueOpened(ctx, q, p.WorkspaceID, id, p.DatasetID, p.Severity, p.At)
	})
	return opened, err
}

// ResolvePipelineIssue resolves the dataset's open issue of a pipeline, if any.
func (s *OrchestratorStore) ResolvePipelineIssue(ctx context.Context, workspaceID, datasetID, key, origin string, at time.Time) (bool, error) {
	var done bool
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var id, status string
		err := q.QueryRow(ctx, `SELECT id::text, status FROM issues WHERE workspace_id = $1 AND dataset_id = $2 AND type = 'pipeline'
			AND details->>'pipeline_key' = $3 AND status IN ('open', 'acknowledged') FOR UPDATE`, workspaceID, datasetID, key).Scan(&id, &status)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `UPDATE issues SET status = 'resolved', resolved_at = $2, updated_at = $2 WHERE id = $1`, id, at); err != nil {
			return translate(err)
		}
		done = true
		_, err = q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, $4, 'resolved', $5, 'auto_resolved', $6)`, vigia.NewID(), id, workspaceID, status, origin, at)
		return translate(err)
	})
	return done, err
}

// RecentWrites lists, per workspace, the live datasets written by runs started since since.
func (s *OrchestratorStore) RecentWrites(ctx context.Context, since time.Time) (map[string][]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT r.workspace_id::text, d.dataset_id::text FROM orchestrator_runs r
		JOIN orchestrator_run_datasets d ON d.run_id = r.id AND d.role = 'output'
		JOIN datasets ds ON ds.id = d.dataset_id AND ds.dropped_at IS NULL
		WHERE r.started_at >= $1 ORDER BY 1, 2`, since)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var ws, id string
		if err := rows.Scan(&ws, &id); err != nil {
			return nil, translate(err)
		}
		out[ws] = append(out[ws], id)
	}
	return out, translate(rows.Err())
}

// RecordPipelineSignal writes a late or failing writer's signal once per key, naming the
// dataset's open issue of the pipeline; a signal already written gets that issue when
// it opened since, and is otherwise left alone (the minutely check rewrites nothing).
func (s *OrchestratorStore) RecordPipelineSignal(ctx context.Context, sg orchestrator.PipelineSignal) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO signals (id, workspace_id, dataset_id, scan_id, source, orchestrator, pipeline, run_id,
			signal_key, kind, metric, observed, baseline, threshold, anomalous, issue_id, created_at, method, severity)
		SELECT $1::uuid, $2::uuid, $3::uuid, NULL, 'orchestrator', $4::text, $5::text, $6::text, $7::text, $8::text, $9::text,
			$10::float8, $11::float8, $12::float8, true,
			(SELECT i.id FROM issues i WHERE i.dataset_id = $3::uuid AND i.type = 'pipeline' AND i.details->>'pipeline_key' = $13::text
			   AND i.status IN ('open', 'acknowledged') LIMIT 1), $14::timestamptz, $15::text, $16::text
		ON CONFLICT (dataset_id, signal_key) WHERE signal_key IS NOT NULL
		DO UPDATE SET issue_id = EXCLUDED.issue_id WHERE signals.issue_id IS NULL AND EXCLUDED.issue_id IS NOT NULL`,
		vigia.NewID(), sg.WorkspaceID, sg.DatasetID, sg.Orchestrator, sg.Pipeline, sg.RunID, sg.Key(), orchestrator.SignalKind,
		sg.Metric, sg.Observed, sg.Baseline, sg.Threshold, orchestrator.PipelineKey(sg.Orchestrator, sg.Pipeline), sg.At,
		orchestrator.SignalMethod, sg.Severity)
	return translate(err)
}
