package graph

import (
	"encoding/json"

	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/readme"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/sensitivity"
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

func toDomainVerdict(v product.DomainVerdict) *model.DomainVerdict {
	out := &model.DomainVerdict{DomainID: v.DomainID, Verdict: v.Verdict, Score: v.Score,
		Counts:   &model.VerdictCounts{Pass: v.Counts["pass"], Warn: v.Counts["warn"], Fail: v.Counts["fail"], Unknown: v.Counts["unknown"]},
		Datasets: make([]model.DatasetVerdictItem, 0, len(v.Datasets))}
	for _, d := range v.Datasets {
		out.Datasets = append(out.Datasets, model.DatasetVerdictItem{DatasetID: d.DatasetID, DatasetName: d.DatasetName, Verdict: d.Verdict, Score: d.Score})
	}
	return out
}

func toDomainSLA(sla product.SLA) *model.DomainSLA {
	out := &model.DomainSLA{AvailabilityObjectivePct: sla.AvailabilityObjectivePct, RetentionDays: sla.RetentionDays,
		DimensionTargets: dimensionValues(sla.DimensionTargets)}
	if sla.DimensionWeights != nil {
		out.DimensionWeights = dimensionValues(sla.DimensionWeights)
	}
	return out
}

func toDomainTrustFacts(f product.DomainFacts) *model.DomainTrustFacts {
	status, version := f.Domain.Status, f.Domain.Version.String()
	readiness := map[string]string{}
	for _, u := range f.Readiness.UseCases {
		readiness[u.UseCase] = u.Status
	}
	get := func(k string) *string {
		if v, ok := readiness[k]; ok {
			return &v
		}
		return nil
	}
	out := &model.DomainTrustFacts{SchemaVersion: f.SchemaVersion, Kind: "domain", GeneratedAt: f.GeneratedAt,
		Subject: &model.FactsSubject{ID: f.Domain.ID, Name: f.Domain.Name, Status: &status, Version: &version},
		Facts: &model.DomainFactsBody{Verdict: f.Verdict.Verdict, Score: f.Verdict.Score, SLA: toDomainSLA(f.Domain.SLA),
			Readiness: &model.DomainUseCaseStatuses{Rag: get(product.UseRAG), Ml: get(product.UseML), Agente: get(product.UseAgente),
				Bi: get(product.UseBI)},
			SloMonth: &model.MonthAttainment{Month: f.SLO.Month, AvailabilityPct: f.SLO.AvailabilityPct, MetDays: f.SLO.MetDays,
				ViolatedDays: f.SLO.ViolatedDays, ObjectivePct: f.SLO.ObjectivePct, ObjectiveMet: f.SLO.ObjectiveMet},
			Datasets: make([]model.DomainFactsDataset, 0, len(f.Datasets))}}
	for _, d := range f.Datasets {
		out.Facts.Datasets = append(out.Facts.Datasets, model.DomainFactsDataset{DatasetID: d.DatasetID, DatasetName: d.DatasetName,
			Verdict: d.Verdict, Score: d.Score, TrustScore: d.TrustScore, TrustGrade: d.TrustGrade,
			OpenIncidents: &model.OpenIncidentCounts{Critical: d.OpenCritical, Warning: d.OpenWarning}, LastScanAt: d.LastScanAt})
	}
	return out
}

func toMetadataQuality(m product.MetadataQuality) *model.MetadataQuality {
	out := &model.MetadataQuality{DomainID: m.DomainID, DatasetsTotal: m.DatasetsTotal, Score: m.Score,
		Problems: make([]model.MetadataProblem, 0, len(m.Problems))}
	for _, p := range m.Problems {
		mp := model.MetadataProblem{Code: p.Code, Count: p.Count, Datasets: make([]model.ReachDataset, 0, len(p.Datasets))}
		for _, d := range p.Datasets {
			mp.Datasets = append(mp.Datasets, model.ReachDataset{DatasetID: d.DatasetID, DatasetName: d.DatasetName, DownstreamReach: d.DownstreamReach})
		}
		if p.Suggestion != nil {
			mp.Suggestion = &model.MetadataSuggestion{Channel: p.Suggestion.Channel, Action: p.Suggestion.Action}
		}
		out.Problems = append(out.Problems, mp)
	}
	return out
}

// valueText is a changed value: a text as itself, any other value as JSON text, nil for none.
func valueText(v any) *string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return &x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	s := string(b)
	return &s
}

func toDomainDiff(d product.DiffResult) *model.DomainDiff {
	out := &model.DomainDiff{DomainID: d.DomainID, ToVersion: "current", Bump: d.Bump, Changes: make([]model.DomainChange, 0, len(d.Changes)),
		Counts: &model.DomainVersionCounts{Datasets: d.Counts.Datasets, Changes: d.Counts.Changes, Breaking: d.Counts.Breaking,
			Compatible: d.Counts.Compatible}}
	if d.From != nil {
		out.FromVersion = optString(d.From.String())
	}
	if d.To != nil {
		out.ToVersion = d.To.String()
	}
	if d.NextVersion != nil {
		out.NextVersion = optString(d.NextVersion.String())
	}
	for _, c := range d.Changes {
		out.Changes = append(out.Changes, model.DomainChange{Kind: c.Kind, Impact: c.Impact, DatasetID: optString(c.DatasetID),
			DatasetName: optString(c.DatasetName), Column: optString(c.Column), Dimension: optString(c.Dimension), Field: optString(c.Field),
			Before: valueText(c.Before), After: valueText(c.After), Restricted: c.Restricted})
	}
	return out
}

func toDomainSuggestion(sg product.DomainSuggestion) model.DomainSuggestion {
	out := model.DomainSuggestion{DatasetID: sg.DatasetID, DatasetName: sg.DatasetName, DomainID: optString(sg.DomainID),
		DomainName: optString(sg.DomainName), Votes: sg.Votes, TotalLinks: sg.TotalLinks, ViaColumns: nonNil(sg.ViaColumns),
		EdgeKinds: []string{}, InferredOnly: sg.InferredOnly, Signature: optString(sg.Signature), Candidates: []model.DomainVote{}}
	for _, k := range sg.EdgeKinds {
		out.EdgeKinds = append(out.EdgeKinds, string(k))
	}
	for _, c := range sg.Candidates {
		out.Candidates = append(out.Candidates, model.DomainVote{DomainID: c.DomainID, DomainName: c.DomainName, Votes: c.Votes})
	}
	return out
}

func toDomainSuggestions(res product.DomainSuggestions) *model.DomainSuggestions {
	out := &model.DomainSuggestions{HasLineage: res.HasLineage, Suggestions: make([]model.DomainSuggestion, 0, len(res.Suggestions)),
		Ambiguous: make([]model.DomainSuggestion, 0, len(res.Ambiguous))}
	for _, sg := range res.Suggestions {
		out.Suggestions = append(out.Suggestions, toDomainSuggestion(sg))
	}
	for _, sg := range res.Ambiguous {
		out.Ambiguous = append(out.Ambiguous, toDomainSuggestion(sg))
	}
	return out
}

func toNeighbours(ns []lineage.NeighbourView) []model.LineageNeighbour {
	out := make([]model.LineageNeighbour, 0, len(ns))
	for _, n := range ns {
		o := model.LineageNeighbour{Ref: n.Ref, ID: optString(n.ID), Name: optString(n.Name), Restricted: n.Restricted, EdgeKinds: []string{},
			ColumnMap: []model.ColumnPair{}, ColumnLevel: n.ColumnLevel && !n.Restricted, LinkingColumn: optString(n.LinkingColumn),
			InferredOnly: n.InferredOnly}
		for _, k := range n.EdgeKinds {
			o.EdgeKinds = append(o.EdgeKinds, string(k))
		}
		for _, c := range n.Columns {
			o.ColumnMap = append(o.ColumnMap, model.ColumnPair{From: c.From, To: c.To, Direct: c.Direct})
		}
		out = append(out, o)
	}
	return out
}

func toDatasetLineage(res lineage.LineageResult) *model.DatasetLineage {
	out := &model.DatasetLineage{DatasetID: res.DatasetID, Unresolved: nonNil(res.Unresolved), Upstream: toNeighbours(res.Upstream),
		Downstream: toNeighbours(res.Downstream), ReachTotal: res.ReachTotal, Truncated: res.Truncated,
		Exposures: make([]model.Exposure, 0, len(res.Exposures))}
	for _, e := range res.Exposures {
		out.Exposures = append(out.Exposures, model.Exposure{ID: e.ID, Name: e.Name, Type: e.Type, URL: optString(e.URL),
			Owner: optString(e.Owner), Origin: e.Origin, Direct: e.Direct, Via: nonNil(e.Via)})
	}
	return out
}

func toExposure(e lineage.Exposure) model.Exposure {
	return model.Exposure{ID: e.ID, Name: e.Name, Type: e.Type, URL: optString(e.URL), Owner: optString(e.Owner), Origin: e.Origin,
		Via: nonNil(e.DatasetIDs)}
}

func toGraphSnapshot(sn lineage.Snapshot) *model.GraphSnapshot {
	return &model.GraphSnapshot{ID: sn.ID, Trigger: sn.Trigger, ScanID: sn.ScanID, Digest: sn.Digest, NodesCount: sn.NodesCount,
		EdgesCount: sn.EdgesCount, CreatedAt: sn.CreatedAt}
}

// toKnowledgeNode is a node as REST answers it: a restricted node has no name.
func toKnowledgeNode(n lineage.KNode) model.KnowledgeNode {
	kn := model.KnowledgeNode{ID: n.ID, Kind: string(n.Kind), Restricted: n.Restricted}
	if !n.Restricted {
		name := n.Name
		kn.Name = &name
	}
	if len(n.Props) > 0 {
		p := jsonText(n.Props)
		kn.Props = &p
	}
	return kn
}

func toGraphDiff(d lineage.GraphDiff) *model.GraphDiff {
	nodes := func(ns []lineage.KNode) []model.KnowledgeNode {
		out := make([]model.KnowledgeNode, 0, len(ns))
		for _, n := range ns {
			out = append(out, toKnowledgeNode(n))
		}
		return out
	}
	edges := func(es []lineage.KEdge) []model.KnowledgeEdge {
		out := make([]model.KnowledgeEdge, 0, len(es))
		for _, e := range es {
			out = append(out, model.KnowledgeEdge{Source: e.Source, Target: e.Target, Kind: e.Kind, LineageKind: optString(string(e.LineageKind))})
		}
		return out
	}
	byKind := map[string]any{}
	for k, c := range d.ByKind {
		byKind[k] = map[string]int{"added": c.Added, "removed": c.Removed, "renamed": c.Renamed}
	}
	out := &model.GraphDiff{From: toGraphSnapshot(d.From), To: toGraphSnapshot(d.To), AddedNodes: nodes(d.AddedNodes),
		RemovedNodes: nodes(d.RemovedNodes), RenamedNodes: make([]model.RenamedNode, 0, len(d.RenamedNodes)),
		AddedEdges: edges(d.AddedEdges), RemovedEdges: edges(d.RemovedEdges), ByKind: jsonText(byKind), Truncated: d.Truncated}
	for _, n := range d.RenamedNodes {
		out.RenamedNodes = append(out.RenamedNodes, model.RenamedNode{ID: n.ID, Kind: string(n.Kind), From: n.From, To: n.To})
	}
	return out
}

func toContractChanges(cs []contract.Change) []model.ContractChange {
	out := make([]model.ContractChange, 0, len(cs))
	for _, c := range cs {
		out = append(out, model.ContractChange{Kind: c.Kind, Property: optString(c.Property), Field: optString(c.Field),
			Quality: optString(c.Quality), Before: valueText(c.Before), After: valueText(c.After), Breaking: c.Breaking})
	}
	return out
}

func documentText(d contract.Document) (string, error) {
	b, err := d.JSON()
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func toContractVersionDetail(v contract.VersionRecord) (*model.ContractVersionDetail, error) {
	doc, err := documentText(v.Document)
	if err != nil {
		return nil, err
	}
	return &model.ContractVersionDetail{Version: v.Number.String(), Bump: v.Bump, ChangeSummary: v.Summary, Changes: toContractChanges(v.Changes),
		ProposalID: v.ProposalID, AuthorID: v.AuthorID, AcceptedBy: v.AcceptedBy, CreatedAt: v.CreatedAt, Document: doc}, nil
}

func toProposalItem(p contract.Proposal) model.ContractProposalItem {
	return model.ContractProposalItem{ID: p.ID, DatasetID: p.DatasetID, Status: p.Status, Origin: p.Origin, Summary: p.Summary,
		AuthorID: p.AuthorID, DecidedBy: p.DecidedBy, DecidedAt: p.DecidedAt, Note: p.Note, Version: p.Version, CreatedAt: p.CreatedAt,
		UpdatedAt: p.UpdatedAt}
}

func toContractProposal(p contract.Proposal) (*model.ContractProposal, error) {
	doc, err := documentText(p.Document)
	if err != nil {
		return nil, err
	}
	out := &model.ContractProposal{ID: p.ID, DatasetID: p.DatasetID, Status: p.Status, Origin: p.Origin, Summary: p.Summary,
		AuthorID: p.AuthorID, DecidedBy: p.DecidedBy, DecidedAt: p.DecidedAt, Note: p.Note, Version: p.Version, CreatedAt: p.CreatedAt,
		UpdatedAt: p.UpdatedAt, Bump: p.Bump, Changes: toContractChanges(p.Changes), Comments: make([]model.ContractComment, 0, len(p.Comments)),
		Document: doc}
	for _, c := range p.Comments {
		out.Comments = append(out.Comments, model.ContractComment{ID: c.ID, AuthorID: c.AuthorID, Body: c.Body, CreatedAt: c.CreatedAt})
	}
	return out, nil
}

func toDomainContract(d contract.DomainContract) (*model.DomainContract, error) {
	doc, err := documentText(d.Document)
	if err != nil {
		return nil, err
	}
	out := &model.DomainContract{DomainID: d.DomainID, Name: d.Name, Version: d.Version, Document: doc,
		Members: make([]model.DomainContractMember, 0, len(d.Members))}
	for _, m := range d.Members {
		out.Members = append(out.Members, model.DomainContractMember{DatasetID: m.DatasetID, Name: m.Name, Version: m.Version, Valid: m.Valid,
			Columns: m.Columns})
	}
	return out, nil
}

func toDatasetReadme(r readme.Readme) *model.DatasetReadme {
	return &model.DatasetReadme{DatasetID: r.DatasetID, ContentMd: r.Draft, Edited: r.Edited, EditedBy: r.EditedBy, EditedAt: r.EditedAt,
		GeneratedAt: r.GeneratedAt, PublishedMd: r.Published, PublishedBy: r.PublishedBy, PublishedAt: r.PublishedAt}
}

func toDatasetSensitivity(r sensitivity.Report) *model.DatasetSensitivity {
	out := &model.DatasetSensitivity{DatasetID: r.DatasetID, Columns: make([]model.ColumnSensitivity, 0, len(r.Columns)),
		Trail: make([]model.SensitivityChange, 0, len(r.Trail))}
	for _, c := range r.Columns {
		co := model.ColumnSensitivity{Column: c.Name, Level: c.Level, Origin: c.Origin, Reason: optString(c.Reason), Author: c.AuthorID, SetAt: c.At}
		if sg := c.Suggestion; sg != nil {
			so := &model.SensitivitySuggestion{Level: sg.Level, Origin: "lineage", From: make([]model.SensitivitySource, 0, len(sg.From))}
			for _, f := range sg.From {
				so.From = append(so.From, model.SensitivitySource{DatasetID: optString(f.DatasetID), Column: optString(f.Column), Level: f.Level,
					Restricted: f.Restricted})
			}
			co.Suggestion = so
		}
		out.Columns = append(out.Columns, co)
	}
	for _, t := range r.Trail {
		out.Trail = append(out.Trail, model.SensitivityChange{Column: t.Column, From: t.From, To: t.To, Author: t.AuthorID, At: t.At})
	}
	return out
}

func toRulesExport(e rule.Export) *model.RulesExport {
	return &model.RulesExport{Format: e.Format, Body: string(e.Body), Exported: e.Exported, Unsupported: len(e.Unsupported),
		UnsupportedTypes: nonNil(e.UnsupportedTypes())}
}

func toPipelineHealth(h orchestrator.Health) *model.PipelineHealth {
	out := &model.PipelineHealth{DatasetID: h.DatasetID, Status: h.Status, Pipelines: make([]model.PipelineWriter, 0, len(h.Pipelines))}
	for _, p := range h.Pipelines {
		w := model.PipelineWriter{Orchestrator: p.Orchestrator, Pipeline: p.Pipeline, Status: p.Status, LastRun: ptr(toOrchestratorRun(p.LastRun)),
			LastSuccessAt: p.LastSuccessAt, LastFailureAt: p.LastFailureAt, ConsecutiveFailures: p.ConsecutiveFailures,
			ExpectedBy: p.ExpectedBy, Runs: p.Runs}
		if p.FailingRun != nil {
			w.FailingRun = ptr(toOrchestratorRun(*p.FailingRun))
		}
		if p.Cadence != nil {
			sec := int(p.Cadence.Seconds())
			w.CadenceSeconds = &sec
		}
		out.Pipelines = append(out.Pipelines, w)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
