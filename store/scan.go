package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

// ScanStore implements scan.Store.
type ScanStore struct{ db *DB }

// Scans returns the scan store.
func (db *DB) Scans() *ScanStore { return &ScanStore{db: db} }

var _ scan.Store = (*ScanStore)(nil)

const scanSelect = `SELECT s.id::text, s.workspace_id::text, s.connection_id::text, c.name, s.status, s.trigger, s.requested_by,
	s.attempt, s.datasets_total, s.datasets_done, s.datasets_failed, s.current_dataset, s.error_code, s.created_at,
	s.started_at, s.finished_at FROM scans s JOIN connections c ON c.id = s.connection_id`

func scanScan(r pgx.Row) (scan.Scan, error) {
	var s scan.Scan
	err := r.Scan(&s.ID, &s.WorkspaceID, &s.ConnectionID, &s.ConnectionName, &s.Status, &s.Trigger, &s.RequestedBy,
		&s.Attempt, &s.DatasetsTotal, &s.DatasetsDone, &s.DatasetsFailed, &s.CurrentDataset, &s.ErrorCode, &s.CreatedAt,
		&s.StartedAt, &s.FinishedAt)
	return s, err
}

// CreateScan inserts a queued scan.
func (s *ScanStore) CreateScan(ctx context.Context, sc scan.Scan) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO scans (id, workspace_id, connection_id, status, trigger, requested_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, sc.ID, sc.WorkspaceID, sc.ConnectionID, sc.Status, sc.Trigger, sc.RequestedBy, sc.CreatedAt)
	return translate(err)
}

// SetScanJob links a scan to its job.
func (s *ScanStore) SetScanJob(ctx context.Context, scanID, jobID string) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE scans SET job_id = $2 WHERE id = $1`, scanID, jobID)
	return translate(err)
}

// ActiveScanForConnection returns the newest queued or running scan of a connection.
func (s *ScanStore) ActiveScanForConnection(ctx context.Context, connectionID string) (scan.Scan, bool, error) {
	sc, err := scanScan(s.db.q(ctx).QueryRow(ctx, scanSelect+` WHERE s.connection_id = $1 AND s.status IN ('queued', 'running')
		ORDER BY s.created_at DESC LIMIT 1 FOR UPDATE OF s`, connectionID))
	if err == pgx.ErrNoRows {
		return sc, false, nil
	}
	return sc, err == nil, translate(err)
}

// CountActiveScans counts a workspace's queued and running scans.
func (s *ScanStore) CountActiveScans(ctx context.Context, workspaceID string) (int, error) {
	var n int
	err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM scans WHERE workspace_id = $1 AND status IN ('queued', 'running')`, workspaceID).Scan(&n)
	return n, translate(err)
}

// Scans lists a workspace's scans, newest first.
func (s *ScanStore) Scans(ctx context.Context, workspaceID string, page vigia.Page) (vigia.List[scan.Scan], error) {
	var out vigia.List[scan.Scan]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM scans WHERE workspace_id = $1`, workspaceID).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, scanSelect+` WHERE s.workspace_id = $1 ORDER BY s.created_at DESC, s.id DESC LIMIT $2 OFFSET $3`,
		workspaceID, page.Limit, page.Offset)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.Scan, error) { return scanScan(r) })
	return out, translate(err)
}

// ScanByID returns a scan of the workspace.
func (s *ScanStore) ScanByID(ctx context.Context, workspaceID, id string) (scan.Scan, error) {
	sc, err := scanScan(s.db.q(ctx).QueryRow(ctx, scanSelect+` WHERE s.workspace_id = $1 AND s.id = $2`, workspaceID, id))
	return sc, translate(err)
}

// ScanForRun returns a scan by id for the worker.
func (s *ScanStore) ScanForRun(ctx context.Context, id string) (scan.Scan, error) {
	sc, err := scanScan(s.db.q(ctx).QueryRow(ctx, scanSelect+` WHERE s.id = $1`, id))
	return sc, translate(err)
}

// MarkRunning starts (or restarts) a scan and counts the attempt.
func (s *ScanStore) MarkRunning(ctx context.Context, id string, at time.Time) (scan.Scan, error) {
	if _, err := s.db.q(ctx).Exec(ctx, `UPDATE scans SET status = 'running', attempt = attempt + 1,
		started_at = coalesce(started_at, $2) WHERE id = $1`, id, at); err != nil {
		return scan.Scan{}, translate(err)
	}
	return s.ScanForRun(ctx, id)
}

// UpdateProgress records how far a scan got.
func (s *ScanStore) UpdateProgress(ctx context.Context, id string, total, done, failed int, current *string) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE scans SET datasets_total = $2, datasets_done = $3, datasets_failed = $4,
		current_dataset = $5 WHERE id = $1`, id, total, done, failed, current)
	return translate(err)
}

// FinishScan sets a final status.
func (s *ScanStore) FinishScan(ctx context.Context, id, status string, errorCode *string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE scans SET status = $2, error_code = $3, finished_at = $4, current_dataset = NULL
		WHERE id = $1`, id, status, errorCode, at)
	return translate(err)
}

// SyncDatasets upserts discovered tables and marks the vanished ones dropped. A new
// dataset gets its declared columns at once; a known one keeps its profiled columns
// until its next profile is saved.
func (s *ScanStore) SyncDatasets(ctx context.Context, workspaceID, connectionID string, tables []source.Table, at time.Time) ([]scan.DatasetRef, error) {
	n := len(tables)
	ids := make([]string, n)
	schemas := make([]string, n)
	names := make([]string, n)
	kinds := make([]string, n)
	viewDefs := make([]*string, n)
	reads := make([]*int64, n)
	deps := make([]*string, n)
	for i, t := range tables {
		ids[i], schemas[i], names[i], kinds[i], reads[i] = vigia.NewID(), t.Schema, t.Name, t.Kind, t.Reads
		if t.ViewDefinition != "" {
			viewDefs[i] = &t.ViewDefinition
		}
		if t.DependsOnKnown {
			refs := make([]source.TableName, 0, len(t.DependsOn))
			refs = append(refs, t.DependsOn...)
			b, err := json.Marshal(refs)
			if err != nil {
				return nil, vigia.Internal(err)
			}
			js := string(b)
			deps[i] = &js
		}
	}
	out := make([]scan.DatasetRef, n)
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		// One statement for every table (not one per table): the per-statement count
		// triggers of datasets run once, and 10,000 tables cost one round trip.
		rows, err := q.Query(ctx, `INSERT INTO datasets AS datasets (id, workspace_id, connection_id, schema_name, table_name, kind, view_definition,
			created_at, updated_at, usage_reads, usage_reads_at, view_depends_on)
			SELECT t.id, $1, $2, t.schema_name, t.table_name, t.kind, t.view_definition, $3, $3, t.reads,
			       CASE WHEN t.reads IS NULL THEN NULL ELSE $3::timestamptz END, t.deps
			  FROM unnest($4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[], $10::jsonb[])
			       AS t(id, schema_name, table_name, kind, view_definition, reads, deps)
			ORDER BY t.schema_name, t.table_name
			ON CONFLICT (connection_id, schema_name, table_name) DO UPDATE
			   SET kind = EXCLUDED.kind, view_definition = EXCLUDED.view_definition, view_depends_on = EXCLUDED.view_depends_on,
			       dropped_at = NULL, updated_at = EXCLUDED.updated_at,
			       queries_per_day = CASE
			           WHEN EXCLUDED.usage_reads IS NULL THEN NULL
			           WHEN datasets.usage_reads IS NULL OR EXCLUDED.usage_reads < datasets.usage_reads
			                OR EXCLUDED.updated_at - datasets.usage_reads_at < interval '1 minute' THEN datasets.queries_per_day
			           ELSE (EXCLUDED.usage_reads - datasets.usage_reads) / (extract(epoch FROM EXCLUDED.updated_at - datasets.usage_reads_at) / 86400)
			       END,
			       usage_reads = CASE WHEN EXCLUDED.usage_reads IS NULL OR datasets.usage_reads_at IS NULL
			                          OR EXCLUDED.updated_at - datasets.usage_reads_at >= interval '1 minute' OR EXCLUDED.usage_reads < datasets.usage_reads
			                     THEN EXCLUDED.usage_reads ELSE datasets.usage_reads END,
			       usage_reads_at = CASE WHEN EXCLUDED.usage_reads IS NULL THEN NULL
			                             WHEN datasets.usage_reads_at IS NULL OR EXCLUDED.updated_at - datasets.usage_reads_at >= interval '1 minute'
			                                  OR EXCLUDED.usage_reads < datasets.usage_reads THEN EXCLUDED.updated_at
			                             ELSE datasets.usage_reads_at END
			RETURNING id::text, workspace_id::text, schema_name, table_name, kind, depth, data_country, (xmax = 0)`,
			workspaceID, connectionID, at, ids, schemas, names, kinds, viewDefs, reads, deps)
		if err != nil {
			return translate(err)
		}
		index := make(map[[2]string]int, n)
		for i, t := range tables {
			index[[2]string{t.Schema, t.Name}] = i
		}
		var inserted []int
		for rows.Next() {
			var d scan.DatasetRef
			var isNew bool
			if err := rows.Scan(&d.ID, &d.WorkspaceID, &d.Schema, &d.Table, &d.Kind, &d.Depth, &d.DataCountry, &isNew); err != nil {
				rows.Close()
				return translate(err)
			}
			i, ok := index[[2]string{d.Schema, d.Table}]
			if !ok {
				rows.Close()
				return vigia.Internal(fmt.Errorf("synced dataset %q is not a discovered table", d.Schema+"."+d.Table))
			}
			out[i] = d
			if isNew {
				inserted = append(inserted, i)
			}
		}
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		seen := make([]string, n)
		for i, d := range out {
			if d.ID == "" {
				return vigia.Internal(fmt.Errorf("discovered table %q was not synced", tables[i].Schema+"."+tables[i].Name))
			}
			seen[i] = d.ID
		}
		// A new dataset gets its declared columns at once, all of them in one COPY.
		if len(inserted) > 0 {
			newIDs := make([]string, len(inserted))
			var cols [][]any
			for k, i := range inserted {
				newIDs[k] = out[i].ID
				for _, c := range tables[i].Columns {
					cols = append(cols, []any{out[i].ID, c.Name, c.Position, c.DataType, c.Class, c.Nullable, c.PrimaryKey, c.Partition, c.Clustering, nil, c.Unique, c.Indexed})
				}
			}
			if _, err := q.Exec(ctx, `DELETE FROM dataset_columns WHERE dataset_id = ANY($1::uuid[])`, newIDs); err != nil {
				return translate(err)
			}
			if len(cols) > 0 {
				if _, err := q.CopyFrom(ctx, pgx.Identifier{"dataset_columns"},
					[]string{"dataset_id", "name", "position", "data_type", "class", "nullable", "primary_key", "partition", "clustering", "profile", "unique_key", "indexed"},
					pgx.CopyFromRows(cols)); err != nil {
					return translate(err)
				}
			}
		}
		if _, err := q.Exec(ctx, `UPDATE datasets SET dropped_at = $3, updated_at = $3
			WHERE connection_id = $1 AND dropped_at IS NULL AND NOT (id = ANY($2::uuid[]))`, connectionID, seen, at); err != nil {
			return translate(err)
		}
		return replaceForeignKeys(ctx, q, seen, tables)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// replaceForeignKeys rewrites the declared foreign keys of the synced datasets (ids in
// the order of tables).
func replaceForeignKeys(ctx context.Context, q querier, ids []string, tables []source.Table) error {
	if _, err := q.Exec(ctx, `DELETE FROM dataset_foreign_keys WHERE dataset_id = ANY($1::uuid[])`, ids); err != nil {
		return translate(err)
	}
	var rows [][]any
	for i, t := range tables {
		for j, fk := range t.ForeignKeys {
			rows = append(rows, []any{ids[i], j + 1, fk.Name, fk.Columns, fk.References.Schema, fk.References.Name, fk.RefColumns})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"dataset_foreign_keys"},
		[]string{"dataset_id", "position", "constraint_name", "columns", "ref_schema", "ref_table", "ref_columns"}, pgx.CopyFromRows(rows))
	return translate(err)
}

// RecordFailure records a dataset the scan could not profile.
func (s *ScanStore) RecordFailure(ctx context.Context, scanID, workspaceID, datasetID, code string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO scan_failures (scan_id, dataset_id, workspace_id, code, failed_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (scan_id, dataset_id) DO UPDATE SET code = EXCLUDED.code, failed_at = EXCLUDED.failed_at`,
		scanID, datasetID, workspaceID, code, at)
	return translate(err)
}

// ScanFailures lists a scan's failed datasets by name.
func (s *ScanStore) ScanFailures(ctx context.Context, v catalog.Viewer, scanID string) ([]scan.Failure, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT f.dataset_id::text, CASE WHEN d.schema_name = '' THEN d.table_name
		ELSE d.schema_name || '.' || d.table_name END, f.code, f.failed_at
		FROM scan_failures f JOIN datasets d ON d.id = f.dataset_id
		WHERE f.scan_id = $1 AND f.workspace_id = $2 AND `+VisibleSQL("d.id", 3, 4)+` ORDER BY 2, 1`, scanID, v.WorkspaceID, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.Failure, error) {
		var f scan.Failure
		err := r.Scan(&f.DatasetID, &f.Name, &f.Code, &f.At)
		return f, err
	})
	if out == nil {
		out = []scan.Failure{}
	}
	return out, translate(err)
}

// HasProfile reports whether the scan already saved the dataset's result.
func (s *ScanStore) HasProfile(ctx context.Context, datasetID, scanID string) (bool, error) {
	var ok bool
	err := s.db.q(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM dataset_profiles WHERE dataset_id = $1 AND scan_id = $2)`, datasetID, scanID).Scan(&ok)
	return ok, translate(err)
}

// idSet collects a query's single text column as a set.
func idSet(rows pgx.Rows) (map[string]bool, error) {
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// ProfiledDatasets returns the datasets whose result the scan already saved.
func (s *ScanStore) ProfiledDatasets(ctx context.Context, scanID string) (map[string]bool, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT dataset_id::text FROM dataset_profiles WHERE scan_id = $1`, scanID)
	if err != nil {
		return nil, translate(err)
	}
	return idSet(rows)
}

var _ scan.DatasetExtras = (*ScanStore)(nil)

// DatasetExtras implements scan.DatasetExtras: one read of the connection's datasets
// with active rules (scan-evaluated or reported) or domains.
func (s *ScanStore) DatasetExtras(ctx context.Context, connectionID string) (scan.Extras, error) {
	ex := scan.Extras{Rules: map[string]bool{}, Reported: map[string]bool{}, Domains: map[string]bool{}}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT r.dataset_id::text, CASE WHEN r.dbt_unique_id IS NULL THEN 'rules' ELSE 'reported' END
		FROM rules r JOIN datasets d ON d.id = r.dataset_id WHERE d.connection_id = $1 AND r.active
		UNION
		SELECT dd.dataset_id::text, 'domains' FROM domain_datasets dd JOIN datasets d ON d.id = dd.dataset_id WHERE d.connection_id = $1`,
		connectionID)
	if err != nil {
		return ex, translate(err)
	}
	for rows.Next() {
		var id, what string
		if err := rows.Scan(&id, &what); err != nil {
			rows.Close()
			return ex, translate(err)
		}
		switch what {
		case "rules":
			ex.Rules[id] = true
		case "reported":
			ex.Reported[id] = true
		default:
			ex.Domains[id] = true
		}
	}
	return ex, translate(rows.Err())
}

// PrevState loads what the dataset's previous scans left: one round trip (a batch of
// its five reads), as every dataset of a scan reads it.
func (s *ScanStore) PrevState(ctx context.Context, datasetID string) (scan.PrevState, error) {
	var st scan.PrevState
	b := &pgx.Batch{}
	b.Queue(`SELECT seq, columns, metrics FROM dataset_profiles WHERE dataset_id = $1 ORDER BY seq DESC LIMIT $2`, datasetID, 30)
	b.Queue(`SELECT detail FROM scores WHERE dataset_id = $1 ORDER BY seq DESC LIMIT 1`, datasetID)
	b.Queue(`SELECT verdict FROM verdicts WHERE dataset_id = $1 ORDER BY seq DESC LIMIT 1`, datasetID)
	// The recently resolved drifts and anomalies are those since the last score (any,
	// without one).
	b.Queue(`SELECT id::text, type, severity, status, metric, column_name, structural, last_detected_seq,
		coalesce(rule_id::text, ''), rule_current, band, coalesce(details->>'direction', ''), clean_scans
		FROM issues WHERE dataset_id = $1 AND (status IN ('open', 'acknowledged') OR rule_current
		   OR (type IN ('schema_drift', 'anomaly') AND resolved_at >= coalesce(
		       (SELECT created_at FROM scores WHERE dataset_id = $1 ORDER BY seq DESC LIMIT 1), $2)))`, datasetID, time.Time{})
	b.Queue(`SELECT metric, column_name, threshold, silenced FROM anomaly_tuning WHERE dataset_id = $1`, datasetID)
	br := s.db.q(ctx).SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return st, translate(err)
	}
	type prof struct {
		seq     int
		columns []byte
		metrics []byte
	}
	profs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (prof, error) {
		var p prof
		err := r.Scan(&p.seq, &p.columns, &p.metrics)
		return p, err
	})
	if err != nil {
		return st, translate(err)
	}
	for i := len(profs) - 1; i >= 0; i-- {
		var m scan.Metrics
		if err := json.Unmarshal(profs[i].metrics, &m); err != nil {
			return st, vigia.Internal(err)
		}
		st.History = append(st.History, m)
	}
	if len(profs) > 0 {
		st.Seq = profs[0].seq
		var stored []storedColumn
		if err := json.Unmarshal(profs[0].columns, &stored); err != nil {
			return st, vigia.Internal(err)
		}
		st.Columns = make([]quality.ColumnShape, 0, len(stored))
		for _, c := range stored {
			st.Columns = append(st.Columns, quality.ColumnShape{Name: c.Name, Type: c.DataType, Position: c.Position})
		}
	}
	var detail []byte
	err = br.QueryRow().Scan(&detail)
	if err == nil {
		st.Score = &quality.Score{}
		if err := json.Unmarshal(detail, st.Score); err != nil {
			return st, vigia.Internal(err)
		}
	} else if err != pgx.ErrNoRows {
		return st, translate(err)
	}
	var v string
	err = br.QueryRow().Scan(&v)
	if err == nil {
		qv := quality.Verdict(v)
		st.Verdict = &qv
	} else if err != pgx.ErrNoRows {
		return st, translate(err)
	}
	if rows, err = br.Query(); err != nil {
		return st, translate(err)
	}
	st.Issues, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.KnownIssue, error) {
		var k scan.KnownIssue
		var band []byte
		err := r.Scan(&k.ID, &k.Type, &k.Severity, &k.Status, &k.Metric, &k.Column, &k.Structural, &k.LastDetectedSeq,
			&k.RuleID, &k.RuleCurrent, &band, &k.Direction, &k.CleanScans)
		if err == nil && band != nil {
			k.Band = &quality.Band{}
			err = json.Unmarshal(band, k.Band)
		}
		return k, err
	})
	if err != nil {
		return st, translate(err)
	}
	if rows, err = br.Query(); err != nil {
		return st, translate(err)
	}
	st.Thresholds, st.Silenced = map[string]float64{}, map[string]bool{}
	for rows.Next() {
		var metric, column string
		var th float64
		var silenced bool
		if err := rows.Scan(&metric, &column, &th, &silenced); err != nil {
			rows.Close()
			return st, translate(err)
		}
		k := metric
		if column != "" {
			k += ":" + column
		}
		st.Thresholds[k], st.Silenced[k] = th, silenced
	}
	if err := rows.Err(); err != nil {
		return st, translate(err)
	}
	return st, translate(br.Close())
}

// storedColumn is a column with its profile as kept in dataset_profiles.columns.
type storedColumn struct {
	source.Column
	Profile catalog.ColumnProfile `json:"profile"`
}

// SaveDatasetResult writes one dataset's whole scan result atomically: profile, columns,
// score, verdict, issues, changes, signals and events land together or not at all. A
// result of the dataset's own rows only (no issue, rule result, change, signal or
// event: most datasets of a scan) is one batch, which the database runs as one
// implicit transaction: one round trip. Any other runs in a transaction (ctx's, else
// its own).
func (s *ScanStore) SaveDatasetResult(ctx context.Context, r scan.DatasetResult) error {
	if len(r.NewIssues) == 0 && len(r.Redetected) == 0 && len(r.SchemaChanges) == 0 && len(r.Signals) == 0 && len(r.Events) == 0 &&
		len(r.RuleResults) == 0 && len(r.Transitions) == 0 && len(r.Recovery) == 0 {
		return s.saveDatasetResult(ctx, r)
	}
	return s.db.InTx(ctx, func(ctx context.Context) error { return s.saveDatasetResult(ctx, r) })
}

// saveDatasetResult writes the result: one batch of the dataset's own rows, then the
// issues, rule results, changes, signals and events one statement each.
func (s *ScanStore) saveDatasetResult(ctx context.Context, r scan.DatasetResult) error {
	q := s.db.q(ctx)
	p := r.Profile
	stored := make([]storedColumn, 0, len(r.Columns))
	profiles := map[string][]byte{}
	byName := map[string]source.ColumnProfile{}
	for _, c := range p.Columns {
		byName[c.Name] = c
	}
	for _, c := range r.Columns {
		cp := toColumnProfile(byName[c.Name], p.RowCount, p.Truncated)
		stored = append(stored, storedColumn{Column: c, Profile: cp})
		b, err := json.Marshal(cp)
		if err != nil {
			return vigia.Internal(err)
		}
		profiles[c.Name] = b
	}
	cols, err := json.Marshal(stored)
	if err != nil {
		return vigia.Internal(err)
	}
	metrics, err := json.Marshal(r.Metrics)
	if err != nil {
		return vigia.Internal(err)
	}
	score, err := json.Marshal(r.Score)
	if err != nil {
		return vigia.Internal(err)
	}
	verdict, err := json.Marshal(r.Verdict)
	if err != nil {
		return vigia.Internal(err)
	}
	// The dataset's result in one round trip: the profile, its columns, the score, the
	// verdict and the dataset's latest figures (a scan of 10,000 small tables would
	// otherwise pay seven waits per table).
	n := len(r.Columns)
	names, types, classes := make([]string, n), make([]string, n), make([]string, n)
	positions := make([]int, n)
	nullable, pk, part, clus, uniq, indexed := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
	profs := make([]*string, n)
	for i, c := range r.Columns {
		names[i], positions[i], types[i], classes[i] = c.Name, c.Position, c.DataType, c.Class
		nullable[i], pk[i], part[i], clus[i], uniq[i], indexed[i] = c.Nullable, c.PrimaryKey, c.Partition, c.Clustering, c.Unique, c.Indexed
		if b, ok := profiles[c.Name]; ok {
			js := string(b)
			profs[i] = &js
		}
	}
	batch := &pgx.Batch{}
	batch.Queue(`INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, sample_size,
		columns, metrics, latest_timestamp, freshness_column, duration_ms, profiled_at, row_count_exact, bytes_read)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, nullif($11, ''), $12, $13, $14, $15)`,
		r.DatasetID, r.ScanID, r.WorkspaceID, r.Seq, p.RowCount, p.Depth, p.SampleSize, cols, metrics,
		p.LatestTimestamp, p.FreshnessColumn, r.DurationMS, r.At, !p.Truncated, r.BytesRead)
	batch.Queue(`DELETE FROM dataset_columns WHERE dataset_id = $1`, r.DatasetID)
	batch.Queue(`INSERT INTO dataset_columns (dataset_id, name, position, data_type, class, nullable, primary_key, partition, clustering,
		profile, unique_key, indexed)
		SELECT $1, c.name, c.position, c.data_type, c.class, c.nullable, c.primary_key, c.partition, c.clustering, c.profile, c.unique_key, c.indexed
		  FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::bool[], $7::bool[], $8::bool[], $9::bool[], $10::jsonb[], $11::bool[], $12::bool[])
		       AS c(name, position, data_type, class, nullable, primary_key, partition, clustering, profile, unique_key, indexed)`,
		r.DatasetID, names, positions, types, classes, nullable, pk, part, clus, profs, uniq, indexed)
	// An earlier attempt of the scan may have failed on the dataset; this one did not.
	batch.Queue(`DELETE FROM scan_failures WHERE scan_id = $1 AND dataset_id = $2`, r.ScanID, r.DatasetID)
	batch.Queue(`INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.DatasetID, r.ScanID, r.WorkspaceID, r.Seq, r.Score.Score, score, r.At)
	batch.Queue(`INSERT INTO verdicts (dataset_id, scan_id, workspace_id, seq, verdict, detail, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.DatasetID, r.ScanID, r.WorkspaceID, r.Seq, string(r.Verdict.Verdict), verdict, r.At)
	batch.Queue(`UPDATE datasets SET latest_score = $2, last_scan_at = $3, updated_at = $3 WHERE id = $1`,
		r.DatasetID, r.Score.Score, r.At)
	if err := q.SendBatch(ctx, batch).Close(); err != nil {
		return translate(err)
	}
	for _, ni := range r.NewIssues {
		if ni.RuleID != "" {
			// A rule deleted while the scan ran opens nothing.
			var exists bool
			if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM rules WHERE id = $1 AND active)`, ni.RuleID).Scan(&exists); err != nil {
				return translate(err)
			}
			if !exists {
				continue
			}
		}
		details, err := json.Marshal(ni.Details)
		if err != nil {
			return vigia.Internal(err)
		}
		params, err := json.Marshal(ni.TitleParams)
		if err != nil {
			return vigia.Internal(err)
		}
		var band []byte
		if ni.Band != nil {
			if band, err = json.Marshal(ni.Band); err != nil {
				return vigia.Internal(err)
			}
		}
		if _, err := q.Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, subtype, severity, title, title_key, title_params,
			metric, column_name, structural, details, first_scan_id, last_scan_id, last_detected_seq, created_at, updated_at,
			rule_id, rule_current, band)
			VALUES ($1, $2, $3, $4, nullif($5, ''), $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15, $16, $16, $17, $17::uuid IS NOT NULL, $18)`,
			ni.ID, r.WorkspaceID, r.DatasetID, ni.Type, ni.Subtype, ni.Severity, ni.Title, ni.TitleKey, params,
			ni.Metric, ni.Column, ni.Structural, details, r.ScanID, r.Seq, r.At, nullableID(ni.RuleID), band); err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), ni.ID, r.WorkspaceID, "scan:"+r.ScanID, r.At); err != nil {
			return translate(err)
		}
	}
	if err := saveRuleResults(ctx, q, r); err != nil {
		return err
	}
	for _, rd := range r.Redetected {
		details, err := json.Marshal(rd.Details)
		if err != nil {
			return vigia.Internal(err)
		}
		var params []byte
		if rd.TitleParams != nil {
			if params, err = json.Marshal(rd.TitleParams); err != nil {
				return vigia.Internal(err)
			}
		}
		// The severity is the highest of the detections (the scan passes it); the title
		// follows the latest one; the count of clean scans starts again.
		if _, err := q.Exec(ctx, `UPDATE issues SET last_scan_id = $2, last_detected_seq = $3, detections = detections + 1,
			severity = CASE WHEN severity = 'critical' THEN severity ELSE $4 END, details = $5, updated_at = $6,
			title = coalesce(nullif($7, ''), title), title_params = coalesce($8::jsonb, title_params), clean_scans = 0 WHERE id = $1`,
			rd.IssueID, r.ScanID, r.Seq, rd.Severity, details, r.At, rd.Title, params); err != nil {
			return translate(err)
		}
	}
	for _, c := range r.Recovery {
		if _, err := q.Exec(ctx, `UPDATE issues SET clean_scans = $2 WHERE id = $1`, c.IssueID, c.Count); err != nil {
			return translate(err)
		}
	}
	for _, c := range r.SchemaChanges {
		if _, err := q.Exec(ctx, `INSERT INTO schema_changes (id, workspace_id, dataset_id, scan_id, change, column_name, from_type, to_type,
			suggested_rename_to, issue_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			vigia.NewID(), r.WorkspaceID, r.DatasetID, r.ScanID, c.Change, c.Column, c.FromType, c.ToType, c.SuggestedRenameTo,
			nullableID(c.IssueID), r.At); err != nil {
			return translate(err)
		}
	}
	for _, sg := range r.Signals {
		var lo, hi *float64
		if sg.CI95 != nil {
			lo, hi = &sg.CI95[0], &sg.CI95[1]
		}
		if _, err := q.Exec(ctx, `INSERT INTO signals (id, workspace_id, dataset_id, scan_id, kind, metric, column_name, observed, baseline,
			z, threshold, anomalous, issue_id, created_at, method, severity, ci95_low, ci95_high)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, nullif($16, ''), $17, $18)`,
			sg.ID, r.WorkspaceID, r.DatasetID, r.ScanID, sg.Kind, sg.Metric, sg.Column, sg.Observed, sg.Baseline, sg.Z,
			sg.Threshold, sg.Anomalous, sg.IssueID, r.At, sg.Method, sg.Severity, lo, hi); err != nil {
			return translate(err)
		}
	}
	for _, ev := range r.Events {
		payload, err := json.Marshal(ev.Payload)
		if err != nil {
			return vigia.Internal(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, scan_id, idempotency_key, payload, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
			ev.ID, r.WorkspaceID, ev.Type, ev.SubjectType, ev.SubjectID, r.ScanID, ev.IdempotencyKey, payload, r.At); err != nil {
			return translate(err)
		}
	}
	return nil
}

func nullableID(id string) any {
	if id == "" {
		return nil
	}
	return id
}

// toColumnProfile keeps a column's statistics in the catalog's stored form. Those of a
// profile read over the first rows only (truncated) are marked estimated, with the
// rows read as their sample size.
func toColumnProfile(c source.ColumnProfile, rows int64, truncated bool) catalog.ColumnProfile {
	out := catalog.ColumnProfile{NullCount: c.NullCount, Min: c.Min, Max: c.Max, MinTime: c.MinTime, MaxTime: c.MaxTime,
		MinLength: c.MinLength, MaxLength: c.MaxLength, AvgLength: c.AvgLength, Quantiles: c.Quantiles}
	if truncated {
		out.Estimated, out.SampleSize = true, int(rows)
	}
	if rows > 0 {
		out.NullRate = float64(c.NullCount) / float64(rows)
	}
	if c.Distinct != nil {
		out.Distinct = &catalog.Estimate{Value: c.Distinct.Value, Estimated: c.Distinct.Estimated, SampleSize: c.Distinct.SampleSize, CI95: c.Distinct.CI95}
	}
	for _, m := range c.Masks {
		out.Masks = append(out.Masks, catalog.Mask{Mask: m.Mask, Count: m.Count})
	}
	if c.Semantic != nil {
		out.Semantic = &catalog.Semantic{Type: c.Semantic.Type, Region: c.Semantic.Region, Estimated: c.Semantic.Estimated,
			SampleSize: c.Semantic.SampleSize, Matches: c.Semantic.Matches, Valid: c.Semantic.Valid}
	}
	return out
}

// Signals lists the signals of live datasets v can see that match q, newest first.
func (s *ScanStore) Signals(ctx context.Context, v catalog.Viewer, q scan.SignalQuery) (vigia.List[scan.Signal], error) {
	f := visibleFilter("sg.workspace_id", v)
	if q.DatasetID != nil {
		f.add("sg.dataset_id = $%d", *q.DatasetID)
	}
	if len(q.Kinds) > 0 {
		f.add("sg.kind = ANY($%d)", q.Kinds)
	}
	if len(q.Metrics) > 0 {
		f.add("sg.metric = ANY($%d)", q.Metrics)
	}
	if q.Since != nil {
		f.add("sg.created_at >= $%d", *q.Since)
	}
	if q.Until != nil {
		f.add("sg.created_at < $%d", *q.Until)
	}
	cond, args := f.sql(), f.args
	out := vigia.List[scan.Signal]{Items: []scan.Signal{}}
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM signals sg JOIN datasets d ON d.id = sg.dataset_id WHERE `+cond, args...).
		Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	args = append(args, q.Page.Limit, q.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, fmt.Sprintf(`SELECT sg.id::text, sg.workspace_id::text, sg.dataset_id::text,
		d.schema_name || '.' || d.table_name, coalesce(sg.scan_id::text, ''), sg.kind, sg.metric, sg.column_name, sg.observed, sg.baseline,
		sg.z, sg.threshold, sg.anomalous, sg.issue_id::text, sg.created_at,
		CASE WHEN sg.method <> '' THEN sg.method WHEN sg.kind = 'schema_drift' THEN 'schema_diff' ELSE 'robust_z' END,
		coalesce(sg.severity, ''), sg.ci95_low, sg.ci95_high, sg.source, sg.orchestrator, sg.pipeline, sg.run_id
		FROM signals sg JOIN datasets d ON d.id = sg.dataset_id
		WHERE %s ORDER BY sg.created_at DESC, sg.id DESC LIMIT $%d OFFSET $%d`, cond, len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.Signal, error) {
		var sg scan.Signal
		var lo, hi *float64
		var orch, pipe, run *string
		err := r.Scan(&sg.ID, &sg.WorkspaceID, &sg.DatasetID, &sg.DatasetName, &sg.ScanID, &sg.Kind, &sg.Metric, &sg.Column,
			&sg.Observed, &sg.Baseline, &sg.Z, &sg.Threshold, &sg.Anomalous, &sg.IssueID, &sg.CreatedAt, &sg.Method, &sg.Severity, &lo, &hi,
			&sg.Source, &orch, &pipe, &run)
		if lo != nil && hi != nil {
			sg.CI95 = &[2]float64{*lo, *hi}
		}
		if orch != nil && pipe != nil && run != nil {
			sg.Pipeline = &scan.SignalWriter{Orchestrator: *orch, Pipeline: *pipe, RunID: *run}
		}
		return sg, err
	})
	if items != nil {
		out.Items = items
	}
	return out, translate(err)
}

// ClaimDueSchedules claims the connections whose daily scan time has passed today in
// their own zone and that were not yet queued for that local day.
func (s *ScanStore) ClaimDueSchedules(ctx context.Context, now time.Time) ([]scan.DueSchedule, error) {
	rows, err := s.db.q(ctx).Query(ctx, `UPDATE connections c SET last_scheduled_on = ($1::timestamptz AT TIME ZONE c.scan_timezone)::date
		WHERE c.schedule_enabled AND c.schedule_hour IS NOT NULL
		  AND ($1::timestamptz AT TIME ZONE c.scan_timezone)::time >= make_time(c.schedule_hour, c.schedule_minute, 0)
		  AND (c.last_scheduled_on IS NULL OR c.last_scheduled_on < ($1::timestamptz AT TIME ZONE c.scan_timezone)::date)
		RETURNING c.workspace_id::text, c.id::text`, now)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.DueSchedule, error) {
		var d scan.DueSchedule
		err := r.Scan(&d.WorkspaceID, &d.ConnectionID)
		return d, err
	})
	return out, translate(err)
}

// saveRuleResults stores the rules' results of a scan (the rules' last_result) and the
// transitions the scan decided for the rules' current issues, each with its history row.
// A transition applies only while the issue still has the status the scan read, so a
// person's change made meanwhile wins.
func saveRuleResults(ctx context.Context, q querier, r scan.DatasetResult) error {
	return saveRuleRows(ctx, q, ruleRows{workspaceID: r.WorkspaceID, datasetID: r.DatasetID, scanID: r.ScanID,
		origin: "scan:" + r.ScanID, at: r.At, results: r.RuleResults, transitions: r.Transitions})
}

// ruleRows are rule results and issue transitions of one dataset: a scan's (scanID
// set) or a dbt run's (dbtInvocation set, maybe empty when the run has no usable id).
type ruleRows struct {
	workspaceID, datasetID string
	scanID, dbtInvocation  string
	origin                 string
	at                     time.Time
	results                []scan.RuleResult
	transitions            []scan.IssueTransition
}

func saveRuleRows(ctx context.Context, q querier, r ruleRows) error {
	for _, rr := range r.results {
		params := rr.ReasonParams
		if params == nil {
			params = map[string]any{}
		}
		b, err := json.Marshal(params)
		if err != nil {
			return vigia.Internal(err)
		}
		if r.scanID == "" {
			if _, err := q.Exec(ctx, `INSERT INTO rule_results (rule_id, scan_id, workspace_id, dataset_id, status, observed, threshold,
				reason_code, reason_params, evaluated_at, dbt_invocation_id)
				SELECT $1, NULL, $2, $3, $4, $5, $6, nullif($7, ''), $8, $9, $10 WHERE EXISTS (SELECT 1 FROM rules WHERE id = $1)`,
				rr.RuleID, r.workspaceID, r.datasetID, string(rr.Status), rr.Observed, rr.Threshold, rr.ReasonCode, b, r.at,
				r.dbtInvocation); err != nil {
				return translate(err)
			}
			continue
		}
		if _, err := q.Exec(ctx, `INSERT INTO rule_results (rule_id, scan_id, workspace_id, dataset_id, status, observed, threshold,
			reason_code, reason_params, evaluated_at)
			SELECT $1, $2, $3, $4, $5, $6, $7, nullif($8, ''), $9, $10 WHERE EXISTS (SELECT 1 FROM rules WHERE id = $1)
			ON CONFLICT (rule_id, scan_id) DO NOTHING`,
			rr.RuleID, r.scanID, r.workspaceID, r.datasetID, string(rr.Status), rr.Observed, rr.Threshold, rr.ReasonCode, b, r.at); err != nil {
			return translate(err)
		}
	}
	for _, t := range r.transitions {
		tag, err := q.Exec(ctx, `UPDATE issues SET status = $2, updated_at = $3,
			resolved_at = CASE WHEN $2 IN ('open', 'acknowledged') THEN NULL
			                   WHEN status IN ('open', 'acknowledged') THEN $3 ELSE resolved_at END,
			resolution_reason = CASE WHEN $2 IN ('open', 'acknowledged') THEN NULL ELSE resolution_reason END,
			rule_current = rule_current AND NOT $4
			WHERE id = $1 AND status = $5`, t.IssueID, t.To, r.at, t.ClearCurrent, t.From)
		if err != nil {
			return translate(err)
		}
		if tag.RowsAffected() == 0 {
			continue
		}
		if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, note, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, vigia.NewID(), t.IssueID, r.workspaceID, t.From, t.To, r.origin,
			t.Event, t.Note, r.at); err != nil {
			return translate(err)
		}
		if err := queueTicketWrites(ctx, q, r.workspaceID, t.IssueID, t.Event, r.origin, r.at); err != nil {
			return err
		}
	}
	return nil
}

// CurrentRuleIssues returns the current issues of the given rules (see
// scan.KnownIssue), in the transaction in ctx.
func (s *ScanStore) CurrentRuleIssues(ctx context.Context, ruleIDs []string) ([]scan.KnownIssue, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, type, severity, status, rule_id::text
		FROM issues WHERE rule_current AND rule_id = ANY($1::uuid[]) FOR UPDATE`, ruleIDs)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.KnownIssue, error) {
		is := scan.KnownIssue{RuleCurrent: true}
		return is, r.Scan(&is.ID, &is.Type, &is.Severity, &is.Status, &is.RuleID)
	})
	return out, translate(err)
}

// SaveRuleRun writes rule results reported from outside a scan (a dbt run) with the
// issues they open, detect again and move, in the transaction in ctx: the same rows a
// scan writes for its rules (see SaveDatasetResult), without a scan.
func (s *ScanStore) SaveRuleRun(ctx context.Context, r scan.RuleRun) error {
	q := s.db.q(ctx)
	for _, ni := range r.NewIssues {
		details, err := json.Marshal(ni.Details)
		if err != nil {
			return vigia.Internal(err)
		}
		params, err := json.Marshal(ni.TitleParams)
		if err != nil {
			return vigia.Internal(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, subtype, severity, title, title_key, title_params,
			metric, column_name, structural, details, created_at, updated_at, rule_id, rule_current)
			VALUES ($1, $2, $3, $4, nullif($5, ''), $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15, true)`,
			ni.ID, r.WorkspaceID, r.DatasetID, ni.Type, ni.Subtype, ni.Severity, ni.Title, ni.TitleKey, params,
			ni.Metric, ni.Column, ni.Structural, details, r.At, ni.RuleID); err != nil {
			return translate(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), ni.ID, r.WorkspaceID, r.Origin, r.At); err != nil {
			return translate(err)
		}
		if err := writeIssueOpened(ctx, q, r.WorkspaceID, ni.ID, r.DatasetID, ni.Severity, r.At); err != nil {
			return err
		}
	}
	if err := saveRuleRows(ctx, q, ruleRows{workspaceID: r.WorkspaceID, datasetID: r.DatasetID, dbtInvocation: r.DBTInvocation,
		origin: r.Origin, at: r.At, results: r.RuleResults, transitions: r.Transitions}); err != nil {
		return err
	}
	for _, rd := range r.Redetected {
		details, err := json.Marshal(rd.Details)
		if err != nil {
			return vigia.Internal(err)
		}
		if _, err := q.Exec(ctx, `UPDATE issues SET detections = detections + 1,
			severity = CASE WHEN severity = 'critical' THEN severity ELSE $2 END, details = $3, updated_at = $4 WHERE id = $1`,
			rd.IssueID, rd.Severity, details, r.At); err != nil {
			return translate(err)
		}
	}
	return nil
}

// DeferSchedule implements scan.Store: the claim's local day is taken back one day, so
// the schedule is due again (the claim had moved it from an earlier day).
func (s *ScanStore) DeferSchedule(ctx context.Context, connectionID string) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE connections SET last_scheduled_on = last_scheduled_on - 1 WHERE id = $1`, connectionID)
	return translate(err)
}
