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
	"context"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rulesql"
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
)

// Types lists every rule type.
func Types() []string {
	return []string{TypeNotNull, TypeUnique, TypeAcceptedValues, TypePattern, TypeRange, TypeReferential,
		TypeFreshness, TypeRowCountMin, TypeCustomSQL}
}

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

// Params are a rule's parameters; which are set depends on the type (see ParseParams).
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
	Status      string
	ScanID      string
	EvaluatedAt time.Time
	Observed    *float64
	Threshold   *float64
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

// ParseParams checks raw parameters (as decoded from JSON) against the rule type and
// returns them normalised: unique keeps its columns in columns (a single column may come
// as column), and the limits take their defaults (max_failing 0, max_orphan_pct 0). It
// returns the 422 items of every problem, located under body.params; a received value
// is never put in them.
func ParseParams(ruleType string, raw map[string]any) (Params, []vigia.FieldError) {
	spec, ok := allowedParams[ruleType]
	if !ok {
		return Params{}, []vigia.FieldError{vigia.Field("enum", nil, "body", "rule_type")}
	}
	var fields []vigia.FieldError
	fail := func(typ string, ctx map[string]any, name ...string) {
		fields = append(fields, vigia.Field(typ, ctx, append([]string{"body", "params"}, name...)...))
	}
	allowed := map[string]bool{}
	for _, k := range spec.allowed {
		allowed[k] = true
	}
	for k := range raw {
		if !allowed[k] {
			fail("extra_forbidden", nil, safeKey(k))
		}
	}
	for _, k := range spec.required {
		if v, ok := raw[k]; !ok || v == nil {
			fail("missing", nil, k)
		}
	}
	var p Params
	str := func(k string, maxLen int) string {
		v, ok := raw[k]
		if !ok || v == nil {
			return ""
		}
		s, ok := v.(string)
		switch {
		case !ok:
			fail("string_type", nil, k)
		case strings.TrimSpace(s) == "":
			fail("string_too_short", map[string]any{"min_length": 1}, k)
		case len([]rune(s)) > maxLen:
			fail("string_too_long", map[string]any{"max_length": maxLen}, k)
		default:
			return s
		}
		return ""
	}
	num := func(k string, ge, le *float64) *float64 {
		v, ok := raw[k]
		if !ok || v == nil {
			return nil
		}
		f, ok := v.(float64)
		if !ok {
			if n, isNum := v.(json.Number); isNum {
				var err error
				if f, err = n.Float64(); err == nil {
					ok = true
				}
			}
		}
		switch {
		case !ok || math.IsNaN(f) || math.IsInf(f, 0):
			fail("float_parsing", nil, k)
		case ge != nil && f < *ge:
			fail("greater_than_equal", map[string]any{"ge": *ge}, k)
		case le != nil && f > *le:
			fail("less_than_equal", map[string]any{"le": *le}, k)
		default:
			return &f
		}
		return nil
	}
	integer := func(k string, ge, le float64) *int64 {
		f := num(k, &ge, &le)
		if f == nil {
			return nil
		}
		if *f != math.Trunc(*f) {
			fail("int_parsing", nil, k)
			return nil
		}
		n := int64(*f)
		return &n
	}
	zero, hundred := 0.0, 100.0
	maxAge := float64(MaxAgeHours)
	p.Column = str("column", MaxName)
	if allowed["max_failing"] {
		p.MaxFailing = integer("max_failing", 0, 1e15)
		if p.MaxFailing == nil {
			p.MaxFailing = new(int64)
		}
	}
	switch ruleType {
	case TypeUnique:
		cols := p.KeyColumns()
		if v, ok := raw["columns"]; ok && v != nil {
			if p.Column != "" {
				fail("value_error", nil, "columns")
			}
			list, ok := v.([]any)
			switch {
			case !ok:
				fail("list_type", nil, "columns")
			case len(list) == 0:
				fail("too_short", map[string]any{"min_length": 1}, "columns")
			case len(list) > MaxColumns:
				fail("too_long", map[string]any{"max_length": MaxColumns}, "columns")
			default:
				cols = nil
				seen := map[string]bool{}
				for _, item := range list {
					s, ok := item.(string)
					if !ok || strings.TrimSpace(s) == "" || len([]rune(s)) > MaxName {
						fail("value_error", nil, "columns")
						break
					}
					if seen[s] {
						fail("value_error", nil, "columns")
						break
					}
					seen[s] = true
					cols = append(cols, s)
				}
			}
		} else if p.Column == "" {
			fail("missing", nil, "columns")
		}
		p.Column, p.Columns = "", cols
	case TypeAcceptedValues:
		v, ok := raw["values"]
		if ok && v != nil {
			list, isList := v.([]any)
			switch {
			case !isList:
				fail("list_type", nil, "values")
			case len(list) == 0:
				fail("too_short", map[string]any{"min_length": 1}, "values")
			case len(list) > MaxValues:
				fail("too_long", map[string]any{"max_length": MaxValues}, "values")
			default:
				for _, item := range list {
					s, good := scalarText(item)
					if !good || len([]rune(s)) > MaxValueLength {
						fail("value_error", nil, "values")
						p.Values = nil
						break
					}
					p.Values = append(p.Values, s)
				}
			}
		}
	case TypePattern:
		p.Pattern = str("pattern", MaxPattern)
	case TypeRange:
		p.Min, p.Max = num("min", nil, nil), num("max", nil, nil)
		_, hasMin := raw["min"]
		_, hasMax := raw["max"]
		if !hasMin && !hasMax {
			fail("missing", nil, "min")
		}
		if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
			fail("value_error", nil, "min")
		}
	case TypeReferential:
		p.RefDatasetID = str("ref_dataset_id", 64)
		p.RefColumn = str("ref_column", MaxName)
		p.MaxOrphanPct = num("max_orphan_pct", &zero, &hundred)
		if p.MaxOrphanPct == nil {
			p.MaxOrphanPct = new(float64)
		}
	case TypeFreshness:
		small := 1.0 / 60 // one minute
		p.MaxAgeHours = num("max_age_hours", &small, &maxAge)
	case TypeRowCountMin:
		p.MinRows = integer("min_rows", 0, 1e15)
	case TypeCustomSQL:
		p.SQL = str("sql", MaxSQL)
	}
	if len(fields) > 0 {
		return Params{}, fields
	}
	return p, nil
}

// scalarText renders an accepted value given as a string, a number or a boolean.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return formatNumber(x), true
	case json.Number:
		return x.String(), true
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
	CreateRule(ctx context.Context, r Rule) error
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
}
