package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/compliance"
	"github.com/vigia-data/vigia/trust"
)

// ComplianceStore implements compliance.Store.
type ComplianceStore struct{ db *DB }

// Compliance returns the compliance store.
func (db *DB) Compliance() *ComplianceStore { return &ComplianceStore{db: db} }

var _ compliance.Store = (*ComplianceStore)(nil)

// Art10Facts reads the visible datasets (discovery still finds them) with their source,
// upstream lineage count, last score and verdict, rules and their last results, open
// issues, columns (names and semantic types only) and domains.
func (s *ComplianceStore) Art10Facts(ctx context.Context, v catalog.Viewer) ([]compliance.DatasetFacts, error) {
	teams := v.TeamIDs
	if teams == nil {
		teams = []string{}
	}
	rows, err := s.db.q(ctx).Query(ctx, `
		SELECT d.id::text, d.schema_name || '.' || d.table_name, c.id::text, c.name, c.kind, coalesce(d.data_country, c.data_country, (SELECT w.data_country FROM workspaces w WHERE w.id = d.workspace_id)),
		       (SELECT count(DISTINCT l.source_id) FROM lineage_edges l WHERE l.workspace_id = d.workspace_id AND l.target_id = d.id::text),
		       d.latest_score,
		       coalesce((SELECT verdict FROM verdicts WHERE dataset_id = d.id ORDER BY seq DESC LIMIT 1), 'unknown'),
		       EXISTS (SELECT 1 FROM dataset_profiles p WHERE p.dataset_id = d.id),
		       (SELECT count(*) FROM rules r WHERE r.dataset_id = d.id),
		       (SELECT count(*) FILTER (WHERE lr.status = 'passed') FROM rules r JOIN LATERAL (SELECT status FROM rule_results rr
		           WHERE rr.rule_id = r.id ORDER BY rr.evaluated_at DESC LIMIT 1) lr ON true WHERE r.dataset_id = d.id),
		       (SELECT count(*) FILTER (WHERE lr.status = 'failed') FROM rules r JOIN LATERAL (SELECT status FROM rule_results rr
		           WHERE rr.rule_id = r.id ORDER BY rr.evaluated_at DESC LIMIT 1) lr ON true WHERE r.dataset_id = d.id),
		       (SELECT count(*) FROM issues i WHERE i.dataset_id = d.id AND i.status IN ('open', 'acknowledged')),
		       coalesce((SELECT jsonb_agg(jsonb_build_object('name', col.name, 'type', col.data_type,
		           'semantic', coalesce(col.profile->'semantic'->>'type', ''),
		           'matches', coalesce((col.profile->'semantic'->>'matches')::int, 0)) ORDER BY col.position)
		           FROM dataset_columns col WHERE col.dataset_id = d.id), '[]'),
		       coalesce((SELECT array_agg(m.name ORDER BY m.name) FROM domain_datasets dd JOIN domains m ON m.id = dd.domain_id
		           WHERE dd.dataset_id = d.id), '{}'),
		       (SELECT count(DISTINCT l.target_id) FROM lineage_edges l WHERE l.workspace_id = d.workspace_id AND l.source_id = d.id::text),
		       EXISTS (SELECT 1 FROM domain_datasets dd JOIN domains m ON m.id = dd.domain_id WHERE dd.dataset_id = d.id AND m.restricted),
		       (SELECT max(p.profiled_at) FROM dataset_profiles p WHERE p.dataset_id = d.id),
		       coalesce((SELECT jsonb_agg(jsonb_build_object('column', col.name, 'type', col.profile->'semantic'->>'type',
		           'matches', coalesce((col.profile->'semantic'->>'matches')::int, 0), 'valid', coalesce((col.profile->'semantic'->>'valid')::int, 0))
		           ORDER BY col.position) FROM dataset_columns col WHERE col.dataset_id = d.id
		           AND col.profile->'semantic'->>'type' IN ('nif_pt', 'iban', 'postal_code_pt', 'phone_pt', 'email')), '[]')
		  FROM datasets d JOIN connections c ON c.id = d.connection_id
		 WHERE d.workspace_id = $1 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`
		 ORDER BY d.schema_name, d.table_name, d.id`, v.WorkspaceID, teams, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (compliance.DatasetFacts, error) {
		var f compliance.DatasetFacts
		var cols, validity []byte
		if err := r.Scan(&f.ID, &f.Name, &f.ConnectionID, &f.ConnectionName, &f.ConnectionKind, &f.DataCountry, &f.Upstream,
			&f.Score, &f.Verdict, &f.Profiled, &f.RuleCount, &f.Passed, &f.Failed, &f.OpenIssues, &cols, &f.Domains,
			&f.Downstream, &f.RestrictedDomain, &f.LastProfiledAt, &validity); err != nil {
			return f, err
		}
		if err := json.Unmarshal(validity, &f.Validity); err != nil {
			return f, vigia.Internal(err)
		}
		var cs []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			Semantic string `json:"semantic"`
			Matches  int    `json:"matches"`
		}
		if err := json.Unmarshal(cols, &cs); err != nil {
			return f, vigia.Internal(err)
		}
		for _, c := range cs {
			f.Columns = append(f.Columns, trust.ColumnFact{Name: c.Name, DataType: c.Type, SemanticType: c.Semantic, SemanticMatches: c.Matches})
		}
		return f, nil
	})
}

var _ compliance.AISystemStore = (*ComplianceStore)(nil)

// AISystems reads the registered systems and every link: registered ones, the datasets
// of domains with a consumer of kind ai_system, and the datasets read since the given
// time for purposes treino (training) and rag (retrieval).
func (s *ComplianceStore) AISystems(ctx context.Context, workspaceID string, readsSince time.Time) ([]compliance.RegisteredSystem, []compliance.SystemLink, error) {
	q := s.db.q(ctx)
	rows, err := q.Query(ctx, `SELECT id::text, name, intended_purpose, provider, risk_category, created_by, created_at
		FROM ai_systems WHERE workspace_id = $1 ORDER BY lower(name)`, workspaceID)
	if err != nil {
		return nil, nil, translate(err)
	}
	regs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (compliance.RegisteredSystem, error) {
		var x compliance.RegisteredSystem
		err := r.Scan(&x.ID, &x.Name, &x.IntendedPurpose, &x.Provider, &x.RiskCategory, &x.CreatedBy, &x.CreatedAt)
		return x, err
	})
	if err != nil {
		return nil, nil, translate(err)
	}
	rows, err = q.Query(ctx, `
		SELECT a.id::text, a.name, l.dataset_id::text, l.use, 'registered', ''
		  FROM ai_system_datasets l JOIN ai_systems a ON a.id = l.system_id
		 WHERE a.workspace_id = $1
		UNION ALL
		SELECT '', dc.name, dd.dataset_id::text, 'input', 'domain_consumer', 'domain:' || dc.domain_id::text
		  FROM domain_consumers dc JOIN domain_datasets dd ON dd.domain_id = dc.domain_id
		 WHERE dc.workspace_id = $1 AND dc.kind = 'ai_system'
		UNION ALL
		SELECT DISTINCT '', c.name, cd.dataset_id::text, CASE cd.purpose WHEN 'treino' THEN 'training' ELSE 'retrieval' END,
		       'consumption', 'consumer:' || c.kind
		  FROM consumption_datasets cd JOIN consumers c ON c.id = cd.consumer_id
		 WHERE cd.workspace_id = $1 AND cd.purpose IN ('treino', 'rag') AND cd.created_at >= $2
		 ORDER BY 2, 3, 4, 5, 6`, workspaceID, readsSince)
	if err != nil {
		return nil, nil, translate(err)
	}
	links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (compliance.SystemLink, error) {
		var x compliance.SystemLink
		err := r.Scan(&x.SystemID, &x.SystemName, &x.DatasetID, &x.Use, &x.Origin, &x.Via)
		return x, err
	})
	return regs, links, translate(err)
}

// CreateAISystem stores a registered system with its dataset links in one transaction;
// a name taken (case-insensitive) is KindConflict ai_system_exists.
func (s *ComplianceStore) CreateAISystem(ctx context.Context, workspaceID string, a compliance.RegisteredSystem, links []compliance.SystemLink) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		tag, err := q.Exec(ctx, `INSERT INTO ai_systems (id, workspace_id, name, intended_purpose, provider, risk_category, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			a.ID, workspaceID, a.Name, a.IntendedPurpose, a.Provider, a.RiskCategory, a.CreatedBy, a.CreatedAt)
		if err != nil {
			return translate(err)
		}
		if tag.RowsAffected() == 0 {
			return vigia.Conflict(compliance.CodeSystemExists, "error.ai_system_exists", nil)
		}
		for _, l := range links {
			if _, err := q.Exec(ctx, `INSERT INTO ai_system_datasets (system_id, dataset_id, workspace_id, use)
				SELECT $1, d.id, d.workspace_id, $3 FROM datasets d WHERE d.id = $2 AND d.workspace_id = $4`,
				a.ID, l.DatasetID, l.Use, workspaceID); err != nil {
				return translate(err)
			}
		}
		return nil
	})
}

// DeleteAISystem removes a registered system of the workspace.
func (s *ComplianceStore) DeleteAISystem(ctx context.Context, workspaceID, id string) error {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM ai_systems WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// PolicyFacts reads the enabled pii_retention_max_age rules of the workspace's policies
// (the smallest max_age_days) and the open policy violations.
func (s *ComplianceStore) PolicyFacts(ctx context.Context, workspaceID string) (compliance.PolicyFacts, error) {
	var f compliance.PolicyFacts
	err := s.db.q(ctx).QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM data_policies p, jsonb_array_elements(p.rules) r WHERE p.workspace_id = $1
		        AND r->>'rule' = 'pii_retention_max_age' AND coalesce((r->>'enabled')::boolean, true)),
		(SELECT count(*) FROM policy_violations v WHERE v.workspace_id = $1 AND v.resolved_at IS NULL),
		(SELECT min((r->>'max_age_days')::int) FROM data_policies p, jsonb_array_elements(p.rules) r WHERE p.workspace_id = $1
		        AND r->>'rule' = 'pii_retention_max_age' AND coalesce((r->>'enabled')::boolean, true))`, workspaceID).
		Scan(&f.RetentionRule, &f.OpenViolations, &f.RetentionMaxDays)
	return f, translate(err)
}
