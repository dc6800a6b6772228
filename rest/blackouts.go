package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/vigia-data/vigia/blackout"
)

// BlackoutService is what the transport needs of blackout windows.
type BlackoutService interface {
	List(ctx context.Context, connectionID string) ([]blackout.Window, error)
	Replace(ctx context.Context, connectionID string, ws []blackout.Window) ([]blackout.Window, error)
}

// BlackoutWindowOut is a blackout window of a connection.
type BlackoutWindowOut struct {
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Note     string    `json:"note"`
}

// BlackoutWindowIn is a blackout window to set.
type BlackoutWindowIn struct {
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at" doc:"After starts_at"`
	Note     string    `json:"note,omitempty" maxLength:"200"`
}

// BlackoutsIn replaces a connection's blackout windows.
type BlackoutsIn struct {
	Windows []BlackoutWindowIn `json:"windows" maxItems:"50"`
}

func (s *Server) blackoutRoutes() {
	s.register(operation{ID: "listConnectionBlackouts", Method: http.MethodGet, Path: "/api/v1/connections/{connection_id}/blackouts",
		Tag: "connections", Params: []param{connectionIDParam}, Response: []BlackoutWindowOut{}, List: true, ListDefault: blackout.MaxWindows,
		Summary: "The connection's blackout windows: periods when Vigia sends the source no rehearsal (reason blackout)"}, s.handleBlackouts)
	s.register(operation{ID: "replaceConnectionBlackouts", Method: http.MethodPut, Path: "/api/v1/connections/{connection_id}/blackouts",
		Tag: "connections", Params: []param{connectionIDParam}, Body: BlackoutsIn{}, Response: []BlackoutWindowOut{},
		Summary: "Replace the connection's blackout windows (admin session)"}, s.handleBlackoutsReplace)
}

func toBlackoutsOut(ws []blackout.Window) []BlackoutWindowOut {
	out := make([]BlackoutWindowOut, 0, len(ws))
	for _, w := range ws {
		out = append(out, BlackoutWindowOut{StartsAt: w.StartsAt, EndsAt: w.EndsAt, Note: w.Note})
	}
	return out
}

func (s *Server) handleBlackouts(w http.ResponseWriter, r *http.Request, in *input) {
	ws, err := s.deps.Blackouts.List(r.Context(), in.Path("connection_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page := in.Page()
	all := toBlackoutsOut(ws)
	lo := min(page.Offset, len(all))
	hi := min(lo+page.Limit, len(all))
	list(w, len(all), all[lo:hi])
}

func (s *Server) handleBlackoutsReplace(w http.ResponseWriter, r *http.Request, in *input) {
	var body BlackoutsIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	list := make([]blackout.Window, 0, len(body.Windows))
	for _, x := range body.Windows {
		list = append(list, blackout.Window{StartsAt: x.StartsAt, EndsAt: x.EndsAt, Note: x.Note})
	}
	ws, err := s.deps.Blackouts.Replace(r.Context(), in.Path("connection_id"), list)
	s.reply(w, r, err, func() any { return toBlackoutsOut(ws) })
}
