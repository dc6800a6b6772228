// Package labelquality checks the labels of datasets used to train models: a session
// configures the label column (and the feature columns), and Vigia measures on the source,
// counts only: rows and unlabelled rows, class balance (classes by rank, never their
// values), conflicting labels for identical features (groups and rows), and leakage hints
// (a feature that is a row identifier, one that determines the label, a feature named
// after the label). Behind the PII gate: a label column whose sensitivity is pii blocks
// the analysis, and pii feature columns are left out. The label-quality extra is a plan
// feature (plan.LabelQuality): available says whether the workspace's plan has it.
// Besides the runs a session asks for, the after-scan consumer "labels" analyses again
// every configured dataset the scan profiled (result trigger scan, with the scan's id),
// unless a blackout window of the connection is in force.
package labelquality

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/plan"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/sensitivity"
	"github.com/vigia-data/vigia/source"
)

// Bounds.
const (
	MaxFeatures = 30
	MaxClasses  = 50
	// Timeout bounds one analysis on the source.
	Timeout = 60 * time.Second
)

// Gate statuses.
const (
	GatePassed        = "passed"
	GateBlocked       = "blocked"
	GateNotConfigured = "not_configured"
)

// Leakage hint kinds.
const (
	HintIdentifier      = "identifier"
	HintDeterminesLabel = "determines_label"
	HintNameOverlap     = "name_overlap"
)

// Config is a dataset's label configuration.
type Config struct {
	LabelColumn    string    `json:"label_column"`
	FeatureColumns []string  `json:"feature_columns"`
	UpdatedBy      string    `json:"updated_by"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// ClassCount is one class of the label, by rank (most frequent first), never its value.
type ClassCount struct {
	Rank  int     `json:"rank"`
	Count int64   `json:"count"`
	Share float64 `json:"share"`
}

// Hint is a leakage hint on a feature column, with the counts behind it.
type Hint struct {
	Column string `json:"column"`
	Kind   string `json:"kind"`
	// Groups is the feature's distinct values among labelled rows; PureGroups those whose
	// rows all carry one label.
	Groups     int64 `json:"groups"`
	PureGroups int64 `json:"pure_groups"`
}

// Triggers of a result.
const (
	TriggerManual = "manual"
	TriggerScan   = "scan"
)

// Result is one analysis: counts only.
type Result struct {
	// Trigger is manual (a session's run or configuration) or scan (the after-scan
	// consumer, ScanID set); results stored before it existed read as manual.
	Trigger         string       `json:"trigger,omitempty"`
	ScanID          *string      `json:"scan_id,omitempty"`
	RanAt           time.Time    `json:"ran_at"`
	DurationMS      int64        `json:"duration_ms"`
	Rows            int64        `json:"rows"`
	UnlabelledRows  int64        `json:"unlabelled_rows"`
	DistinctClasses int64        `json:"distinct_classes"`
	Classes         []ClassCount `json:"classes"`
	// ClassesTruncated: more than MaxClasses classes; Classes holds the largest.
	ClassesTruncated bool     `json:"classes_truncated"`
	ImbalanceRatio   *float64 `json:"imbalance_ratio"`
	// ConflictGroups are the combinations of feature values labelled more than one way,
	// ConflictRows the rows in them.
	ConflictGroups int64    `json:"conflict_groups"`
	ConflictRows   int64    `json:"conflict_rows"`
	FeaturesUsed   []string `json:"features_used"`
	Leakage        []Hint   `json:"leakage"`
}

// Gate is the PII gate's verdict.
type Gate struct {
	Status string `json:"status"`
	// PIIColumns are the configured columns whose sensitivity is pii: the label blocks,
	// features are left out.
	PIIColumns []string `json:"pii_columns"`
}

// Report is what GET …/label-quality answers.
type Report struct {
	DatasetID  string
	Available  bool
	Config     *Config
	Gate       Gate
	LastResult *Result
}

// Store keeps configurations and last results.
type Store interface {
	LabelQuality(ctx context.Context, workspaceID, datasetID string) (*Config, *Result, error)
	SaveLabelConfig(ctx context.Context, workspaceID, datasetID string, c Config) error
	SaveLabelResult(ctx context.Context, workspaceID, datasetID string, r *Result) error
	// ScanLabelDatasets lists the datasets with a label configuration that the scan
	// profiled and whose stored result is not yet the scan's.
	ScanLabelDatasets(ctx context.Context, workspaceID, scanID string) ([]string, error)
	// SaveScanLabelResult stores the after-scan result of a scan (nil: the gate blocked),
	// recording the scan so that a retry does not analyse again.
	SaveScanLabelResult(ctx context.Context, workspaceID, datasetID, scanID string, r *Result) error
}

// Blackouts answers whether a blackout window of a connection is in force.
type Blackouts interface {
	// Refuse returns KindConflict (blackout_active) when a window of the connection is
	// in force at at, else nil.
	Refuse(ctx context.Context, workspaceID, connectionID string, at time.Time) error
}

// Datasets reads a dataset the caller can see.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Sensitivity reads a dataset's column sensitivity.
type Sensitivity interface {
	Dataset(ctx context.Context, datasetID string) (sensitivity.Report, error)
}

// Plans answers whether the caller's plan includes a feature.
type Plans interface {
	Require(ctx context.Context, f plan.Feature) error
}

// Connections opens a dataset's source.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Open(ctx context.Context, c connection.Connection, rec source.Recorder, label string) (source.Source, error)
}

// Service is the label-quality service.
type Service struct {
	store Store
	ds    Datasets
	sens  Sensitivity
	plans Plans
	conns Connections
	clock vigia.Clock
	// blackouts: no analysis during a blackout window of the dataset's connection;
	// nil: no windows.
	blackouts Blackouts
	log       *slog.Logger
}

// WithBlackouts makes the analyses respect the connections' blackout windows (a run
// asked during one answers 409 blackout_active; the after-scan consumer skips) and
// gives the consumer a logger.
func (s *Service) WithBlackouts(b Blackouts, log *slog.Logger) *Service {
	s.blackouts, s.log = b, log
	return s
}

// NewService returns the label-quality service.
func NewService(store Store, ds Datasets, sens Sensitivity, plans Plans, conns Connections, clock vigia.Clock) *Service {
	return &Service{store: store, ds: ds, sens: sens, plans: plans, conns: conns, clock: clock, log: slog.New(slog.DiscardHandler)}
}

func (s *Service) available(ctx context.Context) (bool, error) {
	err := s.plans.Require(ctx, plan.LabelQuality)
	if vigia.IsKind(err, vigia.KindPaymentRequired) {
		return false, nil
	}
	return err == nil, err
}

// Get reports a dataset's label quality: availability, configuration, gate, last result.
func (s *Service) Get(ctx context.Context, datasetID string) (Report, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Report{}, err
	}
	if _, err := s.ds.Dataset(ctx, datasetID); err != nil {
		return Report{}, err
	}
	avail, err := s.available(ctx)
	if err != nil {
		return Report{}, err
	}
	cfg, res, err := s.store.LabelQuality(ctx, p.WorkspaceID, datasetID)
	if err != nil {
		return Report{}, err
	}
	if res != nil && res.Trigger == "" {
		res.Trigger = TriggerManual
	}
	r := Report{DatasetID: datasetID, Available: avail, Config: cfg, LastResult: res, Gate: Gate{Status: GateNotConfigured, PIIColumns: []string{}}}
	if cfg != nil {
		if r.Gate, err = s.gate(ctx, datasetID, *cfg); err != nil {
			return Report{}, err
		}
	}
	return r, nil
}

func (s *Service) gate(ctx context.Context, datasetID string, cfg Config) (Gate, error) {
	rep, err := s.sens.Dataset(ctx, datasetID)
	if err != nil {
		return Gate{}, err
	}
	pii := map[string]bool{}
	for _, c := range rep.Columns {
		if c.Level == "pii" {
			pii[c.Name] = true
		}
	}
	g := Gate{Status: GatePassed, PIIColumns: []string{}}
	for _, c := range append([]string{cfg.LabelColumn}, cfg.FeatureColumns...) {
		if pii[c] {
			g.PIIColumns = append(g.PIIColumns, c)
		}
	}
	if pii[cfg.LabelColumn] {
		g.Status = GateBlocked
	}
	return g, nil
}

// Configure sets the label column and the feature columns (every other column when
// none is given, bounded by MaxFeatures) and runs the analysis (member or admin session,
// plan with the extra: else 402).
func (s *Service) Configure(ctx context.Context, datasetID, label string, features []string) (Report, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Report{}, err
	}
	d, err := s.ds.Dataset(ctx, datasetID)
	if err != nil {
		return Report{}, err
	}
	if err := s.plans.Require(ctx, plan.LabelQuality); err != nil {
		return Report{}, err
	}
	cols := map[string]catalog.Column{}
	for _, c := range d.Columns {
		cols[c.Name] = c
	}
	var fields []vigia.FieldError
	if _, ok := cols[label]; !ok {
		fields = append(fields, vigia.Field("column_unknown", nil, "label_column"))
	}
	if features == nil {
		for _, c := range d.Columns {
			if c.Name != label && !c.PrimaryKey && len(features) < MaxFeatures {
				features = append(features, c.Name)
			}
		}
	}
	if len(features) > MaxFeatures {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxFeatures}, "feature_columns"))
	}
	seen := map[string]bool{}
	for i, f := range features {
		if _, ok := cols[f]; !ok || f == label || seen[f] {
			fields = append(fields, vigia.Field("column_unknown", nil, "feature_columns", strconv.Itoa(i)))
			break
		}
		seen[f] = true
	}
	if len(fields) > 0 {
		return Report{}, vigia.Invalid(fields...)
	}
	if features == nil {
		features = []string{}
	}
	cfg := Config{LabelColumn: label, FeatureColumns: features, UpdatedBy: "user:" + p.UserID, UpdatedAt: s.clock.Now()}
	if err := s.store.SaveLabelConfig(ctx, p.WorkspaceID, datasetID, cfg); err != nil {
		return Report{}, err
	}
	return s.Run(ctx, datasetID)
}

// Run analyses the configured labels again (member or admin session; 409
// label_quality_not_configured without a configuration; 402 without the extra). A gate
// that blocks stores no result.
func (s *Service) Run(ctx context.Context, datasetID string) (Report, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Report{}, err
	}
	d, err := s.ds.Dataset(ctx, datasetID)
	if err != nil {
		return Report{}, err
	}
	if err := s.plans.Require(ctx, plan.LabelQuality); err != nil {
		return Report{}, err
	}
	cfg, _, err := s.store.LabelQuality(ctx, p.WorkspaceID, datasetID)
	if err != nil {
		return Report{}, err
	}
	if cfg == nil {
		return Report{}, &vigia.Error{Kind: vigia.KindConflict, Code: CodeNotConfigured, Key: "error.label_quality_not_configured"}
	}
	g, err := s.gate(ctx, datasetID, *cfg)
	if err != nil {
		return Report{}, err
	}
	var res *Result
	if g.Status == GatePassed {
		if s.blackouts != nil {
			if err := s.blackouts.Refuse(ctx, p.WorkspaceID, d.ConnectionID, s.clock.Now()); err != nil {
				return Report{}, err
			}
		}
		if res, err = s.analyse(ctx, d, *cfg, g.PIIColumns); err != nil {
			return Report{}, err
		}
		res.Trigger = TriggerManual
	}
	if err := s.store.SaveLabelResult(ctx, p.WorkspaceID, datasetID, res); err != nil {
		return Report{}, err
	}
	return s.Get(ctx, datasetID)
}

// AfterScan is the after-scan consumer "labels": every dataset with a label
// configuration that the scan profiled is analysed again, behind the PII gate (a
// blocking gate stores no result) and only when the workspace's plan has the extra.
// Nothing runs during a blackout window of the connection. A source that fails an
// analysis leaves the last result (logged); a retry skips the datasets already done.
func (s *Service) AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error {
	ids, err := s.store.ScanLabelDatasets(ctx, workspaceID, scanID)
	if err != nil || len(ids) == 0 {
		return err
	}
	if ok, err := s.available(ctx); err != nil || !ok {
		return err
	}
	if s.blackouts != nil {
		err := s.blackouts.Refuse(ctx, workspaceID, connectionID, s.clock.Now())
		if vigia.IsKind(err, vigia.KindConflict) {
			s.log.InfoContext(ctx, "label quality after scan skipped: blackout window", "scan_id", scanID)
			return nil
		}
		if err != nil {
			return err
		}
	}
	for _, id := range ids {
		d, err := s.ds.Dataset(ctx, id)
		if vigia.IsKind(err, vigia.KindNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		cfg, _, err := s.store.LabelQuality(ctx, workspaceID, id)
		if err != nil {
			return err
		}
		if cfg == nil {
			continue
		}
		g, err := s.gate(ctx, id, *cfg)
		if err != nil {
			return err
		}
		var res *Result
		if g.Status == GatePassed {
			res, err = s.analyse(ctx, d, *cfg, g.PIIColumns)
			if vigia.IsKind(err, vigia.KindInvalid) {
				s.log.WarnContext(ctx, "label quality after scan: the source failed", "scan_id", scanID, "dataset_id", id)
				continue
			}
			if err != nil {
				return err
			}
			sid := scanID
			res.Trigger, res.ScanID = TriggerScan, &sid
		}
		if err := s.store.SaveScanLabelResult(ctx, workspaceID, id, scanID, res); err != nil {
			return err
		}
	}
	return nil
}

// CodeNotConfigured is a run without a configuration.
const CodeNotConfigured = "label_quality_not_configured"

func (s *Service) analyse(ctx context.Context, d catalog.Dataset, cfg Config, pii []string) (*Result, error) {
	c, err := s.conns.Connection(ctx, d.ConnectionID)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	src, err := s.conns.Open(rctx, c, nil, "vigia label quality")
	if err != nil {
		return nil, sourceFailed(err)
	}
	defer src.Close()
	start := s.clock.Now()
	dl := rulesql.Dialect(src.Dialect())
	q := func(n string) string { return rulesql.QuoteIdent(dl, n) }
	table := q(d.Table)
	if dl != rulesql.SQLite && d.Schema != "" {
		table = q(d.Schema) + "." + table
	}
	label := q(cfg.LabelColumn)
	res := &Result{Classes: []ClassCount{}, Leakage: []Hint{}, FeaturesUsed: []string{}}
	for _, f := range cfg.FeatureColumns {
		if !slices.Contains(pii, f) {
			res.FeaturesUsed = append(res.FeaturesUsed, f)
		}
	}
	ints := func(stmt string, n int) ([]int64, error) {
		rows, err := src.QueryRows(rctx, stmt, 1)
		if err != nil {
			return nil, sourceFailed(err)
		}
		out := make([]int64, n)
		if len(rows) == 1 {
			for i := 0; i < n && i < len(rows[0]); i++ {
				if rows[0][i] != nil {
					out[i], _ = strconv.ParseInt(strings.TrimSuffix(*rows[0][i], ".0"), 10, 64)
				}
			}
		}
		return out, nil
	}
	v, err := ints(fmt.Sprintf("SELECT count(*), count(%s), count(DISTINCT %s) FROM %s", label, label, table), 3)
	if err != nil {
		return nil, err
	}
	res.Rows, res.UnlabelledRows, res.DistinctClasses = v[0], v[0]-v[1], v[2]
	labelled := v[1]
	rows, err := src.QueryRows(rctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s IS NOT NULL GROUP BY %s ORDER BY 1 DESC LIMIT %d",
		table, label, label, MaxClasses+1), MaxClasses+1)
	if err != nil {
		return nil, sourceFailed(err)
	}
	for i, r := range rows {
		if i == MaxClasses {
			res.ClassesTruncated = true
			break
		}
		n, _ := strconv.ParseInt(*r[0], 10, 64)
		share := 0.0
		if labelled > 0 {
			share = float64(n) / float64(labelled)
		}
		res.Classes = append(res.Classes, ClassCount{Rank: i + 1, Count: n, Share: round4(share)})
	}
	if len(res.Classes) >= 2 && !res.ClassesTruncated {
		ratio := round4(float64(res.Classes[0].Count) / float64(res.Classes[len(res.Classes)-1].Count))
		res.ImbalanceRatio = &ratio
	}
	if len(res.FeaturesUsed) > 0 {
		fs := make([]string, len(res.FeaturesUsed))
		for i, f := range res.FeaturesUsed {
			fs[i] = q(f)
		}
		v, err := ints(fmt.Sprintf("SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM %s WHERE %s IS NOT NULL GROUP BY %s HAVING count(DISTINCT %s) > 1) x",
			table, label, strings.Join(fs, ", "), label), 2)
		if err != nil {
			return nil, err
		}
		res.ConflictGroups, res.ConflictRows = v[0], v[1]
	}
	ln := strings.ToLower(cfg.LabelColumn)
	for _, f := range res.FeaturesUsed {
		v, err := ints(fmt.Sprintf("SELECT count(*), coalesce(sum(CASE WHEN k = 1 THEN 1 ELSE 0 END), 0), coalesce(sum(n), 0) FROM "+
			"(SELECT count(DISTINCT %s) AS k, count(*) AS n FROM %s WHERE %s IS NOT NULL AND %s IS NOT NULL GROUP BY %s) x",
			label, table, q(f), label, q(f)), 3)
		if err != nil {
			return nil, err
		}
		groups, pure, n := v[0], v[1], v[2]
		h := Hint{Column: f, Groups: groups, PureGroups: pure}
		fl := strings.ToLower(f)
		switch {
		case n > 1 && groups == n:
			h.Kind = HintIdentifier
		case groups >= 2 && pure == groups && res.DistinctClasses >= 2:
			h.Kind = HintDeterminesLabel
		case len(ln) >= 3 && (strings.Contains(fl, ln) || strings.Contains(ln, fl)):
			h.Kind = HintNameOverlap
		}
		if h.Kind != "" {
			res.Leakage = append(res.Leakage, h)
		}
	}
	res.RanAt = s.clock.Now()
	res.DurationMS = res.RanAt.Sub(start).Milliseconds()
	return res, nil
}

func round4(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

// sourceFailed is a source error as the caller sees it: 422 source_error, no detail.
func sourceFailed(err error) error {
	var se *source.Error
	code := "source_error"
	if errors.As(err, &se) && se.Reason == source.ReasonTimeout {
		code = "source_timeout"
	}
	return &vigia.Error{Kind: vigia.KindInvalid, Code: code, Key: "error.label_quality_source"}
}
