package trust

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
)

// RAG gate actions, per item.
const (
	GateAllow            = "allow"
	GateAllowWithWarning = "allow_with_warning"
	GateBlock            = "block"
)

// Reason codes the gate adds to the trust decision's.
const (
	// GatePIINotAllowed: the item exposes personal-data columns and the call did not
	// state that its purpose allows them (params columns).
	GatePIINotAllowed = "pii_not_allowed"
	// GatePIIAllowed: personal-data columns exposed with the caller's allowance (params columns).
	GatePIIAllowed = "pii_allowed"
	// GateColumnUnknown: a column named by the item is not a column of the dataset
	// (params count); the item is blocked, the gate cannot tell what it exposes.
	GateColumnUnknown = "column_unknown"
)

// MaxGateColumns bounds the columns one gate item names.
const MaxGateColumns = 500

// GateItem is one dataset a retrieval pipeline is about to read. Columns are the
// columns the retrieval exposes; nil is every column.
type GateItem struct {
	DatasetID string
	Columns   []string
}

// GateInput is a RAG gate call.
type GateInput struct {
	Consumer ConsumerRef
	Items    []GateItem
	// Purpose is the trust purpose (rag by default).
	Purpose string
	// PIIAllowed states that the purpose allows personal data (a lawful basis the caller
	// holds): PII columns then warn instead of blocking. Recorded in the audit trail.
	PIIAllowed bool
}

// GateReason is one cause of an item's action.
type GateReason struct {
	Code     string
	Severity string
	Params   map[string]any
	Message  string
}

// GateAnswer is one item's answer.
type GateAnswer struct {
	DatasetID   string
	DatasetName string
	Action      string
	Decision    string
	Reasons     []GateReason
	// PIIColumns are the exposed columns holding personal data.
	PIIColumns []string
	TTL        time.Duration
}

// GateResult is the answer of a gate call.
type GateResult struct {
	Purpose string
	AsOf    time.Time
	// TTL is the shortest of the items' decisions: the answer may be cached that long.
	TTL        time.Duration
	ValidUntil time.Time
	Items      []GateAnswer
	// Consumption is the read recorded (nil for a preview).
	Consumption *ConsumptionResult
}

// RAGGate answers, per item, allow / allow_with_warning / block for an AI retrieval
// and records the consumption in the same call (a marked write: API tokens may call
// it). An item is blocked when the trust decision for the purpose is untrusted (open
// critical issues or incidents, failing verdict, contract violation, readiness
// blockers: the decision's reasons), when it exposes personal-data columns and the call
// does not allow them, or when it names a column the dataset lacks; allowed with a
// warning when the decision is caution or unknown or allowed PII is exposed; allowed
// otherwise. The consumption (consumer registry, untrusted-read notices with their
// caps, run_ref replays) is RecordConsumption's, with each dataset's gate decision.
//
// Returns KindInvalid for a bad body, KindNotFound when an item is not a dataset the
// caller can see, KindRateLimited above the workspace's reads per minute.
func (s *Service) RAGGate(ctx context.Context, in GateInput) (GateResult, error) {
	res, err := s.gate(ctx, in, true)
	if err != nil {
		return GateResult{}, err
	}
	ids := make([]string, 0, len(res.Items))
	for _, it := range res.Items {
		ids = append(ids, it.DatasetID)
	}
	// Each dataset's read carries its own decision for the purpose, as RecordConsumption
	// decides it.
	c, err := s.RecordConsumption(ctx, ConsumptionInput{Consumer: in.Consumer, DatasetIDs: ids, Purpose: res.Purpose})
	if err != nil {
		return GateResult{}, err
	}
	res.Consumption = &c
	if err := s.audit(ctx, "rag_gate", "datasets", "batch", map[string]any{"purpose": res.Purpose, "dataset_ids": ids,
		"pii_allowed": in.PIIAllowed, "actions": gateCounts(res.Items)}, res.AsOf); err != nil {
		return GateResult{}, err
	}
	return res, nil
}

// PreviewRAGGate answers as RAGGate without recording anything (for analysts). Errors
// as RAGGate's, without the rate limit.
func (s *Service) PreviewRAGGate(ctx context.Context, in GateInput) (GateResult, error) {
	return s.gate(ctx, in, false)
}

func gateCounts(items []GateAnswer) map[string]int {
	out := map[string]int{}
	for _, it := range items {
		out[it.Action]++
	}
	return out
}

func (s *Service) gate(ctx context.Context, in GateInput, recording bool) (GateResult, error) {
	if _, err := vigia.MustPrincipal(ctx); err != nil {
		return GateResult{}, err
	}
	var fields []vigia.FieldError
	if in.Purpose == "" {
		in.Purpose = PurposeRAG
	}
	purpose, ok := NormalizePurpose(in.Purpose)
	if !ok {
		fields = append(fields, vigia.Field("enum", nil, "purpose"))
	}
	switch {
	case len(in.Items) == 0:
		fields = append(fields, vigia.Field("too_short", map[string]any{"min_length": 1}, "items"))
	case len(in.Items) > MaxBatch:
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxBatch}, "items"))
	}
	for i, it := range in.Items {
		if len(it.Columns) > MaxGateColumns {
			fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxGateColumns}, "items", strconv.Itoa(i), "columns"))
		}
	}
	if recording {
		// The consumer is checked before anything is decided.
		probe := ConsumptionInput{Consumer: in.Consumer, DatasetIDs: []string{"x"}, Purpose: purpose}
		if purpose == "" {
			probe.Purpose = PurposeRAG
		}
		if _, err := probe.validate(); err != nil {
			fields = append(fields, vigia.FieldsOf(err)...)
		}
	}
	if len(fields) > 0 {
		return GateResult{}, vigia.Invalid(fields...)
	}
	now := s.clock.Now()
	var ids []string
	for _, it := range in.Items {
		ids = append(ids, it.DatasetID)
	}
	uniq := dedupe(ids)
	fs, err := s.facts(ctx, uniq, now)
	if err != nil {
		return GateResult{}, err
	}
	if len(fs) != len(uniq) {
		return GateResult{}, vigia.NotFound()
	}
	res := GateResult{Purpose: purpose, AsOf: now, Items: []GateAnswer{}}
	done := map[string]bool{}
	for _, it := range in.Items {
		if done[it.DatasetID] {
			continue
		}
		done[it.DatasetID] = true
		f := fs[it.DatasetID]
		d := s.decide(f, purpose, now)
		a := gateAnswer(f, d, it, in.PIIAllowed)
		for i, r := range a.Reasons {
			if r.Message == "" {
				a.Reasons[i].Message = s.msgs.Message(ptPT, "trust.gate."+r.Code, r.Params)
			}
		}
		if res.TTL == 0 || a.TTL < res.TTL {
			res.TTL = a.TTL
		}
		res.Items = append(res.Items, a)
	}
	res.ValidUntil = now.Add(res.TTL)
	return res, nil
}

// gateAnswer turns a dataset's decision and the item's columns into the item's action.
func gateAnswer(f Facts, d Decision, it GateItem, piiAllowed bool) GateAnswer {
	a := GateAnswer{DatasetID: f.DatasetID, DatasetName: f.Name(), Decision: d.Decision, Reasons: []GateReason{}, PIIColumns: []string{}, TTL: d.TTL}
	for _, r := range d.Reasons {
		a.Reasons = append(a.Reasons, GateReason{Code: r.Code, Severity: r.Severity, Params: r.Params, Message: r.Message})
	}
	have := map[string]bool{}
	for _, c := range f.Columns {
		have[c.Name] = true
	}
	exposed := it.Columns
	unknown := 0
	if exposed == nil {
		for _, c := range f.Columns {
			exposed = append(exposed, c.Name)
		}
	}
	for _, c := range exposed {
		if !have[c] {
			unknown++
		}
	}
	pii, _ := PII(f.Columns)
	for _, c := range pii {
		if slices.Contains(exposed, c) && !slices.Contains(a.PIIColumns, c) {
			a.PIIColumns = append(a.PIIColumns, c)
		}
	}
	block, warn := d.Decision == DecisionUntrusted, d.Decision == DecisionCaution || d.Decision == DecisionUnknown
	if unknown > 0 {
		block = true
		a.Reasons = append(a.Reasons, GateReason{Code: GateColumnUnknown, Severity: SeverityCritical, Params: map[string]any{"count": unknown}})
	}
	if len(a.PIIColumns) > 0 {
		if piiAllowed {
			warn = true
			a.Reasons = append(a.Reasons, GateReason{Code: GatePIIAllowed, Severity: SeverityWarning, Params: map[string]any{"columns": a.PIIColumns}})
		} else {
			block = true
			a.Reasons = append(a.Reasons, GateReason{Code: GatePIINotAllowed, Severity: SeverityCritical, Params: map[string]any{"columns": a.PIIColumns}})
		}
	}
	switch {
	case block:
		a.Action = GateBlock
	case warn:
		a.Action = GateAllowWithWarning
	default:
		a.Action = GateAllow
	}
	return a
}
