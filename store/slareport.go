package store

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/issue"
)

// slaPerIssue computes, in SQL, every issue's part in one month of the SLA report
// ($1 workspace, $2 teams, $3 admin, $4 month start, $5 as_of = month end or now,
// $6 critical target hours, $7 warning target hours).
//
// The SLA clock runs while an issue is open or acknowledged. Each history row starts the
// status it reached (an issue without history is open since it was created), so one
// window pass over the history gives, for every row, the seconds on the clock when it
// happened (clock_s): the first response and the close are rows, and their clock_s is
// the MTTA and the MTTR; the target passes in the first running period where
// target - clock_s fits (the same rule as the SQL functions vigia_issue_sla_seconds and
// vigia_issue_sla_due, which the SLA timers use per issue). One GROUP BY then folds the
// rows per issue. Only issues the period concerns are counted: opened in it, changed in
// it, or unresolved at its end.
const slaPerIssue = `vis AS MATERIALIZED (
	SELECT d.id FROM datasets d WHERE d.workspace_id = $1 AND vigia_dataset_visible(d.id, $2::uuid[], $3)
), iss AS MATERIALIZED (
	SELECT i.id, i.severity, i.assignee_team_id, i.dataset_id, i.created_at,
	       CASE i.severity WHEN 'critical' THEN $6::int WHEN 'warning' THEN $7::int END AS target_h
	  FROM issues i JOIN vis ON vis.id = i.dataset_id
	 WHERE i.workspace_id = $1 AND i.created_at < $5 AND $4 <= $5
	   -- closed before the month and never changed since: nothing of it falls in the month
	   AND NOT (i.status IN ('resolved', 'ignored') AND coalesce(i.resolved_at < $4, false))
), h AS (
	SELECT hh.id, hh.issue_id, hh.from_status, hh.to_status, hh.origin, hh.created_at,
	       coalesce(hh.event, CASE WHEN hh.from_status IS NULL THEN 'opened' ELSE hh.to_status END) AS event
	  FROM issue_history hh JOIN iss ON iss.id = hh.issue_id
	 WHERE hh.created_at < $5
	UNION ALL
	SELECT iss.id, iss.id, NULL, 'open', 'scan', iss.created_at, 'opened' FROM iss
	 WHERE NOT EXISTS (SELECT 1 FROM issue_history x WHERE x.issue_id = iss.id)
), periods AS (
	SELECT h.*, lead(created_at) OVER (PARTITION BY issue_id ORDER BY created_at, id) AS end_at FROM h
), clocked AS (
	SELECT p.*, iss.target_h,
	       p.to_status IN ('open', 'acknowledged') AS running,
	       coalesce(sum(CASE WHEN p.to_status IN ('open', 'acknowledged') THEN extract(epoch FROM p.end_at - p.created_at) END)
	           OVER (PARTITION BY p.issue_id ORDER BY p.created_at, p.id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS clock_s
	  FROM periods p JOIN iss ON iss.id = p.issue_id
), folded AS (
	SELECT issue_id,
	       -- the status at as_of: the last row that changed it (assignments and
	       -- verifications keep the status and do not count)
	       (array_agg(to_status ORDER BY created_at DESC, id DESC) FILTER (WHERE from_status IS DISTINCT FROM to_status))[1] AS state,
	       (array_agg(event ORDER BY created_at DESC, id DESC) FILTER (WHERE from_status IS DISTINCT FROM to_status))[1] AS state_event,
	       -- the first response: a person, a ticket or another system took the issue out of
	       -- open; a scan resolving it is not a response
	       (array_agg(created_at ORDER BY created_at, id) FILTER (WHERE from_status = 'open'
	           AND to_status IN ('acknowledged', 'resolved', 'ignored') AND origin NOT LIKE 'scan:%'))[1] AS responded_at,
	       (array_agg(clock_s ORDER BY created_at, id) FILTER (WHERE from_status = 'open'
	           AND to_status IN ('acknowledged', 'resolved', 'ignored') AND origin NOT LIKE 'scan:%'))[1] AS response_s,
	       -- the last close in the period
	       (array_agg(clock_s ORDER BY created_at DESC, id DESC) FILTER (WHERE from_status IN ('open', 'acknowledged')
	           AND to_status IN ('resolved', 'ignored') AND created_at >= $4))[1] AS close_s,
	       -- the moment the clock reached the target
	       (array_agg(created_at + make_interval(secs => target_h * 3600 - clock_s) ORDER BY created_at, id)
	           FILTER (WHERE running AND target_h IS NOT NULL
	                   AND (end_at IS NULL OR target_h * 3600 - clock_s <= extract(epoch FROM end_at - created_at))))[1] AS due_at,
	       bool_or(created_at >= $4) AS touched
	  FROM clocked GROUP BY issue_id
), per AS (
	SELECT iss.id, iss.severity, iss.assignee_team_id, iss.dataset_id, iss.target_h,
	       iss.created_at >= $4 AS opened,
	       coalesce(f.state IN ('open', 'acknowledged'), true) AS unresolved,
	       coalesce(f.state_event = 'ignored_expected', false) AS expected,
	       f.close_s IS NOT NULL AND coalesce(f.state IN ('resolved', 'ignored') AND f.state_event <> 'ignored_expected', false) AS closed,
	       CASE WHEN f.responded_at >= $4 THEN f.response_s / 3600 END AS mtta_h,
	       f.close_s, f.due_at,
	       extract(epoch FROM $5 - iss.created_at) / 3600 AS age_h
	  FROM iss LEFT JOIN folded f ON f.issue_id = iss.id
	 WHERE iss.created_at >= $4 OR coalesce(f.touched, false) OR coalesce(f.state IN ('open', 'acknowledged'), true)
), per_issue AS (
	SELECT per.*,
	       CASE WHEN closed THEN close_s / 3600 END AS mttr_h,
	       NOT expected AND coalesce(due_at >= $4 AND due_at < $5, false) AS breached,
	       closed AND target_h IS NOT NULL AND NOT expected AND due_at IS NULL AS met
	  FROM per
)`

// slaAggregates are the report's numbers over a set of per_issue rows.
const slaAggregates = `count(*) FILTER (WHERE opened), count(*) FILTER (WHERE closed), count(*) FILTER (WHERE unresolved),
	count(*) FILTER (WHERE breached), count(*) FILTER (WHERE breached OR met),
	percentile_cont(0.5) WITHIN GROUP (ORDER BY mtta_h), percentile_cont(0.9) WITHIN GROUP (ORDER BY mtta_h), count(mtta_h),
	percentile_cont(0.5) WITHIN GROUP (ORDER BY mttr_h), percentile_cont(0.9) WITHIN GROUP (ORDER BY mttr_h), count(mttr_h),
	count(*) FILTER (WHERE unresolved AND age_h < 24), count(*) FILTER (WHERE unresolved AND age_h >= 24 AND age_h < 72),
	count(*) FILTER (WHERE unresolved AND age_h >= 72 AND age_h < 168), count(*) FILTER (WHERE unresolved AND age_h >= 168 AND age_h < 720),
	count(*) FILTER (WHERE unresolved AND age_h >= 720)`

// slaGroupings join each issue to its groups: a dataset in several domains is in each.
var slaGroupings = map[string]string{
	issue.GroupBySeverity: `SELECT per_issue.severity AS key, per_issue.severity AS name, per_issue.* FROM per_issue`,
	issue.GroupByTeam: `SELECT per_issue.assignee_team_id::text AS key, t.name AS name, per_issue.*
		FROM per_issue LEFT JOIN teams t ON t.id = per_issue.assignee_team_id`,
	issue.GroupByDomain: `SELECT dm.id::text AS key, dm.name AS name, per_issue.*
		FROM per_issue LEFT JOIN domain_datasets dd ON dd.dataset_id = per_issue.dataset_id LEFT JOIN domains dm ON dm.id = dd.domain_id`,
}

// SLAReport computes one month of the SLA report for the issues the viewer can see.
func (s *IssueStore) SLAReport(ctx context.Context, v catalog.Viewer, rq issue.ReportQuery) (issue.SLAReport, error) {
	targets, err := s.Targets(ctx, v.WorkspaceID)
	if err != nil {
		return issue.SLAReport{}, err
	}
	out := issue.SLAReport{Period: rq.Period(), GroupBy: rq.GroupBy, Targets: targets, Groups: []issue.SLAGroup{}}
	err = s.db.q(ctx).QueryRow(ctx, `SELECT w.timezone,
		make_date($2, $3, 1)::timestamp AT TIME ZONE w.timezone,
		(make_date($2, $3, 1) + interval '1 month')::timestamp AT TIME ZONE w.timezone
		FROM workspaces w WHERE w.id = $1`, v.WorkspaceID, rq.Year, rq.Month).Scan(&out.Timezone, &out.From, &out.To)
	if err != nil {
		return out, translate(err)
	}
	out.AsOf = out.To
	if rq.Now.Before(out.To) {
		out.AsOf = rq.Now
	}
	grouping, ok := slaGroupings[rq.GroupBy]
	if !ok {
		grouping = slaGroupings[issue.GroupBySeverity]
	}
	query := `WITH ` + slaPerIssue + `, grouped AS (` + grouping + `)
		SELECT false, key, name, ` + slaAggregates + ` FROM grouped GROUP BY key, name
		HAVING count(*) FILTER (WHERE opened OR closed OR unresolved OR breached OR met OR mtta_h IS NOT NULL) > 0
		UNION ALL
		SELECT true, NULL, NULL, ` + slaAggregates + ` FROM per_issue
		ORDER BY 1, 3 NULLS LAST, 2 NULLS LAST`
	rows, err := s.db.q(ctx).Query(ctx, query, v.WorkspaceID, v.TeamIDs, v.Admin, out.From, out.AsOf,
		targets.CriticalHours, targets.WarningHours)
	if err != nil {
		return out, translate(err)
	}
	type row struct {
		total bool
		g     issue.SLAGroup
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		g := &x.g
		err := r.Scan(&x.total, &g.Key, &g.Name, &g.Opened, &g.Closed, &g.Unresolved, &g.Breached, &g.InScope,
			&g.MTTA.Median, &g.MTTA.P90, &g.MTTA.Samples, &g.MTTR.Median, &g.MTTR.P90, &g.MTTR.Samples,
			&g.Ageing.LT1D, &g.Ageing.D1To3, &g.Ageing.D3To7, &g.Ageing.D7To30, &g.Ageing.GT30D)
		return x, err
	})
	if err != nil {
		return out, translate(err)
	}
	for _, x := range got {
		roundPercentiles(&x.g)
		if x.total {
			out.Total = x.g
		} else {
			out.Groups = append(out.Groups, x.g)
		}
	}
	out.From, out.To, out.AsOf = out.From.UTC(), out.To.UTC(), out.AsOf.UTC()
	return out, nil
}

func roundPercentiles(g *issue.SLAGroup) {
	for _, p := range []**float64{&g.MTTA.Median, &g.MTTA.P90, &g.MTTR.Median, &g.MTTR.P90} {
		if *p != nil {
			v := math.Round(**p*100) / 100
			*p = &v
		}
	}
}
