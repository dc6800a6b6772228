package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/readme"
)

// ReadmeStore implements readme.Store.
type ReadmeStore struct{ db *DB }

// Readmes returns the README store.
func (db *DB) Readmes() *ReadmeStore { return &ReadmeStore{db: db} }

var _ readme.Store = (*ReadmeStore)(nil)

// Readme returns what is kept of a dataset's README (nothing yet: all nil).
func (s *ReadmeStore) Readme(ctx context.Context, id string) (readme.Stored, error) {
	var r readme.Stored
	err := s.db.q(ctx).QueryRow(ctx, `SELECT draft_md, edited_by, edited_at, published_md, published_by, published_at
		FROM dataset_readmes WHERE dataset_id = $1`, id).Scan(&r.DraftMD, &r.EditedBy, &r.EditedAt, &r.PublishedMD, &r.PublishedBy, &r.PublishedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return readme.Stored{}, nil
	}
	return r, translate(err)
}

// SaveDraft keeps an edited draft.
func (s *ReadmeStore) SaveDraft(ctx context.Context, id, md, by string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO dataset_readmes (dataset_id, draft_md, edited_by, edited_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (dataset_id) DO UPDATE SET draft_md = EXCLUDED.draft_md, edited_by = EXCLUDED.edited_by, edited_at = EXCLUDED.edited_at`,
		id, md, by, at)
	return translate(err)
}

// Publish keeps the published text.
func (s *ReadmeStore) Publish(ctx context.Context, id, md, by string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO dataset_readmes (dataset_id, published_md, published_by, published_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (dataset_id) DO UPDATE SET published_md = EXCLUDED.published_md, published_by = EXCLUDED.published_by,
		published_at = EXCLUDED.published_at`, id, md, by, at)
	return translate(err)
}

// Domains returns the dataset's domains with their owner and up to 20 consumers each.
func (s *ReadmeStore) Domains(ctx context.Context, id string) ([]readme.Domain, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT m.name, m.description, m.owner_name,
			coalesce((SELECT array_agg(c.name || ' (' || c.kind || ')' ORDER BY c.name) FROM (SELECT name, kind FROM domain_consumers
				WHERE domain_id = m.id ORDER BY name LIMIT 20) c), '{}')
		FROM domain_datasets dd JOIN domains m ON m.id = dd.domain_id WHERE dd.dataset_id = $1 ORDER BY m.name`, id)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []readme.Domain
	for rows.Next() {
		var d readme.Domain
		if err := rows.Scan(&d.Name, &d.Description, &d.Owner, &d.Consumers); err != nil {
			return nil, translate(err)
		}
		out = append(out, d)
	}
	return out, translate(rows.Err())
}
