package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/team"
)

func TestTeams(t *testing.T) {
	f := newFx(t)
	s := f.db.Teams()
	ws := f.workspace().WorkspaceID
	other := f.workspace().WorkspaceID
	data := f.team(ws, "data")
	f.team(ws, "Analytics")
	foreign := f.team(other, "ops")
	f.fails(vigia.KindConflict, "a taken team name", func(ctx ctxT) error {
		return s.CreateTeam(ctx, team.Team{ID: vigia.NewID(), WorkspaceID: ws, Name: "data", CreatedAt: t0})
	})
	// The name is free in another workspace.
	f.team(other, "data")

	ana := f.user(ws, "Ana@Example.com", vigia.RoleMember)
	bea := f.user(ws, "bea@example.com", vigia.RoleViewer)
	if id, err := s.UserRef(f.ctx, ws, "ana@example.COM"); err != nil || id != ana {
		t.Fatalf("user by e-mail: %q, %v", id, err)
	}
	if id, err := s.UserRef(f.ctx, ws, bea); err != nil || id != bea {
		t.Fatalf("user by id: %q, %v", id, err)
	}
	f.fails(vigia.KindNotFound, "a user of another workspace", func(ctx ctxT) error {
		_, err := s.UserRef(ctx, other, ana)
		return err
	})
	f.must(s.AddMember(f.ctx, data, bea))
	f.must(s.AddMember(f.ctx, data, ana))
	f.must(s.AddMember(f.ctx, data, ana)) // twice is once
	f.fails(vigia.KindNotFound, "adding someone who does not exist", func(ctx ctxT) error {
		return s.AddMember(ctx, data, vigia.NewID())
	})

	list, err := s.Teams(f.ctx, ws)
	f.must(err)
	if got := names(list, func(t team.Team) string { return t.Name }); !slices.Equal(got, []string{"Analytics", "data"}) {
		t.Fatalf("teams by name, case-insensitive: %v", got)
	}
	if list[1].MemberCount != 2 || list[0].MemberCount != 0 {
		t.Fatalf("member counts %d, %d", list[0].MemberCount, list[1].MemberCount)
	}
	tm, err := s.TeamByID(f.ctx, ws, data)
	f.must(err)
	if got := names(tm.Members, func(m team.Member) string { return m.Email }); !slices.Equal(got, []string{"Ana@Example.com", "bea@example.com"}) ||
		tm.MemberCount != 2 || tm.Members[1].Role != vigia.RoleViewer {
		t.Fatalf("team detail %+v", tm)
	}
	f.fails(vigia.KindNotFound, "another workspace's team", func(ctx ctxT) error {
		_, err := s.TeamByID(ctx, ws, foreign)
		return err
	})

	f.fails(vigia.KindConflict, "renaming onto a taken name", func(ctx ctxT) error { return s.RenameTeam(ctx, ws, data, "Analytics") })
	f.fails(vigia.KindNotFound, "renaming another workspace's team", func(ctx ctxT) error { return s.RenameTeam(ctx, ws, foreign, "x") })
	f.must(s.RenameTeam(f.ctx, ws, data, "platform"))
	if tm, _ = s.TeamByID(f.ctx, ws, data); tm.Name != "platform" {
		t.Fatalf("renamed to %q", tm.Name)
	}

	removed, err := s.RemoveMember(f.ctx, data, bea)
	f.must(err)
	again, err := s.RemoveMember(f.ctx, data, bea)
	f.must(err)
	if !removed || again {
		t.Fatalf("remove member: %v then %v", removed, again)
	}

	f.fails(vigia.KindNotFound, "deleting another workspace's team", func(ctx ctxT) error { return s.DeleteTeam(ctx, ws, foreign) })
	f.must(s.DeleteTeam(f.ctx, ws, data))
	f.fails(vigia.KindNotFound, "a deleted team", func(ctx ctxT) error { _, err := s.TeamByID(ctx, ws, data); return err })
	if n := f.count(`SELECT count(*) FROM team_members WHERE team_id = $1`, data); n != 0 {
		t.Fatalf("%d memberships outlive their team", n)
	}
	if list, _ := s.Teams(f.ctx, other); len(list) != 2 {
		t.Fatalf("the other workspace's teams: %d", len(list))
	}
}
