package notify

import (
	"slices"
	"time"
)

// severityRank orders alert severities.
var severityRank = map[string]int{SeverityInfo: 1, SeverityWarning: 2, SeverityCritical: 3}

// AtLeastSeverity reports whether severity reaches min (an unknown severity does not).
func AtLeastSeverity(severity, min string) bool {
	r, ok := severityRank[severity]
	return ok && r >= severityRank[min]
}

// Wants reports whether the channel subscribed to an event kind.
func (c Channel) Wants(kind string) bool { return slices.Contains(c.EventKinds, kind) }

// autoMonitorTypes are the issue types the automatic monitors (freshness, volume,
// schema and the other profile metrics) open; rule issues are not among them.
var autoMonitorTypes = []string{"anomaly", "schema_drift"}

// IsAutoMonitor reports whether an issue comes from an automatic monitor rather than
// from a rule someone wrote.
func IsAutoMonitor(issueType string, ruleID *string) bool {
	return ruleID == nil && slices.Contains(autoMonitorTypes, issueType)
}

// CanSee reports whether the channel may carry news of a dataset: a workspace channel
// carries everything (only admins may make one when restricted-access domains exist); a
// team channel only what its team reads (the rule of vigia_dataset_visible: every
// restricted domain of the dataset needs a grant of the team).
func (c Channel) CanSee(d DatasetFacts, teamGrants map[string][]string) bool {
	if c.TeamID == nil {
		return true
	}
	grants := teamGrants[*c.TeamID]
	for _, dom := range d.RestrictedDomainIDs {
		if !slices.Contains(grants, dom) {
			return false
		}
	}
	return true
}

// InScope reports whether a dataset matches the channel's asset scope: any listed
// domain, connection or dataset (everything when none is listed).
func (s Scope) InScope(d DatasetFacts) bool {
	if !s.assetScoped() {
		return true
	}
	if slices.Contains(s.DatasetIDs, d.ID) || slices.Contains(s.ConnectionIDs, d.ConnectionID) {
		return true
	}
	for _, dom := range d.DomainIDs {
		if slices.Contains(s.DomainIDs, dom) {
			return true
		}
	}
	return false
}

// WantsAlert reports whether the channel receives an alert of an issue on dataset d:
// it subscribed to alerts, the severity reaches its minimum, the dataset is in scope
// and visible to it, the issue type is among its issue types (when it lists some) and
// automatic monitors are included unless it excluded them.
func (c Channel) WantsAlert(is AlertIssue, d DatasetFacts, teamGrants map[string][]string) bool {
	if !c.Wants(EventKindAlerts) || !AtLeastSeverity(is.Severity, c.MinSeverity) {
		return false
	}
	if len(c.Scope.IssueTypes) > 0 && !slices.Contains(c.Scope.IssueTypes, is.Type) {
		return false
	}
	if !c.Scope.IncludeAutoMonitors && IsAutoMonitor(is.Type, is.RuleID) {
		return false
	}
	return c.Scope.InScope(d) && c.CanSee(d, teamGrants)
}

// WantsDatasetState reports whether the channel receives a state event (verdict or
// policy) of dataset d: minimum severity and issue types do not filter state events.
func (c Channel) WantsDatasetState(kind string, d DatasetFacts, teamGrants map[string][]string) bool {
	return c.Wants(kind) && c.Scope.InScope(d) && c.CanSee(d, teamGrants)
}

// DomainFacts is what matching needs of a domain.
type DomainFacts struct {
	ID         string
	Name       string
	Restricted bool
}

// WantsDomainState reports whether the channel receives a domain's verdict change:
// the domain is in its domain scope, or one of the changed datasets matches its
// scope; a team channel needs a grant on a restricted domain.
func (c Channel) WantsDomainState(dom DomainFacts, changed []DatasetFacts, teamGrants map[string][]string) bool {
	if !c.Wants(EventKindDomainVerdictChanged) {
		return false
	}
	if c.TeamID != nil && dom.Restricted && !slices.Contains(teamGrants[*c.TeamID], dom.ID) {
		return false
	}
	if !c.Scope.assetScoped() || slices.Contains(c.Scope.DomainIDs, dom.ID) {
		return true
	}
	for _, d := range changed {
		if c.Scope.InScope(d) {
			return true
		}
	}
	return false
}

// ConsumerNoticeDatasets returns the datasets of an untrusted-read notice the channel
// receives: the notice goes, as a warning, to channels that receive alerts and whose
// minimum severity lets a warning through, never to channels filtered by issue types,
// and carries only the datasets in the channel's scope (none: the channel gets nothing).
func (c Channel) ConsumerNoticeDatasets(ds []DatasetFacts, teamGrants map[string][]string) []DatasetFacts {
	if !c.Wants(EventKindAlerts) || !AtLeastSeverity(SeverityWarning, c.MinSeverity) || len(c.Scope.IssueTypes) > 0 {
		return nil
	}
	var out []DatasetFacts
	for _, d := range ds {
		if c.Scope.InScope(d) && c.CanSee(d, teamGrants) {
			out = append(out, d)
		}
	}
	return out
}

// Active reports whether the mute holds at now.
func (m Mute) Active(now time.Time) bool { return now.Before(m.EndsAt) && !now.Before(m.CreatedAt) }

func (m Mute) coversAsset(d DatasetFacts) bool {
	switch m.Scope {
	case MuteWorkspace:
		return true
	case MuteConnection:
		return m.ConnectionID != nil && *m.ConnectionID == d.ConnectionID
	case MuteDataset:
		return m.DatasetID != nil && *m.DatasetID == d.ID
	}
	return false
}

// Mutes is the set of a workspace's mutes at one instant.
type Mutes []Mute

// active keeps the mutes that hold at now.
func (ms Mutes) active(now time.Time) Mutes {
	var out Mutes
	for _, m := range ms {
		if m.Active(now) {
			out = append(out, m)
		}
	}
	return out
}

func ids(ms Mutes) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// HoldingIssue returns the mutes holding back an alert, escalation or SLA notice of an
// issue: a workspace mute, a mute of the dataset or its connection, or a mute of the
// issue's type.
func (ms Mutes) HoldingIssue(issueType string, d DatasetFacts) []string {
	var out Mutes
	for _, m := range ms {
		if m.coversAsset(d) || m.Scope == MuteIssueTypes && slices.Contains(m.IssueTypes, issueType) {
			out = append(out, m)
		}
	}
	return ids(out)
}

// HoldingDatasetVerdict returns the mutes holding back a dataset's verdict event: the
// dataset, its connection or the whole workspace; a mute of problem types never holds it.
func (ms Mutes) HoldingDatasetVerdict(d DatasetFacts) []string {
	var out Mutes
	for _, m := range ms {
		if m.coversAsset(d) {
			out = append(out, m)
		}
	}
	return ids(out)
}

// HoldingPolicy returns the mutes holding back a policy event of dataset d: as for the
// verdict, plus a mute of problem types that includes policy_violation.
func (ms Mutes) HoldingPolicy(d DatasetFacts) []string {
	var out Mutes
	for _, m := range ms {
		if m.coversAsset(d) || m.Scope == MuteIssueTypes && slices.Contains(m.IssueTypes, "policy_violation") {
			out = append(out, m)
		}
	}
	return ids(out)
}

// HoldingWorkspace returns the workspace mutes: the only ones that hold a domain's
// verdict event and a data product's consumer notice.
func (ms Mutes) HoldingWorkspace() []string {
	var out Mutes
	for _, m := range ms {
		if m.Scope == MuteWorkspace {
			out = append(out, m)
		}
	}
	return ids(out)
}

// HoldingConsumerNotice returns the mutes holding back an untrusted-read notice: a
// workspace mute, or mutes covering every one of its datasets.
func (ms Mutes) HoldingConsumerNotice(ds []DatasetFacts) []string {
	if w := ms.HoldingWorkspace(); len(w) > 0 {
		return w
	}
	if len(ds) == 0 {
		return nil
	}
	var all []string
	for _, d := range ds {
		h := ms.HoldingDatasetVerdict(d)
		if len(h) == 0 {
			return nil
		}
		for _, id := range h {
			if !slices.Contains(all, id) {
				all = append(all, id)
			}
		}
	}
	return all
}
