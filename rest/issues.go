package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/quality"
)

// WorkflowDeps are the services of rules, issues and teams.
type WorkflowDeps struct {
	Rules  RuleService
	Issues IssueService
	Teams  TeamService
}

// workflowRoutes registers rules, issues, teams and the workspace SLA targets.
func (s *Server) workflowRoutes() {
	s.ruleRoutes()
	s.issueRoutes()
	s.teamRoutes()
}

// IssueItemOut is an issue in lists: the contract's fields and the workflow's.
type IssueItemOut struct {
	IssueOut
	RuleID               *string    `json:"rule_id"`
	AwaitingVerification bool       `json:"awaiting_verification" doc:"A resolved rule issue the next scan evaluating the rule confirms or reopens"`
	Detections           int        `json:"detections"`
	AcknowledgedAt       *time.Time `json:"acknowledged_at"`
	ResolvedAt           *time.Time `json:"resolved_at"`
}

// IssueDetailOut is one issue with its history.
type IssueDetailOut struct {
	IssueItemOut
	Metric  *string           `json:"metric"`
	Column  *string           `json:"column"`
	Details map[string]any    `json:"details" doc:"Counts, column names and measures; never a value of the data"`
	History []IssueHistoryOut `json:"history" doc:"Oldest first"`
}

// IssueHistoryOut is one change of an issue with its origin.
type IssueHistoryOut struct {
	FromStatus *string   `json:"from_status"`
	ToStatus   string    `json:"to_status"`
	Event      string    `json:"event" doc:"opened, acknowledged, resolved, ignored, ignored_expected, reopened, assigned, auto_resolved, verified, verification_failed, rule_passed, rule_deleted"`
	Origin     string    `json:"origin" doc:"scan:<id>, user:<id>, ticket:<provider>:<key>, system:<what>, dbt:<invocation_id> (dbt:run without one)"`
	Note       string    `json:"note"`
	At         time.Time `json:"at"`
}

// IssueActionIn is the optional body of acknowledge, resolve and reopen.
type IssueActionIn struct {
	Note *string `json:"note,omitempty" maxLength:"1000"`
}

// IssueIgnoreIn is the optional body of ignore.
type IssueIgnoreIn struct {
	Note   *string `json:"note,omitempty" maxLength:"1000"`
	Reason *string `json:"reason,omitempty" enum:"expected" doc:"expected: ignored as expected (resolution_reason expected; anomalies tune their threshold)"`
}

// nullableID is a JSON field that may be a string, null or absent.
type nullableID struct {
	Set   bool
	Value *string
}

// UnmarshalJSON records that the field was sent and its value (nil for null).
func (n *nullableID) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n.Value = &s
	return nil
}

// Schema documents the field as a nullable string.
func (nullableID) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "string", Nullable: true, MaxLength: vigia.Ptr(64)}
}

// IssuePatchIn assigns an issue to a team (null: no team).
type IssuePatchIn struct {
	AssigneeTeamID nullableID `json:"assignee_team_id"`
}

// BoardOut is the issue board.
type BoardOut struct {
	Total     int              `json:"total"`
	Columns   []BoardColumnOut `json:"columns" doc:"open, acknowledged, resolved, ignored"`
	TeamCells []TeamCellOut    `json:"team_cells"`
}

// BoardColumnOut counts one status.
type BoardColumnOut struct {
	Status     string         `json:"status" enum:"open,acknowledged,resolved,ignored"`
	Count      int            `json:"count"`
	BySeverity map[string]int `json:"by_severity"`
}

// TeamCellOut counts one status of one team (null team_id: no team).
type TeamCellOut struct {
	Status   string  `json:"status" enum:"open,acknowledged,resolved,ignored"`
	TeamID   *string `json:"team_id"`
	TeamName *string `json:"team_name"`
	Count    int     `json:"count"`
}

// ExplanationOut is the explanation card of an issue.
type ExplanationOut struct {
	IssueID                string                  `json:"issue_id"`
	Type                   string                  `json:"type"`
	Kind                   string                  `json:"kind" enum:"anomaly,rule,schema_drift,other"`
	Title                  string                  `json:"title"`
	Metric                 *string                 `json:"metric"`
	Column                 *string                 `json:"column"`
	Observed               *float64                `json:"observed"`
	Median                 *float64                `json:"median" doc:"Median of the dataset's history"`
	MAD                    *float64                `json:"mad"`
	Z                      *float64                `json:"z"`
	Direction              *string                 `json:"direction"`
	HistorySize            *int                    `json:"history_size"`
	Threshold              *float64                `json:"threshold" doc:"The threshold of the scan that detected it"`
	CurrentThreshold       *float64                `json:"current_threshold" doc:"The threshold the next scan uses"`
	TunedThreshold         *float64                `json:"tuned_threshold" doc:"null without tuning"`
	TunedThresholdLabel    *string                 `json:"tuned_threshold_label" doc:"null without tuning"`
	NextOnIgnore           *float64                `json:"next_on_ignore"`
	IgnoredAsExpected      int                     `json:"ignored_as_expected"`
	Resolved               int                     `json:"resolved"`
	Silenced               bool                    `json:"silenced"`
	RetuneAwaitingApproval *quality.Retune         `json:"retune_awaiting_approval"`
	Details                map[string]any          `json:"details"`
	SLA                    *ExplanationSLAOut      `json:"sla"`
	Rule                   *ExplanationRuleCardOut `json:"rule"`
}

// ExplanationSLAOut says where an issue stands against its resolution target.
type ExplanationSLAOut struct {
	BreachedAt *time.Time `json:"breached_at"`
}

// ExplanationRuleCardOut is the rule of a rule issue.
type ExplanationRuleCardOut struct {
	RuleID    string   `json:"rule_id"`
	RuleType  *string  `json:"rule_type"`
	Observed  *float64 `json:"observed"`
	Threshold *float64 `json:"threshold"`
}

// SLAReportOut is one month of the issue workflow.
type SLAReportOut struct {
	Period   string        `json:"period"`
	GroupBy  string        `json:"group_by" enum:"domain,team,severity"`
	Timezone string        `json:"timezone" doc:"The workspace zone the month is read in"`
	From     time.Time     `json:"from"`
	To       time.Time     `json:"to"`
	AsOf     time.Time     `json:"as_of" doc:"Month end, or now for the current month"`
	Targets  SLATargetOut  `json:"targets"`
	Groups   []SLAGroupOut `json:"groups"`
	Total    SLAGroupOut   `json:"total" doc:"Every issue once, also one of datasets in several domains"`
}

// SLAGroupOut is one group of the SLA report (key null: no domain or no team).
type SLAGroupOut struct {
	Key        *string        `json:"key"`
	Name       *string        `json:"name"`
	Opened     int            `json:"opened"`
	Closed     int            `json:"closed"`
	Unresolved int            `json:"unresolved" doc:"Open or acknowledged at the month's end"`
	Breached   int            `json:"breached"`
	InScope    int            `json:"in_scope"`
	MTTA       PercentilesOut `json:"mtta" doc:"SLA clock hours to the first response"`
	MTTR       PercentilesOut `json:"mttr" doc:"SLA clock hours to the close"`
	Ageing     AgeingOut      `json:"ageing"`
}

// PercentilesOut are a median and a 90th percentile in SLA clock hours.
type PercentilesOut struct {
	MedianHours *float64 `json:"median_hours"`
	P90Hours    *float64 `json:"p90_hours"`
	Samples     int      `json:"samples"`
}

// AgeingOut counts unresolved issues by age since opening.
type AgeingOut struct {
	LT1D   int `json:"lt_1d"`
	D1To3  int `json:"d1_3"`
	D3To7  int `json:"d3_7"`
	D7To30 int `json:"d7_30"`
	GT30D  int `json:"gt_30d"`
}

// SLATargetOut are the workspace's resolution targets in hours (null: none).
type SLATargetOut struct {
	CriticalHours *int `json:"critical_hours"`
	WarningHours  *int `json:"warning_hours"`
	Default       bool `json:"default" doc:"true while the workspace uses the defaults (critical 24, warning 72)"`
}

// SLATargetIn replaces the resolution targets; both fields must be sent, null switches
// a target off.
type SLATargetIn struct {
	CriticalHours nullableInt `json:"critical_hours"`
	WarningHours  nullableInt `json:"warning_hours"`
}

// nullableInt is a JSON integer that may be null or absent.
type nullableInt struct {
	Set   bool
	Value *int
}

// UnmarshalJSON records that the field was sent and its value (nil for null).
func (n *nullableInt) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		return nil
	}
	var v int
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	n.Value = &v
	return nil
}

// Schema documents the field as a nullable integer.
func (nullableInt) Schema(huma.Registry) *huma.Schema {
	lo, hi := 1.0, float64(issue.MaxTargetHours)
	return &huma.Schema{Type: "integer", Nullable: true, Minimum: &lo, Maximum: &hi}
}

// RetuneOut is a tuning change waiting for (or given) an administrator's decision.
type RetuneOut struct {
	ID            string     `json:"id"`
	DatasetID     string     `json:"dataset_id"`
	Metric        string     `json:"metric"`
	Column        *string    `json:"column"`
	Action        string     `json:"action" enum:"silence"`
	FromThreshold float64    `json:"from_threshold"`
	Status        string     `json:"status" enum:"pending,approved,rejected"`
	RequestedAt   time.Time  `json:"requested_at"`
	DecidedAt     *time.Time `json:"decided_at"`
}

var issueIDParam = param{Name: "issue_id", In: "path", Type: "string", Required: true, MaxLen: 64}

var assigneeTeamParam = param{Name: "assignee_team", In: "query", Type: "string", MaxLen: 64, Desc: "A team id, mine (the caller's teams) or none"}

func (s *Server) issueRoutes() {
	s.register(operation{ID: "listIssues", Method: http.MethodGet, Path: "/api/v1/issues", Tag: "issues", List: true, ListDefault: issue.PageDefault,
		Summary: "Issues of the datasets the caller can see, newest first", Response: []IssueItemOut{},
		Params: []param{
			{Name: "severity", In: "query", Type: "string", MaxLen: 100, Desc: "critical, warning, info; comma list"},
			{Name: "status", In: "query", Type: "string", MaxLen: 100, Desc: "open, acknowledged, resolved, ignored; comma list"},
			{Name: "type", In: "query", Type: "string", MaxLen: 200, Desc: "schema_drift, anomaly, rule, ...; comma list"},
			{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64},
			assigneeTeamParam,
			{Name: "sla", In: "query", Type: "string", Enum: []string{"breached"}, Desc: "breached: only issues past their resolution target"},
		}}, s.handleIssueList)
	s.register(operation{ID: "issueBoard", Method: http.MethodGet, Path: "/api/v1/issues/board", Tag: "issues",
		Summary: "Counts per status and severity, and team_cells per status and team", Params: []param{assigneeTeamParam},
		Response: BoardOut{}}, s.handleIssueBoard)
	s.register(operation{ID: "issueSLAReport", Method: http.MethodGet, Path: "/api/v1/issues/sla-report", Tag: "issues",
		Summary: "One month per group and in total: opened, closed, unresolved, breached of in_scope, MTTA, MTTR, ageing",
		Desc: "Computed in SQL over the issues the caller can see. The month is read in the workspace's time zone; the SLA clock " +
			"runs while an issue is open or acknowledged. Issues ignored as expected count in opened and MTTA only. See docs/issues.md.",
		Params: []param{
			{Name: "period", In: "query", Type: "string", Required: true, MaxLen: 7, Desc: "YYYY-MM"},
			{Name: "group_by", In: "query", Type: "string", Enum: []string{issue.GroupByDomain, issue.GroupByTeam, issue.GroupBySeverity},
				Default: issue.GroupBySeverity},
		}, Response: SLAReportOut{}}, s.handleSLAReport)
	s.register(operation{ID: "getIssue", Method: http.MethodGet, Path: "/api/v1/issues/{issue_id}", Tag: "issues",
		Summary: "One issue with its history", Params: []param{issueIDParam}, Response: IssueDetailOut{}}, s.handleIssueGet)
	s.register(operation{ID: "assignIssue", Method: http.MethodPatch, Path: "/api/v1/issues/{issue_id}", Tag: "issues",
		Summary: "Assign an issue to a team, or to none with null (member or admin session)", Params: []param{issueIDParam},
		Body: IssuePatchIn{}, Response: IssueDetailOut{}}, s.handleIssueAssign)
	for _, a := range []struct{ path, action, summary string }{
		{"acknowledge", issue.ActionAcknowledge, "open → acknowledged"},
		{"resolve", issue.ActionResolve, "open or acknowledged → resolved; a rule's issue awaits the next scan's verification"},
		{"reopen", issue.ActionReopen, "resolved or ignored → open"},
	} {
		action := a.action
		s.register(operation{ID: a.path + "Issue", Method: http.MethodPost, Path: "/api/v1/issues/{issue_id}/" + a.path, Tag: "issues",
			Summary: a.summary + " (member or admin session)", Params: []param{issueIDParam}, Body: IssueActionIn{}, OptionalBody: true,
			Response: IssueDetailOut{}, Desc: "The change is in the issue's history with origin user:<id>.",
			Errors: map[int]string{http.StatusConflict: "invalid_transition from another status; issue_superseded when reopening would give a rule a second open issue"}},
			func(w http.ResponseWriter, r *http.Request, in *input) { s.handleIssueAction(w, r, in, action) })
	}
	s.register(operation{ID: "ignoreIssue", Method: http.MethodPost, Path: "/api/v1/issues/{issue_id}/ignore", Tag: "issues",
		Summary: "open or acknowledged → ignored; reason expected ignores it as expected (member or admin session)",
		Params:  []param{issueIDParam}, Body: IssueIgnoreIn{}, OptionalBody: true, Response: IssueDetailOut{},
		Desc: "Ignoring an anomaly as expected raises its metric's threshold by 0.5 (up to 10) from the next scan."}, s.handleIssueIgnore)
	s.register(operation{ID: "issueExplanation", Method: http.MethodGet, Path: "/api/v1/issues/{issue_id}/explanation", Tag: "issues",
		Summary: "Explanation card: an anomaly against its history, with tuned_threshold", Params: []param{issueIDParam},
		Response: ExplanationOut{}}, s.handleIssueExplanation)
	s.register(operation{ID: "getSLATargets", Method: http.MethodGet, Path: "/api/v1/workspace/sla-targets", Tag: "issues",
		Summary: "Resolution targets per severity, in hours", Response: SLATargetOut{}}, s.handleSLATargetsGet)
	s.register(operation{ID: "setSLATargets", Method: http.MethodPut, Path: "/api/v1/workspace/sla-targets", Tag: "issues",
		Summary: "Replace the resolution targets (admin session); null switches one off", Body: SLATargetIn{}, Response: SLATargetOut{}},
		s.handleSLATargetsPut)
	for _, d := range []struct {
		path    string
		approve bool
	}{{"approve", true}, {"reject", false}} {
		approve := d.approve
		s.register(operation{ID: d.path + "Retune", Method: http.MethodPost, Path: "/api/v1/datasets/{dataset_id}/tuning/retunes/{retune_id}/" + d.path,
			Tag: "datasets", Summary: "Decide a retune awaiting approval (admin session)", Response: RetuneOut{},
			Errors: map[int]string{http.StatusConflict: "retune_decided: the retune was already decided"},
			Params: []param{datasetIDParam, {Name: "retune_id", In: "path", Type: "string", Required: true, MaxLen: 64}}},
			func(w http.ResponseWriter, r *http.Request, in *input) { s.handleRetuneDecision(w, r, in, approve) })
	}
}

func toIssueItemOut(is issue.Issue) IssueItemOut {
	return IssueItemOut{IssueOut: IssueOut{ID: is.ID, DatasetID: is.DatasetID, DatasetName: is.DatasetName, Title: is.Title, Type: is.Type,
		Subtype: is.Subtype, Severity: is.Severity, Status: is.Status, ResolutionReason: is.ResolutionReason, SLABreachedAt: is.SLABreachedAt,
		AssigneeTeamID: is.AssigneeTeamID, AssigneeTeamName: is.AssigneeTeamName, CreatedAt: is.CreatedAt, UpdatedAt: is.UpdatedAt},
		RuleID: is.RuleID, AwaitingVerification: is.AwaitingVerification(), Detections: is.Detections,
		AcknowledgedAt: is.AcknowledgedAt, ResolvedAt: is.ResolvedAt}
}

func toIssueDetailOut(is issue.Issue) IssueDetailOut {
	out := IssueDetailOut{IssueItemOut: toIssueItemOut(is), Details: is.Details, History: make([]IssueHistoryOut, 0, len(is.History))}
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	if is.Metric != "" {
		out.Metric = &is.Metric
	}
	if is.Column != "" {
		out.Column = &is.Column
	}
	for _, h := range is.History {
		out.History = append(out.History, IssueHistoryOut{FromStatus: h.FromStatus, ToStatus: h.ToStatus, Event: h.Event, Origin: h.Origin,
			Note: h.Note, At: h.At})
	}
	return out
}

// commaList splits an optional comma list, dropping empty items.
func commaList(v *string) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, p := range strings.Split(*v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (s *Server) handleIssueList(w http.ResponseWriter, r *http.Request, in *input) {
	f := issue.Filter{Severities: commaList(in.String("severity")), Statuses: commaList(in.String("status")),
		Types: commaList(in.String("type")), DatasetID: in.String("dataset_id"), AssigneeTeam: in.String("assignee_team"),
		SLABreached: in.String("sla") != nil, Page: in.Page()}
	res, err := s.deps.Workflow.Issues.Issues(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]IssueItemOut, 0, len(res.Items))
	for _, is := range res.Items {
		out = append(out, toIssueItemOut(is))
	}
	list(w, res.Total, out)
}

func (s *Server) handleIssueBoard(w http.ResponseWriter, r *http.Request, in *input) {
	b, err := s.deps.Workflow.Issues.Board(r.Context(), in.String("assignee_team"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := BoardOut{Total: b.Total, Columns: make([]BoardColumnOut, 0, len(b.Columns)), TeamCells: make([]TeamCellOut, 0, len(b.TeamCells))}
	for _, c := range b.Columns {
		out.Columns = append(out.Columns, BoardColumnOut{Status: c.Status, Count: c.Count, BySeverity: c.BySeverity})
	}
	for _, c := range b.TeamCells {
		out.TeamCells = append(out.TeamCells, TeamCellOut{Status: c.Status, TeamID: c.TeamID, TeamName: c.TeamName, Count: c.Count})
	}
	writeJSON(w, http.StatusOK, out)
}

func toSLAGroupOut(g issue.SLAGroup) SLAGroupOut {
	return SLAGroupOut{Key: g.Key, Name: g.Name, Opened: g.Opened, Closed: g.Closed, Unresolved: g.Unresolved, Breached: g.Breached,
		InScope: g.InScope,
		MTTA:    PercentilesOut{MedianHours: g.MTTA.Median, P90Hours: g.MTTA.P90, Samples: g.MTTA.Samples},
		MTTR:    PercentilesOut{MedianHours: g.MTTR.Median, P90Hours: g.MTTR.P90, Samples: g.MTTR.Samples},
		Ageing:  AgeingOut{LT1D: g.Ageing.LT1D, D1To3: g.Ageing.D1To3, D3To7: g.Ageing.D3To7, D7To30: g.Ageing.D7To30, GT30D: g.Ageing.GT30D}}
}

func toSLATargetOut(t issue.Targets) SLATargetOut {
	return SLATargetOut{CriticalHours: t.CriticalHours, WarningHours: t.WarningHours, Default: t.Default}
}

func (s *Server) handleSLAReport(w http.ResponseWriter, r *http.Request, in *input) {
	period, groupBy := "", issue.GroupBySeverity
	if v := in.String("period"); v != nil {
		period = *v
	}
	if v := in.String("group_by"); v != nil {
		groupBy = *v
	}
	rep, err := s.deps.Workflow.Issues.SLAReport(r.Context(), period, groupBy)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := SLAReportOut{Period: rep.Period, GroupBy: rep.GroupBy, Timezone: rep.Timezone, From: rep.From, To: rep.To, AsOf: rep.AsOf,
		Targets: toSLATargetOut(rep.Targets), Groups: make([]SLAGroupOut, 0, len(rep.Groups)), Total: toSLAGroupOut(rep.Total)}
	for _, g := range rep.Groups {
		out.Groups = append(out.Groups, toSLAGroupOut(g))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleIssueGet(w http.ResponseWriter, r *http.Request, in *input) {
	is, err := s.deps.Workflow.Issues.Issue(r.Context(), in.Path("issue_id"))
	s.reply(w, r, err, func() any { return toIssueDetailOut(is) })
}

func (s *Server) handleIssueAssign(w http.ResponseWriter, r *http.Request, in *input) {
	var body IssuePatchIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !body.AssigneeTeamID.Set {
		s.writeError(w, r, invalid("missing", "assignee_team_id"))
		return
	}
	is, err := s.deps.Workflow.Issues.Assign(r.Context(), in.Path("issue_id"), body.AssigneeTeamID.Value)
	s.reply(w, r, err, func() any { return toIssueDetailOut(is) })
}

// decodeOptional reads an optional JSON body: no body is an empty one.
func decodeOptional(r *http.Request, in *input, dst any) error {
	if r.ContentLength == 0 {
		return nil
	}
	return in.Decode(dst, 16<<10)
}

func (s *Server) handleIssueAction(w http.ResponseWriter, r *http.Request, in *input, action string) {
	var body IssueActionIn
	if err := decodeOptional(r, in, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	note := ""
	if body.Note != nil {
		note = *body.Note
	}
	is, err := s.deps.Workflow.Issues.Transition(r.Context(), in.Path("issue_id"), action, note)
	s.reply(w, r, err, func() any { return toIssueDetailOut(is) })
}

func (s *Server) handleIssueIgnore(w http.ResponseWriter, r *http.Request, in *input) {
	var body IssueIgnoreIn
	if err := decodeOptional(r, in, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	action := issue.ActionIgnore
	if body.Reason != nil {
		if *body.Reason != issue.ReasonExpected {
			s.writeError(w, r, invalid("enum", "reason"))
			return
		}
		action = issue.ActionIgnoreExpected
	}
	note := ""
	if body.Note != nil {
		note = *body.Note
	}
	is, err := s.deps.Workflow.Issues.Transition(r.Context(), in.Path("issue_id"), action, note)
	s.reply(w, r, err, func() any { return toIssueDetailOut(is) })
}

func (s *Server) handleIssueExplanation(w http.ResponseWriter, r *http.Request, in *input) {
	e, err := s.deps.Workflow.Issues.Explain(r.Context(), in.Path("issue_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := ExplanationOut{IssueID: e.Issue.ID, Type: e.Issue.Type, Kind: e.Kind, Title: e.Issue.Title, Metric: e.Metric, Column: e.Column,
		Observed: e.Observed, Median: e.Median, MAD: e.MAD, Z: e.Z, Direction: e.Direction, HistorySize: e.HistorySize,
		Threshold: e.Threshold, CurrentThreshold: e.CurrentThreshold, TunedThreshold: e.TunedThreshold,
		TunedThresholdLabel: e.TunedThresholdLabel, NextOnIgnore: e.NextOnIgnore, IgnoredAsExpected: e.IgnoredAsExpected,
		Resolved: e.Resolved, Silenced: e.Silenced, Details: e.Details, SLA: &ExplanationSLAOut{BreachedAt: e.Issue.SLABreachedAt}}
	if rt := e.RetuneAwaitingApproval; rt != nil {
		out.RetuneAwaitingApproval = &quality.Retune{ID: rt.ID, Action: rt.Action, FromThreshold: rt.FromThreshold, IssueID: rt.IssueID,
			RequestedBy: rt.RequestedBy, RequestedAt: rt.RequestedAt}
	}
	if e.Issue.RuleID != nil {
		card := &ExplanationRuleCardOut{RuleID: *e.Issue.RuleID, RuleType: e.Issue.Subtype}
		if v, ok := e.Details["observed"].(float64); ok {
			card.Observed = &v
		}
		if v, ok := e.Details["threshold"].(float64); ok {
			card.Threshold = &v
		}
		out.Rule = card
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleSLATargetsGet(w http.ResponseWriter, r *http.Request, _ *input) {
	t, err := s.deps.Workflow.Issues.SLATargets(r.Context())
	s.reply(w, r, err, func() any { return toSLATargetOut(t) })
}

func (s *Server) handleSLATargetsPut(w http.ResponseWriter, r *http.Request, in *input) {
	var body SLATargetIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	var missing []vigia.FieldError
	if !body.CriticalHours.Set {
		missing = append(missing, vigia.Field("missing", nil, "critical_hours"))
	}
	if !body.WarningHours.Set {
		missing = append(missing, vigia.Field("missing", nil, "warning_hours"))
	}
	if len(missing) > 0 {
		s.writeError(w, r, vigia.Invalid(missing...))
		return
	}
	t, err := s.deps.Workflow.Issues.SetSLATargets(r.Context(), issue.Targets{CriticalHours: body.CriticalHours.Value, WarningHours: body.WarningHours.Value})
	s.reply(w, r, err, func() any { return toSLATargetOut(t) })
}

func (s *Server) handleRetuneDecision(w http.ResponseWriter, r *http.Request, in *input, approve bool) {
	rt, err := s.deps.Workflow.Issues.DecideRetune(r.Context(), in.Path("dataset_id"), in.Path("retune_id"), approve)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := RetuneOut{ID: rt.ID, DatasetID: rt.DatasetID, Metric: rt.Metric, Action: rt.Action, FromThreshold: rt.FromThreshold,
		Status: rt.Status, RequestedAt: rt.RequestedAt, DecidedAt: rt.DecidedAt}
	if rt.Column != "" {
		out.Column = &rt.Column
	}
	writeJSON(w, http.StatusOK, out)
}
