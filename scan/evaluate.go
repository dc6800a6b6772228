package scan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/source"
)

// historyWindow is how many previous profiles anomaly detection reads.
const historyWindow = 30

// Metrics are the numbers a profile tracks over time, keyed "metric" or "metric:column".
type Metrics map[string]float64

// PrevState is what a dataset's previous scans left: the base of this scan's comparison.
type PrevState struct {
	Seq     int                   // the last profile's sequence number; 0 before the first
	Columns []quality.ColumnShape // nil before the first profile
	History []Metrics             // previous profiles' metrics, oldest first
	Score   *quality.Score
	Verdict *quality.Verdict
	// Issues are the dataset's open and acknowledged issues, plus drift and anomaly issues
	// closed since the previous score (so consistencia can say they are gone).
	Issues []KnownIssue
	// Thresholds are tuned anomaly thresholds by metric key; Silenced mutes a key.
	Thresholds map[string]float64
	Silenced   map[string]bool
}

// KnownIssue is an existing issue as the evaluation needs it.
type KnownIssue struct {
	ID              string
	Type            string
	Severity        string
	Status          string
	Metric          string
	Column          string
	Structural      bool
	LastDetectedSeq int
	// RuleID is set on issues of rules; RuleCurrent marks the rule's current issue.
	RuleID      string
	RuleCurrent bool
}

// EvaluateInput is one dataset's fresh profile with its history.
type EvaluateInput struct {
	Now          time.Time
	ScanID       string
	Dataset      DatasetRef
	Table        source.Table
	Profile      *source.TableProfile
	Prev         PrevState
	DecayScans   int
	FreshnessSLA time.Duration
	Duration     time.Duration
	// Rules are the dataset's rule results in this scan (see applyRules).
	Rules []RuleResult
	// Weights are the dimension weights the dataset's domains set (see
	// quality.EffectiveWeights); nil means the default weights.
	Weights quality.Weights
}

// DatasetResult is everything one dataset's scan writes, in one transaction.
type DatasetResult struct {
	DatasetID     string
	WorkspaceID   string
	ScanID        string
	Seq           int
	At            time.Time
	Profile       *source.TableProfile
	Columns       []source.Column
	Metrics       Metrics
	DurationMS    int
	NewIssues     []NewIssue
	Redetected    []Redetection
	SchemaChanges []SchemaChange
	Signals       []Signal
	Score         quality.Score
	Verdict       quality.VerdictResult
	Events        []Event
	// RuleResults are stored as the rules' last results; Transitions change existing
	// issues of rules.
	RuleResults []RuleResult
	Transitions []IssueTransition
}

// NewIssue is an issue a scan opens.
type NewIssue struct {
	ID          string
	Type        string // schema_drift, anomaly
	Subtype     string
	Severity    string
	Title       string
	TitleKey    string
	TitleParams map[string]any
	Metric      string
	Column      string
	Structural  bool
	Details     map[string]any
	// RuleID is set on an issue a failed rule opens (it becomes the rule's current one).
	RuleID string
}

// Redetection is an open issue found again.
type Redetection struct {
	IssueID  string
	Severity string
	Details  map[string]any
}

// SchemaChange is one column change a scan detected.
type SchemaChange struct {
	Change            string // add, drop, type_change
	Column            string
	FromType, ToType  *string
	SuggestedRenameTo *string
	IssueID           string
}

// Signal is one measurement checked against the dataset's history.
type Signal struct {
	ID          string
	WorkspaceID string
	DatasetID   string
	DatasetName string
	ScanID      string
	Kind        string
	Metric      string
	Column      string
	Observed    *float64
	Baseline    *float64
	Z           *float64
	Threshold   *float64
	Anomalous   bool
	IssueID     *string
	CreatedAt   time.Time
}

// Event is a state event written to the outbox.
type Event struct {
	ID             string
	Type           string
	SubjectType    string
	SubjectID      string
	IdempotencyKey string
	Payload        map[string]any
}

// emptyExpected reports whether a rule says the dataset may be empty: a row_count_min
// rule asking for at least 0 rows (a staging table each load empties).
func emptyExpected(rules []RuleResult) bool {
	for _, r := range rules {
		if r.RuleType == "row_count_min" && r.Threshold != nil && *r.Threshold == 0 {
			return true
		}
	}
	return false
}

// Evaluate turns a fresh profile and the dataset's history into this scan's result:
// drift, anomalies, the score with the consistencia decay, the verdict and its event.
func Evaluate(in EvaluateInput) (DatasetResult, error) {
	d, p := in.Dataset, in.Profile
	res := DatasetResult{DatasetID: d.ID, WorkspaceID: d.WorkspaceID, ScanID: in.ScanID, Seq: in.Prev.Seq + 1, At: in.Now,
		Profile: p, Columns: in.Table.Columns, DurationMS: int(in.Duration.Milliseconds())}
	res.Metrics = metricsOf(in.Now, p)

	// Schema drift against the previous profile's columns.
	curr := shapesOf(in.Table.Columns)
	if in.Prev.Columns != nil {
		if drift := quality.DiffColumns(in.Prev.Columns, curr); drift.Changed() {
			res.addDrift(d, drift)
		}
	}

	// Anomalies of each tracked metric against the dataset's own history.
	open := map[string]KnownIssue{}
	for _, is := range in.Prev.Issues {
		if is.Type == "anomaly" && (is.Status == "open" || is.Status == "acknowledged") {
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
		threshold := 3.5
		if t, ok := in.Prev.Thresholds[k]; ok {
			threshold = t
		}
		a := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.Metric(metric), History: hist, Value: res.Metrics[k], Threshold: threshold})
		if !a.Evaluated || !a.Anomalous {
			continue
		}
		sig := Signal{ID: vigia.NewID(), WorkspaceID: d.WorkspaceID, DatasetID: d.ID, ScanID: in.ScanID, Kind: "anomaly",
			Metric: metric, Column: column, Observed: vigia.Ptr(res.Metrics[k]), Baseline: vigia.Ptr(a.Median), Z: a.Z,
			Threshold: vigia.Ptr(a.Threshold), Anomalous: true, CreatedAt: in.Now}
		details := map[string]any{"metric": metric, "column": column, "observed": res.Metrics[k], "median": a.Median,
			"mad": a.MAD, "z": a.Z, "threshold": a.Threshold, "direction": a.Direction, "history_size": a.HistorySize}
		switch {
		case in.Prev.Silenced[k]:
			// Muted by tuning: the signal is kept, no issue.
		case open[k].ID != "":
			res.Redetected = append(res.Redetected, Redetection{IssueID: open[k].ID, Severity: string(a.Severity), Details: details})
			id := open[k].ID
			sig.IssueID = &id
		default:
			ni := anomalyIssue(d, metric, column, a, res.Metrics[k], details)
			res.NewIssues = append(res.NewIssues, ni)
			sig.IssueID = &ni.ID
		}
		res.Signals = append(res.Signals, sig)
	}

	// Rules: their outcomes count in the score and the verdict; failures open issues.
	ruleOutcomes := res.applyRules(in)

	// Consistencia: open drift and anomaly issues decay with the scans since detection.
	var prevDeduction map[string]quality.IssueDeduction
	if in.Prev.Score != nil {
		prevDeduction = map[string]quality.IssueDeduction{}
		for _, di := range in.Prev.Score.Consistency.Issues {
			prevDeduction[di.IssueID] = di
		}
	}
	redetected := map[string]string{}
	for _, r := range res.Redetected {
		redetected[r.IssueID] = r.Severity
	}
	var cons []quality.ConsistencyIssue
	for _, is := range in.Prev.Issues {
		if is.Type != "schema_drift" && is.Type != "anomaly" {
			continue
		}
		ci := quality.ConsistencyIssue{ID: is.ID, Type: is.Type, Severity: quality.Severity(is.Severity),
			Status: quality.IssueStatus(is.Status), Structural: is.Structural, Age: res.Seq - is.LastDetectedSeq}
		if sev, ok := redetected[is.ID]; ok {
			ci.DetectedNow, ci.Age = true, 0
			if sev != "" {
				ci.Severity = quality.Severity(sev)
			}
		}
		if pd, ok := prevDeduction[is.ID]; ok {
			age := pd.AgeAfter
			ci.PrevAge, ci.PrevStatus, ci.PrevSeverity = &age, quality.IssueOpen, pd.Severity
		} else if ci.Status != quality.IssueOpen && ci.Status != "acknowledged" {
			continue // closed before it ever deducted in the previous score
		}
		cons = append(cons, ci)
	}
	for _, ni := range res.NewIssues {
		if ni.Type != "schema_drift" && ni.Type != "anomaly" {
			continue
		}
		cons = append(cons, quality.ConsistencyIssue{ID: ni.ID, Type: ni.Type, Severity: quality.Severity(ni.Severity),
			Status: quality.IssueOpen, Structural: ni.Structural, DetectedNow: true})
	}

	score, err := quality.ComputeScore(quality.ScoreInput{RowCount: p.RowCount, Columns: statsOf(in.Table.Columns, p),
		Now: in.Now, LatestTimestamp: p.LatestTimestamp, FreshnessSLA: in.FreshnessSLA, Consistency: cons, DecayScans: in.DecayScans,
		Rules: ruleOutcomes, Weights: in.Weights})
	if err != nil {
		return res, err
	}
	res.Score = score

	// Verdict over the rules and the issues open after this scan. A rule's issue is left
	// out: the rule itself counts through its outcome, and not at all when it could not
	// be evaluated.
	var vis []quality.VerdictIssue
	for _, is := range in.Prev.Issues {
		if is.Type == IssueTypeRule {
			continue
		}
		if is.Status == "open" || is.Status == "acknowledged" {
			sev := is.Severity
			if s, ok := redetected[is.ID]; ok && s != "" {
				sev = s
			}
			vis = append(vis, quality.VerdictIssue{ID: is.ID, Type: is.Type, Severity: quality.Severity(sev), Status: quality.IssueStatus(is.Status)})
		}
	}
	for _, ni := range res.NewIssues {
		if ni.Type == IssueTypeRule {
			continue
		}
		vis = append(vis, quality.VerdictIssue{ID: ni.ID, Type: ni.Type, Severity: quality.Severity(ni.Severity), Status: quality.IssueOpen})
	}
	res.Verdict = quality.DecideVerdict(quality.VerdictInput{Profiled: true, Score: score.Score, Rules: ruleOutcomes, Issues: vis,
		Empty: p.RowCount == 0 && !emptyExpected(in.Rules)})
	if quality.VerdictChanged(in.Prev.Verdict, res.Verdict.Verdict) {
		from := string(*in.Prev.Verdict)
		to := string(res.Verdict.Verdict)
		params := map[string]any{"dataset_id": d.ID, "from": from, "to": to}
		if score.Score != nil {
			params["score"] = *score.Score
		}
		res.Events = append(res.Events, Event{ID: vigia.NewID(), Type: "dataset.verdict_changed", SubjectType: "dataset",
			SubjectID: d.ID, IdempotencyKey: IdempotencyKey(d.ID, in.ScanID, "dataset.verdict_changed", ""),
			Payload: map[string]any{"dataset_id": d.ID, "dataset_name": d.Name(), "from": from, "to": to,
				"verdict": to, "score": score.Score, "scan_id": in.ScanID, "params": params}})
	}
	return res, nil
}

// IdempotencyKey is the sha256 of subject, scan, type and rule: the same on every
// channel and on a repeated scan.
func IdempotencyKey(subject, scanID, typ, rule string) string {
	h := sha256.New()
	for _, part := range []string{subject, scanID, typ, rule} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (res *DatasetResult) addDrift(d DatasetRef, drift quality.Drift) {
	id := vigia.NewID()
	sev := string(drift.Severity)
	if sev == "" {
		sev = string(quality.SeverityWarning)
	}
	params := map[string]any{"dataset": d.Name(), "added": len(drift.Added), "dropped": len(drift.Dropped), "type_changed": len(drift.TypeChanged)}
	res.NewIssues = append(res.NewIssues, NewIssue{ID: id, Type: "schema_drift", Severity: sev,
		Title: fmt.Sprintf("Alteração de esquema em %s: %d coluna(s) removida(s), %d com tipo alterado, %d adicionada(s)",
			d.Name(), len(drift.Dropped), len(drift.TypeChanged), len(drift.Added)),
		TitleKey: "issue.schema_drift", TitleParams: params, Structural: drift.Structural,
		Details: map[string]any{"added": drift.Added, "dropped": drift.Dropped, "type_changed": drift.TypeChanged,
			"suggested_renames": drift.Renames, "structural": drift.Structural}})
	renameTo := map[string]string{}
	for _, r := range drift.Renames {
		renameTo[r.From] = r.To
	}
	for _, c := range drift.Added {
		res.SchemaChanges = append(res.SchemaChanges, SchemaChange{Change: "add", Column: c.Name, ToType: vigia.Ptr(c.Type), IssueID: id})
	}
	for _, c := range drift.Dropped {
		sc := SchemaChange{Change: "drop", Column: c.Name, FromType: vigia.Ptr(c.Type), IssueID: id}
		if to, ok := renameTo[c.Name]; ok {
			sc.SuggestedRenameTo = &to
		}
		res.SchemaChanges = append(res.SchemaChanges, sc)
	}
	for _, c := range drift.TypeChanged {
		res.SchemaChanges = append(res.SchemaChanges, SchemaChange{Change: "type_change", Column: c.Column,
			FromType: vigia.Ptr(c.From), ToType: vigia.Ptr(c.To), IssueID: id})
	}
	res.Signals = append(res.Signals, Signal{ID: vigia.NewID(), WorkspaceID: d.WorkspaceID, DatasetID: d.ID, ScanID: res.ScanID,
		Kind: "schema_drift", Metric: "schema", Anomalous: true, IssueID: &id, CreatedAt: res.At})
}

func anomalyIssue(d DatasetRef, metric, column string, a quality.Anomaly, value float64, details map[string]any) NewIssue {
	name := d.Name()
	var title string
	switch quality.Metric(metric) {
	case quality.MetricVolume:
		title = fmt.Sprintf("Anomalia de volume em %s: %.0f linhas (mediana %.0f)", name, value, a.Median)
	case quality.MetricNullRate:
		title = fmt.Sprintf("Anomalia de nulos em %s.%s: %.1f%% (mediana %.1f%%)", name, column, value*100, a.Median*100)
	case quality.MetricFreshnessLag:
		title = fmt.Sprintf("Dados desatualizados em %s: %.0f h sem linhas novas (mediana %.0f h)", name, value/3600, a.Median/3600)
	case quality.MetricDistinctRatio:
		title = fmt.Sprintf("Anomalia de valores distintos em %s.%s: %.1f%% (mediana %.1f%%)", name, column, value*100, a.Median*100)
	default:
		title = fmt.Sprintf("Anomalia em %s (%s)", name, metric)
	}
	sev := string(a.Severity)
	if sev == "" {
		sev = string(quality.SeverityWarning)
	}
	return NewIssue{ID: vigia.NewID(), Type: "anomaly", Subtype: metric, Severity: sev, Title: title,
		TitleKey: "issue.anomaly." + metric, TitleParams: map[string]any{"dataset": name, "column": column, "value": value, "median": a.Median},
		Metric: metric, Column: column, Details: details}
}

// metricsOf computes the tracked metrics of a profile. A basic-depth profile that read
// only the first rows has no meaningful volume or distinct ratio.
func metricsOf(now time.Time, p *source.TableProfile) Metrics {
	m := Metrics{}
	if !p.Truncated {
		m[string(quality.MetricVolume)] = float64(p.RowCount)
	}
	if p.LatestTimestamp != nil {
		m[string(quality.MetricFreshnessLag)] = math.Max(0, now.Sub(*p.LatestTimestamp).Seconds())
	}
	if p.RowCount == 0 {
		return m
	}
	for _, c := range p.Columns {
		m[metricKey(string(quality.MetricNullRate), c.Name)] = float64(c.NullCount) / float64(p.RowCount)
		if c.Distinct != nil && !p.Truncated {
			if nonNull := p.RowCount - c.NullCount; nonNull > 0 {
				m[metricKey(string(quality.MetricDistinctRatio), c.Name)] = math.Min(1, c.Distinct.Value/float64(nonNull))
			}
		}
	}
	return m
}

func metricKey(metric, column string) string {
	if column == "" {
		return metric
	}
	return metric + ":" + column
}

func splitKey(k string) (metric, column string) {
	metric, column, _ = strings.Cut(k, ":")
	return metric, column
}

func shapesOf(cols []source.Column) []quality.ColumnShape {
	out := make([]quality.ColumnShape, 0, len(cols))
	for _, c := range cols {
		out = append(out, quality.ColumnShape{Name: c.Name, Type: c.DataType, Position: c.Position})
	}
	return out
}

func statsOf(cols []source.Column, p *source.TableProfile) []quality.ColumnStats {
	byName := map[string]source.ColumnProfile{}
	for _, c := range p.Columns {
		byName[c.Name] = c
	}
	out := make([]quality.ColumnStats, 0, len(cols))
	for _, c := range cols {
		cp := byName[c.Name]
		st := quality.ColumnStats{Name: c.Name, ProfiledRows: p.RowCount, NullCount: cp.NullCount, PrimaryKey: c.PrimaryKey}
		if cp.Distinct != nil {
			v, ci := cp.Distinct.Value, cp.Distinct.CI95
			st.Distinct, st.DistinctCI95, st.DistinctEstimated = &v, &ci, cp.Distinct.Estimated
		}
		if cp.Semantic != nil {
			st.SemanticType, st.SemanticMatches, st.SemanticValid = cp.Semantic.Type, cp.Semantic.Matches, cp.Semantic.Valid
		}
		out = append(out, st)
	}
	return out
}
