// Package datapolicy is data policies: the workspace's and each domain's rules (for now
// pii_retention_max_age), evaluated after every scan from what the scan stored (the
// columns' semantic types and the oldest value of temporal columns, never a source
// value); a rule that starts being violated opens a policy violation, its issue and the
// policy.violation_opened event, and one that stops (or is turned off) resolves them
// with policy.violation_resolved.
package datapolicy

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/trust"
)

// The rules a policy may hold.
const (
	// RulePIIRetention: a dataset holding personal data keeps no record older than
	// max_age_days (no default: the rule is refused without it).
	RulePIIRetention = "pii_retention_max_age"
)

// Rules are the rule keys a policy accepts.
var Rules = []string{RulePIIRetention}

// Severities of a rule's violations.
var Severities = []string{"warning", "critical"}

// MaxAgeDaysBound bounds max_age_days (100 years).
const MaxAgeDaysBound = 36500

// Rule is one rule of a policy.
type Rule struct {
	Key        string `json:"rule"`
	Enabled    bool   `json:"enabled"`
	MaxAgeDays *int   `json:"max_age_days,omitempty"`
	Severity   string `json:"severity"`
	// Column, when set, is the temporal column that dates a record; else every
	// temporal column that holds no personal data itself.
	Column string `json:"column,omitempty"`
}

// Policy is the workspace's policy (DomainID nil) or a domain's.
type Policy struct {
	WorkspaceID string
	DomainID    *string
	Rules       []Rule
	UpdatedBy   string
	UpdatedAt   *time.Time
}

// Column is what a scan stored of a column, as the policy reads it.
type Column struct {
	Name            string
	Class           string
	SemanticType    string
	SemanticMatches int
	// MinTime is the oldest value of a temporal column at the last profile.
	MinTime *time.Time
}

// Dataset is a scanned dataset with its columns and domains.
type Dataset struct {
	ID      string
	Name    string
	Columns []Column
	Domains []Domain
}

// Domain names a domain.
type Domain struct {
	ID, Name string
}

// Outcome is a rule's result on a dataset at a scan.
type Outcome struct {
	DatasetID string
	Rule      string
	Violated  bool
	Source    string  // workspace or domain:<name>
	Domain    *string // the domain's name when Source is a domain
	Severity  string
	Label     string
	// Details name the columns and ages, never values.
	Details map[string]any
}

// Store keeps policies and violations.
type Store interface {
	// Policy returns the workspace's (domainID "") or a domain's policy; ok false when none
	// was saved.
	Policy(ctx context.Context, workspaceID, domainID string) (Policy, bool, error)
	SavePolicy(ctx context.Context, p Policy) error
	// DomainPolicies returns the workspace's domain policies by domain id.
	DomainPolicies(ctx context.Context, workspaceID string) (map[string]Policy, error)
	// ConnectionDatasets returns the datasets of a connection discovery still finds.
	ConnectionDatasets(ctx context.Context, workspaceID, connectionID string) ([]Dataset, error)
	// ApplyOutcomes opens and resolves violations (with their issues and outbox events)
	// in one transaction; rules of the dataset absent from outcomes are resolved (turned
	// off).
	ApplyOutcomes(ctx context.Context, workspaceID, scanID string, datasetID string, outcomes []Outcome, at time.Time) error
	// Violations lists the active violations of the workspace, of a dataset when set.
	Violations(ctx context.Context, workspaceID, datasetID string) ([]Violation, error)
}

// Violation is an active policy violation.
type Violation struct {
	ID, DatasetID, Rule, Source, Severity string
	IssueID                               *string
	OpenedAt                              time.Time
}

// Domains checks a domain id against the caller's visibility.
type Domains interface {
	DomainName(ctx context.Context, id string) (string, error)
}

// Service keeps and evaluates data policies.
type Service struct {
	store   Store
	domains Domains
	clock   vigia.Clock
}

// NewService returns the data policy service.
func NewService(store Store, domains Domains, clock vigia.Clock) *Service {
	return &Service{store: store, domains: domains, clock: clock}
}

// Policy returns the caller's workspace policy (domainID "") or a visible domain's; a
// policy never saved has no rules. KindNotFound for a domain the caller cannot see.
func (s *Service) Policy(ctx context.Context, domainID string) (Policy, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Policy{}, err
	}
	if domainID != "" {
		if _, err := s.domains.DomainName(ctx, domainID); err != nil {
			return Policy{}, err
		}
	}
	pol, ok, err := s.store.Policy(ctx, p.WorkspaceID, domainID)
	if err != nil {
		return Policy{}, err
	}
	if !ok {
		pol = Policy{WorkspaceID: p.WorkspaceID, Rules: []Rule{}}
		if domainID != "" {
			pol.DomainID = &domainID
		}
	}
	return pol, nil
}

// SetPolicy replaces the workspace's (domainID "") or a domain's rules (admin session).
// Returns KindInvalid for an unknown rule, a repeated rule, a bad severity and
// pii_retention_max_age without max_age_days (there is no default), and KindNotFound
// for a domain the caller cannot see. The next scans evaluate it.
func (s *Service) SetPolicy(ctx context.Context, domainID string, rules []Rule) (Policy, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Policy{}, err
	}
	if domainID != "" {
		if _, err := s.domains.DomainName(ctx, domainID); err != nil {
			return Policy{}, err
		}
	}
	var fields []vigia.FieldError
	seen := map[string]bool{}
	for i, r := range rules {
		at := func(name string) []string { return []string{"rules", itoa(i), name} }
		if !slices.Contains(Rules, r.Key) {
			fields = append(fields, vigia.Field("enum", nil, at("rule")...))
			continue
		}
		if seen[r.Key] {
			fields = append(fields, vigia.Field("value_error", nil, at("rule")...))
		}
		seen[r.Key] = true
		if r.Severity == "" {
			rules[i].Severity = "warning"
		} else if !slices.Contains(Severities, r.Severity) {
			fields = append(fields, vigia.Field("enum", nil, at("severity")...))
		}
		if r.Key == RulePIIRetention {
			switch {
			case r.MaxAgeDays == nil:
				fields = append(fields, vigia.Field("missing", nil, at("max_age_days")...))
			case *r.MaxAgeDays < 1:
				fields = append(fields, vigia.Field("greater_than_equal", map[string]any{"ge": 1}, at("max_age_days")...))
			case *r.MaxAgeDays > MaxAgeDaysBound:
				fields = append(fields, vigia.Field("less_than_equal", map[string]any{"le": MaxAgeDaysBound}, at("max_age_days")...))
			}
		}
		if len(r.Column) > 128 {
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": 128}, at("column")...))
		}
	}
	if len(fields) > 0 {
		return Policy{}, vigia.Invalid(fields...)
	}
	now := s.clock.Now()
	pol := Policy{WorkspaceID: p.WorkspaceID, Rules: rules, UpdatedBy: p.UserID, UpdatedAt: &now}
	if domainID != "" {
		pol.DomainID = &domainID
	}
	if err := s.store.SavePolicy(ctx, pol); err != nil {
		return Policy{}, err
	}
	return pol, nil
}

// Violations lists the active violations of the caller's workspace.
func (s *Service) Violations(ctx context.Context) ([]Violation, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.Violations(ctx, p.WorkspaceID, "")
}

// AfterScan evaluates the policies on the scanned connection's datasets: the
// after-scan consumer "policies".
func (s *Service) AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error {
	ws, _, err := s.store.Policy(ctx, workspaceID, "")
	if err != nil {
		return err
	}
	byDomain, err := s.store.DomainPolicies(ctx, workspaceID)
	if err != nil {
		return err
	}
	datasets, err := s.store.ConnectionDatasets(ctx, workspaceID, connectionID)
	if err != nil {
		return err
	}
	// The workspace's open violations, read once: a dataset without outcomes and
	// without an open violation has nothing to apply (a scan of 10,000 tables in a
	// workspace without policies would otherwise pay a transaction per table).
	open, err := s.store.Violations(ctx, workspaceID, "")
	if err != nil {
		return err
	}
	hasOpen := make(map[string]bool, len(open))
	for _, v := range open {
		hasOpen[v.DatasetID] = true
	}
	now := s.clock.Now()
	for _, d := range datasets {
		outcomes := Evaluate(d, ws, byDomain, now)
		if len(outcomes) == 0 && !hasOpen[d.ID] {
			continue
		}
		if err := s.store.ApplyOutcomes(ctx, workspaceID, scanID, d.ID, outcomes, now); err != nil {
			return err
		}
	}
	return nil
}

// effective is a rule with where it comes from.
type effective struct {
	rule   Rule
	source string
	domain *string
}

// Evaluate returns the outcomes of the rules that apply to d: a domain's rule replaces
// the workspace's rule of the same key (the first of d's domains, by name, that has
// it); disabled rules apply nothing (their violations resolve).
func Evaluate(d Dataset, ws Policy, byDomain map[string]Policy, now time.Time) []Outcome {
	rules := map[string]effective{}
	for _, r := range ws.Rules {
		rules[r.Key] = effective{rule: r, source: "workspace"}
	}
	domains := slices.Clone(d.Domains)
	slices.SortFunc(domains, func(a, b Domain) int { return strings.Compare(b.Name, a.Name) })
	for _, dom := range domains { // by name descending, so that the first name wins
		for _, r := range byDomain[dom.ID].Rules {
			name := dom.Name
			rules[r.Key] = effective{rule: r, source: "domain:" + dom.Name, domain: &name}
		}
	}
	var out []Outcome
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e := rules[k]
		if !e.rule.Enabled {
			continue
		}
		switch k {
		case RulePIIRetention:
			o := piiRetention(d, e.rule, now)
			o.Source, o.Domain = e.source, e.domain
			out = append(out, o)
		}
	}
	return out
}

// piiRetention: a dataset with personal-data columns (trust.PII: detected semantic
// types and telling names) is in violation when its record dates are older than
// max_age_days. The record dates are the named column, else every temporal column that
// is not itself personal data (a birth date is not a record's date); the dataset is in
// violation when each of them has a value older than the limit, so that a table whose
// creation date is recent but whose contract date is old is not flagged.
func piiRetention(d Dataset, r Rule, now time.Time) Outcome {
	o := Outcome{DatasetID: d.ID, Rule: r.Key, Severity: r.Severity, Label: labelOf(r), Details: map[string]any{}}
	facts := make([]trust.ColumnFact, 0, len(d.Columns))
	for _, c := range d.Columns {
		facts = append(facts, trust.ColumnFact{Name: c.Name, SemanticType: c.SemanticType, SemanticMatches: c.SemanticMatches})
	}
	pii, _ := trust.PII(facts)
	if len(pii) == 0 || r.MaxAgeDays == nil {
		return o
	}
	cutoff := now.Add(-time.Duration(*r.MaxAgeDays) * 24 * time.Hour)
	var dated []string
	var newestOldest *time.Time
	for _, c := range d.Columns {
		if c.Class != "temporal" || (r.Column != "" && c.Name != r.Column) || r.Column == "" && slices.Contains(pii, c.Name) {
			continue
		}
		if c.MinTime == nil {
			continue
		}
		dated = append(dated, c.Name)
		if newestOldest == nil || c.MinTime.After(*newestOldest) {
			t := *c.MinTime
			newestOldest = &t
		}
	}
	if newestOldest == nil {
		return o
	}
	o.Details = map[string]any{"pii_columns": pii, "date_columns": dated, "max_age_days": *r.MaxAgeDays,
		"oldest_age_days": int(now.Sub(*newestOldest).Hours() / 24)}
	o.Violated = newestOldest.Before(cutoff)
	return o
}

func labelOf(r Rule) string {
	if r.Key == RulePIIRetention && r.MaxAgeDays != nil {
		return "pii_retention_max_age " + itoa(*r.MaxAgeDays) + "d"
	}
	return r.Key
}

func itoa(i int) string { return strconv.Itoa(i) }
