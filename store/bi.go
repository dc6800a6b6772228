package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/catalog"
)

// BIStore implements bi.Store.
type BIStore struct{ db *DB }

// BI returns the BI refresh store.
func (db *DB) BI() *BIStore { return &BIStore{db: db} }

var _ bi.Store = (*BIStore)(nil)

// refreshColumns selects a refresh with the datasets it reads that the viewer sees
// (teams and admin flag in parameters $teams and $admin), in the report's order.
func refreshColumns(visible string) string {
	return fmt.Sprintf(`r.id::text, r.workspace_id::text, r.tool, r.bi_dataset_id, r.bi_dataset_name, r.refresh_id, r.status,
	r.started_at, r.ended_at, r.dashboards, r.unmatched, r.received_at, r.updated_at,
	coalesce((SELECT array_agg(d.dataset_id::text ORDER BY d.position) FROM bi_refresh_datasets d WHERE d.refresh_id = r.id AND %s), '{}')`, visible)
}

func scanRefresh(row pgx.CollectableRow) (bi.Refresh, error) {
	var r bi.Refresh
	var dash []byte
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.Tool, &r.BIDatasetID, &r.BIDatasetName, &r.RefreshID, &r.Status, &r.StartedAt,
		&r.EndedAt, &dash, &r.Unmatched, &r.ReceivedAt, &r.UpdatedAt, &r.Inputs); err != nil {
		return r, err
	}
	r.Dashboards = []bi.Dashboard{}
	return r, json.Unmarshal(dash, &r.Dashboards)
}

// PutRefresh inserts or replaces a refresh with its datasets, in one transaction.
func (s *BIStore) PutRefresh(ctx context.Context, v catalog.Viewer, r bi.Refresh) (bi.Refresh, bool, error) {
	dash, err := json.Marshal(r.Dashboards)
	if err != nil {
		return bi.Refresh{}, false, vigia.Internal(err)
	}
	var out bi.Refresh
	var created bool
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var id string
		err := q.QueryRow(ctx, `INSERT INTO bi_refreshes (id, workspace_id, tool, bi_dataset_id, bi_dataset_name, refresh_id, status,
				started_at, ended_at, dashboards, unmatched, received_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $12)
			ON CONFLICT (workspace_id, tool, bi_dataset_id, refresh_id) DO UPDATE SET bi_dataset_name = EXCLUDED.bi_dataset_name,
				status = EXCLUDED.status, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
				dashboards = EXCLUDED.dashboards, unmatched = EXCLUDED.unmatched, updated_at = EXCLUDED.updated_at
			RETURNING id::text, (xmax = 0)`,
			r.ID, r.WorkspaceID, r.Tool, r.BIDatasetID, r.BIDatasetName, r.RefreshID, r.Status, r.StartedAt, r.EndedAt, dash,
			r.Unmatched, r.ReceivedAt).Scan(&id, &created)
		if err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `DELETE FROM bi_refresh_datasets WHERE refresh_id = $1`, id); err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO bi_refresh_datasets (refresh_id, dataset_id, position)
			SELECT $1, d.id, x.n FROM unnest($2::uuid[]) WITH ORDINALITY AS x(id, n)
			JOIN datasets d ON d.id = x.id AND d.workspace_id = $3
			ON CONFLICT DO NOTHING`, id, r.Inputs, r.WorkspaceID); err != nil {
			return translate(err)
		}
		rows, err := q.Query(ctx, `SELECT `+refreshColumns(VisibleSQL("d.dataset_id", 2, 3))+` FROM bi_refreshes r WHERE r.id = $1`,
			id, v.TeamIDs, v.Admin)
		if err != nil {
			return translate(err)
		}
		out, err = pgx.CollectExactlyOneRow(rows, scanRefresh)
		return translate(err)
	})
	return out, created, err
}

// Refreshes lists a workspace's refreshes, newest first, with the filter's page and total.
func (s *BIStore) Refreshes(ctx context.Context, v catalog.Viewer, f bi.RefreshFilter) (vigia.List[bi.Refresh], error) {
	where := `r.workspace_id = $1 AND ($2::text IS NULL OR r.tool = $2) AND ($3::text IS NULL OR r.bi_dataset_id = $3)
		AND ($4::text IS NULL OR r.status = $4)
		AND ($5::uuid IS NULL OR EXISTS (SELECT 1 FROM bi_refresh_datasets d WHERE d.refresh_id = r.id AND d.dataset_id = $5 AND ` +
		VisibleSQL("d.dataset_id", 6, 7) + `))`
	args := []any{v.WorkspaceID, f.Tool, f.BIDatasetID, f.Status, f.DatasetID, v.TeamIDs, v.Admin}
	var total int
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM bi_refreshes r WHERE `+where, args...).Scan(&total); err != nil {
		return vigia.List[bi.Refresh]{}, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+refreshColumns(VisibleSQL("d.dataset_id", 6, 7))+` FROM bi_refreshes r WHERE `+where+`
		ORDER BY r.started_at DESC, r.id DESC LIMIT $8 OFFSET $9`, append(args, f.Page.Limit, f.Page.Offset)...)
	if err != nil {
		return vigia.List[bi.Refresh]{}, translate(err)
	}
	items, err := pgx.CollectRows(rows, scanRefresh)
	if items == nil {
		items = []bi.Refresh{}
	}
	return vigia.List[bi.Refresh]{Items: items, Total: total}, translate(err)
}

// History returns a BI dataset's latest n refreshes, newest first, with every dataset
// they read.
func (s *BIStore) History(ctx context.Context, k bi.Key, n int) ([]bi.Refresh, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+refreshColumns("true")+` FROM bi_refreshes r
		WHERE r.workspace_id = $1 AND r.tool = $2 AND r.bi_dataset_id = $3 ORDER BY r.started_at DESC, r.updated_at DESC LIMIT $4`,
		k.WorkspaceID, k.Tool, k.BIDatasetID, n)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanRefresh)
	return out, translate(err)
}

// RecentKeys lists the BI datasets refreshed since since, in every workspace.
func (s *BIStore) RecentKeys(ctx context.Context, since time.Time) ([]bi.Key, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT workspace_id::text, tool, bi_dataset_id FROM bi_refreshes
		WHERE started_at >= $1 ORDER BY 1, 2, 3`, since)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bi.Key, error) {
		var k bi.Key
		return k, r.Scan(&k.WorkspaceID, &k.Tool, &k.BIDatasetID)
	})
	return out, translate(err)
}

// RaiseIssue opens or updates the BI dataset's one open bi_refresh issue.
func (s *BIStore) RaiseIssue(ctx context.Context, p bi.Problem) (string, bool, error) {
	details := map[string]any{"bi_key": p.Key.String(), "tool": p.Key.Tool, "bi_dataset_id": p.Key.BIDatasetID,
		"bi_dataset_name": p.BIDatasetName, "dashboards": p.Dashboards, "refresh_id": p.RefreshID}
	if p.ExpectedBy != nil {
		details["expected_by"] = p.ExpectedBy.UTC().Format(time.RFC3339)
	}
	det, err := json.Marshal(details)
	if err != nil {
		return "", false, vigia.Internal(err)
	}
	params, err := json.Marshal(map[string]any{"bi_dataset": p.BIDatasetName, "tool": p.Key.Tool})
	if err != nil {
		return "", false, vigia.Internal(err)
	}
	key := "issue.bi_refresh." + p.Subtype
	title := fmt.Sprintf("Refresh of %s (%s) failed", p.BIDatasetName, p.Key.Tool)
	if p.Subtype == bi.SubtypeDelayed {
		title = fmt.Sprintf("Refresh of %s (%s) is late", p.BIDatasetName, p.Key.Tool)
	}
	var id string
	var opened bool
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var prev, prevRefresh string
		err := q.QueryRow(ctx, `SELECT id::text, coalesce(subtype, ''), coalesce(details->>'refresh_id', '') FROM issues
			WHERE workspace_id = $1 AND type = 'bi_refresh' AND details->>'bi_key' = $2 AND status IN ('open', 'acknowledged') FOR UPDATE`,
			p.Key.WorkspaceID, p.Key.String()).Scan(&id, &prev, &prevRefresh)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return translate(err)
		default:
			// The same problem seen again (the periodic check) is no new detection.
			_, err := q.Exec(ctx, `UPDATE issues SET subtype = $2, severity = $3, title = $4, title_key = $5, title_params = $6,
				details = $7, dataset_id = $8, updated_at = $9, detections = detections + CASE WHEN $10 THEN 1 ELSE 0 END WHERE id = $1`,
				id, p.Subtype, p.Severity, title, key, params, det, p.DatasetID, p.At, prev != p.Subtype || prevRefresh != p.RefreshID)
			return translate(err)
		}
		id, opened = vigia.NewID(), true
		if _, err := q.Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, subtype, severity, title, title_key, title_params,
			details, created_at, updated_at) VALUES ($1, $2, $3, 'bi_refresh', $4, $5, $6, $7, $8, $9, $10, $10)`,
			id, p.Key.WorkspaceID, p.DatasetID, p.Subtype, p.Severity, title, key, params, det, p.At); err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), id, p.Key.WorkspaceID, p.Origin, p.At); err != nil {
			return translate(err)
		}
		return writeIssueOpened(ctx, q, p.Key.WorkspaceID, id, p.DatasetID, p.Severity, p.At)
	})
	return id, opened, err
}

// ResolveIssue resolves the BI dataset's open bi_refresh issue, if any.
func (s *BIStore) ResolveIssue(ctx context.Context, k bi.Key, origin string, at time.Time) (bool, error) {
	var done bool
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var id, status string
		err := q.QueryRow(ctx, `SELECT id::text, status FROM issues WHERE workspace_id = $1 AND type = 'bi_refresh'
			AND details->>'bi_key' = $2 AND status IN ('open', 'acknowledged') FOR UPDATE`, k.WorkspaceID, k.String()).Scan(&id, &status)
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
			VALUES ($1, $2, $3, $4, 'resolved', $5, 'auto_resolved', $6)`, vigia.NewID(), id, k.WorkspaceID, status, origin, at)
		return translate(err)
	})
	return done, err
}
