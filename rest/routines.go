package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/vigia-data/vigia/routine"
)

// RoutineService is what the transport needs of routines.
type RoutineService interface {
	Routines(ctx context.Context) ([]routine.Routine, error)
	SetEnabled(ctx context.Context, key string, enabled bool) (routine.Routine, error)
	RunNow(ctx context.Context, key string) (routine.Routine, error)
}

// RoutineOut is a routine of the catalog with its state in the workspace.
type RoutineOut struct {
	Key          string          `json:"key" enum:"weekly_executive_report,daily_sla_breach_digest,monthly_chargeback_snapshot"`
	Cadence      string          `json:"cadence" enum:"weekly,daily,monthly" doc:"monthly routines run on the 1st"`
	Weekday      *string         `json:"weekday" doc:"Day of a weekly routine (monday...); null for daily ones"`
	LocalTime    string          `json:"local_time" doc:"HH:MM in the workspace's time zone"`
	TimeZone     string          `json:"timezone" doc:"The workspace's IANA time zone"`
	Enabled      bool            `json:"enabled"`
	NextRunAt    *time.Time      `json:"next_run_at" doc:"null while disabled"`
	LastRunAt    *time.Time      `json:"last_run_at"`
	LastStatus   *string         `json:"last_status" enum:"succeeded,failed"`
	LastResult   json.RawMessage `json:"last_result" doc:"The last run's figures: report_id and score for the weekly report; since, until, breached and by_severity for the digest; month and rows (the chargeback rows of the month before) for the chargeback snapshot; null before the first run"`
	LastReportID *string         `json:"last_report_id" doc:"The report the last run wrote, if any"`
}

// RoutineUpdateIn switches a routine.
type RoutineUpdateIn struct {
	Enabled bool `json:"enabled"`
}

var routineKeyParam = param{Name: "routine_key", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) routineRoutes() {
	s.register(operation{ID: "listRoutines", Method: http.MethodGet, Path: "/api/v1/routines", Tag: "routines",
		Summary: "The catalog of scheduled routines with their schedule, state and last run", Response: []RoutineOut{},
		Desc: "weekly_executive_report writes an executive workspace_overview report (in the workspace's language) every Monday " +
			"at 08:00; daily_sla_breach_digest counts, every day at 08:00, the issues that passed their resolution target in the " +
			"24 hours before; monthly_chargeback_snapshot records, on the 1st at 07:00, the chargeback of the month before (as " +
			"GET /bi/chargeback, over every dataset of the workspace). Times are in the workspace's time zone; runs go on the job " +
			"queue. Routines start disabled."},
		s.handleRoutineList)
	s.register(operation{ID: "updateRoutine", Method: http.MethodPut, Path: "/api/v1/routines/{routine_key}", Tag: "routines",
		Summary: "Enable or disable a routine (admin session)", Params: []param{routineKeyParam}, Body: RoutineUpdateIn{},
		Response: RoutineOut{}, Desc: "Enabling schedules the next run in the workspace's time zone; 404 for a key not in the catalog."},
		s.handleRoutineUpdate)
	s.register(operation{ID: "runRoutine", Method: http.MethodPost, Path: "/api/v1/routines/{routine_key}/run", Tag: "routines",
		Status: http.StatusAccepted, Summary: "Queue a run of a routine now (admin session)", Params: []param{routineKeyParam},
		Response: RoutineOut{}, Desc: "The run goes on the job queue; its outcome shows in last_run_at, last_status and last_result."},
		s.handleRoutineRun)
}

func toRoutineOut(r routine.Routine) RoutineOut {
	out := RoutineOut{Key: r.Key, Cadence: r.Cadence, LocalTime: time.Date(0, 1, 1, r.Hour, 0, 0, 0, time.UTC).Format("15:04"),
		TimeZone: r.TimeZone, Enabled: r.Enabled, NextRunAt: r.NextRunAt, LastRunAt: r.LastRunAt, LastStatus: r.LastStatus,
		LastResult: r.LastResult, LastReportID: r.LastReportID}
	if r.Cadence == routine.Weekly {
		d := strings.ToLower(r.Weekday.String())
		out.Weekday = &d
	}
	if out.LastResult == nil {
		out.LastResult = json.RawMessage("null")
	}
	return out
}

func (s *Server) handleRoutineList(w http.ResponseWriter, r *http.Request, _ *input) {
	all, err := s.deps.Routines.Routines(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]RoutineOut, 0, len(all))
	for _, rt := range all {
		out = append(out, toRoutineOut(rt))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleRoutineUpdate(w http.ResponseWriter, r *http.Request, in *input) {
	var body RoutineUpdateIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	rt, err := s.deps.Routines.SetEnabled(r.Context(), in.Path("routine_key"), body.Enabled)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toRoutineOut(rt))
}

func (s *Server) handleRoutineRun(w http.ResponseWriter, r *http.Request, in *input) {
	rt, err := s.deps.Routines.RunNow(r.Context(), in.Path("routine_key"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, toRoutineOut(rt))
}
