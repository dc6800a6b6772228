package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/labelquality"
)

// LabelQualityStore implements labelquality.Store.
type LabelQualityStore struct{ db *DB }

// LabelQuality returns the label-quality store.
func (db *DB) LabelQuality() *LabelQualityStore { return &LabelQualityStore{db: db} }

var _ labelquality.Store = (*LabelQualityStore)(nil)

// LabelQuality implements labelquality.Store.
func (s *LabelQualityStore) LabelQuality(ctx context.Context, ws, datasetID string) (*labelquality.Config, *labelquality.Result, error) {
	var c labelquality.Config
	var res []byte
	err := s.db.q(ctx).QueryRow(ctx, `SELECT label_column, feature_columns, updated_by, updated_at, last_result FROM label_quality
		WHERE dataset_id = $1 AND workspace_id = $2`, datasetID, ws).Scan(&c.LabelColumn, &c.FeatureColumns, &c.UpdatedBy, &c.UpdatedAt, &res)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	if res == nil {
		return &c, nil, nil
	}
	var r labelquality.Result
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, nil, vigia.Internal(err)
	}
	return &c, &r, nil
}

// SaveLabelConfig implements labelquality.Store; a new configuration drops the last result.
func (s *LabelQualityStore) SaveLabelConfig(ctx context.Context, ws, datasetID string, c labelquality.Config) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO label_quality (dataset_id, workspace_id, label_column, feature_columns, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (dataset_id) DO UPDATE SET label_column = EXCLUDED.label_column,
		feature_columns = EXCLUDED.feature_columns, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at, last_result = NULL,
		last_scan_id = NULL`,
		datasetID, ws, c.LabelColumn, c.FeatureColumns, c.UpdatedBy, c.UpdatedAt)
	return translate(err)
}

// SaveLabelResult implements labelquality.Store (nil clears it).
func (s *LabelQualityStore) SaveLabelResult(ctx context.Context, ws, datasetID string, r *labelquality.Result) error {
	var b []byte
	if r != nil {
		var err error
		if b, err = json.Marshal(r); err != nil {
			return vigia.Internal(err)
		}
	}
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE label_quality SET last_result = $3, last_scan_id = NULL WHERE dataset_id = $1 AND workspace_id = $2`,
		datasetID, ws, b)
	return translate(err)
}

// ScanLabelDatasets implements labelquality.Store: configured datasets the scan
// profiled (a score of the scan), live, whose result is not yet the scan's.
func (s *LabelQualityStore) ScanLabelDatasets(ctx context.Context, ws, scanID string) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT lq.dataset_id::text FROM label_quality lq
		JOIN scores sc ON sc.dataset_id = lq.dataset_id AND sc.scan_id = $2
		JOIN datasets d ON d.id = lq.dataset_id AND d.dropped_at IS NULL
		WHERE lq.workspace_id = $1 AND lq.last_scan_id IS DISTINCT FROM $2::uuid ORDER BY 1`, ws, scanID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}

// SaveScanLabelResult implements labelquality.Store.
func (s *LabelQualityStore) SaveScanLabelResult(ctx context.Context, ws, datasetID, scanID string, r *labelquality.Result) error {
	var b []byte
	if r != nil {
		var err error
		if b, err = json.Marshal(r); err != nil {
			return vigia.Internal(err)
		}
	}
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE label_quality SET last_result = $3, last_scan_id = $4 WHERE dataset_id = $1 AND workspace_id = $2`,
		datasetID, ws, b, scanID)
	return translate(err)
}
