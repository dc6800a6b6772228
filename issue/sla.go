package issue

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
)

// Default resolution targets in hours, used by a workspace that never set its own.
const (
	DefaultCriticalHours = 24
	DefaultWarningHours  = 72
	MaxTargetHours       = 8760
)

// EventSLABreached is the outbox event type of an issue past its resolution target; the
// webhook feature delivers it as service.issue.sla_breached.
const EventSLABreached = "issue.sla_breached"

// SLAJobKind is the job that marks SLA breaches.
const SLAJobKind = "issue_sla_timers"

// Targets are the per-severity resolution targets in hours; nil is no target (info
// issues never have one).
type Targets struct {
	CriticalHours *int
	WarningHours  *int
	// Default is true while the workspace uses the defaults.
	Default bool
}

// For returns the target of a severity, nil without one.
func (t Targets) For(severity string) *int {
	switch severity {
	case "critical":
		return t.CriticalHours
	case "warning":
		return t.WarningHours
	}
	return nil
}

// SLATargets returns the workspace's resolution targets.
func (s *Service) SLATargets(ctx context.Context) (Targets, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Targets{}, err
	}
	return s.store.Targets(ctx, p.WorkspaceID)
}

// SetSLATargets replaces the workspace's resolution targets (nil switches a severity's
// target off); they apply to every open issue from the next run of the SLA timers, and
// an issue already marked stays marked. Administrator sessions only (tokens get
// token_read_only, others forbidden); KindInvalid for hours outside 1-8760.
func (s *Service) SetSLATargets(ctx context.Context, t Targets) (Targets, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Targets{}, err
	}
	var fields []vigia.FieldError
	for name, h := range map[string]*int{"critical_hours": t.CriticalHours, "warning_hours": t.WarningHours} {
		if h == nil {
			continue
		}
		if *h < 1 {
			fields = append(fields, vigia.Field("greater_than_equal", map[string]any{"ge": 1}, name))
		} else if *h > MaxTargetHours {
			fields = append(fields, vigia.Field("less_than_equal", map[string]any{"le": MaxTargetHours}, name))
		}
	}
	if len(fields) > 0 {
		return Targets{}, vigia.Invalid(fields...)
	}
	if err := s.store.SetTargets(ctx, p.WorkspaceID, t, "user:"+p.UserID, s.clock.Now()); err != nil {
		return Targets{}, err
	}
	return s.store.Targets(ctx, p.WorkspaceID)
}

// Breach is an issue the SLA timers marked.
type Breach struct {
	IssueID     string
	WorkspaceID string
	Severity    string
	TargetHours int
	BreachedAt  time.Time
}

// BreachPayload is the payload of an issue.sla_breached outbox event: the sla_breach
// context of part 6 and the body's code and params, with the issue's dataset and title
// for the message.
func BreachPayload(b Breach, datasetID, datasetName, title string) map[string]any {
	return map[string]any{
		"issue_id": b.IssueID, "severity": b.Severity, "target_hours": b.TargetHours,
		"breached_at": b.BreachedAt.UTC().Format(time.RFC3339), "dataset_id": datasetID, "dataset_name": datasetName,
		"title": title, "code": "issue_sla_breached",
		"params":     map[string]any{"issue_id": b.IssueID, "target_hours": b.TargetHours},
		"sla_breach": map[string]any{"issue_id": b.IssueID, "severity": b.Severity, "target_hours": b.TargetHours, "breached_at": b.BreachedAt.UTC().Format(time.RFC3339)},
	}
}

// BreachIdempotencyKey is the outbox key of an issue's breach: one per issue, ever.
func BreachIdempotencyKey(issueID string) string {
	return event.IdempotencyKey(issueID, "", EventSLABreached, "")
}

// EventConsumerSLABreached is the outbox event of a data product whose SLA was breached
// critically: a critical issue of one of its datasets passed its resolution target. It
// reaches the channels of the domain's consumers that have one (alerts event, code
// consumer_sla_breached), one delivery per domain and batch of breaches; a breach is
// marked once, so it is never notified again.
const EventConsumerSLABreached = "domain.consumer_sla_breached"

// ConsumerSLAPayload is the payload of a domain.consumer_sla_breached outbox event.
func ConsumerSLAPayload(domainID, domainName string, issueIDs, channelIDs []string) map[string]any {
	return map[string]any{"domain_id": domainID, "domain_name": domainName, "issues": len(issueIDs),
		"issue_ids": issueIDs, "channel_ids": channelIDs}
}

// ConsumerSLAIdempotencyKey is the outbox key of a consumer notice: one per domain and set
// of breached issues.
func ConsumerSLAIdempotencyKey(domainID string, issueIDs []string) string {
	return event.IdempotencyKey(domainID, "", EventConsumerSLABreached, strings.Join(issueIDs, ","))
}

// MarkSLABreaches is the SLA timers' work: every open or acknowledged critical or
// warning issue whose SLA clock (time spent open or acknowledged) passed its severity's
// target gets sla_breached_at (the moment it passed) once, with an issue.sla_breached
// event in the outbox, in the same transaction, and the critical ones a consumer notice
// per domain whose consumers have a channel (EventConsumerSLABreached). It is safe to run from several workers
// at once and returns how many issues it marked.
func (s *Service) MarkSLABreaches(ctx context.Context) (int, error) {
	const batch = 500
	total := 0
	for {
		var n int
		err := s.tx.InTx(ctx, func(ctx context.Context) error {
			bs, err := s.store.MarkBreaches(ctx, s.clock.Now(), batch)
			n = len(bs)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < batch || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}

// Report grouping.
const (
	GroupByDomain   = "domain"
	GroupBySeverity = "severity"
	GroupByTeam     = "team"
)

var periodRE = regexp.MustCompile(`^(\d{4})-(0[1-9]|1[0-2])$`)

// ReportQuery is a checked SLA report request.
type ReportQuery struct {
	WorkspaceID string
	Year, Month int
	GroupBy     string
	Now         time.Time
}

// Period is the month as YYYY-MM.
func (q ReportQuery) Period() string {
	m := strconv.Itoa(q.Month)
	if q.Month < 10 {
		m = "0" + m
	}
	return strconv.Itoa(q.Year) + "-" + m
}

// SLAReport is one month of the issue workflow, per group and in total.
type SLAReport struct {
	Period   string
	GroupBy  string
	Timezone string
	From, To time.Time
	// AsOf is the month's end, or now for the current month.
	AsOf    time.Time
	Targets Targets
	Groups  []SLAGroup
	Total   SLAGroup
}

// SLAGroup is the report of one group (domain, team or severity; nil key: no domain or
// no team) or of the total, where an issue counts once.
type SLAGroup struct {
	Key        *string
	Name       *string
	Opened     int
	Closed     int
	Unresolved int
	Breached   int
	InScope    int
	MTTA       Percentiles
	MTTR       Percentiles
	Ageing     Ageing
}

// Percentiles are the median and 90th percentile of a duration in SLA clock hours
// (continuous percentiles, linear between samples); nil without samples.
type Percentiles struct {
	Median  *float64
	P90     *float64
	Samples int
}

// Ageing counts the unresolved issues at the period's end by age since opening.
type Ageing struct {
	LT1D, D1To3, D3To7, D7To30, GT30D int
}

// SLAReport computes the month's report in SQL over the issues the caller can see.
// period is YYYY-MM, read in the workspace's time zone; groupBy is domain, team or
// severity. Definitions (docs/issues.md):
//
//   - opened: issues created in the month;
//   - closed: issues whose last close (resolved, or ignored other than as expected) in
//     the month still stands at the month's end;
//   - unresolved: issues open or acknowledged at the month's end (now for the current
//     month), with their ageing by time since opening;
//   - MTTA: SLA clock hours from opening to the first response (acknowledged, resolved
//     or ignored by a person or a ticket, not by a scan), for first responses in the
//     month; MTTR: SLA clock hours from opening to the close, for closed issues;
//   - in_scope: issues with a target whose SLA outcome fell in the month (their clock
//     passed the target in the month: breached; or they were closed in the month without
//     ever passing it); breached of in_scope;
//   - issues ignored as expected count in opened and MTTA only.
//
// A dataset in several domains counts in each of them, once in the total. Returns
// KindInvalid for a malformed period or an unknown group_by.
func (s *Service) SLAReport(ctx context.Context, period, groupBy string) (SLAReport, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return SLAReport{}, err
	}
	var fields []vigia.FieldError
	m := periodRE.FindStringSubmatch(period)
	if m == nil {
		fields = append(fields, vigia.Field("string_pattern_mismatch", nil, "period"))
	}
	switch groupBy {
	case GroupByDomain, GroupByTeam, GroupBySeverity:
	default:
		fields = append(fields, vigia.Field("enum", nil, "group_by"))
	}
	if len(fields) > 0 {
		return SLAReport{}, vigia.Invalid(fields...)
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	if y < 1970 {
		return SLAReport{}, vigia.Invalid(vigia.Field("string_pattern_mismatch", nil, "period"))
	}
	return s.store.SLAReport(ctx, catalog.ViewerOf(p), ReportQuery{WorkspaceID: p.WorkspaceID, Year: y, Month: mo,
		GroupBy: groupBy, Now: s.clock.Now()})
}
