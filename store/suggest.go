package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/suggest"
)

// SuggestStore implements suggest.Store.
type SuggestStore struct{ db *DB }

// Suggestions returns the store of suggestions.
func (db *DB) Suggestions() *SuggestStore { return &SuggestStore{db: db} }

var _ suggest.Store = (*SuggestStore)(nil)

// ScanDatasets implements suggest.Store.
func (s *SuggestStore) ScanDatasets(ctx context.Context, ws, scanID string) ([]catalog.Dataset, map[string]map[string]bool, error) {
	q := s.db.q(ctx)
	rows, err := q.Query(ctx, `SELECT sc.dataset_id::text FROM scores sc JOIN datasets d ON d.id = sc.dataset_id
		WHERE sc.scan_id = $1 AND sc.workspace_id = $2 AND d.dropped_at IS NULL ORDER BY 1`, scanID, ws)
	if err != nil {
		return nil, nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ids) == 0 {
		return nil, nil, translate(err)
	}
	details, err := s.db.Catalog().DatasetDetails(ctx, catalog.Viewer{WorkspaceID: ws, TeamIDs: []string{}, Admin: true}, ids, 1)
	if err != nil {
		return nil, nil, err
	}
	rows, err = q.Query(ctx, `SELECT dataset_id::text, rule_type || ':' || (params->>'column') FROM rules WHERE dataset_id = ANY($1::uuid[])
		AND rule_type IN ('not_null', 'referential') AND params->>'column' IS NOT NULL`, ids)
	if err != nil {
		return nil, nil, translate(err)
	}
	has := map[string]map[string]bool{}
	for rows.Next() {
		var ds, col string
		if err := rows.Scan(&ds, &col); err != nil {
			rows.Close()
			return nil, nil, translate(err)
		}
		if has[ds] == nil {
			has[ds] = map[string]bool{}
		}
		has[ds][col] = true
	}
	if err := rows.Err(); err != nil {
		return nil, nil, translate(err)
	}
	out := make([]catalog.Dataset, 0, len(ids))
	for _, id := range ids {
		if d, ok := details[id]; ok {
			out = append(out, d)
		}
	}
	return out, has, nil
}

// SaveScanSuggestions implements suggest.Store: one round trip for the whole scan (an
// upsert of every proposal from arrays, then a delete of the retired categories' open
// suggestions no longer proposed, joined against the same arrays).
func (s *SuggestStore) SaveScanSuggestions(ctx context.Context, ws string, sets []suggest.DatasetSuggestions, retire []string, at time.Time) error {
	if len(sets) == 0 {
		return nil
	}
	var ids, datasets, categories, signatures, columns []string
	var keepDatasets, keepCategories, keepSignatures []string
	var params [][]byte
	var estimated []*int64
	scanned := make([]string, 0, len(sets))
	for _, set := range sets {
		scanned = append(scanned, set.DatasetID)
		// One row per (dataset, signature): a later proposal of the same signature
		// refreshes what a second upsert of it would (params, estimate).
		seen := map[string]int{}
		for _, sg := range set.Suggestions {
			keepDatasets = append(keepDatasets, set.DatasetID)
			keepCategories = append(keepCategories, sg.Category)
			keepSignatures = append(keepSignatures, sg.Signature)
			b, err := json.Marshal(sg.Params)
			if err != nil {
				return vigia.Internal(err)
			}
			if i, ok := seen[sg.Signature]; ok {
				params[i], estimated[i] = b, sg.EstimatedRowsSample
				continue
			}
			seen[sg.Signature] = len(ids)
			ids = append(ids, vigia.NewID())
			datasets = append(datasets, set.DatasetID)
			categories = append(categories, sg.Category)
			signatures = append(signatures, sg.Signature)
			columns = append(columns, sg.Column)
			params = append(params, b)
			estimated = append(estimated, sg.EstimatedRowsSample)
		}
	}
	batch := &pgx.Batch{}
	if len(ids) > 0 {
		batch.Queue(`INSERT INTO suggestions (id, workspace_id, dataset_id, category, signature, column_name, params,
			estimated_rows_sample, created_at, updated_at)
			SELECT u.id, $1, u.dataset_id, u.category, u.signature, u.column_name, u.params, u.estimated, $2, $2
			FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::jsonb[], $9::bigint[])
				AS u(id, dataset_id, category, signature, column_name, params, estimated)
			ON CONFLICT (dataset_id, signature) DO UPDATE SET params = EXCLUDED.params, estimated_rows_sample = EXCLUDED.estimated_rows_sample,
			updated_at = EXCLUDED.updated_at WHERE suggestions.status = 'open'`,
			ws, at, ids, datasets, categories, signatures, columns, params, estimated)
	}
	if len(retire) > 0 {
		// The kept signatures of a retired category are the dataset's proposals of it.
		batch.Queue(`DELETE FROM suggestions s WHERE s.workspace_id = $1 AND s.dataset_id = ANY($2::uuid[])
			AND s.category = ANY($3::text[]) AND s.status = 'open'
			AND NOT EXISTS (SELECT 1 FROM unnest($4::uuid[], $5::text[], $6::text[]) AS k(dataset_id, category, signature)
				WHERE k.dataset_id = s.dataset_id AND k.category = s.category AND k.signature = s.signature)`,
			ws, scanned, retire, keepDatasets, keepCategories, keepSignatures)
	}
	if batch.Len() == 0 {
		return nil
	}
	return translate(s.db.q(ctx).SendBatch(ctx, batch).Close())
}

const suggestionSelect = `SELECT s.id::text, s.workspace_id::text, s.dataset_id::text, d.schema_name || '.' || d.table_name, s.category,
	s.signature, s.column_name, s.status, s.params, s.estimated_rows_sample, s.rule_id::text, s.rehearsal, s.created_at, s.updated_at
	FROM suggestions s JOIN datasets d ON d.id = s.dataset_id`

func scanSuggestion(r pgx.Row) (suggest.Suggestion, error) {
	var sg suggest.Suggestion
	var params, reh []byte
	if err := r.Scan(&sg.ID, &sg.WorkspaceID, &sg.DatasetID, &sg.DatasetName, &sg.Category, &sg.Signature, &sg.Column, &sg.Status,
		&params, &sg.EstimatedRowsSample, &sg.RuleID, &reh, &sg.CreatedAt, &sg.UpdatedAt); err != nil {
		return sg, err
	}
	if err := json.Unmarshal(params, &sg.Params); err != nil {
		return sg, vigia.Internal(err)
	}
	if reh != nil {
		sg.Rehearsal = &suggest.Rehearsal{}
		if err := json.Unmarshal(reh, sg.Rehearsal); err != nil {
			return sg, vigia.Internal(err)
		}
	}
	return sg, nil
}

// Suggestions implements suggest.Store: newest first, the datasets v can see.
func (s *SuggestStore) Suggestions(ctx context.Context, v catalog.Viewer, category, datasetID *string, page vigia.Page, status *string) (vigia.List[suggest.Suggestion], error) {
	f := visibleFilter("s.workspace_id", v)
	if category != nil {
		f.add("s.category = $%d", *category)
	}
	if datasetID != nil {
		f.add("s.dataset_id::text = $%d", *datasetID)
	}
	if status != nil {
		f.add("s.status = $%d", *status)
	}
	q := s.db.q(ctx)
	var out vigia.List[suggest.Suggestion]
	if err := q.QueryRow(ctx, `SELECT count(*) FROM suggestions s JOIN datasets d ON d.id = s.dataset_id WHERE `+f.sql(), f.args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	args := append(f.args, page.Limit, page.Offset)
	rows, err := q.Query(ctx, suggestionSelect+` WHERE `+f.sql()+fmt.Sprintf(` ORDER BY s.created_at DESC, s.id LIMIT $%d OFFSET $%d`, len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (suggest.Suggestion, error) { return scanSuggestion(r) })
	return out, translate(err)
}

// OpenOf implements suggest.Store: one read, no count.
func (s *SuggestStore) OpenOf(ctx context.Context, v catalog.Viewer, datasetID string, limit int) ([]suggest.Suggestion, error) {
	if !vigia.ValidID(datasetID) {
		return []suggest.Suggestion{}, nil
	}
	f := visibleFilter("s.workspace_id", v)
	// The uuid parameter, not the column as text: the (dataset_id) index answers.
	f.add("s.dataset_id = $%d::uuid", datasetID)
	f.add("s.status = $%d", suggest.StatusOpen)
	args := append(f.args, limit)
	rows, err := s.db.q(ctx).Query(ctx, suggestionSelect+` WHERE `+f.sql()+fmt.Sprintf(` ORDER BY s.created_at DESC, s.id LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (suggest.Suggestion, error) { return scanSuggestion(r) })
	return out, translate(err)
}

// openOfDetailSQL is OpenOf's read for the detail's batch: the dataset $2 of workspace
// $1 (live, visible to teams $3 or admin $4, the rule written inline for one row), its
// open suggestions, newest first, at most $5.
var openOfDetailSQL = suggestionSelect + ` WHERE s.workspace_id = $1 AND s.dataset_id = $2::uuid AND s.status = '` + suggest.StatusOpen + `'
	AND d.workspace_id = $1 AND d.dropped_at IS NULL AND ` + visibleRowSQL("d.id", 3, 4) + `
	ORDER BY s.created_at DESC, s.id LIMIT $5`

// Suggestion implements suggest.Store.
func (s *SuggestStore) Suggestion(ctx context.Context, v catalog.Viewer, id string) (suggest.Suggestion, error) {
	f := visibleFilter("s.workspace_id", v)
	f.add("s.id::text = $%d", id)
	sg, err := scanSuggestion(s.db.q(ctx).QueryRow(ctx, suggestionSelect+` WHERE `+f.sql(), f.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return suggest.Suggestion{}, vigia.NotFound()
	}
	return sg, translate(err)
}

// SetStatus implements suggest.Store.
func (s *SuggestStore) SetStatus(ctx context.Context, ws, id, status string, ruleID *string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE suggestions SET status = $3, rule_id = coalesce($4::uuid, rule_id), updated_at = $5
		WHERE id = $1 AND workspace_id = $2`, id, ws, status, ruleID, at)
	return translate(err)
}

// SaveRehearsal implements suggest.Store: the counts, status and actor only.
func (s *SuggestStore) SaveRehearsal(ctx context.Context, ws, id string, r suggest.Rehearsal) error {
	b, err := json.Marshal(r)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `UPDATE suggestions SET rehearsal = $3 WHERE id = $1 AND workspace_id = $2`, id, ws, b)
	return translate(err)
}

var _ suggest.TuningFacts = (*SuggestStore)(nil)

// TuningFacts implements suggest.TuningFacts: anomaly histories of the datasets'
// metrics (issues ignored or resolved since since, the largest |z| of the ignored ones,
// the metric's tuning) and the latest evaluations of their active rules with a
// tolerance, with the rows of the dataset's last profile.
func (s *SuggestStore) TuningFacts(ctx context.Context, ws string, ids []string, since time.Time) ([]suggest.AnomalyFact, []suggest.RuleFact, error) {
	q := s.db.q(ctx)
	rows, err := q.Query(ctx, `SELECT i.dataset_id::text, i.metric, i.column_name,
			count(*) FILTER (WHERE i.status = 'ignored'), count(*) FILTER (WHERE i.status = 'resolved'),
			coalesce(max(abs((i.details->>'z')::double precision)) FILTER (WHERE i.status = 'ignored'), 'NaN'::double precision),
			coalesce(t.threshold, $4), coalesce(t.silenced, false)
		FROM issues i LEFT JOIN anomaly_tuning t ON t.dataset_id = i.dataset_id AND t.metric = i.metric AND t.column_name = i.column_name
		WHERE i.workspace_id = $1 AND i.dataset_id = ANY($2::uuid[]) AND i.type = $3 AND i.status IN ('ignored', 'resolved')
		  AND coalesce(i.resolved_at, i.updated_at) >= $5 AND jsonb_typeof(i.details->'z') IS DISTINCT FROM 'string'
		GROUP BY i.dataset_id, i.metric, i.column_name, t.threshold, t.silenced
		HAVING count(*) FILTER (WHERE i.status = 'ignored') >= $6
		ORDER BY 1, 2, 3`, ws, ids, quality.IssueTypeAnomaly, quality.DefaultThreshold, since, suggest.MinIgnoredAnomalies)
	if err != nil {
		return nil, nil, translate(err)
	}
	anomalies, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (suggest.AnomalyFact, error) {
		a := suggest.AnomalyFact{MaxThreshold: quality.MaxThreshold, Step: quality.ThresholdStep}
		err := r.Scan(&a.DatasetID, &a.Metric, &a.Column, &a.Ignored, &a.Resolved, &a.MaxZ, &a.Threshold, &a.Silenced)
		return a, err
	})
	if err != nil {
		return nil, nil, translate(err)
	}
	rows, err = q.Query(ctx, `SELECT r.id::text, r.dataset_id::text, r.rule_type, r.params, r.active,
			coalesce((SELECT p.row_count FROM dataset_profiles p WHERE p.dataset_id = r.dataset_id ORDER BY p.seq DESC LIMIT 1), 0),
			array_agg(rr.status ORDER BY rr.evaluated_at DESC), array_agg(coalesce(rr.observed, 0) ORDER BY rr.evaluated_at DESC)
		FROM rules r JOIN LATERAL (SELECT status, observed, evaluated_at FROM rule_results x WHERE x.rule_id = r.id
			ORDER BY x.evaluated_at DESC LIMIT $3) rr ON true
		WHERE r.workspace_id = $1 AND r.dataset_id = ANY($2::uuid[]) AND r.active
		  AND r.rule_type IN ('not_null', 'unique', 'accepted_values', 'pattern', 'range', 'referential')
		GROUP BY r.id ORDER BY 2, 1`, ws, ids, suggest.ToleranceScans)
	if err != nil {
		return nil, nil, translate(err)
	}
	facts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (suggest.RuleFact, error) {
		var f suggest.RuleFact
		var params []byte
		if err := r.Scan(&f.Rule.ID, &f.DatasetID, &f.Rule.Type, &params, &f.Rule.Active, &f.Rows, &f.Statuses, &f.Observed); err != nil {
			return f, err
		}
		f.Rule.DatasetID = f.DatasetID
		if err := json.Unmarshal(params, &f.Rule.Params); err != nil {
			return f, vigia.Internal(err)
		}
		return f, nil
	})
	return anomalies, facts, translate(err)
}
