package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/ticket"
)

const integrationSelect = `SELECT t.id::text, t.workspace_id::text, t.name, t.provider, t.base_url, t.project, t.webhook_secret_sealed,
	t.interval_min, t.comment, t.transition, t.created_at, t.updated_at, t.credentials_sealed, t.last_poll_at, t.next_poll_at,
	t.last_error, t.last_error_at, t.backoff_until, t.backoff_seconds,
	(SELECT count(DISTINCT l.ticket_key) FROM ticket_links l WHERE l.integration_id = t.id AND l.poll_error IS NOT NULL),
	(SELECT count(*) FROM ticket_writes w WHERE w.integration_id = t.id AND w.status = 'pending'),
	(SELECT count(*) FROM ticket_writes w WHERE w.integration_id = t.id AND w.status = 'failed')
	FROM ticket_integrations t`

func scanIntegration(r pgx.Row) (ticket.Integration, error) {
	var t ticket.Integration
	err := r.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.Provider, &t.BaseURL, &t.Project, &t.SealedSecret, &t.IntervalMin,
		&t.Comment, &t.Transition, &t.CreatedAt, &t.UpdatedAt, &t.SealedCredentials, &t.LastPollAt, &t.NextPollAt,
		&t.LastError, &t.LastErrorAt, &t.BackoffUntil, &t.BackoffSeconds, &t.TicketErrors, &t.PendingWrites, &t.FailedWrites)
	t.SecretSet = t.SealedSecret != nil
	t.CredentialsSet = t.SealedCredentials != nil
	return t, err
}

// CreateIntegration inserts a ticket integration; KindConflict when its name is taken.
func (s *WebhookStore) CreateIntegration(ctx context.Context, t ticket.Integration) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO ticket_integrations (id, workspace_id, name, provider, base_url, project,
		interval_min, comment, transition, created_at, updated_at, credentials_sealed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		t.ID, t.WorkspaceID, t.Name, t.Provider, t.BaseURL, t.Project, t.IntervalMin, t.Comment, t.Transition, t.CreatedAt, t.UpdatedAt,
		t.SealedCredentials)
	return translate(err)
}

// Integrations lists a workspace's ticket integrations by name.
func (s *WebhookStore) Integrations(ctx context.Context, workspaceID string) ([]ticket.Integration, error) {
	rows, err := s.db.q(ctx).Query(ctx, integrationSelect+` WHERE t.workspace_id = $1 ORDER BY t.name, t.id`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ticket.Integration, error) { return scanIntegration(r) })
	return out, translate(err)
}

// IntegrationByID returns one integration of the workspace.
func (s *WebhookStore) IntegrationByID(ctx context.Context, workspaceID, id string) (ticket.Integration, error) {
	t, err := scanIntegration(s.db.q(ctx).QueryRow(ctx, integrationSelect+` WHERE t.workspace_id = $1 AND t.id = $2`, workspaceID, id))
	return t, translate(err)
}

// IntegrationForInbound returns an integration by id alone.
func (s *WebhookStore) IntegrationForInbound(ctx context.Context, id string) (ticket.Integration, error) {
	t, err := scanIntegration(s.db.q(ctx).QueryRow(ctx, integrationSelect+` WHERE t.id = $1`, id))
	return t, translate(err)
}

// UpdateIntegrationSync saves the sync settings, and the sealed secret when it changed.
func (s *WebhookStore) UpdateIntegrationSync(ctx context.Context, t ticket.Integration, secretChanged bool) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE ticket_integrations SET interval_min = $3, comment = $4, transition = $5,
		updated_at = $6, webhook_secret_sealed = CASE WHEN $7 THEN $8 ELSE webhook_secret_sealed END
		WHERE workspace_id = $1 AND id = $2`, t.WorkspaceID, t.ID, t.IntervalMin, t.Comment, t.Transition, t.UpdatedAt,
		secretChanged, t.SealedSecret)
	return translate(err)
}

// IssueVisible reports whether an issue of the viewer's workspace is on a dataset the
// viewer can see.
func (s *WebhookStore) IssueVisible(ctx context.Context, v catalog.Viewer, issueID string) (bool, error) {
	var ok bool
	err := s.db.q(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM issues i WHERE i.workspace_id = $1 AND i.id = $4
		AND `+VisibleSQL("i.dataset_id", 2, 3)+`)`, v.WorkspaceID, nonNil(v.TeamIDs), v.Admin, issueID).Scan(&ok)
	return ok, translate(err)
}

// CreateLink adds an issue-ticket link, or returns the identical one that exists.
func (s *WebhookStore) CreateLink(ctx context.Context, l ticket.Link) (ticket.Link, error) {
	err := s.db.q(ctx).QueryRow(ctx, `INSERT INTO ticket_links (id, workspace_id, integration_id, issue_id, ticket_key, ticket_url,
		created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (integration_id, ticket_key, issue_id) DO NOTHING RETURNING id::text`,
		l.ID, l.WorkspaceID, l.IntegrationID, l.IssueID, l.Key, l.URL, l.CreatedBy, l.CreatedAt).Scan(&l.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.db.q(ctx).QueryRow(ctx, `SELECT id::text, ticket_url, created_by, created_at FROM ticket_links
			WHERE integration_id = $1 AND ticket_key = $2 AND issue_id = $3`, l.IntegrationID, l.Key, l.IssueID).
			Scan(&l.ID, &l.URL, &l.CreatedBy, &l.CreatedAt)
	}
	return l, translate(err)
}

// LinkedIssues returns the issues linked to a ticket key of an integration.
func (s *WebhookStore) LinkedIssues(ctx context.Context, integrationID, key string) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT issue_id::text FROM ticket_links WHERE integration_id = $1 AND ticket_key = $2
		ORDER BY created_at, issue_id`, integrationID, key)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}

// TicketIssueStore resolves issues from ticket state (ticket.IssueTransitioner) directly
// on the issues and issue_history tables.
type TicketIssueStore struct{ db *DB }

// TicketIssues returns the issue transitions inbound ticket events use.
func (db *DB) TicketIssues() *TicketIssueStore { return &TicketIssueStore{db: db} }

var _ ticket.IssueTransitioner = (*TicketIssueStore)(nil)

// ResolveFromTicket resolves an open or acknowledged issue, with a history row of the
// origin; an issue that came from a rule is noted as awaiting verification by the next
// scan that evaluates the rule. It reports false, changing nothing, for an issue that is
// already resolved or ignored, and KindNotFound for an issue not in the workspace.
func (s *TicketIssueStore) ResolveFromTicket(ctx context.Context, workspaceID, issueID, origin string) (bool, error) {
	changed := false
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.q(ctx)
		var from string
		var ruleID *string
		err := q.QueryRow(ctx, `SELECT status, rule_id::text FROM issues WHERE workspace_id = $1 AND id = $2 FOR UPDATE`,
			workspaceID, issueID).Scan(&from, &ruleID)
		if err != nil {
			return translate(err)
		}
		if from != "open" && from != "acknowledged" {
			return nil
		}
		now := time.Now().UTC()
		if _, err := q.Exec(ctx, `UPDATE issues SET status = 'resolved', resolved_at = $2, updated_at = $2 WHERE id = $1`,
			issueID, now); err != nil {
			return translate(err)
		}
		note := ""
		if ruleID != nil {
			note = "awaiting_verification"
		}
		if _, err := q.Exec(ctx, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, note, created_at)
			VALUES ($1, $2, $3, $4, 'resolved', $5, $6, $7)`, vigia.NewID(), issueID, workspaceID, from, origin, note, now); err != nil {
			return translate(err)
		}
		changed = true
		return queueTicketWrites(ctx, q, workspaceID, issueID, "resolved", origin, now)
	})
	return changed, err
}

// SetIntegrationCredentials saves (nil: removes) the sealed API credentials; the next
// poll is due at once and any back-off ends.
func (s *WebhookStore) SetIntegrationCredentials(ctx context.Context, workspaceID, id string, sealed []byte, at time.Time) error {
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE ticket_integrations SET credentials_sealed = $3, updated_at = $4, next_poll_at = NULL,
		backoff_until = NULL, backoff_seconds = 0, last_error = NULL, last_error_at = NULL
		WHERE workspace_id = $1 AND id = $2`, workspaceID, id, sealed, at)
	if err == nil && tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return translate(err)
}

// DueTicketSyncs returns the integrations whose sync job should run at now, the most
// overdue first.
func (s *WebhookStore) DueTicketSyncs(ctx context.Context, now time.Time, limit int) ([]ticket.DueSync, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT t.id::text, t.workspace_id::text FROM ticket_integrations t
		JOIN workspaces ws ON ws.id = t.workspace_id
		WHERE t.credentials_sealed IS NOT NULL AND NOT ws.suspended AND (t.backoff_until IS NULL OR t.backoff_until <= $1)
		  AND (t.next_poll_at IS NULL OR t.next_poll_at <= $1
		       OR EXISTS (SELECT 1 FROM ticket_writes w WHERE w.integration_id = t.id AND w.status = 'pending'))
		ORDER BY t.next_poll_at NULLS FIRST, t.id LIMIT $2`, now, limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ticket.DueSync, error) {
		var d ticket.DueSync
		return d, r.Scan(&d.ID, &d.WorkspaceID)
	})
	return out, translate(err)
}

// SaveSyncState stores a sync run's outcome.
func (s *WebhookStore) SaveSyncState(ctx context.Context, id string, st ticket.SyncState) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE ticket_integrations SET last_poll_at = $2, next_poll_at = $3,
		last_error = $4, last_error_at = coalesce($5, last_error_at), backoff_until = $6, backoff_seconds = $7 WHERE id = $1`,
		id, st.LastPollAt, st.NextPollAt, st.LastError, st.LastErrorAt, st.BackoffUntil, st.BackoffSeconds)
	return translate(err)
}

// PollTargets returns the integration's ticket keys linked to open or acknowledged
// issues, least recently polled first.
func (s *WebhookStore) PollTargets(ctx context.Context, integrationID string, limit int) ([]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT l.ticket_key FROM ticket_links l JOIN issues i ON i.id = l.issue_id
		WHERE l.integration_id = $1 AND i.status IN ('open', 'acknowledged')
		GROUP BY l.ticket_key ORDER BY max(l.polled_at) NULLS FIRST, min(l.created_at), l.ticket_key LIMIT $2`, integrationID, limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}

// MarkPolled sets when a ticket was read and its own error.
func (s *WebhookStore) MarkPolled(ctx context.Context, integrationID, key string, errCode *string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE ticket_links SET polled_at = $3, poll_error = $4
		WHERE integration_id = $1 AND ticket_key = $2`, integrationID, key, at, errCode)
	return translate(err)
}

// PendingWrites returns the integration's pending write-backs in the order of the changes.
func (s *WebhookStore) PendingWrites(ctx context.Context, integrationID string, limit int) ([]ticket.Write, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, workspace_id::text, integration_id::text, issue_id::text, ticket_key,
		change, origin, comment_done, attempts FROM ticket_writes WHERE integration_id = $1 AND status = 'pending'
		ORDER BY seq LIMIT $2`, integrationID, limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ticket.Write, error) {
		var w ticket.Write
		return w, r.Scan(&w.ID, &w.WorkspaceID, &w.IntegrationID, &w.IssueID, &w.Key, &w.Change, &w.Origin, &w.CommentDone, &w.Attempts)
	})
	return out, translate(err)
}

// FinishWrite ends a write-back.
func (s *WebhookStore) FinishWrite(ctx context.Context, id, status string, errCode *string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE ticket_writes SET status = $2, last_error = coalesce($3, last_error), finished_at = $4
		WHERE id = $1`, id, status, errCode, at)
	return translate(err)
}

// RecordWriteAttempt counts a failed attempt of a write-back.
func (s *WebhookStore) RecordWriteAttempt(ctx context.Context, id, status, errCode string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE ticket_writes SET attempts = attempts + 1, status = $2, last_error = $3,
		finished_at = CASE WHEN $2 = 'pending' THEN NULL ELSE $4::timestamptz END WHERE id = $1`, id, status, errCode, at)
	return translate(err)
}

// MarkWriteCommented records that a write-back's comment was posted.
func (s *WebhookStore) MarkWriteCommented(ctx context.Context, id string) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE ticket_writes SET comment_done = true WHERE id = $1`, id)
	return translate(err)
}

// queueTicketWrites writes, in the transaction of an issue's change (history event
// event, origin origin), the write-backs its linked tickets receive (ticket.WritesTo):
// every path that changes an issue's status calls it next to its history row.
func queueTicketWrites(ctx context.Context, q querier, workspaceID, issueID, event, origin string, at time.Time) error {
	change, ok := ticket.WriteBackChange(event)
	if !ok {
		return nil
	}
	rows, err := q.Query(ctx, `SELECT l.integration_id::text, l.ticket_key, t.provider, t.project, t.comment, t.transition,
		t.credentials_sealed IS NOT NULL FROM ticket_links l JOIN ticket_integrations t ON t.id = l.integration_id
		WHERE l.issue_id = $1 ORDER BY l.created_at, l.id`, issueID)
	if err != nil {
		return translate(err)
	}
	type target struct {
		t   ticket.Integration
		key string
	}
	targets, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (target, error) {
		var tg target
		return tg, r.Scan(&tg.t.ID, &tg.key, &tg.t.Provider, &tg.t.Project, &tg.t.Comment, &tg.t.Transition, &tg.t.CredentialsSet)
	})
	if err != nil {
		return translate(err)
	}
	for _, tg := range targets {
		if !ticket.WritesTo(tg.t, tg.key, origin) {
			continue
		}
		if _, err := q.Exec(ctx, `INSERT INTO ticket_writes (id, workspace_id, integration_id, issue_id, ticket_key, change, origin, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, vigia.NewID(), workspaceID, tg.t.ID, issueID, tg.key, change, origin, at); err != nil {
			return translate(err)
		}
	}
	return nil
}
