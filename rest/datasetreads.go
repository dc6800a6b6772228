package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

// ScoreOut is one scan's score with its dimensions.
type ScoreOut struct {
	ScanID     string              `json:"scan_id"`
	Score      *float64            `json:"score"`
	Dimensions map[string]*float64 `json:"dimensions" doc:"completude, unicidade, validade, atualidade, consistencia (0-100; null when not computable)"`
	CreatedAt  time.Time           `json:"created_at"`
}

// IssueOut is an issue as lists show it.
type IssueOut struct {
	ID               string     `json:"id"`
	DatasetID        string     `json:"dataset_id"`
	DatasetName      string     `json:"dataset_name"`
	Title            string     `json:"title"`
	Type             string     `json:"type"`
	Subtype          *string    `json:"subtype"`
	Severity         string     `json:"severity" enum:"info,warning,critical"`
	Status           string     `json:"status" enum:"open,acknowledged,resolved,ignored"`
	ResolutionReason *string    `json:"resolution_reason"`
	SLABreachedAt    *time.Time `json:"sla_breached_at"`
	AssigneeTeamID   *string    `json:"assignee_team_id"`
	AssigneeTeamName *string    `json:"assignee_team_name"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
}

// DatasetVerdictOut is a dataset's verdict with the rules that failed.
type DatasetVerdictOut struct {
	DatasetID    string                  `json:"dataset_id"`
	Verdict      string                  `json:"verdict" enum:"pass,warn,fail,unknown"`
	ScanID       *string                 `json:"scan_id"`
	EvaluatedAt  *time.Time              `json:"evaluated_at"`
	FailingRules []quality.RuleOutcome   `json:"failing_rules"`
	Reasons      []quality.VerdictReason `json:"reasons"`
}

// ScoreExplainOut lists the drivers and notes of the latest score.
type ScoreExplainOut struct {
	DatasetID      string                                      `json:"dataset_id"`
	ScanID         *string                                     `json:"scan_id"`
	Score          *float64                                    `json:"score"`
	PreviousScore  *float64                                    `json:"previous_score"`
	Dimensions     quality.Dimensions                          `json:"dimensions"`
	DimensionsMeta map[quality.Dimension]quality.DimensionMeta `json:"dimensions_meta"`
	Drivers        []quality.Driver                            `json:"drivers"`
	Notes          []quality.Note                              `json:"notes"`
	OpenIssues     quality.IssueCounts                         `json:"open_issues" doc:"The dataset's standing issues now, counted as the verdict, the trust decision and readiness count them"`
}

// SchemaChangeOut is what one scan found changed in the columns.
type SchemaChangeOut struct {
	ScanID           string            `json:"scan_id"`
	DetectedAt       time.Time         `json:"detected_at"`
	IssueID          *string           `json:"issue_id"`
	Added            []ColumnChangeOut `json:"added"`
	Dropped          []ColumnChangeOut `json:"dropped"`
	TypeChanged      []ColumnChangeOut `json:"type_changed"`
	SuggestedRenames []RenameOut       `json:"suggested_renames"`
	DownstreamImpact *int              `json:"downstream_impact" doc:"Downstream datasets (null until lineage is known)"`
	ContractEffect   *string           `json:"contract_effect" doc:"What the changes do to the active data contract: none, compatible (columns added, a contract column's type widened) or breaking (a contract column dropped, its type narrowed or converted); null without an active contract"`
}

// ColumnChangeOut is one column's change.
type ColumnChangeOut struct {
	Column   string  `json:"column"`
	FromType *string `json:"from_type"`
	ToType   *string `json:"to_type"`
}

// RenameOut is a suggested rename.
type RenameOut struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// MonitorOut is an automatic monitor's state.
type MonitorOut struct {
	Enabled     bool       `json:"enabled"`
	Status      string     `json:"status" enum:"ok,anomaly,not_enough_history,not_measured"`
	Column      *string    `json:"column,omitempty"`
	Last        *float64   `json:"last"`
	Median      *float64   `json:"median"`
	Threshold   float64    `json:"threshold"`
	HistorySize int        `json:"history_size"`
	LastScanAt  *time.Time `json:"last_scan_at"`
}

// AutoMonitorsOut is the freshness, volume and schema monitor state.
type AutoMonitorsOut struct {
	Freshness MonitorOut       `json:"freshness"`
	Volume    MonitorOut       `json:"volume"`
	Schema    SchemaMonitorOut `json:"schema"`
}

// SchemaMonitorOut is the schema monitor's state.
type SchemaMonitorOut struct {
	Enabled      bool       `json:"enabled"`
	Columns      int        `json:"columns"`
	Changes      int        `json:"changes"`
	LastChangeAt *time.Time `json:"last_change_at"`
}

// FreshnessOut says how freshness is measured.
type FreshnessOut struct {
	Column          *string    `json:"column"`
	LatestTimestamp *time.Time `json:"latest_timestamp" doc:"UTC"`
	AssumedTimezone string     `json:"assumed_timezone" doc:"Zone assumed for timestamps without one"`
	Rule            string     `json:"rule"`
	AgeHours        *float64   `json:"age_hours"`
	SLAHours        float64    `json:"sla_hours"`
	Met             *bool      `json:"met"`
}

// IncrementalProfilingOut says how profiles run.
type IncrementalProfilingOut struct {
	Enabled        bool           `json:"enabled"`
	TemporalColumn *string        `json:"temporal_column"`
	LastRun        *ProfileRunOut `json:"last_run"`
}

// ProfileRunOut is how the last profile ran.
type ProfileRunOut struct {
	ScanID   string `json:"scan_id"`
	Mode     string `json:"mode"`
	Depth    string `json:"depth" enum:"basic,standard,deep"`
	RowCount int64  `json:"row_count"`
	// RowCountExact: see DatasetDetailOut.
	RowCountExact bool      `json:"row_count_exact" doc:"False when the profile read the first rows only (depth basic of a cost-guarded view): row_count is then the rows read, a lower bound"`
	SampleSize    int       `json:"sample_size"`
	DurationMS    int       `json:"duration_ms"`
	ProfiledAt    time.Time `json:"profiled_at"`
}

// ParsingOut is the parsing report.
type ParsingOut struct {
	Profiled bool               `json:"profiled"`
	Columns  []ParsingColumnOut `json:"columns"`
}

// ParsingColumnOut is one column's parsing.
type ParsingColumnOut struct {
	Column              string             `json:"column"`
	Kind                string             `json:"kind"`
	Locale              string             `json:"locale" enum:"pt,es,en"`
	SuccessRate         float64            `json:"success_rate"`
	Estimated           bool               `json:"estimated"`
	SampleSize          int                `json:"sample_size"`
	Components          map[string]float64 `json:"components"`
	FailingMasks        []MaskOut          `json:"failing_masks" doc:"digit 9, letter A; never values"`
	SuggestionSignature string             `json:"suggestion_signature"`
}

// DataCountryOut is a dataset's country object.
type DataCountryOut struct {
	Own       *string `json:"own"`
	Effective string  `json:"effective"`
	Source    string  `json:"source" enum:"dataset,connection,workspace"`
}

var datasetIDParam = param{Name: "dataset_id", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) datasetReadRoutes() {
	reg := func(id, suffix, summary string, resp any, h func(w http.ResponseWriter, r *http.Request, in *input)) {
		s.register(operation{ID: id, Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}" + suffix, Tag: "datasets",
			Summary: summary, Params: []param{datasetIDParam}, Response: resp}, h)
	}
	reg("datasetVerdict", "/verdict", "Verdict with the rules that failed", DatasetVerdictOut{}, s.handleVerdict)
	reg("datasetScoreExplain", "/score/explain", "Drivers and notes of the latest score", ScoreExplainOut{}, s.handleScoreExplain)
	reg("datasetSchemaChanges", "/schema-changes", "Added, dropped and type-changed columns per scan, with suggested renames", []SchemaChangeOut{}, s.handleSchemaChanges)
	reg("datasetAutoMonitors", "/auto-monitors", "Freshness, volume and schema monitor state", AutoMonitorsOut{}, s.handleAutoMonitors)
	reg("datasetFreshness", "/freshness", "How freshness is measured and the latest timestamp", FreshnessOut{}, s.handleFreshness)
	reg("datasetIncrementalProfiling", "/incremental-profiling", "Incremental flag, temporal column, how the last profile ran", IncrementalProfilingOut{}, s.handleIncremental)
	reg("datasetTuning", "/tuning", "Anomaly thresholds per metric and column", []quality.Tuning{}, s.handleTuning)
	reg("datasetParsing", "/parsing", "How text columns parse as their semantic type", ParsingOut{}, s.handleParsing)
	reg("datasetDataCountry", "/data-country", "Own, effective and source data country", DataCountryOut{}, s.handleDataCountry)
}

func (s *Server) handleVerdict(w http.ResponseWriter, r *http.Request, in *input) {
	v, err := s.deps.ScanReads.Verdict(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, DatasetVerdictOut{DatasetID: v.DatasetID, Verdict: v.Verdict, ScanID: v.ScanID, EvaluatedAt: v.EvaluatedAt,
		FailingRules: v.FailingRules, Reasons: v.Reasons})
}

func (s *Server) handleScoreExplain(w http.ResponseWriter, r *http.Request, in *input) {
	e, err := s.deps.ScanReads.ExplainScore(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ScoreExplainOut{DatasetID: e.DatasetID, ScanID: e.ScanID, Score: e.Explanation.Score,
		PreviousScore: e.Explanation.PreviousScore, Dimensions: e.Dimensions, DimensionsMeta: e.Meta,
		Drivers: e.Explanation.Drivers, Notes: e.Explanation.Notes, OpenIssues: e.OpenIssues})
}

func (s *Server) handleSchemaChanges(w http.ResponseWriter, r *http.Request, in *input) {
	sets, err := s.deps.ScanReads.SchemaChanges(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]SchemaChangeOut, 0, len(sets))
	conv := func(cs []scan.ColumnChange) []ColumnChangeOut {
		o := make([]ColumnChangeOut, 0, len(cs))
		for _, c := range cs {
			o = append(o, ColumnChangeOut{Column: c.Column, FromType: c.FromType, ToType: c.ToType})
		}
		return o
	}
	for _, st := range sets {
		so := SchemaChangeOut{ScanID: st.ScanID, DetectedAt: st.DetectedAt, IssueID: st.IssueID, Added: conv(st.Added),
			Dropped: conv(st.Dropped), TypeChanged: conv(st.TypeChanged), SuggestedRenames: []RenameOut{}, ContractEffect: st.ContractEffect}
		for _, rn := range st.SuggestedRenames {
			so.SuggestedRenames = append(so.SuggestedRenames, RenameOut{From: rn.From, To: rn.To})
		}
		out = append(out, so)
	}
	writeJSON(w, http.StatusOK, out)
}

func toMonitorOut(m scan.Monitor) MonitorOut {
	return MonitorOut{Enabled: m.Enabled, Status: m.Status, Column: m.Column, Last: m.Last, Median: m.Median, Threshold: m.Threshold,
		HistorySize: m.HistorySize, LastScanAt: m.LastScanAt}
}

func (s *Server) handleAutoMonitors(w http.ResponseWriter, r *http.Request, in *input) {
	m, err := s.deps.ScanReads.AutoMonitors(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, AutoMonitorsOut{Freshness: toMonitorOut(m.Freshness), Volume: toMonitorOut(m.Volume),
		Schema: SchemaMonitorOut{Enabled: m.Schema.Enabled, Columns: m.Schema.Columns, Changes: m.Schema.Changes, LastChangeAt: m.Schema.LastChangeAt}})
}

func (s *Server) handleFreshness(w http.ResponseWriter, r *http.Request, in *input) {
	f, err := s.deps.ScanReads.Freshness(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, FreshnessOut{Column: f.Column, LatestTimestamp: f.LatestTimestamp, AssumedTimezone: f.AssumedTimezone,
		Rule: f.Rule, AgeHours: f.AgeHours, SLAHours: f.SLAHours, Met: f.Met})
}

func (s *Server) handleIncremental(w http.ResponseWriter, r *http.Request, in *input) {
	p, err := s.deps.ScanReads.IncrementalProfiling(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := IncrementalProfilingOut{Enabled: p.Enabled, TemporalColumn: p.TemporalColumn}
	if p.LastRun != nil {
		lr := p.LastRun
		out.LastRun = &ProfileRunOut{ScanID: lr.ScanID, Mode: lr.Mode, Depth: lr.Depth, RowCount: lr.RowCount, RowCountExact: lr.RowCountExact, SampleSize: lr.SampleSize,
			DurationMS: lr.DurationMS, ProfiledAt: lr.ProfiledAt}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleTuning(w http.ResponseWriter, r *http.Request, in *input) {
	t, err := s.deps.ScanReads.Tuning(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return t })
}

func (s *Server) handleParsing(w http.ResponseWriter, r *http.Request, in *input) {
	p, err := s.deps.ScanReads.Parsing(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := ParsingOut{Profiled: p.Profiled, Columns: make([]ParsingColumnOut, 0, len(p.Columns))}
	for _, c := range p.Columns {
		pc := ParsingColumnOut{Column: c.Column, Kind: c.Kind, Locale: c.Locale, SuccessRate: c.SuccessRate, Estimated: c.Estimated,
			SampleSize: c.SampleSize, Components: c.Components, SuggestionSignature: c.SuggestionSignature, FailingMasks: []MaskOut{}}
		for _, m := range c.FailingMasks {
			pc.FailingMasks = append(pc.FailingMasks, MaskOut{Mask: m.Mask, Count: m.Count})
		}
		out.Columns = append(out.Columns, pc)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleDataCountry(w http.ResponseWriter, r *http.Request, in *input) {
	c, err := s.deps.ScanReads.DataCountry(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return DataCountryOut{Own: c.Own, Effective: c.Effective, Source: c.Source} })
}

func toIssueOut(is catalog.IssueSummary) IssueOut {
	return IssueOut{ID: is.ID, DatasetID: is.DatasetID, DatasetName: is.DatasetName, Title: is.Title, Type: is.Type, Subtype: is.Subtype,
		Severity: is.Severity, Status: is.Status, ResolutionReason: is.ResolutionReason, SLABreachedAt: is.SLABreachedAt,
		AssigneeTeamID: is.AssigneeTeamID, AssigneeTeamName: is.AssigneeTeamName, CreatedAt: is.CreatedAt, UpdatedAt: is.UpdatedAt}
}
