package store

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
)

// ConfigManaged is one object configuration as code manages.
type ConfigManaged struct {
	Kind     string
	ObjectID string
	Name     string
}

// ConfigStore keeps the marks of the objects configuration as code manages.
type ConfigStore struct{ db *DB }

// Config returns the configuration-as-code store.
func (db *DB) Config() *ConfigStore { return &ConfigStore{db: db} }

// ManagedByConfig reports whether configuration as code manages the object.
func (db *DB) ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error) {
	if !vigia.ValidID(id) {
		return false, nil
	}
	var ok bool
	err := db.q(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM config_managed WHERE workspace_id = $1 AND kind = $2 AND object_id = $3)`,
		workspaceID, kind, id).Scan(&ok)
	return ok, translate(err)
}

// ManagedByConfig reports whether configuration as code manages the object.
func (s *ConfigStore) ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error) {
	return s.db.ManagedByConfig(ctx, workspaceID, kind, id)
}

// Managed lists the workspace's managed objects by kind: object id → name in the file.
func (s *ConfigStore) Managed(ctx context.Context, workspaceID string) (map[string]map[string]string, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT kind, object_id::text, name FROM config_managed WHERE workspace_id = $1`, workspaceID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var kind, id, name string
		if err := rows.Scan(&kind, &id, &name); err != nil {
			return nil, translate(err)
		}
		if out[kind] == nil {
			out[kind] = map[string]string{}
		}
		out[kind][id] = name
	}
	return out, translate(rows.Err())
}

// MarkManaged marks (or renames the mark of) a managed object.
func (s *ConfigStore) MarkManaged(ctx context.Context, workspaceID, kind, id, name string, at time.Time) error {
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO config_managed (workspace_id, kind, object_id, name, applied_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_id, kind, object_id) DO UPDATE SET name = EXCLUDED.name, applied_at = EXCLUDED.applied_at`,
		workspaceID, kind, id, name, at)
	return translate(err)
}

// Unmark removes the mark of an object (deleted, or released from management).
func (s *ConfigStore) Unmark(ctx context.Context, workspaceID, kind, id string) error {
	_, err := s.db.q(ctx).Exec(ctx, `DELETE FROM config_managed WHERE workspace_id = $1 AND kind = $2 AND object_id = $3`, workspaceID, kind, id)
	return translate(err)
}

// The feature stores whose objects configuration as code manages answer the services'
// refusal check (vigia.RefuseManaged).

// ManagedByConfig reports whether configuration as code manages the object.
func (s *ConnectionStore) ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error) {
	return s.db.ManagedByConfig(ctx, workspaceID, kind, id)
}

// ManagedByConfig reports whether configuration as code manages the object.
func (s *TeamStore) ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error) {
	return s.db.ManagedByConfig(ctx, workspaceID, kind, id)
}

// ManagedByConfig reports whether configuration as code manages the object.
func (s *ProductStore) ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error) {
	return s.db.ManagedByConfig(ctx, workspaceID, kind, id)
}

// ManagedByConfig reports whether configuration as code manages the object.
func (s *WebhookStore) ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error) {
	return s.db.ManagedByConfig(ctx, workspaceID, kind, id)
}

// ManagedByConfig reports whether configuration as code manages the object.
func (s *RuleStore) ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error) {
	return s.db.ManagedByConfig(ctx, workspaceID, kind, id)
}

// SetSealedDSN replaces a connection's sealed DSN.
func (s *ConnectionStore) SetSealedDSN(ctx context.Context, workspaceID, id string, sealed []byte) error {
	tag, err := s.db.q(ctx).Exec(ctx, `UPDATE connections SET dsn_encrypted = $3 WHERE workspace_id = $1 AND id = $2`, workspaceID, id, sealed)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return vigia.NotFound()
	}
	return nil
}
