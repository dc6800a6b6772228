package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/internal/groupcommit"
	"github.com/vigia-data/vigia/internal/pgtx"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/oncall"
)

// WebhookStore implements notify.Store.
type WebhookStore struct{ db *DB }

// Webhooks returns the notification store.
func (db *DB) Webhooks() *WebhookStore { return &WebhookStore{db: db} }

var _ notify.Store = (*WebhookStore)(nil)

// AddActivity appends to the workspace activity log.
func (s *WebhookStore) AddActivity(ctx context.Context, a event.Activity) error {
	return s.db.AddActivity(ctx, a)
}

// WorkspaceInfo returns a workspace's locale, time zone and suspension.
func (s *WebhookStore) WorkspaceInfo(ctx context.Context, workspaceID string) (notify.WorkspaceInfo, error) {
	var w notify.WorkspaceInfo
	err := s.db.q(ctx).QueryRow(ctx, `SELECT id::text, locale, timezone, suspended FROM workspaces WHERE id = $1`, workspaceID).
		Scan(&w.ID, &w.Locale, &w.Timezone, &w.Suspended)
	return w, translate(err)
}

const channelSelect = `SELECT c.id::text, c.workspace_id::text, c.team_id::text, c.name, c.kind, c.url_sealed, c.secret_sealed,
	c.locale, c.min_severity, c.digest, c.event_kinds, c.scope_domain_ids::text[], c.scope_connection_ids::text[],
	c.scope_dataset_ids::text[], c.scope_issue_types, c.include_auto_monitors, c.last_digest_at, c.created_by, c.created_at,
	c.updated_at, ld.status, ld.finished_at, ld.last_error
	FROM notification_channels c
	LEFT JOIN LATERAL (SELECT status, finished_at, last_error FROM webhook_deliveries wd
		WHERE wd.channel_id = c.id AND wd.finished_at IS NOT NULL ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1) ld ON true`

func scanChannel(r pgx.Row, extra ...any) (notify.Channel, error) {
	var c notify.Channel
	var lastStatus, lastError *string
	var lastAt *time.Time
	dest := []any{&c.ID, &c.WorkspaceID, &c.TeamID, &c.Name, &c.Kind, &c.SealedURL, &c.SealedSecret, &c.Locale,
		&c.MinSeverity, &c.Digest, &c.EventKinds, &c.Scope.DomainIDs, &c.Scope.ConnectionIDs, &c.Scope.DatasetIDs,
		&c.Scope.IssueTypes, &c.Scope.IncludeAutoMonitors, &c.LastDigestAt, &c.CreatedBy, &c.CreatedAt, &c.UpdatedAt,
		&lastStatus, &lastAt, &lastError}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return c, err
	}
	c.Signed = c.SealedSecret != nil
	if lastStatus != nil && lastAt != nil {
		c.Last = &notify.LastDelivery{Status: *lastStatus, At: *lastAt, Error: lastError}
	}
	return c, nil
}

// CreateChannel inserts a channel with its sealed URL and secret.
func (s *WebhookStore) CreateChannel(ctx context.Context, c notify.Channel) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO notification_channels (id, workspace_id, team_id, name, kind, url_sealed,
		secret_sealed, locale, min_severity, digest, event_kinds, scope_domain_ids, scope_connection_ids, scope_dataset_ids,
		scope_issue_types, include_auto_monitors, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::uuid[], $13::uuid[], $14::uuid[], $15, $16, $17, $18, $19)`,
		c.ID, c.WorkspaceID, c.TeamID, c.Name, c.Kind, c.SealedURL, c.SealedSecret, c.Locale, c.MinSeverity, c.Digest,
		nonNil(c.EventKinds), nonNil(c.Scope.DomainIDs), nonNil(c.Scope.ConnectionIDs), nonNil(c.Scope.DatasetIDs),
		nonNil(c.Scope.IssueTypes), c.Scope.IncludeAutoMonitors, c.CreatedBy, c.CreatedAt, c.UpdatedAt)
	return translate(err)
}

// Channels lists a workspace's channels, oldest first, with their last delivery.
func (s *WebhookStore) Channels(ctx context.Context, workspaceID string) ([]notify.Channel, error) {
	rows, err := s.db.q(ctx).Query(ctx, channelSelect+` WHERE c.workspace_id = $1 ORDER BY c.created_at, c.id`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.Channel, error) { return scanChannel(r) })
	return cs, translate(err)
}

// ChannelByID returns one channel of the workspace.
func (s *WebhookStore) ChannelByID(ctx context.Context, workspaceID, id string) (notify.Channel, error) {
	c, err := scanChannel(s.db.q(ctx).QueryRow(ctx, channelSelect+` WHERE c.workspace_id = $1 AND c.id = $2`, workspaceID, id))
	return c, translate(err)
}

// UpdateChannel saves every field of a channel, its sealed URL included.
func (s *WebhookStore) UpdateChannel(ctx context.Context, c notify.Channel) error {
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE notification_channels SET team_id = $3, name = $4, url_sealed = $5, locale = $6,
		min_severity = $7, digest = $8, event_kinds = $9, scope_domain_ids = $10::uuid[], scope_connection_ids = $11::uuid[],
		scope_dataset_ids = $12::uuid[], scope_issue_types = $13, include_auto_monitors = $14, updated_at = $15
		WHERE workspace_id = $1 AND id = $2`,
		c.WorkspaceID, c.ID, c.TeamID, c.Name, c.SealedURL, c.Locale, c.MinSeverity, c.Digest, nonNil(c.EventKinds),
		nonNil(c.Scope.DomainIDs), nonNil(c.Scope.ConnectionIDs), nonNil(c.Scope.DatasetIDs), nonNil(c.Scope.IssueTypes),
		c.Scope.IncludeAutoMonitors, c.UpdatedAt)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// DeleteChannel removes a channel and, by cascade, its deliveries.
func (s *WebhookStore) DeleteChannel(ctx context.Context, workspaceID, id string) error {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM notification_channels WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// SetChannelSecret replaces a channel's sealed signing secret.
func (s *WebhookStore) SetChannelSecret(ctx context.Context, workspaceID, id string, sealed []byte, at time.Time) error {
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE notification_channels SET secret_sealed = $3, updated_at = $4
		WHERE workspace_id = $1 AND id = $2`, workspaceID, id, sealed, at)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// HasRestrictedDomains reports whether the workspace has a restricted-access domain.
func (s *WebhookStore) HasRestrictedDomains(ctx context.Context, workspaceID string) (bool, error) {
	var ok bool
	err := s.db.q(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM domains WHERE workspace_id = $1 AND restricted)`, workspaceID).Scan(&ok)
	return ok, translate(err)
}

// TeamReadsWithin reports whether every restricted domain the team has a grant on is
// granted to one of the viewer's teams too: the team reads nothing the viewer cannot.
func (s *WebhookStore) TeamReadsWithin(ctx context.Context, workspaceID, teamID string, viewerTeams []string) (bool, error) {
	var ok bool
	err := s.db.q(ctx).QueryRow(ctx, `SELECT NOT EXISTS (
		SELECT 1 FROM domain_grants g JOIN domains dm ON dm.id = g.domain_id
		 WHERE g.team_id = $2 AND dm.workspace_id = $1 AND dm.restricted
		   AND NOT EXISTS (SELECT 1 FROM domain_grants g2 WHERE g2.domain_id = dm.id AND g2.team_id = ANY($3::uuid[])))`,
		workspaceID, teamID, nonNil(viewerTeams)).Scan(&ok)
	return ok, translate(err)
}

// ScopeVisible reports whether every scoped domain, connection and dataset is in the
// viewer's workspace and visible to the viewer.
func (s *WebhookStore) ScopeVisible(ctx context.Context, v catalog.Viewer, sc notify.Scope) (bool, error) {
	if len(sc.DomainIDs)+len(sc.ConnectionIDs)+len(sc.DatasetIDs) == 0 {
		return true, nil
	}
	var ok bool
	err := s.db.q(ctx).QueryRow(ctx, `SELECT
		(SELECT count(*) FROM domains dm WHERE dm.workspace_id = $1 AND dm.id = ANY($4::uuid[])
		   AND ($3 OR NOT dm.restricted OR EXISTS (SELECT 1 FROM domain_grants g WHERE g.domain_id = dm.id AND g.team_id = ANY($2::uuid[]))))
		   = cardinality($4::uuid[])
		AND (SELECT count(*) FROM connections c WHERE c.workspace_id = $1 AND c.id = ANY($5::uuid[])) = cardinality($5::uuid[])
		AND (SELECT count(*) FROM datasets d WHERE d.workspace_id = $1 AND d.id = ANY($6::uuid[]) AND `+VisibleSQL("d.id", 2, 3)+`)
		   = cardinality($6::uuid[])`,
		v.WorkspaceID, nonNil(v.TeamIDs), v.Admin, nonNil(sc.DomainIDs), nonNil(sc.ConnectionIDs), nonNil(sc.DatasetIDs)).Scan(&ok)
	return ok, translate(err)
}

// ClaimEvents locks up to limit undispatched outbox rows, oldest first. A
// scan.succeeded event is no notification (the after-scan steps consume it).
func (s *WebhookStore) ClaimEvents(ctx context.Context, limit int) ([]notify.OutboxEvent, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, workspace_id::text, type, subject_type, subject_id, scan_id::text,
		idempotency_key, payload, created_at FROM events WHERE dispatched_at IS NULL AND type <> '`+event.TypeScanSucceeded+`'
		ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`, limit)
	if err != nil {
		return nil, translate(err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.OutboxEvent, error) {
		var e notify.OutboxEvent
		err := r.Scan(&e.ID, &e.WorkspaceID, &e.Type, &e.SubjectType, &e.SubjectID, &e.ScanID, &e.IdempotencyKey, &e.Payload, &e.CreatedAt)
		return e, err
	})
	return evs, translate(err)
}

// MarkEventDispatched marks an outbox row handled.
func (s *WebhookStore) MarkEventDispatched(ctx context.Context, id string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE events SET dispatched_at = $2 WHERE id = $1`, id, at)
	return translate(err)
}

// ClaimFinishedScans locks finished scans whose alerts were not dispatched yet; a
// succeeded scan waits until its after-scan steps are done (its alerts name the
// incidents they group).
func (s *WebhookStore) ClaimFinishedScans(ctx context.Context, since time.Time, limit int) ([]notify.FinishedScan, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT s.id::text, s.workspace_id::text, s.finished_at FROM scans s
		WHERE s.finished_at IS NOT NULL AND s.finished_at >= $1 AND s.status IN ('succeeded', 'failed')
		  AND NOT EXISTS (SELECT 1 FROM webhook_scan_alerts a WHERE a.scan_id = s.id)
		  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.scan_id = s.id AND e.type = '`+event.TypeScanSucceeded+`' AND e.dispatched_at IS NULL)
		ORDER BY s.finished_at, s.id LIMIT $2 FOR UPDATE OF s SKIP LOCKED`, since, limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.FinishedScan, error) {
		var f notify.FinishedScan
		err := r.Scan(&f.ID, &f.WorkspaceID, &f.FinishedAt)
		return f, err
	})
	return out, translate(err)
}

// MarkScanAlerts records that a scan's alerts were dispatched.
func (s *WebhookStore) MarkScanAlerts(ctx context.Context, sc notify.FinishedScan, alerts int, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO webhook_scan_alerts (scan_id, workspace_id, alerts, dispatched_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (scan_id) DO NOTHING`, sc.ID, sc.WorkspaceID, alerts, at)
	return translate(err)
}

const alertIssueSelect = `SELECT i.id::text, i.dataset_id::text, i.type, i.subtype, i.severity, i.status, i.title, i.title_key,
	i.title_params, i.rule_id::text, i.first_scan_id::text, i.created_at FROM issues i`

func scanAlertIssue(r pgx.Row) (notify.AlertIssue, error) {
	var is notify.AlertIssue
	err := r.Scan(&is.ID, &is.DatasetID, &is.Type, &is.Subtype, &is.Severity, &is.Status, &is.Title, &is.TitleKey,
		&is.Params, &is.RuleID, &is.ScanID, &is.CreatedAt)
	return is, err
}

func collectIssues(rows pgx.Rows, err error) ([]notify.AlertIssue, error) {
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.AlertIssue, error) { return scanAlertIssue(r) })
	return out, translate(err)
}

// ScanAlertIssues returns the warning and critical issues a scan opened.
func (s *WebhookStore) ScanAlertIssues(ctx context.Context, scanID string) ([]notify.AlertIssue, error) {
	return collectIssues(s.db.q(ctx).Query(ctx, alertIssueSelect+` WHERE i.first_scan_id = $1
		AND i.severity IN ('warning', 'critical') ORDER BY i.created_at, i.id`, scanID))
}

// AlertIssuesSince returns the workspace's warning and critical issues opened since.
func (s *WebhookStore) AlertIssuesSince(ctx context.Context, workspaceID string, since time.Time) ([]notify.AlertIssue, error) {
	return collectIssues(s.db.q(ctx).Query(ctx, alertIssueSelect+` WHERE i.workspace_id = $1 AND i.created_at >= $2
		AND i.severity IN ('warning', 'critical') ORDER BY i.created_at, i.id`, workspaceID, since))
}

// IssueByID returns one issue of the workspace.
func (s *WebhookStore) IssueByID(ctx context.Context, workspaceID, id string) (notify.AlertIssue, error) {
	is, err := scanAlertIssue(s.db.q(ctx).QueryRow(ctx, alertIssueSelect+` WHERE i.workspace_id = $1 AND i.id = $2`, workspaceID, id))
	return is, translate(err)
}

// DatasetFacts returns the workspace's datasets among ids with their connection and
// domains (the restricted ones apart).
func (s *WebhookStore) DatasetFacts(ctx context.Context, workspaceID string, ids []string) (map[string]notify.DatasetFacts, error) {
	out := map[string]notify.DatasetFacts{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT d.id::text, d.schema_name, d.table_name, d.connection_id::text,
		coalesce(array_agg(dd.domain_id::text) FILTER (WHERE dd.domain_id IS NOT NULL), '{}'),
		coalesce(array_agg(dd.domain_id::text) FILTER (WHERE dm.restricted), '{}')
		FROM datasets d LEFT JOIN domain_datasets dd ON dd.dataset_id = d.id LEFT JOIN domains dm ON dm.id = dd.domain_id
		WHERE d.workspace_id = $1 AND d.id = ANY($2::uuid[]) GROUP BY d.id`, workspaceID, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var f notify.DatasetFacts
		var schema, table string
		if err := rows.Scan(&f.ID, &schema, &table, &f.ConnectionID, &f.DomainIDs, &f.RestrictedDomainIDs); err != nil {
			return nil, translate(err)
		}
		f.Name = table
		if schema != "" {
			f.Name = schema + "." + table
		}
		out[f.ID] = f
	}
	return out, translate(rows.Err())
}

// DomainFacts returns a domain of the workspace.
func (s *WebhookStore) DomainFacts(ctx context.Context, workspaceID, id string) (notify.DomainFacts, error) {
	var d notify.DomainFacts
	err := s.db.q(ctx).QueryRow(ctx, `SELECT id::text, name, restricted FROM domains WHERE workspace_id = $1 AND id = $2`,
		workspaceID, id).Scan(&d.ID, &d.Name, &d.Restricted)
	return d, translate(err)
}

// TeamGrants maps each of the workspace's teams among teamIDs to its granted domains.
func (s *WebhookStore) TeamGrants(ctx context.Context, workspaceID string, teamIDs []string) (map[string][]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT g.team_id::text, g.domain_id::text FROM domain_grants g
		JOIN teams t ON t.id = g.team_id WHERE t.workspace_id = $1 AND g.team_id = ANY($2::uuid[])`, workspaceID, nonNil(teamIDs))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var team, dom string
		if err := rows.Scan(&team, &dom); err != nil {
			return nil, translate(err)
		}
		out[team] = append(out[team], dom)
	}
	return out, translate(rows.Err())
}

// InsertNotification adds a notification unless its source key exists in the workspace.
func (s *WebhookStore) InsertNotification(ctx context.Context, n notify.Notification) (bool, error) {
	params, err := json.Marshal(nonNilMap(n.Params))
	if err != nil {
		return false, vigia.Internal(err)
	}
	payload, err := json.Marshal(nonNilMap(n.Payload))
	if err != nil {
		return false, vigia.Internal(err)
	}
	tag, err := s.db.q(ctx).Exec(ctx, `INSERT INTO notifications (id, workspace_id, event, code, params, payload, source_key,
		dataset_ids, domain_id, issue_id, scan_id, severity, held, mute_ids, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid[], $9, $10, $11, $12, $13, $14::uuid[], $15)
		ON CONFLICT (workspace_id, source_key) DO NOTHING`,
		n.ID, n.WorkspaceID, n.Event, n.Code, params, payload, n.SourceKey, nonNil(n.DatasetIDs), n.DomainID, n.IssueID,
		n.ScanID, n.Severity, n.Held, nonNil(n.MuteIDs), n.CreatedAt)
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() == 1, nil
}

// AddNotificationDeliveries counts deliveries made for a notification.
func (s *WebhookStore) AddNotificationDeliveries(ctx context.Context, id string, n int) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE notifications SET deliveries = deliveries + $2 WHERE id = $1`, id, n)
	return translate(err)
}

// RecentConsumerNotices returns the datasets a consumer was noticed about since, and the
// workspace's consumer notices since.
func (s *WebhookStore) RecentConsumerNotices(ctx context.Context, workspaceID, consumerID string, since time.Time) ([]string, int, error) {
	var datasets []string
	var sent int
	err := s.db.q(ctx).QueryRow(ctx, `SELECT
		coalesce((SELECT array_agg(DISTINCT x::text) FROM notifications n, unnest(n.dataset_ids) x
		   WHERE n.workspace_id = $1 AND n.event = 'service.consumer.untrusted_read' AND n.created_at >= $3
		     AND n.payload->>'consumer_id' = $2), '{}'),
		(SELECT count(*) FROM notifications n WHERE n.workspace_id = $1 AND n.event = 'service.consumer.untrusted_read'
		   AND n.created_at >= $3)`, workspaceID, consumerID, since).Scan(&datasets, &sent)
	return datasets, sent, translate(err)
}

// Notifications lists the notifications the viewer can see: every dataset they name
// visible, and their domain readable.
func (s *WebhookStore) Notifications(ctx context.Context, v catalog.Viewer, f notify.NotificationFilter) (vigia.List[notify.Notification], error) {
	where := []string{"n.workspace_id = $1",
		"NOT EXISTS (SELECT 1 FROM unnest(n.dataset_ids) x WHERE NOT " + VisibleSQL("x", 2, 3) + ")",
		`(n.domain_id IS NULL OR $3 OR NOT EXISTS (SELECT 1 FROM domains dm WHERE dm.id = n.domain_id AND dm.restricted
		   AND NOT EXISTS (SELECT 1 FROM domain_grants g WHERE g.domain_id = dm.id AND g.team_id = ANY($2::uuid[]))))`}
	args := []any{v.WorkspaceID, nonNil(v.TeamIDs), v.Admin}
	if f.Held != nil {
		args = append(args, *f.Held)
		where = append(where, fmt.Sprintf("n.held = $%d", len(args)))
	}
	if f.Event != nil {
		args = append(args, *f.Event)
		where = append(where, fmt.Sprintf("n.event = $%d", len(args)))
	}
	cond := strings.Join(where, " AND ")
	var out vigia.List[notify.Notification]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM notifications n WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	args = append(args, f.Page.Limit, f.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, fmt.Sprintf(`SELECT n.id::text, n.workspace_id::text, n.event, n.code, n.params, n.payload,
		n.source_key, n.dataset_ids::text[], n.domain_id::text, n.issue_id::text, n.scan_id::text, n.severity, n.held,
		n.mute_ids::text[], n.deliveries, n.created_at FROM notifications n WHERE %s
		ORDER BY n.created_at DESC, n.id DESC LIMIT $%d OFFSET $%d`, cond, len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.Notification, error) {
		var n notify.Notification
		err := r.Scan(&n.ID, &n.WorkspaceID, &n.Event, &n.Code, &n.Params, &n.Payload, &n.SourceKey, &n.DatasetIDs, &n.DomainID,
			&n.IssueID, &n.ScanID, &n.Severity, &n.Held, &n.MuteIDs, &n.Deliveries, &n.CreatedAt)
		return n, err
	})
	return out, translate(err)
}

// InsertDelivery adds a delivery unless its channel has one with its source key.
func (s *WebhookStore) InsertDelivery(ctx context.Context, d notify.Delivery) (bool, error) {
	tag, err := s.db.q(ctx).Exec(ctx, `INSERT INTO webhook_deliveries (id, workspace_id, channel_id, notification_id, event,
		source_key, idempotency_key, body, test, status, next_attempt_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (channel_id, source_key) DO NOTHING`,
		d.ID, d.WorkspaceID, d.ChannelID, d.NotificationID, d.Event, d.SourceKey, d.IdempotencyKey, d.Body, d.Test, d.Status,
		d.NextAttemptAt, d.CreatedAt)
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() == 1, nil
}

const deliveryColumns = `wd.id::text, wd.workspace_id::text, wd.channel_id::text, wd.notification_id::text, wd.event,
	wd.source_key, wd.idempotency_key, wd.body, wd.test, wd.status, wd.attempts, wd.attempt_log, wd.next_attempt_at,
	wd.last_status_code, wd.last_error, wd.created_at, wd.finished_at`

func deliveryDest(d *notify.Delivery) []any {
	return []any{&d.ID, &d.WorkspaceID, &d.ChannelID, &d.NotificationID, &d.Event, &d.SourceKey, &d.IdempotencyKey, &d.Body,
		&d.Test, &d.Status, &d.Attempts, &d.AttemptLog, &d.NextAttemptAt, &d.LastStatusCode, &d.LastError, &d.CreatedAt, &d.FinishedAt}
}

// webhookBatches group the delivery reads and attempt records of concurrent senders
// (the delivery workers of a process), so that a busy process pays one round trip for
// many deliveries instead of one each; a lone sender waits for nothing.
type webhookBatches struct {
	loads   *groupcommit.Batcher[string, sendLoad]
	records *groupcommit.Batcher[attemptWrite, struct{}]
}

// webhookBatch bounds the deliveries of one batched statement.
const webhookBatch = 256

type sendLoad struct {
	item  notify.SendItem
	found bool
}

type attemptWrite struct {
	id       string
	n        int
	entry    string
	status   string
	next     *time.Time
	finished *time.Time
	code     *int32
	errText  string
}

func newWebhookBatches(db *DB) webhookBatches {
	return webhookBatches{
		loads:   groupcommit.New(webhookBatch, db.loadDeliveries),
		records: groupcommit.New(webhookBatch, db.recordAttempts),
	}
}

const deliveryForSend = `SELECT ` + deliveryColumns + `, c.url_sealed, c.secret_sealed
	FROM webhook_deliveries wd JOIN notification_channels c ON c.id = wd.channel_id`

// DeliveryForSend loads a delivery with its channel's sealed URL and secret.
func (s *WebhookStore) DeliveryForSend(ctx context.Context, id string) (notify.SendItem, error) {
	if _, inTx := pgtx.From(ctx); inTx || !vigia.ValidID(id) {
		var it notify.SendItem
		err := s.db.q(ctx).QueryRow(ctx, deliveryForSend+` WHERE wd.id = $1`, id).
			Scan(append(deliveryDest(&it.Delivery), &it.SealedURL, &it.SealedSecret)...)
		return it, translate(err)
	}
	l, err := s.db.hooks.loads.Do(id)
	if err != nil {
		return notify.SendItem{}, translate(err)
	}
	if !l.found {
		return notify.SendItem{}, vigia.NotFound()
	}
	return l.item, nil
}

// loadDeliveries reads the deliveries of a batch in one query.
func (db *DB) loadDeliveries(ids []string) ([]sendLoad, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := db.pool.Query(ctx, deliveryForSend+` WHERE wd.id = ANY($1::uuid[])`, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]notify.SendItem, len(ids))
	for rows.Next() {
		var it notify.SendItem
		if err := rows.Scan(append(deliveryDest(&it.Delivery), &it.SealedURL, &it.SealedSecret)...); err != nil {
			rows.Close()
			return nil, err
		}
		byID[it.ID] = it
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]sendLoad, len(ids))
	for i, id := range ids {
		out[i].item, out[i].found = byID[id]
	}
	return out, nil
}

// RecordAttempt appends an attempt and moves the delivery on.
func (s *WebhookStore) RecordAttempt(ctx context.Context, id string, rec notify.AttemptRecord, status string, next, finished *time.Time) error {
	entry, err := json.Marshal([]notify.AttemptRecord{rec})
	if err != nil {
		return vigia.Internal(err)
	}
	var code *int32
	if rec.StatusCode != 0 {
		c := int32(rec.StatusCode)
		code = &c
	}
	if _, inTx := pgtx.From(ctx); inTx {
		_, err = s.db.q(ctx).Exec(ctx, `UPDATE webhook_deliveries SET attempts = greatest(attempts, $2),
			attempt_log = attempt_log || $3::jsonb, status = $4, next_attempt_at = $5, finished_at = $6,
			last_status_code = $7, last_error = nullif($8, '') WHERE id = $1`,
			id, rec.N, entry, status, next, finished, code, rec.Error)
		return translate(err)
	}
	_, err = s.db.hooks.records.Do(attemptWrite{id: id, n: rec.N, entry: string(entry), status: status, next: next,
		finished: finished, code: code, errText: rec.Error})
	return translate(err)
}

// recordAttempts writes the attempts of a batch in one statement. It commits without
// waiting for the disk: the job queue's own (synchronous) commit of each job's outcome
// comes next and flushes the log past these records, and a crash in between re-runs the
// job, which sends the same attempt again. One flush per batch of deliveries.
func (db *DB) recordAttempts(ws []attemptWrite) ([]struct{}, error) {
	n := len(ws)
	ids, ns, entries, statuses := make([]string, n), make([]int32, n), make([]string, n), make([]string, n)
	nexts, finisheds, codes, errs := make([]*time.Time, n), make([]*time.Time, n), make([]*int32, n), make([]string, n)
	for i, w := range ws {
		ids[i], ns[i], entries[i], statuses[i] = w.id, int32(w.n), w.entry, w.status
		nexts[i], finisheds[i], codes[i], errs[i] = w.next, w.finished, w.code, w.errText
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
	b.Queue(`UPDATE webhook_deliveries wd SET attempts = greatest(wd.attempts, v.n),
		attempt_log = wd.attempt_log || v.entry::jsonb, status = v.status, next_attempt_at = v.next, finished_at = v.finished,
		last_status_code = v.code, last_error = nullif(v.err, '')
		FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::int[], $8::text[])
		AS v(id, n, entry, status, next, finished, code, err)
		WHERE wd.id = v.id`, ids, ns, entries, statuses, nexts, finisheds, codes, errs)
	if err := db.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return make([]struct{}, n), nil
}

// FinishDelivery ends a delivery without an attempt.
func (s *WebhookStore) FinishDelivery(ctx context.Context, id, status string, statusCode *int, errText string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE webhook_deliveries SET status = $2, last_status_code = $3, last_error = nullif($4, ''),
		next_attempt_at = NULL, finished_at = $5 WHERE id = $1`, id, status, statusCode, errText, at)
	return translate(err)
}

// Deliveries lists a channel's deliveries, newest first.
func (s *WebhookStore) Deliveries(ctx context.Context, workspaceID, channelID string, page vigia.Page) (vigia.List[notify.Delivery], error) {
	var out vigia.List[notify.Delivery]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE workspace_id = $1 AND channel_id = $2`,
		workspaceID, channelID).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries wd
		WHERE wd.workspace_id = $1 AND wd.channel_id = $2 ORDER BY wd.created_at DESC, wd.id DESC LIMIT $3 OFFSET $4`,
		workspaceID, channelID, page.Limit, page.Offset)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.Delivery, error) {
		var d notify.Delivery
		err := r.Scan(deliveryDest(&d)...)
		return d, err
	})
	return out, translate(err)
}

// CreateMute inserts a mute.
func (s *WebhookStore) CreateMute(ctx context.Context, m notify.Mute) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO notification_mutes (id, workspace_id, scope, connection_id, dataset_id,
		issue_types, reason, ends_at, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		m.ID, m.WorkspaceID, m.Scope, m.ConnectionID, m.DatasetID, nonNil(m.IssueTypes), m.Reason, m.EndsAt, m.CreatedBy, m.CreatedAt)
	return translate(err)
}

const muteSelect = `SELECT m.id::text, m.workspace_id::text, m.scope, m.connection_id::text, m.dataset_id::text, m.issue_types,
	m.reason, m.ends_at, m.created_by, m.created_at FROM notification_mutes m`

func collectMutes(rows pgx.Rows, err error) ([]notify.Mute, error) {
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.Mute, error) {
		var m notify.Mute
		err := r.Scan(&m.ID, &m.WorkspaceID, &m.Scope, &m.ConnectionID, &m.DatasetID, &m.IssueTypes, &m.Reason, &m.EndsAt,
			&m.CreatedBy, &m.CreatedAt)
		return m, err
	})
	return out, translate(err)
}

// ActiveMutes returns the workspace's mutes that have not ended at now.
func (s *WebhookStore) ActiveMutes(ctx context.Context, workspaceID string, now time.Time) ([]notify.Mute, error) {
	return collectMutes(s.db.q(ctx).Query(ctx, muteSelect+` WHERE m.workspace_id = $1 AND m.ends_at > $2`, workspaceID, now))
}

// Mutes lists the mutes the viewer can see that have not ended, soonest end first.
func (s *WebhookStore) Mutes(ctx context.Context, v catalog.Viewer, now time.Time, page vigia.Page) (vigia.List[notify.Mute], error) {
	cond := ` WHERE m.workspace_id = $1 AND m.ends_at > $4 AND (m.dataset_id IS NULL OR ` + VisibleSQL("m.dataset_id", 2, 3) + `)`
	args := []any{v.WorkspaceID, nonNil(v.TeamIDs), v.Admin, now}
	var out vigia.List[notify.Mute]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM notification_mutes m`+cond, args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	var err error
	out.Items, err = collectMutes(s.db.q(ctx).Query(ctx, muteSelect+cond+` ORDER BY m.ends_at, m.id LIMIT $5 OFFSET $6`,
		append(args, page.Limit, page.Offset)...))
	return out, err
}

// DeleteMute removes a mute the viewer can see.
func (s *WebhookStore) DeleteMute(ctx context.Context, v catalog.Viewer, id string) error {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM notification_mutes m WHERE m.workspace_id = $1 AND m.id = $4
		AND (m.dataset_id IS NULL OR `+VisibleSQL("m.dataset_id", 2, 3)+`)`, v.WorkspaceID, nonNil(v.TeamIDs), v.Admin, id)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// Rota returns the workspace's on-call rota.
func (s *WebhookStore) Rota(ctx context.Context, workspaceID string) (oncall.Rota, error) {
	r := oncall.Rota{WorkspaceID: workspaceID}
	err := s.db.q(ctx).QueryRow(ctx, `SELECT levels, team_id::text, min_severity, created_at, updated_at FROM oncall_rotas
		WHERE workspace_id = $1`, workspaceID).Scan(&r.Levels, &r.TeamID, &r.MinSeverity, &r.CreatedAt, &r.UpdatedAt)
	return r, translate(err)
}

// SaveRota inserts or replaces the workspace's rota.
func (s *WebhookStore) SaveRota(ctx context.Context, r oncall.Rota, at time.Time) (oncall.Rota, error) {
	levels, err := json.Marshal(r.Levels)
	if err != nil {
		return r, vigia.Internal(err)
	}
	err = s.db.q(ctx).QueryRow(ctx, `INSERT INTO oncall_rotas (workspace_id, levels, team_id, min_severity, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (workspace_id) DO UPDATE
		SET levels = EXCLUDED.levels, team_id = EXCLUDED.team_id, min_severity = EXCLUDED.min_severity, updated_at = EXCLUDED.updated_at
		RETURNING created_at, updated_at`, r.WorkspaceID, levels, r.TeamID, r.MinSeverity, at).Scan(&r.CreatedAt, &r.UpdatedAt)
	return r, translate(err)
}

// DeleteRota removes the workspace's rota.
func (s *WebhookStore) DeleteRota(ctx context.Context, workspaceID string) error {
	tag, err := s.db.q(ctx).Exec(ctx, `DELETE FROM oncall_rotas WHERE workspace_id = $1`, workspaceID)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}

// EscalationCandidates returns open problems of every workspace with a rota that are
// not exhausted. One pass runs at a time across processes (a transaction-level
// advisory lock); a concurrent pass gets nothing.
func (s *WebhookStore) EscalationCandidates(ctx context.Context, limit int) ([]oncall.EscalationCandidate, error) {
	var locked bool
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended('vigia_webhook_escalation', 0))`).
		Scan(&locked); err != nil || !locked {
		return nil, translate(err)
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT i.id::text, i.dataset_id::text, i.type, i.subtype, i.severity, i.status, i.title,
		i.title_key, i.title_params, i.rule_id::text, i.first_scan_id::text, i.created_at,
		r.workspace_id::text, r.levels, r.team_id::text, r.min_severity, r.created_at, r.updated_at,
		coalesce(e.level, 0), coalesce(e.level_since, greatest(i.created_at, r.created_at))
		FROM issues i JOIN oncall_rotas r ON r.workspace_id = i.workspace_id
		LEFT JOIN issue_escalations e ON e.issue_id = i.id
		WHERE i.status = 'open' AND (i.severity = 'critical' OR (r.min_severity = 'warning' AND i.severity = 'warning'))
		  AND NOT coalesce(e.exhausted, false)
		ORDER BY coalesce(e.level_since, greatest(i.created_at, r.created_at)), i.id LIMIT $1`, limit)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (oncall.EscalationCandidate, error) {
		var c oncall.EscalationCandidate
		is := &c.Issue
		err := r.Scan(&is.ID, &is.DatasetID, &is.Type, &is.Subtype, &is.Severity, &is.Status, &is.Title, &is.TitleKey, &is.Params,
			&is.RuleID, &is.ScanID, &is.CreatedAt, &c.Rota.WorkspaceID, &c.Rota.Levels, &c.Rota.TeamID, &c.Rota.MinSeverity,
			&c.Rota.CreatedAt, &c.Rota.UpdatedAt, &c.Level, &c.LevelSince)
		return c, err
	})
	return out, translate(err)
}

// SaveEscalation records where a problem stands on the rota.
func (s *WebhookStore) SaveEscalation(ctx context.Context, issueID, workspaceID string, level int, since time.Time, exhausted bool, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO issue_escalations (issue_id, workspace_id, level, level_since, exhausted, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (issue_id) DO UPDATE
		SET level = EXCLUDED.level, level_since = EXCLUDED.level_since, exhausted = EXCLUDED.exhausted, updated_at = EXCLUDED.updated_at`,
		issueID, workspaceID, level, since, exhausted, at)
	return translate(err)
}

// DigestChannels lists the channels with the weekly digest on, of live workspaces.
func (s *WebhookStore) DigestChannels(ctx context.Context) ([]oncall.DigestChannel, error) {
	rows, err := s.db.q(ctx).Query(ctx, channelSelect+` JOIN workspaces w ON w.id = c.workspace_id
		WHERE c.digest AND NOT w.suspended ORDER BY c.created_at, c.id`)
	if err != nil {
		return nil, translate(err)
	}
	// The time zone is read separately: channelSelect's column list is shared.
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.Channel, error) { return scanChannel(r) })
	if err != nil {
		return nil, translate(err)
	}
	out := make([]oncall.DigestChannel, 0, len(cs))
	zones := map[string]string{}
	for _, c := range cs {
		tz, ok := zones[c.WorkspaceID]
		if !ok {
			info, err := s.WorkspaceInfo(ctx, c.WorkspaceID)
			if err != nil {
				return nil, err
			}
			tz = info.Timezone
			zones[c.WorkspaceID] = tz
		}
		out = append(out, oncall.DigestChannel{Channel: c, Timezone: tz})
	}
	return out, nil
}

// ClaimDigest marks a channel's digest of slot sent unless it already was.
func (s *WebhookStore) ClaimDigest(ctx context.Context, channelID string, slot time.Time) (bool, error) {
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE notification_channels SET last_digest_at = $2
		WHERE id = $1 AND digest AND (last_digest_at IS NULL OR last_digest_at < $2)`, channelID, slot)
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() == 1, nil
}

// DigestCounts computes a workspace's weekly figures.
func (s *WebhookStore) DigestCounts(ctx context.Context, workspaceID string, since, until time.Time) (oncall.DigestCounts, error) {
	var c oncall.DigestCounts
	err := s.db.q(ctx).QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE v.verdict = 'pass'), count(*) FILTER (WHERE v.verdict = 'warn'), count(*) FILTER (WHERE v.verdict = 'fail'),
		(SELECT count(*) FROM signals sg WHERE sg.workspace_id = $1 AND sg.anomalous AND sg.created_at >= $2 AND sg.created_at < $3),
		(SELECT count(*) FROM api_tokens t WHERE t.workspace_id = $1 AND t.revoked_at IS NULL
		    AND t.expires_at > $3 AND t.expires_at <= $3 + interval '7 days')
		FROM datasets d LEFT JOIN LATERAL (SELECT verdict FROM verdicts vv WHERE vv.dataset_id = d.id ORDER BY vv.seq DESC LIMIT 1) v ON true
		WHERE d.workspace_id = $1 AND d.dropped_at IS NULL`, workspaceID, since, until).
		Scan(&c.Healthy, &c.Warning, &c.Critical, &c.NewSignals, &c.ExpiringTokens)
	return c, translate(err)
}

// TeamDigestCounts computes a team's weekly figures over the issues assigned to it.
func (s *WebhookStore) TeamDigestCounts(ctx context.Context, workspaceID, teamID string, since, until time.Time) (oncall.TeamDigestCounts, error) {
	var c oncall.TeamDigestCounts
	err := s.db.q(ctx).QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE status = 'open'),
		count(*) FILTER (WHERE status IN ('open', 'acknowledged') AND severity = 'critical'),
		count(*) FILTER (WHERE status IN ('open', 'acknowledged') AND severity = 'warning'),
		count(*) FILTER (WHERE status = 'acknowledged'),
		count(*) FILTER (WHERE status IN ('open', 'acknowledged') AND sla_breached_at IS NOT NULL),
		count(*) FILTER (WHERE status = 'resolved' AND resolved_at >= $3 AND resolved_at < $4)
		FROM issues WHERE workspace_id = $1 AND assignee_team_id = $2`, workspaceID, teamID, since, until).
		Scan(&c.Open, &c.Critical, &c.Warning, &c.Acknowledged, &c.Overdue, &c.Resolved)
	return c, translate(err)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
