package scan

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/source"
)

// History events of anomaly issues written by scans.
const (
	// EventResolved closes an anomaly issue whose metric stayed back in its band for
	// quality.RecoveryScans scans, or whose column is gone (origin scan:<id>).
	EventResolved = "resolved"
	// NoteColumnDropped is the history note of an anomaly resolved because its column
	// no longer exists.
	NoteColumnDropped = "column_dropped"
)

// judgeMetrics judges every tracked metric against the dataset's own history: an anomaly
// gives a signal and opens an issue, or detects the metric's open issue again (its
// severity the highest of its detections, its title rewritten with the latest value);
// an open anomaly issue whose metric is back inside the band it was opened against
// counts a clean scan, and resolves after quality.RecoveryScans of them in a row; one
// whose column is gone resolves at once.
func (res *DatasetResult) judgeMetrics(in EvaluateInput, intervals map[string][2]float64) {
	d := in.Dataset
	open := map[string]KnownIssue{}
	for _, is := range in.Prev.Issues {
		if is.Type == quality.IssueTypeAnomaly && (is.Status == string(quality.IssueOpen) || is.Status == string(quality.IssueAcknowledged)) {
			open[metricKey(is.Metric, is.Column)] = is
		}
	}
	keys := make([]string, 0, len(res.Metrics))
	for k := range res.Metrics {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var hist []float64
		for _, h := range in.Prev.History {
			if v, ok := h[k]; ok {
				hist = append(hist, v)
			}
		}
		metric, column := splitKey(k)
		threshold, tuned := quality.DefaultThreshold, false
		if t, ok := in.Prev.Thresholds[k]; ok {
			threshold, tuned = t, t > quality.DefaultThreshold
		}
		value := res.Metrics[k]
		var interval *[2]float64
		if iv, ok := intervals[k]; ok {
			interval = &iv
		}
		a := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.Metric(metric), History: hist, Value: value,
			Interval: interval, Threshold: threshold, Tuned: tuned})
		known, hasOpen := open[k]
		if !a.Evaluated || !a.Anomalous {
			if hasOpen {
				res.countRecovery(known, a, value, interval)
			}
			continue
		}
		sig := Signal{ID: vigia.NewID(), WorkspaceID: d.WorkspaceID, DatasetID: d.ID, ScanID: in.ScanID, Kind: "anomaly",
			Metric: metric, Column: column, Observed: vigia.Ptr(value), Baseline: vigia.Ptr(a.Median), Z: a.Z,
			Threshold: vigia.Ptr(a.Threshold), Anomalous: true, CreatedAt: in.Now, Method: a.Method,
			Severity: string(a.Severity), CI95: interval}
		details := map[string]any{"metric": metric, "column": column, "observed": value, "median": a.Median,
			"mad": a.MAD, "z": a.Z, "threshold": a.Threshold, "direction": a.Direction, "history_size": a.HistorySize,
			"method": a.Method, "previous": a.Previous, "cold_start": a.ColdStart, "band": a.Band}
		if interval != nil {
			details["observed_ci95"] = []float64{interval[0], interval[1]}
		}
		title, params := anomalyTitle(d, metric, column, value, a.Median)
		switch {
		case in.Prev.Silenced[k]:
			// Muted by tuning: the signal is kept, no issue.
		case hasOpen:
			if known.Band != nil {
				details["band"] = known.Band // the band it was opened against stays its yardstick
			}
			sev := quality.HigherSeverity(quality.Severity(known.Severity), a.Severity)
			res.Redetected = append(res.Redetected, Redetection{IssueID: known.ID, Severity: string(sev), Details: details,
				Title: title, TitleParams: params})
			id := known.ID
			sig.IssueID = &id
		default:
			sev := a.Severity
			if sev == "" {
				sev = quality.SeverityWarning
			}
			ni := NewIssue{ID: vigia.NewID(), Type: quality.IssueTypeAnomaly, Subtype: metric, Severity: string(sev), Title: title,
				TitleKey: "issue.anomaly." + metric, TitleParams: params, Metric: metric, Column: column, Details: details, Band: a.Band}
			res.NewIssues = append(res.NewIssues, ni)
			sig.IssueID = &ni.ID
		}
		res.Signals = append(res.Signals, sig)
	}

	// Open anomaly issues whose metric was not measured: a column that is gone takes its
	// anomalies with it; otherwise (an emptied table has no null rate, a first-rows
	// profile no volume) nothing is known and the count of clean scans stays.
	present := map[string]bool{}
	for _, c := range in.Table.Columns {
		present[c.Name] = true
	}
	var gone []string
	for k, is := range open {
		if _, measured := res.Metrics[k]; !measured && is.Column != "" && !present[is.Column] {
			gone = append(gone, is.ID)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		res.Transitions = append(res.Transitions, IssueTransition{IssueID: id, From: statusOf(in.Prev.Issues, id),
			To: string(quality.IssueResolved), Event: EventResolved, Note: NoteColumnDropped})
	}
}

// countRecovery counts a clean scan of an open anomaly issue whose metric was not
// flagged in this scan: clean when the value is back on the expected side of the band
// the issue was opened against (an issue without a band: when the metric was judged
// and not flagged). quality.RecoveryScans clean scans in a row resolve it; a scan that
// is not clean (the metric sits at a new level the history absorbed) starts the count
// again.
func (res *DatasetResult) countRecovery(is KnownIssue, a quality.Anomaly, value float64, interval *[2]float64) {
	clean := a.Evaluated
	if is.Band != nil {
		clean = is.Band.Holds(value, interval, is.Direction)
	}
	n := 0
	if clean {
		n = is.CleanScans + 1
	}
	if clean && n >= quality.RecoveryScans {
		res.Transitions = append(res.Transitions, IssueTransition{IssueID: is.ID, From: is.Status,
			To: string(quality.IssueResolved), Event: EventResolved})
	}
	if n != is.CleanScans {
		res.Recovery = append(res.Recovery, CleanScans{IssueID: is.ID, Count: n})
	}
}

func statusOf(issues []KnownIssue, id string) string {
	for _, is := range issues {
		if is.ID == id {
			return is.Status
		}
	}
	return string(quality.IssueOpen)
}

// issuesAfter is the dataset's issues as they stand after this scan: the known ones with
// the scan's transitions applied and their severity raised by a re-detection, and the
// new ones. The verdict counts them through quality.CountStanding.
func (res *DatasetResult) issuesAfter(known []KnownIssue) []quality.VerdictIssue {
	status := map[string]string{}
	for _, t := range res.Transitions {
		status[t.IssueID] = t.To
	}
	severity := map[string]string{}
	for _, r := range res.Redetected {
		severity[r.IssueID] = r.Severity
	}
	out := make([]quality.VerdictIssue, 0, len(known)+len(res.NewIssues))
	for _, is := range known {
		st := is.Status
		if to, ok := status[is.ID]; ok {
			st = to
		}
		sev := quality.HigherSeverity(quality.Severity(is.Severity), quality.Severity(severity[is.ID]))
		out = append(out, quality.VerdictIssue{ID: is.ID, Type: is.Type, Severity: sev, Status: quality.IssueStatus(st)})
	}
	for _, ni := range res.NewIssues {
		out = append(out, quality.VerdictIssue{ID: ni.ID, Type: ni.Type, Severity: quality.Severity(ni.Severity), Status: quality.IssueOpen})
	}
	return out
}

// anomalyTitle is an anomaly issue's pt-PT title and its params, from the latest value.
func anomalyTitle(d DatasetRef, metric, column string, value, median float64) (string, map[string]any) {
	name := d.Name()
	var title string
	switch quality.Metric(metric) {
	case quality.MetricVolume:
		title = fmt.Sprintf("Anomalia de volume em %s: %.0f linhas (mediana %.0f)", name, value, median)
	case quality.MetricNullRate:
		title = fmt.Sprintf("Anomalia de nulos em %s.%s: %.1f%% (mediana %.1f%%)", name, column, value*100, median*100)
	case quality.MetricFreshnessLag:
		title = fmt.Sprintf("Dados desatualizados em %s: %.0f h sem linhas novas (mediana %.0f h)", name, value/3600, median/3600)
	case quality.MetricDistinctRatio:
		title = fmt.Sprintf("Anomalia de valores distintos em %s.%s: %.1f%% (mediana %.1f%%)", name, column, value*100, median*100)
	default:
		title = fmt.Sprintf("Anomalia em %s (%s)", name, metric)
	}
	return title, map[string]any{"dataset": name, "column": column, "value": value, "median": median}
}

// metricsOf computes the tracked metrics of a profile, and the 95% intervals of those
// measured on a sample (estimated distinct ratios). A basic-depth profile that read only
// the first rows has no meaningful volume or distinct ratio.
func metricsOf(now time.Time, p *source.TableProfile) (Metrics, map[string][2]float64) {
	m := Metrics{}
	intervals := map[string][2]float64{}
	if !p.Truncated {
		m[string(quality.MetricVolume)] = float64(p.RowCount)
	}
	if p.LatestTimestamp != nil {
		m[string(quality.MetricFreshnessLag)] = math.Max(0, now.Sub(*p.LatestTimestamp).Seconds())
	}
	if p.RowCount == 0 {
		return m, intervals
	}
	for _, c := range p.Columns {
		m[metricKey(string(quality.MetricNullRate), c.Name)] = float64(c.NullCount) / float64(p.RowCount)
		if c.Distinct != nil && !p.Truncated {
			if nonNull := p.RowCount - c.NullCount; nonNull > 0 {
				k := metricKey(string(quality.MetricDistinctRatio), c.Name)
				m[k] = math.Min(1, c.Distinct.Value/float64(nonNull))
				if c.Distinct.Estimated && c.Distinct.CI95[0] <= c.Distinct.CI95[1] {
					lo := math.Min(1, math.Max(0, c.Distinct.CI95[0]/float64(nonNull)))
					hi := math.Min(1, math.Max(0, c.Distinct.CI95[1]/float64(nonNull)))
					intervals[k] = [2]float64{math.Min(lo, m[k]), math.Max(hi, m[k])}
				}
			}
		}
	}
	return m, intervals
}
