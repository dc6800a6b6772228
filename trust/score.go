package trust

import (
	"math"
	"sort"
	"time"
)

// Keys of trust blockers and warnings (contract part 2, Trust score); stable.
const (
	KeyCriticalIssue              = "critical_issue"
	KeySchemaChangeUnacknowledged = "schema_change_unacknowledged"
	KeyUnusedDataset              = "unused_dataset"
	KeyNoProfile                  = "no_profile"
	KeyWarningIssue               = "warning_issue"
	KeyStaleData                  = "stale_data"
	// KeyEmptyDataset: the last profile counted no row (and no rule says that is
	// expected): nothing in it can be used, whatever its other scores.
	KeyEmptyDataset = "empty_dataset"
	// KeyProfileFailed: the last scan could not profile the dataset (params code: the
	// stable reason, e.g. not_populated); what is known of it predates that scan.
	KeyProfileFailed = "profile_failed"
)

// emptyBlocker is the empty_dataset finding when it applies: profiled, zero rows, and no
// rule saying empty is expected.
func emptyBlocker(f Facts) (Finding, bool) {
	if !f.Profiled || f.RowCount == nil || *f.RowCount != 0 || f.EmptyExpected {
		return Finding{}, false
	}
	return Finding{Key: KeyEmptyDataset, Params: map[string]any{}}, true
}

// failureFinding is the profile_failed finding when the last scan failed on the dataset.
func failureFinding(f Facts) (Finding, bool) {
	if f.LastFailure == nil {
		return Finding{}, false
	}
	return Finding{Key: KeyProfileFailed, Params: map[string]any{"code": *f.LastFailure}}, true
}

// Component keys of the trust score, with their weights in percent (sum 100).
const (
	ComponentQuality    = "quality"
	ComponentIssues     = "issues"
	ComponentFreshness  = "freshness"
	ComponentStability  = "stability"
	ComponentMonitoring = "monitoring"
	ComponentOwnership  = "ownership"
)

var componentWeights = []struct {
	key    string
	weight float64
}{
	{ComponentQuality, 30}, {ComponentIssues, 25}, {ComponentFreshness, 15},
	{ComponentStability, 10}, {ComponentMonitoring, 10}, {ComponentOwnership, 10},
}

// blockerCap is the highest trust score a dataset with a blocker gets (grade E).
const blockerCap = 39.0

// Finding is a blocker or a warning: a stable key, its message (filled by the service
// in pt-PT from the message catalogue key MessageKey) and its params.
type Finding struct {
	Key     string
	Params  map[string]any
	Message string
}

// MessageKey is the catalogue key of a trust finding's message.
func (f Finding) MessageKey() string { return "trust.finding." + f.Key }

// Action is what would raise a component: a stable code and its message.
type Action struct {
	Code    string
	Params  map[string]any
	Message string
}

// MessageKey is the catalogue key of an action's message.
func (a Action) MessageKey() string { return "trust.action." + a.Code }

// Component is one part of the trust score with the evidence it was computed from and,
// below 100, the action that would raise it and the points the overall score would gain.
type Component struct {
	Key      string
	Weight   float64
	Score    float64
	Evidence map[string]any
	Action   *Action
	Gain     float64
}

// Score is a dataset's trust score: 0-100, grade A-E, components, blockers and warnings.
type Score struct {
	DatasetID  string
	Score      float64
	Grade      string
	Components []Component
	Blockers   []Finding
	Warnings   []Finding
	AsOf       time.Time
}

// Config tunes the trust rules.
type Config struct {
	// FreshnessSLA is how old the newest row may be (24 h by default).
	FreshnessSLA time.Duration
	// SchemaGraceDays is how long an unacknowledged schema change is a warning before it
	// becomes a blocker (7 days by default).
	SchemaGraceDays int
	// TTL of a decision by its value.
	TTLTrusted, TTLCaution, TTLUntrusted, TTLUnknown time.Duration
}

func (c Config) withDefaults() Config {
	if c.FreshnessSLA <= 0 {
		c.FreshnessSLA = 24 * time.Hour
	}
	if c.SchemaGraceDays <= 0 {
		c.SchemaGraceDays = 7
	}
	if c.TTLTrusted <= 0 {
		c.TTLTrusted = 15 * time.Minute
	}
	if c.TTLCaution <= 0 {
		c.TTLCaution = 5 * time.Minute
	}
	if c.TTLUntrusted <= 0 {
		c.TTLUntrusted = 2 * time.Minute
	}
	if c.TTLUnknown <= 0 {
		c.TTLUnknown = time.Minute
	}
	return c
}

// Grade maps a trust score to A (85+), B (70+), C (55+), D (40+) or E.
func Grade(score float64) string {
	switch {
	case score >= 85:
		return "A"
	case score >= 70:
		return "B"
	case score >= 55:
		return "C"
	case score >= 40:
		return "D"
	}
	return "E"
}

// ComputeScore computes a dataset's trust score at now from its facts, without an LLM:
//
//   - quality (30%): the last quality score (0 before the first scan);
//   - issues (25%): 100 − 40 per standing critical issue − 15 per warning issue;
//   - freshness (15%): 100 within the freshness SLA, falling linearly to 0 at twice the
//     SLA; 50 when no timestamp column measures it;
//   - stability (10%): 100 − 25 per unacknowledged schema change;
//   - monitoring (10%): 100 when scanned in the last 2 days, 60 within 7, 30 within 30,
//     else 0;
//   - ownership (10%): 100 in a domain with an owner, 50 in domains without one, 0 in
//     none.
//
// Blockers (never profiled, a standing critical issue, a schema change left
// unacknowledged past the grace days) cap the score at 39, grade E. Warnings (a schema
// change within the grace days, warning issues, stale data, no recorded use in 30 days
// and no queries) do not change the score; they are listed.
func ComputeScore(f Facts, now time.Time, cfg Config) Score {
	cfg = cfg.withDefaults()
	out := Score{DatasetID: f.DatasetID, AsOf: now, Blockers: []Finding{}, Warnings: []Finding{}}
	comp := map[string]Component{}

	// quality
	q := Component{Key: ComponentQuality, Evidence: map[string]any{"score": nil, "weakest_dimension": nil, "weakest_score": nil}}
	if f.LatestScore != nil {
		q.Score = clamp(*f.LatestScore, 0, 100)
		q.Evidence["score"] = *f.LatestScore
	}
	if d, v, ok := weakest(f.Dimensions); ok {
		q.Evidence["weakest_dimension"], q.Evidence["weakest_score"] = d, v
		q.Action = &Action{Code: "improve_dimension", Params: map[string]any{"dimension": d}}
	} else {
		q.Action = &Action{Code: "run_scan", Params: map[string]any{}}
	}
	comp[q.Key] = q

	// issues
	is := Component{Key: ComponentIssues, Score: clamp(100-40*float64(f.CriticalIssues)-15*float64(f.WarningIssues), 0, 100),
		Evidence: map[string]any{"critical": f.CriticalIssues, "warning": f.WarningIssues}}
	if f.CriticalIssues > 0 {
		is.Action = &Action{Code: "resolve_critical_issues", Params: map[string]any{"count": f.CriticalIssues}}
	} else {
		is.Action = &Action{Code: "resolve_warning_issues", Params: map[string]any{"count": f.WarningIssues}}
	}
	comp[is.Key] = is

	// freshness
	age, met := FreshnessOf(f, now, cfg.FreshnessSLA)
	fr := Component{Key: ComponentFreshness, Evidence: map[string]any{"age_hours": nil, "sla_hours": round2(cfg.FreshnessSLA.Hours()), "met": nil}}
	if age != nil {
		fr.Score = round2(100 * freshness(now.Sub(*f.LatestTimestamp), cfg.FreshnessSLA))
		fr.Evidence["age_hours"], fr.Evidence["met"] = *age, *met
		fr.Action = &Action{Code: "refresh_data", Params: map[string]any{"sla_hours": round2(cfg.FreshnessSLA.Hours())}}
	} else {
		fr.Score = 50
		fr.Action = &Action{Code: "add_timestamp_column", Params: map[string]any{}}
	}
	comp[fr.Key] = fr

	// stability
	oldest := 0
	if f.OldestUnackedSchemaChange != nil {
		oldest = int(math.Floor(now.Sub(*f.OldestUnackedSchemaChange).Hours() / 24))
		oldest = max(oldest, 0)
	}
	st := Component{Key: ComponentStability, Score: clamp(100-25*float64(f.UnackedSchemaChanges), 0, 100),
		Evidence: map[string]any{"unacknowledged_schema_changes": f.UnackedSchemaChanges, "oldest_days": oldest},
		Action:   &Action{Code: "acknowledge_schema_changes", Params: map[string]any{"count": f.UnackedSchemaChanges}}}
	comp[st.Key] = st

	// monitoring
	mo := Component{Key: ComponentMonitoring, Evidence: map[string]any{"last_scan_at": nil, "scans_30d": f.Scans30d}}
	if f.LastScanAt != nil {
		mo.Evidence["last_scan_at"] = f.LastScanAt.UTC().Format(time.RFC3339)
		switch since := now.Sub(*f.LastScanAt); {
		case since <= 48*time.Hour:
			mo.Score = 100
		case since <= 7*24*time.Hour:
			mo.Score = 60
		case since <= 30*24*time.Hour:
			mo.Score = 30
		}
	}
	mo.Action = &Action{Code: "schedule_scans", Params: map[string]any{}}
	comp[mo.Key] = mo

	// ownership
	ow := Component{Key: ComponentOwnership, Evidence: map[string]any{"domains": len(f.Domains), "owner": nil}}
	switch {
	case len(f.Domains) == 0:
		ow.Action = &Action{Code: "assign_domain", Params: map[string]any{}}
	default:
		ow.Score = 50
		ow.Action = &Action{Code: "set_domain_owner", Params: map[string]any{}}
		for _, d := range f.Domains {
			if d.OwnerName != nil && *d.OwnerName != "" {
				ow.Score, ow.Evidence["owner"] = 100, *d.OwnerName
				break
			}
		}
	}
	comp[ow.Key] = ow

	total := 0.0
	for _, cw := range componentWeights {
		c := comp[cw.key]
		c.Weight = cw.weight
		c.Score = round2(c.Score)
		if c.Score >= 100 {
			c.Action = nil
		} else {
			c.Gain = round2(cw.weight * (100 - c.Score) / 100)
		}
		total += cw.weight * c.Score / 100
		out.Components = append(out.Components, c)
	}

	// Blockers and warnings.
	failed, hasFailure := failureFinding(f)
	switch {
	case !f.Profiled && hasFailure:
		// Not "not analysed yet": analysed, and failed, for this reason.
		out.Blockers = append(out.Blockers, failed)
	case !f.Profiled:
		out.Blockers = append(out.Blockers, Finding{Key: KeyNoProfile, Params: map[string]any{}})
	case hasFailure:
		out.Warnings = append(out.Warnings, failed)
	}
	if fd, ok := emptyBlocker(f); ok {
		out.Blockers = append(out.Blockers, fd)
	}
	if f.CriticalIssues > 0 {
		out.Blockers = append(out.Blockers, Finding{Key: KeyCriticalIssue, Params: map[string]any{"count": f.CriticalIssues}})
	}
	if f.UnackedSchemaChanges > 0 {
		fd := Finding{Key: KeySchemaChangeUnacknowledged, Params: map[string]any{"count": f.UnackedSchemaChanges,
			"grace_days": cfg.SchemaGraceDays, "oldest_days": oldest}}
		if oldest > cfg.SchemaGraceDays {
			out.Blockers = append(out.Blockers, fd)
		} else {
			out.Warnings = append(out.Warnings, fd)
		}
	}
	if f.WarningIssues > 0 {
		out.Warnings = append(out.Warnings, Finding{Key: KeyWarningIssue, Params: map[string]any{"count": f.WarningIssues}})
	}
	if met != nil && !*met {
		out.Warnings = append(out.Warnings, Finding{Key: KeyStaleData, Params: map[string]any{"age_hours": *age,
			"sla_hours": round2(cfg.FreshnessSLA.Hours())}})
	}
	// Unused only when usage is measured: an unknown counter is not evidence of disuse.
	if f.Consumptions30d == 0 && f.QueriesPerDay != nil && *f.QueriesPerDay <= 0 {
		out.Warnings = append(out.Warnings, Finding{Key: KeyUnusedDataset, Params: map[string]any{}})
	}

	out.Score = round2(total)
	if len(out.Blockers) > 0 && out.Score > blockerCap {
		out.Score = blockerCap
	}
	out.Grade = Grade(out.Score)
	return out
}

// weakest returns the computed dimension with the lowest score, ties in contract order.
func weakest(dims map[string]*float64) (string, float64, bool) {
	order := []string{"completude", "unicidade", "validade", "atualidade", "consistencia"}
	best, bv, ok := "", 0.0, false
	for _, d := range order {
		v := dims[d]
		if v == nil {
			continue
		}
		if !ok || *v < bv {
			best, bv, ok = d, *v, true
		}
	}
	return best, bv, ok
}

// freshness maps an age to [0,1]: 1 within the SLA, linearly down to 0 at twice it; a
// negative age (clock skew) is fresh.
func freshness(age, sla time.Duration) float64 {
	if age <= sla {
		return 1
	}
	return clamp(2-float64(age)/float64(sla), 0, 1)
}

func clamp(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return lo
	}
	return math.Min(math.Max(v, lo), hi)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
