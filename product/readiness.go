package product

import (
	"sort"

	"github.com/vigia-data/vigia/trust"
)

// Domain use cases (contract part 2, Domain readiness) and the dataset purpose each reads.
const (
	UseRAG    = "rag"
	UseML     = "ml"
	UseAgente = "agente"
	UseBI     = "bi"
)

var useCasePurpose = []struct{ useCase, purpose string }{
	{UseRAG, trust.PurposeRAG}, {UseML, trust.PurposeTreino}, {UseAgente, trust.PurposeAgente}, {UseBI, trust.PurposeBI},
}

// Domain-level readiness codes.
const (
	CodeDeprecated        = "deprecated"
	CodeNoDatasets        = "no_datasets"
	CodeDraft             = "draft"
	CodeRetentionShort    = "retention_short"
	CodeSLOBelowObjective = "slo_below_objective"
)

// minRetentionDays is the retention each use case needs: training and BI compare a
// year, RAG answers on the last quarter, agents act on the last month.
var minRetentionDays = map[string]int{UseRAG: 90, UseML: 365, UseAgente: 30, UseBI: 365}

// ReadinessItem is a blocker or a warning of a domain use case: a stable code with
// params (datasets: how many member datasets have it, for dataset findings).
type ReadinessItem struct {
	Code   string
	Params map[string]any
}

// UseCaseReadiness is a domain's readiness for one use case.
type UseCaseReadiness struct {
	UseCase       string
	Status        string
	Score         *float64
	DatasetsReady int
	DatasetsTotal int
	Blockers      []ReadinessItem
	Warnings      []ReadinessItem
}

// ConsumerCounts are a domain's consumers by kind.
type ConsumerCounts struct {
	Total  int
	ByKind map[string]int
}

// Readiness is a domain's readiness per use case.
type Readiness struct {
	DomainID  string
	UseCases  []UseCaseReadiness
	Consumers ConsumerCounts
}

// UseCase returns the readiness of use case u.
func (r Readiness) UseCase(u string) UseCaseReadiness {
	for _, x := range r.UseCases {
		if x.UseCase == u {
			return x
		}
	}
	return UseCaseReadiness{UseCase: u, Status: trust.StatusNotReady}
}

// ComputeReadiness aggregates the member datasets' AI readiness into the domain's, per
// use case (rag, ml = the datasets' treino, agente, bi):
//
//   - blockers: deprecated (the domain is deprecated), no_datasets, and every dataset
//     blocker code with the number of datasets it blocks;
//   - warnings: draft (never published or not yet published again), retention_short
//     (the SLA keeps fewer days than the use case needs: rag 90, ml 365, agente 30,
//     bi 365), slo_below_objective (this month's availability under the objective), and
//     every dataset warning code with its number of datasets;
//   - status: not_ready with a blocker, ready_with_warnings with a warning, else ready;
//     the score is the mean of the datasets' scores for the use case.
func ComputeReadiness(d Domain, datasets []trust.Readiness, monthPct *float64, consumers ConsumerCounts) Readiness {
	out := Readiness{DomainID: d.ID, Consumers: consumers}
	for _, uc := range useCasePurpose {
		u := UseCaseReadiness{UseCase: uc.useCase, DatasetsTotal: len(datasets), Blockers: []ReadinessItem{}, Warnings: []ReadinessItem{}}
		if d.Status == StatusDeprecated {
			u.Blockers = append(u.Blockers, ReadinessItem{Code: CodeDeprecated, Params: map[string]any{}})
		}
		if len(datasets) == 0 {
			u.Blockers = append(u.Blockers, ReadinessItem{Code: CodeNoDatasets, Params: map[string]any{}})
		}
		if d.Status == StatusDraft {
			u.Warnings = append(u.Warnings, ReadinessItem{Code: CodeDraft, Params: map[string]any{}})
		}
		if r := d.SLA.RetentionDays; r != nil && *r < minRetentionDays[uc.useCase] {
			u.Warnings = append(u.Warnings, ReadinessItem{Code: CodeRetentionShort,
				Params: map[string]any{"retention_days": *r, "min_days": minRetentionDays[uc.useCase]}})
		}
		if obj := d.SLA.AvailabilityObjectivePct; obj != nil && monthPct != nil && *monthPct < *obj {
			u.Warnings = append(u.Warnings, ReadinessItem{Code: CodeSLOBelowObjective,
				Params: map[string]any{"availability_pct": *monthPct, "objective_pct": *obj}})
		}
		blockers, warnings := map[string]int{}, map[string]int{}
		sum := 0.0
		for _, r := range datasets {
			du := r.UseCase(uc.purpose)
			sum += du.Score
			if du.Status == trust.StatusReady || du.Status == trust.StatusReadyWithWarnings {
				u.DatasetsReady++
			}
			for _, b := range du.Blockers {
				blockers[b.Key]++
			}
			for _, w := range du.Warnings {
				warnings[w.Key]++
			}
		}
		for _, k := range sortedKeys(blockers) {
			u.Blockers = append(u.Blockers, ReadinessItem{Code: k, Params: map[string]any{"datasets": blockers[k]}})
		}
		for _, k := range sortedKeys(warnings) {
			u.Warnings = append(u.Warnings, ReadinessItem{Code: k, Params: map[string]any{"datasets": warnings[k]}})
		}
		if len(datasets) > 0 {
			s := round2(sum / float64(len(datasets)))
			u.Score = &s
		}
		switch {
		case len(u.Blockers) > 0:
			u.Status = trust.StatusNotReady
		case len(u.Warnings) > 0:
			u.Status = trust.StatusReadyWithWarnings
		default:
			u.Status = trust.StatusReady
		}
		out.UseCases = append(out.UseCases, u)
	}
	return out
}

// Domain consumer kinds (contract part 2, Domain consumers) and sources.
const (
	ConsumerUser        = "user"
	ConsumerAISystem    = "ai_system"
	ConsumerDBTExposure = "dbt_exposure"
	ConsumerExternal    = "external"

	SourceManual  = "manual"
	SourceDerived = "derived"
)

// DomainKindOf maps a registry consumer kind to the domain's consumer kinds: agents are
// AI systems, notebooks are people, applications and pipelines are external.
func DomainKindOf(registryKind string) string {
	switch registryKind {
	case trust.KindAgent:
		return ConsumerAISystem
	case trust.KindNotebook:
		return ConsumerUser
	}
	return ConsumerExternal
}

// CountConsumers counts consumers by domain kind, with every kind present.
func CountConsumers(cs []DomainConsumer) ConsumerCounts {
	out := ConsumerCounts{ByKind: map[string]int{ConsumerUser: 0, ConsumerAISystem: 0, ConsumerDBTExposure: 0, ConsumerExternal: 0}}
	for _, c := range cs {
		out.Total++
		out.ByKind[c.Kind]++
	}
	return out
}

// sortConsumers orders consumers: manual first, then by name.
func sortConsumers(cs []DomainConsumer) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Source != cs[j].Source {
			return cs[i].Source == SourceManual
		}
		if cs[i].Name != cs[j].Name {
			return cs[i].Name < cs[j].Name
		}
		return cs[i].ID < cs[j].ID
	})
}
