package store

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/report"
)

// ReportStore implements report.Store.
type ReportStore struct{ db *DB }

// Reports returns the report store.
func (db *DB) Reports() *ReportStore { return &ReportStore{db: db} }

var _ report.Store = (*ReportStore)(nil)

// Scope resolves a report's subject to a name and the live datasets the viewer sees.
func (s *ReportStore) Scope(ctx context.Context, v catalog.Viewer, typ string, subjectID *string) (report.Scope, error) {
	q := s.db.q(ctx)
	var sc report.Scope
	visible := `d.workspace_id = $1 AND d.dropped_at IS NULL AND ` + VisibleSQL("d.id", 2, 3)
	var err error
	switch typ {
	case report.TypeWorkspaceOverview:
		err = q.QueryRow(ctx, `SELECT w.name, coalesce((SELECT array_agg(d.id::text ORDER BY d.id) FROM datasets d WHERE `+visible+`), '{}')
			FROM workspaces w WHERE w.id = $1`, v.WorkspaceID, v.TeamIDs, v.Admin).Scan(&sc.Name, &sc.DatasetIDs)
	case report.TypeDomain:
		if !vigia.ValidID(*subjectID) {
			return sc, vigia.NotFound()
		}
		err = q.QueryRow(ctx, `SELECT dm.name, coalesce((SELECT array_agg(d.id::text ORDER BY d.id) FROM domain_datasets dd
				JOIN datasets d ON d.id = dd.dataset_id WHERE dd.domain_id = dm.id AND `+visible+`), '{}')
			FROM domains dm WHERE dm.id = $4 AND dm.workspace_id = $1 AND `+domainVisibleSQL("dm", 2, 3),
			v.WorkspaceID, v.TeamIDs, v.Admin, *subjectID).Scan(&sc.Name, &sc.DatasetIDs)
	case report.TypeDataset:
		if !vigia.ValidID(*subjectID) {
			return sc, vigia.NotFound()
		}
		var id string
		err = q.QueryRow(ctx, `SELECT d.schema_name || '.' || d.table_name, d.id::text FROM datasets d WHERE d.id = $4 AND `+visible,
			v.WorkspaceID, v.TeamIDs, v.Admin, *subjectID).Scan(&sc.Name, &id)
		sc.DatasetIDs = []string{id}
	case report.TypeIncident:
		if !vigia.ValidID(*subjectID) {
			return sc, vigia.NotFound()
		}
		// An incident is visible when its root is (as in the incident list).
		err = q.QueryRow(ctx, `SELECT coalesce(r.schema_name || '.' || r.table_name, i.id::text), i.id::text,
				coalesce((SELECT array_agg(d.id::text ORDER BY d.id) FROM datasets d WHERE d.id = ANY(i.dataset_ids) AND `+visible+`), '{}')
			FROM incidents i LEFT JOIN datasets r ON r.id = i.root_dataset_id
			WHERE i.id = $4 AND i.workspace_id = $1 AND (i.root_dataset_id IS NULL OR `+VisibleSQL("i.root_dataset_id", 2, 3)+`)`,
			v.WorkspaceID, v.TeamIDs, v.Admin, *subjectID).Scan(&sc.Name, &sc.IncidentID, &sc.DatasetIDs)
	default:
		return sc, vigia.NotFound()
	}
	if err != nil {
		return sc, translate(err)
	}
	err = q.QueryRow(ctx, `SELECT coalesce(bool_or(NOT vigia_dataset_visible(id, '{}'::uuid[], false)), false)
		FROM unnest($1::uuid[]) AS id`, sc.DatasetIDs).Scan(&sc.Restricted)
	return sc, translate(err)
}

// Facts reads everything a report says about the scope's datasets in one batch.
func (s *ReportStore) Facts(ctx context.Context, v catalog.Viewer, sc report.Scope, since, until time.Time) (report.Facts, error) {
	f := report.Facts{Scope: sc.Name, Since: since, Until: until, Trend: []report.TrendPoint{}, Incidents: []report.IncidentFact{},
		TopIssues: []report.IssueFact{}}
	ids := sc.DatasetIDs
	if ids == nil {
		ids = []string{}
	}
	q := s.db.q(ctx)
	var incident *string
	if sc.IncidentID != "" {
		incident = &sc.IncidentID
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT name FROM workspaces WHERE id = $1`, v.WorkspaceID).QueryRow(func(r pgx.Row) error { return r.Scan(&f.Workspace) })
	b.Queue(`SELECT count(*), count(latest_score), avg(latest_score) FROM datasets WHERE id = ANY($1::uuid[])`, ids).
		QueryRow(func(r pgx.Row) error { return r.Scan(&f.Datasets, &f.Scored, &f.Score) })
	// The trend: per UTC day, the mean of each dataset's last score of that day.
	b.Queue(`SELECT day, avg(score) FROM (SELECT DISTINCT ON (dataset_id, date_trunc('day', created_at AT TIME ZONE 'UTC'))
			date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, score FROM scores
			WHERE dataset_id = ANY($1::uuid[]) AND created_at >= $2 AND created_at <= $3 AND score IS NOT NULL
			ORDER BY dataset_id, date_trunc('day', created_at AT TIME ZONE 'UTC'), seq DESC) s GROUP BY day ORDER BY day`, ids, since, until).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var p report.TrendPoint
				if err := rows.Scan(&p.Day, &p.Score); err != nil {
					return err
				}
				p.Day = p.Day.UTC()
				f.Trend = append(f.Trend, p)
			}
			return rows.Err()
		})
	var details [][]byte
	b.Queue(`SELECT DISTINCT ON (dataset_id) detail FROM scores WHERE dataset_id = ANY($1::uuid[]) ORDER BY dataset_id, seq DESC`, ids).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var d []byte
				if err := rows.Scan(&d); err != nil {
					return err
				}
				details = append(details, d)
			}
			return rows.Err()
		})
	b.Queue(`SELECT count(*) FILTER (WHERE v.verdict = 'pass'), count(*) FILTER (WHERE v.verdict = 'warn'),
			count(*) FILTER (WHERE v.verdict = 'fail'), count(*) FILTER (WHERE v.verdict IS NULL OR v.verdict = 'unknown')
		FROM unnest($1::uuid[]) AS x(id) LEFT JOIN LATERAL (SELECT verdict FROM verdicts WHERE dataset_id = x.id ORDER BY seq DESC LIMIT 1) v ON true`, ids).
		QueryRow(func(r pgx.Row) error {
			return r.Scan(&f.Verdicts.Pass, &f.Verdicts.Warn, &f.Verdicts.Fail, &f.Verdicts.Unknown)
		})
	incidentWhere := `i.workspace_id = $1 AND i.dataset_ids && $2::uuid[] AND (i.status = 'open' OR i.created_at >= $3) AND i.created_at <= $4
		AND ($5::uuid IS NULL OR i.id = $5)`
	b.Queue(`SELECT i.id::text, i.severity, i.status, coalesce(r.schema_name || '.' || r.table_name, ''), cardinality(i.issue_ids),
			cardinality(i.dataset_ids), coalesce((i.impact->>'reach_total')::int, 0), i.created_at, i.resolved_at
		FROM incidents i LEFT JOIN datasets r ON r.id = i.root_dataset_id WHERE `+incidentWhere+`
		ORDER BY i.created_at, i.id LIMIT `+itoa(report.MaxIncidents), v.WorkspaceID, ids, since, until, incident).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var in report.IncidentFact
				if err := rows.Scan(&in.ID, &in.Severity, &in.Status, &in.Root, &in.Issues, &in.Datasets, &in.Reach, &in.OpenedAt, &in.ResolvedAt); err != nil {
					return err
				}
				in.OpenedAt = in.OpenedAt.UTC()
				if in.ResolvedAt != nil {
					t := in.ResolvedAt.UTC()
					in.ResolvedAt = &t
				}
				f.Incidents = append(f.Incidents, in)
			}
			return rows.Err()
		})
	b.Queue(`SELECT count(*) FROM incidents i WHERE `+incidentWhere+` AND i.status = 'open'`, v.WorkspaceID, ids, since, until, incident).
		QueryRow(func(r pgx.Row) error { return r.Scan(&f.OpenIncidents) })
	b.Queue(`SELECT count(*) FILTER (WHERE resolution_reason IS DISTINCT FROM 'expected'),
			count(*) FILTER (WHERE resolution_reason IS DISTINCT FROM 'expected' AND sla_breached_at IS NOT NULL)
		FROM issues WHERE dataset_id = ANY($1::uuid[]) AND created_at >= $2 AND created_at <= $3`, ids, since, until).
		QueryRow(func(r pgx.Row) error { return r.Scan(&f.SLA.InScope, &f.SLA.Breached) })
	b.Queue(`SELECT i.type, i.severity, d.schema_name || '.' || d.table_name, i.column_name, i.detections
		FROM issues i JOIN datasets d ON d.id = i.dataset_id
		WHERE i.dataset_id = ANY($1::uuid[]) AND i.status IN ('open', 'acknowledged')
		ORDER BY CASE i.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, i.detections DESC, i.created_at, i.id
		LIMIT `+itoa(report.MaxTopIssues), ids).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var is report.IssueFact
				if err := rows.Scan(&is.Type, &is.Severity, &is.Dataset, &is.Column, &is.Detections); err != nil {
					return err
				}
				f.TopIssues = append(f.TopIssues, is)
			}
			return rows.Err()
		})
	b.Queue(`SELECT count(*) FROM issues WHERE dataset_id = ANY($1::uuid[]) AND status IN ('open', 'acknowledged')`, ids).
		QueryRow(func(r pgx.Row) error { return r.Scan(&f.OpenIssues) })
	b.Queue(`SELECT count(*) FILTER (WHERE decision_seen = 'trusted'), count(*) FILTER (WHERE decision_seen = 'caution'),
			count(*) FILTER (WHERE decision_seen = 'untrusted'), count(*) FILTER (WHERE decision_seen = 'unknown')
		FROM consumption_datasets WHERE dataset_id = ANY($1::uuid[]) AND created_at >= $2 AND created_at <= $3`, ids, since, until).
		QueryRow(func(r pgx.Row) error {
			return r.Scan(&f.Trust.Trusted, &f.Trust.Caution, &f.Trust.Untrusted, &f.Trust.Unknown)
		})
	b.Queue(`SELECT (SELECT count(DISTINCT dataset_id) FROM contract_versions WHERE dataset_id = ANY($1::uuid[])),
			(SELECT count(*) FROM contract_checks WHERE dataset_id = ANY($1::uuid[]) AND jsonb_array_length(violations) > 0)`, ids).
		QueryRow(func(r pgx.Row) error { return r.Scan(&f.Contracts.Active, &f.Contracts.Violating) })
	if err := q.SendBatch(ctx, b).Close(); err != nil {
		return f, translate(err)
	}
	if f.Score != nil {
		v := round1(*f.Score)
		f.Score = &v
	}
	for i := range f.Trend {
		f.Trend[i].Score = round1(f.Trend[i].Score)
	}
	if f.SLA.InScope > 0 {
		pct := round1(100 * float64(f.SLA.InScope-f.SLA.Breached) / float64(f.SLA.InScope))
		f.SLA.Pct = &pct
	}
	dims, err := meanDimensions(details)
	if err != nil {
		return f, vigia.Internal(err)
	}
	f.Dimensions = dims
	return f, nil
}

// meanDimensions averages each dimension over the datasets' latest scores (those that
// computed it).
func meanDimensions(details [][]byte) ([]report.DimensionFact, error) {
	sums := map[quality.Dimension]float64{}
	counts := map[quality.Dimension]int{}
	for _, d := range details {
		var sc quality.Score
		if err := json.Unmarshal(d, &sc); err != nil {
			return nil, err
		}
		for _, dim := range quality.AllDimensions() {
			if v := sc.Dimensions.Get(dim); v != nil {
				sums[dim] += *v
				counts[dim]++
			}
		}
	}
	out := make([]report.DimensionFact, 0, len(quality.AllDimensions()))
	for _, dim := range quality.AllDimensions() {
		df := report.DimensionFact{Name: string(dim)}
		if counts[dim] > 0 {
			v := round1(sums[dim] / float64(counts[dim]))
			df.Score = &v
		}
		out = append(out, df)
	}
	return out, nil
}

func round1(v float64) float64 {
	if v < 0 {
		return -round1(-v)
	}
	return float64(int64(v*10+0.5)) / 10
}

func itoa(n int) string { return strconv.Itoa(n) }

const reportCols = `id::text, workspace_id::text, type, persona, subject_id, title, language, content_md, facts, ai_generated, ai_model,
	generated_at, routine_id::text, created_by, restricted`

func scanReport(row pgx.CollectableRow) (report.Report, error) {
	var r report.Report
	var facts []byte
	err := row.Scan(&r.ID, &r.WorkspaceID, &r.Type, &r.Persona, &r.SubjectID, &r.Title, &r.Language, &r.ContentMD, &facts, &r.AIGenerated,
		&r.AIModel, &r.GeneratedAt, &r.RoutineID, &r.CreatedBy, &r.Restricted)
	if err != nil {
		return r, err
	}
	r.GeneratedAt = r.GeneratedAt.UTC()
	return r, json.Unmarshal(facts, &r.Facts)
}

// InsertReport stores a new report.
func (s *ReportStore) InsertReport(ctx context.Context, r report.Report) error {
	facts, err := json.Marshal(r.Facts)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO reports (id, workspace_id, type, persona, subject_id, title, language, content_md, facts,
		ai_generated, ai_model, generated_at, routine_id, created_by, restricted) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		r.ID, r.WorkspaceID, r.Type, r.Persona, r.SubjectID, r.Title, r.Language, r.ContentMD, facts, r.AIGenerated, r.AIModel,
		r.GeneratedAt, r.RoutineID, r.CreatedBy, r.Restricted)
	return translate(err)
}

// readableSQL is the reading rule: reports without restricted facts, one's own, or all
// for an admin ($1 workspace, $2 reader id, $3 admin).
const readableSQL = `workspace_id = $1 AND (NOT restricted OR created_by = $2 OR $3)`

// Report returns a report the reader may read.
func (s *ReportStore) Report(ctx context.Context, rd report.Reader, id string) (report.Report, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+reportCols+` FROM reports WHERE `+readableSQL+` AND id = $4`, rd.WorkspaceID, rd.ID, rd.Admin, id)
	if err != nil {
		return report.Report{}, translate(err)
	}
	r, err := pgx.CollectExactlyOneRow(rows, scanReport)
	return r, translate(err)
}

// Reports lists the reports the reader may read, newest first.
func (s *ReportStore) Reports(ctx context.Context, rd report.Reader, page vigia.Page) (vigia.List[report.Report], error) {
	var out vigia.List[report.Report]
	q := s.db.q(ctx)
	if err := q.QueryRow(ctx, `SELECT count(*) FROM reports WHERE `+readableSQL, rd.WorkspaceID, rd.ID, rd.Admin).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	rows, err := q.Query(ctx, `SELECT `+reportCols+` FROM reports WHERE `+readableSQL+` ORDER BY generated_at DESC, id DESC LIMIT $4 OFFSET $5`,
		rd.WorkspaceID, rd.ID, rd.Admin, page.Limit, page.Offset)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, scanReport)
	return out, translate(err)
}
