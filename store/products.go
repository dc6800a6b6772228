package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/quality"
)

// ProductStore implements product.Store.
type ProductStore struct{ db *DB }

// Products returns the data product store.
func (db *DB) Products() *ProductStore { return &ProductStore{db: db} }

var _ product.Store = (*ProductStore)(nil)

// domainVisibleSQL is the domain half of the visibility rule: a restricted-access domain
// is visible with a team grant; admins see every domain.
func domainVisibleSQL(domainExpr string, teamsParam, adminParam int) string {
	return fmt.Sprintf(`($%d OR NOT %s.restricted OR EXISTS (SELECT 1 FROM domain_grants vg WHERE vg.domain_id = %s.id AND vg.team_id = ANY($%d::uuid[])))`,
		adminParam, domainExpr, domainExpr, teamsParam)
}

const domainSelect = `SELECT dm.id::text, dm.workspace_id::text, dm.name, dm.description, dm.restricted, dm.status, dm.version_major,
	dm.version_minor, dm.published_at, dm.sla, dm.owner_name, dm.created_at, dm.updated_at,
	(SELECT CASE WHEN bool_or(g.role = 'manager') THEN 'manager' WHEN count(*) > 0 THEN 'member' END
	   FROM domain_grants g WHERE g.domain_id = dm.id AND g.team_id = ANY($2::uuid[]))
	FROM domains dm`

func scanDomain(r pgx.Row) (product.Domain, error) {
	var d product.Domain
	var sla []byte
	var role *string
	err := r.Scan(&d.ID, &d.WorkspaceID, &d.Name, &d.Description, &d.Restricted, &d.Status, &d.Version.Major, &d.Version.Minor,
		&d.PublishedAt, &sla, &d.OwnerName, &d.CreatedAt, &d.UpdatedAt, &role)
	if err != nil {
		return d, err
	}
	if role != nil {
		d.CallerRole = *role // manager when any of the caller's teams manages the domain
	}
	if err := json.Unmarshal(sla, &d.SLA); err != nil {
		return d, err
	}
	if d.SLA.DimensionTargets == nil {
		d.SLA.DimensionTargets = map[string]float64{}
	}
	return d, nil
}

// DomainByID returns a domain the viewer can see with its teams and visible members.
func (s *ProductStore) DomainByID(ctx context.Context, v catalog.Viewer, id string) (product.Domain, error) {
	d, err := scanDomain(s.db.q(ctx).QueryRow(ctx, domainSelect+` WHERE dm.id = $3 AND dm.workspace_id = $1 AND `+domainVisibleSQL("dm", 2, 4),
		v.WorkspaceID, v.TeamIDs, id, v.Admin))
	if err != nil {
		return d, translate(err)
	}
	ds := []product.Domain{d}
	if err := s.fill(ctx, v, ds); err != nil {
		return d, err
	}
	return ds[0], nil
}

// fill loads the teams and visible member datasets of domains.
func (s *ProductStore) fill(ctx context.Context, v catalog.Viewer, ds []product.Domain) error {
	if len(ds) == 0 {
		return nil
	}
	ids := make([]string, 0, len(ds))
	idx := map[string]int{}
	for i, d := range ds {
		ids = append(ids, d.ID)
		idx[d.ID] = i
		ds[i].Teams, ds[i].DatasetIDs = []product.TeamGrant{}, []string{}
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT g.domain_id::text, g.team_id::text, t.name, g.role FROM domain_grants g
		JOIN teams t ON t.id = g.team_id WHERE g.domain_id = ANY($1::uuid[]) ORDER BY t.name, g.team_id`, ids)
	if err != nil {
		return translate(err)
	}
	for rows.Next() {
		var did string
		var g product.TeamGrant
		if err := rows.Scan(&did, &g.TeamID, &g.TeamName, &g.Role); err != nil {
			rows.Close()
			return translate(err)
		}
		ds[idx[did]].Teams = append(ds[idx[did]].Teams, g)
	}
	if err := rows.Err(); err != nil {
		return translate(err)
	}
	rows, err = s.db.q(ctx).Query(ctx, `SELECT dd.domain_id::text, d.id::text FROM domain_datasets dd JOIN datasets d ON d.id = dd.dataset_id
		WHERE dd.domain_id = ANY($1::uuid[]) AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`
		ORDER BY d.schema_name, d.table_name, d.id`, ids, v.TeamIDs, v.Admin)
	if err != nil {
		return translate(err)
	}
	for rows.Next() {
		var did, dsid string
		if err := rows.Scan(&did, &dsid); err != nil {
			rows.Close()
			return translate(err)
		}
		ds[idx[did]].DatasetIDs = append(ds[idx[did]].DatasetIDs, dsid)
	}
	return translate(rows.Err())
}

// Domains lists the viewer's domains by name.
func (s *ProductStore) Domains(ctx context.Context, v catalog.Viewer, page vigia.Page) (vigia.List[product.Domain], error) {
	var out vigia.List[product.Domain]
	cond := `dm.workspace_id = $1 AND ` + domainVisibleSQL("dm", 2, 3)
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM domains dm WHERE `+cond, v.WorkspaceID, v.TeamIDs, v.Admin).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, domainSelect+` WHERE `+cond+` ORDER BY dm.name, dm.id LIMIT $4 OFFSET $5`,
		v.WorkspaceID, v.TeamIDs, v.Admin, page.Limit, page.Offset)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.Domain, error) { return scanDomain(r) })
	if err != nil {
		return out, translate(err)
	}
	return out, s.fill(ctx, v, out.Items)
}

// CreateDomain inserts a domain with its datasets.
func (s *ProductStore) CreateDomain(ctx context.Context, d product.Domain, datasetIDs []string) error {
	sla, err := json.Marshal(d.SLA)
	if err != nil {
		return vigia.Internal(err)
	}
	if _, err := s.db.q(ctx).Exec(ctx, `INSERT INTO domains (id, workspace_id, name, description, restricted, status, version_major,
		version_minor, published_at, sla, owner_name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		d.ID, d.WorkspaceID, d.Name, d.Description, d.Restricted, d.Status, d.Version.Major, d.Version.Minor, d.PublishedAt, sla,
		d.OwnerName, d.CreatedAt, d.UpdatedAt); err != nil {
		return translate(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO domain_datasets (domain_id, dataset_id) SELECT $1, unnest($2::uuid[])`, d.ID, datasetIDs)
	return translate(err)
}

// LockDomain locks the domain row.
func (s *ProductStore) LockDomain(ctx context.Context, id string) error {
	_, err := s.db.q(ctx).Exec(ctx, `SELECT 1 FROM domains WHERE id = $1 FOR UPDATE`, id)
	return translate(err)
}

// UpdateDomain writes a domain's fields.
func (s *ProductStore) UpdateDomain(ctx context.Context, d product.Domain) error {
	sla, err := json.Marshal(d.SLA)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `UPDATE domains SET name = $2, description = $3, restricted = $4, status = $5, version_major = $6,
		version_minor = $7, published_at = $8, sla = $9, owner_name = $10, updated_at = $11 WHERE id = $1`,
		d.ID, d.Name, d.Description, d.Restricted, d.Status, d.Version.Major, d.Version.Minor, d.PublishedAt, sla, d.OwnerName, d.UpdatedAt)
	return translate(err)
}

// ReplaceMembers sets the viewer's visible members; invisible members stay. Members kept
// are left in place, so their membership history (written by the table's triggers) runs on.
func (s *ProductStore) ReplaceMembers(ctx context.Context, v catalog.Viewer, domainID string, datasetIDs []string) error {
	if datasetIDs == nil {
		datasetIDs = []string{}
	}
	if _, err := s.db.q(ctx).Exec(ctx, `DELETE FROM domain_datasets dd WHERE dd.domain_id = $1 AND NOT (dd.dataset_id = ANY($4::uuid[])) AND `+VisibleSQL("dd.dataset_id", 2, 3),
		domainID, v.TeamIDs, v.Admin, datasetIDs); err != nil {
		return translate(err)
	}
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO domain_datasets (domain_id, dataset_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING`,
		domainID, datasetIDs)
	return translate(err)
}

// ReplaceGrants sets a domain's team grants.
func (s *ProductStore) ReplaceGrants(ctx context.Context, domainID string, grants []product.TeamGrant) error {
	if _, err := s.db.q(ctx).Exec(ctx, `DELETE FROM domain_grants WHERE domain_id = $1`, domainID); err != nil {
		return translate(err)
	}
	for _, g := range grants {
		if _, err := s.db.q(ctx).Exec(ctx, `INSERT INTO domain_grants (domain_id, team_id, role) VALUES ($1, $2, $3)`,
			domainID, g.TeamID, g.Role); err != nil {
			return translate(err)
		}
	}
	return nil
}

// TeamNames returns the names of the workspace's teams among ids.
func (s *ProductStore) TeamNames(ctx context.Context, workspaceID string, teamIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(teamIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, name FROM teams WHERE workspace_id = $1 AND id = ANY($2::uuid[])`, workspaceID, teamIDs)
	if err != nil {
		return nil, translate(err)
	}
	return out, scanInto(rows, out)
}

// VisibleDatasetNames returns the names of the viewer's live datasets among ids.
func (s *ProductStore) VisibleDatasetNames(ctx context.Context, v catalog.Viewer, ids []string) (map[string]string, error) {
	out := map[string]string{}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name || '.' || d.table_name FROM datasets d
		WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[]) AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 3, 4),
		v.WorkspaceID, ids, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	return out, scanInto(rows, out)
}

// AllMembers lists every live member of a domain by name.
func (s *ProductStore) AllMembers(ctx context.Context, domainID string) ([]product.SnapshotDataset, error) {
	// A member's contract columns are those of its active (newest accepted) contract that
	// the dataset still has: a contract column the source dropped vanishes from the next
	// snapshot, which the version diff counts as breaking.
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name || '.' || d.table_name,
		coalesce((SELECT array_agg(c.name ORDER BY c.name) FROM dataset_columns c
			WHERE c.dataset_id = d.id AND c.name IN (SELECT p->>'name' FROM jsonb_array_elements(cv.document->'schema'->0->'properties') p)),
			'{}'::text[])
		FROM domain_datasets dd JOIN datasets d ON d.id = dd.dataset_id
		LEFT JOIN LATERAL (SELECT document FROM contract_versions WHERE dataset_id = d.id ORDER BY major DESC, minor DESC, patch DESC LIMIT 1) cv ON true
		WHERE dd.domain_id = $1 AND d.dropped_at IS NULL ORDER BY d.schema_name, d.table_name, d.id`, domainID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.SnapshotDataset, error) {
		d := product.SnapshotDataset{ContractColumns: []string{}}
		err := r.Scan(&d.ID, &d.Name, &d.ContractColumns)
		return d, err
	})
	if out == nil {
		out = []product.SnapshotDataset{}
	}
	return out, translate(err)
}

// storedChange is a version change as kept in domain_versions.changes.
type storedChange struct {
	Kind        string `json:"kind"`
	Impact      string `json:"impact"`
	DatasetID   string `json:"dataset_id,omitempty"`
	DatasetName string `json:"dataset_name,omitempty"`
	Column      string `json:"column,omitempty"`
	Dimension   string `json:"dimension,omitempty"`
	Field       string `json:"field,omitempty"`
	Before      any    `json:"before,omitempty"`
	After       any    `json:"after,omitempty"`
}

type storedCounts struct {
	Datasets   int `json:"datasets"`
	Changes    int `json:"changes"`
	Breaking   int `json:"breaking"`
	Compatible int `json:"compatible"`
}

// Versions lists a domain's versions, newest first.
func (s *ProductStore) Versions(ctx context.Context, domainID string) ([]product.VersionRow, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT domain_id::text, workspace_id::text, major, minor, bump, change_summary, changes, snapshot,
		counts, published_at, published_by FROM domain_versions WHERE domain_id = $1 ORDER BY major DESC, minor DESC`, domainID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.VersionRow, error) {
		var v product.VersionRow
		var changes, snapshot, counts []byte
		if err := r.Scan(&v.DomainID, &v.WorkspaceID, &v.Version.Major, &v.Version.Minor, &v.Bump, &v.ChangeSummary, &changes,
			&snapshot, &counts, &v.PublishedAt, &v.PublishedBy); err != nil {
			return v, err
		}
		var sc []storedChange
		if err := json.Unmarshal(changes, &sc); err != nil {
			return v, err
		}
		v.Changes = make([]product.Change, 0, len(sc))
		for _, c := range sc {
			v.Changes = append(v.Changes, product.Change{Kind: c.Kind, Impact: c.Impact, DatasetID: c.DatasetID, DatasetName: c.DatasetName,
				Column: c.Column, Dimension: c.Dimension, Field: c.Field, Before: c.Before, After: c.After})
		}
		if err := json.Unmarshal(snapshot, &v.Snapshot); err != nil {
			return v, err
		}
		if v.Snapshot.SLA.DimensionTargets == nil {
			v.Snapshot.SLA.DimensionTargets = map[string]float64{}
		}
		var cnt storedCounts
		if err := json.Unmarshal(counts, &cnt); err != nil {
			return v, err
		}
		v.Counts = product.Counts{Datasets: cnt.Datasets, Changes: cnt.Changes, Breaking: cnt.Breaking, Compatible: cnt.Compatible}
		return v, nil
	})
	return out, translate(err)
}

// InsertVersion stores a published version.
func (s *ProductStore) InsertVersion(ctx context.Context, v product.VersionRow) error {
	sc := make([]storedChange, 0, len(v.Changes))
	for _, c := range v.Changes {
		sc = append(sc, storedChange{Kind: c.Kind, Impact: c.Impact, DatasetID: c.DatasetID, DatasetName: c.DatasetName, Column: c.Column,
			Dimension: c.Dimension, Field: c.Field, Before: c.Before, After: c.After})
	}
	changes, err := json.Marshal(sc)
	if err != nil {
		return vigia.Internal(err)
	}
	snapshot, err := json.Marshal(v.Snapshot)
	if err != nil {
		return vigia.Internal(err)
	}
	counts, err := json.Marshal(storedCounts{Datasets: v.Counts.Datasets, Changes: v.Counts.Changes, Breaking: v.Counts.Breaking,
		Compatible: v.Counts.Compatible})
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO domain_versions (domain_id, workspace_id, major, minor, bump, change_summary, changes,
		snapshot, counts, published_at, published_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		v.DomainID, v.WorkspaceID, v.Version.Major, v.Version.Minor, v.Bump, v.ChangeSummary, changes, snapshot, counts, v.PublishedAt, v.PublishedBy)
	return translate(err)
}

// Coverage lists the finished scans in [from, to) that covered the viewer's members of
// a domain: scans of the dataset's connection that finished while it was live, with
// the profile, verdict and dimensions they saved (if any).
func (s *ProductStore) Coverage(ctx context.Context, v catalog.Viewer, domainID string, from, to time.Time) ([]product.Coverage, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, s.id::text, s.finished_at, p.scan_id IS NOT NULL, coalesce(vd.verdict, 'unknown'),
		sc.detail->'dimensions'
		FROM domain_datasets dd JOIN datasets d ON d.id = dd.dataset_id
		JOIN scans s ON s.connection_id = d.connection_id AND s.status IN ('succeeded', 'failed') AND s.finished_at >= $2 AND s.finished_at < $3
		LEFT JOIN dataset_profiles p ON p.dataset_id = d.id AND p.scan_id = s.id
		LEFT JOIN verdicts vd ON vd.dataset_id = d.id AND vd.scan_id = s.id
		LEFT JOIN scores sc ON sc.dataset_id = d.id AND sc.scan_id = s.id
		WHERE dd.domain_id = $1 AND d.workspace_id = $4 AND `+VisibleSQL("d.id", 5, 6)+`
		  AND (p.scan_id IS NOT NULL OR (d.created_at <= s.finished_at AND (d.dropped_at IS NULL OR d.dropped_at > s.finished_at)))
		ORDER BY s.finished_at`, domainID, from, to, v.WorkspaceID, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	return collectCoverage(rows)
}

func collectCoverage(rows pgx.Rows) ([]product.Coverage, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.Coverage, error) {
		var c product.Coverage
		var dims []byte
		if err := r.Scan(&c.DatasetID, &c.ScanID, &c.At, &c.Profiled, &c.Verdict, &dims); err != nil {
			return c, err
		}
		if dims != nil {
			if err := json.Unmarshal(dims, &c.Dimensions); err != nil {
				return c, err
			}
		}
		return c, nil
	})
	return out, translate(err)
}

// WorkspaceTimezone returns the workspace's time zone.
func (s *ProductStore) WorkspaceTimezone(ctx context.Context, workspaceID string) (string, error) {
	var tz string
	err := s.db.q(ctx).QueryRow(ctx, `SELECT timezone FROM workspaces WHERE id = $1`, workspaceID).Scan(&tz)
	return tz, translate(err)
}

const shareSelect = `SELECT domain_id::text, workspace_id::text, token_hash, token_sealed, created_by, created_at, rotated_at FROM domain_public_shares`

func scanShare(r pgx.Row) (product.Share, error) {
	var sh product.Share
	err := r.Scan(&sh.DomainID, &sh.WorkspaceID, &sh.TokenHash, &sh.TokenSealed, &sh.CreatedBy, &sh.CreatedAt, &sh.RotatedAt)
	return sh, err
}

// Share returns a domain's live share.
func (s *ProductStore) Share(ctx context.Context, domainID string) (product.Share, bool, error) {
	sh, err := scanShare(s.db.q(ctx).QueryRow(ctx, shareSelect+` WHERE domain_id = $1`, domainID))
	if err == pgx.ErrNoRows {
		return sh, false, nil
	}
	return sh, err == nil, translate(err)
}

// SaveShare creates or replaces a domain's share.
func (s *ProductStore) SaveShare(ctx context.Context, sh product.Share) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO domain_public_shares (domain_id, workspace_id, token_hash, token_sealed, created_by, created_at, rotated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (domain_id) DO UPDATE SET token_hash = EXCLUDED.token_hash,
		token_sealed = EXCLUDED.token_sealed, rotated_at = EXCLUDED.rotated_at`,
		sh.DomainID, sh.WorkspaceID, sh.TokenHash, sh.TokenSealed, sh.CreatedBy, sh.CreatedAt, sh.RotatedAt)
	return translate(err)
}

// DeleteShare revokes a domain's share.
func (s *ProductStore) DeleteShare(ctx context.Context, domainID string) (bool, error) {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM domain_public_shares WHERE domain_id = $1`, domainID)
	return tag.RowsAffected() > 0, translate(err)
}

// ShareByHash finds a live share by its token's hash.
func (s *ProductStore) ShareByHash(ctx context.Context, hash []byte) (product.Share, error) {
	sh, err := scanShare(s.db.q(ctx).QueryRow(ctx, shareSelect+` WHERE token_hash = $1`, hash))
	return sh, translate(err)
}

// ManualConsumers lists a domain's consumers registered by hand.
func (s *ProductStore) ManualConsumers(ctx context.Context, domainID string) ([]product.DomainConsumer, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, domain_id::text, workspace_id::text, name, kind, channel_id::text, created_by, created_at
		FROM domain_consumers WHERE domain_id = $1 ORDER BY name, id`, domainID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.DomainConsumer, error) {
		c := product.DomainConsumer{Source: product.SourceManual}
		err := r.Scan(&c.ID, &c.DomainID, &c.WorkspaceID, &c.Name, &c.Kind, &c.ChannelID, &c.CreatedBy, &c.CreatedAt)
		return c, err
	})
	return out, translate(err)
}

// AddManualConsumer registers a consumer by hand; KindConflict when name and kind are taken.
func (s *ProductStore) AddManualConsumer(ctx context.Context, c product.DomainConsumer) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO domain_consumers (id, domain_id, workspace_id, name, kind, channel_id, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.ID, c.DomainID, c.WorkspaceID, c.Name, c.Kind, c.ChannelID, c.CreatedBy, c.CreatedAt)
	return translate(err)
}

// DeleteManualConsumer removes a consumer registered by hand.
func (s *ProductStore) DeleteManualConsumer(ctx context.Context, domainID, id string) (bool, error) {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM domain_consumers WHERE domain_id = $1 AND id = $2`, domainID, id)
	return tag.RowsAffected() > 0, translate(err)
}

// DatasetMeta lists the viewer's live datasets with whether they have a domain and an owner.
func (s *ProductStore) DatasetMeta(ctx context.Context, v catalog.Viewer) ([]product.DatasetMeta, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name || '.' || d.table_name,
		EXISTS (SELECT 1 FROM domain_datasets dd WHERE dd.dataset_id = d.id),
		EXISTS (SELECT 1 FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
			WHERE dd.dataset_id = d.id AND coalesce(dm.owner_name, '') <> '')
		FROM datasets d WHERE d.workspace_id = $1 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`
		ORDER BY d.schema_name, d.table_name, d.id`, v.WorkspaceID, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.DatasetMeta, error) {
		var m product.DatasetMeta
		err := r.Scan(&m.ID, &m.Name, &m.HasDomain, &m.HasOwner)
		return m, err
	})
	return out, translate(err)
}

// DomainWeights returns the dimension weights of each domain the dataset belongs to
// (nil for a domain without weights), for the scan pipeline (quality.EffectiveWeights).
func (s *ProductStore) DomainWeights(ctx context.Context, datasetID string) ([]quality.Weights, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT dm.sla->'dimension_weights' FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
		WHERE dd.dataset_id = $1 ORDER BY dm.id`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out := []quality.Weights{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		var m map[string]float64
		if raw != nil {
			if err := json.Unmarshal(raw, &m); err != nil {
				rows.Close()
				return nil, vigia.Internal(err)
			}
		}
		out = append(out, product.SLA{DimensionWeights: m}.Weights())
	}
	return out, translate(rows.Err())
}

// AddActivity appends to the workspace activity log.
func (s *ProductStore) AddActivity(ctx context.Context, a event.Activity) error {
	return s.db.AddActivity(ctx, a)
}

// ScanMemberVerdicts implements product.Store.
func (s *ProductStore) ScanMemberVerdicts(ctx context.Context, workspaceID, scanID string) ([]product.MemberVerdict, error) {
	rows, err := s.db.q(ctx).Query(ctx, `WITH changed AS (
		SELECT e.subject_id::uuid AS dataset_id, e.payload->>'from' AS before
		  FROM events e
		 WHERE e.workspace_id = $1 AND e.scan_id = $2 AND e.type = 'dataset.verdict_changed'
	), doms AS (
		SELECT DISTINCT dd.domain_id FROM domain_datasets dd JOIN changed c ON c.dataset_id = dd.dataset_id
	)
	SELECT dm.id::text, dm.name, d.id::text, d.schema_name || '.' || d.table_name, coalesce(v.verdict, ''), c.before
	  FROM doms
	  JOIN domains dm ON dm.id = doms.domain_id AND dm.workspace_id = $1
	  JOIN domain_datasets dd ON dd.domain_id = dm.id
	  JOIN datasets d ON d.id = dd.dataset_id AND d.dropped_at IS NULL
	  LEFT JOIN LATERAL (SELECT verdict FROM verdicts WHERE dataset_id = d.id ORDER BY seq DESC LIMIT 1) v ON true
	  LEFT JOIN changed c ON c.dataset_id = d.id`, workspaceID, scanID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.MemberVerdict, error) {
		var m product.MemberVerdict
		err := r.Scan(&m.DomainID, &m.DomainName, &m.DatasetID, &m.DatasetName, &m.Verdict, &m.Before)
		return m, err
	})
	return out, translate(err)
}

// InsertDomainVerdictEvent implements product.Store.
func (s *ProductStore) InsertDomainVerdictEvent(ctx context.Context, ev product.DomainVerdictEvent, at time.Time) error {
	payload, err := json.Marshal(ev.Payload)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, scan_id, idempotency_key, payload, created_at)
		VALUES ($1, $2, $3, 'domain', $4, $5, $6, $7, $8) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
		vigia.NewID(), ev.WorkspaceID, product.EventDomainVerdictChanged, ev.DomainID, ev.ScanID, ev.IdempotencyKey, payload, at)
	return translate(err)
}

// DomainLinks returns domains, their datasets and the live datasets of the workspace
// (for domain suggestions).
func (s *ProductStore) DomainLinks(ctx context.Context, ws string) (product.DomainLinks, error) {
	out := product.DomainLinks{Names: map[string]string{}, Owners: map[string]string{}, ByDataset: map[string][]string{}}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT m.id::text, m.name, coalesce(m.owner_name, ''), dd.dataset_id::text FROM domains m
		LEFT JOIN domain_datasets dd ON dd.domain_id = m.id WHERE m.workspace_id = $1 ORDER BY m.name, dd.dataset_id`, ws)
	if err != nil {
		return out, translate(err)
	}
	for rows.Next() {
		var id, name, owner string
		var ds *string
		if err := rows.Scan(&id, &name, &owner, &ds); err != nil {
			rows.Close()
			return out, translate(err)
		}
		out.Names[id] = name
		if strings.TrimSpace(owner) != "" {
			out.Owners[id] = owner
		}
		if ds != nil {
			out.ByDataset[*ds] = append(out.ByDataset[*ds], id)
		}
	}
	if err := rows.Err(); err != nil {
		return out, translate(err)
	}
	rows, err = s.db.q(ctx).Query(ctx, `SELECT id::text, CASE WHEN schema_name = '' THEN table_name ELSE schema_name || '.' || table_name END
		FROM datasets WHERE workspace_id = $1 AND dropped_at IS NULL ORDER BY schema_name, table_name, id`, ws)
	if err != nil {
		return out, translate(err)
	}
	out.Datasets, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (product.LinkDataset, error) {
		var d product.LinkDataset
		err := r.Scan(&d.ID, &d.Name)
		return d, err
	})
	return out, translate(err)
}

// ManagedDomains returns the domains the teams manage.
func (s *ProductStore) ManagedDomains(ctx context.Context, ws string, teamIDs []string) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT g.domain_id::text FROM domain_grants g JOIN domains m ON m.id = g.domain_id
		WHERE m.workspace_id = $1 AND g.role = 'manager' AND g.team_id = ANY($2::uuid[])`, ws, teamIDs)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}
