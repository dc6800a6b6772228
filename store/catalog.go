package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/internal/pgtx"
)

// CatalogStore implements catalog.Store.
type CatalogStore struct{ db *DB }

// Catalog returns the catalog store.
func (db *DB) Catalog() *CatalogStore { return &CatalogStore{db: db} }

var _ catalog.Store = (*CatalogStore)(nil)

const datasetColumns = `d.id::text, d.workspace_id::text, d.connection_id::text, c.name, d.schema_name, d.table_name,
	d.kind, d.depth, d.data_country, c.data_country, w.data_country, d.latest_score, d.queries_per_day, d.last_scan_at,
	d.created_at, d.updated_at, d.reach`

const datasetFrom = `datasets d JOIN connections c ON c.id = d.connection_id JOIN workspaces w ON w.id = d.workspace_id`

func scanDataset(r pgx.Row) (catalog.Dataset, error) {
	var d catalog.Dataset
	err := r.Scan(&d.ID, &d.WorkspaceID, &d.ConnectionID, &d.ConnectionName, &d.Schema, &d.Table,
		&d.Kind, &d.Depth, &d.DataCountry, &d.ConnectionCountry, &d.WorkspaceCountry, &d.LatestScore, &d.QueriesPerDay, &d.LastScanAt, &d.CreatedAt, &d.UpdatedAt, &d.Reach)
	return d, err
}

// FindDatasets lists a workspace's live datasets. The page walks the index of its order
// (datasets_live_name, _usage, _reach) over ids only (index-only, so a deep offset stays
// cheap), then reads the page's rows; visibility excludes the caller's hidden set once.
// Without filters the exact total is the workspace's maintained live count minus the
// hidden live datasets; the count and the page go in one round trip.
func (s *CatalogStore) FindDatasets(ctx context.Context, v catalog.Viewer, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error) {
	sql := findDatasetsSQL(v, f)
	var out vigia.List[catalog.Dataset]
	b := &pgx.Batch{}
	b.Queue(sql.count, sql.countArgs...).QueryRow(func(r pgx.Row) error { return r.Scan(&out.Total) })
	b.Queue(sql.page, append(sql.pageArgs, f.Page.Limit, f.Page.Offset)...).Query(func(rows pgx.Rows) error {
		var err error
		out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.Dataset, error) { return scanDataset(r) })
		return err
	})
	if err := s.db.q(ctx).SendBatch(ctx, b).Close(); err != nil {
		return out, translate(err)
	}
	if out.Items == nil {
		out.Items = []catalog.Dataset{}
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

// datasetListSQL is the SQL of one dataset list: its count and its page with their
// parameters (the page's, then the limit and the offset).
type datasetListSQL struct {
	count, page         string
	countArgs, pageArgs []any
}

// findDatasetsSQL builds the list's SQL and parameters ($1 workspace, $2 teams, $3 admin).
func findDatasetsSQL(v catalog.Viewer, f catalog.DatasetFilter) datasetListSQL {
	where := []string{"d.workspace_id = $1", "d.dropped_at IS NULL", HiddenExcludedSQL("d.id", 1, 2, 3)}
	args := []any{v.WorkspaceID, v.TeamIDs, v.Admin}
	if f.ConnectionID != nil {
		args = append(args, *f.ConnectionID)
		where = append(where, fmt.Sprintf("d.connection_id = $%d", len(args)))
	}
	if f.Q != nil {
		// schema.table contains the schema and the table: one expression (trigram index).
		args = append(args, "%"+escapeLike(*f.Q)+"%")
		where = append(where, fmt.Sprintf("(d.schema_name || '.' || d.table_name) ILIKE $%d", len(args)))
	}
	if f.Verdict != nil {
		// The latest verdict (verdicts_seq), unknown before the first one, as the
		// dataset's verdict read answers.
		args = append(args, *f.Verdict)
		where = append(where, fmt.Sprintf(`coalesce((SELECT v.verdict FROM verdicts v WHERE v.dataset_id = d.id
			ORDER BY v.seq DESC LIMIT 1), 'unknown') = $%d`, len(args)))
	}
	cond := strings.Join(where, " AND ")
	out := datasetListSQL{countArgs: args}
	if f.ConnectionID == nil && f.Q == nil && f.Verdict == nil {
		out.count = `SELECT (SELECT coalesce(sum(delta), 0) FROM dataset_count_deltas WHERE workspace_id = $1)
			- (SELECT count(*) FROM datasets d WHERE d.workspace_id = $1 AND d.dropped_at IS NULL
				AND d.id IN (SELECT h FROM vigia_hidden_datasets($1, $2::uuid[], $3) h))`
	} else {
		out.count = `SELECT count(*) FROM datasets d WHERE ` + cond
	}
	order := "d.schema_name, d.table_name, d.id"
	switch f.Sort {
	case catalog.SortUsage:
		order = "d.queries_per_day DESC NULLS LAST, " + order
	case catalog.SortImpact:
		// Downstream reach, largest first, ties by name (kept by the lineage projector).
		order = "d.reach DESC, " + order
	}
	if f.After != nil {
		// A keyset page: the rows after the cursor's, as ordered branches that each seek
		// the order's index (ties on the sort key, then the rows past it).
		branches, more := keysetBranches(f.Sort, *f.After, len(args))
		args = append(slices.Clip(args), more...)
		n := len(args)
		parts := make([]string, 0, len(branches))
		for i, b := range branches {
			parts = append(parts, fmt.Sprintf(`(SELECT %d AS branch, d.id, d.queries_per_day, d.reach, d.schema_name, d.table_name
				FROM datasets d WHERE %s AND %s ORDER BY %s LIMIT $%d)`, i, cond, b, order, n+1))
		}
		pageOrder := strings.ReplaceAll(order, "d.", "k.")
		out.page = fmt.Sprintf(`SELECT %s FROM (SELECT k.id, k.branch FROM (%s) k ORDER BY k.branch, %s LIMIT $%d OFFSET $%d) p
			JOIN %s ON d.id = p.id ORDER BY p.branch, %s`, datasetColumns, strings.Join(parts, " UNION ALL "), pageOrder, n+1, n+2,
			datasetFrom, order)
		out.pageArgs = args
		return out
	}
	n := len(args)
	out.page = fmt.Sprintf(`SELECT %s FROM (SELECT d.id FROM datasets d WHERE %s ORDER BY %s LIMIT $%d OFFSET $%d) p
		JOIN %s ON d.id = p.id ORDER BY %s`, datasetColumns, cond, order, n+1, n+2, datasetFrom, order)
	out.pageArgs = slices.Clip(args)
	return out
}

// keysetBranches are the conditions of the rows after key in the order sort, each an
// index range of that order, in order; their parameters are numbered from after n.
func keysetBranches(sort string, key catalog.DatasetKey, n int) ([]string, []any) {
	args := []any{key.Schema, key.Table, key.ID}
	name := fmt.Sprintf("(d.schema_name, d.table_name, d.id) > ($%d, $%d, $%d::uuid)", n+1, n+2, n+3)
	switch sort {
	case catalog.SortImpact:
		args = append(args, key.Reach)
		r := n + 4
		return []string{fmt.Sprintf("d.reach = $%d AND %s", r, name), fmt.Sprintf("d.reach < $%d", r)}, args
	case catalog.SortUsage:
		if key.QueriesPerDay == nil { // NULLS LAST: only the rest of the nulls
			return []string{"d.queries_per_day IS NULL AND " + name}, args
		}
		args = append(args, *key.QueriesPerDay)
		q := n + 4
		return []string{fmt.Sprintf("d.queries_per_day = $%d AND %s", q, name), fmt.Sprintf("d.queries_per_day < $%d", q),
			"d.queries_per_day IS NULL"}, args
	}
	return []string{name}, args
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

// DatasetByID returns a dataset of the workspace with its columns, score history, open
// issues, grants and last runs, in one round trip (a pgx.Batch): the other reads are
// discarded when the first finds no dataset v can see.
func (s *CatalogStore) DatasetByID(ctx context.Context, v catalog.Viewer, id string) (catalog.Dataset, error) {
	b := &pgx.Batch{}
	queueGenericPlans(ctx, b)
	result := queueDatasetByID(b, v, id)
	if err := s.db.q(ctx).SendBatch(ctx, b).Close(); err != nil {
		return catalog.Dataset{}, translate(err)
	}
	return result()
}

// queueDatasetByID queues the reads of DatasetByID on b (after queueGenericPlans); once
// the batch is read, result returns the dataset, or KindNotFound.
func queueDatasetByID(b *pgx.Batch, v catalog.Viewer, id string) (result func() (catalog.Dataset, error)) {
	var d catalog.Dataset
	var found bool
	var lastRun struct {
		rc     *int64
		exact  *bool
		scanID *string
		code   *string
		at     *time.Time
	}
	var grants []catalog.DomainGrant
	// The row is picked by key first (OFFSET 0 keeps the step apart): run with a generic
	// plan, the statement may otherwise walk the workspace's name index and filter every
	// dataset of the workspace by id (as factsSQL; `vigia bench ide`).
	b.Queue(`SELECT `+datasetColumns+` FROM (SELECT * FROM datasets WHERE id = $1 OFFSET 0) d
		JOIN connections c ON c.id = d.connection_id JOIN workspaces w ON w.id = d.workspace_id
		WHERE d.workspace_id = $2 AND d.dropped_at IS NULL AND `+visibleRowSQL("d.id", 3, 4), id, v.WorkspaceID, v.TeamIDs, v.Admin).
		Query(func(rows pgx.Rows) error {
			ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.Dataset, error) { return scanDataset(r) })
			if len(ds) == 1 {
				d, found = ds[0], true
			}
			return err
		})
	b.Queue(`SELECT name, position, data_type, class, nullable, primary_key, partition, clustering, profile, unique_key, indexed
		FROM dataset_columns WHERE dataset_id = $1 ORDER BY position, name`, id).Query(func(rows pgx.Rows) error {
		var err error
		d.Columns, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.Column, error) {
			var c catalog.Column
			var profile []byte
			if err := r.Scan(&c.Name, &c.Position, &c.DataType, &c.Class, &c.Nullable, &c.PrimaryKey, &c.Partition, &c.Clustering, &profile, &c.Unique, &c.Indexed); err != nil {
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
		return err
	})
	b.Queue(`SELECT scan_id::text, score, detail->'dimensions', created_at FROM scores
		WHERE dataset_id = $1 ORDER BY seq DESC LIMIT 30`, id).Query(func(rows pgx.Rows) error {
		var err error
		d.ScoreHistory, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.ScorePoint, error) {
			var p catalog.ScorePoint
			var dims []byte
			if err := r.Scan(&p.ScanID, &p.Score, &dims, &p.CreatedAt); err != nil {
				return p, err
			}
			return p, json.Unmarshal(dims, &p.Dimensions)
		})
		return err
	})
	b.Queue(issueSummarySelect+` WHERE i.dataset_id = $1 AND i.status IN ('open', 'acknowledged')
		ORDER BY CASE i.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, i.created_at DESC`, id).
		Query(func(rows pgx.Rows) error {
			var err error
			d.Issues, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.IssueSummary, error) { return scanIssueSummary(r) })
			return err
		})
	b.Queue(`SELECT p.row_count, p.row_count_exact, f.scan_id::text, f.code, f.failed_at
		FROM (SELECT $1::uuid AS id) d
		LEFT JOIN LATERAL (SELECT row_count, row_count_exact, profiled_at FROM dataset_profiles
			WHERE dataset_id = d.id ORDER BY seq DESC LIMIT 1) p ON true
		LEFT JOIN LATERAL (SELECT scan_id, code, failed_at FROM scan_failures
			WHERE dataset_id = d.id ORDER BY failed_at DESC LIMIT 1) f ON f.failed_at > coalesce(p.profiled_at, '-infinity')`, id).
		QueryRow(func(r pgx.Row) error {
			return r.Scan(&lastRun.rc, &lastRun.exact, &lastRun.scanID, &lastRun.code, &lastRun.at)
		})
	if len(v.TeamIDs) > 0 {
		b.Queue(`SELECT DISTINCT dm.id::text, dm.restricted, g.role
			FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
			JOIN domain_grants g ON g.domain_id = dm.id AND g.team_id = ANY($2::uuid[])
			WHERE dd.dataset_id = $1 AND dm.workspace_id = $3 ORDER BY 1, 3`, id, v.TeamIDs, v.WorkspaceID).
			Query(func(rows pgx.Rows) error {
				var err error
				grants, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.DomainGrant, error) {
					var g catalog.DomainGrant
					return g, r.Scan(&g.DomainID, &g.Restricted, &g.Role)
				})
				return err
			})
	}
	var fks []datasetForeignKey
	b.Queue(foreignKeysSQL, []string{id}, v.TeamIDs, v.Admin).Query(func(rows pgx.Rows) error {
		var err error
		fks, err = scanForeignKeys(rows)
		return err
	})
	return func() (catalog.Dataset, error) {
		if !found {
			return catalog.Dataset{}, vigia.NotFound()
		}
		if len(grants) > 0 {
			d.Grants = grants
		}
		d.RowCount, d.RowCountExact = lastRun.rc, lastRun.exact
		if lastRun.scanID != nil && lastRun.code != nil && lastRun.at != nil {
			d.LastFailure = &catalog.ProfileFailure{ScanID: *lastRun.scanID, Code: *lastRun.code, At: *lastRun.at}
		}
		m := map[string]catalog.Dataset{id: d}
		applyForeignKeys(fks, m)
		return m[id], nil
	}
}

// genericPlansSQL makes the rest of a batch's implicit transaction run its prepared
// statements with their generic plans (cached per connection), never re-planned per
// execution (pgx sends a batch with one Sync: one implicit transaction). Postgres keeps custom plans for statements whose generic plan it estimates
// dearer, as it does for the detail's reads (the visibility condition's admin flag and
// team ids are parameters): planning those costs several times their execution. Only
// for reads by primary key, whose every step is an index probe of a key parameter
// whatever the values; local to the batch (set_config's is_local), so it never leaks
// to the connection's next user.
const genericPlansSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// queueGenericPlans queues genericPlansSQL as the first statement of b, unless ctx
// carries a transaction, where the setting would outlive the batch.
func queueGenericPlans(ctx context.Context, b *pgx.Batch) {
	if _, inTx := pgtx.From(ctx); !inTx {
		b.Queue(genericPlansSQL)
	}
}

// foreignKeys fills the declared foreign keys of the datasets among ids and their
// columns' references; a referenced dataset the caller cannot see is restricted (no id,
// no names).
func (s *CatalogStore) foreignKeys(ctx context.Context, v catalog.Viewer, ids []string, out map[string]catalog.Dataset) error {
	rows, err := s.db.q(ctx).Query(ctx, foreignKeysSQL, ids, v.TeamIDs, v.Admin)
	if err != nil {
		return translate(err)
	}
	fks, err := scanForeignKeys(rows)
	if err != nil {
		return translate(err)
	}
	applyForeignKeys(fks, out)
	return nil
}

// foreignKeysSQL reads the declared foreign keys of the datasets $1 for a caller of
// teams $2 and admin flag $3, each with the referenced dataset's id and whether the
// caller can see it.
var foreignKeysSQL = `SELECT fk.dataset_id::text, fk.constraint_name, fk.columns, fk.ref_schema, fk.ref_table, fk.ref_columns,
		r.id::text, r.id IS NOT NULL AND ` + VisibleSQL("r.id", 2, 3) + `
	FROM dataset_foreign_keys fk JOIN datasets d ON d.id = fk.dataset_id
	LEFT JOIN datasets r ON r.connection_id = d.connection_id AND r.schema_name = fk.ref_schema AND r.table_name = fk.ref_table
		AND r.dropped_at IS NULL
	WHERE fk.dataset_id = ANY($1::uuid[]) ORDER BY fk.dataset_id, fk.position`

// datasetForeignKey is a row of foreignKeysSQL: the dataset's id and its key, the
// reference resolved (or restricted) for the caller.
type datasetForeignKey struct {
	datasetID string
	fk        catalog.ForeignKey
}

func scanForeignKeys(rows pgx.Rows) ([]datasetForeignKey, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (datasetForeignKey, error) {
		var x datasetForeignKey
		var ref *string
		var visible bool
		if err := r.Scan(&x.datasetID, &x.fk.Name, &x.fk.Columns, &x.fk.RefSchema, &x.fk.RefTable, &x.fk.RefColumns, &ref, &visible); err != nil {
			return x, err
		}
		switch {
		case ref != nil && visible:
			x.fk.RefDatasetID = ref
		case ref != nil:
			x.fk.Restricted, x.fk.RefSchema, x.fk.RefTable, x.fk.RefColumns = true, "", "", make([]string, len(x.fk.RefColumns))
		}
		return x, nil
	})
}

// applyForeignKeys adds the keys to their datasets in out and the references to their
// columns.
func applyForeignKeys(fks []datasetForeignKey, out map[string]catalog.Dataset) {
	for _, x := range fks {
		d, ok := out[x.datasetID]
		if !ok {
			continue
		}
		fk := x.fk
		d.ForeignKeys = append(d.ForeignKeys, fk)
		for i, col := range fk.Columns {
			for j := range d.Columns {
				if d.Columns[j].Name == col && i < len(fk.RefColumns) {
					d.Columns[j].References = append(d.Columns[j].References, catalog.ColumnRef{Constraint: fk.Name, DatasetID: fk.RefDatasetID,
						Schema: fk.RefSchema, Table: fk.RefTable, Column: fk.RefColumns[i], Restricted: fk.Restricted})
				}
			}
		}
		out[x.datasetID] = d
	}
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
	// By key first, as DatasetByID.
	rows, err := q.Query(ctx, `SELECT `+datasetColumns+` FROM (SELECT * FROM datasets WHERE id = ANY($2::uuid[]) OFFSET 0) d
		JOIN connections c ON c.id = d.connection_id JOIN workspaces w ON w.id = d.workspace_id
		WHERE d.workspace_id = $1 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 3, 4),
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
	rows, err = q.Query(ctx, `SELECT dataset_id::text, name, position, data_type, class, nullable, primary_key, partition, clustering, profile, unique_key, indexed
		FROM dataset_columns WHERE dataset_id = ANY($1::uuid[]) ORDER BY dataset_id, position, name`, live)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id string
		var c catalog.Column
		var profile []byte
		if err := rows.Scan(&id, &c.Name, &c.Position, &c.DataType, &c.Class, &c.Nullable, &c.PrimaryKey, &c.Partition, &c.Clustering, &profile, &c.Unique, &c.Indexed); err != nil {
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
	if err := s.foreignKeys(ctx, v, live, out); err != nil {
		return nil, err
	}
	return out, nil
}

// visibleFilter starts the WHERE clause of a list over the live datasets v can see: the
// rows' workspace column (wsCol) and the dataset d's are v's (so plans can use d's
// workspace indexes), d is not dropped and not in v's hidden set; add appends conditions
// with their parameters.
func visibleFilter(wsCol string, v catalog.Viewer) *listFilter {
	return &listFilter{where: []string{wsCol + " = $1", "d.workspace_id = $1", "d.dropped_at IS NULL", HiddenExcludedSQL("d.id", 1, 2, 3)},
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

// HiddenExcludedSQL is the visibility rule of lists, as a set: the dataset id expression
// is not among the datasets of the workspace the caller cannot see (vigia_hidden_datasets,
// a handful of rows computed once per query and hashed), with the workspace, the
// caller's team ids and admin flag as query parameters. Never vigia_dataset_visible per
// row in a list: the plan test (TestListPlansUseIndexes) fails on it.
func HiddenExcludedSQL(datasetExpr string, wsParam, teamsParam, adminParam int) string {
	return fmt.Sprintf("%s NOT IN (SELECT h FROM vigia_hidden_datasets($%d, $%d::uuid[], $%d) h)", datasetExpr, wsParam, teamsParam, adminParam)
}

// visibleRowSQL is vigia_dataset_visible's rule written inline, for reads of a few
// datasets by id (the detail): one index probe of domain_datasets per row, where the
// function (a SQL function the planner cannot inline) costs a re-planning of its body
// per execution. Lists use HiddenExcludedSQL. The admin flag is inside the NOT EXISTS,
// not OR-ed with it: a plain NOT EXISTS is an anti-join that probes the row's
// memberships, where `$admin OR NOT EXISTS` becomes a subplan that hashes every
// restricted membership of the database on each execution.
func visibleRowSQL(datasetExpr string, teamsParam, adminParam int) string {
	return fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM domain_datasets vis_dd JOIN domains vis_dm ON vis_dm.id = vis_dd.domain_id
		WHERE vis_dd.dataset_id = %[1]s AND NOT $%[3]d AND vis_dm.restricted
		AND NOT EXISTS (SELECT 1 FROM domain_grants vis_g WHERE vis_g.domain_id = vis_dm.id AND vis_g.team_id = ANY($%[2]d::uuid[])))`,
		datasetExpr, teamsParam, adminParam)
}

// VisibleSQL is the visibility predicate for a dataset id expression, with the caller's
// team ids and admin flag as query parameters $teams and $admin.
func VisibleSQL(datasetExpr string, teamsParam, adminParam int) string {
	return fmt.Sprintf("vigia_dataset_visible(%s, $%d::uuid[], $%d)", datasetExpr, teamsParam, adminParam)
}
