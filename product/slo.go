package product

import (
	"sort"
	"time"
)

// Reasons a counted day is violated (breakdown of the SLO report).
const (
	ViolationNotProfiled     = "not_profiled"
	ViolationVerdictFail     = "verdict_fail"
	ViolationDimensionTarget = "dimension_target"
)

// Coverage is one finished scan that covered a dataset: whether it profiled it, with
// the verdict and the dimensions of that profile.
type Coverage struct {
	DatasetID  string
	ScanID     string
	At         time.Time // when the scan finished
	Profiled   bool
	Verdict    string
	Dimensions map[string]*float64
}

// SLODataset is one dataset's attainment in a month.
type SLODataset struct {
	DatasetID       string
	DatasetName     string
	AvailabilityPct *float64
	MetDays         int
	ViolatedDays    int
	HistoryDays     int
	Breakdown       map[string]int
}

// SLOReport is a domain's SLO attainment in a month, per dataset and in total.
type SLOReport struct {
	Month           string // YYYY-MM
	Timezone        string
	ObjectivePct    *float64
	AvailabilityPct *float64
	MetDays         int
	ViolatedDays    int
	HistoryDays     int
	// ObjectiveMet is nil without an objective or without a counted day.
	ObjectiveMet *bool
	Breakdown    map[string]int
	Datasets     []SLODataset
}

// SLOInput is what ComputeSLO reads.
type SLOInput struct {
	// Month is any instant of the month, read in Location.
	Month    time.Time
	Location *time.Location
	Now      time.Time
	// HistoryDays is the workspace history window: days older than it do not count.
	HistoryDays int
	SLA         SLA
	Datasets    []SLODataset // id and name of each member (the rest is computed)
	Coverage    []Coverage
}

// ComputeSLO computes the availability of a month per dataset: a day (in the
// workspace's time zone) counts when a finished scan covered the dataset; it is met when
// a scan of that day profiled the dataset without a fail verdict and with every
// dimension target of the SLA met (a dimension that could not be computed does not miss
// its target); otherwise it is violated, with reason dimension_target (profiled, no
// fail, a target missed), verdict_fail, or not_profiled (the scan covered the dataset
// but saved no profile). Days without a scan, in the future, or before the history
// window do not count. history_days is the number of days of the month inside the
// window up to today. availability_pct = met / (met + violated) × 100, rounded to two
// decimals, null without a counted day. The domain total sums its datasets' days.
func ComputeSLO(in SLOInput) SLOReport {
	loc := in.Location
	if loc == nil {
		loc = time.UTC
	}
	m := in.Month.In(loc)
	start := time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, loc)
	end := start.AddDate(0, 1, 0)
	now := in.Now.In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	windowStart := today.AddDate(0, 0, -max(in.HistoryDays, 1)+1)
	first := start
	if windowStart.After(first) {
		first = windowStart
	}
	last := end.AddDate(0, 0, -1)
	if today.Before(last) {
		last = today
	}
	history := 0
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		history++
	}

	type day struct{ good, okNoTarget, profiled, covered bool }
	perDataset := map[string]map[string]*day{}
	for _, c := range in.Coverage {
		at := c.At.In(loc)
		dd := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, loc)
		if dd.Before(first) || dd.After(last) {
			continue
		}
		key := dd.Format("2006-01-02")
		days := perDataset[c.DatasetID]
		if days == nil {
			days = map[string]*day{}
			perDataset[c.DatasetID] = days
		}
		st := days[key]
		if st == nil {
			st = &day{}
			days[key] = st
		}
		st.covered = true
		if c.Profiled {
			st.profiled = true
			if c.Verdict != "fail" {
				if targetsMet(in.SLA.DimensionTargets, c.Dimensions) {
					st.good = true
				} else {
					st.okNoTarget = true
				}
			}
		}
	}

	out := SLOReport{Month: start.Format("2006-01"), Timezone: loc.String(), ObjectivePct: in.SLA.AvailabilityObjectivePct,
		Breakdown: emptyBreakdown(), Datasets: make([]SLODataset, 0, len(in.Datasets))}
	for _, ds := range in.Datasets {
		r := SLODataset{DatasetID: ds.DatasetID, DatasetName: ds.DatasetName, HistoryDays: history, Breakdown: emptyBreakdown()}
		for _, st := range perDataset[ds.DatasetID] {
			switch {
			case st.good:
				r.MetDays++
			case st.okNoTarget:
				r.ViolatedDays++
				r.Breakdown[ViolationDimensionTarget]++
			case st.profiled:
				r.ViolatedDays++
				r.Breakdown[ViolationVerdictFail]++
			default:
				r.ViolatedDays++
				r.Breakdown[ViolationNotProfiled]++
			}
		}
		r.AvailabilityPct = pct(r.MetDays, r.ViolatedDays)
		out.MetDays += r.MetDays
		out.ViolatedDays += r.ViolatedDays
		out.HistoryDays += r.HistoryDays
		for k, v := range r.Breakdown {
			out.Breakdown[k] += v
		}
		out.Datasets = append(out.Datasets, r)
	}
	sort.SliceStable(out.Datasets, func(i, j int) bool { return out.Datasets[i].DatasetName < out.Datasets[j].DatasetName })
	out.AvailabilityPct = pct(out.MetDays, out.ViolatedDays)
	if out.ObjectivePct != nil && out.AvailabilityPct != nil {
		ok := *out.AvailabilityPct >= *out.ObjectivePct
		out.ObjectiveMet = &ok
	}
	return out
}

func emptyBreakdown() map[string]int {
	return map[string]int{ViolationDimensionTarget: 0, ViolationVerdictFail: 0, ViolationNotProfiled: 0}
}

func targetsMet(targets map[string]float64, dims map[string]*float64) bool {
	for d, t := range targets {
		if v := dims[d]; v != nil && *v < t {
			return false
		}
	}
	return true
}

func pct(met, violated int) *float64 {
	if met+violated == 0 {
		return nil
	}
	v := round2(100 * float64(met) / float64(met+violated))
	return &v
}
