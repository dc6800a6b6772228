package orchestrator

import (
	"sort"
	"time"
)

// Health statuses, of a pipeline and of a dataset (its worst writer).
const (
	HealthFailing      = "failing"
	HealthLate         = "late"
	HealthHealthy      = "healthy"
	HealthNotMonitored = "not_monitored"
)

// MinCadenceIntervals is how many intervals between a pipeline's runs it takes to
// learn its cadence (three runs); before that a pipeline is never late.
const MinCadenceIntervals = 2

// LateFactor: a pipeline is late when no run started within this many cadences of its
// last one.
const LateFactor = 1.5

// Health is the health of the pipelines writing a dataset.
type Health struct {
	DatasetID string
	// Status is the worst of the pipelines' (failing, then late, then healthy), or
	// not_monitored when no reported run wrote the dataset.
	Status    string
	Pipelines []PipelineHealth
}

// PipelineHealth is one pipeline writing the dataset, judged from its latest runs.
type PipelineHealth struct {
	Orchestrator string
	Pipeline     string
	Status       string
	// LastRun is the pipeline's latest run (by start); FailingRun the latest failed or
	// aborted run when the pipeline is failing.
	LastRun             Run
	FailingRun          *Run
	LastSuccessAt       *time.Time
	LastFailureAt       *time.Time
	ConsecutiveFailures int
	// Cadence is the median interval between the starts of its runs, nil until
	// MinCadenceIntervals intervals were seen; ExpectedBy is when the next run is due
	// before the pipeline counts as late.
	Cadence    *time.Duration
	ExpectedBy *time.Time
	Runs       int
}

// Assess judges the pipelines of runs (all writing one dataset, any order) at now.
func Assess(runs []Run, now time.Time) Health {
	h := Health{Status: HealthNotMonitored, Pipelines: []PipelineHealth{}}
	type key struct{ orchestrator, pipeline string }
	groups := map[key][]Run{}
	var keys []key
	for _, r := range runs {
		k := key{r.Orchestrator, r.Pipeline}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].orchestrator != keys[j].orchestrator {
			return keys[i].orchestrator < keys[j].orchestrator
		}
		return keys[i].pipeline < keys[j].pipeline
	})
	rank := map[string]int{HealthNotMonitored: 0, HealthHealthy: 1, HealthLate: 2, HealthFailing: 3}
	for _, k := range keys {
		ph := assessPipeline(groups[k], now)
		h.Pipelines = append(h.Pipelines, ph)
		if rank[ph.Status] > rank[h.Status] {
			h.Status = ph.Status
		}
	}
	return h
}

// assessPipeline judges one pipeline's runs.
func assessPipeline(runs []Run, now time.Time) PipelineHealth {
	// Newest first; ties by the later update.
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].StartedAt.Equal(runs[j].StartedAt) {
			return runs[i].StartedAt.After(runs[j].StartedAt)
		}
		return runs[i].UpdatedAt.After(runs[j].UpdatedAt)
	})
	ph := PipelineHealth{Orchestrator: runs[0].Orchestrator, Pipeline: runs[0].Pipeline, LastRun: runs[0], Runs: len(runs)}
	counting := true
	for i := range runs {
		r := runs[i]
		at := r.StartedAt
		if r.EndedAt != nil {
			at = *r.EndedAt
		}
		switch r.Status {
		case StatusSuccess:
			if ph.LastSuccessAt == nil {
				ph.LastSuccessAt = &at
			}
			counting = false
		case StatusFailed, StatusAborted:
			if ph.LastFailureAt == nil {
				ph.LastFailureAt = &at
			}
			if counting {
				if ph.ConsecutiveFailures == 0 {
					ph.FailingRun = &runs[i]
				}
				ph.ConsecutiveFailures++
			}
		}
	}
	var gaps []time.Duration
	for i := 0; i+1 < len(runs); i++ {
		if g := runs[i].StartedAt.Sub(runs[i+1].StartedAt); g > 0 {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) >= MinCadenceIntervals {
		sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
		c := gaps[len(gaps)/2]
		if len(gaps)%2 == 0 {
			c = (gaps[len(gaps)/2-1] + gaps[len(gaps)/2]) / 2
		}
		by := runs[0].StartedAt.Add(time.Duration(float64(c) * LateFactor))
		ph.Cadence, ph.ExpectedBy = &c, &by
	}
	switch {
	case ph.ConsecutiveFailures > 0:
		ph.Status = HealthFailing
	case ph.ExpectedBy != nil && now.After(*ph.ExpectedBy):
		ph.Status = HealthLate
	default:
		ph.Status = HealthHealthy
	}
	return ph
}
