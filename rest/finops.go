package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/finops"
)

// MoneyOut is an amount in the workspace currency.
type MoneyOut struct {
	Amount   *float64 `json:"amount" doc:"Null when the workspace currency is not EUR and the operator loaded no rate for it"`
	Currency string   `json:"currency" enum:"EUR,USD,GBP,CHF,BRL"`
}

// FXOut is the exchange rate an amount was converted with.
type FXOut struct {
	Base     string  `json:"base" enum:"EUR"`
	Currency string  `json:"currency" enum:"USD,GBP,CHF,BRL"`
	Rate     float64 `json:"rate" doc:"Units of currency for one euro"`
	RateDate string  `json:"rate_date" format:"date" doc:"The day of the rate: the latest the operator loaded on or before the month's last day (or today)"`
}

// ChargebackRowOut is one chargeback row.
type ChargebackRowOut struct {
	Month         string   `json:"month" doc:"YYYY-MM, the month in the workspace's time zone (GET /workspace/locale)"`
	Dimension     string   `json:"dimension" enum:"workspace,domain"`
	WorkspaceID   string   `json:"workspace_id"`
	WorkspaceName string   `json:"workspace_name"`
	EntityID      *string  `json:"entity_id" doc:"The workspace or the domain; null for the share of datasets in no domain (so the domain rows of a month add up to its workspace row)"`
	EntityName    *string  `json:"entity_name"`
	Scans         float64  `json:"scans" doc:"Dataset scans: one per dataset a scan profiled; a dataset in n domains counts 1/n in each"`
	Datasets      float64  `json:"datasets" doc:"Datasets profiled in the month; a dataset in n domains counts 1/n in each"`
	Reports       float64  `json:"reports" doc:"Reports written in the month: domain reports count for their domain, dataset reports share like their dataset, workspace overviews and incident reviews count in the no-domain row"`
	LLMTokens     int64    `json:"llm_tokens" doc:"Always 0: Vigia calls no language model"`
	LLMTokensBYOK int64    `json:"llm_tokens_byok" doc:"Always 0: Vigia calls no language model"`
	LLMCostUSD    float64  `json:"llm_cost_usd" doc:"Always 0: Vigia calls no language model"`
	LLMCostEUR    float64  `json:"llm_cost_eur" doc:"Always 0: Vigia calls no language model"`
	LLMCost       MoneyOut `json:"llm_cost" doc:"llm_cost_eur in the workspace currency"`
	FX            *FXOut   `json:"fx" doc:"The rate llm_cost was converted with; null for EUR or when no rate is loaded"`
	Currency      string   `json:"currency" enum:"EUR,USD,GBP,CHF,BRL" doc:"The workspace currency"`
	ProfileBytes  float64  `json:"profile_bytes" doc:"Bytes of the values the month's profiles read: per column, non-null values × the type's storage size (integer 4, bigint 8, timestamp 8, date 4, boolean 1...) or × the mean length in characters for text; profiles written before version 1.88.0 count 0"`
}

func (s *Server) finopsRoutes() {
	s.register(operation{ID: "getChargeback", Method: http.MethodGet, Path: "/api/v1/bi/chargeback", Tag: "bi",
		List: true, ListDefault: finops.PageDefault, Response: []ChargebackRowOut{},
		Errors:  map[int]string{http.StatusNotFound: "domain_id names no domain the caller can see"},
		Summary: "Chargeback of Vigia's work per month: the workspace and its domains",
		Desc: "Per month (in the workspace's time zone), one workspace row, one row per visible domain with activity and one row (entity_id null) for datasets " +
			"in no domain. Computed from Vigia's own records: the profiles its scans wrote (with the bytes each read) and the reports it " +
			"wrote. A dataset in several domains counts in equal shares in each (half in each of two). Only datasets the caller can see " +
			"count. Default period: the last 365 days.",
		Params: []param{
			{Name: "domain_id", In: "query", Type: "string", MaxLen: 64, Desc: "Only this domain's rows; a domain the caller cannot see answers 404"},
			{Name: "days", In: "query", Type: "integer", Min: intp(1), Max: intp(finops.MaxDays), Default: finops.DefaultDays, Desc: "The period, ending now"},
		}}, s.handleChargeback)
}

func (s *Server) handleChargeback(w http.ResponseWriter, r *http.Request, in *input) {
	l, err := s.deps.Finops.Chargeback(r.Context(), finops.ChargebackFilter{DomainID: in.String("domain_id"), Days: in.OptInt("days"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ChargebackRowOut, 0, len(l.Items))
	for _, x := range l.Items {
		out = append(out, toChargebackRowOut(x))
	}
	list(w, l.Total, out)
}

func toMoneyOut(m finops.Money) MoneyOut { return MoneyOut{Amount: m.Amount, Currency: m.Currency} }

func toFXOut(r *finops.Rate) *FXOut {
	if r == nil {
		return nil
	}
	return &FXOut{Base: finops.Base, Currency: r.Currency, Rate: r.PerEUR, RateDate: r.Date.UTC().Format(time.DateOnly)}
}
