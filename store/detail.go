package store

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/suggest"
	"github.com/vigia-data/vigia/trust"
)

// DetailRead is everything the dataset detail (GET /datasets/{id}) shows, read at once:
// the dataset as CatalogStore.DatasetByID reads it, its trust facts (TrustStore.Facts;
// the pipelines writing it are not read: they weigh in trust decisions, not in the
// score) and its open suggestions (SuggestStore.OpenOf).
type DetailRead struct {
	Dataset     catalog.Dataset
	Facts       trust.Facts
	Suggestions []suggest.Suggestion
}

// detailExtra is what the detail's catalog reads (queueDatasetByID) find for trust
// beyond catalog.Dataset: each column's null rate as factsSQL reads it (nil when the
// profile has none), in the columns' order, and the latest profile's times.
type detailExtra struct {
	NullRates       []*float64
	LatestTimestamp *time.Time
	ProfiledAt      *time.Time
}

// detailFactsSQL reads the trust facts of one dataset that the detail's catalog reads
// do not: factsSQL's layer, verdict, profiles in 30 days, empty-expected rule, reads,
// domains and contract. Visibility is the dataset statement's (no row there: not found).
var detailFactsSQL = `SELECT ` + layerSQL + `, v.verdict, coalesce(p30.n, 0),
	EXISTS (SELECT 1 FROM rules r WHERE r.dataset_id = d.id AND r.active AND r.rule_type = 'row_count_min'
		AND jsonb_typeof(r.params->'min_rows') = 'number' AND (r.params->>'min_rows')::numeric = 0),
	coalesce(cs.n, 0), cs.last_at,
	coalesce((SELECT json_agg(json_build_object('id', dm.id, 'name', dm.name, 'status', dm.status,
			'version', dm.version_major || '.' || dm.version_minor, 'owner', dm.owner_name) ORDER BY dm.name, dm.id)
		FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id WHERE dd.dataset_id = d.id), '[]'),
	EXISTS (SELECT 1 FROM contract_versions cv WHERE cv.dataset_id = d.id), cc.violations, coalesce(cc.version, '')
	FROM (SELECT * FROM datasets WHERE id = $1::uuid OFFSET 0) d
	LEFT JOIN contract_checks cc ON cc.dataset_id = d.id
	LEFT JOIN LATERAL (SELECT verdict FROM verdicts WHERE dataset_id = d.id ORDER BY seq DESC LIMIT 1) v ON true
	LEFT JOIN LATERAL (SELECT count(*) AS n FROM dataset_profiles WHERE dataset_id = d.id
		AND profiled_at >= $2::timestamptz - interval '30 days') p30 ON true
	LEFT JOIN LATERAL (SELECT count(DISTINCT consumption_id) FILTER (WHERE created_at >= $2::timestamptz - interval '30 days') AS n,
		max(created_at) AS last_at FROM consumption_datasets WHERE dataset_id = d.id) cs ON true
	WHERE d.workspace_id = $3 AND d.dropped_at IS NULL`

// DatasetDetail reads a dataset's detail for v at now in one round trip (one pgx.Batch,
// generic plans): KindNotFound when the dataset does not exist, is dropped, is another
// workspace's or v cannot see it. suggestions bounds its open suggestions.
//
// The trust facts are those TrustStore.Facts reads, taken from the dataset's own reads
// where those already hold them (columns, latest score, issues, latest profile and
// failure) and read by detailFactsSQL for the rest.
func (db *DB) DatasetDetail(ctx context.Context, v catalog.Viewer, id string, now time.Time, suggestions int) (DetailRead, error) {
	if !vigia.ValidID(id) {
		return DetailRead{}, vigia.NotFound()
	}
	var out DetailRead
	var extra detailExtra
	var f trust.Facts
	var found bool
	b := &pgx.Batch{}
	queueGenericPlans(ctx, b)
	dataset := queueDatasetByID(b, v, id, &extra)
	b.Queue(detailFactsSQL, id, now, v.WorkspaceID).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		if !rows.Next() {
			return rows.Err()
		}
		var verdict *string
		var doms, violations []byte
		if err := rows.Scan(&f.Layer, &verdict, &f.Scans30d, &f.EmptyExpected, &f.Consumptions30d, &f.LastConsumedAt,
			&doms, &f.Contract.Active, &violations, &f.Contract.Version); err != nil {
			return err
		}
		f.Verdict = "unknown"
		if verdict != nil {
			f.Verdict = *verdict
		}
		if err := scanFactDomains(&f, doms); err != nil {
			return err
		}
		found = true
		return scanFactContract(&f, violations)
	})
	b.Queue(openOfDetailSQL, v.WorkspaceID, id, v.TeamIDs, v.Admin, suggestions).Query(func(rows pgx.Rows) error {
		var err error
		out.Suggestions, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (suggest.Suggestion, error) { return scanSuggestion(r) })
		return err
	})
	if err := db.q(ctx).SendBatch(ctx, b).Close(); err != nil {
		return DetailRead{}, translate(err)
	}
	d, err := dataset()
	if err != nil {
		return DetailRead{}, err
	}
	if !found || len(extra.NullRates) != len(d.Columns) { // changed between the batch's statements: as if read before it
		return DetailRead{}, vigia.NotFound()
	}
	out.Dataset, out.Facts = d, detailFacts(d, extra, f, now)
	return out, nil
}

// detailFacts completes f (read by detailFactsSQL) with what scanFacts reads of the
// dataset, taken from d and extra.
func detailFacts(d catalog.Dataset, extra detailExtra, f trust.Facts, now time.Time) trust.Facts {
	f.DatasetID, f.WorkspaceID, f.ConnectionID = d.ID, d.WorkspaceID, d.ConnectionID
	f.Schema, f.Table, f.Kind, f.CreatedAt = d.Schema, d.Table, d.Kind, d.CreatedAt
	f.LatestScore, f.LastScanAt, f.QueriesPerDay = d.LatestScore, d.LastScanAt, d.QueriesPerDay
	f.Dimensions = map[string]*float64{}
	if len(d.ScoreHistory) > 0 { // the latest score (newest first)
		f.Dimensions = maps.Clone(d.ScoreHistory[0].Dimensions)
	}
	f.RowCount, f.RowCountExact = d.RowCount, d.RowCountExact
	f.LatestTimestamp, f.ProfiledAt = extra.LatestTimestamp, extra.ProfiledAt
	f.Profiled = f.ProfiledAt != nil
	if d.LastFailure != nil {
		code := d.LastFailure.Code
		f.LastFailure = &code
	}
	issues := slices.Clone(d.Issues)
	slices.SortFunc(issues, func(a, b catalog.IssueSummary) int { return strings.Compare(a.ID, b.ID) })
	for _, is := range issues {
		f.Issues = append(f.Issues, quality.VerdictIssue{ID: is.ID, Type: is.Type, Severity: quality.Severity(is.Severity),
			Status: quality.IssueStatus(is.Status)})
		if is.Type == "schema_drift" && is.Status == "open" {
			f.UnackedSchemaChanges++
			if f.OldestUnackedSchemaChange == nil || is.CreatedAt.Before(*f.OldestUnackedSchemaChange) {
				at := is.CreatedAt
				f.OldestUnackedSchemaChange = &at
			}
		}
	}
	for i, c := range d.Columns {
		cf := trust.ColumnFact{Name: c.Name, DataType: c.DataType, PrimaryKey: c.PrimaryKey, NullRate: extra.NullRates[i]}
		if c.Profile != nil && c.Profile.Semantic != nil {
			cf.SemanticType, cf.SemanticMatches = c.Profile.Semantic.Type, c.Profile.Semantic.Matches
		}
		f.Columns = append(f.Columns, cf)
	}
	f.UsageClass = trust.UsageClassOf(f.QueriesPerDay, f.Consumptions30d, f.LastConsumedAt, now)
	return f
}
