package rest

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/trust"
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
	Code   string         `json:"code" enum:"is_null,not_accepted_value,pattern_mismatch,out_of_range,not_a_number,type_mismatch,not_in_reference,invalid_check_digit" doc:"Stable failure code"`
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
			"unique, freshness and row_count_min are not_applicable (dataset_wide), custom_sql too (custom_sql) except the pt_customer_master " +
			"pack's NIF check digit, judged per value (invalid_check_digit). Referential rules " +
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

// RAGGateIn is a RAG gate call.
type RAGGateIn struct {
	Consumer   ConsumerRefIn   `json:"consumer"`
	Items      []RAGGateItemIn `json:"items" minItems:"1" maxItems:"50" doc:"The datasets the retrieval is about to read (1-50; duplicates once)"`
	Purpose    *string         `json:"purpose,omitempty" enum:"agente,rag,treino,bi,ml" doc:"Trust purpose of the decision; rag by default"`
	PIIAllowed *bool           `json:"pii_allowed,omitempty" doc:"The purpose allows personal data (the caller holds the lawful basis): PII columns warn instead of blocking. Recorded in the audit trail. false by default"`
}

// RAGGateItemIn is one dataset of a gate call.
type RAGGateItemIn struct {
	DatasetID string   `json:"dataset_id" maxLength:"64"`
	Columns   []string `json:"columns,omitempty" maxItems:"500" doc:"Columns the retrieval exposes (their names); all columns when absent"`
}

// RAGGateReasonOut is one cause of an item's action.
type RAGGateReasonOut struct {
	Code     string         `json:"code" doc:"A trust decision reason (critical_incident, verdict_fail, readiness_blocker, ...) or pii_not_allowed, pii_allowed, column_unknown"`
	Severity string         `json:"severity" enum:"critical,warning"`
	Params   map[string]any `json:"params"`
	Message  string         `json:"message" doc:"pt-PT"`
}

// RAGGateItemOut is one item's answer.
type RAGGateItemOut struct {
	DatasetID   string             `json:"dataset_id"`
	DatasetName string             `json:"dataset_name"`
	Action      string             `json:"action" enum:"allow,allow_with_warning,block"`
	Decision    string             `json:"decision" enum:"trusted,caution,untrusted,unknown" doc:"The trust decision for the purpose"`
	Reasons     []RAGGateReasonOut `json:"reasons"`
	PIIColumns  []string           `json:"pii_columns" doc:"Exposed columns holding personal data"`
}

// RAGGateOut is the answer of a gate call.
type RAGGateOut struct {
	Purpose       string           `json:"purpose" enum:"agente,rag,treino,bi"`
	AsOf          time.Time        `json:"as_of"`
	ValidUntil    time.Time        `json:"valid_until"`
	TTLSeconds    int              `json:"ttl_seconds" doc:"The shortest of the items' decision TTLs; also sent as Cache-Control max-age"`
	Items         []RAGGateItemOut `json:"items" doc:"In request order, duplicates once"`
	ConsumptionID string           `json:"consumption_id" doc:"The read recorded (the first one for a replayed run_ref)"`
	Replayed      bool             `json:"replayed" doc:"The consumer's run_ref was recorded before: nothing new written or notified"`
	Consumer      ConsumerOut      `json:"consumer"`
}

func (s *Server) ragGateRoutes() {
	s.register(operation{ID: "ragGate", Method: http.MethodPost, Path: "/api/v1/rag-gate", Tag: "rag-gate", TokenWrite: true,
		Summary: "Gate an AI retrieval: allow, allow_with_warning or block per dataset, recording the read (a marked write)",
		Body:    RAGGateIn{}, Response: RAGGateOut{}, Headers: map[string]string{"Cache-Control": "private, max-age=<ttl_seconds>"},
		Desc: "Per item: block when the trust decision for the purpose (rag by default) is untrusted — open critical issues " +
			"(critical_incident, with the issue ids), a failing verdict, a contract violation, readiness blockers — or when the " +
			"exposed columns (columns, or all) hold personal data and pii_allowed is not true (pii_not_allowed), or a named column " +
			"does not exist (column_unknown); allow_with_warning when the decision is caution or unknown, or allowed PII is exposed " +
			"(pii_allowed); allow otherwise. The read is recorded in the same call as POST /trust/consumptions records it (consumer " +
			"registry, each dataset with its decision, consumer.untrusted_read notices within their caps; a repeated run_ref is a " +
			"replay). 404 when an item is not a dataset the caller can see; 429 above the workspace's reads per minute. The answer " +
			"may be cached for ttl_seconds. GraphQL ragGate previews the answer without recording."},
		s.handleRAGGate)
}

func toGateInput(body RAGGateIn) trust.GateInput {
	in := trust.GateInput{Consumer: trust.ConsumerRef{Name: body.Consumer.Name, Kind: body.Consumer.Kind, RunRef: body.Consumer.RunRef,
		Framework: body.Consumer.Framework}}
	if body.Purpose != nil {
		in.Purpose = *body.Purpose
	}
	if body.PIIAllowed != nil {
		in.PIIAllowed = *body.PIIAllowed
	}
	for _, it := range body.Items {
		in.Items = append(in.Items, trust.GateItem{DatasetID: it.DatasetID, Columns: it.Columns})
	}
	return in
}

func (s *Server) handleRAGGate(w http.ResponseWriter, r *http.Request, in *input) {
	var body RAGGateIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.deps.Trust.RAGGate(r.Context(), toGateInput(body))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := RAGGateOut{Purpose: res.Purpose, AsOf: res.AsOf, ValidUntil: res.ValidUntil, TTLSeconds: int(res.TTL.Seconds()),
		Items: make([]RAGGateItemOut, 0, len(res.Items))}
	for _, it := range res.Items {
		o := RAGGateItemOut{DatasetID: it.DatasetID, DatasetName: it.DatasetName, Action: it.Action, Decision: it.Decision,
			PIIColumns: nonNilStrings(it.PIIColumns), Reasons: make([]RAGGateReasonOut, 0, len(it.Reasons))}
		for _, rs := range it.Reasons {
			o.Reasons = append(o.Reasons, RAGGateReasonOut{Code: rs.Code, Severity: rs.Severity, Params: nonNilMap(rs.Params), Message: rs.Message})
		}
		out.Items = append(out.Items, o)
	}
	if c := res.Consumption; c != nil {
		out.ConsumptionID, out.Replayed, out.Consumer = c.ID, c.Replayed, toConsumerOut(c.Consumer)
	}
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(out.TTLSeconds))
	writeJSON(w, http.StatusOK, out)
}

// DiffService is what the transport needs of data diffs.
type DiffService interface {
	Diff(ctx context.Context, id, otherID string, req datadiff.Request, progress datadiff.Progress) (datadiff.Report, error)
}

// DiffIn is a data diff's options.
type DiffIn struct {
	KeyColumns        []string `json:"key_columns,omitempty" minItems:"1" maxItems:"16" doc:"Columns identifying a row on both sides; without it the first dataset's primary key, when the other has the same columns (else 422 diff_key_required)"`
	TimeBudgetSeconds *int     `json:"time_budget_seconds,omitempty" minimum:"1" maximum:"600" doc:"Bound of the whole diff (60 by default); exceeded: 422 diff_time_budget_exceeded"`
	SampleSize        *int     `json:"sample_size,omitempty" minimum:"1" maximum:"100" doc:"Keys listed per kind of difference (20 by default)"`
}

// DiffMethodOut says how a diff worked and what it cost.
type DiffMethodOut struct {
	Name             string `json:"name" enum:"bucketed_checksums"`
	Buckets          int    `json:"buckets" doc:"Buckets of the key hash each side summed"`
	DifferingBuckets int    `json:"differing_buckets"`
	Statements       int    `json:"statements"`
	RowsFetched      int64  `json:"rows_fetched" doc:"Rows the sources answered: bucket sums, then keys and column hashes of the differing buckets"`
	BytesTransferred int64  `json:"bytes_transferred" doc:"Bytes of the values the sources answered"`
	DurationMS       int64  `json:"duration_ms"`
}

// DiffOut is a data diff's report.
type DiffOut struct {
	DatasetID       string           `json:"dataset_id"`
	OtherID         string           `json:"other_id"`
	KeySource       string           `json:"key_source" enum:"request,primary_key"`
	KeyColumns      []string         `json:"key_columns"`
	Columns         []string         `json:"columns" doc:"Columns compared: those of both datasets"`
	ColumnsOnlyInA  []string         `json:"columns_only_in_a"`
	ColumnsOnlyInB  []string         `json:"columns_only_in_b"`
	RowsA           int64            `json:"rows_a"`
	RowsB           int64            `json:"rows_b"`
	OnlyInA         int64            `json:"only_in_a"`
	OnlyInB         int64            `json:"only_in_b"`
	Changed         int64            `json:"changed"`
	ChangedByColumn map[string]int64 `json:"changed_by_column" doc:"Changed rows per compared column"`
	SampleOnlyInA   [][]*string      `json:"sample_only_in_a" doc:"Keys only in the first dataset (each key as its columns' text, in key_columns order; null for NULL), sorted, at most sample_size"`
	SampleOnlyInB   [][]*string      `json:"sample_only_in_b"`
	SampleChanged   [][]*string      `json:"sample_changed"`
	Method          DiffMethodOut    `json:"method"`
}

var otherIDParam = param{Name: "other_id", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) diffRoutes() {
	s.register(operation{ID: "diffDatasets", Method: http.MethodPost, Path: "/api/v1/datasets/{dataset_id}/diff/{other_id}", Tag: "datasets",
		TokenWrite: true, Summary: "Compare two datasets row by row, pushed down to their sources (a marked write)",
		Params: []param{datasetIDParam, otherIDParam}, Body: DiffIn{}, OptionalBody: true, Response: DiffOut{},
		Errors: map[int]string{http.StatusUnprocessableEntity: "validation_error (bad options, a key column not in both datasets), " +
			"diff_key_required, diff_time_budget_exceeded, diff_too_many_differences, diff_key_not_unique, diff_source_failed"},
		Desc: "The datasets may be on different connections and engines (Postgres, MySQL/MariaDB, SQLite). Each source hashes its " +
			"rows (each column as text, booleans as 1/0, NULL as \\N, MD5) and answers per bucket of the key hash the row count and " +
			"the sums of the row hashes — one read of each table; only differing buckets are read again, for their keys and " +
			"8-digit hashes of each column. Only hashes, counts and keys leave the sources. 404 when either dataset is not one " +
			"the caller can see; 422 diff_key_required without key_columns when the first dataset has no primary key or the " +
			"other has different columns; 422 diff_time_budget_exceeded, diff_too_many_differences (over 250000 rows in " +
			"differing buckets on a side), diff_key_not_unique, diff_source_failed. Values of the same type compare equal across " +
			"engines when their text is the same (integers, text, decimals of the same scale, timestamps without time zone)."},
		s.handleDiff)
}

func (s *Server) handleDiff(w http.ResponseWriter, r *http.Request, in *input) {
	var body DiffIn
	if r.ContentLength != 0 {
		if err := in.Decode(&body, 0); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	req := datadiff.Request{KeyColumns: body.KeyColumns}
	if body.TimeBudgetSeconds != nil {
		req.TimeBudget = time.Duration(*body.TimeBudgetSeconds) * time.Second
		if *body.TimeBudgetSeconds <= 0 {
			req.TimeBudget = -1
		}
	}
	if body.SampleSize != nil {
		req.Sample = *body.SampleSize
		if req.Sample == 0 {
			req.Sample = -1
		}
	}
	rep, err := s.deps.Diff.Diff(r.Context(), in.Path("dataset_id"), in.Path("other_id"), req, nil)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, DiffOut{DatasetID: rep.DatasetID, OtherID: rep.OtherID, KeySource: rep.KeySource, KeyColumns: rep.KeyColumns,
		Columns: nonNilStrings(rep.Columns), ColumnsOnlyInA: nonNilStrings(rep.ColumnsOnlyInA), ColumnsOnlyInB: nonNilStrings(rep.ColumnsOnlyInB),
		RowsA: rep.RowsA, RowsB: rep.RowsB, OnlyInA: rep.OnlyInA, OnlyInB: rep.OnlyInB, Changed: rep.Changed, ChangedByColumn: rep.ChangedByColumn,
		SampleOnlyInA: rep.SampleOnlyInA, SampleOnlyInB: rep.SampleOnlyInB, SampleChanged: rep.SampleChanged,
		Method: DiffMethodOut{Name: rep.Method.Name, Buckets: rep.Method.Buckets, DifferingBuckets: rep.Method.DifferingBuckets,
			Statements: rep.Method.Statements, RowsFetched: rep.Method.RowsFetched, BytesTransferred: rep.Method.BytesTransferred,
			DurationMS: rep.Method.Duration.Milliseconds()}})
}

// ReconcileIn is an on-demand reconciliation.
type ReconcileIn struct {
	DatasetID         string   `json:"dataset_id" maxLength:"64" doc:"The first dataset (e.g. orders in the warehouse)"`
	OtherID           string   `json:"other_id" maxLength:"64" doc:"The other dataset (e.g. orders in the source system)"`
	GroupBy           []string `json:"group_by,omitempty" maxItems:"16" doc:"Columns of both datasets grouping the figures (date, store ...); none: one group"`
	SumColumns        []string `json:"sum_columns,omitempty" maxItems:"16" doc:"Numeric columns of both datasets summed per group"`
	TolerancePct      *float64 `json:"tolerance_pct,omitempty" minimum:"0" maximum:"100" doc:"Relative difference allowed per count and sum, in percent of the larger (0 by default: exact)"`
	TimeBudgetSeconds *int     `json:"time_budget_seconds,omitempty" minimum:"1" maximum:"600" doc:"60 by default; exceeded: 422 diff_time_budget_exceeded"`
}

// ReconcileGroupOut is one group that differs.
type ReconcileGroupOut struct {
	Group  []*string            `json:"group" doc:"The group's values as text, in group_by order (null for NULL)"`
	Code   string               `json:"code" enum:"only_in_a,only_in_b,count_differs,sum_differs"`
	CountA int64                `json:"count_a"`
	CountB int64                `json:"count_b"`
	Sums   map[string][2]string `json:"sums" doc:"Per differing sum column: [first, other] as decimal text"`
}

// ReconcileOut is a reconciliation's result, as a rule result.
type ReconcileOut struct {
	DatasetID    string              `json:"dataset_id"`
	OtherID      string              `json:"other_id"`
	Status       string              `json:"status" enum:"passed,failed"`
	Groups       int                 `json:"groups"`
	FailedGroups int                 `json:"failed_groups"`
	Differing    []ReconcileGroupOut `json:"differing" doc:"The groups beyond tolerance, sorted, at most 100"`
	Statements   int                 `json:"statements"`
	DurationMS   int64               `json:"duration_ms"`
}

// ReconcileService is what the transport needs of reconciliations.
type ReconcileService interface {
	Reconcile(ctx context.Context, id, otherID string, req datadiff.ReconcileRequest) (datadiff.ReconcileResult, error)
}

func (s *Server) reconcileRoutes() {
	s.register(operation{ID: "reconcile", Method: http.MethodPost, Path: "/api/v1/reconcile", Tag: "reconcile",
		Summary: "Reconcile two datasets on demand: row counts and sums per group, within a tolerance", Body: ReconcileIn{}, Response: ReconcileOut{},
		Errors: map[int]string{http.StatusUnprocessableEntity: "validation_error (a column not in both datasets, a sum column not numeric), " +
			"reconcile_too_many_groups (over 10000 groups on a side), diff_time_budget_exceeded, diff_source_failed"},
		Desc: "Each dataset is aggregated on its own source (GROUP BY the group_by columns as text: COUNT(*) and SUM of each sum " +
			"column); only the groups' figures travel. A group fails when it is on one side only, or its count or a sum differs by " +
			"more than tolerance_pct of the larger value. status failed lists the groups (at most 100, sorted). 404 when a dataset " +
			"is not one the caller can see. Each run is written to the activity log with its counts."}, s.handleReconcile)
}

func (s *Server) handleReconcile(w http.ResponseWriter, r *http.Request, in *input) {
	var body ReconcileIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	req := datadiff.ReconcileRequest{GroupBy: body.GroupBy, SumColumns: body.SumColumns}
	if body.TolerancePct != nil {
		req.TolerancePct = *body.TolerancePct
	}
	if body.TimeBudgetSeconds != nil {
		req.TimeBudget = time.Duration(*body.TimeBudgetSeconds) * time.Second
		if *body.TimeBudgetSeconds <= 0 {
			req.TimeBudget = -1
		}
	}
	res, err := s.deps.Reconcile.Reconcile(r.Context(), body.DatasetID, body.OtherID, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := ReconcileOut{DatasetID: res.DatasetID, OtherID: res.OtherID, Status: res.Status, Groups: res.Groups, FailedGroups: res.FailedGroups,
		Differing: make([]ReconcileGroupOut, 0, len(res.Differing)), Statements: res.Statements, DurationMS: res.Duration.Milliseconds()}
	for _, d := range res.Differing {
		sums := d.Sums
		if sums == nil {
			sums = map[string][2]string{}
		}
		out.Differing = append(out.Differing, ReconcileGroupOut{Group: d.Group, Code: d.Code, CountA: d.CountA, CountB: d.CountB, Sums: sums})
	}
	writeJSON(w, http.StatusOK, out)
}
