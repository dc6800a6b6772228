package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/incident"
)

// IncidentStore implements incident.Store.
type IncidentStore struct{ db *DB }

// Incidents returns the incident store.
func (db *DB) Incidents() *IncidentStore { return &IncidentStore{db: db} }

// OpenIssues returns open and acknowledged issues of live datasets.
func (s *IncidentStore) OpenIssues(ctx context.Context, ws string) ([]incident.OpenIssue, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT i.id::text, i.dataset_id::text, i.column_name, i.severity FROM issues i
		JOIN datasets d ON d.id = i.dataset_id AND d.dropped_at IS NULL
		WHERE i.workspace_id = $1 AND i.status IN ('open', 'acknowledged') AND i.type NOT IN ('modeling', 'slo_breach')
		ORDER BY i.dataset_id, i.id`, ws)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (incident.OpenIssue, error) {
		var is incident.OpenIssue
		err := r.Scan(&is.ID, &is.DatasetID, &is.Column, &is.Severity)
		return is, err
	})
	return out, translate(err)
}

const incidentSelect = `SELECT i.id::text, i.workspace_id::text, i.status, i.root_dataset_id::text, i.severity,
	i.issue_ids::text[], i.dataset_ids::text[], i.scan_id::text, i.impact, i.created_at, i.updated_at, i.resolved_at FROM incidents i`

func scanIncident(r pgx.Row) (incident.Incident, error) {
	var in incident.Incident
	var impact []byte
	if err := r.Scan(&in.ID, &in.WorkspaceID, &in.Status, &in.RootDatasetID, &in.Severity, &in.IssueIDs, &in.DatasetIDs,
		&in.ScanID, &impact, &in.CreatedAt, &in.UpdatedAt, &in.ResolvedAt); err != nil {
		return in, err
	}
	return in, json.Unmarshal(impact, &in.Impact)
}

// OpenIncidents returns the workspace's open incidents.
func (s *IncidentStore) OpenIncidents(ctx context.Context, ws string) ([]incident.Incident, error) {
	rows, err := s.db.q(ctx).Query(ctx, incidentSelect+` WHERE i.workspace_id = $1 AND i.status = 'open' ORDER BY i.created_at, i.id`, ws)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (incident.Incident, error) { return scanIncident(r) })
	return out, translate(err)
}

// SaveIncident inserts or updates an incident.
func (s *IncidentStore) SaveIncident(ctx context.Context, in incident.Incident) error {
	impact, err := json.Marshal(in.Impact)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO incidents (id, workspace_id, status, root_dataset_id, severity, issue_ids, dataset_ids,
		scan_id, impact, created_at, updated_at, resolved_at)
		VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7::uuid[], $8, $9, $10, $11, $12)
		ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, root_dataset_id = EXCLUDED.root_dataset_id,
		   severity = EXCLUDED.severity, issue_ids = EXCLUDED.issue_ids, dataset_ids = EXCLUDED.dataset_ids,
		   scan_id = EXCLUDED.scan_id, impact = EXCLUDED.impact, updated_at = EXCLUDED.updated_at, resolved_at = EXCLUDED.resolved_at`,
		in.ID, in.WorkspaceID, in.Status, in.RootDatasetID, in.Severity, in.IssueIDs, in.DatasetIDs, in.ScanID, impact,
		in.CreatedAt, in.UpdatedAt, in.ResolvedAt)
	return translate(err)
}

// Incidents lists incidents whose root the viewer can see, newest first.
func (s *IncidentStore) Incidents(ctx context.Context, v catalog.Viewer, f incident.Filter) (vigia.List[incident.Incident], error) {
	cond := `i.workspace_id = $1 AND i.root_dataset_id IS NOT NULL AND ` + VisibleSQL("i.root_dataset_id", 2, 3) + ` AND ($4::text IS NULL OR i.status = $4)` +
		` AND ($5::text IS NULL OR i.severity = $5)`
	args := []any{v.WorkspaceID, v.TeamIDs, v.Admin, f.Status, f.Severity}
	var out vigia.List[incident.Incident]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM incidents i WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, incidentSelect+` WHERE `+cond+` ORDER BY i.updated_at DESC, i.id DESC LIMIT $6 OFFSET $7`,
		append(args, f.Page.Limit, f.Page.Offset)...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (incident.Incident, error) { return scanIncident(r) })
	return out, translate(err)
}

// IncidentByID returns an incident whose root the viewer can see.
func (s *IncidentStore) IncidentByID(ctx context.Context, v catalog.Viewer, id string) (incident.Incident, error) {
	in, err := scanIncident(s.db.q(ctx).QueryRow(ctx, incidentSelect+` WHERE i.id = $1 AND i.workspace_id = $2
		AND i.root_dataset_id IS NOT NULL AND `+VisibleSQL("i.root_dataset_id", 3, 4), id, v.WorkspaceID, v.TeamIDs, v.Admin))
	return in, translate(err)
}

// IssueRef returns an issue's dataset and column when the viewer can see the dataset.
func (s *IncidentStore) IssueRef(ctx context.Context, v catalog.Viewer, id string) (incident.OpenIssue, error) {
	var is incident.OpenIssue
	err := s.db.q(ctx).QueryRow(ctx, `SELECT i.id::text, i.dataset_id::text, i.column_name, i.severity FROM issues i
		JOIN datasets d ON d.id = i.dataset_id AND d.dropped_at IS NULL
		WHERE i.id = $1 AND i.workspace_id = $2 AND `+VisibleSQL("i.dataset_id", 3, 4), id, v.WorkspaceID, v.TeamIDs, v.Admin).
		Scan(&is.ID, &is.DatasetID, &is.Column, &is.Severity)
	return is, translate(err)
}
