// Package validate checks records against a dataset's rules before they are loaded
// (POST /datasets/{id}/validate): a pipeline sends up to MaxRecords records and learns,
// per record, which of the dataset's active rules it would fail, per rule the counts and
// the rule's tolerance, and a batch verdict. The answer for one value is the answer the
// scan's SQL (package rulesql) gives for the same value on the source; rules that can
// only be measured over the whole table are not applicable. Nothing of a record is kept:
// only an activity entry with counts.
package validate

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/rulesql"
)

// Bounds of one validation (contract part 8).
const (
	MaxRecords = 5000
	MaxBytes   = 2 << 20
	// MaxUnknownFields bounds the unknown field names an answer lists.
	MaxUnknownFields = 100
	// MaxLookups bounds the statements one referential rule sends to the reference.
	MaxLookups = 400
)

// ActionRecordsValidated is the activity-log action of a validation (counts only).
const ActionRecordsValidated = "records_validated"

// Failure codes of a record (stable).
const (
	CodeIsNull            = "is_null"             // not_null: the field is null or missing
	CodeNotAcceptedValue  = "not_accepted_value"  // accepted_values: the value is not in the list
	CodePatternMismatch   = "pattern_mismatch"    // pattern: no match of the pattern
	CodeOutOfRange        = "out_of_range"        // range: below min or above max
	CodeNotANumber        = "not_a_number"        // range: the value does not read as a number
	CodeTypeMismatch      = "type_mismatch"       // an object or array where the rule compares a scalar
	CodeNotInReference    = "not_in_reference"    // referential: no row of the reference holds the value
	CodeInvalidCheckDigit = "invalid_check_digit" // the pack's NIF check-digit rule: nine digits, wrong ninth
)

// Codes of a rule that is not applicable to records (stable).
const (
	NotApplicableDatasetWide        = "dataset_wide"         // unique, freshness, row_count_min: measured over the whole table
	NotApplicableCustomSQL          = "custom_sql"           // a user's query over the table
	NotApplicableReferenceNotCached = "reference_not_cached" // referential: evaluated without a lookup of the reference (Evaluate with nil References)
	NotApplicableReferenceMissing   = "reference_missing"    // referential: the reference dataset was deleted
	NotApplicableReferenceOther     = "reference_other_connection"
	NotApplicableReferenceGone      = "reference_unreachable"   // the reference table or its column is gone, or the source did not answer
	NotApplicableReferenceHidden    = "reference_not_visible"   // the caller cannot see the reference dataset: its keys are not revealed
	NotApplicableReferenceBudget    = "reference_lookup_budget" // the lookups would exceed MaxLookups statements
	NotApplicablePatternUnsupported = "pattern_unsupported"     // the pattern reads differently in Go and the source
	NotApplicableColumnMissing      = "column_missing"          // the rule's column is gone from the dataset
	NotApplicableLineBreak          = "line_break"              // MySQL pattern on a value with a line break (ICU reads them apart)
)

// Verdicts of a batch.
const (
	VerdictPass    = "pass"
	VerdictWarn    = "warn"
	VerdictFail    = "fail"
	VerdictUnknown = "unknown"
)

// Rule statuses in a report.
const (
	StatusPassed        = "passed"
	StatusFailed        = "failed"
	StatusNotApplicable = "not_applicable"
)

// Record is one record as sent: field name → raw JSON value.
type Record map[string]json.RawMessage

// Failure is one rule a record fails.
type Failure struct {
	RuleID string
	Code   string
	// Params describe the rule's expectation (column, pattern, bounds), never the value.
	Params map[string]any
}

// RecordResult is one record's answer, in request order.
type RecordResult struct {
	Index  int
	Passed []string // rule ids
	Failed []Failure
	// NotApplicable are rule ids not applicable to this record alone (line_break).
	NotApplicable []string
}

// RuleResult is one rule's counts over the batch.
type RuleResult struct {
	RuleID   string
	Name     string
	Type     string
	Severity string
	Columns  []string
	Status   string
	Passed   int
	Failed   int
	// NotApplicable counts records the rule could not judge (every record when the rule
	// is not applicable at all).
	NotApplicable     int
	NotApplicableCode string
	// Tolerance is the rule's own: max_failing (records) for row rules.
	Tolerance Tolerance
}

// Tolerance is a rule's threshold as its scans apply it.
type Tolerance struct {
	MaxFailing   *int64
	MaxOrphanPct *float64
	MaxAgeHours  *float64
	MinRows      *int64
}

// Report is the answer to a validation.
type Report struct {
	DatasetID     string
	Verdict       string
	Records       int
	PassedRecords int
	FailedRecords int
	Results       []RecordResult
	Rules         []RuleResult
	// UnknownFields are record field names that match no column (safe names only; any
	// other name is "?"), at most MaxUnknownFields; UnknownFieldCount counts them all.
	UnknownFields     []string
	UnknownFieldCount int
}

// Datasets is the visibility-checked catalog.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Store is what validation reads and writes: the dataset's active rules and the one
// activity entry.
type Store interface {
	ActiveRulesOf(ctx context.Context, datasetID string) ([]rule.ScanRule, error)
	AddActivity(ctx context.Context, a event.Activity) error
}

// Service validates records.
type Service struct {
	datasets Datasets
	store    Store
	conns    Connections
	clock    vigia.Clock
}

// NewService returns the validation service.
func NewService(datasets Datasets, store Store, conns Connections, clock vigia.Clock) *Service {
	return &Service{datasets: datasets, store: store, conns: conns, clock: clock}
}

// ValidateRecords checks records against the dataset's active rules. Any credential
// that can see the dataset may call it (a marked write for API tokens). Returns
// KindNotFound for a dataset the caller cannot see, KindTooLarge over MaxRecords, and
// KindInvalid for an empty list.
func (s *Service) ValidateRecords(ctx context.Context, datasetID string, records []Record) (Report, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Report{}, err
	}
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return Report{}, err
	}
	if len(records) > MaxRecords {
		return Report{}, &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
	}
	if len(records) == 0 {
		return Report{}, vigia.Invalid(vigia.Field("too_short", map[string]any{"min_length": 1}, "records"))
	}
	rules, err := s.store.ActiveRulesOf(ctx, d.ID)
	if err != nil {
		return Report{}, err
	}
	// The rules compare as the dataset's source does.
	c, err := s.conns.Connection(ctx, d.ConnectionID)
	if err != nil {
		return Report{}, err
	}
	for i := range rules {
		rules[i].ConnectionID, rules[i].ConnectionKind = d.ConnectionID, c.Kind
	}
	refs := &sourceRefs{datasets: s.datasets, conns: s.conns, dataset: d}
	rep := Evaluate(ctx, d, rules, records, refs)
	refs.close()
	actor := "user:" + p.UserID
	if p.IsToken() {
		actor = "token:" + p.TokenID
	}
	act := event.Activity{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Actor: actor, Action: ActionRecordsValidated, SubjectType: "dataset",
		SubjectID: d.ID, CreatedAt: s.clock.Now(), Details: map[string]any{"records": rep.Records, "failed_records": rep.FailedRecords,
			"rules": len(rep.Rules), "verdict": rep.Verdict}}
	if err := s.store.AddActivity(ctx, act); err != nil {
		return Report{}, err
	}
	return rep, nil
}

// checker judges one record for one rule.
type checker struct {
	r       rule.ScanRule
	column  string
	dialect rulesql.Dialect
	re      *regexp.Regexp
	min     *big.Rat
	max     *big.Rat
	values  map[string]bool
	nums    []*big.Rat
	// na is set when the rule is not applicable at all.
	na string
	// refNumeric: the reference column is numeric (referential); missing holds the keys
	// the lookup did not find.
	refNumeric bool
	missing    map[string]bool
	// nif: a custom_sql rule recognised as the pt_customer_master NIF check digit.
	nif bool
}

// References looks keys up in a referential rule's reference: Missing returns, of the
// keys (literals in the source's dialect, by key), those no row of the reference holds,
// or a not-applicable code.
type References interface {
	// Column says whether the reference column is numeric, or why the rule cannot be
	// looked up.
	Column(ctx context.Context, r rule.ScanRule) (numeric bool, na string)
	Missing(ctx context.Context, r rule.ScanRule, numeric bool, keys map[string]string) (map[string]bool, string)
}

// Evaluate judges records against a dataset's rules. refs may be nil: referential
// rules are then not applicable (reference_not_cached).
func Evaluate(ctx context.Context, d catalog.Dataset, rules []rule.ScanRule, records []Record, refs References) Report {
	columns := map[string]bool{}
	for _, c := range d.Columns {
		columns[c.Name] = true
	}
	slices.SortFunc(rules, func(a, b rule.ScanRule) int { return strings.Compare(a.ID, b.ID) })
	names := make([]string, 0, len(d.Columns))
	for _, c := range d.Columns {
		names = append(names, c.Name)
	}
	checks := make([]checker, len(rules))
	for i, r := range rules {
		r.DatasetSchema, r.DatasetTable = d.Schema, d.Table
		checks[i] = newChecker(r, columns, names)
		if c := &checks[i]; r.Type == rule.TypeReferential && c.na == "" {
			if refs == nil {
				c.na = NotApplicableReferenceNotCached
				continue
			}
			c.lookup(ctx, refs, records)
		}
	}
	rep := Report{DatasetID: d.ID, Records: len(records), Results: make([]RecordResult, len(records)),
		Rules: make([]RuleResult, len(rules)), UnknownFields: []string{}}
	for i, c := range checks {
		r := c.r
		rep.Rules[i] = RuleResult{RuleID: r.ID, Name: r.Name, Type: r.Type, Severity: r.Severity, Columns: r.Params.KeyColumns(),
			NotApplicableCode: c.na, Tolerance: Tolerance{MaxFailing: r.Params.MaxFailing, MaxOrphanPct: r.Params.MaxOrphanPct,
				MaxAgeHours: r.Params.MaxAgeHours, MinRows: r.Params.MinRows}}
	}
	unknown := map[string]bool{}
	for ri, rec := range records {
		for name := range rec {
			if !columns[name] && !unknown[name] {
				unknown[name] = true
			}
		}
		res := RecordResult{Index: ri, Passed: []string{}, Failed: []Failure{}, NotApplicable: []string{}}
		for i := range checks {
			c := &checks[i]
			if c.na != "" {
				rep.Rules[i].NotApplicable++
				continue
			}
			raw, present := rec[c.column]
			code, params, na := c.judge(valueOf(raw, present))
			switch {
			case na:
				rep.Rules[i].NotApplicable++
				res.NotApplicable = append(res.NotApplicable, c.r.ID)
			case code != "":
				rep.Rules[i].Failed++
				res.Failed = append(res.Failed, Failure{RuleID: c.r.ID, Code: code, Params: params})
			default:
				rep.Rules[i].Passed++
				res.Passed = append(res.Passed, c.r.ID)
			}
		}
		if len(res.Failed) > 0 {
			rep.FailedRecords++
		} else {
			rep.PassedRecords++
		}
		rep.Results[ri] = res
	}
	unknownNames := make([]string, 0, len(unknown))
	for n := range unknown {
		unknownNames = append(unknownNames, vigia.SafeName(n))
	}
	slices.Sort(unknownNames)
	unknownNames = slices.Compact(unknownNames)
	rep.UnknownFieldCount = len(unknown)
	if len(unknownNames) > MaxUnknownFields {
		unknownNames = unknownNames[:MaxUnknownFields]
	}
	rep.UnknownFields = unknownNames
	rep.Verdict = verdict(rep.Rules)
	return rep
}

// verdict is the batch's: fail when a critical rule fails beyond its tolerance, warn
// when only warning rules do, pass when at least one rule judged the records and none
// failed beyond tolerance (info rules never change it), unknown when no rule applied.
func verdict(rules []RuleResult) string {
	judged, warn, fail := false, false, false
	for i := range rules {
		r := &rules[i]
		if r.NotApplicableCode != "" || r.Passed+r.Failed == 0 {
			r.Status = StatusNotApplicable
			continue
		}
		judged = true
		tolerance := int64(0)
		if r.Tolerance.MaxFailing != nil {
			tolerance = *r.Tolerance.MaxFailing
		}
		within := int64(r.Failed) <= tolerance
		if r.Type == rule.TypeReferential {
			// As the scan measures it: the percentage of orphans, to two decimals.
			pct, limit := math.Round(10000*float64(r.Failed)/float64(r.Passed+r.Failed))/100, 0.0
			if r.Tolerance.MaxOrphanPct != nil {
				limit = *r.Tolerance.MaxOrphanPct
			}
			within = pct <= limit
		}
		if within {
			r.Status = StatusPassed
			continue
		}
		r.Status = StatusFailed
		switch r.Severity {
		case rule.SeverityCritical:
			fail = true
		case rule.SeverityWarning:
			warn = true
		}
	}
	switch {
	case fail:
		return VerdictFail
	case warn:
		return VerdictWarn
	case !judged:
		return VerdictUnknown
	}
	return VerdictPass
}

func newChecker(r rule.ScanRule, columns map[string]bool, names []string) checker {
	c := checker{r: r, dialect: rulesql.Dialect(dialectOf(r.ConnectionKind))}
	switch r.Type {
	case rule.TypeUnique, rule.TypeFreshness, rule.TypeRowCountMin:
		c.na = NotApplicableDatasetWide
		return c
	case rule.TypeCustomSQL:
		if col, ok := rule.NIFCheckDigitColumn(r.Rule, c.dialect, names); ok {
			c.nif, c.column = true, col
			return c
		}
		c.na = NotApplicableCustomSQL
		return c
	}
	c.column = r.Params.Column
	if !columns[c.column] {
		c.na = NotApplicableColumnMissing
		return c
	}
	if r.Type == rule.TypeReferential {
		switch {
		case r.Ref == nil:
			c.na = NotApplicableReferenceMissing
		case r.Ref.ConnectionID != r.ConnectionID:
			c.na = NotApplicableReferenceOther
		case r.Ref.Dropped || len(r.Ref.Columns) > 0 && !slices.Contains(r.Ref.Columns, r.Params.RefColumn):
			c.na = NotApplicableReferenceGone
		}
		return c
	}
	switch r.Type {
	case rule.TypePattern:
		re, ok := compilePattern(r.Params.Pattern, c.dialect)
		if !ok {
			c.na = NotApplicablePatternUnsupported
			return c
		}
		c.re = re
	case rule.TypeRange:
		if r.Params.Min != nil {
			// The bound as the scan's SQL writes it: the shortest decimal of the float.
			c.min = decimal(strconv.FormatFloat(*r.Params.Min, 'g', -1, 64))
		}
		if r.Params.Max != nil {
			c.max = decimal(strconv.FormatFloat(*r.Params.Max, 'g', -1, 64))
		}
	case rule.TypeAcceptedValues:
		c.values = map[string]bool{}
		for _, v := range r.Params.Values {
			c.values[c.fold(v)] = true
			if n := decimal(v); n != nil {
				c.nums = append(c.nums, n)
			}
		}
	}
	return c
}

func dialectOf(kind string) string {
	switch kind {
	case "mysql", "mariadb":
		return string(rulesql.MySQL)
	case "sqlite":
		return string(rulesql.SQLite)
	case "duckdb":
		return string(rulesql.DuckDB)
	}
	return string(rulesql.Postgres)
}

// fold is how the source compares texts: MySQL/MariaDB's usual collations ignore case
// and trailing spaces; Postgres and SQLite compare exactly.
func (c *checker) fold(s string) string {
	if c.dialect == rulesql.MySQL {
		return strings.ToLower(strings.TrimRight(s, " "))
	}
	return s
}

// judge returns the failure code and params of one value, "" when it passes; na when
// the rule cannot judge this value alone. NULL fails only not_null, as in SQL.
func (c *checker) judge(v value) (code string, params map[string]any, na bool) {
	col := map[string]any{"column": c.column}
	if c.r.Type == rule.TypeNotNull {
		if v.null {
			return CodeIsNull, col, false
		}
		return "", nil, false
	}
	if v.null {
		return "", nil, false
	}
	if v.composite {
		return CodeTypeMismatch, col, false
	}
	if c.nif {
		if c.dialect == rulesql.MySQL && strings.ContainsAny(v.text, "\r\n") {
			// MySQL's $ also matches before a final line break: judged apart.
			return "", nil, true
		}
		if nifCheckDigitWrong(v.text) {
			return CodeInvalidCheckDigit, map[string]any{"column": c.column, "check": "nif_pt"}, false
		}
		return "", nil, false
	}
	switch c.r.Type {
	case rule.TypeReferential:
		key, _, ok := c.refKey(v)
		if !ok || c.missing[key] {
			return CodeNotInReference, map[string]any{"column": c.column, "ref_dataset_id": c.r.Ref.ID, "ref_column": c.r.Params.RefColumn}, false
		}
	case rule.TypeAcceptedValues:
		if c.values[c.fold(v.text)] {
			return "", nil, false
		}
		if v.num != nil {
			// A numeric column compares numbers: 1.0 is '1'.
			for _, n := range c.nums {
				if n.Cmp(v.num) == 0 {
					return "", nil, false
				}
			}
		}
		return CodeNotAcceptedValue, map[string]any{"column": c.column, "values_count": len(c.r.Params.Values)}, false
	case rule.TypePattern:
		if c.dialect == rulesql.MySQL && strings.ContainsAny(v.text, "\r\n") {
			return "", nil, true
		}
		if c.re.MatchString(v.text) {
			return "", nil, false
		}
		return CodePatternMismatch, map[string]any{"column": c.column, "pattern": c.r.Params.Pattern}, false
	case rule.TypeRange:
		if v.num == nil {
			return CodeNotANumber, col, false
		}
		if c.min != nil && v.num.Cmp(c.min) < 0 || c.max != nil && v.num.Cmp(c.max) > 0 {
			p := map[string]any{"column": c.column}
			if c.r.Params.Min != nil {
				p["min"] = *c.r.Params.Min
			}
			if c.r.Params.Max != nil {
				p["max"] = *c.r.Params.Max
			}
			return CodeOutOfRange, p, false
		}
	}
	return "", nil, false
}

// refKey is a value's key in the reference and its literal: a numeric reference column
// takes numbers only (ok false otherwise: no number equals the value), compared as
// numbers; a text column compares texts as the source does.
func (c *checker) refKey(v value) (key, literal string, ok bool) {
	if c.refNumeric {
		if v.num == nil {
			return "", "", false
		}
		return "n:" + v.num.RatString(), strings.TrimSpace(v.text), true
	}
	return "t:" + c.fold(v.text), rulesql.QuoteString(c.dialect, v.text), true
}

// lookup asks the reference for the batch's distinct keys of the rule's column.
func (c *checker) lookup(ctx context.Context, refs References, records []Record) {
	if c.refNumeric, c.na = refs.Column(ctx, c.r); c.na != "" {
		return
	}
	keys := map[string]string{}
	for _, rec := range records {
		raw, present := rec[c.column]
		v := valueOf(raw, present)
		if v.null || v.composite {
			continue
		}
		if k, lit, ok := c.refKey(v); ok {
			keys[k] = lit
		}
	}
	if len(keys) == 0 {
		c.missing = map[string]bool{}
		return
	}
	c.missing, c.na = refs.Missing(ctx, c.r, c.refNumeric, keys)
}

// nifCheckDigitWrong is the pack's SQL on one value: nine ASCII digits whose ninth is
// not (11 - Σ dᵢ·(10-i) mod 11) mod 11 mod 10; any other text passes (the format rule's).
func nifCheckDigitWrong(s string) bool {
	if len(s) != 9 {
		return false
	}
	sum := 0
	for i := 0; i < 9; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		if i < 8 {
			sum += int(s[i]-'0') * (9 - i)
		}
	}
	return (11-sum%11)%11%10 != int(s[8]-'0')
}
