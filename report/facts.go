package report

import "time"

// Facts are what a report is written from, read once when it is generated and kept with
// it, so the Markdown and every export of a report say the same thing.
type Facts struct {
	Workspace string    `json:"workspace"`
	Scope     string    `json:"scope"`
	Since     time.Time `json:"since"`
	Until     time.Time `json:"until"`
	// Datasets counts the live datasets of the scope; Scored those with a score.
	Datasets int `json:"datasets"`
	Scored   int `json:"scored"`
	// Score is the mean of the datasets' latest scores; nil when none has one.
	Score *float64 `json:"score"`
	// Trend is the mean score per day with a scan in the window, oldest first.
	Trend      []TrendPoint    `json:"trend"`
	Dimensions []DimensionFact `json:"dimensions"`
	Verdicts   VerdictCounts   `json:"verdicts"`
	// Incidents opened in the window or still open, oldest first (at most MaxIncidents).
	Incidents     []IncidentFact `json:"incidents"`
	OpenIncidents int            `json:"open_incidents"`
	SLA           SLAFact        `json:"sla"`
	// TopIssues are the open issues, most severe and most detected first (at most MaxTopIssues).
	TopIssues  []IssueFact   `json:"top_issues"`
	OpenIssues int           `json:"open_issues"`
	Trust      TrustCounts   `json:"trust"`
	Contracts  ContractCount `json:"contracts"`
}

// Bounds of the lists in facts.
const (
	MaxIncidents = 20
	MaxTopIssues = 10
)

// TrendPoint is the mean score of one day.
type TrendPoint struct {
	Day   time.Time `json:"day"`
	Score float64   `json:"score"`
}

// DimensionFact is a quality dimension's mean over the datasets' latest scores.
type DimensionFact struct {
	Name  string   `json:"name"`
	Score *float64 `json:"score"`
}

// VerdictCounts counts the datasets by latest verdict.
type VerdictCounts struct {
	Pass    int `json:"pass"`
	Warn    int `json:"warn"`
	Fail    int `json:"fail"`
	Unknown int `json:"unknown"`
}

// IncidentFact is an incident with its blast radius.
type IncidentFact struct {
	ID         string     `json:"id"`
	Severity   string     `json:"severity"`
	Status     string     `json:"status"`
	Root       string     `json:"root"`
	Issues     int        `json:"issues"`
	Datasets   int        `json:"datasets"`
	Reach      int        `json:"reach"`
	OpenedAt   time.Time  `json:"opened_at"`
	ResolvedAt *time.Time `json:"resolved_at"`
}

// SLAFact is the attainment of the issues' resolution targets in the window: issues
// opened in the window (ignored as expected do not count), how many breached.
type SLAFact struct {
	InScope  int      `json:"in_scope"`
	Breached int      `json:"breached"`
	Pct      *float64 `json:"pct"`
}

// IssueFact is an open issue.
type IssueFact struct {
	Type       string `json:"type"`
	Severity   string `json:"severity"`
	Dataset    string `json:"dataset"`
	Column     string `json:"column"`
	Detections int    `json:"detections"`
}

// TrustCounts counts the trust decisions consumers saw in the window.
type TrustCounts struct {
	Trusted   int `json:"trusted"`
	Caution   int `json:"caution"`
	Untrusted int `json:"untrusted"`
	Unknown   int `json:"unknown"`
}

// ContractCount counts the datasets with an active contract and those whose last
// check found violations.
type ContractCount struct {
	Active    int `json:"active"`
	Violating int `json:"violating"`
}
