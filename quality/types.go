package quality

// Severity is the severity of an issue, a rule or an anomaly.
type Severity string

// Severities of the contract (alerts also use info).
const (
	SeverityCritical Severity = "critical"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// rank orders severities for sorting, worst first; an unknown severity ranks as warning
// because a rule or issue without one should still be seen.
func (s Severity) rank() int {
	switch s {
	case SeverityCritical:
		return 0
	case SeverityInfo:
		return 2
	}
	return 1
}

// IssueStatus is the status of an issue.
type IssueStatus string

// Issue statuses of the contract.
const (
	IssueOpen         IssueStatus = "open"
	IssueAcknowledged IssueStatus = "acknowledged"
	IssueResolved     IssueStatus = "resolved"
	IssueIgnored      IssueStatus = "ignored"
)

// unresolved reports whether an issue in this status still stands: open or acknowledged.
func (s IssueStatus) unresolved() bool { return s == IssueOpen || s == IssueAcknowledged }

// Issue types this package reads.
const (
	IssueTypeSchemaDrift = "schema_drift"
	IssueTypeAnomaly     = "anomaly"
	IssueTypeModeling    = "modeling"
	IssueTypeBIRefresh   = "bi_refresh"
	IssueTypeSLOBreach   = "slo_breach"
)

// RuleStatus is the result of a rule in one scan.
type RuleStatus string

// Rule results of the contract. A not_evaluated rule ran but could not be checked: it
// never counts in a score or a verdict.
const (
	RulePassed       RuleStatus = "passed"
	RuleFailed       RuleStatus = "failed"
	RuleNotEvaluated RuleStatus = "not_evaluated"
)

// RuleOutcome is the result of one rule in this scan, as the score and the verdict read it.
type RuleOutcome struct {
	RuleID   string     `json:"rule_id"`
	RuleType string     `json:"rule_type"`
	Column   string     `json:"column,omitempty"`
	Severity Severity   `json:"severity"`
	Status   RuleStatus `json:"status"`
	// Dimension overrides the dimension the rule counts in; empty means
	// DimensionForRuleType(RuleType).
	Dimension Dimension `json:"dimension,omitempty"`
}

// DimensionForRuleType returns the dimension a rule type counts in: unique → unicidade;
// freshness → atualidade; row_count_min → completude (missing rows are missing data);
// not_null, accepted_values, pattern, range, referential, custom_sql and any other type
// → validade, since a rule the package does not know is most often a validity check.
func DimensionForRuleType(ruleType string) Dimension {
	switch ruleType {
	case "unique":
		return Unicidade
	case "freshness":
		return Atualidade
	case "row_count_min":
		return Completude
	}
	return Validade
}

func (r RuleOutcome) dimension() Dimension {
	if r.Dimension != "" {
		return r.Dimension
	}
	return DimensionForRuleType(r.RuleType)
}
