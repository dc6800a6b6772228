package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rule"
)

// ContractStore implements contract.Store.
type ContractStore struct{ db *DB }

// Contracts returns the contract store.
func (db *DB) Contracts() *ContractStore { return &ContractStore{db: db} }

var _ contract.Store = (*ContractStore)(nil)

// storedSLA is the SLA part a contract reads of domains.sla.
type storedSLA struct {
	AvailabilityObjectivePct *float64           `json:"availability_objective_pct"`
	RetentionDays            *int               `json:"retention_days"`
	DimensionTargets         map[string]float64 `json:"dimension_targets"`
}

// DatasetDomains lists the domains of a dataset by name, with their SLA, owner and team grants.
func (s *ContractStore) DatasetDomains(ctx context.Context, datasetID string) ([]contract.DomainInfo, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT dm.id::text, dm.name, dm.owner_name, dm.sla,
		coalesce((SELECT json_agg(json_build_object('team_id', g.team_id::text, 'name', t.name, 'role', g.role) ORDER BY t.name, t.id)
			FROM domain_grants g JOIN teams t ON t.id = g.team_id WHERE g.domain_id = dm.id), '[]')
		FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id WHERE dd.dataset_id = $1 ORDER BY dm.name, dm.id`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (contract.DomainInfo, error) {
		var d contract.DomainInfo
		var sla, teams []byte
		if err := r.Scan(&d.ID, &d.Name, &d.OwnerName, &sla, &teams); err != nil {
			return d, err
		}
		var st storedSLA
		if err := json.Unmarshal(sla, &st); err != nil {
			return d, err
		}
		d.AvailabilityObjectivePct, d.RetentionDays, d.DimensionTargets = st.AvailabilityObjectivePct, st.RetentionDays, st.DimensionTargets
		var ts []struct {
			TeamID string `json:"team_id"`
			Name   string `json:"name"`
			Role   string `json:"role"`
		}
		if err := json.Unmarshal(teams, &ts); err != nil {
			return d, err
		}
		for _, t := range ts {
			d.Teams = append(d.Teams, contract.TeamGrant{TeamID: t.TeamID, Name: t.Name, Role: t.Role})
		}
		return d, nil
	})
	return out, translate(err)
}

const versionCols = `id::text, workspace_id::text, dataset_id::text, major, minor, patch, bump, document, changes, change_summary,
	proposal_id::text, author_id, accepted_by, created_at`

// storedChange is a contract change as kept in contract_versions.changes.
type storedContractChange struct {
	Kind     string `json:"kind"`
	Property string `json:"property,omitempty"`
	Field    string `json:"field,omitempty"`
	Before   any    `json:"before,omitempty"`
	After    any    `json:"after,omitempty"`
	Quality  string `json:"quality,omitempty"`
	Breaking bool   `json:"breaking"`
}

func scanVersion(r pgx.CollectableRow) (contract.VersionRecord, error) {
	var v contract.VersionRecord
	var doc, changes []byte
	if err := r.Scan(&v.ID, &v.WorkspaceID, &v.DatasetID, &v.Number.Major, &v.Number.Minor, &v.Number.Patch, &v.Bump, &doc, &changes,
		&v.Summary, &v.ProposalID, &v.AuthorID, &v.AcceptedBy, &v.CreatedAt); err != nil {
		return v, err
	}
	if err := json.Unmarshal(doc, &v.Document); err != nil {
		return v, err
	}
	var cs []storedContractChange
	if err := json.Unmarshal(changes, &cs); err != nil {
		return v, err
	}
	v.Changes = []contract.Change{}
	for _, c := range cs {
		v.Changes = append(v.Changes, contract.Change{Kind: c.Kind, Property: c.Property, Field: c.Field, Before: c.Before,
			After: c.After, Quality: c.Quality, Breaking: c.Breaking})
	}
	return v, nil
}

// ActiveVersion returns the dataset's newest version.
func (s *ContractStore) ActiveVersion(ctx context.Context, datasetID string) (contract.VersionRecord, bool, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+versionCols+` FROM contract_versions WHERE dataset_id = $1
		ORDER BY major DESC, minor DESC, patch DESC LIMIT 1`, datasetID)
	if err != nil {
		return contract.VersionRecord{}, false, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanVersion)
	if err != nil || len(out) == 0 {
		return contract.VersionRecord{}, false, translate(err)
	}
	return out[0], true, nil
}

// ActiveVersions returns the newest version of each dataset among ids.
func (s *ContractStore) ActiveVersions(ctx context.Context, datasetIDs []string) (map[string]contract.VersionRecord, error) {
	out := map[string]contract.VersionRecord{}
	if len(datasetIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT DISTINCT ON (dataset_id) `+versionCols+` FROM contract_versions
		WHERE dataset_id = ANY($1::uuid[]) ORDER BY dataset_id, major DESC, minor DESC, patch DESC`, datasetIDs)
	if err != nil {
		return nil, translate(err)
	}
	list, err := pgx.CollectRows(rows, scanVersion)
	if err != nil {
		return nil, translate(err)
	}
	for _, v := range list {
		out[v.DatasetID] = v
	}
	return out, nil
}

// Versions lists a dataset's versions, newest first.
func (s *ContractStore) Versions(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[contract.VersionRecord], error) {
	var total int
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM contract_versions WHERE dataset_id = $1`, datasetID).Scan(&total); err != nil {
		return vigia.List[contract.VersionRecord]{}, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+versionCols+` FROM contract_versions WHERE dataset_id = $1
		ORDER BY major DESC, minor DESC, patch DESC LIMIT $2 OFFSET $3`, datasetID, page.Limit, page.Offset)
	if err != nil {
		return vigia.List[contract.VersionRecord]{}, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanVersion)
	if out == nil {
		out = []contract.VersionRecord{}
	}
	return vigia.List[contract.VersionRecord]{Items: out, Total: total}, translate(err)
}

// VersionByNumber returns one version of a dataset.
func (s *ContractStore) VersionByNumber(ctx context.Context, datasetID string, n contract.Version) (contract.VersionRecord, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+versionCols+` FROM contract_versions WHERE dataset_id = $1 AND major = $2 AND minor = $3 AND patch = $4`,
		datasetID, n.Major, n.Minor, n.Patch)
	if err != nil {
		return contract.VersionRecord{}, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanVersion)
	if err != nil {
		return contract.VersionRecord{}, translate(err)
	}
	if len(out) == 0 {
		return contract.VersionRecord{}, vigia.NotFound()
	}
	return out[0], nil
}

// CreateVersion inserts a version; a number taken (a concurrent acceptance) is KindConflict.
func (s *ContractStore) CreateVersion(ctx context.Context, v contract.VersionRecord) error {
	doc, err := json.Marshal(v.Document)
	if err != nil {
		return vigia.Internal(err)
	}
	cs := make([]storedContractChange, 0, len(v.Changes))
	for _, c := range v.Changes {
		cs = append(cs, storedContractChange{Kind: c.Kind, Property: c.Property, Field: c.Field, Before: c.Before, After: c.After,
			Quality: c.Quality, Breaking: c.Breaking})
	}
	changes, err := json.Marshal(cs)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO contract_versions (id, workspace_id, dataset_id, major, minor, patch, bump, document, changes,
		change_summary, proposal_id, author_id, accepted_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		v.ID, v.WorkspaceID, v.DatasetID, v.Number.Major, v.Number.Minor, v.Number.Patch, v.Bump, doc, changes, v.Summary, v.ProposalID,
		v.AuthorID, v.AcceptedBy, v.CreatedAt)
	return translate(err)
}

const proposalCols = `id::text, workspace_id::text, dataset_id::text, status, origin, summary, document, author_id, created_at, updated_at,
	decided_by, decided_at, decision_note, version`

func scanProposal(r pgx.CollectableRow) (contract.Proposal, error) {
	var p contract.Proposal
	var doc []byte
	if err := r.Scan(&p.ID, &p.WorkspaceID, &p.DatasetID, &p.Status, &p.Origin, &p.Summary, &doc, &p.AuthorID, &p.CreatedAt, &p.UpdatedAt,
		&p.DecidedBy, &p.DecidedAt, &p.Note, &p.Version); err != nil {
		return p, err
	}
	return p, json.Unmarshal(doc, &p.Document)
}

// Proposals lists a dataset's proposals, newest first.
func (s *ContractStore) Proposals(ctx context.Context, datasetID string, status *string, page vigia.Page) (vigia.List[contract.Proposal], error) {
	var total int
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM contract_proposals WHERE dataset_id = $1 AND ($2::text IS NULL OR status = $2)`,
		datasetID, status).Scan(&total); err != nil {
		return vigia.List[contract.Proposal]{}, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+proposalCols+` FROM contract_proposals WHERE dataset_id = $1 AND ($2::text IS NULL OR status = $2)
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, datasetID, status, page.Limit, page.Offset)
	if err != nil {
		return vigia.List[contract.Proposal]{}, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanProposal)
	if out == nil {
		out = []contract.Proposal{}
	}
	return vigia.List[contract.Proposal]{Items: out, Total: total}, translate(err)
}

// Proposal returns a dataset's proposal with its comments, oldest first.
func (s *ContractStore) Proposal(ctx context.Context, datasetID, id string) (contract.Proposal, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+proposalCols+` FROM contract_proposals WHERE id = $1 AND dataset_id = $2`, id, datasetID)
	if err != nil {
		return contract.Proposal{}, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanProposal)
	if err != nil {
		return contract.Proposal{}, translate(err)
	}
	if len(out) == 0 {
		return contract.Proposal{}, vigia.NotFound()
	}
	p := out[0]
	rows, err = s.db.q(ctx).Query(ctx, `SELECT id::text, proposal_id::text, author_id, body, created_at FROM contract_proposal_comments
		WHERE proposal_id = $1 ORDER BY created_at, id`, id)
	if err != nil {
		return contract.Proposal{}, translate(err)
	}
	p.Comments, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (contract.Comment, error) {
		var c contract.Comment
		err := r.Scan(&c.ID, &c.ProposalID, &c.AuthorID, &c.Body, &c.CreatedAt)
		return c, err
	})
	if p.Comments == nil {
		p.Comments = []contract.Comment{}
	}
	return p, translate(err)
}

// CreateProposal inserts a proposal.
func (s *ContractStore) CreateProposal(ctx context.Context, p contract.Proposal) error {
	doc, err := json.Marshal(p.Document)
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = s.db.q(ctx).Exec(ctx, `INSERT INTO contract_proposals (id, workspace_id, dataset_id, status, origin, summary, document, author_id,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		p.ID, p.WorkspaceID, p.DatasetID, p.Status, p.Origin, p.Summary, doc, p.AuthorID, p.CreatedAt, p.UpdatedAt)
	return translate(err)
}

// DecideProposal moves an open proposal to its decided status.
func (s *ContractStore) DecideProposal(ctx context.Context, p contract.Proposal) error {
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE contract_proposals SET status = $3, decided_by = $4, decided_at = $5, decision_note = $6,
		version = $7, updated_at = $8 WHERE id = $1 AND dataset_id = $2 AND status = 'open'`,
		p.ID, p.DatasetID, p.Status, p.DecidedBy, p.DecidedAt, p.Note, p.Version, p.UpdatedAt)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.Conflict("proposal_not_open", "error.contract_proposal_not_open", nil)
	}
	return nil
}

// AddComment inserts a comment.
func (s *ContractStore) AddComment(ctx context.Context, c contract.Comment) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO contract_proposal_comments (id, proposal_id, workspace_id, author_id, body, created_at)
		SELECT $1, p.id, p.workspace_id, $3, $4, $5 FROM contract_proposals p WHERE p.id = $2`,
		c.ID, c.ProposalID, c.AuthorID, c.Body, c.CreatedAt)
	return translate(err)
}

// Subjects lists the live datasets with an active contract of a connection (or among
// ids), with their columns and their active rules' last statuses.
func (s *ContractStore) Subjects(ctx context.Context, workspaceID, connectionID string, datasetIDs []string) ([]contract.Subject, error) {
	args := []any{workspaceID}
	where := "d.workspace_id = $1 AND d.dropped_at IS NULL"
	if connectionID != "" {
		args = append(args, connectionID)
		where += fmt.Sprintf(" AND d.connection_id = $%d", len(args))
	}
	if datasetIDs != nil {
		args = append(args, datasetIDs)
		where += fmt.Sprintf(" AND d.id = ANY($%d::uuid[])", len(args))
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name || '.' || d.table_name FROM datasets d
		WHERE `+where+` AND EXISTS (SELECT 1 FROM contract_versions cv WHERE cv.dataset_id = d.id) ORDER BY d.id`, args...)
	if err != nil {
		return nil, translate(err)
	}
	subjects, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (contract.Subject, error) {
		sub := contract.Subject{WorkspaceID: workspaceID}
		err := r.Scan(&sub.DatasetID, &sub.DatasetName)
		return sub, err
	})
	if err != nil || len(subjects) == 0 {
		return subjects, translate(err)
	}
	ids := make([]string, 0, len(subjects))
	for _, sub := range subjects {
		ids = append(ids, sub.DatasetID)
	}
	active, err := s.ActiveVersions(ctx, ids)
	if err != nil {
		return nil, err
	}
	cols := map[string][]catalog.Column{}
	rows, err = s.db.q(ctx).Query(ctx, `SELECT dataset_id::text, name, position, data_type, class, nullable, primary_key, unique_key, profile
		FROM dataset_columns WHERE dataset_id = ANY($1::uuid[]) ORDER BY dataset_id, position`, ids)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id string
		var c catalog.Column
		var prof []byte
		if err := rows.Scan(&id, &c.Name, &c.Position, &c.DataType, &c.Class, &c.Nullable, &c.PrimaryKey, &c.Unique, &prof); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if prof != nil {
			c.Profile = &catalog.ColumnProfile{}
			if err := json.Unmarshal(prof, c.Profile); err != nil {
				rows.Close()
				return nil, vigia.Internal(err)
			}
		}
		cols[id] = append(cols[id], c)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	states := map[string][]contract.RuleState{}
	rows, err = s.db.q(ctx).Query(ctx, `SELECT r.dataset_id::text, r.rule_type, r.params, coalesce(lr.status, '')
		FROM rules r LEFT JOIN LATERAL (SELECT status FROM rule_results WHERE rule_id = r.id ORDER BY evaluated_at DESC LIMIT 1) lr ON true
		WHERE r.dataset_id = ANY($1::uuid[]) AND r.active`, ids)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id string
		var st contract.RuleState
		var params []byte
		if err := rows.Scan(&id, &st.Type, &params, &st.Status); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		var p rule.Params
		if err := json.Unmarshal(params, &p); err != nil {
			rows.Close()
			return nil, vigia.Internal(err)
		}
		st.Params = p
		states[id] = append(states[id], st)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	for i := range subjects {
		subjects[i].Active = active[subjects[i].DatasetID]
		subjects[i].Columns = cols[subjects[i].DatasetID]
		subjects[i].Rules = states[subjects[i].DatasetID]
	}
	return subjects, nil
}

// SaveCheck keeps a check's outcome and opens or resolves the dataset's contract issue.
func (s *ContractStore) SaveCheck(ctx context.Context, r contract.CheckResult) error {
	violations, err := json.Marshal(r.Violations)
	if err != nil {
		return vigia.Internal(err)
	}
	q := s.db.q(ctx)
	if _, err := q.Exec(ctx, `INSERT INTO contract_checks (dataset_id, workspace_id, scan_id, version, violations, checked_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (dataset_id) DO UPDATE SET scan_id = $3, version = $4, violations = $5, checked_at = $6`,
		r.DatasetID, r.WorkspaceID, r.ScanID, r.Version, violations, r.At); err != nil {
		return translate(err)
	}
	origin := "contract"
	if r.ScanID != nil {
		origin = "scan:" + *r.ScanID
	}
	var openID *string
	var openStatus string
	err = q.QueryRow(ctx, `SELECT id::text, status FROM issues WHERE dataset_id = $1 AND type = 'contract' AND status IN ('open', 'acknowledged')`,
		r.DatasetID).Scan(&openID, &openStatus)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return translate(err)
	}
	if len(r.Violations) == 0 {
		if openID == nil {
			return nil
		}
		if _, err := q.Exec(ctx, `UPDATE issues SET status = 'resolved', resolved_at = $2, updated_at = $2 WHERE id = $1`, *openID, r.At); err != nil {
			return translate(err)
		}
		_, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, $4, 'resolved', $5, 'auto_resolved', $6)`, vigia.NewID(), *openID, r.WorkspaceID, openStatus, origin, r.At)
		return translate(err)
	}
	codes := contract.Codes(r.Violations)
	details, err := json.Marshal(map[string]any{"version": r.Version, "violations": r.Violations})
	if err != nil {
		return vigia.Internal(err)
	}
	params, err := json.Marshal(map[string]any{"dataset": r.DatasetName, "version": r.Version, "violations": strings.Join(codes, ", ")})
	if err != nil {
		return vigia.Internal(err)
	}
	title := fmt.Sprintf("Contract %s of %s violated: %s", r.Version, r.DatasetName, strings.Join(codes, ", "))
	if openID != nil {
		// A second run for the same scan (the consumer's retry) counts no new detection.
		_, err := q.Exec(ctx, `UPDATE issues SET details = $2, title = $3, title_params = $4, updated_at = $5,
			detections = detections + CASE WHEN $6::uuid IS NOT NULL AND last_scan_id IS DISTINCT FROM $6::uuid THEN 1 ELSE 0 END,
			last_scan_id = coalesce($6::uuid, last_scan_id) WHERE id = $1`, *openID, details, title, params, r.At, r.ScanID)
		return translate(err)
	}
	id := vigia.NewID()
	if _, err := q.Exec(ctx, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, title, title_key, title_params, details,
		first_scan_id, last_scan_id, created_at, updated_at) VALUES ($1, $2, $3, 'contract', 'critical', $4, 'issue.contract', $5, $6, $7, $7, $8, $8)`,
		id, r.WorkspaceID, r.DatasetID, title, params, details, r.ScanID, r.At); err != nil {
		return translate(err)
	}
	if _, err = q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
		VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), id, r.WorkspaceID, origin, r.At); err != nil {
		return translate(err)
	}
	if r.ScanID != nil {
		return nil // the scan's finished alerts carry it
	}
	// Checked outside a scan (a version accepted): its own alert.
	return writeIssueOpened(ctx, q, r.WorkspaceID, id, r.DatasetID, "critical", r.At)
}

// States returns the contract state of each dataset among ids that has an active contract.
func (s *ContractStore) States(ctx context.Context, datasetIDs []string) (map[string]contract.State, error) {
	out := map[string]contract.State{}
	if len(datasetIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, cc.violations, coalesce(cc.version, ''), cc.checked_at FROM datasets d
		LEFT JOIN contract_checks cc ON cc.dataset_id = d.id
		WHERE d.id = ANY($1::uuid[]) AND EXISTS (SELECT 1 FROM contract_versions cv WHERE cv.dataset_id = d.id)`, datasetIDs)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var violations []byte
		st := contract.State{Active: true, Valid: true, Violations: []contract.Violation{}}
		if err := rows.Scan(&id, &violations, &st.Version, &st.CheckedAt); err != nil {
			return nil, translate(err)
		}
		if violations != nil {
			if err := json.Unmarshal(violations, &st.Violations); err != nil {
				return nil, vigia.Internal(err)
			}
			st.Valid = len(st.Violations) == 0
		}
		out[id] = st
	}
	return out, translate(rows.Err())
}

// DatasetNames returns schema.table of the datasets among ids.
func (s *ContractStore) DatasetNames(ctx context.Context, datasetIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(datasetIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, schema_name || '.' || table_name FROM datasets WHERE id = ANY($1::uuid[])`, datasetIDs)
	if err != nil {
		return nil, translate(err)
	}
	return out, scanInto(rows, out)
}

// AddActivity appends to the audit trail.
func (s *ContractStore) AddActivity(ctx context.Context, a event.Activity) error {
	return s.db.AddActivity(ctx, a)
}
