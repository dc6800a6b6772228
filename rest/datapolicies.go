package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/datapolicy"
)

// DataPolicyRule is one rule of a data policy.
type DataPolicyRule struct {
	Rule       string `json:"rule" enum:"pii_retention_max_age" doc:"pii_retention_max_age: a dataset holding personal data keeps no record older than max_age_days"`
	Enabled    *bool  `json:"enabled,omitempty" doc:"Default true; a disabled rule resolves its violations at the next scan"`
	MaxAgeDays *int   `json:"max_age_days,omitempty" doc:"Required by pii_retention_max_age (no default): 1-36500 days"`
	Severity   string `json:"severity,omitempty" enum:"warning,critical" doc:"Severity of the violations and their issues (default warning)"`
	Column     string `json:"column,omitempty" maxLength:"128" doc:"The temporal column that dates a record; default every temporal column holding no personal data"`
}

// DataPolicyOut is the workspace's or a domain's data policy.
type DataPolicyOut struct {
	Scope     string           `json:"scope" enum:"workspace,domain"`
	DomainID  *string          `json:"domain_id"`
	Rules     []DataPolicyRule `json:"rules"`
	UpdatedAt *time.Time       `json:"updated_at" doc:"null when never set"`
}

// DataPolicyIn replaces a policy's rules.
type DataPolicyIn struct {
	Rules []DataPolicyRule `json:"rules" maxItems:"20"`
}

func (s *Server) dataPolicyRoutes() {
	s.register(operation{ID: "getWorkspaceDataPolicy", Method: http.MethodGet, Path: "/api/v1/workspace/data-policy", Tag: "workspace",
		Summary: "The workspace's data policy", Response: DataPolicyOut{}}, s.handleDataPolicyGet)
	s.register(operation{ID: "putWorkspaceDataPolicy", Method: http.MethodPut, Path: "/api/v1/workspace/data-policy", Tag: "workspace",
		Summary: "Replace the workspace's data policy (admin session); evaluated at every scan", Body: DataPolicyIn{},
		Response: DataPolicyOut{}}, s.handleDataPolicyPut)
	s.register(operation{ID: "getDomainDataPolicy", Method: http.MethodGet, Path: "/api/v1/domains/{domain_id}/data-policy", Tag: "governance",
		Summary: "A domain's data policy: its rules replace the workspace's of the same key for its datasets",
		Params:  []param{domainIDParam}, Response: DataPolicyOut{}}, s.handleDataPolicyGet)
	s.register(operation{ID: "putDomainDataPolicy", Method: http.MethodPut, Path: "/api/v1/domains/{domain_id}/data-policy", Tag: "governance",
		Summary: "Replace a domain's data policy (admin session)", Params: []param{domainIDParam}, Body: DataPolicyIn{},
		Response: DataPolicyOut{}}, s.handleDataPolicyPut)
}

func toDataPolicyOut(p datapolicy.Policy) DataPolicyOut {
	out := DataPolicyOut{Scope: "workspace", DomainID: p.DomainID, Rules: []DataPolicyRule{}, UpdatedAt: p.UpdatedAt}
	if p.DomainID != nil {
		out.Scope = "domain"
	}
	for _, r := range p.Rules {
		enabled := r.Enabled
		out.Rules = append(out.Rules, DataPolicyRule{Rule: r.Key, Enabled: &enabled, MaxAgeDays: r.MaxAgeDays, Severity: r.Severity, Column: r.Column})
	}
	return out
}

func (s *Server) handleDataPolicyGet(w http.ResponseWriter, r *http.Request, in *input) {
	domainID := in.Path("domain_id")
	if domainID != "" && !validID(domainID) {
		s.writeError(w, r, notFound())
		return
	}
	p, err := s.deps.DataPolicies.Policy(r.Context(), domainID)
	s.reply(w, r, err, func() any { return toDataPolicyOut(p) })
}

func (s *Server) handleDataPolicyPut(w http.ResponseWriter, r *http.Request, in *input) {
	domainID := in.Path("domain_id")
	if domainID != "" && !validID(domainID) {
		s.writeError(w, r, notFound())
		return
	}
	var body DataPolicyIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := required(present("rules", body.Rules != nil)); err != nil {
		s.writeError(w, r, err)
		return
	}
	rules := make([]datapolicy.Rule, 0, len(body.Rules))
	for _, b := range body.Rules {
		enabled := b.Enabled == nil || *b.Enabled
		rules = append(rules, datapolicy.Rule{Key: b.Rule, Enabled: enabled, MaxAgeDays: b.MaxAgeDays, Severity: b.Severity, Column: b.Column})
	}
	p, err := s.deps.DataPolicies.SetPolicy(r.Context(), domainID, rules)
	s.reply(w, r, err, func() any { return toDataPolicyOut(p) })
}
