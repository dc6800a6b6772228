package rest

import (
	"net/http"
	"time"
)

// Art10DatasetOut is one dataset of the Article 10 dossier.
type Art10DatasetOut struct {
	DatasetID      string   `json:"dataset_id"`
	DatasetName    string   `json:"dataset_name"`
	ConnectionID   string   `json:"connection_id"`
	ConnectionName string   `json:"connection_name"`
	SourceKind     string   `json:"source_kind" doc:"postgres, mysql or sqlite"`
	DataCountry    *string  `json:"data_country" doc:"Where the data lives (ISO 3166-1 alpha-2), when known"`
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
	s.register(operation{ID: "getArt10Dossier", Method: http.MethodGet, Path: "/api/v1/compliance/art10", Tag: "workspace",
		Summary:  "EU AI Act Article 10 data-governance dossier of the visible datasets (business plan)",
		Desc:     "Data sources and lineage, quality measures and their last results, personal and bias-relevant columns (names only) and gaps, from Vigia's own facts.",
		Response: Art10Out{}, Errors: map[int]string{http.StatusPaymentRequired: "plan_limit: the dossiers need the business plan (plan and limit in the body)"}},
		s.handleArt10)
}

func (s *Server) handleArt10(w http.ResponseWriter, r *http.Request, _ *input) {
	d, err := s.deps.Compliance.Art10(r.Context())
	s.reply(w, r, err, func() any {
		out := Art10Out{Article: "EU AI Act Article 10", GeneratedAt: d.GeneratedAt, Datasets: []Art10DatasetOut{}, GapCounts: d.GapCounts}
		for _, x := range d.Datasets {
			doms := x.Domains
			if doms == nil {
				doms = []string{}
			}
			pii := x.PIIColumns
			if pii == nil {
				pii = []string{}
			}
			out.Datasets = append(out.Datasets, Art10DatasetOut{DatasetID: x.ID, DatasetName: x.Name, ConnectionID: x.ConnectionID,
				ConnectionName: x.ConnectionName, SourceKind: x.ConnectionKind, DataCountry: x.DataCountry, UpstreamCount: x.Upstream,
				Domains: doms, Score: x.Score, Verdict: x.Verdict, Rules: x.RuleCount, RulesPassed: x.Passed, RulesFailed: x.Failed,
				OpenIssues: x.OpenIssues, PIIColumns: pii, BiasColumns: x.BiasColumns, Gaps: x.Gaps})
		}
		return out
	})
}
