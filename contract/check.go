package contract

import (
	"sort"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rule"
)

// Violation codes of a contract check (reason params of the trust decision's
// contract_violation and the details of the contract issue).
const (
	ViolationColumnMissing = "column_missing"      // a contract column is gone from the dataset
	ViolationTypeChanged   = "type_changed"        // its type is no longer the contract's (nor a widening of it)
	ViolationNulls         = "required_has_nulls"  // a required column has nulls in the last profile
	ViolationQualityFailed = "quality_rule_failed" // a quality check's rule failed in the last scan
)

// Violation is one way the data broke the active contract.
type Violation struct {
	Code   string `json:"code"`
	Column string `json:"column,omitempty"`
	// Quality is the check's identity for quality_rule_failed (rule type and columns).
	Quality string `json:"quality,omitempty"`
}

// RuleState is an active rule of the dataset with its last result's status.
type RuleState struct {
	Type   string
	Params rule.Params
	Status string // passed, failed, not_evaluated; "" before the first evaluation
}

// Check says whether the dataset honours its active contract: every contract column
// present with its type (or a widening of it), required columns without nulls in the
// last profile, and the contract's Vigia quality checks passing (the dataset's active
// rules of the same type and columns did not fail their last evaluation). The result
// is empty when the contract holds; violations are ordered by code and column.
func Check(doc Document, cols []catalog.Column, rules []RuleState) []Violation {
	out := []Violation{}
	byName := map[string]catalog.Column{}
	for _, c := range cols {
		byName[c.Name] = c
	}
	for _, p := range doc.Table().Properties {
		c, ok := byName[p.Name]
		if !ok {
			out = append(out, Violation{Code: ViolationColumnMissing, Column: p.Name})
			continue
		}
		if p.PhysicalType != "" && !Widens(p.PhysicalType, c.DataType) {
			out = append(out, Violation{Code: ViolationTypeChanged, Column: p.Name})
		}
		if p.Required && c.Profile != nil && c.Profile.NullCount > 0 {
			out = append(out, Violation{Code: ViolationNulls, Column: p.Name})
		}
	}
	failed := map[string]bool{}
	for _, r := range rules {
		if r.Status == rule.StatusFailed {
			failed[qualityKey(QualityOf(rule.Rule{Type: r.Type, Params: r.Params}))] = true
		}
	}
	var checks []Quality
	checks = append(checks, doc.Table().Quality...)
	for _, p := range doc.Table().Properties {
		checks = append(checks, p.Quality...)
	}
	for _, q := range checks {
		if _, ok := q.VigiaRule(); !ok {
			continue
		}
		if k := qualityKey(q); failed[k] {
			out = append(out, Violation{Code: ViolationQualityFailed, Quality: k})
			failed[k] = false
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Code != out[j].Code {
			return out[i].Code < out[j].Code
		}
		return out[i].Column+out[i].Quality < out[j].Column+out[j].Quality
	})
	return out
}

// Codes lists the distinct codes of violations, sorted.
func Codes(vs []Violation) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, v := range vs {
		if !seen[v.Code] {
			seen[v.Code] = true
			out = append(out, v.Code)
		}
	}
	sort.Strings(out)
	return out
}

// Effects of a schema change on the active contract.
const (
	EffectNone       = "none"
	EffectCompatible = "compatible"
	EffectBreaking   = "breaking"
)

// ColumnChange is a column added, dropped or retyped by a scan.
type ColumnChange struct {
	Change string // add, drop, type_change
	Column string
	ToType *string
}

// EffectOf says what one scan's column changes do to the active contract: breaking
// when a contract column was dropped or its type narrowed or converted; compatible when
// columns were added or a contract column's type widened; none when nothing the
// contract names changed and nothing was added.
func EffectOf(doc Document, changes []ColumnChange) string {
	props := map[string]Property{}
	for _, p := range doc.Table().Properties {
		props[p.Name] = p
	}
	effect := EffectNone
	for _, c := range changes {
		p, inContract := props[c.Column]
		switch c.Change {
		case "drop":
			if inContract {
				return EffectBreaking
			}
		case "type_change":
			if inContract {
				to := ""
				if c.ToType != nil {
					to = *c.ToType
				}
				if !Widens(p.PhysicalType, to) {
					return EffectBreaking
				}
				effect = EffectCompatible
			}
		case "add":
			if !inContract {
				effect = EffectCompatible
			}
		}
	}
	return effect
}
