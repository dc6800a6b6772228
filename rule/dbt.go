package rule

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

// DBTTest is one dbt test result on a dataset, as the lineage service maps it from the
// run's manifest: the test's unique_id, generic name (not_null, unique,
// accepted_values, relationships, … or empty for a singular test), column, kwargs,
// the dataset a relationships test refers to, status (pass, fail, warn, error,
// skipped) and failing rows.
type DBTTest struct {
	UniqueID     string
	DatasetID    string
	TestName     string
	Column       string
	Kwargs       map[string]any
	RefDatasetID string
	Status       string
	Failures     *int64
}

// DBTSummary is what a dbt run's tests did.
type DBTSummary struct {
	Recorded       int // test results recorded as rule results
	IssuesOpened   int
	IssuesResolved int // resolved or verified by a passing test
}

// IssueOriginDBT prefixes the history origin of issue changes a dbt run made
// (dbt:<invocation_id>).
const IssueOriginDBT = "dbt:"

// RecordDBTTests records a dbt run's test results as the results of the tests' rules,
// one rule per test unique_id on the tested model's dataset: not_null, unique,
// accepted_values and relationships (as referential, when the referenced model is a
// dataset of the workspace) keep their type, any other test is a dbt_test rule. Such
// rules are never evaluated by scans. pass passes, fail and error fail, warn passes
// (dbt's own verdict: a warning does not fail the run), skipped is not_evaluated. A
// failing test opens or updates its rule's one current issue; a passing one resolves or
// verifies it, by the same workflow as scans (scan.ApplyRuleResults). The caller is an
// API token or an admin session (see lineage's MayImportDBT), checked by the caller.
func (s *Service) RecordDBTTests(ctx context.Context, invocationID string, tests []DBTTest) (DBTSummary, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return DBTSummary{}, err
	}
	if len(tests) == 0 {
		return DBTSummary{}, nil
	}
	now := s.clock.Now().UTC()
	creator := "token:" + p.TokenID
	if !p.IsToken() {
		creator = "user:" + p.UserID
	}
	ids := make([]string, 0, len(tests))
	for _, t := range tests {
		ids = append(ids, t.DatasetID)
	}
	details, err := s.datasets.DatasetDetails(ctx, ids, 0)
	if err != nil {
		return DBTSummary{}, err
	}
	inv := safeInvocation(invocationID)
	origin := IssueOriginDBT + "run"
	if inv != "" {
		origin = IssueOriginDBT + inv
	}
	// One result per unique_id: the last of the file.
	last := map[string]int{}
	for i, t := range tests {
		last[t.UniqueID] = i
	}
	var rules []DBTRule
	var kept []DBTTest
	for i, t := range tests {
		if last[t.UniqueID] != i {
			continue
		}
		typ, params := dbtRuleType(t)
		rules = append(rules, DBTRule{UniqueID: t.UniqueID, Rule: Rule{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID,
			DatasetID: t.DatasetID, Type: typ, Name: dbtTestName(t.UniqueID), Severity: SeverityCritical, Params: params,
			Active: true, CreatedBy: creator, CreatedAt: now, UpdatedAt: now}})
		kept = append(kept, t)
	}
	var sum DBTSummary
	apply := func(current []scan.KnownIssue) []scan.RuleRun {
		uids := map[string]string{} // rule id → unique_id
		for _, r := range rules {
			uids[r.ID] = r.UniqueID
		}
		byDataset := map[string]*scan.RuleRun{}
		var order []string
		results := map[string][]scan.RuleResult{}
		for i, t := range kept {
			r := rules[i]
			if !r.Active {
				continue // switched off: its results are not kept
			}
			name := ""
			if d, ok := details[t.DatasetID]; ok {
				name = qualified(d.Schema, d.Table)
			}
			res := dbtResult(name, r.Rule, t)
			if _, ok := byDataset[t.DatasetID]; !ok {
				byDataset[t.DatasetID] = &scan.RuleRun{WorkspaceID: p.WorkspaceID, DatasetID: t.DatasetID, DBTInvocation: inv,
					Origin: origin, At: now}
				order = append(order, t.DatasetID)
			}
			results[t.DatasetID] = append(results[t.DatasetID], res)
			sum.Recorded++
		}
		out := make([]scan.RuleRun, 0, len(order))
		for _, ds := range order {
			run := byDataset[ds]
			ap := scan.ApplyRuleResults(results[ds], current)
			// The issue carries the dbt test's unique_id.
			for _, ni := range ap.NewIssues {
				ni.Details["dbt_unique_id"] = uids[ni.RuleID]
			}
			for _, rd := range ap.Redetected {
				if id, ok := rd.Details["rule_id"].(string); ok {
					rd.Details["dbt_unique_id"] = uids[id]
				}
			}
			run.RuleResults, run.NewIssues, run.Redetected, run.Transitions = results[ds], ap.NewIssues, ap.Redetected, ap.Transitions
			sum.IssuesOpened += len(ap.NewIssues)
			for _, t := range ap.Transitions {
				if t.Event == scan.EventAutoResolved || t.Event == scan.EventVerified {
					sum.IssuesResolved++
				}
			}
			out = append(out, *run)
		}
		return out
	}
	if err := s.store.RecordDBTRun(ctx, rules, apply); err != nil {
		return DBTSummary{}, err
	}
	return sum, nil
}

// dbtRuleType maps a dbt generic test to a rule type with its parameters.
func dbtRuleType(t DBTTest) (string, Params) {
	zero := int64(0)
	col := t.Column
	if len(col) > MaxName {
		col = ""
	}
	switch {
	case t.TestName == "not_null" && col != "":
		return TypeNotNull, Params{Column: col, MaxFailing: &zero}
	case t.TestName == "unique" && col != "":
		return TypeUnique, Params{Columns: []string{col}, MaxFailing: &zero}
	case t.TestName == "accepted_values" && col != "":
		if vals, ok := stringValues(t.Kwargs["values"]); ok {
			return TypeAcceptedValues, Params{Column: col, Values: vals, MaxFailing: &zero}
		}
	case t.TestName == "relationships" && col != "" && t.RefDatasetID != "":
		if field, ok := t.Kwargs["field"].(string); ok && field != "" && len(field) <= MaxName {
			pct := 0.0
			return TypeReferential, Params{Column: col, RefDatasetID: t.RefDatasetID, RefColumn: field, MaxOrphanPct: &pct}
		}
	}
	name := t.TestName
	if len(name) > MaxName {
		name = ""
	}
	return TypeDBTTest, Params{Column: col, DBTTest: name}
}

func stringValues(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > MaxValues {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		var s string
		switch x := e.(type) {
		case string:
			s = x
		case float64, bool:
			s = fmt.Sprint(x)
		default:
			return nil, false
		}
		if len(s) > MaxValueLength {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// dbtResult is a test's status as a rule result: failing rows are the observed
// measure, 0 the limit.
func dbtResult(dataset string, r Rule, t DBTTest) scan.RuleResult {
	res := scan.RuleResult{RuleID: r.ID, RuleType: r.Type, Column: r.Params.Column, Severity: r.Severity}
	if res.Column == "" && len(r.Params.Columns) == 1 {
		res.Column = r.Params.Columns[0]
	}
	zero := 0.0
	if t.Failures != nil {
		f := float64(*t.Failures)
		res.Observed = &f
	}
	switch t.Status {
	case "pass", "warn":
		res.Status, res.Threshold = quality.RulePassed, &zero
	case "fail", "error":
		res.Status, res.Threshold = quality.RuleFailed, &zero
		if t.Status == "error" {
			res.ReasonCode = ReasonDBTError
		}
	default:
		res.Status, res.ReasonCode = quality.RuleNotEvaluated, ReasonDBTSkipped
		res.ReasonParams = map[string]any{"status": safeInvocation(t.Status)}
	}
	observed := 0.0
	if res.Observed != nil {
		observed = *res.Observed
	}
	res.Title, res.TitleKey, res.TitleParams = issueTitle(dataset, ScanRule{Rule: r}, observed, &zero)
	res.TitleParams["dbt_unique_id"] = t.UniqueID
	return res
}

// Reasons of dbt test results.
const (
	ReasonDBTError   = "dbt_error"   // the test could not run (dbt status error): counted as failed
	ReasonDBTSkipped = "dbt_skipped" // dbt skipped the test (or reported another status)
)

// dbtTestName is a test's name: its unique_id without the test.<project>. prefix, cut
// to MaxName.
func dbtTestName(uid string) string {
	name := uid
	if parts := strings.SplitN(uid, ".", 3); len(parts) == 3 {
		name = parts[2]
	}
	if len(name) > MaxName {
		name = name[:MaxName]
	}
	return name
}

// safeInvocation keeps a dbt invocation id (a UUID) when it is letters, digits, - and
// _ up to 64 characters; anything else is dropped.
func safeInvocation(s string) string {
	if len(s) == 0 || len(s) > 64 {
		return ""
	}
	for _, r := range s {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			return ""
		}
	}
	return s
}
