// Package finops answers what Vigia's work costs and to whom: the chargeback rows per
// month (the workspace and its domains; a dataset in several domains counts in equal
// shares in each) from Vigia's own records (the profiles its scans wrote, with the bytes
// each read, and the reports it wrote), and money in the workspace's currency through the
// exchange rates the operator loads (no network call ever fetches a rate).
//
// Vigia calls no language model: the llm_* figures of the contract are always 0.
package finops

import (
	"context"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Dimensions of a chargeback row.
const (
	DimensionWorkspace = "workspace"
	DimensionDomain    = "domain"
)

// Chargeback defaults and bounds.
const (
	DefaultDays = 365
	MaxDays     = 1096
	PageDefault = 500
)

// Currencies the workspace may use; EUR is the base of every rate.
var Currencies = []string{"EUR", "USD", "GBP", "CHF", "BRL"}

// Base is the currency every *_eur figure is in.
const Base = "EUR"

// ProfileUse is what one dataset's profiles of one month read while the dataset belonged
// to one set of domains (a dataset that changed domains in the month has one ProfileUse
// per set).
type ProfileUse struct {
	Month     string // YYYY-MM in the workspace's time zone
	DatasetID string
	// Domains are the ids of the domains the dataset belonged to when these profiles
	// were written (from the membership history), none for no domain.
	Domains  []string
	Profiles int
	Bytes    int64
}

// DomainRef is a domain a dataset belongs to; Visible says whether the caller may see it.
type DomainRef struct {
	ID, Name string
	Visible  bool
}

// ReportUse is one report written in the period.
type ReportUse struct {
	Month string
	// DomainID is the subject of a domain report, DatasetID of a dataset report; both ""
	// for workspace overviews and incident reviews (they count for the workspace only).
	DomainID, DatasetID string
	// DatasetDomains are the domains a dataset report's dataset belonged to when the
	// report was written.
	DatasetDomains []string
}

// Facts are the records the chargeback is computed from.
type Facts struct {
	WorkspaceName string
	Profiles      []ProfileUse
	Reports       []ReportUse
	// Domains are the workspace's domains by id.
	Domains map[string]DomainRef
}

// Rate is one loaded exchange rate: PerEUR units of Currency for one euro on Date.
type Rate struct {
	Currency string
	Date     time.Time
	PerEUR   float64
}

// Store reads the records.
type Store interface {
	// ChargebackFacts reads the profiles of the datasets v can see and the reports v can
	// read, written at or after since, their months taken in loc.
	ChargebackFacts(ctx context.Context, v catalog.Viewer, since time.Time, loc *time.Location) (Facts, error)
	// TimeZone is the workspace's time zone (IANA name).
	TimeZone(ctx context.Context, workspaceID string) (string, error)
	// DomainVisible reports whether the domain exists in v's workspace and v can see it.
	DomainVisible(ctx context.Context, v catalog.Viewer, domainID string) (bool, error)
	// WorkspaceCurrency is the workspace's currency, nil when none is set (EUR).
	WorkspaceCurrency(ctx context.Context, workspaceID string) (*string, error)
	// RateOn is the latest loaded rate of currency on or before day; nil when none.
	RateOn(ctx context.Context, currency string, day time.Time) (*Rate, error)
	// SaveRates inserts or replaces rates.
	SaveRates(ctx context.Context, rates []Rate, at time.Time) error
}

// Row is one chargeback row. Scans counts dataset scans (one per dataset a scan
// profiled); Datasets the datasets profiled; shared datasets count 1/n in each of their
// n domains, so these figures may have fractions.
type Row struct {
	Month                      string
	Dimension                  string
	WorkspaceID, WorkspaceName string
	// EntityID and EntityName are the workspace or the domain; nil for the share of
	// datasets in no domain (dimension domain), so the domain rows add up to the
	// workspace row.
	EntityID, EntityName *string
	Scans, Datasets      float64
	Reports              float64
	ProfileBytes         float64
	LLMTokens            int64
	LLMTokensBYOK        int64
	LLMCostUSD           float64
	LLMCostEUR           float64
	// Money is LLMCostEUR in the workspace currency.
	Money Money
}

// Money is an amount in the workspace currency converted from euros, with the rate used.
type Money struct {
	// Currency is the workspace's currency.
	Currency string
	// Amount is nil when the currency is not EUR and no rate is loaded for it.
	Amount *float64
	// FX is the rate used; nil for EUR.
	FX *Rate
}

// ChargebackFilter selects rows.
type ChargebackFilter struct {
	// DomainID keeps only that domain's rows.
	DomainID *string
	// Days is the period ending now (DefaultDays when nil).
	Days *int
	Page vigia.Page
}

// Service computes chargeback and converts money.
type Service struct {
	store Store
	clock vigia.Clock
}

// NewService returns the finops service.
func NewService(store Store, clock vigia.Clock) *Service {
	return &Service{store: store, clock: clock}
}

// Chargeback lists the rows of the months in the period, oldest month first, the
// workspace row before its domains' (by name; the share of datasets in no domain last).
// It returns KindInvalid for a bad days or page, KindNotFound for a domain_id that is no
// domain the caller can see.
func (s *Service) Chargeback(ctx context.Context, f ChargebackFilter) (vigia.List[Row], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Row]{}, err
	}
	days := DefaultDays
	if f.Days != nil {
		days = *f.Days
	}
	if days < 1 {
		return vigia.List[Row]{}, vigia.Invalid(vigia.Field("greater_than_equal", map[string]any{"ge": 1}, "days"))
	}
	if days > MaxDays {
		return vigia.List[Row]{}, vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"le": MaxDays}, "days"))
	}
	if err := f.Page.Validate(); err != nil {
		return vigia.List[Row]{}, err
	}
	rows, _, err := s.rows(ctx, p, days, f.DomainID)
	if err != nil {
		return vigia.List[Row]{}, err
	}
	out := vigia.List[Row]{Total: len(rows), Items: []Row{}}
	if f.Page.Offset < len(rows) {
		end := min(f.Page.Offset+f.Page.Limit, len(rows))
		out.Items = rows[f.Page.Offset:end]
	}
	return out, nil
}

// Compute turns the records into rows: per month, the workspace row, then one row per
// visible domain with activity, then the share of datasets in no domain. A dataset in n
// domains gives 1/n of its dataset scans, of itself, of its bytes and of its reports to
// each (a domain the caller cannot see keeps its share, unshown). Memberships are those
// of the time of the cost: each profile and dataset report counts in the domains its
// dataset belonged to when it was written. A dataset that changed domains within a month
// counts once in the workspace row, split between its memberships of the month in
// proportion to its profiles under each. Reports about a domain count for it; workspace
// overviews and incident reviews count in the no-domain share.
func Compute(workspaceID string, f Facts) []Row {
	type acc struct {
		scans, datasets, reports, bytes float64
	}
	type key struct{ month, domain string } // domain "" = no domain; "*" = the workspace
	accs := map[key]*acc{}
	get := func(k key) *acc {
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		return a
	}
	shares := func(ids []string) ([]string, float64) {
		if len(ids) == 0 {
			return []string{""}, 1
		}
		return ids, 1 / float64(len(ids))
	}
	type monthDataset struct{ month, dataset string }
	profiles := map[monthDataset]int{} // a dataset's profiles of the month, all memberships
	for _, u := range f.Profiles {
		profiles[monthDataset{u.Month, u.DatasetID}] += u.Profiles
	}
	for _, u := range f.Profiles {
		// The part of the month's dataset this membership carries.
		part := 1.0
		if n := profiles[monthDataset{u.Month, u.DatasetID}]; n > 0 {
			part = float64(u.Profiles) / float64(n)
		}
		w := get(key{u.Month, "*"})
		w.scans += float64(u.Profiles)
		w.datasets += part
		w.bytes += float64(u.Bytes)
		ids, share := shares(u.Domains)
		for _, id := range ids {
			a := get(key{u.Month, id})
			a.scans += float64(u.Profiles) * share
			a.datasets += part * share
			a.bytes += float64(u.Bytes) * share
		}
	}
	for _, r := range f.Reports {
		get(key{r.Month, "*"}).reports++
		switch {
		case r.DomainID != "":
			get(key{r.Month, r.DomainID}).reports++
		case r.DatasetID != "":
			ids, share := shares(r.DatasetDomains)
			for _, id := range ids {
				get(key{r.Month, id}).reports += share
			}
		default:
			get(key{r.Month, ""}).reports++
		}
	}
	keys := make([]key, 0, len(accs))
	for k := range accs {
		if k.domain == "*" || k.domain == "" || f.Domains[k.domain].Visible {
			keys = append(keys, k)
		}
	}
	rank := func(k key) (int, string) {
		switch k.domain {
		case "*":
			return 0, ""
		case "":
			return 2, ""
		}
		return 1, f.Domains[k.domain].Name + "\x00" + k.domain
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].month != keys[j].month {
			return keys[i].month < keys[j].month
		}
		ri, ni := rank(keys[i])
		rj, nj := rank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return ni < nj
	})
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		a := accs[k]
		r := Row{Month: k.month, WorkspaceID: workspaceID, WorkspaceName: f.WorkspaceName,
			Scans: round6(a.scans), Datasets: round6(a.datasets), Reports: round6(a.reports), ProfileBytes: round6(a.bytes)}
		switch k.domain {
		case "*":
			r.Dimension, r.EntityID, r.EntityName = DimensionWorkspace, ptr(workspaceID), ptr(f.WorkspaceName)
		case "":
			r.Dimension = DimensionDomain
		default:
			r.Dimension, r.EntityID, r.EntityName = DimensionDomain, ptr(k.domain), ptr(f.Domains[k.domain].Name)
		}
		rows = append(rows, r)
	}
	return rows
}

// Currency is the workspace's currency (EUR when none is set) with the latest loaded rate
// to it on or before now (nil for EUR).
func (s *Service) Currency(ctx context.Context) (string, *Rate, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return "", nil, err
	}
	cur, err := s.currency(ctx, p.WorkspaceID)
	if err != nil {
		return "", nil, err
	}
	rate, err := s.rateFor(ctx, cur, s.clock.Now().UTC())
	return cur, rate, err
}

// LoadRates stores rates the operator supplies (units of the currency for one euro). It
// returns KindInvalid for an unknown currency, EUR itself, or a rate that is not positive.
func (s *Service) LoadRates(ctx context.Context, rates []Rate) error {
	for i, r := range rates {
		if r.Currency == Base || !known(r.Currency) {
			return vigia.Invalid(vigia.Field("enum", nil, "rates", strconv.Itoa(i), "currency"))
		}
		if !(r.PerEUR > 0) || math.IsInf(r.PerEUR, 0) {
			return vigia.Invalid(vigia.Field("greater_than", map[string]any{"gt": 0}, "rates", strconv.Itoa(i), "per_eur"))
		}
	}
	return s.store.SaveRates(ctx, rates, s.clock.Now().UTC())
}

// Convert is eur in the currency at the rate (nil for EUR); the amount is nil when a
// rate is needed and there is none.
func Convert(eur float64, currency string, rate *Rate) Money {
	m := Money{Currency: currency}
	switch {
	case currency == Base:
		m.Amount = ptr(eur)
	case rate != nil:
		m.Amount, m.FX = ptr(math.Round(eur*rate.PerEUR*100)/100), rate
	}
	return m
}

func (s *Service) currency(ctx context.Context, workspaceID string) (string, error) {
	c, err := s.store.WorkspaceCurrency(ctx, workspaceID)
	if err != nil || c == nil {
		return Base, err
	}
	return *c, nil
}

func (s *Service) rateFor(ctx context.Context, currency string, day time.Time) (*Rate, error) {
	if currency == Base {
		return nil, nil
	}
	return s.store.RateOn(ctx, currency, day)
}

// monthEnd is the last day of month (YYYY-MM), or now for the month in progress.
func monthEnd(month string, now time.Time) time.Time {
	m, err := time.Parse("2006-01", month)
	if err != nil {
		return now
	}
	end := m.AddDate(0, 1, -1)
	if end.After(now) {
		return now
	}
	return end
}

func known(c string) bool {
	for _, x := range Currencies {
		if x == c {
			return true
		}
	}
	return false
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func ptr[T any](v T) *T { return &v }

// location is the workspace's time zone, in which months begin and end; a zone the
// system lacks falls back to UTC, as the routines' schedules do.
func (s *Service) location(ctx context.Context, workspaceID string) (*time.Location, error) {
	tz, err := s.store.TimeZone(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return time.UTC, nil //nolint:nilerr // a zone the system lacks falls back to UTC
	}
	return loc, nil
}

// rows computes the rows of the period with their money, for one domain or all, months
// in the workspace's time zone (returned).
func (s *Service) rows(ctx context.Context, p vigia.Principal, days int, domainID *string) ([]Row, *time.Location, error) {
	v := catalog.ViewerOf(p)
	if domainID != nil {
		ok, err := s.store.DomainVisible(ctx, v, *domainID)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, vigia.NotFound()
		}
	}
	loc, err := s.location(ctx, p.WorkspaceID)
	if err != nil {
		return nil, nil, err
	}
	now := s.clock.Now().UTC()
	facts, err := s.store.ChargebackFacts(ctx, v, now.AddDate(0, 0, -days), loc)
	if err != nil {
		return nil, nil, err
	}
	rows := Compute(p.WorkspaceID, facts)
	if domainID != nil {
		kept := rows[:0]
		for _, r := range rows {
			if r.Dimension == DimensionDomain && r.EntityID != nil && *r.EntityID == *domainID {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	cur, err := s.currency(ctx, p.WorkspaceID)
	if err != nil {
		return nil, nil, err
	}
	rates := map[string]*Rate{}
	for i := range rows {
		r := &rows[i]
		if _, ok := rates[r.Month]; !ok {
			rate, err := s.rateFor(ctx, cur, monthEnd(r.Month, now))
			if err != nil {
				return nil, nil, err
			}
			rates[r.Month] = rate
		}
		r.Money = Convert(r.LLMCostEUR, cur, rates[r.Month])
	}
	return rows, loc, nil
}

// Dashboard is the finops dashboard: the workspace rows of the last twelve months with
// their totals, and the current month's domain rows.
type Dashboard struct {
	AsOf     time.Time
	Currency string
	FX       *Rate
	Months   []Row
	Domains  []Row
	Totals   Row
}

// FinopsDashboard returns the finops dashboard read.
func (s *Service) FinopsDashboard(ctx context.Context) (Dashboard, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Dashboard{}, err
	}
	rows, loc, err := s.rows(ctx, p, DefaultDays, nil)
	if err != nil {
		return Dashboard{}, err
	}
	cur, rate, err := s.Currency(ctx)
	if err != nil {
		return Dashboard{}, err
	}
	now := s.clock.Now().UTC()
	d := Dashboard{AsOf: now, Currency: cur, FX: rate, Months: []Row{}, Domains: []Row{},
		Totals: Row{Dimension: DimensionWorkspace, WorkspaceID: p.WorkspaceID}}
	month := now.In(loc).Format("2006-01")
	for _, r := range rows {
		switch {
		case r.Dimension == DimensionWorkspace:
			d.Months = append(d.Months, r)
			d.Totals.WorkspaceName, d.Totals.EntityID, d.Totals.EntityName = r.WorkspaceName, r.EntityID, r.EntityName
			d.Totals.Scans += r.Scans
			d.Totals.Datasets += r.Datasets
			d.Totals.Reports += r.Reports
			d.Totals.ProfileBytes += r.ProfileBytes
		case r.Month == month:
			d.Domains = append(d.Domains, r)
		}
	}
	d.Totals.Money = Convert(0, cur, rate)
	return d, nil
}

// Snapshot is one month's chargeback of a workspace as the monthly routine records it.
type Snapshot struct {
	Month string        `json:"month"`
	Rows  []SnapshotRow `json:"rows"`
}

// SnapshotRow is one row of a snapshot: the chargeback row's figures, llm_cost in the
// workspace currency.
type SnapshotRow struct {
	Dimension    string   `json:"dimension"`
	EntityID     *string  `json:"entity_id"`
	EntityName   *string  `json:"entity_name"`
	Scans        float64  `json:"scans"`
	Datasets     float64  `json:"datasets"`
	Reports      float64  `json:"reports"`
	ProfileBytes float64  `json:"profile_bytes"`
	LLMCostEUR   float64  `json:"llm_cost_eur"`
	LLMCost      *float64 `json:"llm_cost"`
	Currency     string   `json:"currency"`
}

// MonthSnapshot is the chargeback of the month (in the workspace's time zone) that month
// falls in, over every dataset and report of the workspace (as an admin sees them), for
// the monthly routine.
func (s *Service) MonthSnapshot(ctx context.Context, workspaceID string, month time.Time) (any, error) {
	p := vigia.Principal{WorkspaceID: workspaceID, Role: vigia.RoleAdmin, UserID: "routine"}
	days := int(s.clock.Now().UTC().Sub(month).Hours()/24) + 1
	rows, loc, err := s.rows(ctx, p, min(max(days, 1), MaxDays), nil)
	if err != nil {
		return nil, err
	}
	key := month.In(loc).Format("2006-01")
	snap := Snapshot{Month: key, Rows: []SnapshotRow{}}
	for _, r := range rows {
		if r.Month != key {
			continue
		}
		snap.Rows = append(snap.Rows, SnapshotRow{r.Dimension, r.EntityID, r.EntityName, r.Scans, r.Datasets, r.Reports, r.ProfileBytes, r.LLMCostEUR, r.Money.Amount, r.Money.Currency})
	}
	return snap, nil
}
