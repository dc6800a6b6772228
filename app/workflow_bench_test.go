package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/issue"
)

// seedIssues gives a workspace n issues over the last 60 days, a quarter acknowledged,
// a quarter resolved after acknowledgement, with their history rows, across 10
// datasets in 3 domains and 4 teams.
func seedIssues(b *testing.B, env *apptest.Env, ws string, n int) {
	b.Helper()
	ctx := context.Background()
	conn := env.MustConnection(b, ws, "bench")
	var ds []string
	for i := 0; i < 10; i++ {
		ds = append(ds, env.MustDataset(b, ws, conn, "public", fmt.Sprintf("t%d", i)))
	}
	stmts := []string{
		`INSERT INTO teams (id, workspace_id, name) SELECT gen_random_uuid(), $1, 'team' || g FROM generate_series(1, 4) g`,
		`INSERT INTO domains (id, workspace_id, name) SELECT gen_random_uuid(), $1, 'domain' || g FROM generate_series(1, 3) g`,
		`INSERT INTO domain_datasets SELECT dm.id, d.id FROM domains dm JOIN datasets d ON d.workspace_id = dm.workspace_id
			WHERE dm.workspace_id = $1 AND (hashtext(dm.id::text || d.id::text) % 2 = 0)`,
		`INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at, assignee_team_id)
		 SELECT gen_random_uuid(), $1, ($2::uuid[])[1 + g % 10], 'schema_drift', (ARRAY['critical','warning','info'])[1 + g % 3],
		        CASE g % 4 WHEN 0 THEN 'resolved' WHEN 1 THEN 'acknowledged' ELSE 'open' END, 't',
		        now() - (g % 60) * interval '1 day' - (g % 24) * interval '1 hour', now(),
		        (SELECT id FROM teams WHERE workspace_id = $1 ORDER BY id OFFSET g % 5 LIMIT 1)
		   FROM generate_series(1, $3::int) g`,
		`INSERT INTO issue_history (id, issue_id, workspace_id, to_status, origin, event, created_at)
		 SELECT gen_random_uuid(), id, workspace_id, 'open', 'scan:s', 'opened', created_at FROM issues WHERE workspace_id = $1`,
		`INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
		 SELECT gen_random_uuid(), id, workspace_id, 'open', 'acknowledged', 'user:u', 'acknowledged', created_at + interval '3 hours'
		   FROM issues WHERE workspace_id = $1 AND status IN ('acknowledged', 'resolved')`,
		`INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
		 SELECT gen_random_uuid(), id, workspace_id, 'acknowledged', 'resolved', 'user:u', 'resolved', created_at + interval '20 hours'
		   FROM issues WHERE workspace_id = $1 AND status = 'resolved'`,
		`ANALYZE issues`, `ANALYZE issue_history`,
	}
	for i, q := range stmts {
		var args []any
		switch {
		case i == 3:
			args = []any{ws, ds, n}
		case i < 7:
			args = []any{ws}
		}
		if _, err := env.DB.Pool().Exec(ctx, q, args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
}

func benchEnv(b *testing.B, n int) (*apptest.Env, context.Context) {
	b.Helper()
	env := apptest.MustStart(b, app.Config{})
	ws := env.MustWorkspace(b, "bench")
	seedIssues(b, env, ws, n)
	return env, vigia.WithPrincipal(context.Background(), vigia.Principal{WorkspaceID: ws, UserID: vigia.NewID(), Role: vigia.RoleMember, TeamIDs: []string{}})
}

// BenchmarkSLAReport computes a month's report over a workspace of 20000 issues.
func BenchmarkSLAReport(b *testing.B) {
	env, ctx := benchEnv(b, 20000)
	period := time.Now().UTC().AddDate(0, -1, 0).Format("2006-01")
	for _, g := range []string{issue.GroupBySeverity, issue.GroupByTeam, issue.GroupByDomain} {
		b.Run(g, func(b *testing.B) {
			for b.Loop() {
				rep, err := env.App.Issues.SLAReport(ctx, period, g)
				if err != nil || rep.Total.Opened == 0 {
					b.Fatalf("%v %+v", err, rep.Total)
				}
			}
		})
	}
}

// BenchmarkIssueList reads the first page of a filtered list with its total.
func BenchmarkIssueList(b *testing.B) {
	env, ctx := benchEnv(b, 20000)
	for b.Loop() {
		res, err := env.App.Issues.Issues(ctx, issue.Filter{Statuses: []string{"open", "acknowledged"}, Severities: []string{"critical"},
			Page: vigia.Page{Limit: 100}})
		if err != nil || res.Total == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarkSLABreaches runs the SLA timers over 20000 issues where nothing new is
// due (the steady state of the minute job).
func BenchmarkMarkSLABreaches(b *testing.B) {
	env, _ := benchEnv(b, 20000)
	if _, err := env.App.Issues.MarkSLABreaches(context.Background()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := env.App.Issues.MarkSLABreaches(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
