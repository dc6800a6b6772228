package quality

import "sort"

// Verdict is whether a dataset can be used as it is.
type Verdict string

// Verdicts of the contract.
const (
	VerdictPass    Verdict = "pass"
	VerdictWarn    Verdict = "warn"
	VerdictFail    Verdict = "fail"
	VerdictUnknown Verdict = "unknown"
)

// DefaultWarnBelow is the overall score under which a dataset's verdict is at least warn.
const DefaultWarnBelow = 70.0

// VerdictIssue is one issue of the dataset as the verdict reads it.
type VerdictIssue struct {
	ID       string
	Type     string
	Severity Severity
	Status   IssueStatus
}

// VerdictInput is what the end of a scan knows about a dataset.
type VerdictInput struct {
	// Profiled is false when the dataset has no profile yet: the verdict is unknown.
	Profiled bool
	// Score is the overall score of the scan; nil when it could not be computed.
	Score *float64
	Rules []RuleOutcome
	// Issues are the dataset's issues; resolved and ignored ones are skipped here.
	Issues []VerdictIssue
	// WarnBelow is the score threshold; 0 means DefaultWarnBelow.
	WarnBelow float64
	// Empty is true when the profile counted no row and no rule says that is expected:
	// nothing was measured, so the dataset does not pass.
	Empty bool
}

// Reason codes of a verdict.
const (
	ReasonNoProfile       = "no_profile"
	ReasonCriticalRule    = "failed_rule_critical"
	ReasonCriticalIssue   = "critical_issue"
	ReasonWarningRule     = "failed_rule_warning"
	ReasonWarningIssue    = "warning_issue"
	ReasonScoreBelowLimit = "score_below_threshold"
	ReasonEmptyDataset    = "empty_dataset"
)

// VerdictReason is one cause of a verdict other than pass.
type VerdictReason struct {
	Code     string         `json:"code"`
	Severity Severity       `json:"severity"`
	Params   map[string]any `json:"params"`
}

// VerdictResult is a verdict with the rules that failed and why.
type VerdictResult struct {
	Verdict Verdict `json:"verdict"`
	// FailingRules are all failed rules, critical first, then by rule id (info rules
	// are listed but do not change the verdict).
	FailingRules []RuleOutcome   `json:"failing_rules"`
	Reasons      []VerdictReason `json:"reasons"`
}

// DecideVerdict computes a dataset's verdict at the end of a scan:
//
//   - unknown when the dataset has no profile;
//   - fail when a critical rule failed or a critical issue stands;
//   - warn when a warning rule failed, a warning issue stands, the score is below
//     WarnBelow, or the dataset is empty (Empty: zero rows, and no rule expects it);
//   - pass otherwise.
//
// Issues are counted by CountStanding (open, or acknowledged except schema_drift;
// modeling and bi_refresh never count), the same count the trust decision and readiness
// read; the critical_issue and warning_issue reasons carry the issue ids. A failed rule
// counts through its outcome (failed_rule_*), and its issue, while it stands, as an
// issue. not_evaluated rules never count. A rule or issue without a severity counts as
// warning; info counts for nothing.
func DecideVerdict(in VerdictInput) VerdictResult {
	out := VerdictResult{FailingRules: []RuleOutcome{}, Reasons: []VerdictReason{}}
	for _, r := range in.Rules {
		if r.Status == RuleFailed {
			out.FailingRules = append(out.FailingRules, r)
		}
	}
	sort.SliceStable(out.FailingRules, func(i, j int) bool {
		a, b := out.FailingRules[i], out.FailingRules[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		return a.RuleID < b.RuleID
	})
	if !in.Profiled {
		out.Verdict = VerdictUnknown
		out.Reasons = append(out.Reasons, VerdictReason{Code: ReasonNoProfile, Severity: SeverityWarning, Params: map[string]any{}})
		return out
	}

	var critRules, warnRules int
	for _, r := range out.FailingRules {
		switch r.Severity.rank() {
		case 0:
			critRules++
		case 1:
			warnRules++
		}
	}
	standing := CountStanding(in.Issues)
	critIssues, warnIssues := standing.Critical, standing.Warning
	add := func(code string, sev Severity, count int) {
		if count > 0 {
			out.Reasons = append(out.Reasons, VerdictReason{Code: code, Severity: sev, Params: map[string]any{"count": count}})
		}
	}
	add(ReasonCriticalRule, SeverityCritical, critRules)
	add(ReasonCriticalIssue, SeverityCritical, critIssues)
	if critIssues > 0 {
		out.Reasons[len(out.Reasons)-1].Params["issue_ids"] = standing.CriticalIDs
	}
	add(ReasonWarningRule, SeverityWarning, warnRules)
	add(ReasonWarningIssue, SeverityWarning, warnIssues)
	if warnIssues > 0 {
		out.Reasons[len(out.Reasons)-1].Params["issue_ids"] = standing.WarningIDs
	}
	limit := in.WarnBelow
	if limit <= 0 {
		limit = DefaultWarnBelow
	}
	low := in.Score != nil && *in.Score < limit
	if low {
		out.Reasons = append(out.Reasons, VerdictReason{Code: ReasonScoreBelowLimit, Severity: SeverityWarning,
			Params: map[string]any{"score": *in.Score, "threshold": limit}})
	}
	if in.Empty {
		out.Reasons = append(out.Reasons, VerdictReason{Code: ReasonEmptyDataset, Severity: SeverityWarning, Params: map[string]any{}})
	}

	switch {
	case critRules > 0 || critIssues > 0:
		out.Verdict = VerdictFail
	case warnRules > 0 || warnIssues > 0 || low || in.Empty:
		out.Verdict = VerdictWarn
	default:
		out.Verdict = VerdictPass
	}
	return out
}

// Stands reports whether the issue stands against its dataset: open, or acknowledged
// except an acknowledged schema_drift (acknowledging a schema change is how a team
// accepts it). Issues of type modeling (table design advice) and bi_refresh (a
// downstream BI refresh) describe no problem of the data and never stand; nor does
// slo_breach (a dimension under a domain's target), which the score already carries.
func (is VerdictIssue) Stands() bool {
	switch is.Type {
	case IssueTypeModeling, IssueTypeBIRefresh, IssueTypeSLOBreach:
		return false
	}
	switch is.Status {
	case IssueOpen:
		return true
	case IssueAcknowledged:
		return is.Type != IssueTypeSchemaDrift
	}
	return false
}

// IssueCounts are a dataset's standing issues by severity, with their ids (sorted).
type IssueCounts struct {
	Critical    int      `json:"critical"`
	Warning     int      `json:"warning"`
	CriticalIDs []string `json:"critical_issue_ids"`
	WarningIDs  []string `json:"warning_issue_ids"`
}

// CountStanding counts the standing issues (see VerdictIssue.Stands) by severity. It is
// the one count of a dataset's issues: the verdict, the trust score and decision, AI and
// domain readiness and the score explanation all read it, so they never disagree. An
// issue without a severity counts as warning; info issues count for nothing.
func CountStanding(issues []VerdictIssue) IssueCounts {
	out := IssueCounts{CriticalIDs: []string{}, WarningIDs: []string{}}
	for _, is := range issues {
		if !is.Stands() {
			continue
		}
		switch is.Severity.rank() {
		case 0:
			out.Critical++
			out.CriticalIDs = append(out.CriticalIDs, is.ID)
		case 1:
			out.Warning++
			out.WarningIDs = append(out.WarningIDs, is.ID)
		}
	}
	sort.Strings(out.CriticalIDs)
	sort.Strings(out.WarningIDs)
	return out
}

// HigherSeverity returns the more severe of a and b (critical, then warning, then
// info). An issue's severity is the highest of its detections while it stays open.
func HigherSeverity(a, b Severity) Severity {
	if a == "" {
		return b
	}
	if b != "" && b.rank() < a.rank() {
		return b
	}
	return a
}

// verdictRank orders verdicts from worst to best for aggregation.
func verdictRank(v Verdict) int {
	switch v {
	case VerdictFail:
		return 0
	case VerdictWarn:
		return 1
	case VerdictUnknown:
		return 2
	case VerdictPass:
		return 3
	}
	return 2
}

// AggregateVerdict is a domain's verdict from its datasets' verdicts: the worst of
// them in the order fail, warn, unknown, pass, so that a domain passes only when every
// dataset passes. A domain without datasets is unknown.
func AggregateVerdict(vs []Verdict) Verdict {
	if len(vs) == 0 {
		return VerdictUnknown
	}
	worst := VerdictPass
	for _, v := range vs {
		switch v {
		case VerdictFail, VerdictWarn, VerdictPass:
		default:
			v = VerdictUnknown // a value this package does not know is not a pass
		}
		if verdictRank(v) < verdictRank(worst) {
			worst = v
		}
	}
	return worst
}

// VerdictChanged reports whether a scan's verdict must emit the verdict-changed events:
// when it differs from the previous scan's. prev is nil for the dataset's first
// verdict, the baseline, which emits nothing.
func VerdictChanged(prev *Verdict, curr Verdict) bool {
	return prev != nil && *prev != curr
}
