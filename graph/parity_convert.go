package graph

import (
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/trust"
)

// The conversions below give GraphQL the same fields as the REST transport's answers
// (rest/connections.go, rest/trust.go), camelCased.

// toConnection is a connection without its DSN: the model has no field that could carry one.
func toConnection(c connection.Connection) model.Connection {
	out := model.Connection{ID: c.ID, Name: c.Name, Kind: c.Kind, DataCountry: c.DataCountry, ScanTimezone: c.ScanTimezone,
		Schedule: &model.ConnectionSchedule{Enabled: c.Schedule.Enabled, Hour: c.Schedule.Hour, ScanHour: c.Schedule.Hour,
			Minute: c.Schedule.Minute, Timezone: c.ScanTimezone},
		DatasetsCount: c.DatasetsCount, LastScanAt: c.LastScanAt, LastScanStatus: c.LastScanStatus, CreatedAt: c.CreatedAt,
		Country: &model.Country{Effective: c.EffectiveCountry(), Source: "workspace"}, StatementTimeoutS: c.StatementTimeout,
		Openlineage: &model.ConnectionOpenLineage{Namespace: optString(c.Lineage.Namespace), Database: optString(c.Lineage.Database),
			Aliases: nonNil(c.Lineage.Aliases)}}
	if c.DataCountry != nil {
		out.Country.Source = "connection"
	}
	return out
}

func toFindings(fs []trust.Finding) []model.TrustFinding {
	out := make([]model.TrustFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, model.TrustFinding{Key: f.Key, Message: f.Message, Params: jsonText(f.Params)})
	}
	return out
}

func toTrustScore(sc trust.Score) *model.TrustScore {
	out := &model.TrustScore{DatasetID: sc.DatasetID, Score: sc.Score, Grade: sc.Grade, Blockers: toFindings(sc.Blockers),
		Warnings: toFindings(sc.Warnings), AsOf: sc.AsOf, Components: make([]model.TrustComponent, 0, len(sc.Components))}
	for _, c := range sc.Components {
		tc := model.TrustComponent{Key: c.Key, Weight: c.Weight, Score: c.Score, Evidence: jsonText(c.Evidence), Gain: c.Gain}
		if c.Action != nil {
			tc.Action = &model.TrustAction{Code: c.Action.Code, Message: c.Action.Message, Params: jsonText(c.Action.Params)}
		}
		out.Components = append(out.Components, tc)
	}
	return out
}

func toUseCaseReadiness(u trust.UseCase) *model.UseCaseReadiness {
	return &model.UseCaseReadiness{Status: u.Status, Score: u.Score, Blockers: toFindings(u.Blockers), Warnings: toFindings(u.Warnings)}
}

func toAIReadiness(rd trust.Readiness) *model.AIReadiness {
	out := &model.AIReadiness{DatasetID: rd.DatasetID, Score: rd.Score,
		Pii: &model.PIIColumns{Columns: nonNil(rd.PIIColumns), Unmasked: nonNil(rd.PIIUnmasked)},
		UseCases: &model.UseCasesReadiness{Rag: toUseCaseReadiness(rd.UseCase(trust.PurposeRAG)),
			Treino: toUseCaseReadiness(rd.UseCase(trust.PurposeTreino)), Agente: toUseCaseReadiness(rd.UseCase(trust.PurposeAgente)),
			Bi: toUseCaseReadiness(rd.UseCase(trust.PurposeBI))},
		Recommendations: make([]model.ReadinessRecommendation, 0, len(rd.Recommendations))}
	for _, rc := range rd.Recommendations {
		out.Recommendations = append(out.Recommendations, model.ReadinessRecommendation{Code: rc.Code, MessagePt: rc.Message,
			UseCases: nonNil(rc.UseCases)})
	}
	return out
}

func toDomainRefs(ds []trust.DomainFact) []model.DomainRef {
	out := make([]model.DomainRef, 0, len(ds))
	for _, d := range ds {
		out = append(out, model.DomainRef{ID: d.ID, Name: d.Name, Status: d.Status, Version: d.Version})
	}
	return out
}

func dimensionsOf(m map[string]*float64) *model.Dimensions {
	return &model.Dimensions{Completude: m["completude"], Unicidade: m["unicidade"], Validade: m["validade"],
		Atualidade: m["atualidade"], Consistencia: m["consistencia"]}
}

func useCaseStatuses(m map[string]string) *model.UseCaseStatuses {
	get := func(k string) *string {
		if v, ok := m[k]; ok {
			return &v
		}
		return nil
	}
	return &model.UseCaseStatuses{Rag: get(trust.PurposeRAG), Treino: get(trust.PurposeTreino), Agente: get(trust.PurposeAgente),
		Bi: get(trust.PurposeBI)}
}

func intOf(n *int64) *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

// freshnessOf is the freshness the REST context and facts answer: the workspace target
// is the SLA ("default").
func freshnessOf(age *float64, sla float64, met *bool) *model.TrustFreshness {
	src := "default"
	return &model.TrustFreshness{ObservedAgeHours: age, SLAHours: &sla, SLASource: &src, Met: met}
}

func toDatasetContext(c trust.Context) *model.DatasetContext {
	out := &model.DatasetContext{DatasetID: c.DatasetID, Name: c.Name, Kind: c.Kind, Layer: c.Layer, UsageClass: c.UsageClass,
		RowCount: intOf(c.RowCount), RowCountExact: c.RowCountExact, PiiColumns: nonNil(c.PIIColumns), Domains: toDomainRefs(c.Domains),
		Verdict: c.Verdict, Score: c.Score, Dimensions: dimensionsOf(c.Dimensions), Trust: &model.TrustGrade{Score: c.TrustScore, Grade: c.TrustGrade},
		OpenIncidents: &model.OpenIncidentCounts{Critical: c.OpenCritical, Warning: c.OpenWarning},
		Freshness:     freshnessOf(c.FreshnessAge, c.FreshnessSLA, c.FreshnessMet), Readiness: useCaseStatuses(c.Readiness),
		Usage:      &model.DatasetUsage{QueriesPerDay: c.QueriesPerDay, Consumptions30d: c.Consumers30d, LastConsumedAt: c.LastConsumedAt},
		LastScanAt: c.LastScanAt, SummaryPt: c.SummaryPT, GeneratedAt: c.GeneratedAt, Columns: make([]model.ContextColumn, 0, len(c.Columns))}
	for _, col := range c.Columns {
		out.Columns = append(out.Columns, model.ContextColumn{Name: col.Name, DataType: col.DataType, SemanticType: col.SemanticType,
			Pii: col.PII, NullRate: col.NullRate, PrimaryKey: col.PrimaryKey})
	}
	return out
}

func toDatasetTrustFacts(f trust.DatasetFacts) *model.DatasetTrustFacts {
	fa := f.Facts
	readiness := map[string]string{}
	for _, u := range f.Readiness.UseCases {
		readiness[u.UseCase] = u.Status
	}
	return &model.DatasetTrustFacts{SchemaVersion: f.SchemaVersion, Kind: "dataset", GeneratedAt: f.GeneratedAt,
		Subject: &model.FactsSubject{ID: fa.DatasetID, Name: fa.Name()},
		Facts: &model.DatasetFactsBody{Verdict: fa.Verdict, Score: fa.LatestScore, Dimensions: dimensionsOf(fa.Dimensions),
			Trust: &model.TrustBrief{Score: f.Score.Score, Grade: f.Score.Grade, Blockers: toFindings(f.Score.Blockers),
				Warnings: toFindings(f.Score.Warnings)},
			Readiness:     useCaseStatuses(readiness),
			OpenIncidents: &model.OpenIncidentCounts{Critical: fa.CriticalIssues, Warning: fa.WarningIssues},
			Freshness:     freshnessOf(f.FreshnessAge, f.FreshnessSLA, f.FreshnessMet),
			Pii:           &model.PIIColumns{Columns: nonNil(f.Readiness.PIIColumns), Unmasked: nonNil(f.Readiness.PIIUnmasked)},
			Contract:      &model.ContractState{Active: fa.Contract.Active, Valid: fa.Contract.Valid}, Domains: toDomainRefs(fa.Domains),
			LastScanAt: fa.LastScanAt, RowCount: intOf(fa.RowCount), RowCountExact: fa.RowCountExact,
			Usage: &model.DatasetUsage{QueriesPerDay: fa.QueriesPerDay, Consumptions30d: fa.Consumptions30d,
				LastConsumedAt: fa.LastConsumedAt}}}
}

func toFoundDatasets(res trust.FindResult) *model.FoundDatasets {
	out := &model.FoundDatasets{Truncated: res.Truncated, Datasets: make([]model.FoundDataset, 0, len(res.Datasets))}
	for _, d := range res.Datasets {
		out.Datasets = append(out.Datasets, model.FoundDataset{ID: d.ID, Name: d.Name(), Kind: d.Kind, Layer: d.Layer,
			UsageClass: d.UsageClass, LatestScore: d.LatestScore, Verdict: d.Verdict, Domains: toDomainRefs(d.Domains),
			PiiColumns: nonNil(d.PIIColumns)})
	}
	return out
}
