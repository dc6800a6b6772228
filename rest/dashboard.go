package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/dashboard"
	"github.com/vigia-data/vigia/finops"
)

// ShareOut is a count with its share of the visible datasets.
type ShareOut struct {
	Count int      `json:"count"`
	Pct   *float64 `json:"pct" doc:"Percent of the visible datasets, one decimal; null when there is none"`
}

// CoverageOut is how much of the catalog is governed.
type CoverageOut struct {
	Datasets              int      `json:"datasets" doc:"Live datasets the caller can see"`
	Profiled              ShareOut `json:"profiled"`
	WithOwner             ShareOut `json:"with_owner" doc:"In a domain that has an owner"`
	WithDomain            ShareOut `json:"with_domain"`
	WithRules             ShareOut `json:"with_rules"`
	WithContract          ShareOut `json:"with_contract" doc:"With an accepted contract version"`
	SensitivityClassified ShareOut `json:"sensitivity_classified" doc:"With at least one column whose sensitivity a person set (automatic levels apply to every profiled column)"`
}

// IssueFlowOut is the issues of the period and the backlog now.
type IssueFlowOut struct {
	Opened       int `json:"opened" doc:"Opened in the period"`
	Resolved     int `json:"resolved" doc:"Resolved in the period"`
	Ignored      int `json:"ignored" doc:"Ignored in the period"`
	OpenNow      int `json:"open_now" doc:"Open or acknowledged now"`
	OpenCritical int `json:"open_critical"`
	OpenWarning  int `json:"open_warning"`
	OpenBreached int `json:"open_sla_breached" doc:"Open past their severity's resolution target"`
}

// SLAAttainmentOut is the attainment of resolution targets.
type SLAAttainmentOut struct {
	ClosedInScope int      `json:"closed_in_scope" doc:"Issues resolved in the period (ignored ones are not in scope)"`
	Met           int      `json:"met" doc:"Of those, resolved before their target passed"`
	Breached      int      `json:"breached"`
	AttainmentPct *float64 `json:"attainment_pct" doc:"met / closed_in_scope in percent; null when nothing was closed"`
}

// GovernanceMetricsOut is the governance metrics.
type GovernanceMetricsOut struct {
	AsOf       time.Time        `json:"as_of"`
	PeriodDays int              `json:"period_days"`
	Coverage   CoverageOut      `json:"coverage"`
	IssueFlow  IssueFlowOut     `json:"issue_flow"`
	SLA        SLAAttainmentOut `json:"sla"`
}

// ExecutiveDashboardOut is the executive dashboard.
type ExecutiveDashboardOut struct {
	AsOf                  time.Time      `json:"as_of"`
	PeriodDays            int            `json:"period_days"`
	Datasets              int            `json:"datasets"`
	MeanScore             *float64       `json:"mean_score" doc:"Mean latest score of the visible datasets; null before any score"`
	Verdicts              map[string]int `json:"verdicts" doc:"Visible datasets per last verdict (pass, warn, fail, unknown)"`
	OpenIncidentsCritical int            `json:"open_incidents_critical"`
	OpenIncidentsWarning  int            `json:"open_incidents_warning"`
	SLAAttainmentPct      *float64       `json:"sla_attainment_pct"`
	Reads                 int            `json:"reads" doc:"Dataset reads recorded by consumers in the period"`
	UntrustedReads        int            `json:"untrusted_reads" doc:"Of those, with decision untrusted"`
	LLMCostEUR            float64        `json:"llm_cost_eur" doc:"Always 0: Vigia calls no language model"`
	LLMCost               MoneyOut       `json:"llm_cost"`
	Currency              string         `json:"currency" enum:"EUR,USD,GBP,CHF,BRL"`
	FX                    *FXOut         `json:"fx" doc:"The rate amounts were converted with (latest loaded on or before today); null for EUR or without a rate"`
}

// ManagementDashboardOut is the management dashboard.
type ManagementDashboardOut struct {
	AsOf       time.Time        `json:"as_of"`
	PeriodDays int              `json:"period_days"`
	Coverage   CoverageOut      `json:"coverage"`
	IssueFlow  IssueFlowOut     `json:"issue_flow"`
	SLA        SLAAttainmentOut `json:"sla"`
	LLMCostEUR float64          `json:"llm_cost_eur" doc:"Always 0: Vigia calls no language model"`
	LLMCost    MoneyOut         `json:"llm_cost"`
	Currency   string           `json:"currency" enum:"EUR,USD,GBP,CHF,BRL"`
	FX         *FXOut           `json:"fx"`
}

// FinopsDashboardOut is the finops dashboard.
type FinopsDashboardOut struct {
	AsOf     time.Time          `json:"as_of"`
	Currency string             `json:"currency" enum:"EUR,USD,GBP,CHF,BRL"`
	FX       *FXOut             `json:"fx"`
	Totals   ChargebackRowOut   `json:"totals" doc:"The last 365 days of the workspace (month empty)"`
	Months   []ChargebackRowOut `json:"months" doc:"The workspace's chargeback rows of the last 365 days"`
	Domains  []ChargebackRowOut `json:"domains" doc:"The current month's domain rows (and the no-domain row)"`
}

var daysParam = param{Name: "days", In: "query", Type: "integer", Min: intp(1), Max: intp(dashboard.MaxDays), Default: dashboard.DefaultDays,
	Desc: "The period, ending now"}

func (s *Server) dashboardRoutes() {
	s.register(operation{ID: "getGovernanceMetrics", Method: http.MethodGet, Path: "/api/v1/governance/metrics", Tag: "governance",
		Params: []param{daysParam}, Response: GovernanceMetricsOut{},
		Summary: "Governance metrics of the visible datasets: coverage (owner, domain, rules, contract, sensitivity), issue flow, SLA attainment"},
		s.handleGovernanceMetrics)
	s.register(operation{ID: "getExecutiveDashboard", Method: http.MethodGet, Path: "/api/v1/dashboard/executive", Tag: "dashboard",
		Params: []param{daysParam}, Response: ExecutiveDashboardOut{},
		Summary: "Executive dashboard: mean score, verdicts, open incidents, SLA attainment, consumers' reads, costs in the workspace currency"},
		s.handleExecutiveDashboard)
	s.register(operation{ID: "getManagementDashboard", Method: http.MethodGet, Path: "/api/v1/dashboard/management", Tag: "dashboard",
		Params: []param{daysParam}, Response: ManagementDashboardOut{},
		Summary: "Management dashboard: coverage, issue flow, SLA attainment, costs in the workspace currency"},
		s.handleManagementDashboard)
	s.register(operation{ID: "getFinopsDashboard", Method: http.MethodGet, Path: "/api/v1/dashboard/finops", Tag: "dashboard",
		Response: FinopsDashboardOut{},
		Summary:  "Finops dashboard: the chargeback of the last 365 days by month, this month's domains, totals, in the workspace currency"},
		s.handleFinopsDashboard)
}

func toGovernanceParts(g dashboard.Governance) (CoverageOut, IssueFlowOut, SLAAttainmentOut) {
	sh := func(x dashboard.Share) ShareOut { return ShareOut{Count: x.Count, Pct: x.Pct} }
	c := g.Coverage
	return CoverageOut{Datasets: c.Datasets, Profiled: sh(c.Profiled), WithOwner: sh(c.WithOwner), WithDomain: sh(c.WithDomain),
			WithRules: sh(c.WithRules), WithContract: sh(c.WithContract), SensitivityClassified: sh(c.SensitivityRev)},
		IssueFlowOut{Opened: g.IssueFlow.Opened, Resolved: g.IssueFlow.Resolved, Ignored: g.IssueFlow.Ignored, OpenNow: g.IssueFlow.OpenNow,
			OpenCritical: g.IssueFlow.OpenCritical, OpenWarning: g.IssueFlow.OpenWarning, OpenBreached: g.IssueFlow.OpenBreached},
		SLAAttainmentOut{ClosedInScope: g.SLA.ClosedInScope, Met: g.SLA.Met, Breached: g.SLA.Breached, AttainmentPct: g.SLA.AttainmentPct}
}

func (s *Server) handleGovernanceMetrics(w http.ResponseWriter, r *http.Request, in *input) {
	g, err := s.deps.Dashboards.Governance(r.Context(), in.OptInt("days"))
	s.reply(w, r, err, func() any {
		c, f, sla := toGovernanceParts(g)
		return GovernanceMetricsOut{AsOf: g.AsOf, PeriodDays: g.PeriodDays, Coverage: c, IssueFlow: f, SLA: sla}
	})
}

func (s *Server) handleExecutiveDashboard(w http.ResponseWriter, r *http.Request, in *input) {
	e, err := s.deps.Dashboards.Executive(r.Context(), in.OptInt("days"))
	s.reply(w, r, err, func() any {
		return ExecutiveDashboardOut{AsOf: e.AsOf, PeriodDays: e.PeriodDays, Datasets: e.Coverage.Datasets, MeanScore: e.MeanScore,
			Verdicts: e.Verdicts, OpenIncidentsCritical: e.OpenIncidentsCritical, OpenIncidentsWarning: e.OpenIncidentsWarning,
			SLAAttainmentPct: e.SLA.AttainmentPct, Reads: e.Reads, UntrustedReads: e.UntrustedReads, LLMCostEUR: e.LLMCostEUR,
			LLMCost: toMoneyOut(e.LLMCost), Currency: e.LLMCost.Currency, FX: toFXOut(e.LLMCost.FX)}
	})
}

func (s *Server) handleManagementDashboard(w http.ResponseWriter, r *http.Request, in *input) {
	e, err := s.deps.Dashboards.Executive(r.Context(), in.OptInt("days"))
	s.reply(w, r, err, func() any {
		c, f, sla := toGovernanceParts(e.Governance)
		return ManagementDashboardOut{AsOf: e.AsOf, PeriodDays: e.PeriodDays, Coverage: c, IssueFlow: f, SLA: sla, LLMCostEUR: e.LLMCostEUR,
			LLMCost: toMoneyOut(e.LLMCost), Currency: e.LLMCost.Currency, FX: toFXOut(e.LLMCost.FX)}
	})
}

func (s *Server) handleFinopsDashboard(w http.ResponseWriter, r *http.Request, _ *input) {
	d, err := s.deps.Finops.FinopsDashboard(r.Context())
	s.reply(w, r, err, func() any {
		out := FinopsDashboardOut{AsOf: d.AsOf, Currency: d.Currency, FX: toFXOut(d.FX), Totals: toChargebackRowOut(d.Totals),
			Months: []ChargebackRowOut{}, Domains: []ChargebackRowOut{}}
		for _, x := range d.Months {
			out.Months = append(out.Months, toChargebackRowOut(x))
		}
		for _, x := range d.Domains {
			out.Domains = append(out.Domains, toChargebackRowOut(x))
		}
		return out
	})
}

func toChargebackRowOut(x finops.Row) ChargebackRowOut {
	return ChargebackRowOut{Month: x.Month, Dimension: x.Dimension, WorkspaceID: x.WorkspaceID, WorkspaceName: x.WorkspaceName,
		EntityID: x.EntityID, EntityName: x.EntityName, Scans: x.Scans, Datasets: x.Datasets, Reports: x.Reports,
		LLMTokens: x.LLMTokens, LLMTokensBYOK: x.LLMTokensBYOK, LLMCostUSD: x.LLMCostUSD, LLMCostEUR: x.LLMCostEUR,
		LLMCost: toMoneyOut(x.Money), FX: toFXOut(x.Money.FX), Currency: x.Money.Currency, ProfileBytes: x.ProfileBytes}
}
