package graph

import (
	"time"

	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/trust"
)

func toTrustDecision(d trust.Decision) *model.TrustDecision {
	out := &model.TrustDecision{DatasetID: d.DatasetID, Purpose: d.Purpose, Decision: d.Decision, Verdict: d.Verdict,
		ReadinessScore: d.ReadinessScore, ReadinessBlockers: nonNil(d.ReadinessBlockers), ObservedAgeHours: d.ObservedAgeHours,
		SLAHours: d.SLAHours, FreshnessMet: d.FreshnessMet, OpenCritical: d.OpenCritical, OpenWarning: d.OpenWarning,
		PiiColumns: nonNil(d.PIIColumns), PiiUnmasked: nonNil(d.PIIUnmasked), ContractActive: d.Contract.Active,
		ContractValid: d.Contract.Valid, LastScanAt: d.LastScanAt, AsOf: d.AsOf, ValidUntil: d.ValidUntil,
		TTLSeconds: int(d.TTL / time.Second), RecommendedActionPt: d.Recommended, RequiredActions: nonNil(d.RequiredActions),
		Reasons: make([]model.TrustReason, 0, len(d.Reasons))}
	for _, r := range d.Reasons {
		out.Reasons = append(out.Reasons, model.TrustReason{Code: r.Code, Severity: r.Severity, MessagePt: r.Message})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func dimensionValues(m map[string]float64) []model.DimensionValue {
	out := []model.DimensionValue{}
	for _, d := range quality.AllDimensions() {
		if v, ok := m[string(d)]; ok {
			out = append(out, model.DimensionValue{Dimension: string(d), Value: v})
		}
	}
	return out
}

func toDomain(d product.Domain) model.Domain {
	sla := &model.DomainSLA{AvailabilityObjectivePct: d.SLA.AvailabilityObjectivePct, RetentionDays: d.SLA.RetentionDays,
		DimensionTargets: dimensionValues(d.SLA.DimensionTargets)}
	if d.SLA.DimensionWeights != nil {
		sla.DimensionWeights = dimensionValues(d.SLA.DimensionWeights)
	}
	return model.Domain{ID: d.ID, Name: d.Name, Description: d.Description, Status: d.Status, Version: d.Version.String(),
		PublishedAt: d.PublishedAt, Restricted: d.Restricted, OwnerName: d.OwnerName, SLA: sla, DatasetIds: nonNil(d.DatasetIDs)}
}

func toReadinessItems(is []product.ReadinessItem) []model.ReadinessItem {
	out := make([]model.ReadinessItem, 0, len(is))
	for _, i := range is {
		it := model.ReadinessItem{Code: i.Code}
		if n, ok := i.Params["datasets"].(int); ok {
			it.Datasets = &n
		}
		out = append(out, it)
	}
	return out
}

func toDomainReadiness(r product.Readiness) *model.DomainReadiness {
	out := &model.DomainReadiness{ConsumersTotal: r.Consumers.Total, UseCases: make([]model.DomainUseCase, 0, len(r.UseCases)),
		ConsumersByKind: []model.KindCount{}}
	for _, u := range r.UseCases {
		out.UseCases = append(out.UseCases, model.DomainUseCase{UseCase: u.UseCase, Status: u.Status, Score: u.Score,
			Blockers: toReadinessItems(u.Blockers), Warnings: toReadinessItems(u.Warnings)})
	}
	for _, k := range []string{product.ConsumerUser, product.ConsumerAISystem, product.ConsumerDBTExposure, product.ConsumerExternal} {
		out.ConsumersByKind = append(out.ConsumersByKind, model.KindCount{Kind: k, Count: r.Consumers.ByKind[k]})
	}
	return out
}

func toDomainSLO(r product.SLOReport) *model.DomainSlo {
	out := &model.DomainSlo{Month: r.Month, Timezone: r.Timezone, ObjectivePct: r.ObjectivePct, ObjectiveMet: r.ObjectiveMet,
		AvailabilityPct: r.AvailabilityPct, MetDays: r.MetDays, ViolatedDays: r.ViolatedDays, HistoryDays: r.HistoryDays,
		DimensionTargetDays: r.Breakdown[product.ViolationDimensionTarget], Datasets: make([]model.SLODataset, 0, len(r.Datasets))}
	for _, d := range r.Datasets {
		out.Datasets = append(out.Datasets, model.SLODataset{DatasetID: d.DatasetID, DatasetName: d.DatasetName, AvailabilityPct: d.AvailabilityPct,
			MetDays: d.MetDays, ViolatedDays: d.ViolatedDays, HistoryDays: d.HistoryDays, DimensionTargetDays: d.Breakdown[product.ViolationDimensionTarget]})
	}
	return out
}

func toConsumer(c trust.Consumer) model.Consumer {
	return model.Consumer{ID: c.ID, Name: c.Name, Kind: c.Kind, Framework: c.Framework, Consumptions7d: c.Consumptions7d,
		Consumptions30d: c.Consumptions30d, Datasets30d: c.Datasets30d, LastDecision: c.LastDecision, LastPurpose: c.LastPurpose,
		LastConsumedAt: c.LastConsumedAt}
}

func toRAGGate(res trust.GateResult) *model.RAGGate {
	out := &model.RAGGate{Purpose: res.Purpose, AsOf: res.AsOf, ValidUntil: res.ValidUntil, TTLSeconds: int(res.TTL.Seconds()),
		Items: make([]model.RAGGateItem, 0, len(res.Items))}
	for _, it := range res.Items {
		o := model.RAGGateItem{DatasetID: it.DatasetID, DatasetName: it.DatasetName, Action: it.Action, Decision: it.Decision,
			PiiColumns: it.PIIColumns, Reasons: make([]model.TrustReason, 0, len(it.Reasons))}
		if o.PiiColumns == nil {
			o.PiiColumns = []string{}
		}
		for _, rs := range it.Reasons {
			o.Reasons = append(o.Reasons, model.TrustReason{Code: rs.Code, Severity: rs.Severity, MessagePt: rs.Message})
		}
		out.Items = append(out.Items, o)
	}
	return out
}
