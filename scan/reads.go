package scan

import (
	"context"
	"sort"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
)

// Reads is the persistence behind the dataset read operations that come from scans.
type Reads interface {
	LatestVerdict(ctx context.Context, datasetID string) (VerdictRow, bool, error)
	LatestScores(ctx context.Context, datasetID string, n int) ([]ScoreRow, error)
	SchemaChanges(ctx context.Context, datasetID string) ([]SchemaChangeRow, error)
	LatestProfile(ctx context.Context, datasetID string) (ProfileRow, bool, error)
	MetricHistory(ctx context.Context, datasetID string, n int) ([]Metrics, error)
	Tunings(ctx context.Context, datasetID string) ([]TuningRow, error)
	// OpenIssues returns the dataset's open and acknowledged issues.
	OpenIssues(ctx context.Context, datasetID string) ([]quality.VerdictIssue, error)
}

// Datasets is what the reads need of the catalog: the visibility check.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// VerdictRow is a stored verdict.
type VerdictRow struct {
	ScanID    string
	Result    quality.VerdictResult
	CreatedAt time.Time
}

// ScoreRow is a stored score.
type ScoreRow struct {
	ScanID    string
	Seq       int
	Score     quality.Score
	CreatedAt time.Time
}

// SchemaChangeRow is a stored column change.
type SchemaChangeRow struct {
	ScanID            string
	Change            string
	Column            string
	FromType, ToType  *string
	SuggestedRenameTo *string
	IssueID           *string
	CreatedAt         time.Time
}

// ProfileRow is the latest stored profile.
type ProfileRow struct {
	ScanID          string
	Seq             int
	RowCount        int64
	RowCountExact   bool
	Depth           string
	SampleSize      int
	Columns         []ProfiledColumn
	LatestTimestamp *time.Time
	FreshnessColumn *string
	DurationMS      int
	ProfiledAt      time.Time
}

// ProfiledColumn is a column with its profile, as stored with a scan.
type ProfiledColumn struct {
	Name     string
	DataType string
	Class    string
	Profile  catalog.ColumnProfile
}

// TuningRow is a tuned anomaly threshold.
type TuningRow struct {
	Metric    string
	Column    string
	Threshold float64
	Ignored   int
	Resolved  int
	Silenced  bool
	// Retune is the metric's retune waiting for approval, nil without one.
	Retune *quality.Retune
}

// ReadService answers the dataset read operations built on scans.
type ReadService struct {
	reads     Reads
	datasets  Datasets
	conns     Connections
	contracts ContractEffects
	cfg       Config
}

// ContractEffects says what schema changes do to a dataset's active data contract.
type ContractEffects interface {
	// ContractEffects returns, for each set, none, compatible or breaking against the
	// dataset's active contract, or nil without one.
	ContractEffects(ctx context.Context, datasetID string, sets []SchemaChangeSet) ([]*string, error)
}

// NewReadService returns the read service; contracts may be nil (no contract effects).
func NewReadService(reads Reads, datasets Datasets, conns Connections, contracts ContractEffects, cfg Config) *ReadService {
	if cfg.FreshnessSLA == 0 {
		cfg.FreshnessSLA = 24 * time.Hour
	}
	return &ReadService{reads: reads, datasets: datasets, conns: conns, contracts: contracts, cfg: cfg}
}

// VerdictOut is a dataset's verdict with the rules that failed.
type VerdictOut struct {
	DatasetID    string
	Verdict      string
	ScanID       *string
	EvaluatedAt  *time.Time
	FailingRules []quality.RuleOutcome
	Reasons      []quality.VerdictReason
}

// Verdict returns the dataset's verdict (unknown before its first profile). Returns
// KindNotFound for a dataset the caller cannot see.
func (s *ReadService) Verdict(ctx context.Context, datasetID string) (VerdictOut, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return VerdictOut{}, err
	}
	out := VerdictOut{DatasetID: d.ID, Verdict: string(quality.VerdictUnknown), FailingRules: []quality.RuleOutcome{}, Reasons: []quality.VerdictReason{}}
	v, ok, err := s.reads.LatestVerdict(ctx, d.ID)
	if err != nil || !ok {
		return out, err
	}
	out.Verdict, out.ScanID, out.EvaluatedAt = string(v.Result.Verdict), &v.ScanID, &v.CreatedAt
	if v.Result.FailingRules != nil {
		out.FailingRules = v.Result.FailingRules
	}
	if v.Result.Reasons != nil {
		out.Reasons = v.Result.Reasons
	}
	return out, nil
}

// ScoreExplanation explains the latest score against the previous one.
type ScoreExplanation struct {
	DatasetID   string
	ScanID      *string
	Explanation quality.Explanation
	Dimensions  quality.Dimensions
	Meta        map[quality.Dimension]quality.DimensionMeta
	// OpenIssues are the dataset's standing issues now, counted by quality.CountStanding
	// as the verdict, the trust decision and readiness count them.
	OpenIssues quality.IssueCounts
}

// ExplainScore returns the drivers and notes of the latest score, and the standing
// issues. Returns KindNotFound for a dataset the caller cannot see.
func (s *ReadService) ExplainScore(ctx context.Context, datasetID string) (ScoreExplanation, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return ScoreExplanation{}, err
	}
	scores, err := s.reads.LatestScores(ctx, d.ID, 2)
	if err != nil {
		return ScoreExplanation{}, err
	}
	open, err := s.reads.OpenIssues(ctx, d.ID)
	if err != nil {
		return ScoreExplanation{}, err
	}
	out := ScoreExplanation{DatasetID: d.ID, Explanation: quality.Explanation{Drivers: []quality.Driver{}, Notes: []quality.Note{}},
		OpenIssues: quality.CountStanding(open)}
	if len(scores) == 0 {
		return out, nil
	}
	var prev *quality.Score
	if len(scores) > 1 {
		prev = &scores[1].Score
	}
	out.ScanID = &scores[0].ScanID
	out.Explanation = quality.Explain(scores[0].Score, prev)
	if out.Explanation.Drivers == nil {
		out.Explanation.Drivers = []quality.Driver{}
	}
	if out.Explanation.Notes == nil {
		out.Explanation.Notes = []quality.Note{}
	}
	out.Dimensions, out.Meta = scores[0].Score.Dimensions, scores[0].Score.Meta
	return out, nil
}

// SchemaChangeSet is the column changes one scan detected.
type SchemaChangeSet struct {
	ScanID           string
	DetectedAt       time.Time
	IssueID          *string
	Added            []ColumnChange
	Dropped          []ColumnChange
	TypeChanged      []ColumnChange
	SuggestedRenames []Rename
	// ContractEffect is none, compatible or breaking against the active data contract;
	// nil without one.
	ContractEffect *string
}

// ColumnChange is one column's change.
type ColumnChange struct {
	Column   string
	FromType *string
	ToType   *string
}

// Rename is a suggested rename: a dropped column that looks like an added one.
type Rename struct{ From, To string }

// SchemaChanges lists the dataset's schema changes per scan, newest first.
func (s *ReadService) SchemaChanges(ctx context.Context, datasetID string) ([]SchemaChangeSet, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	rows, err := s.reads.SchemaChanges(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	var out []SchemaChangeSet
	idx := map[string]int{}
	for _, r := range rows {
		i, ok := idx[r.ScanID]
		if !ok {
			i = len(out)
			idx[r.ScanID] = i
			out = append(out, SchemaChangeSet{ScanID: r.ScanID, DetectedAt: r.CreatedAt, IssueID: r.IssueID,
				Added: []ColumnChange{}, Dropped: []ColumnChange{}, TypeChanged: []ColumnChange{}, SuggestedRenames: []Rename{}})
		}
		set := &out[i]
		c := ColumnChange{Column: r.Column, FromType: r.FromType, ToType: r.ToType}
		switch r.Change {
		case "add":
			set.Added = append(set.Added, c)
		case "drop":
			set.Dropped = append(set.Dropped, c)
			if r.SuggestedRenameTo != nil {
				set.SuggestedRenames = append(set.SuggestedRenames, Rename{From: r.Column, To: *r.SuggestedRenameTo})
			}
		case "type_change":
			set.TypeChanged = append(set.TypeChanged, c)
		}
	}
	if s.contracts != nil && len(out) > 0 {
		effects, err := s.contracts.ContractEffects(ctx, d.ID, out)
		if err != nil {
			return nil, err
		}
		for i := range out {
			if i < len(effects) {
				out[i].ContractEffect = effects[i]
			}
		}
	}
	return out, nil
}

// Monitor is the state of one automatic monitor.
type Monitor struct {
	Enabled     bool
	Status      string // ok, anomaly, not_enough_history, not_measured
	Column      *string
	Last        *float64
	Median      *float64
	Threshold   float64
	HistorySize int
	LastScanAt  *time.Time
}

// AutoMonitors is the freshness, volume and schema monitor state.
type AutoMonitors struct {
	Freshness Monitor
	Volume    Monitor
	Schema    SchemaMonitor
}

// SchemaMonitor is the schema monitor's state.
type SchemaMonitor struct {
	Enabled      bool
	Columns      int
	LastChangeAt *time.Time
	Changes      int
}

// AutoMonitors reports the automatic monitors Vigia runs on every profiled dataset.
func (s *ReadService) AutoMonitors(ctx context.Context, datasetID string) (AutoMonitors, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return AutoMonitors{}, err
	}
	hist, err := s.reads.MetricHistory(ctx, d.ID, historyWindow+1)
	if err != nil {
		return AutoMonitors{}, err
	}
	thresholds := map[string]float64{}
	tunings, err := s.reads.Tunings(ctx, d.ID)
	if err != nil {
		return AutoMonitors{}, err
	}
	for _, t := range tunings {
		thresholds[metricKey(t.Metric, t.Column)] = t.Threshold
	}
	prof, ok, err := s.reads.LatestProfile(ctx, d.ID)
	if err != nil {
		return AutoMonitors{}, err
	}
	out := AutoMonitors{
		Freshness: monitor(string(quality.MetricFreshnessLag), hist, thresholds),
		Volume:    monitor(string(quality.MetricVolume), hist, thresholds),
		Schema:    SchemaMonitor{Enabled: true, Columns: len(d.Columns)},
	}
	if ok {
		out.Freshness.Column, out.Freshness.LastScanAt, out.Volume.LastScanAt = prof.FreshnessColumn, &prof.ProfiledAt, &prof.ProfiledAt
		if prof.FreshnessColumn == nil {
			out.Freshness.Enabled, out.Freshness.Status = false, "not_measured"
		}
	}
	changes, err := s.reads.SchemaChanges(ctx, d.ID)
	if err != nil {
		return AutoMonitors{}, err
	}
	scans := map[string]bool{}
	for _, c := range changes {
		if out.Schema.LastChangeAt == nil || c.CreatedAt.After(*out.Schema.LastChangeAt) {
			at := c.CreatedAt
			out.Schema.LastChangeAt = &at
		}
		scans[c.ScanID] = true
	}
	out.Schema.Changes = len(scans)
	return out, nil
}

func monitor(key string, hist []Metrics, thresholds map[string]float64) Monitor {
	m := Monitor{Enabled: true, Threshold: 3.5, Status: "not_measured"}
	if t, ok := thresholds[key]; ok {
		m.Threshold = t
	}
	var values []float64
	for _, h := range hist {
		if v, ok := h[key]; ok {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return m
	}
	last := values[len(values)-1]
	m.Last = &last
	m.HistorySize = len(values) - 1
	a := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.Metric(key), History: values[:len(values)-1], Value: last, Threshold: m.Threshold})
	switch {
	case !a.Evaluated || (a.ColdStart && !a.Anomalous):
		// During a cold start only gross changes are judged: nothing flagged says little.
		m.Status = "not_enough_history"
	case a.Anomalous:
		m.Status = "anomaly"
	default:
		m.Status = "ok"
	}
	if a.Evaluated && !a.ColdStart {
		med := a.Median
		m.Median = &med
	}
	return m
}

// Freshness is how the dataset's freshness is measured.
type Freshness struct {
	Column          *string
	LatestTimestamp *time.Time
	AssumedTimezone string
	Rule            string
	AgeHours        *float64
	SLAHours        float64
	Met             *bool
}

// Freshness reports the measuring column, the latest timestamp of the last profile in
// UTC, the zone assumed for timestamps without one, and the measuring rule.
func (s *ReadService) Freshness(ctx context.Context, datasetID string) (Freshness, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return Freshness{}, err
	}
	c, err := s.conns.Connection(ctx, d.ConnectionID)
	if err != nil {
		return Freshness{}, err
	}
	out := Freshness{AssumedTimezone: c.ScanTimezone, Rule: "max(column) of the most recent-looking timestamp column, compared with the freshness target",
		SLAHours: s.cfg.FreshnessSLA.Hours()}
	prof, ok, err := s.reads.LatestProfile(ctx, d.ID)
	if err != nil || !ok {
		return out, err
	}
	out.Column = prof.FreshnessColumn
	if prof.LatestTimestamp != nil {
		t := prof.LatestTimestamp.UTC()
		out.LatestTimestamp = &t
		age := prof.ProfiledAt.Sub(t).Hours()
		met := age <= out.SLAHours
		out.AgeHours, out.Met = &age, &met
	}
	return out, nil
}

// IncrementalProfiling says how profiles run.
type IncrementalProfiling struct {
	Enabled        bool
	TemporalColumn *string
	LastRun        *ProfileRun
}

// ProfileRun is how the last profile ran.
type ProfileRun struct {
	ScanID   string
	Mode     string // full
	Depth    string
	RowCount int64
	// RowCountExact is false when the profile read the first rows only.
	RowCountExact bool
	SampleSize    int
	DurationMS    int
	ProfiledAt    time.Time
}

// IncrementalProfiling reports the flag (profiles read the whole table: incremental
// profiling is off), the temporal column an incremental profile would use, and how the
// last profile ran.
func (s *ReadService) IncrementalProfiling(ctx context.Context, datasetID string) (IncrementalProfiling, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return IncrementalProfiling{}, err
	}
	out := IncrementalProfiling{}
	prof, ok, err := s.reads.LatestProfile(ctx, d.ID)
	if err != nil || !ok {
		return out, err
	}
	out.TemporalColumn = prof.FreshnessColumn
	out.LastRun = &ProfileRun{ScanID: prof.ScanID, Mode: "full", Depth: prof.Depth, RowCount: prof.RowCount, RowCountExact: prof.RowCountExact,
		SampleSize: prof.SampleSize, DurationMS: prof.DurationMS, ProfiledAt: prof.ProfiledAt}
	return out, nil
}

// Tuning lists the anomaly thresholds per metric and column: tuned ones and the
// calibrated default (3.5) of every monitored metric.
func (s *ReadService) Tuning(ctx context.Context, datasetID string) ([]quality.Tuning, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	tunings, err := s.reads.Tunings(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	lang := vigia.Lang(ctx)
	seen := map[string]bool{}
	out := []quality.Tuning{}
	for _, t := range tunings {
		seen[metricKey(t.Metric, t.Column)] = true
		tu := quality.TuningFor(quality.Metric(t.Metric), t.Column, t.Ignored, t.Resolved, t.Silenced, lang)
		tu.RetuneAwaitingApproval = t.Retune
		out = append(out, tu)
	}
	hist, err := s.reads.MetricHistory(ctx, d.ID, 1)
	if err != nil {
		return nil, err
	}
	if len(hist) > 0 {
		keys := make([]string, 0, len(hist[0]))
		for k := range hist[0] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !seen[k] {
				m, c := splitKey(k)
				out = append(out, quality.TuningFor(quality.Metric(m), c, 0, 0, false, lang))
			}
		}
	}
	return out, nil
}

// ParsingColumn is how well a text column's values parse as their kind.
type ParsingColumn struct {
	Column              string
	Kind                string
	Locale              string
	SuccessRate         float64
	Estimated           bool
	SampleSize          int
	Components          map[string]float64
	FailingMasks        []catalog.Mask
	SuggestionSignature string
}

// Parsing is the parsing report of a dataset.
type Parsing struct {
	Profiled bool
	Columns  []ParsingColumn
}

// Parsing reports, per text column with a semantic type, the share of sampled values
// that parse and validate, and the masks (digit 9, letter A, never values) that fail.
func (s *ReadService) Parsing(ctx context.Context, datasetID string) (Parsing, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return Parsing{}, err
	}
	prof, ok, err := s.reads.LatestProfile(ctx, d.ID)
	if err != nil || !ok {
		return Parsing{Columns: []ParsingColumn{}}, err
	}
	out := Parsing{Profiled: true, Columns: []ParsingColumn{}}
	locale := localeOf(d.Country().Effective)
	for _, c := range prof.Columns {
		sem := c.Profile.Semantic
		if sem == nil || sem.SampleSize == 0 {
			continue
		}
		pc := ParsingColumn{Column: c.Name, Kind: sem.Type, Locale: locale, Estimated: sem.Estimated, SampleSize: sem.SampleSize,
			SuggestionSignature: "parse_standardize:" + c.Name, FailingMasks: []catalog.Mask{}}
		pc.SuccessRate = float64(sem.Valid) / float64(sem.SampleSize)
		pc.Components = map[string]float64{"shape": float64(sem.Matches) / float64(sem.SampleSize)}
		if sem.Matches > 0 {
			pc.Components["valid"] = float64(sem.Valid) / float64(sem.Matches)
		}
		// The rarer masks of a typed column are the ones that fail to parse.
		if len(c.Profile.Masks) > 1 {
			pc.FailingMasks = append(pc.FailingMasks, c.Profile.Masks[1:]...)
		}
		out.Columns = append(out.Columns, pc)
	}
	return out, nil
}

func localeOf(country string) string {
	switch country {
	case "PT", "BR", "AO", "MZ":
		return "pt"
	case "ES", "MX", "AR", "CO", "CL":
		return "es"
	}
	return "en"
}

// DataCountry is a dataset's own, effective and source data country.
type DataCountry struct {
	Own       *string
	Effective string
	Source    string
}

// DataCountry returns the dataset's country object.
func (s *ReadService) DataCountry(ctx context.Context, datasetID string) (DataCountry, error) {
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return DataCountry{}, err
	}
	c := d.Country()
	return DataCountry{Own: d.DataCountry, Effective: c.Effective, Source: c.Source}, nil
}
