package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// A restricted-access domain's datasets are readable only with a team grant; admins see
// them, API tokens and members without the grant get 404 and never count them.
func TestRestrictedDomainVisibility(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "vis")
	conn := env.MustConnection(t, ws, "c")
	open := env.MustDataset(t, ws, conn, "public", "aberta")
	secret := env.MustDataset(t, ws, conn, "saude", "diagnosticos")
	domain, team := vigia.NewID(), vigia.NewID()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := env.DB.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Saúde', true)`, domain, ws)
	exec(`INSERT INTO domain_datasets VALUES ($1, $2)`, domain, secret)
	exec(`INSERT INTO teams (id, workspace_id, name) VALUES ($1, $2, 'clinica')`, team, ws)

	member := env.MustSession(t, ws, vigia.RoleMember)
	granted := env.MustSession(t, ws, vigia.RoleMember)
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	exec(`INSERT INTO team_members (team_id, user_id) SELECT $1, s.user_id FROM sessions s WHERE s.token_hash = sha256($2::bytea)`, team, granted)
	exec(`INSERT INTO domain_grants (domain_id, team_id) VALUES ($1, $2)`, domain, team)

	for name, c := range map[string]struct {
		cred    string
		visible bool
	}{"MemberWithoutGrant": {member, false}, "Token": {tok, false}, "MemberWithGrant": {granted, true}, "Admin": {admin, true}} {
		t.Run(name, func(t *testing.T) {
			r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+secret, c.cred, nil)
			list := env.Do(t, http.MethodGet, "/api/v1/datasets", c.cred, nil)
			want, total := 404, "1"
			if c.visible {
				want, total = 200, "2"
			}
			if r.Status != want || list.Header.Get("X-Total-Count") != total {
				t.Fatalf("detail %d (want %d), total %s (want %s)", r.Status, want, list.Header.Get("X-Total-Count"), total)
			}
			if o := env.Do(t, http.MethodGet, "/api/v1/datasets/"+open, c.cred, nil); o.Status != 200 {
				t.Fatalf("open dataset: %d", o.Status)
			}
		})
	}
}
