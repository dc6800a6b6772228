package rest

import (
	"net/http"
	"strconv"
	"time"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/trust"
)

// TrustFindingOut is a trust blocker or warning.
type TrustFindingOut struct {
	Key     string         `json:"key" doc:"Stable key, e.g. critical_issue, schema_change_unacknowledged, unused_dataset"`
	Message string         `json:"message" doc:"pt-PT"`
	Params  map[string]any `json:"params"`
}

// TrustActionOut is what would raise a component.
type TrustActionOut struct {
	Code    string         `json:"code"`
	Message string         `json:"message" doc:"pt-PT"`
	Params  map[string]any `json:"params"`
}

// TrustComponentOut is one part of the trust score.
type TrustComponentOut struct {
	Key      string          `json:"key" enum:"quality,issues,freshness,stability,monitoring,ownership"`
	Weight   float64         `json:"weight" doc:"Percent of the trust score"`
	Score    float64         `json:"score" doc:"0-100"`
	Evidence map[string]any  `json:"evidence"`
	Action   *TrustActionOut `json:"action" doc:"What would raise it; null at 100"`
	Gain     float64         `json:"gain" doc:"Points the trust score would gain with this component at 100"`
}

// TrustOut is a dataset's trust score (computed without an LLM).
type TrustOut struct {
	DatasetID  string              `json:"dataset_id"`
	Score      float64             `json:"score" doc:"0-100; capped at 39 with a blocker"`
	Grade      string              `json:"grade" enum:"A,B,C,D,E"`
	Components []TrustComponentOut `json:"components"`
	Blockers   []TrustFindingOut   `json:"blockers"`
	Warnings   []TrustFindingOut   `json:"warnings"`
	AsOf       time.Time           `json:"as_of"`
}

// TrustBriefOut is the trust part of a dataset detail or list item.
type TrustBriefOut struct {
	Score    float64           `json:"score"`
	Grade    string            `json:"grade" enum:"A,B,C,D,E"`
	Blockers []TrustFindingOut `json:"blockers"`
	Warnings []TrustFindingOut `json:"warnings"`
}

// TrustReasonOut is one cause of a decision.
type TrustReasonOut struct {
	Code      string         `json:"code" doc:"Stable: readiness_blocker, critical_incident, verdict_fail, verdict_warn, warning_incident, readiness_warning, contract_violation, no_profile, profile_failed (params code), pipeline_failing and pipeline_late (a pipeline writing the dataset, from orchestrator runs: params orchestrator, pipeline, run_id, and consecutive_failures or expected_by)"`
	Severity  string         `json:"severity" enum:"critical,warning"`
	MessagePT string         `json:"message_pt"`
	Params    map[string]any `json:"params"`
}

// TrustReadinessOut is the readiness of the decision's purpose.
type TrustReadinessOut struct {
	Score    float64  `json:"score"`
	Blockers []string `json:"blockers" doc:"Blocker codes"`
}

// TrustFreshnessOut is how fresh the data is.
type TrustFreshnessOut struct {
	ObservedAgeHours *float64 `json:"observed_age_hours"`
	SLAHours         *float64 `json:"sla_hours"`
	SLASource        *string  `json:"sla_source" doc:"default (the workspace freshness target)"`
	Met              *bool    `json:"met"`
}

// OpenIncidentsOut counts the standing issues by severity.
type OpenIncidentsOut struct {
	Critical int `json:"critical"`
	Warning  int `json:"warning"`
}

// PIIOut names the columns with personal data (names only).
type PIIOut struct {
	Columns  []string `json:"columns"`
	Unmasked []string `json:"unmasked"`
}

// ContractStateOut is the dataset's data contract state.
type ContractStateOut struct {
	Active bool `json:"active"`
	Valid  bool `json:"valid" doc:"false when the last scan violated the active contract; true without one"`
}

// TrustDecisionOut answers "may this dataset be used for this purpose now?".
type TrustDecisionOut struct {
	DatasetID           string            `json:"dataset_id"`
	Purpose             string            `json:"purpose" enum:"agente,rag,treino,bi"`
	Decision            string            `json:"decision" enum:"trusted,caution,untrusted,unknown"`
	Reasons             []TrustReasonOut  `json:"reasons"`
	Verdict             string            `json:"verdict" enum:"pass,warn,fail,unknown"`
	Readiness           TrustReadinessOut `json:"readiness"`
	Freshness           TrustFreshnessOut `json:"freshness"`
	OpenIncidents       OpenIncidentsOut  `json:"open_incidents"`
	PII                 PIIOut            `json:"pii"`
	Contract            ContractStateOut  `json:"contract"`
	LastScanAt          *time.Time        `json:"last_scan_at"`
	AsOf                time.Time         `json:"as_of"`
	ValidUntil          time.Time         `json:"valid_until"`
	TTLSeconds          int               `json:"ttl_seconds" doc:"Also sent as Cache-Control max-age"`
	RecommendedActionPT string            `json:"recommended_action_pt"`
	RequiredActions     []string          `json:"required_actions" doc:"Stable action codes, e.g. resolve_critical_issues, mask_pii_columns, refresh_data, run_scan"`
}

// TrustDecisionsIn asks for the decisions of up to 50 datasets.
type TrustDecisionsIn struct {
	DatasetIDs []string `json:"dataset_ids" minItems:"1" maxItems:"50" doc:"Datasets to decide on (1-50; duplicates once)"`
	Purpose    *string  `json:"purpose,omitempty" doc:"agente (default), rag, treino, bi; ml is treino"`
}

// TrustDecisionsOut is a batch of decisions.
type TrustDecisionsOut struct {
	Purpose   string             `json:"purpose" enum:"agente,rag,treino,bi"`
	AsOf      time.Time          `json:"as_of"`
	Decisions []TrustDecisionOut `json:"decisions" doc:"In request order"`
	NotFound  []string           `json:"not_found" doc:"Requested ids that do not exist or the caller cannot see"`
}

// UseCaseReadinessOut is a dataset's readiness for one use case.
type UseCaseReadinessOut struct {
	Status   string            `json:"status" enum:"ready,ready_with_warnings,not_ready"`
	Score    float64           `json:"score"`
	Blockers []TrustFindingOut `json:"blockers"`
	Warnings []TrustFindingOut `json:"warnings"`
}

// UseCasesOut holds the four use cases of AI readiness.
type UseCasesOut struct {
	RAG    UseCaseReadinessOut `json:"rag"`
	Treino UseCaseReadinessOut `json:"treino" doc:"training"`
	Agente UseCaseReadinessOut `json:"agente" doc:"agents acting on the data"`
	BI     UseCaseReadinessOut `json:"bi"`
}

// RecommendationOut is one thing to do, with the use cases it helps.
type RecommendationOut struct {
	Code      string   `json:"code"`
	MessagePT string   `json:"message_pt"`
	UseCases  []string `json:"use_cases"`
}

// AIReadinessOut is a dataset's AI readiness.
type AIReadinessOut struct {
	DatasetID       string              `json:"dataset_id"`
	Score           float64             `json:"score" doc:"Mean of the four use cases"`
	UseCases        UseCasesOut         `json:"use_cases"`
	PII             PIIOut              `json:"pii"`
	Recommendations []RecommendationOut `json:"recommendations"`
}

// DomainRefOut names a domain of a dataset.
type DomainRefOut struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Status  string `json:"status" enum:"draft,published,deprecated"`
	Version string `json:"version"`
}

// ContextColumnOut is a column as /context describes it: no values, no samples.
type ContextColumnOut struct {
	Name         string   `json:"name"`
	DataType     string   `json:"data_type"`
	SemanticType *string  `json:"semantic_type"`
	PII          bool     `json:"pii"`
	NullRate     *float64 `json:"null_rate"`
	PrimaryKey   bool     `json:"primary_key"`
}

// ContextOut is what an agent reads before using a dataset.
type ContextOut struct {
	DatasetID     string              `json:"dataset_id"`
	Name          string              `json:"name"`
	Kind          string              `json:"kind"`
	Layer         *string             `json:"layer" enum:"bronze,silver,gold"`
	UsageClass    string              `json:"usage_class" enum:"hot,active,cold,dead"`
	RowCount      *int64              `json:"row_count" doc:"Rows counted by the last profile; null before one"`
	RowCountExact *bool               `json:"row_count_exact" doc:"False when the last profile read the first rows only (a cost-guarded view): row_count is then the rows read, a lower bound"`
	Columns       []ContextColumnOut  `json:"columns"`
	PIIColumns    []string            `json:"pii_columns"`
	Domains       []DomainRefOut      `json:"domains"`
	Verdict       string              `json:"verdict" enum:"pass,warn,fail,unknown"`
	Score         *float64            `json:"score"`
	Dimensions    map[string]*float64 `json:"dimensions"`
	Trust         TrustGradeOut       `json:"trust"`
	OpenIncidents OpenIncidentsOut    `json:"open_incidents"`
	Freshness     TrustFreshnessOut   `json:"freshness"`
	Readiness     map[string]string   `json:"readiness" doc:"Status per use case: rag, treino, agente, bi"`
	Usage         UsageOut            `json:"usage"`
	LastScanAt    *time.Time          `json:"last_scan_at"`
	SummaryPT     string              `json:"summary_pt"`
	GeneratedAt   time.Time           `json:"generated_at"`
}

// TrustGradeOut is a trust score and grade.
type TrustGradeOut struct {
	Score float64 `json:"score"`
	Grade string  `json:"grade" enum:"A,B,C,D,E"`
}

// UsageOut is how much a dataset is used.
type UsageOut struct {
	QueriesPerDay   *float64   `json:"queries_per_day" doc:"null when the source keeps no usage counter"`
	Consumptions30d int        `json:"consumptions_30d"`
	LastConsumedAt  *time.Time `json:"last_consumed_at"`
}

// DatasetTrustFactsOut is the trust facts envelope of a dataset.
type DatasetTrustFactsOut struct {
	SchemaVersion string              `json:"schema_version"`
	Kind          string              `json:"kind" enum:"dataset"`
	Subject       FactsSubjectOut     `json:"subject"`
	GeneratedAt   time.Time           `json:"generated_at"`
	Facts         DatasetFactsBodyOut `json:"facts"`
}

// FactsSubjectOut names what trust facts are about.
type FactsSubjectOut struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Status  *string `json:"status,omitempty"`
	Version *string `json:"version,omitempty"`
}

// DatasetFactsBodyOut are a dataset's trust facts.
type DatasetFactsBodyOut struct {
	Verdict       string              `json:"verdict" enum:"pass,warn,fail,unknown"`
	Score         *float64            `json:"score"`
	Dimensions    map[string]*float64 `json:"dimensions"`
	Trust         TrustBriefOut       `json:"trust"`
	Readiness     map[string]string   `json:"readiness"`
	OpenIncidents OpenIncidentsOut    `json:"open_incidents"`
	Freshness     TrustFreshnessOut   `json:"freshness"`
	PII           PIIOut              `json:"pii"`
	Contract      ContractStateOut    `json:"contract"`
	Domains       []DomainRefOut      `json:"domains"`
	LastScanAt    *time.Time          `json:"last_scan_at"`
	RowCount      *int64              `json:"row_count"`
	RowCountExact *bool               `json:"row_count_exact" doc:"False when row_count counts the first rows only (a cost-guarded view)"`
	Usage         UsageOut            `json:"usage"`
}

// FoundDatasetOut is a dataset /datasets/find returns.
type FoundDatasetOut struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Kind        string         `json:"kind"`
	Layer       *string        `json:"layer" enum:"bronze,silver,gold"`
	UsageClass  string         `json:"usage_class" enum:"hot,active,cold,dead"`
	LatestScore *float64       `json:"latest_score"`
	Verdict     string         `json:"verdict" enum:"pass,warn,fail,unknown"`
	Domains     []DomainRefOut `json:"domains"`
	PIIColumns  []string       `json:"pii_columns" doc:"Names only"`
}

// GraphFindOut is the answer of /datasets/find.
type GraphFindOut struct {
	Datasets  []FoundDatasetOut `json:"datasets" doc:"Up to 40"`
	Truncated bool              `json:"truncated" doc:"More datasets matched"`
}

// ConsumerOut is a registered consumer with its counters.
type ConsumerOut struct {
	ID              string         `json:"id"`
	Name            string         `json:"name"`
	Kind            string         `json:"kind" enum:"agent,application,pipeline,notebook"`
	Framework       *string        `json:"framework"`
	Consumptions7d  int            `json:"consumptions_7d"`
	Consumptions30d int            `json:"consumptions_30d"`
	Datasets30d     int            `json:"datasets_30d"`
	Decisions7d     map[string]int `json:"decisions_7d" doc:"Datasets read in 7 days by decision seen"`
	LastDecision    *string        `json:"last_decision"`
	LastPurpose     *string        `json:"last_purpose"`
	LastConsumedAt  *time.Time     `json:"last_consumed_at"`
	CreatedAt       time.Time      `json:"created_at"`
}

// ConsumerRefIn names the consumer of a read.
type ConsumerRefIn struct {
	Name      string  `json:"name" maxLength:"200" doc:"Letters of any language, digits, spaces and _ . : / - only"`
	Kind      string  `json:"kind" enum:"agent,application,pipeline,notebook"`
	RunRef    *string `json:"run_ref,omitempty" maxLength:"200" doc:"The consumer's run id; a repeated run_ref is a replay"`
	Framework *string `json:"framework,omitempty" maxLength:"100" doc:"e.g. langchain (same characters as name)"`
}

// DecisionSeenIn is the decision the consumer saw before reading.
type DecisionSeenIn struct {
	Decision string     `json:"decision" enum:"trusted,caution,untrusted,unknown"`
	AsOf     *time.Time `json:"as_of,omitempty" doc:"as_of of the decision seen (stored as trust_as_of)"`
}

// ConsumptionIn records a read.
type ConsumptionIn struct {
	Consumer     ConsumerRefIn   `json:"consumer"`
	Datasets     []string        `json:"datasets" minItems:"1" maxItems:"50" doc:"Dataset ids read (1-50)"`
	Purpose      string          `json:"purpose" enum:"agente,rag,treino,bi,ml"`
	DecisionSeen *DecisionSeenIn `json:"decision_seen,omitempty" doc:"Without it each dataset's decision of now is stored"`
}

// ConsumedDatasetOut is one dataset of a read.
type ConsumedDatasetOut struct {
	DatasetID    string    `json:"dataset_id"`
	DatasetName  string    `json:"dataset_name"`
	DecisionSeen string    `json:"decision_seen" enum:"trusted,caution,untrusted,unknown"`
	TrustAsOf    time.Time `json:"trust_as_of"`
}

// ConsumptionOut is a recorded read.
type ConsumptionOut struct {
	ID        string               `json:"id"`
	Consumer  ConsumerOut          `json:"consumer"`
	Purpose   string               `json:"purpose" enum:"agente,rag,treino,bi"`
	RunRef    *string              `json:"run_ref"`
	Datasets  []ConsumedDatasetOut `json:"datasets"`
	Replayed  bool                 `json:"replayed" doc:"true when this run_ref was already recorded: nothing new was written"`
	CreatedAt time.Time            `json:"created_at"`
}

func (s *Server) trustRoutes() {
	reg := func(id, suffix, summary string, resp any, params []param, h func(w http.ResponseWriter, r *http.Request, in *input)) {
		s.register(operation{ID: id, Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}" + suffix, Tag: "datasets",
			Summary: summary, Params: append([]param{datasetIDParam}, params...), Response: resp}, h)
	}
	reg("datasetTrust", "/trust", "Trust score: 0-100, grade A-E, components with evidence and actions, blockers and warnings", TrustOut{}, nil, s.handleTrust)
	reg("datasetTrustDecision", "/trust-decision", "May this dataset be used for this purpose now? Cache-Control max-age = ttl_seconds", TrustDecisionOut{},
		[]param{{Name: "purpose", In: "query", Type: "string", Enum: []string{"agente", "rag", "treino", "bi", "ml"}, Default: "agente",
			Desc: "agente (default), rag, treino, bi; ml is treino"}}, s.handleTrustDecision)
	reg("datasetAIReadiness", "/ai-readiness", "AI readiness: global score, per use case (rag, treino, agente, bi) with blockers, PII, recommendations",
		AIReadinessOut{}, nil, s.handleAIReadiness)
	reg("datasetContext", "/context", "Context object for agents: columns with semantic types and PII flags (names only), domains, states", ContextOut{}, nil, s.handleContext)
	reg("datasetTrustFacts", "/trust-facts", "Trust facts envelope with schema_version", DatasetTrustFactsOut{}, nil, s.handleDatasetTrustFacts)
	s.register(operation{ID: "datasetConsumers", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/consumers", Tag: "consumers",
		Summary: "Registered consumers of the dataset, counters over this dataset", List: true, Params: []param{datasetIDParam},
		Response: []ConsumerOut{}}, s.handleDatasetConsumers)
	s.register(operation{ID: "findDatasets", Method: http.MethodGet, Path: "/api/v1/datasets/find", Tag: "datasets",
		Summary: "Find datasets by every criterion combined; up to 40; only PII column names", Response: GraphFindOut{},
		Params: []param{
			{Name: "query", In: "query", Type: "string", MaxLen: 200, Desc: "Search in schema, table and name"},
			{Name: "layer", In: "query", Type: "string", Enum: []string{trust.LayerBronze, trust.LayerSilver, trust.LayerGold},
				Desc: "Read from schema or table name conventions (raw_, stg_ bronze; int_ silver; mart_, dim_, fct_ gold)"},
			{Name: "domain", In: "query", Type: "string", MaxLen: 200, Desc: "Domain id or name"},
			{Name: "has_pii", In: "query", Type: "boolean"},
			{Name: "min_score", In: "query", Type: "number", Min: intp(0), Max: intp(100)},
			{Name: "usage_class", In: "query", Type: "string", Enum: []string{trust.UsageHot, trust.UsageActive, trust.UsageCold, trust.UsageDead},
				Desc: "hot: 100+ queries a day or reads in 30 days; active: 1+; cold: some queries or a read in 180 days; dead: none"},
		}}, s.handleFind)
	s.register(operation{ID: "trustDecisions", Method: http.MethodPost, Path: "/api/v1/trust-decisions", Tag: "consumers", TokenWrite: true,
		Summary: "Batch trust decisions (a marked write: API tokens may call it)", Body: TrustDecisionsIn{}, Response: TrustDecisionsOut{},
		Desc: "Body {dataset_ids: [1-50 ids], purpose?: agente|rag|treino|bi|ml}. Decisions come in request order (duplicates once); " +
			"ids that do not exist or the caller cannot see are listed in not_found. Calls through an API token are written to the audit trail."},
		s.handleTrustDecisions)
	s.register(operation{ID: "recordConsumption", Method: http.MethodPost, Path: "/api/v1/trust/consumptions", Tag: "consumers", TokenWrite: true,
		Summary: "Record that a consumer read datasets (a marked write)", Body: ConsumptionIn{}, Response: ConsumptionOut{}, Status: http.StatusCreated,
		Desc: "201 with the recorded read; the same run_ref of the same consumer is a replay (replayed true, nothing written or notified). " +
			"404 when a dataset is not one the caller can see in the workspace; 429 with Retry-After above the workspace's reads per minute. " +
			"A read with decision untrusted writes one consumer.untrusted_read notice: at most one per hour per consumer and dataset, " +
			"20 per hour per workspace (the 20th carries params.warnings_cap)."}, s.handleConsumption)
	s.register(operation{ID: "listConsumers", Method: http.MethodGet, Path: "/api/v1/consumers", Tag: "consumers",
		Summary: "Registered consumers with counters over the datasets the caller can see", List: true, ListDefault: trust.ConsumerPageDefault, Response: []ConsumerOut{}}, s.handleConsumers)
}

func toFindingsOut(fs []trust.Finding) []TrustFindingOut {
	out := make([]TrustFindingOut, 0, len(fs))
	for _, f := range fs {
		out = append(out, TrustFindingOut{Key: f.Key, Message: f.Message, Params: nonNilMap(f.Params)})
	}
	return out
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func toTrustOut(sc trust.Score) TrustOut {
	out := TrustOut{DatasetID: sc.DatasetID, Score: sc.Score, Grade: sc.Grade, Blockers: toFindingsOut(sc.Blockers),
		Warnings: toFindingsOut(sc.Warnings), AsOf: sc.AsOf, Components: make([]TrustComponentOut, 0, len(sc.Components))}
	for _, c := range sc.Components {
		co := TrustComponentOut{Key: c.Key, Weight: c.Weight, Score: c.Score, Evidence: nonNilMap(c.Evidence), Gain: c.Gain}
		if c.Action != nil {
			co.Action = &TrustActionOut{Code: c.Action.Code, Message: c.Action.Message, Params: nonNilMap(c.Action.Params)}
		}
		out.Components = append(out.Components, co)
	}
	return out
}

func toTrustBriefOut(b catalog.TrustBrief) *TrustBriefOut {
	out := &TrustBriefOut{Score: b.Score, Grade: b.Grade, Blockers: []TrustFindingOut{}, Warnings: []TrustFindingOut{}}
	for _, i := range b.Blockers {
		out.Blockers = append(out.Blockers, TrustFindingOut{Key: i.Key, Message: i.Message, Params: nonNilMap(i.Params)})
	}
	for _, i := range b.Warnings {
		out.Warnings = append(out.Warnings, TrustFindingOut{Key: i.Key, Message: i.Message, Params: nonNilMap(i.Params)})
	}
	return out
}

func toTrustDecisionOut(d trust.Decision) TrustDecisionOut {
	out := TrustDecisionOut{DatasetID: d.DatasetID, Purpose: d.Purpose, Decision: d.Decision, Verdict: d.Verdict,
		Readiness:     TrustReadinessOut{Score: d.ReadinessScore, Blockers: nonNilStrings(d.ReadinessBlockers)},
		Freshness:     TrustFreshnessOut{ObservedAgeHours: d.ObservedAgeHours, SLAHours: d.SLAHours, SLASource: d.SLASource, Met: d.FreshnessMet},
		OpenIncidents: OpenIncidentsOut{Critical: d.OpenCritical, Warning: d.OpenWarning},
		PII:           PIIOut{Columns: nonNilStrings(d.PIIColumns), Unmasked: nonNilStrings(d.PIIUnmasked)},
		Contract:      ContractStateOut{Active: d.Contract.Active, Valid: d.Contract.Valid},
		LastScanAt:    d.LastScanAt, AsOf: d.AsOf, ValidUntil: d.ValidUntil, TTLSeconds: int(d.TTL / time.Second),
		RecommendedActionPT: d.Recommended, RequiredActions: nonNilStrings(d.RequiredActions), Reasons: make([]TrustReasonOut, 0, len(d.Reasons))}
	for _, r := range d.Reasons {
		out.Reasons = append(out.Reasons, TrustReasonOut{Code: r.Code, Severity: r.Severity, MessagePT: r.Message, Params: nonNilMap(r.Params)})
	}
	return out
}

func (s *Server) handleTrust(w http.ResponseWriter, r *http.Request, in *input) {
	sc, err := s.deps.Trust.TrustScore(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return toTrustOut(sc) })
}

func (s *Server) handleTrustDecision(w http.ResponseWriter, r *http.Request, in *input) {
	purpose := ""
	if p := in.String("purpose"); p != nil {
		purpose = *p
	}
	d, err := s.deps.Trust.Decide(r.Context(), in.Path("dataset_id"), purpose)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := toTrustDecisionOut(d)
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(out.TTLSeconds))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleTrustDecisions(w http.ResponseWriter, r *http.Request, in *input) {
	var body TrustDecisionsIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	purpose := ""
	if body.Purpose != nil {
		purpose = *body.Purpose
	}
	b, err := s.deps.Trust.DecideBatch(r.Context(), body.DatasetIDs, purpose)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := TrustDecisionsOut{Purpose: b.Purpose, AsOf: b.AsOf, NotFound: nonNilStrings(b.NotFound), Decisions: make([]TrustDecisionOut, 0, len(b.Decisions))}
	for _, d := range b.Decisions {
		out.Decisions = append(out.Decisions, toTrustDecisionOut(d))
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

func toUseCaseOut(u trust.UseCase) UseCaseReadinessOut {
	return UseCaseReadinessOut{Status: u.Status, Score: u.Score, Blockers: toFindingsOut(u.Blockers), Warnings: toFindingsOut(u.Warnings)}
}

func (s *Server) handleAIReadiness(w http.ResponseWriter, r *http.Request, in *input) {
	rd, err := s.deps.Trust.AIReadiness(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := AIReadinessOut{DatasetID: rd.DatasetID, Score: rd.Score, PII: PIIOut{Columns: nonNilStrings(rd.PIIColumns), Unmasked: nonNilStrings(rd.PIIUnmasked)},
		UseCases: UseCasesOut{RAG: toUseCaseOut(rd.UseCase(trust.PurposeRAG)), Treino: toUseCaseOut(rd.UseCase(trust.PurposeTreino)),
			Agente: toUseCaseOut(rd.UseCase(trust.PurposeAgente)), BI: toUseCaseOut(rd.UseCase(trust.PurposeBI))},
		Recommendations: make([]RecommendationOut, 0, len(rd.Recommendations))}
	for _, rc := range rd.Recommendations {
		out.Recommendations = append(out.Recommendations, RecommendationOut{Code: rc.Code, MessagePT: rc.Message, UseCases: nonNilStrings(rc.UseCases)})
	}
	writeJSON(w, http.StatusOK, out)
}

func toDomainRefs(ds []trust.DomainFact) []DomainRefOut {
	out := make([]DomainRefOut, 0, len(ds))
	for _, d := range ds {
		out = append(out, DomainRefOut{ID: d.ID, Name: d.Name, Status: d.Status, Version: d.Version})
	}
	return out
}

func nonNilDims(m map[string]*float64) map[string]*float64 {
	if m == nil {
		return map[string]*float64{}
	}
	return m
}

func (s *Server) handleContext(w http.ResponseWriter, r *http.Request, in *input) {
	c, err := s.deps.Trust.DatasetContext(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sla := c.FreshnessSLA
	src := "default"
	out := ContextOut{DatasetID: c.DatasetID, Name: c.Name, Kind: c.Kind, Layer: c.Layer, UsageClass: c.UsageClass, RowCount: c.RowCount, RowCountExact: c.RowCountExact,
		PIIColumns: nonNilStrings(c.PIIColumns), Domains: toDomainRefs(c.Domains), Verdict: c.Verdict, Score: c.Score,
		Dimensions: nonNilDims(c.Dimensions), Trust: TrustGradeOut{Score: c.TrustScore, Grade: c.TrustGrade},
		OpenIncidents: OpenIncidentsOut{Critical: c.OpenCritical, Warning: c.OpenWarning},
		Freshness:     TrustFreshnessOut{ObservedAgeHours: c.FreshnessAge, SLAHours: &sla, SLASource: &src, Met: c.FreshnessMet},
		Readiness:     c.Readiness, Usage: UsageOut{QueriesPerDay: c.QueriesPerDay, Consumptions30d: c.Consumers30d, LastConsumedAt: c.LastConsumedAt},
		LastScanAt: c.LastScanAt, SummaryPT: c.SummaryPT, GeneratedAt: c.GeneratedAt, Columns: make([]ContextColumnOut, 0, len(c.Columns))}
	for _, col := range c.Columns {
		out.Columns = append(out.Columns, ContextColumnOut{Name: col.Name, DataType: col.DataType, SemanticType: col.SemanticType, PII: col.PII,
			NullRate: col.NullRate, PrimaryKey: col.PrimaryKey})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleDatasetTrustFacts(w http.ResponseWriter, r *http.Request, in *input) {
	f, err := s.deps.Trust.TrustFacts(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	fa := f.Facts
	sla := f.FreshnessSLA
	src := "default"
	readiness := map[string]string{}
	for _, u := range f.Readiness.UseCases {
		readiness[u.UseCase] = u.Status
	}
	out := DatasetTrustFactsOut{SchemaVersion: f.SchemaVersion, Kind: "dataset", GeneratedAt: f.GeneratedAt,
		Subject: FactsSubjectOut{ID: fa.DatasetID, Name: fa.Name()},
		Facts: DatasetFactsBodyOut{Verdict: fa.Verdict, Score: fa.LatestScore, Dimensions: nonNilDims(fa.Dimensions),
			Trust:         TrustBriefOut{Score: f.Score.Score, Grade: f.Score.Grade, Blockers: toFindingsOut(f.Score.Blockers), Warnings: toFindingsOut(f.Score.Warnings)},
			Readiness:     readiness,
			OpenIncidents: OpenIncidentsOut{Critical: fa.CriticalIssues, Warning: fa.WarningIssues},
			Freshness:     TrustFreshnessOut{ObservedAgeHours: f.FreshnessAge, SLAHours: &sla, SLASource: &src, Met: f.FreshnessMet},
			PII:           PIIOut{Columns: nonNilStrings(f.Readiness.PIIColumns), Unmasked: nonNilStrings(f.Readiness.PIIUnmasked)},
			Contract:      ContractStateOut{Active: fa.Contract.Active, Valid: fa.Contract.Valid}, Domains: toDomainRefs(fa.Domains),
			LastScanAt: fa.LastScanAt, RowCount: fa.RowCount, RowCountExact: fa.RowCountExact,
			Usage: UsageOut{QueriesPerDay: fa.QueriesPerDay, Consumptions30d: fa.Consumptions30d, LastConsumedAt: fa.LastConsumedAt}}}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleFind(w http.ResponseWriter, r *http.Request, in *input) {
	f := trust.FindFilter{Query: in.String("query"), Layer: in.String("layer"), Domain: in.String("domain"), HasPII: in.Bool("has_pii"),
		UsageClass: in.String("usage_class")}
	if v, ok := in.values["min_score"].(float64); ok {
		f.MinScore = &v
	}
	res, err := s.deps.Trust.Find(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := GraphFindOut{Truncated: res.Truncated, Datasets: make([]FoundDatasetOut, 0, len(res.Datasets))}
	for _, d := range res.Datasets {
		out.Datasets = append(out.Datasets, FoundDatasetOut{ID: d.ID, Name: d.Name(), Kind: d.Kind, Layer: d.Layer, UsageClass: d.UsageClass,
			LatestScore: d.LatestScore, Verdict: d.Verdict, Domains: toDomainRefs(d.Domains), PIIColumns: nonNilStrings(d.PIIColumns)})
	}
	writeJSON(w, http.StatusOK, out)
}

func toConsumerOut(c trust.Consumer) ConsumerOut {
	d := c.Decisions7d
	if d == nil {
		d = map[string]int{trust.DecisionTrusted: 0, trust.DecisionCaution: 0, trust.DecisionUntrusted: 0, trust.DecisionUnknown: 0}
	}
	return ConsumerOut{ID: c.ID, Name: c.Name, Kind: c.Kind, Framework: c.Framework, Consumptions7d: c.Consumptions7d,
		Consumptions30d: c.Consumptions30d, Datasets30d: c.Datasets30d, Decisions7d: d, LastDecision: c.LastDecision,
		LastPurpose: c.LastPurpose, LastConsumedAt: c.LastConsumedAt, CreatedAt: c.CreatedAt}
}

func (s *Server) handleConsumers(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Trust.Consumers(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ConsumerOut, 0, len(res.Items))
	for _, c := range res.Items {
		out = append(out, toConsumerOut(c))
	}
	list(w, res.Total, out)
}

func (s *Server) handleDatasetConsumers(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Trust.DatasetConsumers(r.Context(), in.Path("dataset_id"), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ConsumerOut, 0, len(res.Items))
	for _, c := range res.Items {
		out = append(out, toConsumerOut(c))
	}
	list(w, res.Total, out)
}

func (s *Server) handleConsumption(w http.ResponseWriter, r *http.Request, in *input) {
	var body ConsumptionIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	ci := trust.ConsumptionInput{Consumer: trust.ConsumerRef{Name: body.Consumer.Name, Kind: body.Consumer.Kind, RunRef: body.Consumer.RunRef,
		Framework: body.Consumer.Framework}, DatasetIDs: body.Datasets, Purpose: body.Purpose}
	if body.DecisionSeen != nil {
		ci.DecisionSeen = &trust.DecisionSeen{Decision: body.DecisionSeen.Decision, AsOf: body.DecisionSeen.AsOf}
	}
	res, err := s.deps.Trust.RecordConsumption(r.Context(), ci)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := ConsumptionOut{ID: res.ID, Consumer: toConsumerOut(res.Consumer), Purpose: res.Purpose, RunRef: res.RunRef, Replayed: res.Replayed,
		CreatedAt: res.CreatedAt, Datasets: make([]ConsumedDatasetOut, 0, len(res.Datasets))}
	for _, d := range res.Datasets {
		out.Datasets = append(out.Datasets, ConsumedDatasetOut{DatasetID: d.DatasetID, DatasetName: d.DatasetName, DecisionSeen: d.Decision, TrustAsOf: d.TrustAsOf})
	}
	writeJSON(w, http.StatusCreated, out)
}
