package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/trust"
)

// TrustStore implements trust.Store.
type TrustStore struct{ db *DB }

// Trust returns the trust store.
func (db *DB) Trust() *TrustStore { return &TrustStore{db: db} }

var _ trust.Store = (*TrustStore)(nil)

// layerSQL reads a dataset's layer from its schema or table name conventions.
const layerSQL = `CASE
	WHEN lower(d.schema_name) ~ '(^|_)(bronze|raw|landing|staging|stg|src|source|ingest)($|_)'
	  OR lower(d.table_name) ~ '^(bronze|raw|stg|src|landing)_' THEN 'bronze'
	WHEN lower(d.schema_name) ~ '(^|_)(silver|int|intermediate|clean|cleansed|refined|curated)($|_)'
	  OR lower(d.table_name) ~ '^(silver|int|clean)_' THEN 'silver'
	WHEN lower(d.schema_name) ~ '(^|_)(gold|mart|marts|analytics|reporting|dw|presentation)($|_)'
	  OR lower(d.table_name) ~ '^(gold|mart|dim|fct|fact|rpt|agg)_' THEN 'gold' END`

// usageSQL classifies use like trust.UsageClassOf, over the columns qpd, c30 and last_at.
const usageSQL = `CASE WHEN qpd >= 100 OR c30 >= 100 THEN 'hot'
	WHEN qpd >= 1 OR c30 >= 1 THEN 'active'
	WHEN qpd > 0 OR last_at >= $%d::timestamptz - interval '180 days' THEN 'cold'
	ELSE 'dead' END`

// factsSQL reads every fact of a dataset in one statement: the latest verdict, score and
// profile, profiles in 30 days, open and acknowledged issues (trust counts the standing
// ones with quality.CountStanding, as the verdict does), reads, columns and domains.
var factsSQL = `SELECT d.id::text, d.workspace_id::text, d.connection_id::text, d.schema_name, d.table_name, d.kind, d.created_at,
	d.latest_score, d.last_scan_at, d.queries_per_day, ` + layerSQL + `,
	v.verdict, sc.dims, p.row_count, p.row_count_exact, p.latest_timestamp, p.profiled_at, coalesce(p30.n, 0),
	EXISTS (SELECT 1 FROM rules r WHERE r.dataset_id = d.id AND r.active AND r.rule_type = 'row_count_min'
		AND jsonb_typeof(r.params->'min_rows') = 'number' AND (r.params->>'min_rows')::numeric = 0),
	(SELECT f.code FROM scan_failures f WHERE f.dataset_id = d.id AND f.failed_at > coalesce(p.profiled_at, '-infinity')
		ORDER BY f.failed_at DESC LIMIT 1),
	coalesce(iss.open, '[]'), coalesce(iss.drift, 0), iss.oldest, coalesce(cs.n, 0), cs.last_at,
	coalesce((SELECT json_agg(json_build_object('name', c.name, 'type', c.data_type, 'pk', c.primary_key,
			'semantic', coalesce(c.profile->'semantic'->>'type', ''), 'matches', coalesce((c.profile->'semantic'->>'matches')::int, 0),
			'null_rate', (c.profile->>'null_rate')::float8) ORDER BY c.position, c.name)
		FROM dataset_columns c WHERE c.dataset_id = d.id), '[]'),
	coalesce((SELECT json_agg(json_build_object('id', dm.id, 'name', dm.name, 'status', dm.status,
			'version', dm.version_major || '.' || dm.version_minor, 'owner', dm.owner_name) ORDER BY dm.name, dm.id)
		FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id WHERE dd.dataset_id = d.id), '[]'),
	EXISTS (SELECT 1 FROM contract_versions cv WHERE cv.dataset_id = d.id), cc.violations, coalesce(cc.version, '')
	FROM (SELECT * FROM datasets WHERE id = ANY($2::uuid[]) OFFSET 0) d
	LEFT JOIN contract_checks cc ON cc.dataset_id = d.id
	LEFT JOIN LATERAL (SELECT verdict FROM verdicts WHERE dataset_id = d.id ORDER BY seq DESC LIMIT 1) v ON true
	LEFT JOIN LATERAL (SELECT detail->'dimensions' AS dims FROM scores WHERE dataset_id = d.id ORDER BY seq DESC LIMIT 1) sc ON true
	LEFT JOIN LATERAL (SELECT row_count, row_count_exact, latest_timestamp, profiled_at FROM dataset_profiles WHERE dataset_id = d.id
		ORDER BY seq DESC LIMIT 1) p ON true
	LEFT JOIN LATERAL (SELECT count(*) AS n FROM dataset_profiles WHERE dataset_id = d.id
		AND profiled_at >= $5::timestamptz - interval '30 days') p30 ON true
	LEFT JOIN LATERAL (SELECT
		json_agg(json_build_object('id', id, 'type', type, 'severity', severity, 'status', status) ORDER BY id) AS open,
		count(*) FILTER (WHERE type = 'schema_drift' AND status = 'open') AS drift,
		min(created_at) FILTER (WHERE type = 'schema_drift' AND status = 'open') AS oldest
		FROM issues WHERE dataset_id = d.id AND status IN ('open', 'acknowledged')) iss ON true
	LEFT JOIN LATERAL (SELECT count(DISTINCT consumption_id) FILTER (WHERE created_at >= $5::timestamptz - interval '30 days') AS n,
		max(created_at) AS last_at FROM consumption_datasets WHERE dataset_id = d.id) cs ON true
	WHERE d.workspace_id = $1 AND d.dropped_at IS NULL AND ` + visibleRowSQL("d.id", 3, 4)

// factIssue, factColumn and factDomain are the JSON aggregates of factsSQL.
type factIssue struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Status   string `json:"status"`
}

type factColumn struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	PK       bool     `json:"pk"`
	Semantic string   `json:"semantic"`
	Matches  int      `json:"matches"`
	NullRate *float64 `json:"null_rate"`
}

type factDomain struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Version string  `json:"version"`
	Owner   *string `json:"owner"`
}

// Facts loads the facts of the viewer's datasets among ids in one statement.
//
// The rows are picked by key first (OFFSET 0 keeps the step apart) and the statement runs
// with its generic plan (queueGenericPlans): one batch, one round trip.
func (s *TrustStore) Facts(ctx context.Context, v catalog.Viewer, ids []string, now time.Time) (map[string]trust.Facts, error) {
	var out map[string]trust.Facts
	b := &pgx.Batch{}
	queueGenericPlans(ctx, b)
	queueFacts(b, v, ids, now, &out)
	if err := s.db.q(ctx).SendBatch(ctx, b).Close(); err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// factsOneSQL is factsSQL for one id (the array's first): planned for one row, its
// visibility probes that row's memberships, where the generic plan for an array (ten rows
// assumed) hashes every restricted membership of the database.
var factsOneSQL = strings.Replace(factsSQL, "WHERE id = ANY($2::uuid[]) OFFSET 0", "WHERE id = ($2::uuid[])[1] OFFSET 0", 1)

// queueFacts queues factsSQL (factsOneSQL for one id) on b (after queueGenericPlans);
// out is set when the batch is read.
func queueFacts(b *pgx.Batch, v catalog.Viewer, ids []string, now time.Time, out *map[string]trust.Facts) {
	sql := factsSQL
	if len(ids) == 1 {
		sql = factsOneSQL
	}
	b.Queue(sql, v.WorkspaceID, ids, v.TeamIDs, v.Admin, now).Query(func(rows pgx.Rows) error {
		var err error
		*out, err = scanFacts(rows, now)
		return err
	})
}

// scanFacts reads the rows of factsSQL.
func scanFacts(rows pgx.Rows, now time.Time) (map[string]trust.Facts, error) {
	out := map[string]trust.Facts{}
	for rows.Next() {
		f := trust.Facts{Dimensions: map[string]*float64{}}
		var verdict *string
		var dims, cols, doms, open, violations []byte
		var rowCount *int64
		if err := rows.Scan(&f.DatasetID, &f.WorkspaceID, &f.ConnectionID, &f.Schema, &f.Table, &f.Kind, &f.CreatedAt,
			&f.LatestScore, &f.LastScanAt, &f.QueriesPerDay, &f.Layer, &verdict, &dims, &rowCount, &f.RowCountExact, &f.LatestTimestamp, &f.ProfiledAt,
			&f.Scans30d, &f.EmptyExpected, &f.LastFailure, &open, &f.UnackedSchemaChanges, &f.OldestUnackedSchemaChange,
			&f.Consumptions30d, &f.LastConsumedAt, &cols, &doms, &f.Contract.Active, &violations, &f.Contract.Version); err != nil {
			return nil, translate(err)
		}
		f.Verdict = "unknown"
		if verdict != nil {
			f.Verdict = *verdict
		}
		f.Profiled, f.RowCount = f.ProfiledAt != nil, rowCount
		if dims != nil {
			if err := json.Unmarshal(dims, &f.Dimensions); err != nil {
				return nil, vigia.Internal(err)
			}
		}
		var fi []factIssue
		if err := json.Unmarshal(open, &fi); err != nil {
			return nil, vigia.Internal(err)
		}
		for _, is := range fi {
			f.Issues = append(f.Issues, quality.VerdictIssue{ID: is.ID, Type: is.Type, Severity: quality.Severity(is.Severity),
				Status: quality.IssueStatus(is.Status)})
		}
		var fc []factColumn
		if err := json.Unmarshal(cols, &fc); err != nil {
			return nil, vigia.Internal(err)
		}
		for _, c := range fc {
			f.Columns = append(f.Columns, trust.ColumnFact{Name: c.Name, DataType: c.Type, PrimaryKey: c.PK, SemanticType: c.Semantic,
				SemanticMatches: c.Matches, NullRate: c.NullRate})
		}
		if err := scanFactDomains(&f, doms); err != nil {
			return nil, err
		}
		if err := scanFactContract(&f, violations); err != nil {
			return nil, err
		}
		f.UsageClass = trust.UsageClassOf(f.QueriesPerDay, f.Consumptions30d, f.LastConsumedAt, now)
		out[f.DatasetID] = f
	}
	return out, translate(rows.Err())
}

// scanFactDomains sets f.Domains from factsSQL's domains aggregate.
func scanFactDomains(f *trust.Facts, doms []byte) error {
	var fd []factDomain
	if err := json.Unmarshal(doms, &fd); err != nil {
		return vigia.Internal(err)
	}
	for _, d := range fd {
		f.Domains = append(f.Domains, trust.DomainFact{ID: d.ID, Name: d.Name, Status: d.Status, Version: d.Version, OwnerName: d.Owner})
	}
	return nil
}

// scanFactContract completes f.Contract (Active set) from the last check's violations:
// the contract holds until a check finds it broken (codes of its violations).
func scanFactContract(f *trust.Facts, violations []byte) error {
	f.Contract.Valid, f.Contract.Violations = true, []string{}
	if violations == nil {
		return nil
	}
	var vs []struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(violations, &vs); err != nil {
		return vigia.Internal(err)
	}
	seen := map[string]bool{}
	for _, v := range vs {
		if !seen[v.Code] {
			seen[v.Code] = true
			f.Contract.Violations = append(f.Contract.Violations, v.Code)
		}
	}
	sort.Strings(f.Contract.Violations)
	f.Contract.Valid = len(vs) == 0 || !f.Contract.Active
	return nil
}

// FindDatasets searches the viewer's datasets with every criterion combined.
func (s *TrustStore) FindDatasets(ctx context.Context, v catalog.Viewer, f trust.FindFilter, now time.Time, limit int) ([]trust.Found, bool, error) {
	args := []any{v.WorkspaceID, v.TeamIDs, v.Admin, now}
	where := []string{"d.workspace_id = $1", "d.dropped_at IS NULL", HiddenExcludedSQL("d.id", 1, 2, 3)}
	arg := func(x any) int { args = append(args, x); return len(args) }
	if f.Query != nil {
		// schema.table contains the schema and the table: one expression (trigram index).
		where = append(where, fmt.Sprintf("(d.schema_name || '.' || d.table_name) ILIKE $%d", arg("%"+escapeLike(*f.Query)+"%")))
	}
	if f.MinScore != nil {
		where = append(where, fmt.Sprintf("d.latest_score >= $%d", arg(*f.MinScore)))
	}
	if f.Domain != nil {
		n := arg(*f.Domain)
		where = append(where, fmt.Sprintf(`EXISTS (SELECT 1 FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
			WHERE dd.dataset_id = d.id AND dm.workspace_id = $1 AND (dm.id::text = $%d OR lower(dm.name) = lower($%d)))`, n, n))
	}
	if f.HasPII != nil {
		types, re := arg(trust.PIISemanticTypes()), arg(trust.PIINamePattern)
		exists := fmt.Sprintf(`EXISTS (SELECT 1 FROM dataset_columns c WHERE c.dataset_id = d.id AND
			((c.profile->'semantic'->>'type' = ANY($%d::text[]) AND coalesce((c.profile->'semantic'->>'matches')::int, 0) > 0)
			 OR c.name ~* $%d))`, types, re)
		if !*f.HasPII {
			exists = "NOT " + exists
		}
		where = append(where, exists)
	}
	outer := []string{"true"}
	if f.Layer != nil {
		outer = append(outer, fmt.Sprintf("layer = $%d", arg(*f.Layer)))
	}
	if f.UsageClass != nil {
		outer = append(outer, fmt.Sprintf("usage = $%d", arg(*f.UsageClass)))
	}
	exact := "id IS NULL" // no query: no exact match ranks first (never NULL, so every row ties)
	if f.Query != nil {
		exact = fmt.Sprintf("lower(schema_name || '.' || table_name) = lower($%d) OR lower(table_name) = lower($%d)", arg(*f.Query), len(args))
	}
	sql := fmt.Sprintf(`WITH base AS (
		SELECT d.id, d.schema_name, d.table_name, d.kind, d.latest_score, d.queries_per_day AS qpd, %s AS layer,
			coalesce(cs.c30, 0) AS c30, cs.last_at
		FROM datasets d LEFT JOIN LATERAL (
			SELECT count(DISTINCT x.consumption_id) FILTER (WHERE x.created_at >= $4::timestamptz - interval '30 days') AS c30,
				max(x.created_at) AS last_at FROM consumption_datasets x WHERE x.dataset_id = d.id) cs ON true
		WHERE %s), classed AS (SELECT *, %s AS usage FROM base)
		SELECT id::text, schema_name, table_name, kind, latest_score, qpd, layer, usage FROM classed WHERE %s
		ORDER BY (%s) DESC, latest_score DESC NULLS LAST, schema_name, table_name, id LIMIT %d`,
		layerSQL, strings.Join(where, " AND "), fmt.Sprintf(usageSQL, 4), strings.Join(outer, " AND "), exact, limit+1)
	rows, err := s.db.q(ctx).Query(ctx, sql, args...)
	if err != nil {
		return nil, false, translate(err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (trust.Found, error) {
		var fd trust.Found
		err := r.Scan(&fd.ID, &fd.Schema, &fd.Table, &fd.Kind, &fd.LatestScore, &fd.QueriesPerDay, &fd.Layer, &fd.UsageClass)
		return fd, err
	})
	if err != nil {
		return nil, false, translate(err)
	}
	truncated := len(found) > limit
	if truncated {
		found = found[:limit]
	}
	if len(found) == 0 {
		return found, false, nil
	}
	ids := make([]string, 0, len(found))
	for _, fd := range found {
		ids = append(ids, fd.ID)
	}
	facts, err := s.Facts(ctx, v, ids, now)
	if err != nil {
		return nil, false, err
	}
	for i, fd := range found {
		f := facts[fd.ID]
		fd.Verdict, fd.Domains = f.Verdict, f.Domains
		if fd.Domains == nil {
			fd.Domains = []trust.DomainFact{}
		}
		fd.PIIColumns, _ = trust.PII(f.Columns)
		found[i] = fd
	}
	return found, truncated, nil
}

// AddActivity appends to the workspace activity log.
func (s *TrustStore) AddActivity(ctx context.Context, a event.Activity) error {
	return s.db.AddActivity(ctx, a)
}

// LockWorkspace takes the workspace's consumption lock until the transaction ends.
func (s *TrustStore) LockWorkspace(ctx context.Context, workspaceID string) error {
	_, err := s.db.q(ctx).Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('vigia:consumptions:' || $1::text, 0))`, workspaceID)
	return translate(err)
}

// EnsureConsumer creates the consumer at first registration or returns it.
func (s *TrustStore) EnsureConsumer(ctx context.Context, c trust.Consumer) (trust.Consumer, error) {
	var out trust.Consumer
	err := s.db.q(ctx).QueryRow(ctx, `INSERT INTO consumers (id, workspace_id, name, kind, framework, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (workspace_id, name, kind) DO UPDATE SET framework = coalesce(EXCLUDED.framework, consumers.framework)
		RETURNING id::text, workspace_id::text, name, kind, framework, created_at`,
		c.ID, c.WorkspaceID, c.Name, c.Kind, c.Framework, c.CreatedAt).
		Scan(&out.ID, &out.WorkspaceID, &out.Name, &out.Kind, &out.Framework, &out.CreatedAt)
	return out, translate(err)
}

// ConsumptionByRunRef returns the consumer's read recorded with runRef.
func (s *TrustStore) ConsumptionByRunRef(ctx context.Context, consumerID, runRef string) (trust.Consumption, bool, error) {
	var c trust.Consumption
	err := s.db.q(ctx).QueryRow(ctx, `SELECT id::text, workspace_id::text, consumer_id::text, run_ref, purpose, actor, created_at
		FROM consumptions WHERE consumer_id = $1 AND run_ref = $2`, consumerID, runRef).
		Scan(&c.ID, &c.WorkspaceID, &c.ConsumerID, &c.RunRef, &c.Purpose, &c.Actor, &c.CreatedAt)
	if err == pgx.ErrNoRows {
		return c, false, nil
	}
	if err != nil {
		return c, false, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT x.dataset_id::text, d.schema_name || '.' || d.table_name, x.decision_seen, x.trust_as_of
		FROM consumption_datasets x JOIN datasets d ON d.id = x.dataset_id WHERE x.consumption_id = $1
		ORDER BY d.schema_name, d.table_name, x.dataset_id`, c.ID)
	if err != nil {
		return c, false, translate(err)
	}
	c.Datasets, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (trust.ConsumedDataset, error) {
		var d trust.ConsumedDataset
		err := r.Scan(&d.DatasetID, &d.DatasetName, &d.Decision, &d.TrustAsOf)
		return d, err
	})
	return c, err == nil, translate(err)
}

// ConsumptionsSince counts the workspace's reads since since, with the oldest one's time.
func (s *TrustStore) ConsumptionsSince(ctx context.Context, workspaceID string, since time.Time) (int, time.Time, error) {
	var n int
	var oldest *time.Time
	err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*), min(created_at) FROM consumptions WHERE workspace_id = $1 AND created_at >= $2`,
		workspaceID, since).Scan(&n, &oldest)
	if oldest == nil {
		return n, since, translate(err)
	}
	return n, *oldest, translate(err)
}

// InsertConsumption records a read with its datasets.
func (s *TrustStore) InsertConsumption(ctx context.Context, c trust.Consumption) error {
	q := s.db.q(ctx)
	if _, err := q.Exec(ctx, `INSERT INTO consumptions (id, workspace_id, consumer_id, run_ref, purpose, actor, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.ID, c.WorkspaceID, c.ConsumerID, c.RunRef, c.Purpose, c.Actor, c.CreatedAt); err != nil {
		return translate(err)
	}
	rows := make([][]any, 0, len(c.Datasets))
	for _, d := range c.Datasets {
		rows = append(rows, []any{c.ID, d.DatasetID, c.WorkspaceID, c.ConsumerID, c.Purpose, d.Decision, d.TrustAsOf, c.CreatedAt})
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"consumption_datasets"},
		[]string{"consumption_id", "dataset_id", "workspace_id", "consumer_id", "purpose", "decision_seen", "trust_as_of", "created_at"},
		pgx.CopyFromRows(rows))
	return translate(err)
}

// NotifiedDatasets returns the datasets already notified for the consumer since since.
func (s *TrustStore) NotifiedDatasets(ctx context.Context, consumerID string, datasetIDs []string, since time.Time) (map[string]bool, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT dataset_id::text FROM consumer_notice_datasets
		WHERE consumer_id = $1 AND dataset_id = ANY($2::uuid[]) AND created_at >= $3`, consumerID, datasetIDs, since)
	if err != nil {
		return nil, translate(err)
	}
	return idSet(rows)
}

// NoticesSince counts the workspace's untrusted-read notices since since.
func (s *TrustStore) NoticesSince(ctx context.Context, workspaceID string, since time.Time) (int, error) {
	var n int
	err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM consumer_notices WHERE workspace_id = $1 AND created_at >= $2`,
		workspaceID, since).Scan(&n)
	return n, translate(err)
}

// InsertNotice writes a notice to the events outbox and the notice log.
func (s *TrustStore) InsertNotice(ctx context.Context, n trust.Notice) error {
	q := s.db.q(ctx)
	payload, err := json.Marshal(n.Payload)
	if err != nil {
		return vigia.Internal(err)
	}
	if _, err := q.Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, idempotency_key, payload, created_at)
		VALUES ($1, $2, $3, 'consumer', $4, $5, $6, $7)`, n.EventID, n.WorkspaceID, trust.EventUntrustedRead, n.ConsumerID,
		n.IdempotencyKey, payload, n.CreatedAt); err != nil {
		return translate(err)
	}
	if _, err := q.Exec(ctx, `INSERT INTO consumer_notices (event_id, workspace_id, consumer_id, created_at) VALUES ($1, $2, $3, $4)`,
		n.EventID, n.WorkspaceID, n.ConsumerID, n.CreatedAt); err != nil {
		return translate(err)
	}
	_, err = q.Exec(ctx, `INSERT INTO consumer_notice_datasets (event_id, consumer_id, dataset_id, created_at)
		SELECT $1, $2, unnest($3::uuid[]), $4`, n.EventID, n.ConsumerID, n.DatasetIDs, n.CreatedAt)
	return translate(err)
}

// Consumers lists consumers with counters over the viewer's reads (restricted to
// f.DatasetIDs when set).
func (s *TrustStore) Consumers(ctx context.Context, v catalog.Viewer, f trust.ConsumerFilter, now time.Time) (vigia.List[trust.Consumer], error) {
	args := []any{v.WorkspaceID, v.TeamIDs, v.Admin, now}
	cd := `x.workspace_id = $1 AND ` + VisibleSQL("x.dataset_id", 2, 3)
	outer := "c.workspace_id = $1"
	if f.DatasetIDs != nil {
		args = append(args, f.DatasetIDs)
		cd += fmt.Sprintf(" AND x.dataset_id = ANY($%d::uuid[])", len(args))
		outer += " AND agg.consumer_id IS NOT NULL"
		if f.Since != nil {
			args = append(args, *f.Since)
			outer += fmt.Sprintf(" AND agg.last_at >= $%d", len(args))
		}
	}
	body := `WITH cd AS (SELECT x.* FROM consumption_datasets x WHERE ` + cd + `),
		agg AS (SELECT consumer_id,
			count(DISTINCT consumption_id) FILTER (WHERE created_at >= $4::timestamptz - interval '7 days') AS c7,
			count(DISTINCT consumption_id) FILTER (WHERE created_at >= $4::timestamptz - interval '30 days') AS c30,
			count(DISTINCT dataset_id) FILTER (WHERE created_at >= $4::timestamptz - interval '30 days') AS d30,
			count(*) FILTER (WHERE created_at >= $4::timestamptz - interval '7 days' AND decision_seen = 'trusted') AS t7,
			count(*) FILTER (WHERE created_at >= $4::timestamptz - interval '7 days' AND decision_seen = 'caution') AS ca7,
			count(*) FILTER (WHERE created_at >= $4::timestamptz - interval '7 days' AND decision_seen = 'untrusted') AS u7,
			count(*) FILTER (WHERE created_at >= $4::timestamptz - interval '7 days' AND decision_seen = 'unknown') AS k7,
			max(created_at) AS last_at,
			(array_agg(decision_seen ORDER BY created_at DESC, consumption_id DESC))[1] AS last_decision,
			(array_agg(purpose ORDER BY created_at DESC, consumption_id DESC))[1] AS last_purpose
			FROM cd GROUP BY consumer_id)
		SELECT %s FROM consumers c LEFT JOIN agg ON agg.consumer_id = c.id WHERE ` + outer
	var out vigia.List[trust.Consumer]
	if err := s.db.q(ctx).QueryRow(ctx, fmt.Sprintf(body, "count(*)"), args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	args = append(args, f.Page.Limit, f.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, fmt.Sprintf(body, `c.id::text, c.workspace_id::text, c.name, c.kind, c.framework, c.created_at,
		coalesce(agg.c7, 0), coalesce(agg.c30, 0), coalesce(agg.d30, 0), coalesce(agg.t7, 0), coalesce(agg.ca7, 0), coalesce(agg.u7, 0),
		coalesce(agg.k7, 0), agg.last_at, agg.last_decision, agg.last_purpose`)+
		fmt.Sprintf(" ORDER BY c.name, c.kind, c.id LIMIT $%d OFFSET $%d", len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (trust.Consumer, error) {
		var c trust.Consumer
		var t, ca, u, k int
		err := r.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Kind, &c.Framework, &c.CreatedAt, &c.Consumptions7d, &c.Consumptions30d,
			&c.Datasets30d, &t, &ca, &u, &k, &c.LastConsumedAt, &c.LastDecision, &c.LastPurpose)
		c.Decisions7d = map[string]int{trust.DecisionTrusted: t, trust.DecisionCaution: ca, trust.DecisionUntrusted: u, trust.DecisionUnknown: k}
		return c, err
	})
	return out, translate(err)
}

// ConsumerExposures returns, per dataset, the consumers that read it since since.
func (s *TrustStore) ConsumerExposures(ctx context.Context, v catalog.Viewer, datasetIDs []string, since, now time.Time) (map[string][]trust.Exposure, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT x.dataset_id::text, c.id::text, c.name, c.kind, c.framework,
		count(DISTINCT x.consumption_id) FILTER (WHERE x.created_at >= $6::timestamptz - interval '7 days'),
		(array_agg(x.decision_seen ORDER BY x.created_at DESC, x.consumption_id DESC))[1], max(x.created_at)
		FROM consumption_datasets x JOIN consumers c ON c.id = x.consumer_id
		WHERE x.workspace_id = $1 AND x.dataset_id = ANY($4::uuid[]) AND `+VisibleSQL("x.dataset_id", 2, 3)+`
		GROUP BY x.dataset_id, c.id HAVING max(x.created_at) >= $5
		ORDER BY x.dataset_id, max(x.created_at) DESC, c.name, c.id`, v.WorkspaceID, v.TeamIDs, v.Admin, datasetIDs, since, now)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string][]trust.Exposure{}
	for rows.Next() {
		var id string
		var e trust.Exposure
		if err := rows.Scan(&id, &e.ConsumerID, &e.Name, &e.Kind, &e.Framework, &e.Consumptions7d, &e.LastDecision, &e.LastConsumedAt); err != nil {
			return nil, translate(err)
		}
		out[id] = append(out[id], e)
	}
	return out, translate(rows.Err())
}
