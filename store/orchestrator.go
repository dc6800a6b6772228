package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/orchestrator"
)

// OrchestratorStore implements orchestrator.Store.
type OrchestratorStore struct{ db *DB }

// Orchestrators returns the orchestrator run store.
func (db *DB) Orchestrators() *OrchestratorStore { return &OrchestratorStore{db: db} }

var _ orchestrator.Store = (*OrchestratorStore)(nil)

// runColumns selects a run with the datasets it read and wrote and their next scans,
// those the viewer sees only (teams and admin flag in parameters $teams and $admin).
func runColumns(teams, admin int) string {
	return fmt.Sprintf(`r.id::text, r.workspace_id::text, r.orchestrator, r.pipeline, r.run_id, r.status, r.started_at, r.ended_at,
	r.unmatched, r.facets, r.received_at, r.updated_at,
	coalesce((SELECT array_agg(d.dataset_id::text ORDER BY d.dataset_id) FROM orchestrator_run_datasets d WHERE d.run_id = r.id AND d.role = 'input' AND %[1]s), '{}'),
	coalesce((SELECT array_agg(d.dataset_id::text ORDER BY d.dataset_id) FROM orchestrator_run_datasets d WHERE d.run_id = r.id AND d.role = 'output' AND %[1]s), '{}'),
	coalesce((SELECT json_agg(json_build_object('dataset_id', d.dataset_id::text, 'scan_id', ns.scan_id::text, 'profiled_at', ns.profiled_at)
			ORDER BY d.dataset_id)
		FROM orchestrator_run_datasets d CROSS JOIN LATERAL (SELECT p.scan_id, p.profiled_at FROM dataset_profiles p
			WHERE p.dataset_id = d.dataset_id AND p.profiled_at >= coalesce(r.ended_at, r.started_at)
			ORDER BY p.profiled_at, p.seq LIMIT 1) ns
		WHERE d.run_id = r.id AND d.role = 'output' AND %[1]s), '[]')`, VisibleSQL("d.dataset_id", teams, admin))
}

// followedBy is the condition "a dataset the run wrote (that the viewer sees) was next
// profiled by scan $n".
func followedBy(n, teams, admin int) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM orchestrator_run_datasets d WHERE d.run_id = r.id AND d.role = 'output' AND %s
		AND (SELECT p.scan_id FROM dataset_profiles p WHERE p.dataset_id = d.dataset_id AND p.profiled_at >= coalesce(r.ended_at, r.started_at)
			ORDER BY p.profiled_at, p.seq LIMIT 1) = $%d)`, VisibleSQL("d.dataset_id", teams, admin), n)
}

func scanRun(row pgx.CollectableRow) (orchestrator.Run, error) { return scanRunWith(row) }

// scanRunWith reads runColumns, then the extra destinations.
func scanRunWith(row pgx.Row, extra ...any) (orchestrator.Run, error) {
	var r orchestrator.Run
	var facets, scans []byte
	err := row.Scan(append([]any{&r.ID, &r.WorkspaceID, &r.Orchestrator, &r.Pipeline, &r.RunID, &r.Status, &r.StartedAt, &r.EndedAt,
		&r.Unmatched, &facets, &r.ReceivedAt, &r.UpdatedAt, &r.Inputs, &r.Outputs, &scans}, extra...)...)
	if err != nil {
		return r, err
	}
	if len(facets) > 0 {
		r.Facets = json.RawMessage(facets)
	}
	r.NextScans = []orchestrator.NextScan{}
	return r, json.Unmarshal(scans, &r.NextScans)
}

// PutRun inserts or replaces a run with its datasets, in one transaction.
func (s *OrchestratorStore) PutRun(ctx context.Context, v catalog.Viewer, r orchestrator.Run) (orchestrator.Run, bool, error) {
	var out orchestrator.Run
	var created bool
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		var facets any
		if len(r.Facets) > 0 {
			facets = []byte(r.Facets)
		}
		var id string
		err := s.db.q(ctx).QueryRow(ctx, `INSERT INTO orchestrator_runs (id, workspace_id, orchestrator, pipeline, run_id, status,
				started_at, ended_at, unmatched, facets, received_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $11)
			ON CONFLICT (workspace_id, orchestrator, pipeline, run_id) DO UPDATE SET status = EXCLUDED.status,
				started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, unmatched = EXCLUDED.unmatched,
				facets = EXCLUDED.facets, updated_at = EXCLUDED.updated_at
			RETURNING id::text, (xmax = 0)`,
			r.ID, r.WorkspaceID, r.Orchestrator, r.Pipeline, r.RunID, r.Status, r.StartedAt, r.EndedAt, r.Unmatched, facets,
			r.ReceivedAt).Scan(&id, &created)
		if err != nil {
			return translate(err)
		}
		if _, err := s.db.q(ctx).Exec(ctx, `DELETE FROM orchestrator_run_datasets WHERE run_id = $1`, id); err != nil {
			return translate(err)
		}
		if _, err := s.db.q(ctx).Exec(ctx, `INSERT INTO orchestrator_run_datasets (run_id, dataset_id, role)
			SELECT $1, d.id, x.role FROM (SELECT unnest($2::uuid[]) AS id, 'input' AS role
				UNION SELECT unnest($3::uuid[]), 'output') x
			JOIN datasets d ON d.id = x.id AND d.workspace_id = $4
			ON CONFLICT DO NOTHING`, id, r.Inputs, r.Outputs, r.WorkspaceID); err != nil {
			return translate(err)
		}
		rows, err := s.db.q(ctx).Query(ctx, `SELECT `+runColumns(2, 3)+` FROM orchestrator_runs r WHERE r.id = $1`, id, v.TeamIDs, v.Admin)
		if err != nil {
			return translate(err)
		}
		out, err = pgx.CollectExactlyOneRow(rows, scanRun)
		return translate(err)
	})
	return out, created, err
}

// Runs lists a workspace's runs, newest first, with the filter's page and total.
func (s *OrchestratorStore) Runs(ctx context.Context, v catalog.Viewer, f orchestrator.RunFilter) (vigia.List[orchestrator.Run], error) {
	where := `r.workspace_id = $1 AND ($2::text IS NULL OR r.orchestrator = $2) AND ($3::text IS NULL OR r.pipeline = $3)
		AND ($4::text IS NULL OR r.status = $4)
		AND ($5::uuid IS NULL OR EXISTS (SELECT 1 FROM orchestrator_run_datasets d WHERE d.run_id = r.id AND d.dataset_id = $5 AND ` + VisibleSQL("d.dataset_id", 7, 8) + `))
		AND ($6::uuid IS NULL OR ` + followedBy(6, 7, 8) + `)`
	args := []any{v.WorkspaceID, f.Orchestrator, f.Pipeline, f.Status, f.DatasetID, f.ScanID, v.TeamIDs, v.Admin}
	var total int
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM orchestrator_runs r WHERE `+where, args...).Scan(&total); err != nil {
		return vigia.List[orchestrator.Run]{}, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+runColumns(7, 8)+` FROM orchestrator_runs r WHERE `+where+`
		ORDER BY r.started_at DESC, r.id DESC LIMIT $9 OFFSET $10`, append(args, f.Page.Limit, f.Page.Offset)...)
	if err != nil {
		return vigia.List[orchestrator.Run]{}, translate(err)
	}
	items, err := pgx.CollectRows(rows, scanRun)
	if items == nil {
		items = []orchestrator.Run{}
	}
	return vigia.List[orchestrator.Run]{Items: items, Total: total}, translate(err)
}

// RunsWriting returns, per dataset, the latest runs of each pipeline that wrote it, in
// one query.
func (s *OrchestratorStore) RunsWriting(ctx context.Context, v catalog.Viewer, datasetIDs []string, perPipeline int) (map[string][]orchestrator.Run, error) {
	out := map[string][]orchestrator.Run{}
	if len(datasetIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+runColumns(4, 5)+`, r.written::text FROM (
			SELECT r.*, d.dataset_id AS written, row_number() OVER (PARTITION BY d.dataset_id, r.orchestrator, r.pipeline
				ORDER BY r.started_at DESC, r.updated_at DESC) AS n
			FROM orchestrator_runs r JOIN orchestrator_run_datasets d ON d.run_id = r.id AND d.role = 'output' AND d.dataset_id = ANY($2::uuid[])
			WHERE r.workspace_id = $1) r
		WHERE r.n <= $3 ORDER BY r.started_at DESC, r.id DESC`, v.WorkspaceID, datasetIDs, perPipeline, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var written string
		r, err := scanRunWith(rows, &written)
		if err != nil {
			return nil, translate(err)
		}
		out[written] = append(out[written], r)
	}
	return out, translate(rows.Err())
}

// LiveDatasets returns which of ids are live (not dropped) datasets of the workspace.
func (s *OrchestratorStore) LiveDatasets(ctx context.Context, workspaceID string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text FROM datasets WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND dropped_at IS NULL`,
		workspaceID, ids)
	if err != nil {
		return nil, translate(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, id := range got {
		out[id] = true
	}
	return out, translate(err)
}

var _ incident.Changes = (*OrchestratorStore)(nil)

// RunsBefore returns the runs that wrote one of datasetIDs (those v sees) with one of
// scanIDs as the first scan to profile that dataset after the run ended, newest first,
// one row per run, dataset and scan.
func (s *OrchestratorStore) RunsBefore(ctx context.Context, v catalog.Viewer, scanIDs, datasetIDs []string) ([]incident.ChangeRun, error) {
	if len(scanIDs) == 0 || len(datasetIDs) == 0 {
		return nil, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT r.id::text, r.orchestrator, r.pipeline, r.run_id, r.status, r.started_at, r.ended_at,
			d.dataset_id::text, nx.scan_id::text
		FROM orchestrator_run_datasets d
		JOIN orchestrator_runs r ON r.id = d.run_id AND r.workspace_id = $1
		CROSS JOIN LATERAL (SELECT p.scan_id FROM dataset_profiles p WHERE p.dataset_id = d.dataset_id
			AND p.profiled_at >= coalesce(r.ended_at, r.started_at) ORDER BY p.profiled_at, p.seq LIMIT 1) nx
		WHERE d.role = 'output' AND d.dataset_id = ANY($2::uuid[]) AND nx.scan_id = ANY($3::uuid[]) AND `+VisibleSQL("d.dataset_id", 4, 5)+`
		ORDER BY r.started_at DESC, r.id DESC LIMIT 1000`, v.WorkspaceID, datasetIDs, scanIDs, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (incident.ChangeRun, error) {
		var c incident.ChangeRun
		err := r.Scan(&c.ID, &c.Orchestrator, &c.Pipeline, &c.RunID, &c.Status, &c.StartedAt, &c.EndedAt, &c.DatasetID, &c.ScanID)
		return c, err
	})
	return out, translate(err)
}
