package store

import (
	"context"

	"github.com/vigia-data/vigia/sensitivity"
)

// SensitivityStore implements sensitivity.Store.
type SensitivityStore struct{ db *DB }

// Sensitivity returns the column-sensitivity store.
func (db *DB) Sensitivity() *SensitivityStore { return &SensitivityStore{db: db} }

var _ sensitivity.Store = (*SensitivityStore)(nil)

// Manual returns the manual levels of the datasets' columns.
func (s *SensitivityStore) Manual(ctx context.Context, ids []string) (map[string]map[string]sensitivity.Manual, error) {
	out := map[string]map[string]sensitivity.Manual{}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT dataset_id::text, column_name, level, author_id, set_at FROM column_sensitivity
		WHERE dataset_id = ANY($1::uuid[])`, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ds string
		var m sensitivity.Manual
		if err := rows.Scan(&ds, &m.Column, &m.Level, &m.AuthorID, &m.At); err != nil {
			return nil, translate(err)
		}
		if out[ds] == nil {
			out[ds] = map[string]sensitivity.Manual{}
		}
		out[ds][m.Column] = m
	}
	return out, translate(rows.Err())
}

// Trail returns a dataset's changes, oldest first.
func (s *SensitivityStore) Trail(ctx context.Context, id string) ([]sensitivity.Change, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT column_name, from_level, to_level, author_id, at FROM column_sensitivity_trail
		WHERE dataset_id = $1 ORDER BY id LIMIT 1000`, id)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := []sensitivity.Change{}
	for rows.Next() {
		var c sensitivity.Change
		if err := rows.Scan(&c.Column, &c.From, &c.To, &c.AuthorID, &c.At); err != nil {
			return nil, translate(err)
		}
		out = append(out, c)
	}
	return out, translate(rows.Err())
}

// Derivations returns the column maps of the lineage edges into the dataset from other
// datasets (inferred edges, found by join keys, are not derivations).
func (s *SensitivityStore) Derivations(ctx context.Context, ws, id string) ([]sensitivity.Derivation, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT m->>'to', e.source_id, m->>'from'
		FROM lineage_edges e CROSS JOIN LATERAL jsonb_array_elements(e.column_map) m
		JOIN datasets d ON d.id::text = e.source_id AND d.workspace_id = e.workspace_id
		WHERE e.workspace_id = $1 AND e.target_id = $2 AND e.kind <> 'inferred' AND e.source_id <> e.target_id
		ORDER BY 1, 2, 3`, ws, id)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []sensitivity.Derivation
	for rows.Next() {
		var d sensitivity.Derivation
		if err := rows.Scan(&d.Column, &d.SourceDatasetID, &d.SourceColumn); err != nil {
			return nil, translate(err)
		}
		out = append(out, d)
	}
	return out, translate(rows.Err())
}

// Set records a change and its trail entry in one transaction.
func (s *SensitivityStore) Set(ctx context.Context, id string, c sensitivity.Change) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if c.To == sensitivity.Auto {
			_, err = s.db.q(ctx).Exec(ctx, `DELETE FROM column_sensitivity WHERE dataset_id = $1 AND column_name = $2`, id, c.Column)
		} else {
			_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO column_sensitivity (dataset_id, column_name, level, author_id, set_at)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (dataset_id, column_name) DO UPDATE
				SET level = EXCLUDED.level, author_id = EXCLUDED.author_id, set_at = EXCLUDED.set_at`, id, c.Column, c.To, c.AuthorID, c.At)
		}
		if err != nil {
			return translate(err)
		}
		_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO column_sensitivity_trail (dataset_id, column_name, from_level, to_level, author_id, at)
			VALUES ($1, $2, $3, $4, $5, $6)`, id, c.Column, c.From, c.To, c.AuthorID, c.At)
		return translate(err)
	})
}
