package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
)

// RuleStore implements rule.Store.
type RuleStore struct{ db *DB }

// Rules returns the rule store.
func (db *DB) Rules() *RuleStore { return &RuleStore{db: db} }

var _ rule.Store = (*RuleStore)(nil)

const ruleSelect = `SELECT r.id::text, r.workspace_id::text, r.dataset_id::text, d.schema_name, d.table_name, d.connection_id::text, c.kind,
	r.rule_type, r.name, r.severity, r.params, r.active, r.created_by, r.created_at, r.updated_at,
	rd.id::text, rd.schema_name, rd.table_name,
	lr.status, lr.scan_id::text, lr.evaluated_at, lr.observed, lr.threshold, lr.reason_code, lr.reason_params,
	ci.id::text, r.dbt_unique_id, lr.dbt_invocation_id
	FROM rules r
	JOIN datasets d ON d.id = r.dataset_id
	JOIN connections c ON c.id = d.connection_id
	LEFT JOIN datasets rd ON rd.id = r.ref_dataset_id
	LEFT JOIN LATERAL (SELECT status, scan_id, evaluated_at, observed, threshold, reason_code, reason_params, dbt_invocation_id
		FROM rule_results WHERE rule_id = r.id ORDER BY evaluated_at DESC, scan_id DESC NULLS LAST LIMIT 1) lr ON true
	LEFT JOIN issues ci ON ci.rule_id = r.id AND ci.rule_current`

func scanRule(row pgx.Row) (rule.Rule, error) {
	var r rule.Rule
	var params, reasonParams []byte
	var refID, refSchema, refTable, status, scanID, reasonCode, invocation *string
	var evaluatedAt *time.Time
	var observed, threshold *float64
	err := row.Scan(&r.ID, &r.WorkspaceID, &r.DatasetID, &r.DatasetSchema, &r.DatasetTable, &r.ConnectionID, &r.ConnectionKind,
		&r.Type, &r.Name, &r.Severity, &params, &r.Active, &r.CreatedBy, &r.CreatedAt, &r.UpdatedAt,
		&refID, &refSchema, &refTable, &status, &scanID, &evaluatedAt, &observed, &threshold, &reasonCode, &reasonParams,
		&r.CurrentIssueID, &r.DBTUniqueID, &invocation)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(params, &r.Params); err != nil {
		return r, err
	}
	if refID != nil {
		r.RefDataset = &rule.DatasetRef{ID: *refID, Schema: *refSchema, Table: *refTable}
	}
	if status != nil {
		res := &rule.Result{Status: *status, EvaluatedAt: *evaluatedAt, Observed: observed, Threshold: threshold}
		if scanID != nil {
			res.ScanID = *scanID
		}
		if invocation != nil {
			res.DBTInvocationID = *invocation
		}
		if reasonCode != nil {
			res.Reason = &rule.Reason{Code: *reasonCode, Params: map[string]any{}}
			if err := json.Unmarshal(reasonParams, &res.Reason.Params); err != nil {
				return r, err
			}
		}
		r.LastResult = res
	}
	return r, nil
}

func refDatasetArg(p rule.Params) any {
	if p.RefDatasetID == "" {
		return nil
	}
	return p.RefDatasetID
}

// CreateRule inserts a rule.
func (s *RuleStore) CreateRule(ctx context.Context, r rule.Rule) error {
	params, err := json.Marshal(r.Params)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO rules (id, workspace_id, dataset_id, rule_type, name, severity, params, ref_dataset_id,
		active, created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		r.ID, r.WorkspaceID, r.DatasetID, r.Type, r.Name, r.Severity, params, refDatasetArg(r.Params), r.Active, r.CreatedBy,
		r.CreatedAt, r.UpdatedAt)
	return translate(err)
}

// CreateRules creates rules and records the activity a, in one transaction: an import
// lands whole or not at all.
func (s *RuleStore) CreateRules(ctx context.Context, rules []rule.Rule, a event.Activity) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		for _, r := range rules {
			if err := s.CreateRule(ctx, r); err != nil {
				return err
			}
		}
		return s.db.AddActivity(ctx, a)
	})
}

// UpdateRule writes a rule's name, severity, parameters and active flag.
func (s *RuleStore) UpdateRule(ctx context.Context, r rule.Rule) error {
	params, err := json.Marshal(r.Params)
	if err != nil {
		return vigia.Internal(err)
	}
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE rules SET name = $3, severity = $4, params = $5, ref_dataset_id = $6, active = $7,
		updated_at = $8 WHERE id = $1 AND workspace_id = $2`,
		r.ID, r.WorkspaceID, r.Name, r.Severity, params, refDatasetArg(r.Params), r.Active, r.UpdatedAt)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// DeleteRule deletes a rule and resolves its current issue, in one transaction.
func (s *RuleStore) DeleteRule(ctx context.Context, workspaceID, id, origin string, at time.Time) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var issueID, status string
		err := q.QueryRow(ctx, `SELECT id::text, status FROM issues WHERE rule_id = $1 AND workspace_id = $2 AND rule_current FOR UPDATE`,
			id, workspaceID).Scan(&issueID, &status)
		switch {
		case err == nil:
			to := status
			if status == "open" || status == "acknowledged" {
				to = "resolved"
			}
			if _, err := q.Exec(ctx, `UPDATE issues SET status = $2, rule_current = false, updated_at = $3,
				resolved_at = CASE WHEN status IN ('open', 'acknowledged') THEN $3 ELSE resolved_at END WHERE id = $1`,
				issueID, to, at); err != nil {
				return translate(err)
			}
			if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, 'rule_deleted', $7)`, vigia.NewID(), issueID, workspaceID, status, to, origin, at); err != nil {
				return translate(err)
			}
			if to != status {
				// The deletion resolved the issue: its tickets hear of it.
				if err := queueTicketWrites(ctx, q, workspaceID, issueID, "rule_deleted", origin, at); err != nil {
					return err
				}
			}
		case err != pgx.ErrNoRows:
			return translate(err)
		}
		tag, err := q.Exec(ctx, `DELETE FROM rules WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
		if err != nil {
			return translate(err)
		}
		if tag.RowsAffected() == 0 {
			return vigia.NotFound()
		}
		return nil
	})
}

// RuleByID returns a rule of a live dataset the viewer can see.
func (s *RuleStore) RuleByID(ctx context.Context, v catalog.Viewer, id string) (rule.Rule, error) {
	r, err := scanRule(s.db.q(ctx).QueryRow(ctx, ruleSelect+` WHERE r.id = $1 AND r.workspace_id = $2 AND d.dropped_at IS NULL AND `+
		VisibleSQL("d.id", 3, 4), id, v.WorkspaceID, v.TeamIDs, v.Admin))
	return r, translate(err)
}

// Rules lists the rules of live datasets the viewer can see, oldest first.
func (s *RuleStore) Rules(ctx context.Context, v catalog.Viewer, f rule.Filter) (vigia.List[rule.Rule], error) {
	lf := visibleFilter("r.workspace_id", v)
	add := lf.add
	if f.DatasetID != nil {
		add("r.dataset_id = $%d", *f.DatasetID)
	}
	if f.RuleType != nil {
		add("r.rule_type = $%d", *f.RuleType)
	}
	if f.Severity != nil {
		add("r.severity = $%d", *f.Severity)
	}
	if f.Status != nil {
		add("lr.status = $%d", *f.Status)
	}
	cond, args := lf.sql(), lf.args
	var out vigia.List[rule.Rule]
	count := `SELECT count(*) FROM rules r JOIN datasets d ON d.id = r.dataset_id
		LEFT JOIN LATERAL (SELECT status FROM rule_results WHERE rule_id = r.id ORDER BY evaluated_at DESC, scan_id DESC LIMIT 1) lr ON true
		WHERE ` + cond
	if err := s.db.q(ctx).QueryRow(ctx, count, args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	args = append(args, f.Page.Limit, f.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, fmt.Sprintf(`%s WHERE %s ORDER BY r.created_at, r.id LIMIT $%d OFFSET $%d`,
		ruleSelect, cond, len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (rule.Rule, error) { return scanRule(r) })
	if out.Items == nil {
		out.Items = []rule.Rule{}
	}
	return out, translate(err)
}

// VisibleDatasetNames names the datasets among ids the viewer can see.
func (s *RuleStore) VisibleDatasetNames(ctx context.Context, v catalog.Viewer, ids []string) (map[string]string, error) {
	out := map[string]string{}
	valid := vigia.ValidIDs(ids)
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name, d.table_name FROM datasets d
		WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[]) AND `+VisibleSQL("d.id", 3, 4), v.WorkspaceID, valid, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, schema, table string
		if err := rows.Scan(&id, &schema, &table); err != nil {
			return nil, translate(err)
		}
		out[id] = rule.DatasetRef{ID: id, Schema: schema, Table: table}.Name()
	}
	return out, translate(rows.Err())
}

// ActiveRulesOf lists a dataset's active rules with their reference datasets.
func (s *RuleStore) ActiveRulesOf(ctx context.Context, datasetID string) ([]rule.ScanRule, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT r.id::text, r.workspace_id::text, r.dataset_id::text, r.rule_type, r.name, r.severity,
		r.params, rd.id::text, rd.connection_id::text, rd.schema_name, rd.table_name, rd.dropped_at IS NOT NULL,
		coalesce((SELECT array_agg(name ORDER BY position) FROM dataset_columns WHERE dataset_id = rd.id), '{}')
		FROM rules r LEFT JOIN datasets rd ON rd.id = r.ref_dataset_id
		WHERE r.dataset_id = $1 AND r.active AND r.dbt_unique_id IS NULL ORDER BY r.created_at, r.id`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (rule.ScanRule, error) {
		var r rule.ScanRule
		var params []byte
		var refID, refConn, refSchema, refTable *string
		var dropped *bool
		var cols []string
		if err := row.Scan(&r.ID, &r.WorkspaceID, &r.DatasetID, &r.Type, &r.Name, &r.Severity, &params,
			&refID, &refConn, &refSchema, &refTable, &dropped, &cols); err != nil {
			return r, err
		}
		if err := json.Unmarshal(params, &r.Params); err != nil {
			return r, err
		}
		r.Active = true
		if refID != nil {
			r.Ref = &rule.RefDataset{ID: *refID, ConnectionID: *refConn, Schema: *refSchema, Table: *refTable,
				Dropped: dropped != nil && *dropped, Columns: cols}
		}
		return r, nil
	})
	return out, translate(err)
}

// AddActivity appends a rule activity to the workspace activity log.
func (s *RuleStore) AddActivity(ctx context.Context, a event.Activity) error {
	return s.db.AddActivity(ctx, a)
}

// RecordDBTRun creates or updates the rules of a dbt run's tests (by workspace and
// unique_id: type, params, dataset and reference follow the manifest; a rule switched
// off stays off), reads their current issues and saves what apply makes of them, all
// in one transaction.
func (s *RuleStore) RecordDBTRun(ctx context.Context, rules []rule.DBTRule, apply func(current []scan.KnownIssue) []scan.RuleRun) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		ids := make([]string, 0, len(rules))
		for i := range rules {
			r := &rules[i]
			params, err := json.Marshal(r.Params)
			if err != nil {
				return vigia.Internal(err)
			}
			if err := q.QueryRow(ctx, `INSERT INTO rules (id, workspace_id, dataset_id, rule_type, name, severity, params, ref_dataset_id,
				active, created_by, created_at, updated_at, dbt_unique_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, true, $9, $10, $10, $11)
				ON CONFLICT (workspace_id, dbt_unique_id) WHERE dbt_unique_id IS NOT NULL DO UPDATE SET dataset_id = EXCLUDED.dataset_id,
				rule_type = EXCLUDED.rule_type, params = EXCLUDED.params, ref_dataset_id = EXCLUDED.ref_dataset_id,
				updated_at = CASE WHEN rules.rule_type IS DISTINCT FROM EXCLUDED.rule_type OR rules.params IS DISTINCT FROM EXCLUDED.params
				  OR rules.dataset_id IS DISTINCT FROM EXCLUDED.dataset_id THEN EXCLUDED.updated_at ELSE rules.updated_at END
				RETURNING id::text, active`,
				r.ID, r.WorkspaceID, r.DatasetID, r.Type, r.Name, r.Severity, params, refDatasetArg(r.Params), r.CreatedBy,
				r.CreatedAt, r.UniqueID).Scan(&r.ID, &r.Active); err != nil {
				return translate(err)
			}
			ids = append(ids, r.ID)
		}
		scans := s.db.Scans()
		current, err := scans.CurrentRuleIssues(ctx, ids)
		if err != nil {
			return err
		}
		for _, run := range apply(current) {
			if err := scans.SaveRuleRun(ctx, run); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReportedRuleOutcomes returns the last passed or failed result of each active dbt test
// rule of the dataset, as score outcomes.
func (s *RuleStore) ReportedRuleOutcomes(ctx context.Context, datasetID string) ([]quality.RuleOutcome, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT r.id::text, r.rule_type, coalesce(r.params->>'column', ''), r.severity, lr.status
		FROM rules r CROSS JOIN LATERAL (SELECT rr.status FROM rule_results rr WHERE rr.rule_id = r.id
			ORDER BY rr.evaluated_at DESC LIMIT 1) lr
		WHERE r.dataset_id = $1 AND r.active AND r.dbt_unique_id IS NOT NULL AND lr.status IN ('passed', 'failed')
		ORDER BY r.created_at, r.id`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quality.RuleOutcome, error) {
		var o quality.RuleOutcome
		var sev, status string
		err := row.Scan(&o.RuleID, &o.RuleType, &o.Column, &sev, &status)
		o.Severity, o.Status = quality.Severity(sev), quality.RuleStatus(status)
		return o, err
	})
	return out, translate(err)
}
