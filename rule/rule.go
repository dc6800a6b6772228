// Package rule holds data-quality rules: checks a member or an administrator attaches to
// a dataset, evaluated on the source in every scan of its connection. A rule's result
// (passed, failed or not_evaluated, with what was observed and the limit) feeds the
// dataset's score and verdict, and a failed rule opens one issue that later scans follow
// (see scan.applyRules). The package also writes, for a rule, the SQL that lists the rows
// failing it, in seven dialects, without ever running it.
//
// What each rule measures (observed) and against what (threshold):
//
//	not_null         rows where the column is NULL                 ≤ max_failing (0)
//	unique           rows whose key (one or more columns) repeats  ≤ max_failing (0)
//	accepted_values  non-NULL rows outside the list                ≤ max_failing (0)
//	pattern          non-NULL rows without a match of the pattern  ≤ max_failing (0)
//	range            non-NULL rows outside [min, max]              ≤ max_failing (0)
//	referential      % of non-NULL rows without a match in the     ≤ max_orphan_pct (0)
//	                 reference dataset's column (orphans)
//	freshness        age in hours of the column's newest value     ≤ max_age_hours
//	row_count_min    rows of the dataset                           ≥ min_rows
//	custom_sql       the count the user's SELECT returns           ≤ max_failing (0)
//
// Only counts, percentages and ages leave the source; no value is ever stored.
package rule

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/scan"
)

// Rule types (Rule.rule_type of the contract).
const (
	TypeNotNull        = rulesql.TypeNotNull
	TypeUnique         = rulesql.TypeUnique
	TypeAcceptedValues = rulesql.TypeAcceptedValues
	TypePattern        = rulesql.TypePattern
	TypeRange          = rulesql.TypeRange
	TypeReferential    = rulesql.TypeReferential
	TypeFreshness      = rulesql.TypeFreshness
	TypeRowCountMin    = rulesql.TypeRowCountMin
	TypeCustomSQL      = rulesql.TypeCustomSQL
	// TypeDBTTest is a dbt test Vigia does not map to one of its own types; its results
	// come only from dbt runs (POST /integrations/dbt/run-results).
	TypeDBTTest = "dbt_test"
)

// Types lists every rule type.
func Types() []string {
	return []string{TypeNotNull, TypeUnique, TypeAcceptedValues, TypePattern, TypeRange, TypeReferential,
		TypeFreshness, TypeRowCountMin, TypeCustomSQL}
}

// AllTypes lists every rule type a rule may have: Types (those one can create) and
// dbt_test, which only dbt runs create.
func AllTypes() []string { return append(Types(), TypeDBTTest) }

// Severities of a rule.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// Result statuses (contract: Rule result).
const (
	StatusPassed       = "passed"
	StatusFailed       = "failed"
	StatusNotEvaluated = "not_evaluated"
)

// Bounds of a rule's parameters.
const (
	MaxColumns     = 16    // columns of a unique key
	MaxValues      = 5000  // values of an accepted_values list (over 500 there is no failing-rows query)
	MaxValueLength = 1000  // characters of one accepted value
	MaxPattern     = 1000  // characters of a pattern
	MaxSQL         = 10000 // characters of a custom_sql query
	MaxName        = 200   // characters of a rule's name and of a column name
	MaxAgeHours    = 596523
)

// Reason codes of a not_evaluated result (and of failed results where they help).
const (
	ReasonReferenceMissing         = "reference_missing"          // the reference dataset was deleted
	ReasonReferenceOtherConnection = "reference_other_connection" // the reference dataset is on another connection
	ReasonReferenceUnreachable     = "reference_unreachable"      // the reference table is gone from the source
	ReasonReferenceColumnMissing   = "reference_column_missing"   // the reference column is gone
	ReasonColumnMissing            = "column_missing"             // a column of the rule is gone
	ReasonPatternUnsupported       = "pattern_unsupported"        // the source's dialect has no regular expressions
	ReasonSQLNotReadOnly           = "sql_not_read_only"          // the custom SQL no longer passes the read-only check
	ReasonNoValues                 = "no_values"                  // freshness: the column has no value to date
	ReasonBadResult                = "bad_result"                 // custom_sql did not answer one integer
	ReasonTimeout                  = "timeout"                    // the statement timeout expired
	ReasonSourceError              = "source_error"               // the source refused the statement (params: reason, code)
)

// Rule is a data-quality check on a dataset.
type Rule struct {
	ID          string
	WorkspaceID string
	DatasetID   string
	// DatasetSchema and DatasetTable name the dataset's table; ConnectionID and
	// ConnectionKind (postgres, mysql, sqlite) its source.
	DatasetSchema  string
	DatasetTable   string
	ConnectionID   string
	ConnectionKind string
	Type           string
	Name           string
	Severity       string
	Params         Params
	Active         bool
	CreatedBy      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// LastResult is nil before the first scan that evaluated the rule.
	LastResult *Result
	// CurrentIssueID is the rule's current issue (open, acknowledged, ignored while
	// failing, or resolved awaiting verification), nil without one.
	CurrentIssueID *string
	// RefDataset is the reference dataset of a referential rule; services keep it only
	// for readers who can see it.
	RefDataset *DatasetRef
	// RefRestricted is set for a reader who cannot see the reference dataset: its id is
	// then left out of Params too.
	RefRestricted bool
	// DBTUniqueID is the unique_id of the dbt test the rule stands for (its results come
	// from dbt runs, never from scans); nil for Vigia's own rules.
	DBTUniqueID *string
}

// DatasetName is schema.table.
func (r Rule) DatasetName() string { return qualified(r.DatasetSchema, r.DatasetTable) }

// DatasetRef is a dataset by id, schema and table.
type DatasetRef struct {
	ID     string
	Schema string
	Table  string
}

// Name is schema.table.
func (d DatasetRef) Name() string { return qualified(d.Schema, d.Table) }

func qualified(schema, table string) string {
	if schema == "" {
		return table
	}
	return schema + "." + table
}

// Params are a rule's checked parameters; which are set depends on the type (see ParamsIn.Check).
type Params struct {
	Column       string   `json:"column,omitempty"`
	Columns      []string `json:"columns,omitempty"`
	Values       []string `json:"values,omitempty"`
	Pattern      string   `json:"pattern,omitempty"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	RefDatasetID string   `json:"ref_dataset_id,omitempty"`
	RefColumn    string   `json:"ref_column,omitempty"`
	MaxOrphanPct *float64 `json:"max_orphan_pct,omitempty"`
	MaxAgeHours  *float64 `json:"max_age_hours,omitempty"`
	MinRows      *int64   `json:"min_rows,omitempty"`
	SQL          string   `json:"sql,omitempty"`
	MaxFailing   *int64   `json:"max_failing,omitempty"`
	// DBTTest is the generic test's name of a dbt_test rule (empty for a singular test).
	DBTTest string `json:"dbt_test,omitempty"`
}

// KeyColumns are the columns the rule reads on its own dataset.
func (p Params) KeyColumns() []string {
	if len(p.Columns) > 0 {
		return p.Columns
	}
	if p.Column != "" {
		return []string{p.Column}
	}
	return nil
}

// Result is a rule's result in one scan (last_result of the contract).
type Result struct {
	Status string
	// ScanID is the scan that evaluated the rule; empty for a dbt run's result, which
	// has DBTInvocationID (maybe empty too when the run sent none).
	ScanID          string
	DBTInvocationID string
	EvaluatedAt     time.Time
	Observed        *float64
	Threshold       *float64
	// Reason is nil when there is nothing to explain.
	Reason *Reason
}

// Reason explains a result. Message is filled in the reader's language; Params never
// name a reference dataset the reader cannot see.
type Reason struct {
	Code    string
	Params  map[string]any
	Message string
}

// ParamsIn are a rule's parameters as sent, typed; nil is "not given". Decoded from
// JSON (UnmarshalJSON) they keep, instead of failing, what could not be read (a value
// of the wrong type, an unknown key) for Check, so that every problem is answered at
// once and no received value is kept. MinRows and MaxFailing are integers; a fraction
// is refused by Check.
type ParamsIn struct {
	Column       *string
	Columns      []string
	Values       []string
	Pattern      *string
	Min          *float64
	Max          *float64
	RefDatasetID *string
	RefColumn    *string
	MaxOrphanPct *float64
	MaxAgeHours  *float64
	MinRows      *float64
	SQL          *string
	MaxFailing   *float64

	unreadable []vigia.FieldError // decoding problems, located under params
}

// given names the parameters that were sent, by their contract name.
func (in ParamsIn) given() map[string]bool {
	g := map[string]bool{}
	set := func(name string, ok bool) {
		if ok {
			g[name] = true
		}
	}
	set("column", in.Column != nil)
	set("columns", in.Columns != nil)
	set("values", in.Values != nil)
	set("pattern", in.Pattern != nil)
	set("min", in.Min != nil)
	set("max", in.Max != nil)
	set("ref_dataset_id", in.RefDatasetID != nil)
	set("ref_column", in.RefColumn != nil)
	set("max_orphan_pct", in.MaxOrphanPct != nil)
	set("max_age_hours", in.MaxAgeHours != nil)
	set("min_rows", in.MinRows != nil)
	set("sql", in.SQL != nil)
	set("max_failing", in.MaxFailing != nil)
	return g
}

// UnmarshalJSON reads a JSON object of parameters. Texts must be strings, numbers
// numbers, lists lists; accepted values may be strings, numbers or booleans. A key
// that is not a parameter, or a value of the wrong type, is kept as a problem for
// Check; null is not given.
func (in *ParamsIn) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*in = ParamsIn{}
	bad := func(typ, name string) {
		in.unreadable = append(in.unreadable, vigia.Field(typ, nil, "params", name))
	}
	text := func(name string, v json.RawMessage) *string {
		var s string
		if json.Unmarshal(v, &s) != nil {
			bad("string_type", name)
			return nil
		}
		return &s
	}
	number := func(name string, v json.RawMessage) *float64 {
		var f float64
		if json.Unmarshal(v, &f) != nil {
			bad("float_parsing", name)
			return nil
		}
		return &f
	}
	list := func(name string, v json.RawMessage, item func(json.RawMessage) (string, bool)) []string {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			bad("list_type", name)
			return nil
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := item(it)
			if !ok {
				bad("value_error", name)
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := raw[k]
		if string(v) == "null" {
			continue
		}
		switch k {
		case "column":
			in.Column = text(k, v)
		case "columns":
			in.Columns = list(k, v, func(it json.RawMessage) (string, bool) {
				var s string
				return s, json.Unmarshal(it, &s) == nil
			})
		case "values":
			in.Values = list(k, v, scalarText)
		case "pattern":
			in.Pattern = text(k, v)
		case "min":
			in.Min = number(k, v)
		case "max":
			in.Max = number(k, v)
		case "ref_dataset_id":
			in.RefDatasetID = text(k, v)
		case "ref_column":
			in.RefColumn = text(k, v)
		case "max_orphan_pct":
			in.MaxOrphanPct = number(k, v)
		case "max_age_hours":
			in.MaxAgeHours = number(k, v)
		case "min_rows":
			in.MinRows = number(k, v)
		case "sql":
			in.SQL = text(k, v)
		case "max_failing":
			in.MaxFailing = number(k, v)
		default:
			bad("extra_forbidden", safeKey(k))
		}
	}
	return nil
}

// allowedParams lists, per type, the parameters it takes and the required ones.
var allowedParams = map[string]struct{ allowed, required []string }{
	TypeNotNull:        {[]string{"column", "max_failing"}, []string{"column"}},
	TypeUnique:         {[]string{"column", "columns", "max_failing"}, nil},
	TypeAcceptedValues: {[]string{"column", "values", "max_failing"}, []string{"column", "values"}},
	TypePattern:        {[]string{"column", "pattern", "max_failing"}, []string{"column", "pattern"}},
	TypeRange:          {[]string{"column", "min", "max", "max_failing"}, []string{"column"}},
	TypeReferential:    {[]string{"column", "ref_dataset_id", "ref_column", "max_orphan_pct"}, []string{"column", "ref_dataset_id", "ref_column"}},
	TypeFreshness:      {[]string{"column", "max_age_hours"}, []string{"column", "max_age_hours"}},
	TypeRowCountMin:    {[]string{"min_rows"}, []string{"min_rows"}},
	TypeCustomSQL:      {[]string{"sql", "max_failing"}, []string{"sql"}},
}

// Check validates the parameters against the rule type and returns them normalised:
// unique keeps its columns in columns (a single column may come as column), and the
// limits take their defaults (max_failing 0, max_orphan_pct 0). It returns the 422
// items of every problem, named under params; a received value is never put in them.
func (in ParamsIn) Check(ruleType string) (Params, []vigia.FieldError) {
	spec, ok := allowedParams[ruleType]
	if !ok {
		return Params{}, []vigia.FieldError{vigia.Field("enum", nil, "rule_type")}
	}
	fields := append([]vigia.FieldError{}, in.unreadable...)
	fail := func(typ string, ctx map[string]any, name string) {
		fields = append(fields, vigia.Field(typ, ctx, "params", name))
	}
	given, allowed := in.given(), map[string]bool{}
	for _, k := range spec.allowed {
		allowed[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if !allowed[k] {
			fail("extra_forbidden", nil, k)
		}
	}
	for _, k := range spec.required {
		if !given[k] && !slices.ContainsFunc(in.unreadable, func(f vigia.FieldError) bool { return f.Loc[len(f.Loc)-1] == k }) {
			fail("missing", nil, k)
		}
	}
	text := func(name string, v *string, maxLen int) string {
		switch {
		case v == nil:
		case strings.TrimSpace(*v) == "":
			fail("string_too_short", map[string]any{"min_length": 1}, name)
		case len([]rune(*v)) > maxLen:
			fail("string_too_long", map[string]any{"max_length": maxLen}, name)
		default:
			return *v
		}
		return ""
	}
	number := func(name string, v *float64, ge, le *float64) *float64 {
		switch {
		case v == nil:
		case math.IsNaN(*v) || math.IsInf(*v, 0):
			fail("float_parsing", nil, name)
		case ge != nil && *v < *ge:
			fail("greater_than_equal", map[string]any{"ge": *ge}, name)
		case le != nil && *v > *le:
			fail("less_than_equal", map[string]any{"le": *le}, name)
		default:
			f := *v
			return &f
		}
		return nil
	}
	integer := func(name string, v *float64, ge, le float64) *int64 {
		f := number(name, v, &ge, &le)
		if f == nil {
			return nil
		}
		if *f != math.Trunc(*f) {
			fail("int_parsing", nil, name)
			return nil
		}
		n := int64(*f)
		return &n
	}
	var p Params
	p.Column = text("column", in.Column, MaxName)
	if allowed["max_failing"] {
		if p.MaxFailing = integer("max_failing", in.MaxFailing, 0, 1e15); p.MaxFailing == nil {
			p.MaxFailing = new(int64)
		}
	}
	switch ruleType {
	case TypeUnique:
		p.Columns, p.Column = in.uniqueColumns(p.Column, fail), ""
	case TypeAcceptedValues:
		switch v := in.Values; {
		case v == nil:
		case len(v) == 0:
			fail("too_short", map[string]any{"min_length": 1}, "values")
		case len(v) > MaxValues:
			fail("too_long", map[string]any{"max_length": MaxValues}, "values")
		case slices.ContainsFunc(v, func(s string) bool { return len([]rune(s)) > MaxValueLength }):
			fail("value_error", nil, "values")
		default:
			p.Values = v
		}
	case TypePattern:
		p.Pattern = text("pattern", in.Pattern, MaxPattern)
	case TypeRange:
		p.Min, p.Max = number("min", in.Min, nil, nil), number("max", in.Max, nil, nil)
		if !given["min"] && !given["max"] {
			fail("missing", nil, "min")
		}
		if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
			fail("value_error", nil, "min")
		}
	case TypeReferential:
		zero, hundred := 0.0, 100.0
		p.RefDatasetID = text("ref_dataset_id", in.RefDatasetID, 64)
		p.RefColumn = text("ref_column", in.RefColumn, MaxName)
		if p.MaxOrphanPct = number("max_orphan_pct", in.MaxOrphanPct, &zero, &hundred); p.MaxOrphanPct == nil {
			p.MaxOrphanPct = new(float64)
		}
	case TypeFreshness:
		minute, maxAge := 1.0/60, float64(MaxAgeHours)
		p.MaxAgeHours = number("max_age_hours", in.MaxAgeHours, &minute, &maxAge)
	case TypeRowCountMin:
		p.MinRows = integer("min_rows", in.MinRows, 0, 1e15)
	case TypeCustomSQL:
		p.SQL = text("sql", in.SQL, MaxSQL)
	}
	if len(fields) > 0 {
		return Params{}, fields
	}
	return p, nil
}

// uniqueColumns is the key of a unique rule: columns, or the one column.
func (in ParamsIn) uniqueColumns(column string, fail func(string, map[string]any, string)) []string {
	if in.Columns == nil {
		if column == "" {
			if in.Column == nil {
				fail("missing", nil, "columns")
			}
			return nil
		}
		return []string{column}
	}
	if in.Column != nil {
		fail("value_error", nil, "columns")
	}
	switch {
	case len(in.Columns) == 0:
		fail("too_short", map[string]any{"min_length": 1}, "columns")
	case len(in.Columns) > MaxColumns:
		fail("too_long", map[string]any{"max_length": MaxColumns}, "columns")
	default:
		seen := map[string]bool{}
		for _, c := range in.Columns {
			if strings.TrimSpace(c) == "" || len([]rune(c)) > MaxName || seen[c] {
				fail("value_error", nil, "columns")
				return nil
			}
			seen[c] = true
		}
		return in.Columns
	}
	return nil
}

// scalarText renders an accepted value given as a string, a number or a boolean.
func scalarText(v json.RawMessage) (string, bool) {
	var x any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&x) != nil {
		return "", false
	}
	switch x := x.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case json.Number:
		f, err := x.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", false
		}
		return formatNumber(f), true
	}
	return "", false
}

// safeKey keeps an unknown parameter's name only when it looks like a name, so a crafted
// key cannot carry a value into an error.
func safeKey(s string) string {
	if len(s) > 64 {
		return "?"
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "?"
		}
	}
	return s
}

// Filter selects rules; nil fields do not filter.
type Filter struct {
	DatasetID *string
	RuleType  *string
	Severity  *string
	// Status filters by the last result's status.
	Status *string
	Page   vigia.Page
}

// ScanRule is an active rule as a scan evaluates it, with its reference dataset.
type ScanRule struct {
	Rule
	// Ref is the reference dataset of a referential rule; nil when it was deleted.
	Ref *RefDataset
}

// RefDataset is the reference dataset of a referential rule, as the evaluation needs it.
type RefDataset struct {
	ID           string
	ConnectionID string
	Schema       string
	Table        string
	Dropped      bool
	Columns      []string
}

// Store is the persistence rules need. Reads are scoped to a workspace and to the
// datasets the viewer can see.
type Store interface {
	// ManagedByConfig tells the rules configuration as code manages.
	vigia.ManagedLookup
	// ReportedRuleOutcomes returns the last passed or failed results of a dataset's
	// active rules reported from outside scans (dbt tests), as score outcomes.
	ReportedRuleOutcomes(ctx context.Context, datasetID string) ([]quality.RuleOutcome, error)
	CreateRule(ctx context.Context, r Rule) error
	// CreateRules creates rules and records a, all in one transaction.
	CreateRules(ctx context.Context, rules []Rule, a event.Activity) error
	UpdateRule(ctx context.Context, r Rule) error
	// DeleteRule deletes a rule with its results and resolves its current issue (history
	// origin origin, event rule_deleted).
	DeleteRule(ctx context.Context, workspaceID, id, origin string, at time.Time) error
	// RuleByID returns a rule of a dataset the viewer can see, with its last result;
	// KindNotFound otherwise.
	RuleByID(ctx context.Context, v catalog.Viewer, id string) (Rule, error)
	// Rules lists the rules of datasets the viewer can see, with their last results.
	Rules(ctx context.Context, v catalog.Viewer, f Filter) (vigia.List[Rule], error)
	// VisibleDatasetNames returns schema.table of the datasets among ids that the viewer
	// can see (live or dropped); the others are absent.
	VisibleDatasetNames(ctx context.Context, v catalog.Viewer, ids []string) (map[string]string, error)
	// ActiveRulesOf lists a dataset's active rules for a scan (no visibility: the scan
	// acts for the workspace).
	ActiveRulesOf(ctx context.Context, datasetID string) ([]ScanRule, error)
	AddActivity(ctx context.Context, a event.Activity) error
	// RecordDBTRun, in one transaction, creates or updates the rules of runs' dbt tests
	// (found by workspace and dbt unique_id, their ids and active flags set in place:
	// a rule switched off stays off and its result is not kept), reads their
	// current issues and saves what apply makes of them per dataset (see
	// scan.ApplyRuleResults and the scan store's SaveRuleRun).
	RecordDBTRun(ctx context.Context, rules []DBTRule, apply func(current []scan.KnownIssue) []scan.RuleRun) error
}

// DBTRule is the rule of a dbt test: created on first sight, its type, params and
// dataset follow the manifest on later runs.
type DBTRule struct {
	Rule
	UniqueID string
}

// In returns the parameters as an input (to change one of them in an update).
func (p Params) In() ParamsIn {
	return ParamsIn{Column: optString(p.Column), Columns: p.Columns, Values: p.Values, Pattern: optString(p.Pattern), Min: p.Min, Max: p.Max,
		RefDatasetID: optString(p.RefDatasetID), RefColumn: optString(p.RefColumn), MaxOrphanPct: p.MaxOrphanPct, MaxAgeHours: p.MaxAgeHours,
		MinRows: optCount(p.MinRows), SQL: optString(p.SQL), MaxFailing: optCount(p.MaxFailing)}
}

// optString is nil for an empty parameter, as an input leaves it out.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optCount is a stored count as an input's number.
func optCount(n *int64) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}
