package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/quality"
)

// IssueStore implements issue.Store.
type IssueStore struct{ db *DB }

// Issues returns the issue store.
func (db *DB) Issues() *IssueStore { return &IssueStore{db: db} }

var _ issue.Store = (*IssueStore)(nil)

const issueSelect = `SELECT i.id::text, i.workspace_id::text, i.dataset_id::text, d.schema_name || '.' || d.table_name, i.type, i.subtype,
	i.severity, i.status, i.title, i.metric, i.column_name, i.resolution_reason, i.sla_breached_at, i.assignee_team_id::text, t.name,
	i.rule_id::text, i.rule_current, i.details, i.detections, i.first_scan_id::text, i.last_scan_id::text, i.created_at, i.updated_at,
	i.acknowledged_at, i.resolved_at, i.title_key, i.title_params
	FROM issues i JOIN datasets d ON d.id = i.dataset_id LEFT JOIN teams t ON t.id = i.assignee_team_id`

func scanIssue(r pgx.Row) (issue.Issue, error) {
	var is issue.Issue
	var details []byte
	err := r.Scan(&is.ID, &is.WorkspaceID, &is.DatasetID, &is.DatasetName, &is.Type, &is.Subtype, &is.Severity, &is.Status, &is.Title,
		&is.Metric, &is.Column, &is.ResolutionReason, &is.SLABreachedAt, &is.AssigneeTeamID, &is.AssigneeTeamName, &is.RuleID,
		&is.RuleCurrent, &details, &is.Detections, &is.FirstScanID, &is.LastScanID, &is.CreatedAt, &is.UpdatedAt,
		&is.AcknowledgedAt, &is.ResolvedAt, &is.TitleKey, &is.TitleParams)
	if err != nil {
		return is, err
	}
	is.Details = map[string]any{}
	if len(details) > 0 {
		if err := json.Unmarshal(details, &is.Details); err != nil {
			return is, err
		}
	}
	return is, nil
}

// issueWhere builds the filter of lists and the board.
func issueWhere(v catalog.Viewer, f issue.StoreFilter) (string, []any) {
	lf := visibleFilter("i.workspace_id", v)
	add := lf.add
	if len(f.Severities) > 0 {
		add("i.severity = ANY($%d)", f.Severities)
	}
	if len(f.Statuses) > 0 {
		add("i.status = ANY($%d)", f.Statuses)
	}
	if len(f.Types) > 0 {
		add("i.type = ANY($%d)", f.Types)
	}
	if f.DatasetID != nil {
		add("i.dataset_id = $%d", *f.DatasetID)
	}
	switch {
	case f.NoTeam:
		lf.where = append(lf.where, "i.assignee_team_id IS NULL")
	case f.TeamIDs != nil:
		add("i.assignee_team_id = ANY($%d::uuid[])", f.TeamIDs)
	}
	if f.SLABreached {
		lf.where = append(lf.where, "i.sla_breached_at IS NOT NULL")
	}
	return lf.sql(), lf.args
}

// Issues lists issues of live datasets the viewer can see, newest first.
func (s *IssueStore) Issues(ctx context.Context, v catalog.Viewer, f issue.StoreFilter) (vigia.List[issue.Issue], error) {
	cond, args := issueWhere(v, f)
	var out vigia.List[issue.Issue]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM issues i JOIN datasets d ON d.id = i.dataset_id WHERE `+cond, args...).
		Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	args = append(args, f.Page.Limit, f.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, fmt.Sprintf(`%s WHERE %s ORDER BY i.created_at DESC, i.id DESC LIMIT $%d OFFSET $%d`,
		issueSelect, cond, len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (issue.Issue, error) { return scanIssue(r) })
	if out.Items == nil {
		out.Items = []issue.Issue{}
	}
	return out, translate(err)
}

// IssueByID returns an issue of a live dataset the viewer can see, with its history.
func (s *IssueStore) IssueByID(ctx context.Context, v catalog.Viewer, id string) (issue.Issue, error) {
	is, err := scanIssue(s.db.q(ctx).QueryRow(ctx, issueSelect+` WHERE i.id = $1 AND i.workspace_id = $2 AND d.dropped_at IS NULL AND `+
		VisibleSQL("d.id", 3, 4), id, v.WorkspaceID, v.TeamIDs, v.Admin))
	if err != nil {
		return is, translate(err)
	}
	hs, err := s.histories(ctx, []string{id})
	is.History = hs[id]
	if is.History == nil {
		is.History = []issue.HistoryEntry{}
	}
	return is, err
}

// Histories implements issue.Store: the histories of the issues among ids that v can see
// (live datasets), oldest change first, in one query.
func (s *IssueStore) Histories(ctx context.Context, v catalog.Viewer, ids []string) (map[string][]issue.HistoryEntry, error) {
	var visible []string
	rows, err := s.db.q(ctx).Query(ctx, `SELECT i.id::text FROM issues i JOIN datasets d ON d.id = i.dataset_id
		WHERE i.id = ANY($1::uuid[]) AND i.workspace_id = $2 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 3, 4),
		ids, v.WorkspaceID, v.TeamIDs, v.Admin)
	if err != nil {
		return nil, translate(err)
	}
	if visible, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, translate(err)
	}
	out, err := s.histories(ctx, visible)
	for _, id := range visible {
		if out[id] == nil {
			out[id] = []issue.HistoryEntry{}
		}
	}
	return out, err
}

// histories reads the histories of ids, whoever can see them.
func (s *IssueStore) histories(ctx context.Context, ids []string) (map[string][]issue.HistoryEntry, error) {
	out := make(map[string][]issue.HistoryEntry, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT issue_id::text, from_status, to_status,
		coalesce(event, CASE WHEN from_status IS NULL THEN 'opened' ELSE to_status END), origin, note, created_at
		FROM issue_history WHERE issue_id = ANY($1::uuid[]) ORDER BY issue_id, created_at, id`, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var h issue.HistoryEntry
		if err := rows.Scan(&id, &h.FromStatus, &h.ToStatus, &h.Event, &h.Origin, &h.Note, &h.At); err != nil {
			return nil, translate(err)
		}
		out[id] = append(out[id], h)
	}
	return out, translate(rows.Err())
}

// LockIssue returns an issue of the workspace locked for update.
func (s *IssueStore) LockIssue(ctx context.Context, workspaceID string, v *catalog.Viewer, id string) (issue.Issue, error) {
	if v == nil {
		is, err := scanIssue(s.db.q(ctx).QueryRow(ctx, issueSelect+` WHERE i.id = $1 AND i.workspace_id = $2 FOR UPDATE OF i`, id, workspaceID))
		return is, translate(err)
	}
	is, err := scanIssue(s.db.q(ctx).QueryRow(ctx, issueSelect+` WHERE i.id = $1 AND i.workspace_id = $2 AND d.dropped_at IS NULL AND `+
		VisibleSQL("d.id", 3, 4)+` FOR UPDATE OF i`, id, workspaceID, v.TeamIDs, v.Admin))
	return is, translate(err)
}

// OtherCurrentIssue reports whether a rule has a current issue other than issueID.
func (s *IssueStore) OtherCurrentIssue(ctx context.Context, ruleID, issueID string) (bool, error) {
	var ok bool
	err := s.db.q(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM issues WHERE rule_id = $1 AND rule_current AND id <> $2)`,
		ruleID, issueID).Scan(&ok)
	return ok, translate(err)
}

// ApplyChange writes a status change and its history row.
func (s *IssueStore) ApplyChange(ctx context.Context, c issue.Change) error {
	q := s.db.q(ctx)
	if _, err := q.Exec(ctx, `UPDATE issues SET status = $2, updated_at = $3,
		acknowledged_at = CASE WHEN $2 = 'acknowledged' THEN coalesce(acknowledged_at, $3) ELSE acknowledged_at END,
		resolved_at = CASE WHEN $2 IN ('resolved', 'ignored') THEN $3 WHEN $2 IN ('open', 'acknowledged') THEN NULL ELSE resolved_at END,
		resolution_reason = $4,
		rule_current = rule_current OR $5
		WHERE id = $1`, c.IssueID, c.To, c.At, c.Reason, c.MakeCurrent); err != nil {
		return translate(err)
	}
	if err := insertHistory(ctx, q, c); err != nil {
		return err
	}
	return queueTicketWrites(ctx, q, c.WorkspaceID, c.IssueID, c.Event, c.Origin, c.At)
}

func insertHistory(ctx context.Context, q querier, c issue.Change) error {
	_, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, note, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, vigia.NewID(), c.IssueID, c.WorkspaceID, c.From, c.To, c.Origin, c.Event, c.Note, c.At)
	return translate(err)
}

// SetAssignee sets an issue's team and writes the assigned history row.
func (s *IssueStore) SetAssignee(ctx context.Context, c issue.Change, teamID *string) error {
	q := s.db.q(ctx)
	if _, err := q.Exec(ctx, `UPDATE issues SET assignee_team_id = $2, updated_at = $3 WHERE id = $1`, c.IssueID, teamID, c.At); err != nil {
		return translate(err)
	}
	return insertHistory(ctx, q, c)
}

// Board groups the visible issues by status, severity and team.
func (s *IssueStore) Board(ctx context.Context, v catalog.Viewer, f issue.StoreFilter) ([]issue.BoardRow, error) {
	cond, args := issueWhere(v, f)
	rows, err := s.db.q(ctx).Query(ctx, `SELECT i.status, i.severity, i.assignee_team_id::text, t.name, count(*)
		FROM issues i JOIN datasets d ON d.id = i.dataset_id LEFT JOIN teams t ON t.id = i.assignee_team_id
		WHERE `+cond+` GROUP BY 1, 2, 3, 4`, args...)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (issue.BoardRow, error) {
		var b issue.BoardRow
		err := r.Scan(&b.Status, &b.Severity, &b.TeamID, &b.TeamName, &b.Count)
		return b, err
	})
	return out, translate(err)
}

// LockTuning returns a metric's tuning locked for update, creating it at the default.
func (s *IssueStore) LockTuning(ctx context.Context, datasetID, metric, column string, at time.Time) (issue.Tuning, error) {
	q := s.db.q(ctx)
	if _, err := q.Exec(ctx, `INSERT INTO anomaly_tuning (dataset_id, metric, column_name, threshold, updated_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, datasetID, metric, column, quality.DefaultThreshold, at); err != nil {
		return issue.Tuning{}, translate(err)
	}
	var t issue.Tuning
	err := q.QueryRow(ctx, `SELECT threshold, ignored, resolved, silenced FROM anomaly_tuning
		WHERE dataset_id = $1 AND metric = $2 AND column_name = $3 FOR UPDATE`, datasetID, metric, column).
		Scan(&t.Threshold, &t.Ignored, &t.Resolved, &t.Silenced)
	return t, translate(err)
}

// SaveTuning writes a metric's tuning.
func (s *IssueStore) SaveTuning(ctx context.Context, datasetID, metric, column string, t issue.Tuning, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE anomaly_tuning SET threshold = $4, ignored = $5, resolved = $6, silenced = $7, updated_at = $8
		WHERE dataset_id = $1 AND metric = $2 AND column_name = $3`, datasetID, metric, column, t.Threshold, t.Ignored, t.Resolved, t.Silenced, at)
	return translate(err)
}

// TuningOf returns a metric's tuning; ok is false (and the default returned) without one.
func (s *IssueStore) TuningOf(ctx context.Context, datasetID, metric, column string) (issue.Tuning, bool, error) {
	t := issue.Tuning{Threshold: quality.DefaultThreshold}
	err := s.db.q(ctx).QueryRow(ctx, `SELECT threshold, ignored, resolved, silenced FROM anomaly_tuning
		WHERE dataset_id = $1 AND metric = $2 AND column_name = $3`, datasetID, metric, column).
		Scan(&t.Threshold, &t.Ignored, &t.Resolved, &t.Silenced)
	if err == pgx.ErrNoRows {
		return t, false, nil
	}
	return t, err == nil, translate(err)
}

// CreateRetune records a pending retune unless the metric already has one.
func (s *IssueStore) CreateRetune(ctx context.Context, r issue.Retune) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO anomaly_retunes (id, workspace_id, dataset_id, metric, column_name, action, from_threshold,
		issue_id, status, requested_by, requested_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10)
		ON CONFLICT (dataset_id, metric, column_name) WHERE status = 'pending' DO NOTHING`,
		r.ID, r.WorkspaceID, r.DatasetID, r.Metric, r.Column, r.Action, r.FromThreshold, r.IssueID, r.RequestedBy, r.RequestedAt)
	return translate(err)
}

const retuneSelect = `SELECT id::text, workspace_id::text, dataset_id::text, metric, column_name, action, from_threshold, issue_id::text,
	status, requested_by, requested_at, decided_by, decided_at FROM anomaly_retunes`

func scanRetune(r pgx.Row) (issue.Retune, error) {
	var rt issue.Retune
	err := r.Scan(&rt.ID, &rt.WorkspaceID, &rt.DatasetID, &rt.Metric, &rt.Column, &rt.Action, &rt.FromThreshold, &rt.IssueID,
		&rt.Status, &rt.RequestedBy, &rt.RequestedAt, &rt.DecidedBy, &rt.DecidedAt)
	return rt, err
}

// LockRetune returns a retune of a dataset of the workspace, locked for update.
func (s *IssueStore) LockRetune(ctx context.Context, workspaceID, datasetID, id string) (issue.Retune, error) {
	r, err := scanRetune(s.db.q(ctx).QueryRow(ctx, retuneSelect+` WHERE id = $1 AND workspace_id = $2 AND dataset_id = $3 FOR UPDATE`,
		id, workspaceID, datasetID))
	return r, translate(err)
}

// DecideRetune writes a retune's decision.
func (s *IssueStore) DecideRetune(ctx context.Context, r issue.Retune) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE anomaly_retunes SET status = $2, decided_by = $3, decided_at = $4 WHERE id = $1`,
		r.ID, r.Status, r.DecidedBy, r.DecidedAt)
	return translate(err)
}

// PendingRetune returns a metric's pending retune, nil without one.
func (s *IssueStore) PendingRetune(ctx context.Context, datasetID, metric, column string) (*issue.Retune, error) {
	r, err := scanRetune(s.db.q(ctx).QueryRow(ctx, retuneSelect+` WHERE dataset_id = $1 AND metric = $2 AND column_name = $3
		AND status = 'pending'`, datasetID, metric, column))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	return &r, nil
}

// Targets returns a workspace's resolution targets (the defaults without a row).
func (s *IssueStore) Targets(ctx context.Context, workspaceID string) (issue.Targets, error) {
	var t issue.Targets
	err := s.db.q(ctx).QueryRow(ctx, `SELECT critical_hours, warning_hours FROM workspace_sla_targets WHERE workspace_id = $1`, workspaceID).
		Scan(&t.CriticalHours, &t.WarningHours)
	if err == pgx.ErrNoRows {
		c, w := issue.DefaultCriticalHours, issue.DefaultWarningHours
		return issue.Targets{CriticalHours: &c, WarningHours: &w, Default: true}, nil
	}
	return t, translate(err)
}

// SetTargets replaces a workspace's resolution targets.
func (s *IssueStore) SetTargets(ctx context.Context, workspaceID string, t issue.Targets, by string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO workspace_sla_targets (workspace_id, critical_hours, warning_hours, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id) DO UPDATE
		SET critical_hours = EXCLUDED.critical_hours, warning_hours = EXCLUDED.warning_hours,
		    updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`, workspaceID, t.CriticalHours, t.WarningHours, by, at)
	return translate(err)
}

// targetsCTE gives each workspace's targets in hours (defaults without a row).
var targetsCTE = `targets AS (
	SELECT w.id AS workspace_id,
	       CASE WHEN st.workspace_id IS NULL THEN ` + strconv.Itoa(issue.DefaultCriticalHours) + ` ELSE st.critical_hours END AS critical_h,
	       CASE WHEN st.workspace_id IS NULL THEN ` + strconv.Itoa(issue.DefaultWarningHours) + ` ELSE st.warning_hours END AS warning_h
	  FROM workspaces w LEFT JOIN workspace_sla_targets st ON st.workspace_id = w.id)`

// MarkBreaches marks the open and acknowledged issues past their target and writes
// their events, at most limit at a time; rows another worker holds are skipped.
func (s *IssueStore) MarkBreaches(ctx context.Context, now time.Time, limit int) ([]issue.Breach, error) {
	q := s.db.q(ctx)
	rows, err := q.Query(ctx, `WITH `+targetsCTE+`,
		cand AS (
			SELECT i.id, CASE i.severity WHEN 'critical' THEN t.critical_h WHEN 'warning' THEN t.warning_h END AS target_h
			  FROM issues i JOIN targets t ON t.workspace_id = i.workspace_id
			 WHERE i.sla_breached_at IS NULL AND i.status IN ('open', 'acknowledged') AND i.severity IN ('critical', 'warning')
		), due AS (
			-- The clock never runs faster than the wall: younger issues cannot be due yet.
			SELECT c.id, c.target_h, vigia_issue_sla_due(c.id, c.target_h, $1) AS due_at FROM cand c JOIN issues i ON i.id = c.id
			 WHERE c.target_h IS NOT NULL AND i.created_at <= $1 - make_interval(hours => c.target_h)
		), picked AS (
			SELECT i.id, due.target_h, due.due_at FROM issues i JOIN due ON due.id = i.id
			 WHERE due.due_at <= $1 ORDER BY due.due_at LIMIT $2 FOR UPDATE OF i SKIP LOCKED
		)
		UPDATE issues i SET sla_breached_at = picked.due_at, updated_at = $1
		  FROM picked WHERE i.id = picked.id AND i.sla_breached_at IS NULL
		RETURNING i.id::text, i.workspace_id::text, i.severity, picked.target_h, picked.due_at, i.dataset_id::text, i.title`, now, limit)
	if err != nil {
		return nil, translate(err)
	}
	type marked struct {
		b              issue.Breach
		dataset, title string
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (marked, error) {
		var m marked
		err := r.Scan(&m.b.IssueID, &m.b.WorkspaceID, &m.b.Severity, &m.b.TargetHours, &m.b.BreachedAt, &m.dataset, &m.title)
		return m, err
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]issue.Breach, 0, len(ms))
	for _, m := range ms {
		var name string
		if err := q.QueryRow(ctx, `SELECT schema_name || '.' || table_name FROM datasets WHERE id = $1`, m.dataset).Scan(&name); err != nil {
			return nil, translate(err)
		}
		payload, err := json.Marshal(issue.BreachPayload(m.b, m.dataset, name, m.title))
		if err != nil {
			return nil, vigia.Internal(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, idempotency_key, payload, created_at)
			VALUES ($1, $2, $3, 'issue', $4, $5, $6, $7) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
			vigia.NewID(), m.b.WorkspaceID, issue.EventSLABreached, m.b.IssueID, issue.BreachIdempotencyKey(m.b.IssueID), payload, now); err != nil {
			return nil, translate(err)
		}
		out = append(out, m.b)
	}
	var critical []string
	for _, b := range out {
		if b.Severity == "critical" {
			critical = append(critical, b.IssueID)
		}
	}
	if err := s.notifyConsumers(ctx, critical, now); err != nil {
		return nil, err
	}
	return out, nil
}

// notifyConsumers writes, for the critical issues just breached, one consumer notice per
// domain holding their datasets whose consumers have a channel.
func (s *IssueStore) notifyConsumers(ctx context.Context, issueIDs []string, now time.Time) error {
	if len(issueIDs) == 0 {
		return nil
	}
	q := s.db.q(ctx)
	rows, err := q.Query(ctx, `SELECT dm.id::text, dm.workspace_id::text, dm.name,
	       array_agg(DISTINCT i.id::text ORDER BY i.id::text),
	       (SELECT array_agg(DISTINCT dc.channel_id::text ORDER BY dc.channel_id::text) FROM domain_consumers dc
	         WHERE dc.domain_id = dm.id AND dc.channel_id IS NOT NULL)
	  FROM issues i
	  JOIN domain_datasets dd ON dd.dataset_id = i.dataset_id
	  JOIN domains dm ON dm.id = dd.domain_id
	 WHERE i.id = ANY($1::uuid[])
	 GROUP BY dm.id, dm.workspace_id, dm.name`, issueIDs)
	if err != nil {
		return translate(err)
	}
	type notice struct {
		domain, workspace, name string
		issues, channels        []string
	}
	ns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notice, error) {
		var n notice
		err := r.Scan(&n.domain, &n.workspace, &n.name, &n.issues, &n.channels)
		return n, err
	})
	if err != nil {
		return translate(err)
	}
	for _, n := range ns {
		if len(n.channels) == 0 {
			continue
		}
		payload, err := json.Marshal(issue.ConsumerSLAPayload(n.domain, n.name, n.issues, n.channels))
		if err != nil {
			return vigia.Internal(err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, idempotency_key, payload, created_at)
			VALUES ($1, $2, $3, 'domain', $4, $5, $6, $7) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
			vigia.NewID(), n.workspace, issue.EventConsumerSLABreached, n.domain, issue.ConsumerSLAIdempotencyKey(n.domain, n.issues),
			payload, now); err != nil {
			return translate(err)
		}
	}
	return nil
}
