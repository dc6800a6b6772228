package trust

import (
	"time"
)

// Purposes of a trust decision and use cases of AI readiness (contract part 2).
const (
	PurposeAgente = "agente"
	PurposeRAG    = "rag"
	PurposeTreino = "treino"
	PurposeBI     = "bi"
)

// Purposes lists the purposes in the order readings show them.
func Purposes() []string { return []string{PurposeRAG, PurposeTreino, PurposeAgente, PurposeBI} }

// NormalizePurpose returns the purpose a caller means: "" is agente and ml is treino.
// ok is false for anything else.
func NormalizePurpose(p string) (string, bool) {
	switch p {
	case "":
		return PurposeAgente, true
	case "ml":
		return PurposeTreino, true
	case PurposeAgente, PurposeRAG, PurposeTreino, PurposeBI:
		return p, true
	}
	return "", false
}

// Readiness statuses (contract part 3).
const (
	StatusReady             = "ready"
	StatusReadyWithWarnings = "ready_with_warnings"
	StatusNotReady          = "not_ready"
)

// Keys of readiness findings beyond the trust keys.
const (
	KeyVerdictFail      = "verdict_fail"
	KeyVerdictWarn      = "verdict_warn"
	KeyPIIUnmasked      = "pii_unmasked"
	KeyLowCompletude    = "low_completude"
	KeyLowUnicidade     = "low_unicidade"
	KeySmallDataset     = "small_dataset"
	KeyNoTimestamp      = "no_timestamp"
	KeyContractViolated = "contract_violated"
)

// Readiness thresholds.
const (
	minTrainingRows       = 1000
	minTrainingCompletude = 90.0
	minTrainingUnicidade  = 95.0
	warningPenalty        = 10.0
	blockedCap            = 40.0
)

// UseCase is the readiness of a dataset for one use case.
type UseCase struct {
	UseCase  string
	Status   string
	Score    float64
	Blockers []Finding
	Warnings []Finding
}

// Recommendation is one thing to do to make a dataset readier, with the use cases it helps.
type Recommendation struct {
	Code     string
	Message  string
	UseCases []string
}

// MessageKey is the catalogue key of a recommendation's message.
func (r Recommendation) MessageKey() string { return "trust.recommendation." + r.Code }

// Readiness is a dataset's AI readiness: a global score, per use case status and
// findings, the PII columns and recommendations.
type Readiness struct {
	DatasetID       string
	Score           float64
	UseCases        []UseCase
	PIIColumns      []string
	PIIUnmasked     []string
	Recommendations []Recommendation
}

// UseCase returns the readiness for purpose (a normalized purpose).
func (r Readiness) UseCase(purpose string) UseCase {
	for _, u := range r.UseCases {
		if u.UseCase == purpose {
			return u
		}
	}
	return UseCase{UseCase: purpose, Status: StatusNotReady, Blockers: []Finding{}, Warnings: []Finding{}}
}

// ComputeReadiness judges a dataset for rag, treino (training), agente (agents acting on
// it) and bi, without an LLM. Every use case is blocked when the dataset was never
// profiled (profile_failed with the reason when the last scan failed on it), is empty
// (empty_dataset, unless a row_count_min rule with min_rows 0 says empty is expected),
// has a standing critical issue, a failing verdict or a violated active contract. A
// failed scan after a profile is a warning. Then, per use case:
//
//   - rag: unmasked PII and stale data are warnings;
//   - treino: unmasked PII blocks (personal data must not be learned); fewer than 1000
//     rows, completude under 90 or unicidade under 95 are warnings;
//   - agente: stale data blocks (an agent acts on the present); unmasked PII and no
//     timestamp column (freshness unknown) are warnings;
//   - bi: stale data is a warning.
//
// Warning issues, a warn verdict and unacknowledged schema changes are warnings for
// every use case. The score of a use case is the quality score minus 10 per warning,
// capped at 40 when blocked (0 before the first profile); the status is not_ready with a
// blocker, ready_with_warnings with a warning, else ready. The global score is the mean
// of the four.
func ComputeReadiness(f Facts, now time.Time, cfg Config) Readiness {
	cfg = cfg.withDefaults()
	out := Readiness{DatasetID: f.DatasetID}
	out.PIIColumns, out.PIIUnmasked = PII(f.Columns)
	age, fresh := FreshnessOf(f, now, cfg.FreshnessSLA)
	stale := fresh != nil && !*fresh
	base := 0.0
	if f.LatestScore != nil {
		base = clamp(*f.LatestScore, 0, 100)
	}

	var common, commonWarn []Finding
	failed, hasFailure := failureFinding(f)
	switch {
	case !f.Profiled && hasFailure:
		common = append(common, failed)
	case !f.Profiled:
		common = append(common, Finding{Key: KeyNoProfile, Params: map[string]any{}})
	default:
		if hasFailure {
			commonWarn = append(commonWarn, failed)
		}
		if fd, ok := emptyBlocker(f); ok {
			common = append(common, fd)
		}
		if f.CriticalIssues > 0 {
			common = append(common, Finding{Key: KeyCriticalIssue, Params: map[string]any{"count": f.CriticalIssues}})
		} else if f.Verdict == "fail" {
			common = append(common, Finding{Key: KeyVerdictFail, Params: map[string]any{}})
		}
	}
	if f.Contract.Active && !f.Contract.Valid {
		common = append(common, Finding{Key: KeyContractViolated, Params: map[string]any{}})
	}
	if f.WarningIssues > 0 {
		commonWarn = append(commonWarn, Finding{Key: KeyWarningIssue, Params: map[string]any{"count": f.WarningIssues}})
	} else if f.Verdict == "warn" {
		commonWarn = append(commonWarn, Finding{Key: KeyVerdictWarn, Params: map[string]any{}})
	}
	if f.UnackedSchemaChanges > 0 {
		commonWarn = append(commonWarn, Finding{Key: KeySchemaChangeUnacknowledged, Params: map[string]any{"count": f.UnackedSchemaChanges}})
	}
	staleF := func() Finding {
		return Finding{Key: KeyStaleData, Params: map[string]any{"age_hours": derefF(age), "sla_hours": round2(cfg.FreshnessSLA.Hours())}}
	}
	piiF := func() Finding {
		return Finding{Key: KeyPIIUnmasked, Params: map[string]any{"count": len(out.PIIUnmasked)}}
	}
	hasPII := len(out.PIIUnmasked) > 0

	sum := 0.0
	recs := map[string]*Recommendation{}
	var recOrder []string
	for _, p := range Purposes() {
		u := UseCase{UseCase: p, Blockers: append([]Finding{}, common...), Warnings: []Finding{}}
		var warn []Finding
		switch p {
		case PurposeRAG:
			if hasPII {
				warn = append(warn, piiF())
			}
			if stale {
				warn = append(warn, staleF())
			}
		case PurposeTreino:
			if hasPII {
				u.Blockers = append(u.Blockers, piiF())
			}
			if f.Profiled && f.RowCount != nil && *f.RowCount < minTrainingRows {
				warn = append(warn, Finding{Key: KeySmallDataset, Params: map[string]any{"rows": *f.RowCount, "min_rows": minTrainingRows}})
			}
			if v := f.Dimensions["completude"]; v != nil && *v < minTrainingCompletude {
				warn = append(warn, Finding{Key: KeyLowCompletude, Params: map[string]any{"value": *v, "min": minTrainingCompletude}})
			}
			if v := f.Dimensions["unicidade"]; v != nil && *v < minTrainingUnicidade {
				warn = append(warn, Finding{Key: KeyLowUnicidade, Params: map[string]any{"value": *v, "min": minTrainingUnicidade}})
			}
			if stale {
				warn = append(warn, staleF())
			}
		case PurposeAgente:
			if stale {
				u.Blockers = append(u.Blockers, staleF())
			}
			if hasPII {
				warn = append(warn, piiF())
			}
			if f.Profiled && f.LatestTimestamp == nil {
				warn = append(warn, Finding{Key: KeyNoTimestamp, Params: map[string]any{}})
			}
		case PurposeBI:
			if stale {
				warn = append(warn, staleF())
			}
		}
		u.Warnings = append(append(u.Warnings, commonWarn...), warn...)
		u.Score = clamp(base-warningPenalty*float64(len(u.Warnings)), 0, 100)
		switch {
		case len(u.Blockers) > 0:
			u.Status = StatusNotReady
			u.Score = min(u.Score, blockedCap)
			if !f.Profiled {
				u.Score = 0
			}
		case len(u.Warnings) > 0:
			u.Status = StatusReadyWithWarnings
		default:
			u.Status = StatusReady
		}
		u.Score = round2(u.Score)
		sum += u.Score
		for _, fd := range append(append([]Finding{}, u.Blockers...), u.Warnings...) {
			r, ok := recs[fd.Key]
			if !ok {
				r = &Recommendation{Code: fd.Key}
				recs[fd.Key] = r
				recOrder = append(recOrder, fd.Key)
			}
			if len(r.UseCases) == 0 || r.UseCases[len(r.UseCases)-1] != p {
				r.UseCases = append(r.UseCases, p)
			}
		}
		out.UseCases = append(out.UseCases, u)
	}
	out.Score = round2(sum / float64(len(out.UseCases)))
	out.Recommendations = []Recommendation{}
	for _, k := range recOrder {
		out.Recommendations = append(out.Recommendations, *recs[k])
	}
	return out
}

func derefF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
