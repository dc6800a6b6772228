package store_test

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/ticket"
)

// integration creates a ticket integration of a provider with project PROJ.
func (f *fx) integration(ws, name, provider string, creds bool) string {
	f.t.Helper()
	t := ticket.Integration{ID: vigia.NewID(), WorkspaceID: ws, Name: name, Provider: provider, Project: vigia.Ptr("PROJ"),
		IntervalMin: 15, Comment: true, Transition: true, CreatedAt: t0, UpdatedAt: t0}
	if creds {
		t.SealedCredentials = []byte("creds")
	}
	f.must(f.db.Webhooks().CreateIntegration(f.ctx, t))
	return t.ID
}

func TestTicketIntegrationsAndLinks(t *testing.T) {
	f := newFx(t)
	s := f.db.Webhooks()
	v, conn, ds := f.warehouse("orders", "secret")
	ws := v.WorkspaceID
	other := f.workspace().WorkspaceID
	f.restrict(ws, ds[1:])
	jira := f.integration(ws, "jira", "jira", true)
	f.integration(ws, "generic", "generic", false)
	foreign := f.integration(other, "jira", "jira", true)
	f.fails(vigia.KindConflict, "a taken integration name", func(ctx ctxT) error {
		return s.CreateIntegration(ctx, ticket.Integration{ID: vigia.NewID(), WorkspaceID: ws, Name: "jira", Provider: "linear", IntervalMin: 15, CreatedAt: t0, UpdatedAt: t0})
	})
	f.fails(vigia.KindInternal, "a provider the schema refuses", func(ctx ctxT) error {
		return s.CreateIntegration(ctx, ticket.Integration{ID: vigia.NewID(), WorkspaceID: ws, Name: "x", Provider: "trello", IntervalMin: 15, CreatedAt: t0, UpdatedAt: t0})
	})
	list, err := s.Integrations(f.ctx, ws)
	f.must(err)
	if got := names(list, func(i ticket.Integration) string { return i.Name }); !slices.Equal(got, []string{"generic", "jira"}) {
		t.Fatalf("integrations by name %v", got)
	}
	f.fails(vigia.KindNotFound, "another workspace's integration", func(ctx ctxT) error { _, err := s.IntegrationByID(ctx, ws, foreign); return err })
	if in, err := s.IntegrationForInbound(f.ctx, foreign); err != nil || in.WorkspaceID != other {
		t.Fatalf("integration for inbound %+v %v", in, err)
	}
	in, err := s.IntegrationByID(f.ctx, ws, jira)
	f.must(err)
	if !in.CredentialsSet || in.SecretSet {
		t.Fatalf("integration %+v", in)
	}
	in.IntervalMin, in.Comment, in.SealedSecret, in.UpdatedAt = 30, false, []byte("s"), at(1)
	f.must(s.UpdateIntegrationSync(f.ctx, in, true))
	in.IntervalMin = 60
	f.must(s.UpdateIntegrationSync(f.ctx, in, false))
	if in, _ = s.IntegrationByID(f.ctx, ws, jira); in.IntervalMin != 60 || in.Comment || !in.SecretSet {
		t.Fatalf("updated integration %+v", in)
	}
	f.fails(vigia.KindInternal, "an interval out of the schema's bounds", func(ctx ctxT) error {
		bad := in
		bad.IntervalMin = 1
		return s.UpdateIntegrationSync(ctx, bad, false)
	})
	f.fails(vigia.KindNotFound, "credentials for another workspace's integration", func(ctx ctxT) error {
		return s.SetIntegrationCredentials(ctx, ws, foreign, []byte("c"), at(2))
	})

	// Links: one per issue and key; visibility follows the issue's dataset.
	open := f.issue(ws, conn, ds[0], "critical", 1, nil)
	hidden := f.issue(ws, conn, ds[1], "critical", 2, nil)
	if ok, _ := s.IssueVisible(f.ctx, member(ws), open); !ok {
		t.Fatal("an open issue is not visible")
	}
	if ok, _ := s.IssueVisible(f.ctx, member(ws), hidden); ok {
		t.Fatal("a restricted issue is visible to a member")
	}
	if ok, _ := s.IssueVisible(f.ctx, member(other), open); ok {
		t.Fatal("an issue is visible from another workspace")
	}
	link := func(issueID, key string, n int) ticket.Link {
		l, err := s.CreateLink(f.ctx, ticket.Link{ID: vigia.NewID(), WorkspaceID: ws, IntegrationID: jira, IssueID: issueID, Key: key,
			URL: "https://jira/" + key, CreatedBy: "ana", CreatedAt: at(n)})
		f.must(err)
		return l
	}
	l1 := link(open, "PROJ-1", 3)
	if again := link(open, "PROJ-1", 4); again.ID != l1.ID || !again.CreatedAt.Equal(at(3)) {
		t.Fatalf("a link twice %+v / %+v", l1, again)
	}
	link(hidden, "PROJ-1", 5)
	link(open, "PROJ-2", 6)
	if got, err := s.LinkedIssues(f.ctx, jira, "PROJ-1"); err != nil || !slices.Equal(got, []string{open, hidden}) {
		t.Fatalf("linked issues %v %v", got, err)
	}
	f.fails(vigia.KindNotFound, "a link to an issue that does not exist", func(ctx ctxT) error {
		_, err := s.CreateLink(ctx, ticket.Link{ID: vigia.NewID(), WorkspaceID: ws, IntegrationID: jira, IssueID: vigia.NewID(), Key: "PROJ-9", CreatedBy: "a", CreatedAt: t0})
		return err
	})

	// Polling: due integrations, targets least recently polled first.
	due, err := s.DueTicketSyncs(f.ctx, at(10), 10)
	f.must(err)
	// Every workspace's integrations with credentials (the job runs for all); "generic" has none.
	if got := names(due, func(d ticket.DueSync) string { return d.ID }); len(got) != 2 || !slices.Contains(got, jira) || !slices.Contains(got, foreign) {
		t.Fatalf("due syncs %v", got)
	}
	f.must(s.SaveSyncState(f.ctx, jira, ticket.SyncState{LastPollAt: vigia.Ptr(at(10)), NextPollAt: vigia.Ptr(at(70))}))
	if due, _ = s.DueTicketSyncs(f.ctx, at(11), 10); slices.ContainsFunc(due, func(d ticket.DueSync) bool { return d.ID == jira }) {
		t.Fatal("a polled integration is due before its next poll")
	}
	targets, err := s.PollTargets(f.ctx, jira, 10)
	f.must(err)
	if !slices.Equal(targets, []string{"PROJ-1", "PROJ-2"}) {
		t.Fatalf("poll targets %v", targets)
	}
	f.must(s.MarkPolled(f.ctx, jira, "PROJ-1", vigia.Ptr("ticket_not_found"), at(12)))
	if targets, _ = s.PollTargets(f.ctx, jira, 10); !slices.Equal(targets, []string{"PROJ-2", "PROJ-1"}) {
		t.Fatalf("poll targets after one poll %v", targets)
	}
	if in, _ = s.IntegrationByID(f.ctx, ws, jira); in.TicketErrors != 1 || !in.LastPollAt.Equal(at(10)) {
		t.Fatalf("integration after polling %+v", in)
	}
	f.must(s.SetIntegrationCredentials(f.ctx, ws, jira, []byte("new"), at(13)))
	if in, _ = s.IntegrationByID(f.ctx, ws, jira); in.NextPollAt != nil {
		t.Fatalf("new credentials keep the next poll %v", in.NextPollAt)
	}
}

func TestTicketWriteBacks(t *testing.T) {
	f := newFx(t)
	s := f.db.Webhooks()
	v, conn, dss := f.warehouse("orders")
	ws, ds := v.WorkspaceID, dss[0]
	jira := f.integration(ws, "jira", "jira", true)
	quiet := f.integration(ws, "quiet", "jira", false) // no credentials: no writes
	a := f.issue(ws, conn, ds, "critical", 1, nil)
	b := f.issue(ws, conn, ds, "warning", 2, nil)
	rid := f.newRule(ws, ds, "not_null", "critical", 3, ruleMinRows(1))
	c := f.issue(ws, conn, ds, "critical", 4, func(ni *scan.NewIssue) { ni.Type, ni.RuleID = "rule", rid })
	for _, l := range []struct{ in, issue, key string }{{jira, a, "PROJ-1"}, {jira, a, "OTHER-1"}, {quiet, a, "PROJ-2"}, {jira, b, "PROJ-3"}, {jira, c, "PROJ-4"}} {
		_, err := s.CreateLink(f.ctx, ticket.Link{ID: vigia.NewID(), WorkspaceID: ws, IntegrationID: l.in, IssueID: l.issue, Key: l.key, CreatedBy: "a", CreatedAt: t0})
		f.must(err)
	}
	// A person resolves a: one write-back, to the integration's project with credentials.
	f.must(f.db.Issues().ApplyChange(f.ctx, issue.Change{IssueID: a, WorkspaceID: ws, From: "open", To: "resolved", Event: "resolved", Origin: "user:ana", At: at(5)}))
	// A change that came from the ticket itself is not written back to it.
	f.must(f.db.Issues().ApplyChange(f.ctx, issue.Change{IssueID: b, WorkspaceID: ws, From: "open", To: "resolved", Event: "resolved", Origin: "ticket:jira:PROJ-3", At: at(6)}))
	// A ticket resolves c, an issue of a rule: awaiting verification, written back to its own link.
	changed, err := f.db.TicketIssues().ResolveFromTicket(f.ctx, ws, c, "ticket:jira:OTHER-9")
	f.must(err)
	if !changed {
		t.Fatal("an open issue not resolved from its ticket")
	}
	if again, err := f.db.TicketIssues().ResolveFromTicket(f.ctx, ws, c, "ticket:jira:OTHER-9"); err != nil || again {
		t.Fatalf("resolved twice: %v %v", again, err)
	}
	f.fails(vigia.KindNotFound, "resolving another workspace's issue", func(ctx ctxT) error {
		_, err := f.db.TicketIssues().ResolveFromTicket(ctx, f.workspace().WorkspaceID, a, "ticket:jira:PROJ-1")
		return err
	})
	is, _ := f.db.Issues().IssueByID(f.ctx, v, c)
	if is.Status != "resolved" || is.History[len(is.History)-1].Note != "awaiting_verification" {
		t.Fatalf("an issue resolved from a ticket %+v", is)
	}

	ws1, err := s.PendingWrites(f.ctx, jira, 10)
	f.must(err)
	if got := names(ws1, func(w ticket.Write) string { return w.Key }); !slices.Equal(got, []string{"PROJ-1", "PROJ-4"}) {
		t.Fatalf("pending write-backs %v", got)
	}
	if q, _ := s.PendingWrites(f.ctx, quiet, 10); len(q) != 0 {
		t.Fatalf("write-backs without credentials %v", q)
	}
	if in, _ := s.IntegrationByID(f.ctx, ws, jira); in.PendingWrites != 2 {
		t.Fatalf("pending count %d", in.PendingWrites)
	}
	w := ws1[0]
	f.must(s.MarkWriteCommented(f.ctx, w.ID))
	f.must(s.RecordWriteAttempt(f.ctx, w.ID, "pending", "http_503", at(7)))
	f.must(s.FinishWrite(f.ctx, ws1[1].ID, "done", nil, at(7)))
	left, _ := s.PendingWrites(f.ctx, jira, 10)
	if len(left) != 1 || !left[0].CommentDone || left[0].Attempts != 1 {
		t.Fatalf("write-backs after an attempt %+v", left)
	}
	f.must(s.RecordWriteAttempt(f.ctx, w.ID, "failed", "http_403", at(8)))
	if in, _ := s.IntegrationByID(f.ctx, ws, jira); in.PendingWrites != 0 || in.FailedWrites != 1 {
		t.Fatalf("counts after failing %+v", in)
	}
}

func TestIssueSLAReport(t *testing.T) {
	f := newFx(t)
	s := f.db.Issues()
	v := f.workspace()
	ws := v.WorkspaceID
	f.must(s.SetTargets(f.ctx, ws, issue.Targets{CriticalHours: vigia.Ptr(1), WarningHours: vigia.Ptr(10)}, "ana", t0))
	conn := f.connection(ws, "warehouse")
	ds := f.tables(ws, conn, "orders", "secret")
	f.restrict(ws, ds[1:])
	tm := f.team(ws, "data")
	// Opened at minutes 0..: a is acknowledged after 30 minutes and resolved after 2 hours
	// (breached at 1 hour); b is resolved by a person after 5 hours (met); c stays open
	// (breached at 10 hours); h, critical, stays open on a restricted dataset.
	a := f.issue(ws, conn, ds[0], "critical", 0, nil)
	b := f.issue(ws, conn, ds[0], "warning", 0, nil)
	f.issue(ws, conn, ds[0], "warning", 0, nil)
	f.issue(ws, conn, ds[1], "critical", 0, nil)
	ch := func(id, from, to string, n int) {
		f.must(s.ApplyChange(f.ctx, issue.Change{IssueID: id, WorkspaceID: ws, From: from, To: to, Event: to, Origin: "user:ana", At: at(n)}))
	}
	ch(a, "open", "acknowledged", 30)
	ch(a, "acknowledged", "resolved", 120)
	ch(b, "open", "resolved", 300)
	f.must(s.SetAssignee(f.ctx, issue.Change{IssueID: b, WorkspaceID: ws, From: "resolved", To: "resolved", Event: "assigned", Origin: "u", At: at(301)}, &tm))

	rq := issue.ReportQuery{WorkspaceID: ws, Year: 2026, Month: 3, GroupBy: issue.GroupBySeverity, Now: at(24 * 60)}
	r, err := s.SLAReport(f.ctx, v, rq)
	f.must(err)
	if r.Period != "2026-03" || r.Timezone != "Europe/Lisbon" || !r.AsOf.Equal(at(24*60)) || r.Total.Opened != 4 || r.Total.Closed != 2 ||
		r.Total.Unresolved != 2 || r.Total.Breached != 3 || r.Total.InScope != 4 || r.Total.MTTR.Samples != 2 || *r.Total.MTTA.Median != 2.75 ||
		r.Total.Ageing.D1To3 != 2 {
		t.Fatalf("report total %+v (mtta %v)", r.Total, r.Total.MTTA)
	}
	if len(r.Groups) != 2 || *r.Groups[0].Key != "critical" || r.Groups[0].Breached != 2 || r.Groups[1].Opened != 2 {
		t.Fatalf("groups by severity %+v", r.Groups)
	}
	m, err := s.SLAReport(f.ctx, member(ws), rq)
	f.must(err)
	if m.Total.Opened != 3 || m.Total.Breached != 2 {
		t.Fatalf("a member's report %+v", m.Total)
	}
	rq.GroupBy = issue.GroupByTeam
	byTeam, err := s.SLAReport(f.ctx, v, rq)
	f.must(err)
	if len(byTeam.Groups) != 2 || *byTeam.Groups[0].Name != "data" || byTeam.Groups[0].Closed != 1 || byTeam.Groups[1].Name != nil {
		t.Fatalf("groups by team %+v", byTeam.Groups)
	}
	rq.Month, rq.GroupBy = 2, issue.GroupBySeverity
	if feb, _ := s.SLAReport(f.ctx, v, rq); feb.Total.Opened != 0 || len(feb.Groups) != 0 {
		t.Fatalf("a month before the issues %+v", feb)
	}
	f.fails(vigia.KindNotFound, "the report of no workspace", func(ctx ctxT) error {
		_, err := s.SLAReport(ctx, member(vigia.NewID()), rq)
		return err
	})
}
