package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/source"
)

// ConnectionStore implements connection.Store.
type ConnectionStore struct{ db *DB }

// Connections returns the connection store.
func (db *DB) Connections() *ConnectionStore { return &ConnectionStore{db: db} }

var _ connection.Store = (*ConnectionStore)(nil)

// CreateConnection inserts a connection with its sealed DSN.
func (s *ConnectionStore) CreateConnection(ctx context.Context, c connection.Connection, sealedDSN []byte) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO connections (id, workspace_id, name, kind, dsn_encrypted, data_country, scan_timezone, created_at,
		statement_timeout_s, lineage_namespace, lineage_database, lineage_aliases)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nullif($10, ''), $11, $12)`, c.ID, c.WorkspaceID, c.Name, c.Kind, sealedDSN, c.DataCountry,
		c.ScanTimezone, c.CreatedAt, c.StatementTimeout, c.Lineage.Namespace, c.Lineage.Database, nonNilStrings(c.Lineage.Aliases))
	return translate(err)
}

const connectionSelect = `SELECT c.id::text, c.workspace_id::text, c.name, c.kind, c.data_country, c.scan_timezone,
	c.schedule_enabled, c.schedule_hour, c.schedule_minute, c.engineering_opt_in, c.created_at, w.data_country,
	c.statement_timeout_s, coalesce(c.lineage_namespace, ''), coalesce(c.lineage_database, ''), c.lineage_aliases,
	(SELECT count(*) FROM datasets d WHERE d.connection_id = c.id AND d.dropped_at IS NULL),
	ls.created_at, ls.status
	FROM connections c JOIN workspaces w ON w.id = c.workspace_id
	LEFT JOIN LATERAL (SELECT created_at, status FROM scans s WHERE s.connection_id = c.id ORDER BY created_at DESC LIMIT 1) ls ON true`

func scanConnection(r pgx.Row) (connection.Connection, error) {
	var c connection.Connection
	err := r.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Kind, &c.DataCountry, &c.ScanTimezone, &c.Schedule.Enabled,
		&c.Schedule.Hour, &c.Schedule.Minute, &c.EngineeringOptIn, &c.CreatedAt, &c.WorkspaceCountry,
		&c.StatementTimeout, &c.Lineage.Namespace, &c.Lineage.Database, &c.Lineage.Aliases, &c.DatasetsCount,
		&c.LastScanAt, &c.LastScanStatus)
	return c, err
}

// Connections lists a workspace's connections by name.
func (s *ConnectionStore) Connections(ctx context.Context, workspaceID string) ([]connection.Connection, error) {
	rows, err := s.db.q(ctx).Query(ctx, connectionSelect+` WHERE c.workspace_id = $1 ORDER BY c.name, c.id`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (connection.Connection, error) { return scanConnection(r) })
	return cs, translate(err)
}

// ConnectionByRef finds a connection of the workspace by id or name.
func (s *ConnectionStore) ConnectionByRef(ctx context.Context, workspaceID, ref string) (connection.Connection, error) {
	var row pgx.Row
	if vigia.ValidID(ref) {
		row = s.db.q(ctx).QueryRow(ctx, connectionSelect+` WHERE c.workspace_id = $1 AND c.id = $2`, workspaceID, ref)
	} else {
		row = s.db.q(ctx).QueryRow(ctx, connectionSelect+` WHERE c.workspace_id = $1 AND c.name = $2`, workspaceID, ref)
	}
	c, err := scanConnection(row)
	return c, translate(err)
}

// SealedDSN returns the connection's sealed DSN.
func (s *ConnectionStore) SealedDSN(ctx context.Context, workspaceID, id string) ([]byte, error) {
	var b []byte
	err := s.db.q(ctx).QueryRow(ctx, `SELECT dsn_encrypted FROM connections WHERE workspace_id = $1 AND id = $2`, workspaceID, id).Scan(&b)
	return b, translate(err)
}

// UpdateSchedule saves the time zone and schedule.
func (s *ConnectionStore) UpdateSchedule(ctx context.Context, c connection.Connection) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE connections SET scan_timezone = $3, schedule_enabled = $4, schedule_hour = $5,
		schedule_minute = $6 WHERE workspace_id = $1 AND id = $2`,
		c.WorkspaceID, c.ID, c.ScanTimezone, c.Schedule.Enabled, c.Schedule.Hour, c.Schedule.Minute)
	return translate(err)
}

// UpdateConnection saves name, data country, time zone, statement timeout and
// OpenLineage aliases.
func (s *ConnectionStore) UpdateConnection(ctx context.Context, c connection.Connection) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE connections SET name = $3, data_country = $4, scan_timezone = $5,
		statement_timeout_s = $6, lineage_aliases = $7 WHERE workspace_id = $1 AND id = $2`,
		c.WorkspaceID, c.ID, c.Name, c.DataCountry, c.ScanTimezone, c.StatementTimeout, nonNilStrings(c.Lineage.Aliases))
	return translate(err)
}

// SetLineageIdentity stores the OpenLineage namespace and database derived from the DSN.
func (s *ConnectionStore) SetLineageIdentity(ctx context.Context, workspaceID, id, namespace, database string) error {
	_, err := s.db.q(ctx).Exec(ctx, `UPDATE connections SET lineage_namespace = nullif($3, ''), lineage_database = $4
		WHERE workspace_id = $1 AND id = $2`, workspaceID, id, namespace, database)
	return translate(err)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// RecordQueries appends statements to the query log in one batch.
func (s *ConnectionStore) RecordQueries(ctx context.Context, workspaceID, connectionID string, scanID *string, qs []source.QueryRecord, at time.Time) error {
	rows := make([][]any, 0, len(qs))
	for _, q := range qs {
		ep := q.Endpoint
		if ep == "" {
			ep = source.EndpointPrimary
		}
		rows = append(rows, []any{workspaceID, connectionID, scanID, q.Operation, q.Statement,
			float64(q.Duration.Microseconds()) / 1000, q.Rows, ep, q.Err, at})
	}
	_, err := s.db.q(ctx).CopyFrom(ctx, pgx.Identifier{"source_query_log"},
		[]string{"workspace_id", "connection_id", "scan_id", "operation", "statement", "duration_ms", "rows", "endpoint", "failed", "created_at"},
		pgx.CopyFromRows(rows))
	return translate(err)
}

// QueryLog groups the log by statement, operation, scan and endpoint, most recent first.
func (s *ConnectionStore) QueryLog(ctx context.Context, workspaceID, connectionID string, f connection.QueryLogFilter, since *time.Time) (vigia.List[connection.QueryLogEntry], error) {
	where := []string{"workspace_id = $1", "connection_id = $2"}
	args := []any{workspaceID, connectionID}
	if f.ScanID != nil {
		args = append(args, *f.ScanID)
		where = append(where, fmt.Sprintf("scan_id = $%d", len(args)))
	}
	if f.Operation != nil {
		args = append(args, *f.Operation)
		where = append(where, fmt.Sprintf("operation = $%d", len(args)))
	}
	if since != nil {
		args = append(args, *since)
		where = append(where, fmt.Sprintf("created_at >= $%d", len(args)))
	}
	grouped := `SELECT statement, operation, scan_id::text AS scan_id, endpoint, count(*) AS executions, sum(duration_ms) AS duration_ms,
		sum(rows) AS rows, count(*) FILTER (WHERE failed) AS failures, min(created_at) AS first_seen, max(created_at) AS last_seen
		FROM source_query_log WHERE ` + strings.Join(where, " AND ") + ` GROUP BY statement, operation, scan_id, endpoint`
	var out vigia.List[connection.QueryLogEntry]
	if err := s.db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM (`+grouped+`) g`, args...).Scan(&out.Total); err != nil {
		return out, translate(err)
	}
	args = append(args, f.Page.Limit, f.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, grouped+fmt.Sprintf(` ORDER BY last_seen DESC, statement LIMIT $%d OFFSET $%d`, len(args)-1, len(args)), args...)
	if err != nil {
		return out, translate(err)
	}
	out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (connection.QueryLogEntry, error) {
		var e connection.QueryLogEntry
		err := r.Scan(&e.Statement, &e.Operation, &e.ScanID, &e.Endpoint, &e.Executions, &e.DurationMS, &e.Rows, &e.Failures, &e.FirstSeenAt, &e.LastSeenAt)
		return e, err
	})
	return out, translate(err)
}

// Engineering summarizes a connection's last scan and open issues.
func (s *ConnectionStore) Engineering(ctx context.Context, workspaceID, connectionID string) (connection.Engineering, error) {
	var e connection.Engineering
	err := s.db.q(ctx).QueryRow(ctx, `SELECT engineering_opt_in,
		(SELECT count(*) FROM issues i JOIN datasets d ON d.id = i.dataset_id
		  WHERE d.connection_id = c.id AND i.status IN ('open', 'acknowledged'))
		FROM connections c WHERE c.workspace_id = $1 AND c.id = $2`, workspaceID, connectionID).Scan(&e.OptIn, &e.OpenIssues)
	if err != nil {
		return e, translate(err)
	}
	var sum connection.ScanSummary
	err = s.db.q(ctx).QueryRow(ctx, `SELECT id::text, status, created_at, finished_at FROM scans WHERE connection_id = $1
		ORDER BY created_at DESC LIMIT 1`, connectionID).Scan(&sum.ID, &sum.Status, &sum.CreatedAt, &sum.FinishedAt)
	if err == nil {
		e.LastScan = &sum
	} else if err != pgx.ErrNoRows {
		return e, translate(err)
	}
	return e, nil
}
