package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/datadiff"
)

// ReconcileStore implements datadiff.CheckStore.
type ReconcileStore struct{ db *DB }

// Reconciles returns the store of declared reconciliation checks.
func (db *DB) Reconciles() *ReconcileStore { return &ReconcileStore{db: db} }

var _ datadiff.CheckStore = (*ReconcileStore)(nil)

const reconcileCols = `c.id::text, c.workspace_id::text, c.dataset_id::text, c.other_id::text, c.name, c.group_by, c.sum_columns,
	c.tolerance_pct, c.created_by, c.created_at, c.last_result`

func scanReconcileCheck(r pgx.CollectableRow) (datadiff.Check, error) {
	var c datadiff.Check
	var groupBy, sums, last []byte
	if err := r.Scan(&c.ID, &c.WorkspaceID, &c.DatasetID, &c.OtherID, &c.Name, &groupBy, &sums, &c.TolerancePct, &c.CreatedBy,
		&c.CreatedAt, &last); err != nil {
		return c, err
	}
	if err := json.Unmarshal(groupBy, &c.GroupBy); err != nil {
		return c, err
	}
	if err := json.Unmarshal(sums, &c.SumColumns); err != nil {
		return c, err
	}
	if last != nil {
		c.LastResult = &datadiff.CheckResult{}
		if err := json.Unmarshal(last, c.LastResult); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (s *ReconcileStore) query(ctx context.Context, where string, args ...any) ([]datadiff.Check, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+reconcileCols+` FROM reconcile_checks c WHERE `+where+` ORDER BY c.created_at, c.id`, args...)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanReconcileCheck)
	if out == nil {
		out = []datadiff.Check{}
	}
	return out, translate(err)
}

// CreateReconcileCheck inserts a check.
func (s *ReconcileStore) CreateReconcileCheck(ctx context.Context, c datadiff.Check) error {
	groupBy, err := json.Marshal(c.GroupBy)
	if err != nil {
		return vigia.Internal(err)
	}
	sums, err := json.Marshal(c.SumColumns)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO reconcile_checks (id, workspace_id, dataset_id, other_id, name, group_by, sum_columns,
		tolerance_pct, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		c.ID, c.WorkspaceID, c.DatasetID, c.OtherID, c.Name, groupBy, sums, c.TolerancePct, c.CreatedBy, c.CreatedAt)
	return translate(err)
}

// ReconcileChecks lists a workspace's checks, oldest first.
func (s *ReconcileStore) ReconcileChecks(ctx context.Context, workspaceID string) ([]datadiff.Check, error) {
	return s.query(ctx, `c.workspace_id = $1`, workspaceID)
}

// ReconcileCheck returns one check of the workspace.
func (s *ReconcileStore) ReconcileCheck(ctx context.Context, workspaceID, id string) (datadiff.Check, error) {
	out, err := s.query(ctx, `c.workspace_id = $1 AND c.id = $2`, workspaceID, id)
	if err != nil {
		return datadiff.Check{}, err
	}
	if len(out) == 0 {
		return datadiff.Check{}, vigia.NotFound()
	}
	return out[0], nil
}

// ConnectionReconcileChecks lists the checks either of whose live datasets is on the connection.
func (s *ReconcileStore) ConnectionReconcileChecks(ctx context.Context, workspaceID, connectionID string) ([]datadiff.Check, error) {
	return s.query(ctx, `c.workspace_id = $1 AND EXISTS (SELECT 1 FROM datasets d WHERE d.id IN (c.dataset_id, c.other_id)
		AND d.connection_id = $2 AND d.dropped_at IS NULL)`, workspaceID, connectionID)
}

// openReconcileIssue returns the check's open (or acknowledged) issue, if any.
func openReconcileIssue(ctx context.Context, q querier, c datadiff.Check) (*string, string, error) {
	var id *string
	var status string
	err := q.QueryRow(ctx, `SELECT id::text, status FROM issues WHERE dataset_id = $1 AND type = 'reconciliation'
		AND details->>'check_id' = $2 AND status IN ('open', 'acknowledged')`, c.DatasetID, c.ID).Scan(&id, &status)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, "", translate(err)
	}
	return id, status, nil
}

func resolveReconcileIssue(ctx context.Context, q querier, workspaceID, id, from, origin string, at time.Time) error {
	if _, err := q.Exec(ctx, `UPDATE issues SET status = 'resolved', resolved_at = $2, updated_at = $2 WHERE id = $1`, id, at); err != nil {
		return translate(err)
	}
	_, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
		VALUES ($1, $2, $3, $4, 'resolved', $5, 'auto_resolved', $6)`, vigia.NewID(), id, workspaceID, from, origin, at)
	return translate(err)
}

// DeleteReconcileCheck deletes a check and resolves its open issue.
func (s *ReconcileStore) DeleteReconcileCheck(ctx context.Context, workspaceID, id string, at time.Time) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		c, err := s.ReconcileCheck(ctx, workspaceID, id)
		if err != nil {
			return err
		}
		q := s.db.q(ctx)
		openID, status, err := openReconcileIssue(ctx, q, c)
		if err != nil {
			return err
		}
		if openID != nil {
			if err := resolveReconcileIssue(ctx, q, workspaceID, *openID, status, "reconcile", at); err != nil {
				return err
			}
		}
		_, err = q.Exec(ctx, `DELETE FROM reconcile_checks WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
		return translate(err)
	})
}

// storedGroupDiff is a differing group as the issue's details keep it.
type storedGroupDiff struct {
	Group  []*string            `json:"group"`
	Code   string               `json:"code"`
	CountA int64                `json:"count_a"`
	CountB int64                `json:"count_b"`
	Sums   map[string][2]string `json:"sums,omitempty"`
}

// SaveReconcileResult keeps a run as the check's last result and opens, updates or
// resolves the check's reconciliation issue, as SaveCheck does for contracts.
func (s *ReconcileStore) SaveReconcileResult(ctx context.Context, c datadiff.Check, datasetName string, r datadiff.CheckResult) error {
	last, err := json.Marshal(r)
	if err != nil {
		return vigia.Internal(err)
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		tag, err := q.Exec(ctx, `UPDATE reconcile_checks SET last_result = $2 WHERE id = $1`, c.ID, last)
		if err != nil {
			return translate(err)
		}
		if tag.RowsAffected() == 0 {
			return nil // deleted meanwhile
		}
		if r.Status == datadiff.StatusNotEvaluated {
			return nil
		}
		origin := "reconcile"
		if r.ScanID != nil {
			origin = "scan:" + *r.ScanID
		}
		openID, openStatus, err := openReconcileIssue(ctx, q, c)
		if err != nil {
			return err
		}
		if r.Status == "passed" {
			if openID == nil {
				return nil
			}
			return resolveReconcileIssue(ctx, q, c.WorkspaceID, *openID, openStatus, origin, r.RunAt)
		}
		groups := make([]storedGroupDiff, 0, len(r.Differing))
		for _, d := range r.Differing {
			groups = append(groups, storedGroupDiff{Group: d.Group, Code: d.Code, CountA: d.CountA, CountB: d.CountB, Sums: d.Sums})
		}
		details, err := json.Marshal(map[string]any{"check_id": c.ID, "check_name": c.Name, "other_id": c.OtherID,
			"failed_groups": r.FailedGroups, "groups": r.Groups, "differing": groups})
		if err != nil {
			return vigia.Internal(err)
		}
		params, err := json.Marshal(map[string]any{"check": c.Name, "dataset": datasetName, "failed_groups": r.FailedGroups})
		if err != nil {
			return vigia.Internal(err)
		}
		title := fmt.Sprintf("Reconciliation %s of %s failed: %d groups differ", c.Name, datasetName, r.FailedGroups)
		if openID != nil {
			// A second run for the same scan (the consumer's retry) counts no new detection.
			_, err := q.Exec(ctx, `UPDATE issues SET details = $2, title = $3, title_params = $4, updated_at = $5,
				detections = detections + CASE WHEN $6::uuid IS NULL OR last_scan_id IS DISTINCT FROM $6::uuid THEN 1 ELSE 0 END,
				last_scan_id = coalesce($6::uuid, last_scan_id) WHERE id = $1`, *openID, details, title, params, r.RunAt, r.ScanID)
			return translate(err)
		}
		id := vigia.NewID()
		if _, err := q.Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, title, title_key, title_params, details,
			first_scan_id, last_scan_id, created_at, updated_at) VALUES ($1, $2, $3, 'reconciliation', 'critical', $4, 'issue.reconciliation',
			$5, $6, $7, $7, $8, $8)`, id, c.WorkspaceID, c.DatasetID, title, params, details, r.ScanID, r.RunAt); err != nil {
			return translate(err)
		}
		if _, err = q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), id, c.WorkspaceID, origin, r.RunAt); err != nil {
			return translate(err)
		}
		if r.ScanID != nil {
			return nil // the scan's finished alerts carry it
		}
		// Run on demand, outside a scan: its own alert.
		return writeIssueOpened(ctx, q, c.WorkspaceID, id, c.DatasetID, "critical", r.RunAt)
	})
}
