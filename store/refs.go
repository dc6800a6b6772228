package store

import (
	"context"
	"fmt"

	"github.com/vigia-data/vigia"
)

// refTables is where each kind of referenced object lives; every one has workspace_id.
var refTables = map[vigia.RefKind]string{
	vigia.RefChannel: "notification_channels",
	vigia.RefTeam:    "teams",
	vigia.RefUser:    "users",
}

// CountRefs counts the given distinct ids of a kind that are objects of the workspace
// (vigia.Refs): the one query behind vigia.CheckRefs for every service.
func (db *DB) CountRefs(ctx context.Context, workspaceID string, kind vigia.RefKind, ids []string) (int, error) {
	table, ok := refTables[kind]
	if !ok {
		return 0, fmt.Errorf("store: no table for references of kind %q", kind)
	}
	var n int
	err := db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE workspace_id = $1 AND id = ANY($2::uuid[])`,
		workspaceID, ids).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count %s references: %w", kind, err)
	}
	return n, nil
}

// CountRefs is DB.CountRefs, for the data product service.
func (s *ProductStore) CountRefs(ctx context.Context, workspaceID string, kind vigia.RefKind, ids []string) (int, error) {
	return s.db.CountRefs(ctx, workspaceID, kind, ids)
}

// CountRefs is DB.CountRefs, for the issue service.
func (s *IssueStore) CountRefs(ctx context.Context, workspaceID string, kind vigia.RefKind, ids []string) (int, error) {
	return s.db.CountRefs(ctx, workspaceID, kind, ids)
}

// CountRefs is DB.CountRefs, for the webhook service.
func (s *WebhookStore) CountRefs(ctx context.Context, workspaceID string, kind vigia.RefKind, ids []string) (int, error) {
	return s.db.CountRefs(ctx, workspaceID, kind, ids)
}
