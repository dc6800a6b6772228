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
		feature_columns = EXCLUDED.feature_columns, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at, last_result = NULL`,
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
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE label_quality SET last_result = $3 WHERE dataset_id = $1 AND workspace_id = $2`, datasetID, ws, b)
	return translate(err)
}
