package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/finops"
)

// FinopsStore implements finops.Store.
type FinopsStore struct{ db *DB }

// Finops returns the chargeback and exchange-rate store.
func (db *DB) Finops() *FinopsStore { return &FinopsStore{db: db} }

var _ finops.Store = (*FinopsStore)(nil)

// membershipAt is the sorted domain ids (text[], empty for none) the dataset named by the
// expression belonged to at the instant named by the other, from the membership history.
func membershipAt(dataset, at string) string {
	return `coalesce((SELECT array_agg(h.domain_id::text ORDER BY h.domain_id::text) FROM domain_dataset_history h
		 WHERE h.dataset_id = ` + dataset + ` AND h.valid_from <= ` + at + ` AND (h.valid_to IS NULL OR h.valid_to > ` + at + `)), '{}')`
}

// ChargebackFacts reads, since the given time, the profiles of the datasets v can see
// (dropped ones included: their scans were work done) grouped by month (in loc, the
// workspace's time zone), dataset and the domains the dataset belonged to when each was
// written, the reports v may read (a dataset report with its dataset's domains of then),
// and the workspace's domains.
func (s *FinopsStore) ChargebackFacts(ctx context.Context, v catalog.Viewer, since time.Time, loc *time.Location) (finops.Facts, error) {
	teams := v.TeamIDs
	if teams == nil {
		teams = []string{}
	}
	f := finops.Facts{Domains: map[string]finops.DomainRef{}}
	q := s.db.q(ctx)
	if err := q.QueryRow(ctx, `SELECT name FROM workspaces WHERE id = $1`, v.WorkspaceID).Scan(&f.WorkspaceName); err != nil {
		return f, translate(err)
	}
	tz := loc.String()
	rows, err := q.Query(ctx, `SELECT m.month, m.dataset_id::text, m.domains, count(*), coalesce(sum(m.bytes_read), 0)::bigint
		  FROM (SELECT to_char(p.profiled_at AT TIME ZONE $5, 'YYYY-MM') AS month, p.dataset_id, p.bytes_read,
		               `+membershipAt("p.dataset_id", "p.profiled_at")+` AS domains
		          FROM dataset_profiles p
		         WHERE p.workspace_id = $1 AND p.profiled_at >= $4 AND `+VisibleSQL("p.dataset_id", 2, 3)+`) m
		 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, v.WorkspaceID, teams, v.Admin, since, tz)
	if err != nil {
		return f, translate(err)
	}
	f.Profiles, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (finops.ProfileUse, error) {
		var u finops.ProfileUse
		err := r.Scan(&u.Month, &u.DatasetID, &u.Domains, &u.Profiles, &u.Bytes)
		return u, err
	})
	if err != nil {
		return f, translate(err)
	}
	// Reports: a restricted report (its facts touch a restricted-access domain) only for
	// admins; a dataset report only when its dataset is visible.
	rows, err = q.Query(ctx, `SELECT to_char(r.generated_at AT TIME ZONE $5, 'YYYY-MM'),
		       CASE WHEN r.type = 'domain' THEN coalesce(r.subject_id, '') ELSE '' END,
		       CASE WHEN r.type = 'dataset' THEN coalesce(r.subject_id, '') ELSE '' END,
		       CASE WHEN r.type = 'dataset' AND r.subject_id ~ '^[0-9a-f-]{36}$'
		            THEN `+membershipAt("r.subject_id::uuid", "r.generated_at")+` ELSE '{}' END
		  FROM reports r
		 WHERE r.workspace_id = $1 AND r.generated_at >= $4 AND (NOT r.restricted OR $3)
		   AND (r.type <> 'dataset' OR EXISTS (SELECT 1 FROM datasets d WHERE d.workspace_id = r.workspace_id
		        AND d.id::text = r.subject_id AND `+VisibleSQL("d.id", 2, 3)+`))
		 ORDER BY r.generated_at, r.id`, v.WorkspaceID, teams, v.Admin, since, tz)
	if err != nil {
		return f, translate(err)
	}
	f.Reports, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (finops.ReportUse, error) {
		var u finops.ReportUse
		err := r.Scan(&u.Month, &u.DomainID, &u.DatasetID, &u.DatasetDomains)
		return u, err
	})
	if err != nil {
		return f, translate(err)
	}
	rows, err = q.Query(ctx, `SELECT dm.id::text, dm.name, `+domainVisibleSQL("dm", 2, 3)+`
		  FROM domains dm WHERE dm.workspace_id = $1`, v.WorkspaceID, teams, v.Admin)
	if err != nil {
		return f, translate(err)
	}
	doms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finops.DomainRef, error) {
		var d finops.DomainRef
		err := r.Scan(&d.ID, &d.Name, &d.Visible)
		return d, err
	})
	if err != nil {
		return f, translate(err)
	}
	for _, d := range doms {
		f.Domains[d.ID] = d
	}
	return f, nil
}

// TimeZone returns the workspace's time zone.
func (s *FinopsStore) TimeZone(ctx context.Context, workspaceID string) (string, error) {
	var tz string
	err := s.db.q(ctx).QueryRow(ctx, `SELECT timezone FROM workspaces WHERE id = $1`, workspaceID).Scan(&tz)
	return tz, translate(err)
}

// DomainVisible reports whether the domain is one of v's workspace that v can see.
func (s *FinopsStore) DomainVisible(ctx context.Context, v catalog.Viewer, domainID string) (bool, error) {
	if !vigia.ValidID(domainID) {
		return false, nil
	}
	teams := v.TeamIDs
	if teams == nil {
		teams = []string{}
	}
	var ok bool
	err := s.db.q(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM domains dm WHERE dm.workspace_id = $1 AND dm.id = $4 AND `+
		domainVisibleSQL("dm", 2, 3)+`)`, v.WorkspaceID, teams, v.Admin, domainID).Scan(&ok)
	return ok, translate(err)
}

// WorkspaceCurrency is the workspace's currency, nil when none is set.
func (s *FinopsStore) WorkspaceCurrency(ctx context.Context, workspaceID string) (*string, error) {
	var c *string
	err := s.db.q(ctx).QueryRow(ctx, `SELECT currency FROM workspaces WHERE id = $1`, workspaceID).Scan(&c)
	return c, translate(err)
}

// RateOn is the latest rate of the currency on or before day.
func (s *FinopsStore) RateOn(ctx context.Context, currency string, day time.Time) (*finops.Rate, error) {
	r := finops.Rate{Currency: currency}
	err := s.db.q(ctx).QueryRow(ctx, `SELECT rate_date, per_eur::float8 FROM fx_rates WHERE currency = $1 AND rate_date <= $2::date
		ORDER BY rate_date DESC LIMIT 1`, currency, day.UTC().Format(time.DateOnly)).Scan(&r.Date, &r.PerEUR)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	return &r, nil
}

// SaveRates inserts the rates, replacing a loaded rate of the same currency and day.
func (s *FinopsStore) SaveRates(ctx context.Context, rates []finops.Rate, at time.Time) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		for _, r := range rates {
			if _, err := s.db.q(ctx).Exec(ctx, `INSERT INTO fx_rates (currency, rate_date, per_eur, loaded_at) VALUES ($1, $2::date, $3, $4)
				ON CONFLICT (currency, rate_date) DO UPDATE SET per_eur = excluded.per_eur, loaded_at = excluded.loaded_at`,
				r.Currency, r.Date.UTC().Format(time.DateOnly), r.PerEUR, at); err != nil {
				return translate(err)
			}
		}
		return nil
	})
}
