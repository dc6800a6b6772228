package store

import (
	"context"
	"time"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/dashboard"
)

// DashboardStore implements dashboard.Store.
type DashboardStore struct{ db *DB }

// Dashboard returns the governance and dashboard store.
func (db *DB) Dashboard() *DashboardStore { return &DashboardStore{db: db} }

var _ dashboard.Store = (*DashboardStore)(nil)

// DashboardFacts counts over the live datasets v can see: coverage, the issue flow since
// the given time and the backlog now, SLA attainment of the issues resolved since then,
// verdicts, open incidents touching them and the reads recorded since then.
func (s *DashboardStore) DashboardFacts(ctx context.Context, v catalog.Viewer, since time.Time) (dashboard.Facts, error) {
	teams := v.TeamIDs
	if teams == nil {
		teams = []string{}
	}
	f := dashboard.Facts{Verdicts: map[string]int{"pass": 0, "warn": 0, "fail": 0, "unknown": 0}}
	var pass, warn, fail, unknown int
	err := s.db.q(ctx).QueryRow(ctx, `
		WITH vis AS (
			SELECT d.id, d.latest_score FROM datasets d
			 WHERE d.workspace_id = $1 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`
		), verdict AS (
			SELECT coalesce((SELECT v.verdict FROM verdicts v WHERE v.dataset_id = vis.id ORDER BY v.seq DESC LIMIT 1), 'unknown') AS verdict FROM vis
		), iss AS (
			SELECT i.* FROM issues i JOIN vis ON vis.id = i.dataset_id
		)
		SELECT (SELECT count(*) FROM vis),
		       (SELECT count(*) FROM vis WHERE EXISTS (SELECT 1 FROM dataset_profiles p WHERE p.dataset_id = vis.id)),
		       (SELECT count(*) FROM vis WHERE EXISTS (SELECT 1 FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
		            WHERE dd.dataset_id = vis.id AND coalesce(dm.owner_name, '') <> '')),
		       (SELECT count(*) FROM vis WHERE EXISTS (SELECT 1 FROM domain_datasets dd WHERE dd.dataset_id = vis.id)),
		       (SELECT count(*) FROM vis WHERE EXISTS (SELECT 1 FROM rules r WHERE r.dataset_id = vis.id)),
		       (SELECT count(*) FROM vis WHERE EXISTS (SELECT 1 FROM contract_versions c WHERE c.dataset_id = vis.id)),
		       (SELECT count(*) FROM vis WHERE EXISTS (SELECT 1 FROM column_sensitivity cs WHERE cs.dataset_id = vis.id)),
		       (SELECT avg(latest_score) FROM vis),
		       (SELECT count(*) FROM verdict WHERE verdict = 'pass'), (SELECT count(*) FROM verdict WHERE verdict = 'warn'),
		       (SELECT count(*) FROM verdict WHERE verdict = 'fail'), (SELECT count(*) FROM verdict WHERE verdict = 'unknown'),
		       (SELECT count(*) FROM iss WHERE created_at >= $4),
		       (SELECT count(*) FROM iss WHERE status = 'resolved' AND resolved_at >= $4),
		       (SELECT count(*) FROM iss WHERE status = 'ignored' AND resolved_at >= $4),
		       (SELECT count(*) FROM iss WHERE status IN ('open', 'acknowledged')),
		       (SELECT count(*) FROM iss WHERE status IN ('open', 'acknowledged') AND severity = 'critical'),
		       (SELECT count(*) FROM iss WHERE status IN ('open', 'acknowledged') AND severity = 'warning'),
		       (SELECT count(*) FROM iss WHERE status IN ('open', 'acknowledged') AND sla_breached_at IS NOT NULL),
		       (SELECT count(*) FROM iss WHERE status = 'resolved' AND resolved_at >= $4),
		       (SELECT count(*) FROM iss WHERE status = 'resolved' AND resolved_at >= $4 AND sla_breached_at IS NULL),
		       (SELECT count(*) FROM incidents n WHERE n.workspace_id = $1 AND n.status = 'open' AND n.severity = 'critical'
		            AND n.dataset_ids && ARRAY(SELECT id FROM vis)),
		       (SELECT count(*) FROM incidents n WHERE n.workspace_id = $1 AND n.status = 'open' AND n.severity = 'warning'
		            AND n.dataset_ids && ARRAY(SELECT id FROM vis)),
		       (SELECT count(*) FROM consumption_datasets cd JOIN vis ON vis.id = cd.dataset_id WHERE cd.created_at >= $4 AND cd.decision_seen = 'untrusted'),
		       (SELECT count(*) FROM consumption_datasets cd JOIN vis ON vis.id = cd.dataset_id WHERE cd.created_at >= $4)`,
		v.WorkspaceID, teams, v.Admin, since).Scan(&f.Datasets, &f.Profiled, &f.WithOwner, &f.WithDomain, &f.WithRules, &f.WithContract,
		&f.SensitivityReviewed, &f.MeanScore, &pass, &warn, &fail, &unknown, &f.Opened, &f.Resolved, &f.Ignored, &f.OpenNow,
		&f.OpenCritical, &f.OpenWarning, &f.OpenBreached, &f.ClosedInScope, &f.ClosedWithinSLA, &f.OpenIncidentsCritical,
		&f.OpenIncidentsWarning, &f.UntrustedReads, &f.Reads)
	f.Verdicts["pass"], f.Verdicts["warn"], f.Verdicts["fail"], f.Verdicts["unknown"] = pass, warn, fail, unknown
	return f, translate(err)
}
