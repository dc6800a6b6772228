package rest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/rulesql"
)

// ReasonHeader carries, on a 204 of failing-rows.sql, why no row-level query exists
// (row_count_min, stream_rule, value_list_too_long, custom_sql_not_row_level,
// pattern_unsupported_in_dialect, reference_not_visible, unsupported_rule).
const ReasonHeader = "X-Vigia-Reason"

// RuleOut is a rule with its last result.
type RuleOut struct {
	ID          string        `json:"id"`
	DatasetID   string        `json:"dataset_id"`
	DatasetName string        `json:"dataset_name"`
	RuleType    string        `json:"rule_type" enum:"not_null,unique,accepted_values,pattern,range,referential,freshness,row_count_min,custom_sql,dbt_test" doc:"dbt_test: a dbt test of no Vigia type, whose results come from dbt runs"`
	Name        string        `json:"name"`
	Severity    string        `json:"severity" enum:"critical,warning,info"`
	Params      RuleParamsOut `json:"params"`
	Active      bool          `json:"active"`
	// RefDatasetName names a referential rule's reference dataset when the caller can
	// see it; null otherwise.
	RefDatasetName *string `json:"ref_dataset_name" doc:"schema.table of the reference dataset; null when the caller cannot see it"`
	// RefDatasetRestricted is true when the caller cannot see the reference dataset:
	// neither its name nor its id is given then.
	RefDatasetRestricted bool           `json:"ref_dataset_restricted"`
	LastResult           *RuleResultOut `json:"last_result" doc:"null before the first scan that evaluated the rule"`
	CurrentIssueID       *string        `json:"current_issue_id" doc:"The rule's current issue (open, acknowledged, ignored while failing, or resolved awaiting verification)"`
	DBTUniqueID          *string        `json:"dbt_unique_id" doc:"The dbt test the rule stands for (its results come from dbt runs, never from scans); null for Vigia's rules"`
	CreatedAt            time.Time      `json:"created_at"`
	UpdatedAt            time.Time      `json:"updated_at"`
}

// RuleParamsOut are a rule's parameters; only those of its type are present.
type RuleParamsOut struct {
	Column       string   `json:"column,omitempty"`
	Columns      []string `json:"columns,omitempty" doc:"unique: the key's columns"`
	Values       []string `json:"values,omitempty" doc:"accepted_values"`
	Pattern      string   `json:"pattern,omitempty" doc:"pattern: a regular expression a valid value contains"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	RefDatasetID string   `json:"ref_dataset_id,omitempty"`
	RefColumn    string   `json:"ref_column,omitempty"`
	MaxOrphanPct *float64 `json:"max_orphan_pct,omitempty" doc:"referential: percent of non-null rows without a match allowed (default 0)"`
	MaxAgeHours  *float64 `json:"max_age_hours,omitempty" doc:"freshness: how old the newest value may be"`
	MinRows      *int64   `json:"min_rows,omitempty" doc:"row_count_min"`
	SQL          string   `json:"sql,omitempty" doc:"custom_sql: one read-only SELECT returning the failing count"`
	MaxFailing   *int64   `json:"max_failing,omitempty" doc:"failing rows allowed (default 0)"`
	DBTTest      string   `json:"dbt_test,omitempty" doc:"dbt_test: the dbt generic test's name (absent for a singular test)"`
}

// RuleResultOut is a rule's result in a scan.
type RuleResultOut struct {
	Status          string         `json:"status" enum:"passed,failed,not_evaluated"`
	ScanID          *string        `json:"scan_id" doc:"The scan that evaluated the rule; null for a result a dbt run reported"`
	DBTInvocationID *string        `json:"dbt_invocation_id" doc:"The dbt run (invocation_id) that reported the result; null for a scan's, or a run that sent no usable invocation_id"`
	EvaluatedAt     time.Time      `json:"evaluated_at"`
	Observed        *float64       `json:"observed" doc:"What the rule measured (rows, percent of orphans, hours); null when not evaluated"`
	Threshold       *float64       `json:"threshold" doc:"The rule's limit"`
	Reason          *RuleReasonOut `json:"reason" doc:"Why the rule was not evaluated; null otherwise"`
}

// RuleReasonOut explains a rule's result; it never names a reference dataset the
// caller cannot see.
type RuleReasonOut struct {
	Code    string         `json:"code" doc:"Stable: reference_missing, reference_other_connection, reference_unreachable, reference_column_missing, column_missing, pattern_unsupported, sql_not_read_only, no_values, bad_result, timeout, source_error, dbt_error, dbt_skipped"`
	Message string         `json:"message" doc:"In the response language"`
	Params  map[string]any `json:"params"`
}

// RuleIn creates a rule.
type RuleIn struct {
	DatasetID string         `json:"dataset_id" maxLength:"64"`
	RuleType  string         `json:"rule_type" enum:"not_null,unique,accepted_values,pattern,range,referential,freshness,row_count_min,custom_sql"`
	Severity  *string        `json:"severity,omitempty" enum:"critical,warning,info" doc:"default warning"`
	Name      *string        `json:"name,omitempty" maxLength:"200"`
	Params    map[string]any `json:"params" doc:"Parameters of the rule type (see RuleParamsOut)"`
	Active    *bool          `json:"active,omitempty" doc:"default true"`
}

// RulePatchIn changes a rule; absent fields keep their value, params replace the set.
type RulePatchIn struct {
	Name     *string        `json:"name,omitempty" maxLength:"200"`
	Severity *string        `json:"severity,omitempty" enum:"critical,warning,info"`
	Params   map[string]any `json:"params,omitempty"`
	Active   *bool          `json:"active,omitempty"`
}

var ruleIDParam = param{Name: "rule_id", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) ruleRoutes() {
	s.ruleFileRoutes()
	s.rulePackRoutes()
	s.register(operation{ID: "listRules", Method: http.MethodGet, Path: "/api/v1/rules", Tag: "rules", List: true, ListDefault: rule.PageDefault,
		Summary: "Rules of the datasets the caller can see, with last_result", Response: []RuleOut{},
		Params: []param{
			{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64},
			{Name: "rule_type", In: "query", Type: "string", Enum: rule.AllTypes()},
			{Name: "severity", In: "query", Type: "string", Enum: []string{"critical", "warning", "info"}},
			{Name: "status", In: "query", Type: "string", Enum: []string{"passed", "failed", "not_evaluated"}, Desc: "Status of the last result"},
		}}, s.handleRuleList)
	s.register(operation{ID: "createRule", Method: http.MethodPost, Path: "/api/v1/rules", Tag: "rules", Status: http.StatusCreated,
		Summary: "Add a rule to a dataset (member or admin session)", Body: RuleIn{}, Response: RuleOut{},
		Desc: "Evaluated in every scan of the dataset's connection from the next one on. 404 when the dataset or the reference " +
			"dataset does not exist or cannot be seen; 422 for parameters the type does not take, a column the dataset does not have, " +
			"or a custom_sql that is not one read-only SELECT."}, s.handleRuleCreate)
	s.register(operation{ID: "getRule", Method: http.MethodGet, Path: "/api/v1/rules/{rule_id}", Tag: "rules",
		Summary: "One rule with last_result", Params: []param{ruleIDParam}, Response: RuleOut{}}, s.handleRuleGet)
	s.register(operation{ID: "updateRule", Method: http.MethodPatch, Path: "/api/v1/rules/{rule_id}", Tag: "rules",
		Summary: "Change a rule (member or admin session)", Params: []param{ruleIDParam}, Body: RulePatchIn{}, Response: RuleOut{}},
		s.handleRuleUpdate)
	s.register(operation{ID: "deleteRule", Method: http.MethodDelete, Path: "/api/v1/rules/{rule_id}", Tag: "rules",
		Summary: "Delete a rule; its current issue is resolved (member or admin session)", Params: []param{ruleIDParam},
		Status: http.StatusNoContent}, s.handleRuleDelete)
	s.register(operation{ID: "ruleFailingRowsSQL", Method: http.MethodGet, Path: "/api/v1/rules/{rule_id}/failing-rows.sql", Tag: "rules",
		Summary: "The query that lists the rows failing a rule (generated, never run)", ContentType: "text/plain",
		Params: []param{ruleIDParam,
			{Name: "dialect", In: "query", Type: "string", Enum: dialectNames(), Desc: "Default: the source's dialect"},
			{Name: "limit", In: "query", Type: "integer", Min: intp(1), Max: intp(rule.MaxFailingRowsLimit), Default: int64(rule.DefaultFailingRowsLimit)},
		},
		Headers:   map[string]string{"dialect": "The dialect of the query"},
		NoContent: "No row-level query exists for the rule; the " + ReasonHeader + " header says why",
		Desc: "Names are quoted for the dialect and the rule's parameters escaped; the query holds no value of the data. " +
			"Each read is recorded in the activity log as failing_rows_sql_read."}, s.handleRuleFailingRows)
}

func dialectNames() []string {
	out := []string{}
	for _, d := range rulesql.Dialects() {
		out = append(out, string(d))
	}
	return out
}

func toRuleOut(r rule.Rule) RuleOut {
	p := r.Params
	out := RuleOut{ID: r.ID, DatasetID: r.DatasetID, DatasetName: r.DatasetName(), RuleType: r.Type, Name: r.Name, Severity: r.Severity,
		Active: r.Active, CurrentIssueID: r.CurrentIssueID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		RefDatasetRestricted: r.RefRestricted,
		Params: RuleParamsOut{Column: p.Column, Columns: p.Columns, Values: p.Values, Pattern: p.Pattern, Min: p.Min, Max: p.Max,
			RefDatasetID: p.RefDatasetID, RefColumn: p.RefColumn, MaxOrphanPct: p.MaxOrphanPct, MaxAgeHours: p.MaxAgeHours,
			MinRows: p.MinRows, SQL: p.SQL, MaxFailing: p.MaxFailing, DBTTest: p.DBTTest}, DBTUniqueID: r.DBTUniqueID}
	if r.RefDataset != nil {
		name := r.RefDataset.Name()
		out.RefDatasetName = &name
	}
	if lr := r.LastResult; lr != nil {
		out.LastResult = &RuleResultOut{Status: lr.Status, ScanID: optStr(lr.ScanID), EvaluatedAt: lr.EvaluatedAt, Observed: lr.Observed,
			Threshold: lr.Threshold}
		if lr.ScanID == "" {
			out.LastResult.DBTInvocationID = optStr(lr.DBTInvocationID)
		}
		if lr.Reason != nil {
			params := lr.Reason.Params
			if params == nil {
				params = map[string]any{}
			}
			out.LastResult.Reason = &RuleReasonOut{Code: lr.Reason.Code, Message: lr.Reason.Message, Params: params}
		}
	}
	return out
}

func (s *Server) handleRuleList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Workflow.Rules.Rules(r.Context(), rule.Filter{DatasetID: in.String("dataset_id"), RuleType: in.String("rule_type"),
		Severity: in.String("severity"), Status: in.String("status"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]RuleOut, 0, len(res.Items))
	for _, ru := range res.Items {
		out = append(out, toRuleOut(ru))
	}
	list(w, res.Total, out)
}

func (s *Server) handleRuleCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body RuleIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	ci := rule.CreateInput{DatasetID: body.DatasetID, RuleType: body.RuleType, Params: ruleParams(body.Params), Active: body.Active}
	if body.Severity != nil {
		ci.Severity = *body.Severity
	}
	if body.Name != nil {
		ci.Name = *body.Name
	}
	ru, err := s.deps.Workflow.Rules.CreateRule(r.Context(), ci)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/rules/"+ru.ID)
	writeJSON(w, http.StatusCreated, toRuleOut(ru))
}

func (s *Server) handleRuleGet(w http.ResponseWriter, r *http.Request, in *input) {
	ru, err := s.deps.Workflow.Rules.Rule(r.Context(), in.Path("rule_id"))
	s.reply(w, r, err, func() any { return toRuleOut(ru) })
}

func (s *Server) handleRuleUpdate(w http.ResponseWriter, r *http.Request, in *input) {
	var body RulePatchIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	u := rule.Update{Name: body.Name, Severity: body.Severity, Active: body.Active}
	if body.Params != nil {
		p := ruleParams(body.Params)
		u.Params = &p
	}
	ru, err := s.deps.Workflow.Rules.UpdateRule(r.Context(), in.Path("rule_id"), u)
	s.reply(w, r, err, func() any { return toRuleOut(ru) })
}

// ruleParams reads a body's params object (kept a free-form object in the document,
// whose keys depend on rule_type) into the service's typed parameters, which keep what
// they cannot read for the service's check.
func ruleParams(raw map[string]any) rule.ParamsIn {
	var p rule.ParamsIn
	if b, err := json.Marshal(raw); err == nil {
		_ = json.Unmarshal(b, &p) // an object decoded from JSON is an object again
	}
	return p
}

func (s *Server) handleRuleDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Workflow.Rules.DeleteRule(r.Context(), in.Path("rule_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleRuleFailingRows(w http.ResponseWriter, r *http.Request, in *input) {
	fr, err := s.deps.Workflow.Rules.FailingRowsSQL(r.Context(), in.Path("rule_id"), in.String("dialect"), in.Int("limit"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("dialect", fr.Dialect)
	w.Header().Set("Cache-Control", "no-store")
	if fr.SQL == "" {
		w.Header().Set(ReasonHeader, fr.Reason)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(fr.SQL)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(fr.SQL))
}
