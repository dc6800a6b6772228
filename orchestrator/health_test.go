package orchestrator

import (
	"testing"
	"time"
)

func TestAssess(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(pipeline, id, status string, hours int) Run {
		start := t0.Add(time.Duration(hours) * time.Hour)
		end := start.Add(10 * time.Minute)
		return Run{ID: id, Orchestrator: "airflow", Pipeline: pipeline, RunID: id, Status: status, StartedAt: start, EndedAt: &end}
	}
	if h := Assess(nil, t0); h.Status != HealthNotMonitored || len(h.Pipelines) != 0 {
		t.Fatalf("no runs: %+v", h)
	}
	// Three hourly runs, the third failing: failing, naming the run.
	runs := []Run{run("a", "1", StatusSuccess, 0), run("a", "3", StatusFailed, 2), run("a", "2", StatusSuccess, 1)}
	h := Assess(runs, t0.Add(2*time.Hour+15*time.Minute))
	p := h.Pipelines[0]
	if h.Status != HealthFailing || p.FailingRun == nil || p.FailingRun.RunID != "3" || p.ConsecutiveFailures != 1 ||
		p.Cadence == nil || *p.Cadence != time.Hour || p.LastSuccessAt == nil || !p.LastSuccessAt.Equal(t0.Add(70*time.Minute)) {
		t.Fatalf("failing: %+v", h)
	}
	// A fourth run succeeds: healthy until 1.5 cadences pass without a run, then late.
	runs = append(runs, run("a", "4", StatusSuccess, 3))
	if h := Assess(runs, t0.Add(4*time.Hour+29*time.Minute)); h.Status != HealthHealthy || h.Pipelines[0].ConsecutiveFailures != 0 {
		t.Fatalf("healthy: %+v", h)
	}
	if h := Assess(runs, t0.Add(4*time.Hour+31*time.Minute)); h.Status != HealthLate || !h.Pipelines[0].ExpectedBy.Equal(t0.Add(4*time.Hour+30*time.Minute)) {
		t.Fatalf("late: %+v", h)
	}
	// Two runs teach no cadence: never late. A running run does not end a failure streak.
	two := []Run{run("b", "1", StatusFailed, 0), run("b", "2", StatusAborted, 1), run("b", "3", StatusRunning, 2)}
	h = Assess(two[:2], t0.Add(100*time.Hour))
	if h.Status != HealthFailing || h.Pipelines[0].Cadence != nil || h.Pipelines[0].ConsecutiveFailures != 2 || h.Pipelines[0].FailingRun.RunID != "2" {
		t.Fatalf("two failures: %+v", h)
	}
	if h := Assess(two, t0.Add(2*time.Hour)); h.Status != HealthFailing || h.Pipelines[0].LastRun.RunID != "3" {
		t.Fatalf("running after failures: %+v", h)
	}
	// The dataset's status is its worst writer's.
	mixed := append([]Run{run("c", "1", StatusSuccess, 0)}, two[:2]...)
	if h := Assess(mixed, t0.Add(2*time.Hour)); h.Status != HealthFailing || len(h.Pipelines) != 2 || h.Pipelines[0].Pipeline != "b" {
		t.Fatalf("worst writer: %+v", h)
	}
}
