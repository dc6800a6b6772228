package trust

import (
	"time"
)

// Decisions (contract part 3).
const (
	DecisionTrusted   = "trusted"
	DecisionCaution   = "caution"
	DecisionUntrusted = "untrusted"
	DecisionUnknown   = "unknown"
)

// ValidDecision reports whether d is one of the four decisions.
func ValidDecision(d string) bool {
	switch d {
	case DecisionTrusted, DecisionCaution, DecisionUntrusted, DecisionUnknown:
		return true
	}
	return false
}

// Reason codes of a decision; stable.
const (
	ReasonCriticalIncident  = "critical_incident"
	ReasonReadinessBlocker  = "readiness_blocker"
	ReasonVerdictFail       = "verdict_fail"
	ReasonVerdictWarn       = "verdict_warn"
	ReasonWarningIncident   = "warning_incident"
	ReasonReadinessWarning  = "readiness_warning"
	ReasonContractViolation = "contract_violation"
	ReasonNoProfile         = "no_profile"
	// ReasonProfileFailed replaces no_profile when scans tried and failed (params code).
	ReasonProfileFailed = "profile_failed"
	// ReasonPipelineFailing and ReasonPipelineLate name a pipeline writing the dataset
	// whose latest finished run failed, or whose next run is overdue (orchestrator runs;
	// params orchestrator, pipeline, run_id and consecutive_failures or expected_by).
	ReasonPipelineFailing = "pipeline_failing"
	ReasonPipelineLate    = "pipeline_late"
)

// Severities of a reason.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
)

// Reason is one cause of a decision. Finding is the readiness finding behind a
// readiness_blocker or readiness_warning reason.
type Reason struct {
	Code     string
	Severity string
	Params   map[string]any
	Finding  *Finding
	Message  string // pt-PT, filled by the service
}

// MessageKey is the catalogue key of a reason's message.
func (r Reason) MessageKey() string { return "trust.reason." + r.Code }

// Decision answers "may this dataset be used for this purpose now?".
type Decision struct {
	DatasetID         string
	Purpose           string
	Decision          string
	Reasons           []Reason
	Verdict           string
	ReadinessScore    float64
	ReadinessBlockers []string
	// Freshness: observed age of the newest row, the SLA, where the SLA comes from and
	// whether it is met; nil without a measuring timestamp (SLAHours is always set).
	ObservedAgeHours *float64
	SLAHours         *float64
	SLASource        *string
	FreshnessMet     *bool
	OpenCritical     int
	OpenWarning      int
	PIIColumns       []string
	PIIUnmasked      []string
	Contract         ContractFact
	LastScanAt       *time.Time
	AsOf             time.Time
	ValidUntil       time.Time
	TTL              time.Duration
	// RecommendedKey is the catalogue key of recommended_action_pt (params Purpose).
	RecommendedKey  string
	Recommended     string
	RequiredActions []string
}

// actionOf is the action a reason requires.
var actionOf = map[string]string{
	ReasonCriticalIncident:        "resolve_critical_issues",
	ReasonVerdictFail:             "fix_failing_checks",
	ReasonContractViolation:       "restore_contract",
	ReasonVerdictWarn:             "review_warnings",
	ReasonWarningIncident:         "resolve_warning_issues",
	ReasonNoProfile:               "run_scan",
	ReasonProfileFailed:           "fix_profile_failure",
	ReasonPipelineFailing:         "fix_pipeline",
	ReasonPipelineLate:            "fix_pipeline",
	KeyEmptyDataset:               "load_data",
	KeyPIIUnmasked:                "mask_pii_columns",
	KeyStaleData:                  "refresh_data",
	KeySchemaChangeUnacknowledged: "acknowledge_schema_changes",
	KeySmallDataset:               "add_rows",
	KeyLowCompletude:              "improve_completude",
	KeyLowUnicidade:               "remove_duplicates",
	KeyNoTimestamp:                "add_timestamp_column",
	KeyWarningIssue:               "resolve_warning_issues",
	KeyCriticalIssue:              "resolve_critical_issues",
	KeyContractViolated:           "restore_contract",
}

// Decide turns a dataset's facts and its readiness into the decision for purpose (a
// normalized purpose) at now:
//
//   - unknown when the dataset was never profiled (reason no_profile);
//   - untrusted when a critical reason stands: critical_incident (standing critical
//     issues, counted as the verdict counts them and named in params.issue_ids),
//     readiness_blocker (each blocker of the purpose's readiness other than the
//     critical issues themselves), verdict_fail, contract_violation;
//   - caution when only warning reasons stand: verdict_warn, warning_incident,
//     readiness_warning (each warning of the purpose's readiness other than those),
//     pipeline_failing and pipeline_late (each pipeline writing the dataset that is
//     failing or late, by name);
//   - trusted otherwise.
//
// The decision is valid for a TTL that shortens as it worsens (trusted 15 min, caution
// 5 min, untrusted 2 min, unknown 1 min by default).
func Decide(f Facts, r Readiness, purpose string, now time.Time, cfg Config) Decision {
	cfg = cfg.withDefaults()
	u := r.UseCase(purpose)
	sla := round2(cfg.FreshnessSLA.Hours())
	source := "default"
	age, met := FreshnessOf(f, now, cfg.FreshnessSLA)
	d := Decision{DatasetID: f.DatasetID, Purpose: purpose, Verdict: f.Verdict, ReadinessScore: u.Score,
		ReadinessBlockers: []string{}, ObservedAgeHours: age, SLAHours: &sla, SLASource: &source, FreshnessMet: met,
		OpenCritical: f.CriticalIssues, OpenWarning: f.WarningIssues, PIIColumns: r.PIIColumns, PIIUnmasked: r.PIIUnmasked,
		Contract: f.Contract, LastScanAt: f.LastScanAt, AsOf: now, Reasons: []Reason{}, RequiredActions: []string{}}
	if d.Verdict == "" {
		d.Verdict = "unknown"
	}
	for _, b := range u.Blockers {
		d.ReadinessBlockers = append(d.ReadinessBlockers, b.Key)
	}

	if !f.Profiled {
		r := Reason{Code: ReasonNoProfile, Severity: SeverityWarning, Params: map[string]any{}}
		if fd, ok := failureFinding(f); ok {
			r = Reason{Code: ReasonProfileFailed, Severity: SeverityWarning, Params: fd.Params}
		}
		d.Reasons = append(d.Reasons, r)
	} else {
		if f.CriticalIssues > 0 {
			d.Reasons = append(d.Reasons, Reason{Code: ReasonCriticalIncident, Severity: SeverityCritical,
				Params: map[string]any{"count": f.CriticalIssues, "issue_ids": idsOrEmpty(f.CriticalIssueIDs)}})
		} else if f.Verdict == "fail" {
			d.Reasons = append(d.Reasons, Reason{Code: ReasonVerdictFail, Severity: SeverityCritical, Params: map[string]any{}})
		}
		if f.Contract.Active && !f.Contract.Valid {
			violations := f.Contract.Violations
			if violations == nil {
				violations = []string{}
			}
			d.Reasons = append(d.Reasons, Reason{Code: ReasonContractViolation, Severity: SeverityCritical,
				Params: map[string]any{"version": f.Contract.Version, "violations": violations}})
		}
		for _, b := range u.Blockers {
			switch b.Key {
			case KeyCriticalIssue, KeyVerdictFail, KeyContractViolated, KeyNoProfile:
				continue // said by the reasons above
			}
			fd := b
			d.Reasons = append(d.Reasons, Reason{Code: ReasonReadinessBlocker, Severity: SeverityCritical,
				Params: map[string]any{"blocker": b.Key, "purpose": purpose}, Finding: &fd})
		}
		if f.WarningIssues > 0 {
			d.Reasons = append(d.Reasons, Reason{Code: ReasonWarningIncident, Severity: SeverityWarning,
				Params: map[string]any{"count": f.WarningIssues, "issue_ids": idsOrEmpty(f.WarningIssueIDs)}})
		} else if f.Verdict == "warn" {
			d.Reasons = append(d.Reasons, Reason{Code: ReasonVerdictWarn, Severity: SeverityWarning, Params: map[string]any{}})
		}
		for _, w := range u.Warnings {
			switch w.Key {
			case KeyWarningIssue, KeyVerdictWarn:
				continue
			}
			fd := w
			d.Reasons = append(d.Reasons, Reason{Code: ReasonReadinessWarning, Severity: SeverityWarning,
				Params: map[string]any{"warning": w.Key, "purpose": purpose}, Finding: &fd})
		}
	}

	// A failing or late writer is said whether or not the dataset was profiled.
	for _, pf := range f.Pipelines {
		params := map[string]any{"orchestrator": pf.Orchestrator, "pipeline": pf.Pipeline, "run_id": pf.RunID}
		code := ReasonPipelineLate
		if pf.Status == PipelineFailing {
			code = ReasonPipelineFailing
			params["consecutive_failures"] = pf.ConsecutiveFailures
		} else if pf.ExpectedBy != nil {
			params["expected_by"] = pf.ExpectedBy.UTC().Format(time.RFC3339)
		}
		d.Reasons = append(d.Reasons, Reason{Code: code, Severity: SeverityWarning, Params: params})
	}

	critical, warning := 0, 0
	for _, rs := range d.Reasons {
		if rs.Severity == SeverityCritical {
			critical++
		} else {
			warning++
		}
	}
	switch {
	case !f.Profiled:
		d.Decision, d.TTL = DecisionUnknown, cfg.TTLUnknown
	case critical > 0:
		d.Decision, d.TTL = DecisionUntrusted, cfg.TTLUntrusted
	case warning > 0:
		d.Decision, d.TTL = DecisionCaution, cfg.TTLCaution
	default:
		d.Decision, d.TTL = DecisionTrusted, cfg.TTLTrusted
	}
	d.ValidUntil = now.Add(d.TTL)
	d.RecommendedKey = "trust.recommended." + d.Decision

	seen := map[string]bool{}
	for _, rs := range d.Reasons {
		code := rs.Code
		if rs.Finding != nil {
			code = rs.Finding.Key
		}
		if a, ok := actionOf[code]; ok && !seen[a] {
			seen[a] = true
			d.RequiredActions = append(d.RequiredActions, a)
		}
	}
	return d
}

// idsOrEmpty keeps a list of issue ids a JSON array, never null.
func idsOrEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
