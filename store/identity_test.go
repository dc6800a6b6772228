package store_test

import (
	"crypto/sha256"
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/identity"
)

func hash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func TestIdentityWorkspacesAndUsers(t *testing.T) {
	f := newFx(t)
	s := f.db.Identity()
	ws := f.workspace()
	byID, err := s.WorkspaceByRef(f.ctx, ws.WorkspaceID)
	f.must(err)
	byName, err := s.WorkspaceByRef(f.ctx, byID.Name)
	f.must(err)
	if byName.ID != ws.WorkspaceID || byID.Timezone != "Europe/Lisbon" || byID.DataCountry != "PT" || byID.Locale != nil || byID.Suspended {
		t.Fatalf("workspace read back as %+v / %+v", byID, byName)
	}
	f.fails(vigia.KindNotFound, "unknown workspace id", func(ctx ctxT) error {
		_, err := s.WorkspaceByRef(ctx, vigia.NewID())
		return err
	})
	f.fails(vigia.KindNotFound, "unknown workspace name", func(ctx ctxT) error {
		_, err := s.WorkspaceByRef(ctx, "no such workspace")
		return err
	})
	f.fails(vigia.KindConflict, "taken workspace name", func(ctx ctxT) error {
		return s.CreateWorkspace(ctx, identity.Workspace{ID: vigia.NewID(), Name: byID.Name, DataCountry: "PT", Timezone: "UTC", CreatedAt: t0})
	})
	f.user(ws.WorkspaceID, "ana@example.com", vigia.RoleAdmin)
	f.fails(vigia.KindConflict, "same e-mail twice in a workspace", func(ctx ctxT) error {
		return s.CreateUser(ctx, identity.User{ID: vigia.NewID(), WorkspaceID: ws.WorkspaceID, Email: "ana@example.com", Role: vigia.RoleMember, CreatedAt: t0})
	})
	f.fails(vigia.KindNotFound, "a user of a workspace that does not exist", func(ctx ctxT) error {
		return s.CreateUser(ctx, identity.User{ID: vigia.NewID(), WorkspaceID: vigia.NewID(), Email: "x@example.com", Role: vigia.RoleMember, CreatedAt: t0})
	})
	// The same e-mail in another workspace is another person.
	other := f.workspace()
	f.user(other.WorkspaceID, "ana@example.com", vigia.RoleViewer)
}

func TestIdentityCredentials(t *testing.T) {
	f := newFx(t)
	s := f.db.Identity()
	ws := f.workspace()
	uid := f.user(ws.WorkspaceID, "rui@example.com", vigia.RoleMember)
	tm := f.team(ws.WorkspaceID, "data")
	f.must(f.db.Teams().AddMember(f.ctx, tm, uid))

	f.must(s.CreateSession(f.ctx, identity.Session{ID: vigia.NewID(), WorkspaceID: ws.WorkspaceID, UserID: uid, ExpiresAt: at(60)}, hash("session")))
	c, err := s.CredentialByHash(f.ctx, hash("session"), at(1))
	f.must(err)
	if c.UserID != uid || c.Role != vigia.RoleMember || c.Expired || !slices.Equal(c.TeamIDs, []string{tm}) {
		t.Fatalf("session credential %+v", c)
	}
	if c, err = s.CredentialByHash(f.ctx, hash("session"), at(61)); err != nil || !c.Expired {
		t.Fatalf("a session past its expiry: %+v, %v", c, err)
	}

	tok := identity.APIToken{ID: vigia.NewID(), WorkspaceID: ws.WorkspaceID, Name: "ci", CreatedBy: uid, CreatedAt: at(1)}
	f.must(s.CreateAPIToken(f.ctx, tok, hash("token")))
	tok2 := identity.APIToken{ID: vigia.NewID(), WorkspaceID: ws.WorkspaceID, Name: "etl", CreatedBy: uid, CreatedAt: at(2), ExpiresAt: vigia.Ptr(at(30))}
	f.must(s.CreateAPIToken(f.ctx, tok2, hash("token2")))
	f.fails(vigia.KindConflict, "a token hash twice", func(ctx ctxT) error {
		return s.CreateAPIToken(ctx, identity.APIToken{ID: vigia.NewID(), WorkspaceID: ws.WorkspaceID, Name: "dup", CreatedBy: uid, CreatedAt: t0}, hash("token"))
	})
	c, err = s.CredentialByHash(f.ctx, hash("token"), at(3))
	f.must(err)
	if c.ID != tok.ID || c.UserID != "" || c.Role != vigia.RoleViewer || c.Expired || c.LastUsedAt != nil {
		t.Fatalf("token credential %+v", c)
	}
	if c, err = s.CredentialByHash(f.ctx, hash("token2"), at(30)); err != nil || !c.Expired {
		t.Fatalf("a token at its expiry: %+v, %v", c, err)
	}

	// A use is recorded once per window.
	f.must(s.TouchAPIToken(f.ctx, tok.ID, at(5), at(4)))
	f.must(s.TouchAPIToken(f.ctx, tok.ID, at(6), at(4)))
	if c, _ = s.CredentialByHash(f.ctx, hash("token"), at(7)); c.LastUsedAt == nil || !c.LastUsedAt.Equal(at(5)) {
		t.Fatalf("last use %v, want %v", c.LastUsedAt, at(5))
	}

	list, err := s.APITokens(f.ctx, ws.WorkspaceID)
	f.must(err)
	if got := names(list, func(t identity.APIToken) string { return t.Name }); !slices.Equal(got, []string{"etl", "ci"}) {
		t.Fatalf("tokens newest first: %v", got)
	}
	other := f.workspace()
	if list, _ := s.APITokens(f.ctx, other.WorkspaceID); len(list) != 0 {
		t.Fatalf("another workspace lists %d tokens", len(list))
	}

	// Revoking: another workspace's token answers not found; then the token is dead.
	f.fails(vigia.KindNotFound, "revoking another workspace's token", func(ctx ctxT) error {
		_, err := s.RevokeAPIToken(ctx, other.WorkspaceID, hash("token"), at(8))
		return err
	})
	r, err := s.RevokeAPIToken(f.ctx, ws.WorkspaceID, hash("token"), at(8))
	f.must(err)
	if r.ID != tok.ID || r.RevokedAt == nil || !r.RevokedAt.Equal(at(8)) {
		t.Fatalf("revoked %+v", r)
	}
	f.fails(vigia.KindNotFound, "revoking twice", func(ctx ctxT) error {
		_, err := s.RevokeAPIToken(ctx, ws.WorkspaceID, hash("token"), at(9))
		return err
	})
	f.fails(vigia.KindNotFound, "a revoked token's credential", func(ctx ctxT) error {
		_, err := s.CredentialByHash(ctx, hash("token"), at(9))
		return err
	})
	f.fails(vigia.KindNotFound, "an unknown hash", func(ctx ctxT) error {
		_, err := s.CredentialByHash(ctx, hash("nothing"), at(9))
		return err
	})
}

func TestIdentityActivityPages(t *testing.T) {
	f := newFx(t)
	s := f.db.Identity()
	ws := f.workspace()
	for i := range 5 {
		f.must(s.AddActivity(f.ctx, identity.Activity{ID: vigia.NewID(), WorkspaceID: ws.WorkspaceID, Actor: "u", Action: "token.create",
			SubjectType: "token", SubjectID: string(rune('a' + i)), Details: map[string]any{"n": i}, CreatedAt: at(i)}))
	}
	other := f.workspace()
	f.must(s.AddActivity(f.ctx, identity.Activity{ID: vigia.NewID(), WorkspaceID: other.WorkspaceID, Actor: "u", Action: "x",
		SubjectType: "token", SubjectID: "z", CreatedAt: at(9)}))
	p1, err := s.Activities(f.ctx, ws.WorkspaceID, vigia.Page{Limit: 2})
	f.must(err)
	p2, err := s.Activities(f.ctx, ws.WorkspaceID, vigia.Page{Limit: 2, Offset: 2})
	f.must(err)
	p3, err := s.Activities(f.ctx, ws.WorkspaceID, vigia.Page{Limit: 2, Offset: 4})
	f.must(err)
	subj := func(a identity.Activity) string { return a.SubjectID }
	got := append(append(names(p1.Items, subj), names(p2.Items, subj)...), names(p3.Items, subj)...)
	if p1.Total != 5 || !slices.Equal(got, []string{"e", "d", "c", "b", "a"}) {
		t.Fatalf("activity pages: total %d, %v", p1.Total, got)
	}
	if p1.Items[0].Details["n"] != float64(4) {
		t.Fatalf("details %v", p1.Items[0].Details)
	}
	f.fails(vigia.KindNotFound, "activity of a workspace that does not exist", func(ctx ctxT) error {
		return s.AddActivity(ctx, identity.Activity{ID: vigia.NewID(), WorkspaceID: vigia.NewID(), Actor: "u", Action: "x", SubjectType: "t", SubjectID: "s", CreatedAt: t0})
	})
}
