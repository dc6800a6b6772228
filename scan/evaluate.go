package scan

import (
	"fmt"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
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
	// Band is the expected range an anomaly issue was opened against (nil ends are
	// unbounded; nil for issues opened before bands were kept), Direction its latest
	// detection's, and CleanScans the consecutive scans since that found the metric back
	// inside the band (see quality.RecoveryScans).
	Band       *quality.Band
	Direction  string
	CleanScans int
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
	// Reported are the last results of the dataset's rules reported from outside scans
	// (dbt tests): they count in the score and the verdict as the scan's own rules do,
	// while their issues follow the reports (see ReportedRules).
	Reported []quality.RuleOutcome
	// Weights are the dimension weights the dataset's domains set (see
	// quality.EffectiveWeights); nil means the default weights.
	Weights quality.Weights
}

// DatasetResult is everything one dataset's scan writes, in one transaction.
type DatasetResult struct {
	DatasetID   string
	WorkspaceID string
	ScanID      string
	Seq         int
	At          time.Time
	Profile     *source.TableProfile
	Columns     []source.Column
	Metrics     Metrics
	DurationMS  int
	// BytesRead is what the profile read (source.ProfileBytes), for chargeback.
	BytesRead     int64
	NewIssues     []NewIssue
	Redetected    []Redetection
	SchemaChanges []SchemaChange
	Signals       []Signal
	Score         quality.Score
	Verdict       quality.VerdictResult
	Events        []event.Event
	// RuleResults are stored as the rules' last results; Transitions change existing
	// issues of rules.
	RuleResults []RuleResult
	Transitions []IssueTransition
	// Recovery sets the count of consecutive clean scans of open anomaly issues that were
	// not detected again (a re-detection resets it to 0 itself).
	Recovery []CleanScans
}

// CleanScans is an anomaly issue's count of consecutive scans with its metric back in
// its band.
type CleanScans struct {
	IssueID string
	Count   int
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
	// Band is the expected range of an anomaly's metric when it was opened.
	Band *quality.Band
}

// Redetection is an open issue found again. Severity is the issue's severity from now
// on: the highest of its detections. Title and TitleParams, when set, replace the
// issue's (an anomaly's title says its latest value).
type Redetection struct {
	IssueID     string
	Severity    string
	Details     map[string]any
	Title       string
	TitleParams map[string]any
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
	// Method is what flagged it (quality.MethodRobustZ or MethodGross), Severity the
	// anomaly's, and CI95 the observed value's 95% interval when measured on a sample.
	Method   string
	Severity string
	CI95     *[2]float64
	// Source is who raised it: SourceScan (ScanID set) or SourceOrchestrator (a late
	// or failing writer of the dataset, Pipeline set, no scan).
	Source   string
	Pipeline *SignalWriter
}

// SignalWriter is the writer a pipeline signal is about: the orchestrator, the
// pipeline and the run (the failed run, or the last run before the missed one).
type SignalWriter struct {
	Orchestrator string
	Pipeline     string
	RunID        string
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
		Profile: p, Columns: in.Table.Columns, DurationMS: int(in.Duration.Milliseconds()),
		BytesRead: source.ProfileBytes(in.Table.Columns, p)}
	var intervals map[string][2]float64
	res.Metrics, intervals = metricsOf(in.Now, p)

	// Schema drift against the previous profile's columns.
	curr := shapesOf(in.Table.Columns)
	if in.Prev.Columns != nil {
		if drift := quality.DiffColumns(in.Prev.Columns, curr); drift.Changed() {
			res.addDrift(d, drift)
		}
	}

	// Anomalies of each tracked metric against the dataset's own history, and the
	// recovery of the open ones.
	res.judgeMetrics(in, intervals)

	// Rules: their outcomes count in the score and the verdict; failures open issues.
	ruleOutcomes := append(res.applyRules(in), in.Reported...)

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
			ci.Severity = quality.HigherSeverity(ci.Severity, quality.Severity(sev))
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

	// Verdict over the rules and the issues that stand after this scan, counted the one
	// way the trust decision and readiness count them (quality.CountStanding).
	vis := res.issuesAfter(in.Prev.Issues)
	res.Verdict = quality.DecideVerdict(quality.VerdictInput{Profiled: true, Score: score.Score, Rules: ruleOutcomes, Issues: vis,
		Empty: p.RowCount == 0 && !emptyExpected(in.Rules)})
	if quality.VerdictChanged(in.Prev.Verdict, res.Verdict.Verdict) {
		from := string(*in.Prev.Verdict)
		to := string(res.Verdict.Verdict)
		params := map[string]any{"dataset_id": d.ID, "from": from, "to": to}
		if score.Score != nil {
			params["score"] = *score.Score
		}
		res.Events = append(res.Events, event.Event{ID: vigia.NewID(), Type: "dataset.verdict_changed", SubjectType: "dataset",
			SubjectID: d.ID, IdempotencyKey: event.IdempotencyKey(d.ID, in.ScanID, "dataset.verdict_changed", ""),
			Payload: map[string]any{"dataset_id": d.ID, "dataset_name": d.Name(), "from": from, "to": to,
				"verdict": to, "score": score.Score, "scan_id": in.ScanID, "params": params}})
	}
	return res, nil
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
		Kind: SignalSchemaDrift, Metric: MetricSchema, Anomalous: true, IssueID: &id, CreatedAt: res.At, Method: MethodSchemaDiff, Severity: sev})
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
