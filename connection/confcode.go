package connection

import (
	"context"
	"crypto/subtle"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/source"
)

// SameDSN reports whether the connection's sealed DSN is dsn, so that configuration as
// code can tell an unchanged DSN without ever showing either. Admins only; KindNotFound
// for another workspace's connection.
func (s *Service) SameDSN(ctx context.Context, id, dsn string) (bool, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return false, err
	}
	c, err := s.store.ConnectionByRef(ctx, p.WorkspaceID, id)
	if err != nil {
		return false, err
	}
	sealed, err := s.store.SealedDSN(ctx, p.WorkspaceID, c.ID)
	if err != nil {
		return false, err
	}
	cur, err := s.box.Open(sealed, []byte(c.ID))
	if err != nil {
		return false, vigia.Internal(err)
	}
	return subtle.ConstantTimeCompare(cur, []byte(dsn)) == 1, nil
}

// ReplaceDSN gives the connection a new DSN, validated like Add's and never echoed; the
// next scan opens it. Admins only; KindInvalid for a DSN its kind does not read,
// KindNotFound for another workspace's connection, KindConflict (managed_by_config)
// when configuration as code manages it and the change does not come from apply.
func (s *Service) ReplaceDSN(ctx context.Context, id, dsn string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return err
	}
	c, err := s.store.ConnectionByRef(ctx, p.WorkspaceID, id)
	if err != nil {
		return err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedConnection, c.ID); err != nil {
		return err
	}
	if dsn == "" {
		return vigia.Invalid(vigia.Field("missing", nil, "dsn"))
	}
	if err := s.open.ValidateDSN(source.Kind(c.Kind), dsn); err != nil {
		return vigia.Invalid(vigia.Field("dsn_invalid", nil, "dsn"))
	}
	sealed, err := s.box.Seal([]byte(dsn), []byte(c.ID))
	if err != nil {
		return vigia.Internal(err)
	}
	if err := s.store.SetSealedDSN(ctx, p.WorkspaceID, c.ID, sealed); err != nil {
		return err
	}
	if ns, db, ok := s.open.ServerIdentity(source.Kind(c.Kind), dsn); ok {
		return s.store.SetLineageIdentity(ctx, p.WorkspaceID, c.ID, ns, db)
	}
	return nil
}
