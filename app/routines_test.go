package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/routine"
)

type routineOut struct {
	Key          string          `json:"key"`
	Cadence      string          `json:"cadence"`
	Weekday      *string         `json:"weekday"`
	LocalTime    string          `json:"local_time"`
	TimeZone     string          `json:"timezone"`
	Enabled      bool            `json:"enabled"`
	NextRunAt    *time.Time      `json:"next_run_at"`
	LastRunAt    *time.Time      `json:"last_run_at"`
	LastStatus   *string         `json:"last_status"`
	LastResult   json.RawMessage `json:"last_result"`
	LastReportID *string         `json:"last_report_id"`
}

// The routines catalog: listed with the workspace's time zone, switched by admins only,
// scheduled in that zone, run on the job queue (on demand and when due), with the last
// run and its result; the weekly report is readable by the workspace's API token.
func TestRoutinesCatalogScheduleAndRuns(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "routines")
	reportSeed(t, env, ws)
	if _, err := env.DB.Pool().Exec(ctx, `UPDATE workspaces SET timezone = 'America/Sao_Paulo', locale = 'es-ES' WHERE id = $1`, ws); err != nil {
		t.Fatal(err)
	}
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	member := env.MustSession(t, ws, vigia.RoleMember)
	token := env.MustToken(t, ws)

	list := func() map[string]routineOut {
		t.Helper()
		res := env.Do(t, http.MethodGet, "/api/v1/routines", token, nil)
		var out []routineOut
		res.JSON(t, &out)
		if res.Status != http.StatusOK {
			t.Fatalf("list: %d %s", res.Status, res.Body)
		}
		m := map[string]routineOut{}
		for _, r := range out {
			m[r.Key] = r
		}
		return m
	}
	all := list()
	weekly, daily := all[routine.KeyWeeklyExecutiveReport], all[routine.KeyDailySLABreachDigest]
	if monthly := all[routine.KeyMonthlyChargeback]; monthly.Cadence != "monthly" || monthly.LocalTime != "07:00" || monthly.Weekday != nil {
		t.Fatalf("monthly: %+v", monthly)
	}
	if len(all) != 3 || weekly.Cadence != "weekly" || weekly.Weekday == nil || *weekly.Weekday != "monday" || weekly.LocalTime != "08:00" ||
		weekly.TimeZone != "America/Sao_Paulo" || weekly.Enabled || weekly.NextRunAt != nil || daily.Cadence != "daily" || daily.Weekday != nil ||
		string(daily.LastResult) != "null" {
		t.Fatalf("catalog: %+v", all)
	}

	for _, c := range []struct {
		cred   string
		status int
	}{{token, http.StatusForbidden}, {member, http.StatusForbidden}} {
		if res := env.Do(t, http.MethodPut, "/api/v1/routines/"+routine.KeyWeeklyExecutiveReport, c.cred, map[string]any{"enabled": true}); res.Status != c.status {
			t.Fatalf("switch: %d %s", res.Status, res.Body)
		}
	}
	if res := env.Do(t, http.MethodPut, "/api/v1/routines/quarterly_nonexistent_routine", admin, map[string]any{"enabled": true}); res.Status != http.StatusNotFound {
		t.Fatalf("unknown routine: %d %s", res.Status, res.Body)
	}
	res := env.Do(t, http.MethodPut, "/api/v1/routines/"+routine.KeyWeeklyExecutiveReport, admin, map[string]any{"enabled": true})
	var on routineOut
	res.JSON(t, &on)
	saoPaulo, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusOK || !on.Enabled || on.NextRunAt == nil {
		t.Fatalf("enable: %d %s", res.Status, res.Body)
	}
	if local := on.NextRunAt.In(saoPaulo); local.Weekday() != time.Monday || local.Hour() != 8 || local.Minute() != 0 ||
		!on.NextRunAt.After(time.Now()) || on.NextRunAt.After(time.Now().Add(7*24*time.Hour)) {
		t.Fatalf("next run %s (%s local)", on.NextRunAt, on.NextRunAt.In(saoPaulo))
	}

	// Due: the scheduler claims the run once and moves the next one a week on.
	if _, err := env.DB.Pool().Exec(ctx, `UPDATE routines SET next_run_at = now() - interval '1 minute' WHERE workspace_id = $1`, ws); err != nil {
		t.Fatal(err)
	}
	n, err := env.App.Routines.EnqueueDue(ctx)
	if err != nil || n < 1 {
		t.Fatalf("enqueue due: %d %v", n, err)
	}
	if n, _ := env.App.Routines.EnqueueDue(ctx); n != 0 {
		t.Fatalf("claimed twice: %d", n)
	}
	if ran, err := env.App.Jobs.RunOne(ctx, routine.JobKind); !ran || err != nil {
		t.Fatalf("run: %v %v", ran, err)
	}
	weekly = list()[routine.KeyWeeklyExecutiveReport]
	if weekly.LastStatus == nil || *weekly.LastStatus != routine.StatusSucceeded || weekly.LastRunAt == nil || weekly.LastReportID == nil ||
		weekly.NextRunAt == nil || !weekly.NextRunAt.After(time.Now()) {
		t.Fatalf("after the run: %+v %s", weekly, weekly.LastResult)
	}
	res = env.Do(t, http.MethodGet, "/api/v1/reports/"+*weekly.LastReportID, token, nil)
	var rep struct {
		Persona   string  `json:"persona"`
		Language  *string `json:"language"`
		RoutineID *string `json:"routine_id"`
	}
	res.JSON(t, &rep)
	if res.Status != http.StatusOK || rep.Persona != "executive" || rep.Language == nil || *rep.Language != "es" ||
		rep.RoutineID == nil || *rep.RoutineID != routine.KeyWeeklyExecutiveReport {
		t.Fatalf("routine's report: %d %s", res.Status, res.Body)
	}

	// On demand, disabled or not: the digest counts the issue that breached in the last day.
	if _, err := env.DB.Pool().Exec(ctx, `UPDATE issues SET sla_breached_at = now() - interval '2 hours' WHERE workspace_id = $1 AND severity = 'critical'`, ws); err != nil {
		t.Fatal(err)
	}
	if res := env.Do(t, http.MethodPost, "/api/v1/routines/"+routine.KeyDailySLABreachDigest+"/run", member, nil); res.Status != http.StatusForbidden {
		t.Fatalf("member run: %d", res.Status)
	}
	if res := env.Do(t, http.MethodPost, "/api/v1/routines/"+routine.KeyDailySLABreachDigest+"/run", admin, nil); res.Status != http.StatusAccepted {
		t.Fatalf("run now: %d %s", res.Status, res.Body)
	}
	if ran, err := env.App.Jobs.RunOne(ctx, routine.JobKind); !ran || err != nil {
		t.Fatalf("run digest: %v %v", ran, err)
	}
	daily = list()[routine.KeyDailySLABreachDigest]
	var digest struct {
		Breached   int            `json:"breached"`
		BySeverity map[string]int `json:"by_severity"`
	}
	if err := json.Unmarshal(daily.LastResult, &digest); err != nil || daily.Enabled || daily.LastStatus == nil ||
		*daily.LastStatus != routine.StatusSucceeded || digest.Breached != 1 || digest.BySeverity["critical"] != 1 {
		t.Fatalf("digest: %+v %s", daily, daily.LastResult)
	}

	// Another workspace sees its own, untouched catalog.
	other := env.MustToken(t, env.MustWorkspace(t, "routines-other"))
	res = env.Do(t, http.MethodGet, "/api/v1/routines", other, nil)
	var theirs []routineOut
	res.JSON(t, &theirs)
	for _, r := range theirs {
		if r.Enabled || r.LastRunAt != nil {
			t.Fatalf("other workspace: %+v", r)
		}
	}
}
