package store

import (
	"context"
	"encoding/json"

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
		SELECT d.id::text, d.schema_name || '.' || d.table_name, c.id::text, c.name, c.kind, coalesce(d.data_country, c.data_country),
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
		           WHERE dd.dataset_id = d.id), '{}')
		  FROM datasets d JOIN connections c ON c.id = d.connection_id
		 WHERE d.workspace_id = $1 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`
		 ORDER BY d.schema_name, d.table_name, d.id`, v.WorkspaceID, teams, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (compliance.DatasetFacts, error) {
		var f compliance.DatasetFacts
		var cols []byte
		if err := r.Scan(&f.ID, &f.Name, &f.ConnectionID, &f.ConnectionName, &f.ConnectionKind, &f.DataCountry, &f.Upstream,
			&f.Score, &f.Verdict, &f.Profiled, &f.RuleCount, &f.Passed, &f.Failed, &f.OpenIssues, &cols, &f.Domains); err != nil {
			return f, err
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
