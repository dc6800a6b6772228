package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/team"
)

// TeamOut is a team of the workspace.
type TeamOut struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	MemberCount int         `json:"member_count"`
	Members     []MemberOut `json:"members,omitempty" doc:"In the detail only"`
	CreatedAt   time.Time   `json:"created_at"`
}

// MemberOut is a person of a team.
type MemberOut struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Role   string `json:"role" enum:"admin,member,viewer"`
}

// TeamIn names a team.
type TeamIn struct {
	Name string `json:"name" maxLength:"100"`
}

// MemberIn adds a person by user id or e-mail.
type MemberIn struct {
	User string `json:"user" maxLength:"320" doc:"The person's user id or e-mail"`
}

var teamIDParam = param{Name: "team_id", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) teamRoutes() {
	s.register(operation{ID: "listTeams", Method: http.MethodGet, Path: "/api/v1/teams", Tag: "governance", List: true,
		Summary: "Teams of the workspace", Response: []TeamOut{}}, s.handleTeamList)
	s.register(operation{ID: "createTeam", Method: http.MethodPost, Path: "/api/v1/teams", Tag: "governance", Status: http.StatusCreated,
		Summary: "Add a team (admin session)", Body: TeamIn{}, Response: TeamOut{},
		Errors: map[int]string{http.StatusConflict: "team_name_taken"}}, s.handleTeamCreate)
	s.register(operation{ID: "getTeam", Method: http.MethodGet, Path: "/api/v1/teams/{team_id}", Tag: "governance",
		Summary: "One team with its members", Params: []param{teamIDParam}, Response: TeamOut{}}, s.handleTeamGet)
	s.register(operation{ID: "renameTeam", Method: http.MethodPatch, Path: "/api/v1/teams/{team_id}", Tag: "governance",
		Summary: "Rename a team (admin session)", Params: []param{teamIDParam}, Body: TeamIn{}, Response: TeamOut{},
		Errors: map[int]string{http.StatusConflict: "team_name_taken"}}, s.handleTeamRename)
	s.register(operation{ID: "deleteTeam", Method: http.MethodDelete, Path: "/api/v1/teams/{team_id}", Tag: "governance",
		Summary: "Delete a team; its issues lose their assignee (admin session)", Params: []param{teamIDParam},
		Status: http.StatusNoContent}, s.handleTeamDelete)
	s.register(operation{ID: "addTeamMember", Method: http.MethodPost, Path: "/api/v1/teams/{team_id}/members", Tag: "governance",
		Summary: "Add a person to a team (admin session)", Params: []param{teamIDParam}, Body: MemberIn{}, Response: TeamOut{}},
		s.handleTeamMemberAdd)
	s.register(operation{ID: "removeTeamMember", Method: http.MethodDelete, Path: "/api/v1/teams/{team_id}/members/{user_id}",
		Tag: "governance", Summary: "Remove a person from a team (admin session)", Status: http.StatusNoContent,
		Params: []param{teamIDParam, {Name: "user_id", In: "path", Type: "string", Required: true, MaxLen: 64}}}, s.handleTeamMemberRemove)
}

func toTeamOut(t team.Team) TeamOut {
	out := TeamOut{ID: t.ID, Name: t.Name, MemberCount: t.MemberCount, CreatedAt: t.CreatedAt}
	for _, m := range t.Members {
		out.Members = append(out.Members, MemberOut{UserID: m.UserID, Email: m.Email, Role: string(m.Role)})
	}
	return out
}

func (s *Server) handleTeamList(w http.ResponseWriter, r *http.Request, in *input) {
	ts, err := s.deps.Workflow.Teams.Teams(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page := in.Page()
	out := []TeamOut{}
	for i, t := range ts {
		if i >= page.Offset && len(out) < page.Limit {
			out = append(out, toTeamOut(t))
		}
	}
	list(w, len(ts), out)
}

func (s *Server) handleTeamCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body TeamIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.deps.Workflow.Teams.CreateTeam(r.Context(), body.Name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/teams/"+t.ID)
	writeJSON(w, http.StatusCreated, toTeamOut(t))
}

func (s *Server) handleTeamGet(w http.ResponseWriter, r *http.Request, in *input) {
	t, err := s.deps.Workflow.Teams.Team(r.Context(), in.Path("team_id"))
	s.reply(w, r, err, func() any { return toTeamOut(t) })
}

func (s *Server) handleTeamRename(w http.ResponseWriter, r *http.Request, in *input) {
	var body TeamIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.deps.Workflow.Teams.RenameTeam(r.Context(), in.Path("team_id"), body.Name)
	s.reply(w, r, err, func() any { return toTeamOut(t) })
}

func (s *Server) handleTeamDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Workflow.Teams.DeleteTeam(r.Context(), in.Path("team_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleTeamMemberAdd(w http.ResponseWriter, r *http.Request, in *input) {
	var body MemberIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.deps.Workflow.Teams.AddMember(r.Context(), in.Path("team_id"), body.User)
	s.reply(w, r, err, func() any { return toTeamOut(t) })
}

func (s *Server) handleTeamMemberRemove(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Workflow.Teams.RemoveMember(r.Context(), in.Path("team_id"), in.Path("user_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
