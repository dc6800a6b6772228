package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/datapolicy"
	"github.com/vigia-data/vigia/event"
)

// DataPolicyStore implements datapolicy.Store.
type DataPolicyStore struct{ db *DB }

// DataPolicies returns the data policy store.
func (db *DB) DataPolicies() *DataPolicyStore { return &DataPolicyStore{db: db} }

var _ datapolicy.Store = (*DataPolicyStore)(nil)

// Policy returns the workspace's (domainID "") or a domain's policy.
func (s *DataPolicyStore) Policy(ctx context.Context, workspaceID, domainID string) (datapolicy.Policy, bool, error) {
	p := datapolicy.Policy{WorkspaceID: workspaceID}
	var raw []byte
	var updatedAt time.Time
	var err error
	if domainID == "" {
		err = s.db.q(ctx).QueryRow(ctx, `SELECT rules, updated_by, updated_at FROM data_policies
			WHERE workspace_id = $1 AND domain_id IS NULL`, workspaceID).Scan(&raw, &p.UpdatedBy, &updatedAt)
	} else {
		p.DomainID = &domainID
		err = s.db.q(ctx).QueryRow(ctx, `SELECT rules, updated_by, updated_at FROM data_policies
			WHERE workspace_id = $1 AND domain_id = $2`, workspaceID, domainID).Scan(&raw, &p.UpdatedBy, &updatedAt)
	}
	if err == pgx.ErrNoRows {
		p.Rules = []datapolicy.Rule{}
		return p, false, nil
	}
	if err != nil {
		return p, false, translate(err)
	}
	p.UpdatedAt = &updatedAt
	if err := json.Unmarshal(raw, &p.Rules); err != nil {
		return p, false, vigia.Internal(err)
	}
	return p, true, nil
}

// SavePolicy replaces a policy's rules.
func (s *DataPolicyStore) SavePolicy(ctx context.Context, p datapolicy.Policy) error {
	raw, err := json.Marshal(p.Rules)
	if err != nil {
		return vigia.Internal(err)
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var tag interface{ RowsAffected() int64 }
		if p.DomainID == nil {
			t, err := q.Exec(ctx, `UPDATE data_policies SET rules = $2, updated_by = $3, updated_at = $4
				WHERE workspace_id = $1 AND domain_id IS NULL`, p.WorkspaceID, raw, p.UpdatedBy, p.UpdatedAt)
			if err != nil {
				return translate(err)
			}
			tag = t
		} else {
			t, err := q.Exec(ctx, `UPDATE data_policies SET rules = $3, updated_by = $4, updated_at = $5
				WHERE workspace_id = $1 AND domain_id = $2`, p.WorkspaceID, *p.DomainID, raw, p.UpdatedBy, p.UpdatedAt)
			if err != nil {
				return translate(err)
			}
			tag = t
		}
		if tag.RowsAffected() > 0 {
			return nil
		}
		_, err := q.Exec(ctx, `INSERT INTO data_policies (id, workspace_id, domain_id, rules, updated_by, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, vigia.NewID(), p.WorkspaceID, p.DomainID, raw, p.UpdatedBy, p.UpdatedAt)
		return translate(err)
	})
}

// DomainPolicies returns the workspace's domain policies by domain id.
func (s *DataPolicyStore) DomainPolicies(ctx context.Context, workspaceID string) (map[string]datapolicy.Policy, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT domain_id::text, rules FROM data_policies
		WHERE workspace_id = $1 AND domain_id IS NOT NULL`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]datapolicy.Policy{}
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, translate(err)
		}
		p := datapolicy.Policy{WorkspaceID: workspaceID, DomainID: &id}
		if err := json.Unmarshal(raw, &p.Rules); err != nil {
			return nil, vigia.Internal(err)
		}
		out[id] = p
	}
	return out, translate(rows.Err())
}

// ConnectionDatasets returns the connection's datasets with their columns as the last
// profile stored them (class, semantic type and matches, oldest time) and domains.
func (s *DataPolicyStore) ConnectionDatasets(ctx context.Context, workspaceID, connectionID string) ([]datapolicy.Dataset, error) {
	rows, err := s.db.q(ctx).Query(ctx, `
		SELECT d.id::text, d.schema_name || '.' || d.table_name,
		       coalesce((SELECT jsonb_agg(jsonb_build_object('name', c.name, 'class', c.class,
		                  'semantic_type', c.profile->'semantic'->>'type',
		                  'semantic_matches', coalesce((c.profile->'semantic'->>'matches')::int, 0),
		                  'min_time', c.profile->>'min_time') ORDER BY c.position)
		                 FROM dataset_columns c WHERE c.dataset_id = d.id), '[]'),
		       coalesce((SELECT jsonb_agg(jsonb_build_object('id', m.id::text, 'name', m.name) ORDER BY m.name)
		                 FROM domain_datasets dd JOIN domains m ON m.id = dd.domain_id WHERE dd.dataset_id = d.id), '[]')
		  FROM datasets d
		 WHERE d.workspace_id = $1 AND d.connection_id = $2 AND d.dropped_at IS NULL
		 ORDER BY d.schema_name, d.table_name`, workspaceID, connectionID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []datapolicy.Dataset
	for rows.Next() {
		var d datapolicy.Dataset
		var cols, doms []byte
		if err := rows.Scan(&d.ID, &d.Name, &cols, &doms); err != nil {
			return nil, translate(err)
		}
		var cs []struct {
			Name            string  `json:"name"`
			Class           string  `json:"class"`
			SemanticType    *string `json:"semantic_type"`
			SemanticMatches int     `json:"semantic_matches"`
			MinTime         *string `json:"min_time"`
		}
		if err := json.Unmarshal(cols, &cs); err != nil {
			return nil, vigia.Internal(err)
		}
		for _, c := range cs {
			col := datapolicy.Column{Name: c.Name, Class: c.Class, SemanticMatches: c.SemanticMatches}
			if c.SemanticType != nil {
				col.SemanticType = *c.SemanticType
			}
			if c.MinTime != nil {
				if t, err := time.Parse(time.RFC3339Nano, *c.MinTime); err == nil {
					col.MinTime = &t
				}
			}
			d.Columns = append(d.Columns, col)
		}
		var ds []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(doms, &ds); err != nil {
			return nil, vigia.Internal(err)
		}
		for _, m := range ds {
			d.Domains = append(d.Domains, datapolicy.Domain{ID: m.ID, Name: m.Name})
		}
		out = append(out, d)
	}
	return out, translate(rows.Err())
}

// ApplyOutcomes opens a violation (its issue, the policy.violation_opened event) for a
// violated rule without an active one, and resolves the active violations (their
// issues, policy.violation_resolved) of rules no longer violated or no longer applied.
func (s *DataPolicyStore) ApplyOutcomes(ctx context.Context, workspaceID, scanID, datasetID string, outcomes []datapolicy.Outcome, at time.Time) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		active, err := s.Violations(ctx, workspaceID, datasetID)
		if err != nil {
			return err
		}
		byRule := map[string]datapolicy.Violation{}
		for _, v := range active {
			byRule[v.Rule] = v
		}
		var name, verdict string
		var score *float64
		if err := q.QueryRow(ctx, `SELECT d.schema_name || '.' || d.table_name, d.latest_score,
			coalesce((SELECT v.verdict FROM verdicts v WHERE v.dataset_id = d.id ORDER BY v.seq DESC LIMIT 1), 'unknown')
			FROM datasets d WHERE d.id = $1`, datasetID).Scan(&name, &score, &verdict); err != nil {
			return translate(err)
		}
		seen := map[string]bool{}
		for _, o := range outcomes {
			seen[o.Rule] = true
			v, isActive := byRule[o.Rule]
			switch {
			case o.Violated && !isActive:
				if err := s.open(ctx, workspaceID, scanID, datasetID, name, verdict, score, o, at); err != nil {
					return err
				}
			case !o.Violated && isActive:
				if err := s.resolve(ctx, workspaceID, scanID, v, o.Label, verdict, score, at); err != nil {
					return err
				}
			}
		}
		for rule, v := range byRule {
			if !seen[rule] {
				if err := s.resolve(ctx, workspaceID, scanID, v, rule, verdict, score, at); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *DataPolicyStore) open(ctx context.Context, workspaceID, scanID, datasetID, name, verdict string, score *float64, o datapolicy.Outcome, at time.Time) error {
	q := s.db.q(ctx)
	details, err := json.Marshal(o.Details)
	if err != nil {
		return vigia.Internal(err)
	}
	issueID := vigia.NewID()
	params, err := json.Marshal(map[string]any{"dataset": name, "rule": o.Rule, "label": o.Label, "source": o.Source})
	if err != nil {
		return vigia.Internal(err)
	}
	title := fmt.Sprintf("Política de dados %s violada em %s", o.Label, name)
	if _, err := q.Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, subtype, severity, title, title_key, title_params,
		metric, details, first_scan_id, last_scan_id, created_at, updated_at)
		VALUES ($1, $2, $3, 'policy_violation', $4, $5, $6, 'issue.policy_violation', $7, $4, $8, $9, $9, $10, $10)`,
		issueID, workspaceID, datasetID, o.Rule, o.Severity, title, params, details, nullableID(scanID), at); err != nil {
		return translate(err)
	}
	if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
		VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), issueID, workspaceID, "scan:"+scanID, at); err != nil {
		return translate(err)
	}
	if _, err := q.Exec(ctx, `INSERT INTO policy_violations (id, workspace_id, dataset_id, rule, source, severity, details, issue_id,
		opened_scan_id, opened_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		vigia.NewID(), workspaceID, datasetID, o.Rule, o.Source, o.Severity, details, issueID, nullableID(scanID), at); err != nil {
		return translate(err)
	}
	return s.event(ctx, workspaceID, scanID, datasetID, "policy.violation_opened", map[string]any{
		"dataset_id": datasetID, "scan_id": scanID, "rule": o.Rule, "label": o.Label, "severity": o.Severity,
		"source": o.Source, "source_domain": o.Domain, "verdict": verdict, "score": score}, at)
}

func (s *DataPolicyStore) resolve(ctx context.Context, workspaceID, scanID string, v datapolicy.Violation, label, verdict string, score *float64, at time.Time) error {
	q := s.db.q(ctx)
	if _, err := q.Exec(ctx, `UPDATE policy_violations SET resolved_at = $2, resolved_scan_id = $3 WHERE id = $1`,
		v.ID, at, nullableID(scanID)); err != nil {
		return translate(err)
	}
	if v.IssueID != nil {
		var from string
		err := q.QueryRow(ctx, `UPDATE issues i SET status = 'resolved', resolved_at = $2, updated_at = $2, last_scan_id = coalesce($3::uuid, last_scan_id)
			FROM (SELECT status FROM issues WHERE id = $1 FOR UPDATE) old
			WHERE i.id = $1 AND i.status IN ('open', 'acknowledged') RETURNING old.status`, *v.IssueID, at, nullableID(scanID)).Scan(&from)
		if err != nil && err != pgx.ErrNoRows {
			return translate(err)
		}
		if err == nil {
			if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
				VALUES ($1, $2, $3, $4, 'resolved', $5, 'resolved', $6)`, vigia.NewID(), *v.IssueID, workspaceID, from, "scan:"+scanID, at); err != nil {
				return translate(err)
			}
		}
	}
	var domain *string
	if len(v.Source) > len("domain:") && v.Source[:len("domain:")] == "domain:" {
		d := v.Source[len("domain:"):]
		domain = &d
	}
	return s.event(ctx, workspaceID, scanID, v.DatasetID, "policy.violation_resolved", map[string]any{
		"dataset_id": v.DatasetID, "scan_id": scanID, "rule": v.Rule, "label": label, "severity": v.Severity,
		"source": v.Source, "source_domain": domain, "verdict": verdict, "score": score}, at)
}

func (s *DataPolicyStore) event(ctx context.Context, workspaceID, scanID, datasetID, typ string, payload map[string]any, at time.Time) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return vigia.Internal(err)
	}
	rule, _ := payload["rule"].(string)
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, scan_id, idempotency_key, payload, created_at)
		VALUES ($1, $2, $3, 'dataset', $4, $5, $6, $7, $8) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
		vigia.NewID(), workspaceID, typ, datasetID, nullableID(scanID), event.IdempotencyKey(datasetID, scanID, typ, rule), raw, at)
	return translate(err)
}

// Violations lists the active violations of the workspace (of a dataset when set).
func (s *DataPolicyStore) Violations(ctx context.Context, workspaceID, datasetID string) ([]datapolicy.Violation, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, dataset_id::text, rule, source, severity, issue_id::text, opened_at
		FROM policy_violations WHERE workspace_id = $1 AND resolved_at IS NULL AND ($2 = '' OR dataset_id::text = $2)
		ORDER BY opened_at, id`, workspaceID, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (datapolicy.Violation, error) {
		var v datapolicy.Violation
		err := r.Scan(&v.ID, &v.DatasetID, &v.Rule, &v.Source, &v.Severity, &v.IssueID, &v.OpenedAt)
		return v, err
	})
}
