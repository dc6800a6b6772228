package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/rest"
	"github.com/vigia-data/vigia/team"
)

// fakeIdentity knows one bearer secret.
type fakeIdentity struct{ p vigia.Principal }

func (f fakeIdentity) Authenticate(_ context.Context, secret string) (vigia.Principal, error) {
	if secret != "good-secret" {
		return vigia.Principal{}, vigia.Unauthenticated(vigia.CodeTokenInvalid)
	}
	return f.p, nil
}

// fakeTeams holds teams in memory and records the principal of each call. Only the
// calls the handlers under test make are implemented; the rest of rest.TeamService
// panics through the nil embedded interface.
type fakeTeams struct {
	rest.TeamService
	teams []team.Team
	seen  []vigia.Principal
}

func (f *fakeTeams) Teams(ctx context.Context) ([]team.Team, error) {
	p, _ := vigia.PrincipalFrom(ctx)
	f.seen = append(f.seen, p)
	return f.teams, nil
}

func (f *fakeTeams) Team(ctx context.Context, id string) (team.Team, error) {
	p, _ := vigia.PrincipalFrom(ctx)
	f.seen = append(f.seen, p)
	for _, t := range f.teams {
		if t.ID == id {
			return t, nil
		}
	}
	return team.Team{}, vigia.NotFound()
}

// The team handlers run against fakes of the identity and team services: the
// transport authenticates, pages the service's list, maps its not-found to the
// contract's envelope, and hands the service the caller.
func TestTeamHandlersAgainstFakes(t *testing.T) {
	msgs, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	teams := &fakeTeams{teams: []team.Team{
		{ID: vigia.NewID(), Name: "Dados", CreatedAt: at, MemberCount: 2},
		{ID: vigia.NewID(), Name: "Finanças", CreatedAt: at, MemberCount: 1},
		{ID: vigia.NewID(), Name: "Operações", CreatedAt: at},
	}}
	caller := vigia.Principal{WorkspaceID: vigia.NewID(), UserID: vigia.NewID(), TokenID: vigia.NewID(), Role: vigia.RoleMember}
	srv := httptest.NewServer(rest.New(rest.Config{}, rest.Deps{Identity: fakeIdentity{caller}, Messages: msgs,
		Workflow: rest.WorkflowDeps{Teams: teams}}, nil).Handler())
	defer srv.Close()
	get := func(path, secret string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}

	res := get("/api/v1/teams?limit=1&offset=1", "good-secret")
	var page []rest.TeamOut
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Total-Count") != "3" || len(page) != 1 ||
		page[0].Name != "Finanças" || page[0].MemberCount != 1 || !page[0].CreatedAt.Equal(at) {
		t.Fatalf("list: status %d, total %q, page %+v", res.StatusCode, res.Header.Get("X-Total-Count"), page)
	}

	missing := vigia.NewID()
	res = get("/api/v1/teams/"+missing, "good-secret")
	var e rest.ErrorOut
	if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusNotFound || e.Code != vigia.CodeNotFound || e.RequestID == "" ||
		e.RequestID != res.Header.Get("X-Request-ID") || strings.Contains(e.Code+e.RequestID, missing) {
		t.Fatalf("missing team: status %d, %+v", res.StatusCode, e)
	}

	if len(teams.seen) != 2 || teams.seen[0].WorkspaceID != caller.WorkspaceID || teams.seen[1].UserID != caller.UserID {
		t.Fatalf("the service saw %+v", teams.seen)
	}

	// A bad secret never reaches the service.
	if res := get("/api/v1/teams", "bad-secret"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad secret: status %d", res.StatusCode)
	}
	if len(teams.seen) != 2 {
		t.Fatalf("the service was called %d times", len(teams.seen))
	}
}
