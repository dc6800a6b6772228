package rest

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/blackout"
)

// BlackoutService is what the transport needs of blackout windows.
type BlackoutService interface {
	List(ctx context.Context, connectionID string) ([]blackout.Window, error)
	Replace(ctx context.Context, connectionID string, ws []blackout.Window) ([]blackout.Window, error)
}

// BlackoutWindowOut is a blackout window of a connection.
type BlackoutWindowOut struct {
	StartsAt time.Time       `json:"starts_at" doc:"For a weekly window: the start of its occurrence in force, else of the next one"`
	EndsAt   time.Time       `json:"ends_at"`
	Note     string          `json:"note"`
	Weekly   *BlackoutWeekly `json:"weekly" doc:"null for an absolute window"`
}

// BlackoutWeekly is the rule of a weekly blackout window.
type BlackoutWeekly struct {
	Weekdays  []string `json:"weekdays" minItems:"1" maxItems:"7" doc:"Days the window starts on: sun, mon, tue, wed, thu, fri, sat"`
	StartTime string   `json:"start_time" pattern:"^[0-2][0-9]:[0-5][0-9]$" doc:"Local HH:MM"`
	EndTime   string   `json:"end_time" pattern:"^[0-2][0-9]:[0-5][0-9]$" doc:"Local HH:MM; at or before start_time: the next day"`
	Timezone  string   `json:"timezone,omitempty" maxLength:"64" doc:"IANA zone; default the connection's scan_timezone (stored)"`
}

// BlackoutWindowIn is a blackout window to set: starts_at and ends_at, or weekly.
type BlackoutWindowIn struct {
	StartsAt *time.Time      `json:"starts_at,omitempty" doc:"Absolute window (with ends_at)"`
	EndsAt   *time.Time      `json:"ends_at,omitempty" doc:"After starts_at"`
	Weekly   *BlackoutWeekly `json:"weekly,omitempty" doc:"Weekly window (instead of starts_at and ends_at)"`
	Note     string          `json:"note,omitempty" maxLength:"200"`
}

// BlackoutsIn replaces a connection's blackout windows.
type BlackoutsIn struct {
	Windows []BlackoutWindowIn `json:"windows" maxItems:"50"`
}

func (s *Server) blackoutRoutes() {
	s.register(operation{ID: "listConnectionBlackouts", Method: http.MethodGet, Path: "/api/v1/connections/{connection_id}/blackouts",
		Tag: "connections", Params: []param{connectionIDParam}, Response: []BlackoutWindowOut{}, List: true, ListDefault: blackout.MaxWindows,
		Summary: "The connection's blackout windows: periods when Vigia sends the source nothing of its own accord",
		Desc: "Absolute or weekly windows, by the start of their occurrence. During one a scheduled scan waits for its end, a manual scan " +
			"answers 409 blackout_active, a rehearsal is blocked with reason blackout and after-scan reads of the source are skipped."}, s.handleBlackouts)
	s.register(operation{ID: "replaceConnectionBlackouts", Method: http.MethodPut, Path: "/api/v1/connections/{connection_id}/blackouts",
		Tag: "connections", Params: []param{connectionIDParam}, Body: BlackoutsIn{}, Response: []BlackoutWindowOut{},
		Summary: "Replace the connection's blackout windows (admin session)"}, s.handleBlackoutsReplace)
}

func toBlackoutsOut(ws []blackout.Window) []BlackoutWindowOut {
	out := make([]BlackoutWindowOut, 0, len(ws))
	for _, w := range ws {
		o := BlackoutWindowOut{StartsAt: w.StartsAt, EndsAt: w.EndsAt, Note: w.Note}
		if wk := w.Weekly; wk != nil {
			days := make([]string, 0, len(wk.Days))
			for _, d := range wk.Days {
				days = append(days, blackout.Weekdays[d])
			}
			o.Weekly = &BlackoutWeekly{Weekdays: days, StartTime: blackout.FormatClock(wk.Start), EndTime: blackout.FormatClock(wk.End),
				Timezone: wk.Timezone}
		}
		out = append(out, o)
	}
	return out
}

// blackoutFromIn converts a window to set; the errors name the window's bad fields.
func blackoutFromIn(i int, x BlackoutWindowIn) (blackout.Window, []vigia.FieldError) {
	at := func(f string) []string { return []string{"windows", strconv.Itoa(i), f} }
	w := blackout.Window{Note: x.Note}
	var fields []vigia.FieldError
	switch {
	case x.Weekly != nil && (x.StartsAt != nil || x.EndsAt != nil):
		fields = append(fields, vigia.Field("value_error", nil, at("weekly")...))
	case x.Weekly != nil:
		wk := &blackout.Weekly{Timezone: x.Weekly.Timezone}
		for _, name := range x.Weekly.Weekdays {
			d, ok := blackout.WeekdayOf(name)
			if !ok {
				fields = append(fields, vigia.Field("value_error", nil, at("weekdays")...))
				break
			}
			wk.Days = append(wk.Days, d)
		}
		var ok bool
		if wk.Start, ok = blackout.ParseClock(x.Weekly.StartTime); !ok {
			fields = append(fields, vigia.Field("value_error", nil, at("start_time")...))
		}
		if wk.End, ok = blackout.ParseClock(x.Weekly.EndTime); !ok {
			fields = append(fields, vigia.Field("value_error", nil, at("end_time")...))
		}
		w.Weekly = wk
	case x.StartsAt == nil || x.EndsAt == nil:
		fields = append(fields, vigia.Field("missing", nil, at("starts_at")...))
	default:
		w.StartsAt, w.EndsAt = *x.StartsAt, *x.EndsAt
	}
	return w, fields
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
	var fields []vigia.FieldError
	for i, x := range body.Windows {
		win, bad := blackoutFromIn(i, x)
		fields = append(fields, bad...)
		list = append(list, win)
	}
	if len(fields) > 0 {
		s.writeError(w, r, vigia.Invalid(fields...))
		return
	}
	ws, err := s.deps.Blackouts.Replace(r.Context(), in.Path("connection_id"), list)
	s.reply(w, r, err, func() any { return toBlackoutsOut(ws) })
}
