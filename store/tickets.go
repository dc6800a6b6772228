package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/webhook"
)

const integrationSelect = `SELECT id::text, workspace_id::text, name, provider, base_url, project, webhook_secret_sealed,
	interval_min, comment, transition, created_at, updated_at FROM ticket_integrations`

func scanIntegration(r pgx.Row) (webhook.TicketIntegration, error) {
	var t webhook.TicketIntegration
	err := r.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.Provider, &t.BaseURL, &t.Project, &t.SealedSecret, &t.IntervalMin,
		&t.Comment, &t.Transition, &t.CreatedAt, &t.UpdatedAt)
	t.SecretSet = t.SealedSecret != nil
	return t, err
}

// CreateIntegration inserts a ticket integration; KindConflict when its name is taken.
func (s *WebhookStore) CreateIntegration(ctx context.Context, t webhook.TicketIntegration) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO ticket_integrations (id, workspace_id, name, provider, base_url, project,
		interval_min, comment, transition, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		t.ID, t.WorkspaceID, t.Name, t.Provider, t.BaseURL, t.Project, t.IntervalMin, t.Comment, t.Transition, t.CreatedAt, t.UpdatedAt)
	return translate(err)
}

// Integrations lists a workspace's ticket integrations by name.
func (s *WebhookStore) Integrations(ctx context.Context, workspaceID string) ([]webhook.TicketIntegration, error) {
	rows, err := s.db.q(ctx).Query(ctx, integrationSelect+` WHERE workspace_id = $1 ORDER BY name, id`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (webhook.TicketIntegration, error) { return scanIntegration(r) })
	return out, translate(err)
}

// IntegrationByID returns one integration of the workspace.
func (s *WebhookStore) IntegrationByID(ctx context.Context, workspaceID, id string) (webhook.TicketIntegration, error) {
	t, err := scanIntegration(s.db.q(ctx).QueryRow(ctx, integrationSelect+` WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return t, translate(err)
}

// IntegrationForInbound returns an integration by id alone.
func (s *WebhookStore) IntegrationForInbound(ctx context.Context, id string) (webhook.TicketIntegration, error) {
	t, err := scanIntegration(s.db.q(ctx).QueryRow(ctx, integrationSelect+` WHERE id = $1`, id))
	return t, translate(err)
}

// UpdateIntegrationSync saves the sync settings, and the sealed secret when it changed.
func (s *WebhookStore) UpdateIntegrationSync(ctx context.Context, t webhook.TicketIntegration, secretChanged bool) error {
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
func (s *WebhookStore) CreateLink(ctx context.Context, l webhook.TicketLink) (webhook.TicketLink, error) {
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

// TicketIssueStore resolves issues from ticket state (webhook.IssueTransitioner) directly
// on the issues and issue_history tables.
type TicketIssueStore struct{ db *DB }

// TicketIssues returns the issue transitions inbound ticket events use.
func (db *DB) TicketIssues() *TicketIssueStore { return &TicketIssueStore{db: db} }

var _ webhook.IssueTransitioner = (*TicketIssueStore)(nil)

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
		return nil
	})
	return changed, err
}
