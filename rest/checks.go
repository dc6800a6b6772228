package rest

import (
	"context"
	"net/http"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/validate"
)

// ValidationService is what the transport needs of record validation.
type ValidationService interface {
	ValidateRecords(ctx context.Context, datasetID string, records []validate.Record) (validate.Report, error)
}

// ValidateIn is the body of a record validation (schema only; the handler reads it as
// validateBody, keeping each field's JSON as sent).
type ValidateIn struct {
	Records []map[string]any `json:"records" minItems:"1" maxItems:"5000" doc:"1-5000 records, each an object of column name → value; the whole body at most 2 MiB (2097152 bytes). A missing field is NULL."`
}

type validateBody struct {
	Records []validate.Record `json:"records"`
}

// ValidationFailureOut is one rule a record fails.
type ValidationFailureOut struct {
	RuleID string         `json:"rule_id"`
	Code   string         `json:"code" enum:"is_null,not_accepted_value,pattern_mismatch,out_of_range,not_a_number,type_mismatch,not_in_reference" doc:"Stable failure code"`
	Params map[string]any `json:"params" doc:"What the rule expects (column, pattern, min, max, values_count); never the value"`
}

// ValidationRecordOut is one record's answer.
type ValidationRecordOut struct {
	Index         int                    `json:"index" doc:"Position in the request, from 0"`
	Status        string                 `json:"status" enum:"passed,failed"`
	Passed        []string               `json:"passed" doc:"Ids of the rules the record passes"`
	Failed        []ValidationFailureOut `json:"failed"`
	NotApplicable []string               `json:"not_applicable" doc:"Ids of rules that cannot judge this record alone (a MySQL pattern on a value with a line break)"`
}

// ValidationToleranceOut is a rule's threshold as scans apply it (the one of its type).
type ValidationToleranceOut struct {
	MaxFailing   *int64   `json:"max_failing,omitempty" doc:"Row rules: failing records allowed in the batch (0 when the rule sets none)"`
	MaxOrphanPct *float64 `json:"max_orphan_pct,omitempty"`
	MaxAgeHours  *float64 `json:"max_age_hours,omitempty"`
	MinRows      *int64   `json:"min_rows,omitempty"`
}

// ValidationRuleOut is one rule's counts over the batch.
type ValidationRuleOut struct {
	RuleID            string                 `json:"rule_id"`
	Name              string                 `json:"name"`
	RuleType          string                 `json:"rule_type"`
	Severity          string                 `json:"severity" enum:"critical,warning,info"`
	Columns           []string               `json:"columns"`
	Status            string                 `json:"status" enum:"passed,failed,not_applicable" doc:"failed when the failing records exceed the tolerance"`
	Passed            int                    `json:"passed"`
	Failed            int                    `json:"failed"`
	NotApplicable     int                    `json:"not_applicable"`
	NotApplicableCode *string                `json:"not_applicable_code" enum:"dataset_wide,custom_sql,reference_not_cached,reference_missing,reference_other_connection,reference_unreachable,reference_not_visible,reference_lookup_budget,pattern_unsupported,column_missing" doc:"Why the rule cannot judge single records; null when it can"`
	Tolerance         ValidationToleranceOut `json:"tolerance"`
}

// ValidationOut is the answer to a record validation.
type ValidationOut struct {
	DatasetID         string                `json:"dataset_id"`
	Verdict           string                `json:"verdict" enum:"pass,warn,fail,unknown" doc:"fail: a critical rule fails beyond its tolerance; warn: only warning rules do; unknown: no rule could judge the records"`
	Records           int                   `json:"records"`
	PassedRecords     int                   `json:"passed_records"`
	FailedRecords     int                   `json:"failed_records"`
	Results           []ValidationRecordOut `json:"results" doc:"One per record, in request order"`
	Rules             []ValidationRuleOut   `json:"rules" doc:"The dataset's active rules, by id"`
	UnknownFields     []string              `json:"unknown_fields" doc:"Record field names matching no column (at most 100; a name that is not a plain identifier shows as ?)"`
	UnknownFieldCount int                   `json:"unknown_field_count"`
}

// validationLimitDefault is each token's (or session's) validations per rate window.
const validationLimitDefault = 30

func (s *Server) checkRoutes() {
	s.validateLimiter = newLimiter(s.cfg.RateLimitValidate, s.cfg.RateWindow, s.now)
	s.register(operation{ID: "validateRecords", Method: http.MethodPost, Path: "/api/v1/datasets/{dataset_id}/validate", Tag: "record-validation",
		TokenWrite: true, Summary: "Validate records against the dataset's rules before loading them (a marked write: API tokens may call it)",
		Params: []param{datasetIDParam}, Body: ValidateIn{}, Response: ValidationOut{}, MaxBody: validate.MaxBytes,
		Errors: map[int]string{http.StatusRequestEntityTooLarge: "More than 5000 records or a body over 2 MiB (payload_too_large)",
			http.StatusTooManyRequests: "Above the validation limit of the credential (rate_limited, Retry-After)"},
		Desc: "Evaluates the dataset's active rules that judge single records — not_null, accepted_values, pattern, range — with the " +
			"semantics of the scan's SQL on the dataset's source (a record's answer is the one the rule gives that value in a scan). " +
			"unique, freshness and row_count_min are not_applicable (dataset_wide), custom_sql too (custom_sql). Referential rules " +
			"look the batch's distinct keys up live on the reference (counts only; halves split where keys are missing; 400 " +
			"statements at most; the reference must be visible to the caller), failing records with not_in_reference. Patterns whose flavour differs between Go and the source " +
			"are not_applicable (pattern_unsupported: \\w, \\s, \\b, look-arounds, back-references, flags, locale classes). Nothing of the records is " +
			"stored or logged: one activity entry keeps the counts. Each credential has its own validation limit (30 per minute by " +
			"default), on top of the general per-token limit; the X-RateLimit-* headers then describe the validation limit."},
		s.handleValidateRecords)
}

func (s *Server) handleValidateRecords(w http.ResponseWriter, r *http.Request, in *input) {
	p, err := vigia.MustPrincipal(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := s.validateLimiter.take("validate:" + p.TokenID)
	setRateHeaders(w, q)
	if !q.Allowed {
		s.writeError(w, r, vigia.RateLimited(vigia.CodeRateLimited, secondsUntil(q.Reset, s.now())))
		return
	}
	var body validateBody
	if err := in.Decode(&body, validate.MaxBytes); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Records == nil {
		s.writeError(w, r, vigia.Invalid(vigia.Field("missing", nil, "records")))
		return
	}
	rep, err := s.deps.Validation.ValidateRecords(r.Context(), in.Path("dataset_id"), body.Records)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, toValidationOut(rep))
}

func toValidationOut(rep validate.Report) ValidationOut {
	out := ValidationOut{DatasetID: rep.DatasetID, Verdict: rep.Verdict, Records: rep.Records, PassedRecords: rep.PassedRecords,
		FailedRecords: rep.FailedRecords, Results: make([]ValidationRecordOut, 0, len(rep.Results)),
		Rules: make([]ValidationRuleOut, 0, len(rep.Rules)), UnknownFields: nonNilStrings(rep.UnknownFields),
		UnknownFieldCount: rep.UnknownFieldCount}
	for _, res := range rep.Results {
		o := ValidationRecordOut{Index: res.Index, Status: "passed", Passed: nonNilStrings(res.Passed),
			NotApplicable: nonNilStrings(res.NotApplicable), Failed: make([]ValidationFailureOut, 0, len(res.Failed))}
		if len(res.Failed) > 0 {
			o.Status = "failed"
		}
		for _, f := range res.Failed {
			o.Failed = append(o.Failed, ValidationFailureOut{RuleID: f.RuleID, Code: f.Code, Params: nonNilMap(f.Params)})
		}
		out.Results = append(out.Results, o)
	}
	for _, ru := range rep.Rules {
		o := ValidationRuleOut{RuleID: ru.RuleID, Name: ru.Name, RuleType: ru.Type, Severity: ru.Severity, Columns: nonNilStrings(ru.Columns),
			Status: ru.Status, Passed: ru.Passed, Failed: ru.Failed, NotApplicable: ru.NotApplicable,
			Tolerance: ValidationToleranceOut{MaxFailing: ru.Tolerance.MaxFailing, MaxOrphanPct: ru.Tolerance.MaxOrphanPct,
				MaxAgeHours: ru.Tolerance.MaxAgeHours, MinRows: ru.Tolerance.MinRows}}
		if ru.NotApplicableCode != "" {
			code := ru.NotApplicableCode
			o.NotApplicableCode = &code
		}
		if o.Tolerance.MaxFailing == nil && isRowRule(ru.Type) {
			zero := int64(0)
			o.Tolerance.MaxFailing = &zero
		}
		out.Rules = append(out.Rules, o)
	}
	return out
}

// isRowRule reports whether a rule type counts failing rows against max_failing.
func isRowRule(t string) bool {
	switch t {
	case "not_null", "unique", "accepted_values", "pattern", "range", "custom_sql":
		return true
	}
	return false
}
