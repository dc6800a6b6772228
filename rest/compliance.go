package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/compliance"
)

// Art10DatasetOut is one dataset of the Article 10 dossier.
type Art10DatasetOut struct {
	DatasetID      string   `json:"dataset_id"`
	DatasetName    string   `json:"dataset_name"`
	ConnectionID   string   `json:"connection_id"`
	ConnectionName string   `json:"connection_name"`
	SourceKind     string   `json:"source_kind" doc:"postgres, mysql or sqlite"`
	DataCountry    *string  `json:"data_country" doc:"Where the data lives (ISO 3166-1 alpha-2): the effective country (dataset, else connection, else workspace)"`
	UpstreamCount  int      `json:"upstream_count" doc:"Datasets lineage says it is derived from"`
	Domains        []string `json:"domains"`
	Score          *float64 `json:"score" doc:"Last quality score (0-100); null before a profile"`
	Verdict        string   `json:"verdict" enum:"pass,warn,fail,unknown"`
	Rules          int      `json:"rules" doc:"Quality rules on the dataset"`
	RulesPassed    int      `json:"rules_passed" doc:"Rules whose last result passed"`
	RulesFailed    int      `json:"rules_failed" doc:"Rules whose last result failed"`
	OpenIssues     int      `json:"open_issues"`
	PIIColumns     []string `json:"pii_columns" doc:"Columns holding personal data (names only)"`
	BiasColumns    []string `json:"bias_relevant_columns" doc:"Columns whose names tell protected characteristics or their proxies (sex, age, nationality, postal code...)"`
	Gaps           []string `json:"gaps" doc:"no_quality_rules, not_profiled, failing_rules, no_lineage, no_domain, personal_data"`
}

// Art10Out is the EU AI Act Article 10 data-governance dossier.
type Art10Out struct {
	Article     string            `json:"article" doc:"EU AI Act (Regulation (EU) 2024/1689) Article 10"`
	GeneratedAt time.Time         `json:"generated_at"`
	Datasets    []Art10DatasetOut `json:"datasets"`
	GapCounts   map[string]int    `json:"gap_counts" doc:"Datasets per gap code"`
}

func (s *Server) complianceRoutes() {
	s.register(operation{ID: "getArt10Dossier", Method: http.MethodGet, Path: "/api/v1/compliance/art10", Tag: "compliance",
		Summary:  "EU AI Act Article 10 data-governance dossier of the visible datasets (business plan)",
		Desc:     "Data sources and lineage, quality measures and their last results, personal and bias-relevant columns (names only) and gaps, from Vigia's own facts.",
		Response: Art10Out{}, Errors: map[int]string{http.StatusPaymentRequired: "plan_limit: the dossiers need the business plan (plan and limit in the body)"}},
		s.handleArt10)
	s.aiSystemRoutes()
}

func toArt10DatasetOut(x compliance.Dataset) Art10DatasetOut {
	doms := x.Domains
	if doms == nil {
		doms = []string{}
	}
	pii := x.PIIColumns
	if pii == nil {
		pii = []string{}
	}
	return Art10DatasetOut{DatasetID: x.ID, DatasetName: x.Name, ConnectionID: x.ConnectionID,
		ConnectionName: x.ConnectionName, SourceKind: x.ConnectionKind, DataCountry: x.DataCountry, UpstreamCount: x.Upstream,
		Domains: doms, Score: x.Score, Verdict: x.Verdict, Rules: x.RuleCount, RulesPassed: x.Passed, RulesFailed: x.Failed,
		OpenIssues: x.OpenIssues, PIIColumns: pii, BiasColumns: x.BiasColumns, Gaps: x.Gaps}
}

func (s *Server) handleArt10(w http.ResponseWriter, r *http.Request, _ *input) {
	d, err := s.deps.Compliance.Art10(r.Context())
	s.reply(w, r, err, func() any {
		out := Art10Out{Article: "EU AI Act Article 10", GeneratedAt: d.GeneratedAt, Datasets: []Art10DatasetOut{}, GapCounts: d.GapCounts}
		for _, x := range d.Datasets {
			out.Datasets = append(out.Datasets, toArt10DatasetOut(x))
		}
		return out
	})
}

// AISystemDatasetIn is one dataset a registered system uses.
type AISystemDatasetIn struct {
	DatasetID string `json:"dataset_id" minLength:"1" maxLength:"64"`
	Use       string `json:"use" enum:"training,validation,testing,retrieval,input"`
}

// AISystemIn registers an AI system.
type AISystemIn struct {
	Name            string              `json:"name" minLength:"1" maxLength:"200"`
	IntendedPurpose string              `json:"intended_purpose,omitempty" maxLength:"2000"`
	Provider        string              `json:"provider,omitempty" maxLength:"200"`
	RiskCategory    string              `json:"risk_category,omitempty" enum:"high,limited,minimal,unknown" doc:"EU AI Act risk category; unknown when absent"`
	Datasets        []AISystemDatasetIn `json:"datasets,omitempty" maxItems:"200" doc:"Datasets the system trains, is validated or tested on, retrieves from or takes as input; each must be visible to the caller (else 404)"`
}

// AISystemDatasetOut is one dataset of a system with its Article 10 facts.
type AISystemDatasetOut struct {
	Art10DatasetOut
	Uses    []string `json:"uses" doc:"training, validation, testing, retrieval, input"`
	Origins []string `json:"origins" doc:"registered, domain_consumer, consumption"`
	Via     []string `json:"via" doc:"domain:<domain_id> for a domain consumer, consumer:<kind> for recorded reads"`
}

// AISystemOut is one AI system of the register.
type AISystemOut struct {
	ID              string               `json:"id"`
	Name            string               `json:"name"`
	Registered      bool                 `json:"registered" doc:"Registered by a person; false for a system known only through its consumers"`
	Origins         []string             `json:"origins" doc:"registered; domain_consumer (a consumer of kind ai_system of a domain: the domain's datasets, use input); consumption (reads recorded through POST /trust/consumptions for purposes treino → training and rag → retrieval, last 90 days)"`
	IntendedPurpose string               `json:"intended_purpose"`
	Provider        string               `json:"provider"`
	RiskCategory    string               `json:"risk_category" enum:"high,limited,minimal,unknown"`
	CreatedAt       *time.Time           `json:"created_at" doc:"Null for a system known only through its consumers"`
	DatasetCount    int                  `json:"dataset_count" doc:"Datasets the caller can see"`
	HiddenDatasets  int                  `json:"hidden_datasets" doc:"Datasets of the system the caller cannot see (counted, never named)"`
	Datasets        []AISystemDatasetOut `json:"datasets,omitempty" doc:"In the detail only"`
	Gaps            []string             `json:"gaps" doc:"no_datasets, risk_not_classified, no_intended_purpose, datasets_not_visible, training_data_not_profiled"`
	GapCounts       map[string]int       `json:"gap_counts" doc:"The system's visible datasets per dataset gap code (as /art10)"`
}

// VerticalOut is a sector whose data rules Vigia maps to its checks.
type VerticalOut struct {
	Key          string `json:"key" enum:"saude_pt"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Requirements int    `json:"requirements"`
	ReportURL    string `json:"report_url" doc:"The Markdown report (business plan)"`
}

var systemIDParam = param{Name: "system_id", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) aiSystemRoutes() {
	planErr := map[int]string{http.StatusPaymentRequired: "plan_limit: the dossiers need the business plan (plan and limit in the body)"}
	s.register(operation{ID: "listAISystems", Method: http.MethodGet, Path: "/api/v1/compliance/ai-systems", Tag: "compliance",
		List: true, ListDefault: vigia.MaxLimit, Response: []AISystemOut{}, Errors: planErr,
		Summary: "The AI-system register of the EU AI Act dossier (business plan)",
		Desc: "Systems registered by a person and systems known through their consumers: domain consumers of kind ai_system " +
			"(the domain's datasets, use input) and consumers whose recorded reads were for training (treino) or retrieval (rag) " +
			"in the last 90 days. A consumer with the name of a registered system (case-insensitive) feeds that system. By name."},
		s.handleAISystemList)
	s.register(operation{ID: "getAISystem", Method: http.MethodGet, Path: "/api/v1/compliance/ai-systems/{system_id}", Tag: "compliance",
		Params: []param{systemIDParam}, Response: AISystemOut{}, Errors: planErr,
		Summary: "One AI system with the Article 10 facts of each dataset it uses (business plan)"}, s.handleAISystemGet)
	s.register(operation{ID: "registerAISystem", Method: http.MethodPost, Path: "/api/v1/compliance/ai-systems", Tag: "compliance",
		Body: AISystemIn{}, Response: AISystemOut{}, Status: http.StatusCreated,
		Errors:  map[int]string{http.StatusPaymentRequired: planErr[http.StatusPaymentRequired], http.StatusConflict: "ai_system_exists: a system of this name is registered"},
		Summary: "Register an AI system and the datasets it uses (member or admin session; business plan)"}, s.handleAISystemRegister)
	s.register(operation{ID: "deleteAISystem", Method: http.MethodDelete, Path: "/api/v1/compliance/ai-systems/{system_id}", Tag: "compliance",
		Params: []param{systemIDParam}, Status: http.StatusNoContent, Errors: planErr,
		Summary: "Remove a registered AI system (admin session); a system known through its consumers stays while they do"}, s.handleAISystemDelete)
	s.register(operation{ID: "listComplianceVerticals", Method: http.MethodGet, Path: "/api/v1/compliance/verticals", Tag: "compliance",
		List: true, ListDefault: vigia.MaxLimit, Response: []VerticalOut{},
		Summary: "Sectors whose data rules Vigia maps to its checks (for now saude_pt)"}, s.handleVerticalList)
	s.register(operation{ID: "complianceVerticalReport", Method: http.MethodGet, Path: "/api/v1/compliance/verticals/{vertical_key}/report.md", Tag: "compliance",
		Params:      []param{{Name: "vertical_key", In: "path", Type: "string", Required: true, MaxLen: 64}},
		ContentType: "text/markdown", Errors: planErr,
		Summary: "A vertical's requirements mapped to Vigia's checks, each Coberto, Parcial, Em falta or Não aplicável with its evidence (business plan)",
		Desc: "Judged on the datasets the caller can see, from Vigia's facts (profiles and semantic types, rules and results, data " +
			"policies and violations, lineage, domains and restricted access, data country, scan recency). Written in Portuguese, " +
			"like the statuses; deterministic, no language model (ai-generated: false). An unknown key is 404."}, s.handleVerticalReport)
}

func toAISystemOut(x compliance.AISystem, detail bool) AISystemOut {
	out := AISystemOut{ID: x.ID, Name: x.Name, Registered: x.Registered, Origins: x.Origins, IntendedPurpose: x.IntendedPurpose,
		Provider: x.Provider, RiskCategory: x.RiskCategory, CreatedAt: x.CreatedAt, DatasetCount: len(x.Datasets),
		HiddenDatasets: x.HiddenDatasets, Gaps: x.Gaps, GapCounts: x.GapCounts}
	if out.Origins == nil {
		out.Origins = []string{}
	}
	if detail {
		out.Datasets = []AISystemDatasetOut{}
		for _, d := range x.Datasets {
			via := d.Via
			if via == nil {
				via = []string{}
			}
			out.Datasets = append(out.Datasets, AISystemDatasetOut{Art10DatasetOut: toArt10DatasetOut(d.Dataset), Uses: d.Uses, Origins: d.Origins, Via: via})
		}
	}
	return out
}

func (s *Server) handleAISystemList(w http.ResponseWriter, r *http.Request, in *input) {
	l, err := s.deps.Compliance.AISystems(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]AISystemOut, 0, len(l.Items))
	for _, x := range l.Items {
		out = append(out, toAISystemOut(x, false))
	}
	list(w, l.Total, out)
}

func (s *Server) handleAISystemGet(w http.ResponseWriter, r *http.Request, in *input) {
	x, err := s.deps.Compliance.AISystem(r.Context(), in.Path("system_id"))
	s.reply(w, r, err, func() any { return toAISystemOut(x, true) })
}

func (s *Server) handleAISystemRegister(w http.ResponseWriter, r *http.Request, in *input) {
	var body AISystemIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	ai := compliance.AISystemInput{Name: body.Name, IntendedPurpose: body.IntendedPurpose, Provider: body.Provider, RiskCategory: body.RiskCategory}
	for _, d := range body.Datasets {
		ai.Datasets = append(ai.Datasets, compliance.DatasetUse{DatasetID: d.DatasetID, Use: d.Use})
	}
	x, err := s.deps.Compliance.RegisterAISystem(r.Context(), ai)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toAISystemOut(x, true))
}

func (s *Server) handleAISystemDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Compliance.DeleteAISystem(r.Context(), in.Path("system_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleVerticalList(w http.ResponseWriter, r *http.Request, in *input) {
	vs, err := s.deps.Compliance.Verticals(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := in.Page().Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]VerticalOut, 0, len(vs))
	for _, v := range vs {
		out = append(out, VerticalOut{Key: v.Key, Name: v.Name, Description: v.Description, Requirements: v.Requirements,
			ReportURL: "/api/v1/compliance/verticals/" + v.Key + "/report.md"})
	}
	p := in.Page()
	total := len(out)
	out = out[min(p.Offset, total):min(p.Offset+p.Limit, total)]
	list(w, total, out)
}

func (s *Server) handleVerticalReport(w http.ResponseWriter, r *http.Request, in *input) {
	rep, err := s.deps.Compliance.VerticalReport(r.Context(), in.Path("vertical_key"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(rep.Markdown()))
}
