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
)

// CatalogStore implements catalog.Store.
type CatalogStore struct{ db *DB }

// Catalog returns the catalog store.
func (db *DB) Catalog() *CatalogStore { return &CatalogStore{db: db} }

var _ catalog.Store = (*CatalogStore)(nil)

const datasetColumns = `d.id::text, d.workspace_id::text, d.connection_id::text, c.name, d.schema_name, d.table_name,
	d.kind, d.depth, d.data_country, c.data_country, w.data_country, d.latest_score, d.queries_per_day, d.last_scan_at,
	d.created_at, d.updated_at`

const datasetFrom = `datasets d JOIN connections c ON c.id = d.connection_id JOIN workspaces w ON w.id = d.workspace_id`

func scanDataset(r pgx.Row) (catalog.Dataset, error) {
	var d catalog.Dataset
	err := r.Scan(&d.ID, &d.WorkspaceID, &d.ConnectionID, &d.ConnectionName, &d.Schema, &d.Table,
		&d.Kind, &d.Depth, &d.DataCountry, &d.ConnectionCountry, &d.WorkspaceCountry, &d.LatestScore, &d.QueriesPerDay, &d.LastScanAt, &d.CreatedAt, &d.UpdatedAt)
	return d, err
}

// FindDatasets lists a workspace's live datasets.
func (s *CatalogStore) FindDatasets(ctx context.Context, v catalog.Viewer, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error) {
	where := []string{"d.workspace_id = $1", "d.dropped_at IS NULL", VisibleSQL("d.id", 2, 3)}
	args := []any{v.WorkspaceID, v.TeamIDs, v.Admin}
	if f.ConnectionID != nil {
		args = append(args, *f.ConnectionID)
		where = append(where, fmt.Sprintf("d.connection_id = $%d", len(args)))
	}
	if f.Q != nil {
		args = append(args, "%"+escapeLike(*f.Q)+"%")
		n := len(args)
		where = append(where, fmt.Sprintf("(d.schema_name ILIKE $%d OR d.table_name ILIKE $%d OR d.schema_name || '.' || d.table_name ILIKE $%d)", n, n, n))
	}
	cond := strings.Join(where, " AND ")
	var out vigia.List[catalog.Dataset]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM datasets d WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	order := "d.schema_name, d.table_name, d.id"
	switch f.Sort {
	case catalog.SortUsage:
		order = "d.queries_per_day DESC NULLS LAST, " + order
	case catalog.SortImpact:
		// Downstream reach, largest first, ties by name (kept by the lineage projector).
		order = "coalesce((SELECT r.reach FROM dataset_reach r WHERE r.dataset_id = d.id), 0) DESC, " + order
	}
	args = append(args, f.Page.Limit, f.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, fmt.Sprintf(`SELECT %s FROM %s
		WHERE %s ORDER BY %s LIMIT $%d OFFSET $%d`, datasetColumns, datasetFrom, cond, order, len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.Dataset, error) { return scanDataset(r) })
	if err != nil {
		return out, translate(err)
	}
	ids := make([]string, 0, len(out.Items))
	for _, d := range out.Items {
		ids = append(ids, d.ID)
	}
	grants, err := s.grants(ctx, v, ids)
	if err != nil {
		return out, err
	}
	for i := range out.Items {
		out.Items[i].Grants = grants[out.Items[i].ID]
	}
	return out, nil
}

// grants returns the viewer's team grants on the domains of each dataset among ids.
func (s *CatalogStore) grants(ctx context.Context, v catalog.Viewer, ids []string) (map[string][]catalog.DomainGrant, error) {
	out := map[string][]catalog.DomainGrant{}
	if len(ids) == 0 || len(v.TeamIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT dd.dataset_id::text, dm.id::text, dm.restricted, g.role
		FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
		JOIN domain_grants g ON g.domain_id = dm.id AND g.team_id = ANY($2::uuid[])
		WHERE dd.dataset_id = ANY($1::uuid[]) AND dm.workspace_id = $3 ORDER BY 1, 2, 4`, ids, v.TeamIDs, v.WorkspaceID)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id string
		var g catalog.DomainGrant
		if err := rows.Scan(&id, &g.DomainID, &g.Restricted, &g.Role); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		out[id] = append(out[id], g)
	}
	return out, translate(rows.Err())
}

// DatasetByID returns a dataset of the workspace with its columns.
func (s *CatalogStore) DatasetByID(ctx context.Context, v catalog.Viewer, id string) (catalog.Dataset, error) {
	d, err := scanDataset(s.db.q(ctx).QueryRow(ctx, `SELECT `+datasetColumns+` FROM `+datasetFrom+`
		WHERE d.id = $1 AND d.workspace_id = $2 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 3, 4), id, v.WorkspaceID, v.TeamIDs, v.Admin))
	if err != nil {
		return d, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT name, position, data_type, class, nullable, primary_key, partition, clustering, profile, unique_key
		FROM dataset_columns WHERE dataset_id = $1 ORDER BY position, name`, id)
	if err != nil {
		return d, translate(err)
	}
	d.Columns, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.Column, error) {
		var c catalog.Column
		var profile []byte
		if err := r.Scan(&c.Name, &c.Position, &c.DataType, &c.Class, &c.Nullable, &c.PrimaryKey, &c.Partition, &c.Clustering, &profile, &c.Unique); err != nil {
			return c, err
		}
		if profile != nil {
			c.Profile = &catalog.ColumnProfile{}
			if err := json.Unmarshal(profile, c.Profile); err != nil {
				return c, err
			}
		}
		return c, nil
	})
	if err != nil {
		return d, translate(err)
	}
	if d.ScoreHistory, err = s.scoreHistory(ctx, id, 30); err != nil {
		return d, err
	}
	grants, err := s.grants(ctx, v, []string{id})
	if err != nil {
		return d, err
	}
	d.Grants = grants[id]
	if d.Issues, err = s.openIssues(ctx, id); err != nil {
		return d, err
	}
	m := map[string]catalog.Dataset{id: d}
	if err := s.lastRuns(ctx, []string{id}, m); err != nil {
		return d, err
	}
	return m[id], nil
}

// lastRuns fills the row count of the last profile and the last failure (when newer
// than that profile) of the datasets among ids, in one query.
func (s *CatalogStore) lastRuns(ctx context.Context, ids []string, out map[string]catalog.Dataset) error {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, p.row_count, p.row_count_exact, f.scan_id::text, f.code, f.failed_at
		FROM unnest($1::uuid[]) AS d(id)
		LEFT JOIN LATERAL (SELECT row_count, row_count_exact, profiled_at FROM dataset_profiles
			WHERE dataset_id = d.id ORDER BY seq DESC LIMIT 1) p ON true
		LEFT JOIN LATERAL (SELECT scan_id, code, failed_at FROM scan_failures
			WHERE dataset_id = d.id ORDER BY failed_at DESC LIMIT 1) f ON f.failed_at > coalesce(p.profiled_at, '-infinity')`, ids)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var rc *int64
		var exact *bool
		var scanID, code *string
		var at *time.Time
		if err := rows.Scan(&id, &rc, &exact, &scanID, &code, &at); err != nil {
			return translate(err)
		}
		d, ok := out[id]
		if !ok {
			continue
		}
		d.RowCount, d.RowCountExact = rc, exact
		if scanID != nil && code != nil && at != nil {
			d.LastFailure = &catalog.ProfileFailure{ScanID: *scanID, Code: *code, At: *at}
		}
		out[id] = d
	}
	return translate(rows.Err())
}

func (s *CatalogStore) scoreHistory(ctx context.Context, datasetID string, n int) ([]catalog.ScorePoint, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT scan_id::text, score, detail->'dimensions', created_at FROM scores
		WHERE dataset_id = $1 ORDER BY seq DESC LIMIT $2`, datasetID, n)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.ScorePoint, error) {
		var p catalog.ScorePoint
		var dims []byte
		if err := r.Scan(&p.ScanID, &p.Score, &dims, &p.CreatedAt); err != nil {
			return p, err
		}
		return p, json.Unmarshal(dims, &p.Dimensions)
	})
	return out, translate(err)
}

// issueSummarySelect reads issues with their dataset and team names.
const issueSummarySelect = `SELECT i.id::text, i.dataset_id::text, d.schema_name || '.' || d.table_name, i.type, i.subtype, i.severity,
	i.status, i.title, i.resolution_reason, i.sla_breached_at, i.assignee_team_id::text, t.name, i.created_at, i.updated_at,
	i.title_key, i.title_params
	FROM issues i JOIN datasets d ON d.id = i.dataset_id LEFT JOIN teams t ON t.id = i.assignee_team_id`

func scanIssueSummary(r pgx.Row) (catalog.IssueSummary, error) {
	var is catalog.IssueSummary
	err := r.Scan(&is.ID, &is.DatasetID, &is.DatasetName, &is.Type, &is.Subtype, &is.Severity, &is.Status, &is.Title,
		&is.ResolutionReason, &is.SLABreachedAt, &is.AssigneeTeamID, &is.AssigneeTeamName, &is.CreatedAt, &is.UpdatedAt,
		&is.TitleKey, &is.TitleParams)
	return is, err
}

func (s *CatalogStore) openIssues(ctx context.Context, datasetID string) ([]catalog.IssueSummary, error) {
	rows, err := s.db.q(ctx).Query(ctx, issueSummarySelect+` WHERE i.dataset_id = $1 AND i.status IN ('open', 'acknowledged')
		ORDER BY CASE i.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, i.created_at DESC`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.IssueSummary, error) { return scanIssueSummary(r) })
	return out, translate(err)
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// DatasetDetails loads datasets with their columns, score history and open issues in
// four queries, whatever the number of ids.
func (s *CatalogStore) DatasetDetails(ctx context.Context, v catalog.Viewer, ids []string, historyLimit int) (map[string]catalog.Dataset, error) {
	out := map[string]catalog.Dataset{}
	if len(ids) == 0 {
		return out, nil
	}
	q := s.db.q(ctx)
	rows, err := q.Query(ctx, `SELECT `+datasetColumns+` FROM `+datasetFrom+`
		WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[]) AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 3, 4),
		v.WorkspaceID, ids, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.Dataset, error) { return scanDataset(r) })
	if err != nil {
		return nil, translate(err)
	}
	live := make([]string, 0, len(ds))
	for _, d := range ds {
		d.Columns, d.ScoreHistory, d.Issues = []catalog.Column{}, []catalog.ScorePoint{}, []catalog.IssueSummary{}
		out[d.ID] = d
		live = append(live, d.ID)
	}
	rows, err = q.Query(ctx, `SELECT dataset_id::text, name, position, data_type, class, nullable, primary_key, partition, clustering, profile, unique_key
		FROM dataset_columns WHERE dataset_id = ANY($1::uuid[]) ORDER BY dataset_id, position, name`, live)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id string
		var c catalog.Column
		var profile []byte
		if err := rows.Scan(&id, &c.Name, &c.Position, &c.DataType, &c.Class, &c.Nullable, &c.PrimaryKey, &c.Partition, &c.Clustering, &profile, &c.Unique); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if profile != nil {
			c.Profile = &catalog.ColumnProfile{}
			if err := json.Unmarshal(profile, c.Profile); err != nil {
				rows.Close()
				return nil, vigia.Internal(err)
			}
		}
		d := out[id]
		d.Columns = append(d.Columns, c)
		out[id] = d
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	rows, err = q.Query(ctx, `SELECT dataset_id::text, scan_id::text, score, detail->'dimensions', created_at FROM (
		SELECT *, row_number() OVER (PARTITION BY dataset_id ORDER BY seq DESC) AS rn FROM scores WHERE dataset_id = ANY($1::uuid[])) s
		WHERE rn <= $2 ORDER BY dataset_id, rn`, live, historyLimit)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id string
		var p catalog.ScorePoint
		var dims []byte
		if err := rows.Scan(&id, &p.ScanID, &p.Score, &dims, &p.CreatedAt); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if err := json.Unmarshal(dims, &p.Dimensions); err != nil {
			rows.Close()
			return nil, vigia.Internal(err)
		}
		d := out[id]
		d.ScoreHistory = append(d.ScoreHistory, p)
		out[id] = d
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	rows, err = q.Query(ctx, issueSummarySelect+` WHERE i.dataset_id = ANY($1::uuid[]) AND i.status IN ('open', 'acknowledged')
		ORDER BY CASE i.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, i.created_at DESC`, live)
	if err != nil {
		return nil, translate(err)
	}
	issues, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.IssueSummary, error) { return scanIssueSummary(r) })
	if err != nil {
		return nil, translate(err)
	}
	for _, is := range issues {
		d := out[is.DatasetID]
		d.Issues = append(d.Issues, is)
		out[is.DatasetID] = d
	}
	grants, err := s.grants(ctx, v, live)
	if err != nil {
		return nil, err
	}
	for id, gs := range grants {
		d := out[id]
		d.Grants = gs
		out[id] = d
	}
	if err := s.lastRuns(ctx, live, out); err != nil {
		return nil, err
	}
	return out, nil
}

// visibleFilter starts the WHERE clause of a list over the live datasets v can see: the
// rows' workspace column (wsCol) is v's, the dataset d is not dropped and is visible; add
// appends conditions with their parameters.
func visibleFilter(wsCol string, v catalog.Viewer) *listFilter {
	return &listFilter{where: []string{wsCol + " = $1", "d.dropped_at IS NULL", VisibleSQL("d.id", 2, 3)},
		args: []any{v.WorkspaceID, v.TeamIDs, v.Admin}}
}

// listFilter is a WHERE clause built condition by condition.
type listFilter struct {
	where []string
	args  []any
}

// add appends a condition whose one %d is the number of val's parameter.
func (f *listFilter) add(cond string, val any) {
	f.args = append(f.args, val)
	f.where = append(f.where, fmt.Sprintf(cond, len(f.args)))
}

// sql is the conditions joined with AND.
func (f *listFilter) sql() string { return strings.Join(f.where, " AND ") }

// VisibleSQL is the visibility predicate for a dataset id expression, with the caller's
// team ids and admin flag as query parameters $teams and $admin.
func VisibleSQL(datasetExpr string, teamsParam, adminParam int) string {
	return fmt.Sprintf("vigia_dataset_visible(%s, $%d::uuid[], $%d)", datasetExpr, teamsParam, adminParam)
}
