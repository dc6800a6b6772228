package scan

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/source"
)

// IssueTypeRule is the type of the issues failed rules open; the subtype is the rule
// type. A rule has at most one current issue (see applyRules).
const IssueTypeRule = "rule"

// Events of issue history rows written by scans for rule issues.
const (
	EventOpened             = "opened"
	EventAutoResolved       = "auto_resolved"       // the rule passed again: resolved by the scan
	EventVerified           = "verified"            // a resolved issue's rule passed: resolution confirmed
	EventVerificationFailed = "verification_failed" // a resolved issue's rule still fails: reopened
	EventRulePassed         = "rule_passed"         // an ignored issue's rule passed: the next failure opens a new issue
)

// RuleInput is what a rule evaluator gets for one dataset of a scan.
type RuleInput struct {
	Now          time.Time
	ScanID       string
	ConnectionID string
	Dataset      DatasetRef
	Table        source.Table // as discovered by this scan
	Profile      *source.TableProfile
}

// RuleResult is one rule's result in a scan: the rule's last_result, its score
// outcome, and the title of the issue it opens when it failed.
type RuleResult struct {
	RuleID   string
	RuleType string
	Column   string
	Severity string
	Status   quality.RuleStatus
	// Observed and Threshold are the rule's measure and limit (nil when not_evaluated
	// before anything was measured).
	Observed, Threshold *float64
	// ReasonCode and ReasonParams say why a rule was not evaluated (or, for a failed
	// rule, what failed); the params may name a reference dataset, which readers that
	// cannot see it never get.
	ReasonCode   string
	ReasonParams map[string]any
	// Title (pt-PT), TitleKey and TitleParams describe the issue of a failed rule.
	Title       string
	TitleKey    string
	TitleParams map[string]any
}

// RuleEvaluator evaluates a dataset's active rules on its source during a scan. A rule
// that cannot be checked is not_evaluated with a reason; an error means the scan of the
// dataset cannot go on (the store failed, the scan was stopped).
type RuleEvaluator interface {
	EvaluateRules(ctx context.Context, src source.Source, in RuleInput) ([]RuleResult, error)
}

// ReportedRules is what a RuleEvaluator may also answer: the last passed or failed
// results of a dataset's rules reported from outside scans (dbt tests), as score
// outcomes.
type ReportedRules interface {
	ReportedOutcomes(ctx context.Context, datasetID string) ([]quality.RuleOutcome, error)
}

// DatasetExtras is what a Store may also answer: which datasets of a connection have
// active rules that scans evaluate, active rules reported from outside (dbt tests) and
// domains. A scan reads it once, so that its datasets without any (most of a large
// source) skip the three per-dataset reads of rules, reported outcomes and domain
// weights. Rules and domains added while the scan runs count from the next scan.
type DatasetExtras interface {
	DatasetExtras(ctx context.Context, connectionID string) (Extras, error)
}

// Extras are the dataset ids (as keys) with rules, reported rules and domains.
type Extras struct {
	Rules, Reported, Domains map[string]bool
}

// IssueTransition is a status change (or a history event) of an existing issue that a
// scan decides, written with its history row (origin scan:<id>).
type IssueTransition struct {
	IssueID string
	From    string
	To      string
	Event   string
	// Note is kept in the history row (why a scan resolved it).
	Note string
	// ClearCurrent ends the issue's turn as its rule's current issue.
	ClearCurrent bool
}

// applyRules turns this scan's rule results into score outcomes, new issues,
// re-detections and transitions of the rules' current issues:
//
//   - failed, no current issue: a new open issue (type rule, subtype the rule type);
//   - failed, current issue open, acknowledged or ignored: detected again (status kept);
//   - failed, current issue resolved (awaiting verification): reopened
//     (verification_failed) and detected again;
//   - passed, current issue open or acknowledged: resolved by the scan (auto_resolved);
//   - passed, current issue resolved: the resolution is confirmed (verified);
//   - passed, current issue ignored: it stays ignored and stops being current, so the
//     next failure opens a new issue;
//   - not_evaluated: nothing changes and nothing counts.
func (res *DatasetResult) applyRules(in EvaluateInput) []quality.RuleOutcome {
	ap := ApplyRuleResults(in.Rules, in.Prev.Issues)
	res.RuleResults = append(res.RuleResults, in.Rules...)
	res.NewIssues = append(res.NewIssues, ap.NewIssues...)
	res.Redetected = append(res.Redetected, ap.Redetected...)
	res.Transitions = append(res.Transitions, ap.Transitions...)
	return ap.Outcomes
}

// RuleRun is rule results of one dataset reported from outside a scan (a dbt run),
// with what they do to the rules' issues (see ApplyRuleResults). Origin is the
// history rows' origin (dbt:<invocation_id>).
type RuleRun struct {
	WorkspaceID   string
	DatasetID     string
	DBTInvocation string
	Origin        string
	At            time.Time
	RuleResults   []RuleResult
	NewIssues     []NewIssue
	Redetected    []Redetection
	Transitions   []IssueTransition
}

// RuleApplication is what rule results do to the rules' issues (see applyRules): the
// issues to open, those detected again, the transitions of current ones, and the
// outcomes that count in a score.
type RuleApplication struct {
	NewIssues   []NewIssue
	Redetected  []Redetection
	Transitions []IssueTransition
	Outcomes    []quality.RuleOutcome
}

// ApplyRuleResults applies rule results to the rules' current issues among issues, by
// the workflow applyRules describes. Scans use it, and so do rule results reported from
// outside (dbt test results), so that both follow one issue workflow.
func ApplyRuleResults(results []RuleResult, issues []KnownIssue) RuleApplication {
	current := map[string]KnownIssue{}
	for _, is := range issues {
		if is.RuleID != "" && is.RuleCurrent {
			current[is.RuleID] = is
		}
	}
	var res RuleApplication
	outcomes := make([]quality.RuleOutcome, 0, len(results))
	for _, r := range results {
		if r.Status != quality.RulePassed && r.Status != quality.RuleFailed {
			continue
		}
		outcomes = append(outcomes, quality.RuleOutcome{RuleID: r.RuleID, RuleType: r.RuleType, Column: r.Column,
			Severity: quality.Severity(r.Severity), Status: r.Status})
		is, has := current[r.RuleID]
		details := map[string]any{"rule_id": r.RuleID, "rule_type": r.RuleType, "observed": r.Observed, "threshold": r.Threshold}
		if r.Status == quality.RuleFailed {
			switch {
			case !has:
				res.NewIssues = append(res.NewIssues, NewIssue{ID: vigia.NewID(), Type: IssueTypeRule, Subtype: r.RuleType,
					Severity: r.Severity, Title: r.Title, TitleKey: r.TitleKey, TitleParams: r.TitleParams, Column: r.Column,
					RuleID: r.RuleID, Details: details})
				continue
			case is.Status == string(quality.IssueResolved):
				res.Transitions = append(res.Transitions, IssueTransition{IssueID: is.ID, From: is.Status,
					To: string(quality.IssueOpen), Event: EventVerificationFailed})
			}
			sev := quality.HigherSeverity(quality.Severity(is.Severity), quality.Severity(r.Severity))
			res.Redetected = append(res.Redetected, Redetection{IssueID: is.ID, Severity: string(sev), Details: details})
			continue
		}
		if !has {
			continue
		}
		switch is.Status {
		case string(quality.IssueOpen), string(quality.IssueAcknowledged):
			res.Transitions = append(res.Transitions, IssueTransition{IssueID: is.ID, From: is.Status,
				To: string(quality.IssueResolved), Event: EventAutoResolved, ClearCurrent: true})
		case string(quality.IssueResolved):
			res.Transitions = append(res.Transitions, IssueTransition{IssueID: is.ID, From: is.Status,
				To: is.Status, Event: EventVerified, ClearCurrent: true})
		default:
			res.Transitions = append(res.Transitions, IssueTransition{IssueID: is.ID, From: is.Status,
				To: is.Status, Event: EventRulePassed, ClearCurrent: true})
		}
	}
	res.Outcomes = outcomes
	return res
}
