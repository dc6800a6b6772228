package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/quality"
)

// ruleIssue makes a real issue: a not_null rule failing on a SQLite source.
func ruleIssue(t *testing.T, e *wfEnv) (issueID, connID, datasetID, ruleID string, src *sourceDB) {
	t.Helper()
	src = newSource(t, "sqlite", e.root)
	src.exec(t, `CREATE TABLE contas (id INTEGER PRIMARY KEY, iban TEXT)`)
	src.exec(t, `INSERT INTO contas VALUES (1, 'x'), (2, NULL), (3, 'y')`)
	connID = e.connect(t, "banco-"+vigia.NewUUID()[:6], "sqlite", src.dsn)
	e.scan(t, connID)
	datasetID = e.dataset(t, connID, "contas")
	r := e.createRule(t, map[string]any{"dataset_id": datasetID, "rule_type": "not_null", "severity": "critical",
		"params": map[string]any{"column": "iban"}})
	ruleID = r["id"].(string)
	e.scan(t, connID)
	items, _ := e.list(t, "/api/v1/issues?type=rule&dataset_id="+datasetID, e.tok)
	if len(items) != 1 {
		t.Fatalf("rule issues %v", items)
	}
	return items[0]["id"].(string), connID, datasetID, ruleID, src
}

func lastEvent(t *testing.T, d map[string]any) map[string]any {
	t.Helper()
	h := d["history"].([]any)
	return h[len(h)-1].(map[string]any)
}

// Must show 3: an API token cannot transition an issue (403 token_read_only), a viewer
// session gets 403, a member session can, and another workspace's issue is 404.
func TestIssueTransitionsNeedAMemberSession(t *testing.T) {
	e := newWF(t, "transitions")
	id, conn, ds, ruleID, src := ruleIssue(t, e)
	path := "/api/v1/issues/" + id

	t.Run("TokenIs403TokenReadOnly", func(t *testing.T) {
		for _, a := range []string{"acknowledge", "resolve", "ignore", "reopen"} {
			r := e.Do(t, http.MethodPost, path+"/"+a, e.tok, nil)
			if r.Status != 403 || decodeError(t, r).Code != "token_read_only" {
				t.Errorf("%s: %d %s", a, r.Status, r.Body)
			}
		}
		if r := e.Do(t, http.MethodPatch, path, e.tok, map[string]any{"assignee_team_id": nil}); r.Status != 403 {
			t.Errorf("assign: %d", r.Status)
		}
		g := e.GraphQL(t, e.tok, `mutation($id: ID!){ acknowledgeIssue(id: $id){ status } }`, map[string]any{"id": id})
		if !strings.Contains(fmt.Sprint(g["errors"]), "token_read_only") {
			t.Errorf("graphql token: %v", g)
		}
	})
	t.Run("ViewerIs403", func(t *testing.T) {
		r := e.Do(t, http.MethodPost, path+"/acknowledge", e.viewer, nil)
		if r.Status != 403 || decodeError(t, r).Code != "forbidden" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		g := e.GraphQL(t, e.viewer, `mutation($id: ID!){ resolveIssue(id: $id){ status } }`, map[string]any{"id": id})
		if !strings.Contains(fmt.Sprint(g["errors"]), "forbidden") {
			t.Errorf("graphql viewer: %v", g)
		}
	})
	t.Run("OtherWorkspaceIs404LikeAnUnknownId", func(t *testing.T) {
		other := e.MustSession(t, e.MustWorkspace(t, "other"), vigia.RoleMember)
		foreign := e.Do(t, http.MethodPost, path+"/acknowledge", other, nil)
		unknown := e.Do(t, http.MethodPost, "/api/v1/issues/"+vigia.NewID()+"/acknowledge", other, nil)
		fe, ue := decodeError(t, foreign), decodeError(t, unknown)
		if foreign.Status != 404 || unknown.Status != 404 || fe.Code != ue.Code || fmt.Sprint(fe.Detail) != fmt.Sprint(ue.Detail) {
			t.Fatalf("foreign %d %s, unknown %d %s", foreign.Status, foreign.Body, unknown.Status, unknown.Body)
		}
		for _, p := range []string{path, path + "/explanation"} {
			if r := e.Do(t, http.MethodGet, p, other, nil); r.Status != 404 {
				t.Errorf("%s: %d", p, r.Status)
			}
		}
		if _, total := e.list(t, "/api/v1/issues", other); total != "0" {
			t.Errorf("other workspace counts %s issues", total)
		}
	})
	t.Run("MemberAcknowledgesWithHistory", func(t *testing.T) {
		r := e.Do(t, http.MethodPost, path+"/acknowledge", e.member, map[string]any{"note": "a ver"})
		var d map[string]any
		r.JSON(t, &d)
		ev := lastEvent(t, d)
		if r.Status != 200 || d["status"] != "acknowledged" || d["acknowledged_at"] == nil || ev["event"] != "acknowledged" ||
			ev["origin"] != "user:"+e.userID(t, e.member) || ev["note"] != "a ver" || ev["from_status"] != "open" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		first := d["history"].([]any)[0].(map[string]any)
		if first["event"] != "opened" || !strings.HasPrefix(first["origin"].(string), "scan:") {
			t.Fatalf("first history row %v", first)
		}
		again := e.Do(t, http.MethodPost, path+"/acknowledge", e.member, nil)
		if again.Status != 409 || decodeError(t, again).Code != "invalid_transition" {
			t.Fatalf("acknowledge twice: %d %s", again.Status, again.Body)
		}
		if r := e.Do(t, http.MethodPost, path+"/ignore", e.member, map[string]any{"reason": "bored"}); r.Status != 422 ||
			strings.Contains(string(r.Body), "bored") {
			t.Fatalf("bad reason: %d %s", r.Status, r.Body)
		}
	})
	t.Run("ResolvedRuleIssueAwaitsVerificationAndIsReopenedByTheScan", func(t *testing.T) {
		r := e.Do(t, http.MethodPost, path+"/resolve", e.member, nil)
		var d map[string]any
		r.JSON(t, &d)
		if r.Status != 200 || d["status"] != "resolved" || d["awaiting_verification"] != true {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		e.scan(t, conn)
		d = e.get(t, path, e.tok)
		if d["status"] != "open" || d["awaiting_verification"] != false || lastEvent(t, d)["event"] != "verification_failed" {
			t.Fatalf("after a failing scan: %v", d)
		}
		if items, _ := e.list(t, "/api/v1/issues?type=rule&dataset_id="+ds, e.tok); len(items) != 1 {
			t.Fatalf("a second issue opened: %v", items)
		}
	})
	t.Run("TicketResolutionIsConfirmedByTheNextScan", func(t *testing.T) {
		is, err := e.App.Issues.TransitionAsSystem(context.Background(), e.ws, id, issue.ActionResolve, "ticket:jira:OPS-12")
		if err != nil || is.Status != "resolved" || !is.AwaitingVerification() {
			t.Fatalf("system resolve: %v %+v", err, is)
		}
		if _, err := e.App.Issues.TransitionAsSystem(context.Background(), e.MustWorkspace(t, "x"), id, issue.ActionReopen, "ticket:jira:OPS-12"); !vigia.IsKind(err, vigia.KindNotFound) {
			t.Fatalf("another workspace: %v", err)
		}
		src.exec(t, `UPDATE contas SET iban = 'z' WHERE iban IS NULL`)
		e.scan(t, conn)
		d := e.get(t, path, e.tok)
		h := d["history"].([]any)
		resolvedBy := h[len(h)-2].(map[string]any)
		if d["status"] != "resolved" || d["awaiting_verification"] != false || lastEvent(t, d)["event"] != "verified" ||
			resolvedBy["origin"] != "ticket:jira:OPS-12" {
			t.Fatalf("after a passing scan: %v", d)
		}
		if r := e.get(t, "/api/v1/rules/"+ruleID, e.tok); r["current_issue_id"] != nil {
			t.Fatalf("rule still has a current issue: %v", r)
		}
	})
	t.Run("ReopenAndIgnore", func(t *testing.T) {
		r := e.Do(t, http.MethodPost, path+"/reopen", e.member, nil)
		var d map[string]any
		r.JSON(t, &d)
		if r.Status != 200 || d["status"] != "open" || d["resolved_at"] != nil {
			t.Fatalf("reopen: %d %s", r.Status, r.Body)
		}
		if rr := e.get(t, "/api/v1/rules/"+ruleID, e.tok); rr["current_issue_id"] != id {
			t.Fatalf("a reopened rule issue is the rule's current one again: %v", rr)
		}
		g := e.GraphQL(t, e.member, `mutation($id: ID!){ ignoreIssue(id: $id, asExpected: true){ status resolutionReason history { event } } }`,
			map[string]any{"id": id})
		if g["errors"] != nil {
			t.Fatalf("graphql ignore: %v", g["errors"])
		}
		got := g["data"].(map[string]any)["ignoreIssue"].(map[string]any)
		if got["status"] != "ignored" || got["resolutionReason"] != "expected" {
			t.Fatalf("graphql ignore: %v", got)
		}
	})
}

// Lists filter by severity, status, type, dataset, team (id, mine, none) and SLA breach,
// count only what the caller can see, and the board has team cells.
func TestIssueListBoardAndTeams(t *testing.T) {
	e := newWF(t, "board")
	conn := e.MustConnection(t, e.ws, "c")
	d1 := e.MustDataset(t, e.ws, conn, "public", "a")
	secret := e.MustDataset(t, e.ws, conn, "saude", "b")
	now := time.Now().UTC()
	seed := func(ds, severity, status string, breached bool) string {
		id := vigia.NewID()
		var at any
		if breached {
			at = now
		}
		e.exec(t, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at, sla_breached_at)
			VALUES ($1, $2, $3, 'schema_drift', $4, $5, 'x', $6, $6, $7)`, id, e.ws, ds, severity, status, now, at)
		e.exec(t, `INSERT INTO issue_history (id, issue_id, workspace_id, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, 'open', 'scan:test', 'opened', $4)`, vigia.NewID(), id, e.ws, now)
		return id
	}
	a := seed(d1, "critical", "open", true)
	b := seed(d1, "warning", "open", false)
	c := seed(d1, "warning", "acknowledged", false)
	d := seed(d1, "info", "resolved", false)
	hidden := seed(secret, "critical", "open", false)
	domain := vigia.NewID()
	e.exec(t, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Saúde', true)`, domain, e.ws)
	e.exec(t, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, secret)

	r := e.Do(t, http.MethodPost, "/api/v1/teams", e.admin, map[string]any{"name": "dados"})
	var tm map[string]any
	r.JSON(t, &tm)
	if r.Status != 201 {
		t.Fatalf("team: %d %s", r.Status, r.Body)
	}
	teamID := tm["id"].(string)
	if r := e.Do(t, http.MethodPost, "/api/v1/teams", e.member, map[string]any{"name": "x"}); r.Status != 403 {
		t.Fatalf("member created a team: %d", r.Status)
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/teams", e.admin, map[string]any{"name": "dados"}); r.Status != 409 ||
		decodeError(t, r).Code != "team_name_taken" {
		t.Fatalf("duplicate team: %d %s", r.Status, r.Body)
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/teams/"+teamID+"/members", e.admin, map[string]any{"user": e.userID(t, e.member)}); r.Status != 200 {
		t.Fatalf("add member: %d %s", r.Status, r.Body)
	}
	for _, id := range []string{a, c} {
		r := e.Do(t, http.MethodPatch, "/api/v1/issues/"+id, e.member, map[string]any{"assignee_team_id": teamID})
		var d map[string]any
		r.JSON(t, &d)
		if r.Status != 200 || d["assignee_team_id"] != teamID || d["assignee_team_name"] != "dados" || lastEvent(t, d)["event"] != "assigned" {
			t.Fatalf("assign: %d %s", r.Status, r.Body)
		}
	}
	if r := e.Do(t, http.MethodPatch, "/api/v1/issues/"+b, e.member, map[string]any{"assignee_team_id": vigia.NewID()}); r.Status != 404 {
		t.Fatalf("unknown team: %d %s", r.Status, r.Body)
	}
	if r := e.Do(t, http.MethodPatch, "/api/v1/issues/"+b, e.member, map[string]any{}); r.Status != 422 {
		t.Fatalf("no field: %d %s", r.Status, r.Body)
	}

	ids := func(items []map[string]any) string {
		var out []string
		for _, it := range items {
			out = append(out, it["id"].(string))
		}
		return strings.Join(out, ",")
	}
	for name, c2 := range map[string]struct {
		query, cred string
		want        []string
		total       string
	}{
		"AllForMember":    {"", e.member, []string{a, b, c, d}, "4"},
		"AdminSeesHidden": {"?status=open", e.admin, []string{a, b, hidden}, "3"},
		"Severity":        {"?severity=warning,info", e.member, []string{b, c, d}, "3"},
		"Status":          {"?status=open,acknowledged", e.member, []string{a, b, c}, "3"},
		"Type":            {"?type=rule", e.member, nil, "0"},
		"Dataset":         {"?dataset_id=" + d1 + "&status=acknowledged", e.member, []string{c}, "1"},
		"Team":            {"?assignee_team=" + teamID, e.tok, []string{a, c}, "2"},
		"Mine":            {"?assignee_team=mine", e.member, []string{a, c}, "2"},
		"MineWithoutTeam": {"?assignee_team=mine", e.admin, nil, "0"},
		"None":            {"?assignee_team=none&status=open", e.member, []string{b}, "1"},
		"Breached":        {"?sla=breached", e.member, []string{a}, "1"},
		"Paged":           {"?limit=1&offset=0&status=open", e.member, nil, "2"},
	} {
		t.Run(name, func(t *testing.T) {
			items, total := e.list(t, "/api/v1/issues"+c2.query, c2.cred)
			if total != c2.total {
				t.Fatalf("total %s; want %s", total, c2.total)
			}
			if c2.want != nil {
				got := map[string]bool{}
				for _, it := range items {
					got[it["id"].(string)] = true
				}
				for _, w := range c2.want {
					if !got[w] || len(items) != len(c2.want) {
						t.Fatalf("items %s; want %v", ids(items), c2.want)
					}
				}
			}
		})
	}
	t.Run("BadFilterIs422", func(t *testing.T) {
		for _, q := range []string{"?severity=urgent", "?status=closed", "?assignee_team=x", "?sla=late", "?limit=501"} {
			if r := e.Do(t, http.MethodGet, "/api/v1/issues"+q, e.tok, nil); r.Status != 422 {
				t.Errorf("%s: %d", q, r.Status)
			}
		}
	})
	t.Run("Board", func(t *testing.T) {
		b := e.get(t, "/api/v1/issues/board", e.member)
		if b["total"] != 4.0 {
			t.Fatalf("board %v", b)
		}
		cols := b["columns"].([]any)
		open := cols[0].(map[string]any)
		if open["status"] != "open" || open["count"] != 2.0 || open["by_severity"].(map[string]any)["critical"] != 1.0 {
			t.Fatalf("open column %v", open)
		}
		cells := map[string]float64{}
		for _, c := range b["team_cells"].([]any) {
			m := c.(map[string]any)
			team := "none"
			if m["team_id"] != nil {
				team = m["team_name"].(string)
			}
			cells[m["status"].(string)+"/"+team] = m["count"].(float64)
		}
		want := map[string]float64{"open/dados": 1, "open/none": 1, "acknowledged/dados": 1, "resolved/none": 1}
		if fmt.Sprint(cells) != fmt.Sprint(want) {
			t.Fatalf("team cells %v; want %v", cells, want)
		}
		mine := e.get(t, "/api/v1/issues/board?assignee_team=mine", e.member)
		if mine["total"] != 2.0 {
			t.Fatalf("my board %v", mine)
		}
	})
	t.Run("TeamsReadAndRemoveMember", func(t *testing.T) {
		d := e.get(t, "/api/v1/teams/"+teamID, e.tok)
		if d["member_count"] != 1.0 || d["members"].([]any)[0].(map[string]any)["user_id"] != e.userID(t, e.member) {
			t.Fatalf("team %v", d)
		}
		if r := e.Do(t, http.MethodDelete, "/api/v1/teams/"+teamID+"/members/"+e.userID(t, e.member), e.admin, nil); r.Status != 204 {
			t.Fatalf("remove: %d", r.Status)
		}
		if _, total := e.list(t, "/api/v1/issues?assignee_team=mine", e.member); total != "0" {
			t.Fatalf("still mine: %s", total)
		}
		other := e.MustSession(t, e.MustWorkspace(t, "o"), vigia.RoleAdmin)
		if r := e.Do(t, http.MethodGet, "/api/v1/teams/"+teamID, other, nil); r.Status != 404 {
			t.Fatalf("other workspace: %d", r.Status)
		}
	})
	t.Run("GraphQLFilters", func(t *testing.T) {
		g := e.GraphQL(t, e.member, `{ issues(status: ["open", "acknowledged"], severity: ["warning"]) { total items { id severity history { event origin } } } }`, nil)
		if g["errors"] != nil {
			t.Fatalf("errors %v", g["errors"])
		}
		page := g["data"].(map[string]any)["issues"].(map[string]any)
		if page["total"] != 2.0 || len(page["items"].([]any)[0].(map[string]any)["history"].([]any)) == 0 {
			t.Fatalf("page %v", page)
		}
	})
}

// Must show 4: the SLA report of a month with seeded issues gives the counts, MTTA and
// MTTR medians and p90s and ageing buckets computed by hand (in the comments).
func TestSLAReportMatchesHandComputedNumbers(t *testing.T) {
	e := newWF(t, "sla")
	e.exec(t, `UPDATE workspaces SET timezone = 'UTC' WHERE id = $1`, e.ws)
	conn := e.MustConnection(t, e.ws, "c")
	d1 := e.MustDataset(t, e.ws, conn, "public", "d1")
	d2 := e.MustDataset(t, e.ws, conn, "public", "d2")
	d3 := e.MustDataset(t, e.ws, conn, "public", "d3")
	secret := e.MustDataset(t, e.ws, conn, "saude", "d4")
	domA, domB, domR := vigia.NewID(), vigia.NewID(), vigia.NewID()
	e.exec(t, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $4, 'A', false), ($2, $4, 'B', false), ($3, $4, 'R', true)`,
		domA, domB, domR, e.ws)
	e.exec(t, `INSERT INTO domain_datasets VALUES ($1, $3), ($1, $4), ($2, $4), ($5, $6)`, domA, domB, d1, d2, domR, secret)
	team := vigia.NewID()
	e.exec(t, `INSERT INTO teams (id, workspace_id, name) VALUES ($1, $2, 'dados')`, team, e.ws)

	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	type step struct{ from, to, event, origin, at string }
	seed := func(ws, ds, severity, created string, teamID *string, steps ...step) {
		id := vigia.NewID()
		status, reason, resolvedAt := "open", any(nil), any(nil)
		if len(steps) > 0 {
			last := steps[len(steps)-1]
			status = last.to
			if last.event == "ignored_expected" {
				reason = "expected"
			}
			if status == "resolved" || status == "ignored" {
				resolvedAt = at(last.at)
			}
		}
		e.exec(t, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at, resolution_reason,
			assignee_team_id, resolved_at) VALUES ($1, $2, $3, 'schema_drift', $4, $5, 'x', $6, $6, $7, $8, $9)`,
			id, ws, ds, severity, status, at(created), reason, teamID, resolvedAt)
		e.exec(t, `INSERT INTO issue_history (id, issue_id, workspace_id, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, 'open', 'scan:s', 'opened', $4)`, vigia.NewID(), id, ws, at(created))
		for _, s := range steps {
			e.exec(t, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, vigia.NewID(), id, ws, s.from, s.to, s.origin, s.event, at(s.at))
		}
	}
	u := "user:u"
	// I1 critical on d2 (domains A and B): ack after 2 h, resolved after 10 h: MTTA 2, MTTR 10, met.
	seed(e.ws, d2, "critical", "2026-03-02 00:00", nil, step{"open", "acknowledged", "acknowledged", u, "2026-03-02 02:00"},
		step{"acknowledged", "resolved", "resolved", u, "2026-03-02 10:00"})
	// I2 critical, team dados: ack after 6 h, assigned, acknowledged at month end (27 days old:
	// d7_30); its 24 h passed on 03-06: breached.
	seed(e.ws, d1, "critical", "2026-03-05 00:00", &team, step{"open", "acknowledged", "acknowledged", u, "2026-03-05 06:00"},
		step{"acknowledged", "acknowledged", "assigned", u, "2026-03-06 12:00"})
	// I3 warning ignored as expected after 4 h: opened and MTTA only.
	seed(e.ws, d1, "warning", "2026-03-10 00:00", nil, step{"open", "ignored", "ignored_expected", u, "2026-03-10 04:00"})
	// I4 warning opened in February (breached there), resolved 03-03 after 11 days open: MTTR 264.
	seed(e.ws, d1, "warning", "2026-02-20 00:00", nil, step{"open", "acknowledged", "acknowledged", u, "2026-02-20 12:00"},
		step{"acknowledged", "resolved", "resolved", u, "2026-03-03 00:00"})
	// I5 critical: resolved by a scan after 5 h (no response), reopened a day later, resolved
	// by a person after 10 more hours: clock 15 h = MTTA = MTTR, never past 24 h: met.
	seed(e.ws, d1, "critical", "2026-03-15 00:00", nil, step{"open", "resolved", "auto_resolved", "scan:s2", "2026-03-15 05:00"},
		step{"resolved", "open", "reopened", u, "2026-03-16 00:00"}, step{"open", "resolved", "resolved", u, "2026-03-16 10:00"})
	// I6 warning open since 03-20 (12 days: d7_30); 72 h passed on 03-23: breached.
	seed(e.ws, d1, "warning", "2026-03-20 00:00", nil)
	// I7 critical opened 12 h before the month's end: lt_1d, not yet due.
	seed(e.ws, d1, "critical", "2026-03-31 12:00", nil)
	// I8 info open since January (90 days: gt_30d) on d3, in no domain; no target.
	seed(e.ws, d3, "info", "2026-01-01 00:00", nil)
	// I9 warning, team dados, acknowledged by a ticket after 1 h (4 days old: d3_7); due 03-31: breached.
	seed(e.ws, d1, "warning", "2026-03-28 00:00", &team, step{"open", "acknowledged", "acknowledged", "ticket:jira:OPS-1", "2026-03-28 01:00"})
	// I10 warning opened 2 days before the end: d1_3, due in April.
	seed(e.ws, d1, "warning", "2026-03-30 00:00", nil)
	// I14 warning ignored (not as expected) after 8 h: closed, MTTA 8, MTTR 8, met.
	seed(e.ws, d1, "warning", "2026-03-12 00:00", nil, step{"open", "ignored", "ignored", u, "2026-03-12 08:00"})
	// Not counted: closed in February, a restricted dataset the member cannot see, April,
	// another workspace.
	seed(e.ws, d1, "critical", "2026-02-01 00:00", nil, step{"open", "resolved", "resolved", u, "2026-02-02 00:00"})
	seed(e.ws, secret, "critical", "2026-03-03 00:00", nil)
	seed(e.ws, d1, "critical", "2026-04-02 00:00", nil)
	otherWS := e.MustWorkspace(t, "other")
	seed(otherWS, e.MustDataset(t, otherWS, e.MustConnection(t, otherWS, "c"), "public", "x"), "critical", "2026-03-03 00:00", nil)

	type pct struct {
		Median  *float64 `json:"median_hours"`
		P90     *float64 `json:"p90_hours"`
		Samples int      `json:"samples"`
	}
	type group struct {
		Key        *string        `json:"key"`
		Name       *string        `json:"name"`
		Opened     int            `json:"opened"`
		Closed     int            `json:"closed"`
		Unresolved int            `json:"unresolved"`
		Breached   int            `json:"breached"`
		InScope    int            `json:"in_scope"`
		MTTA       pct            `json:"mtta"`
		MTTR       pct            `json:"mttr"`
		Ageing     map[string]int `json:"ageing"`
	}
	type report struct {
		Period string  `json:"period"`
		Groups []group `json:"groups"`
		Total  group   `json:"total"`
	}
	get := func(t *testing.T, q, cred string) report {
		t.Helper()
		r := e.Do(t, http.MethodGet, "/api/v1/issues/sla-report"+q, cred, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
		var rep report
		if err := json.Unmarshal(r.Body, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	f := func(v float64) *float64 { return &v }
	eq := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	check := func(t *testing.T, name string, got group, want group) {
		t.Helper()
		if got.Opened != want.Opened || got.Closed != want.Closed || got.Unresolved != want.Unresolved || got.Breached != want.Breached ||
			got.InScope != want.InScope || !eq(got.MTTA.Median, want.MTTA.Median) || !eq(got.MTTA.P90, want.MTTA.P90) ||
			!eq(got.MTTR.Median, want.MTTR.Median) || !eq(got.MTTR.P90, want.MTTR.P90) || got.MTTA.Samples != want.MTTA.Samples ||
			got.MTTR.Samples != want.MTTR.Samples || fmt.Sprint(got.Ageing) != fmt.Sprint(want.Ageing) {
			show := func(g group) string {
				p := func(v *float64) string {
					if v == nil {
						return "nil"
					}
					return fmt.Sprint(*v)
				}
				return fmt.Sprintf("opened %d closed %d unresolved %d breached %d/%d mtta %s/%s (%d) mttr %s/%s (%d) ageing %v",
					g.Opened, g.Closed, g.Unresolved, g.Breached, g.InScope, p(g.MTTA.Median), p(g.MTTA.P90), g.MTTA.Samples,
					p(g.MTTR.Median), p(g.MTTR.P90), g.MTTR.Samples, g.Ageing)
			}
			t.Errorf("%s:\n got  %s\n want %s", name, show(got), show(want))
		}
	}
	ageing := func(lt1, d13, d37, d730, gt30 int) map[string]int {
		return map[string]int{"lt_1d": lt1, "d1_3": d13, "d3_7": d37, "d7_30": d730, "gt_30d": gt30}
	}

	t.Run("BySeverity", func(t *testing.T) {
		rep := get(t, "?period=2026-03&group_by=severity", e.member)
		// Total: opened I1 I2 I3 I5 I6 I7 I9 I10 I14; closed I1 I4 I5 I14; unresolved I2 I6 I7 I8
		// I9 I10; breached I2 I6 I9 of in_scope + met I1 I5 I14. MTTA [1 2 4 6 8 15]: median
		// (4+6)/2 = 5, p90 at 4.5 = 8 + 0.5×7 = 11.5. MTTR [8 10 15 264]: median 12.5, p90 at
		// 2.7 = 15 + 0.7×249 = 189.3.
		check(t, "total", rep.Total, group{Opened: 9, Closed: 4, Unresolved: 6, Breached: 3, InScope: 6,
			MTTA: pct{f(5), f(11.5), 6}, MTTR: pct{f(12.5), f(189.3), 4}, Ageing: ageing(1, 1, 1, 2, 1)})
		if len(rep.Groups) != 3 || *rep.Groups[0].Key != "critical" || *rep.Groups[1].Key != "info" || *rep.Groups[2].Key != "warning" {
			t.Fatalf("groups %+v", rep.Groups)
		}
		// critical: I1 I2 I5 I7. MTTA [2 6 15]: p90 at 1.8 = 6 + 0.8×9 = 13.2; MTTR [10 15]: p90 at 0.9 = 14.5.
		check(t, "critical", rep.Groups[0], group{Opened: 4, Closed: 2, Unresolved: 2, Breached: 1, InScope: 3,
			MTTA: pct{f(6), f(13.2), 3}, MTTR: pct{f(12.5), f(14.5), 2}, Ageing: ageing(1, 0, 0, 1, 0)})
		check(t, "info", rep.Groups[1], group{Unresolved: 1, Ageing: ageing(0, 0, 0, 0, 1)})
		// warning: I3 I4 I6 I9 I10 I14. MTTA [1 4 8]: p90 = 4 + 0.8×4 = 7.2; MTTR [8 264]: median
		// 136, p90 = 8 + 0.9×256 = 238.4.
		check(t, "warning", rep.Groups[2], group{Opened: 5, Closed: 2, Unresolved: 3, Breached: 2, InScope: 3,
			MTTA: pct{f(4), f(7.2), 3}, MTTR: pct{f(136), f(238.4), 2}, Ageing: ageing(0, 1, 1, 1, 0)})
	})
	t.Run("ByTeam", func(t *testing.T) {
		rep := get(t, "?period=2026-03&group_by=team", e.member)
		if len(rep.Groups) != 2 || *rep.Groups[0].Name != "dados" || rep.Groups[1].Key != nil {
			t.Fatalf("groups %+v", rep.Groups)
		}
		// dados: I2 and I9, both breached; MTTA [1 6]: median 3.5, p90 = 1 + 0.9×5 = 5.5.
		check(t, "dados", rep.Groups[0], group{Opened: 2, Unresolved: 2, Breached: 2, InScope: 2,
			MTTA: pct{f(3.5), f(5.5), 2}, Ageing: ageing(0, 0, 1, 1, 0)})
	})
	t.Run("ByDomainCountsADatasetInEachOfItsDomains", func(t *testing.T) {
		rep := get(t, "?period=2026-03&group_by=domain", e.member)
		if len(rep.Groups) != 3 || *rep.Groups[0].Name != "A" || *rep.Groups[1].Name != "B" || rep.Groups[2].Key != nil {
			t.Fatalf("groups %+v", rep.Groups)
		}
		// B holds only d2 (I1); A holds d1 and d2: everything but I8, which is in no domain.
		check(t, "B", rep.Groups[1], group{Opened: 1, Closed: 1, InScope: 1, MTTA: pct{f(2), f(2), 1}, MTTR: pct{f(10), f(10), 1},
			Ageing: ageing(0, 0, 0, 0, 0)})
		check(t, "none", rep.Groups[2], group{Unresolved: 1, Ageing: ageing(0, 0, 0, 0, 1)})
		if a := rep.Groups[0]; a.Opened != 9 || a.Closed != 4 || a.Unresolved != 5 || rep.Total.Opened != 9 {
			t.Fatalf("A %+v, total %+v", a, rep.Total)
		}
	})
	t.Run("AdminSeesTheRestrictedDataset", func(t *testing.T) {
		if rep := get(t, "?period=2026-03&group_by=severity", e.admin); rep.Total.Opened != 10 || rep.Total.Unresolved != 7 {
			t.Fatalf("admin total %+v", rep.Total)
		}
	})
	t.Run("AnotherWorkspaceSeesOnlyItsOwn", func(t *testing.T) {
		if rep := get(t, "?period=2026-03", e.MustToken(t, otherWS)); rep.Total.Opened != 1 {
			t.Fatalf("other total %+v", rep.Total)
		}
	})
	t.Run("FutureMonthIsEmpty", func(t *testing.T) {
		if rep := get(t, "?period=2099-01", e.member); rep.Total.Opened != 0 || rep.Total.Unresolved != 0 || len(rep.Groups) != 0 {
			t.Fatalf("future %+v", rep)
		}
	})
	t.Run("BadParametersAre422", func(t *testing.T) {
		for _, q := range []string{"", "?period=2026-13", "?period=March", "?period=2026-03&group_by=dataset"} {
			if r := e.Do(t, http.MethodGet, "/api/v1/issues/sla-report"+q, e.member, nil); r.Status != 422 || strings.Contains(string(r.Body), "March") {
				t.Errorf("%q: %d %s", q, r.Status, r.Body)
			}
		}
	})
}

// SLA timers: an open issue past its severity's target is marked once, with one
// issue.sla_breached event in the outbox; targets are a workspace setting.
func TestSLATimersMarkBreachesOnce(t *testing.T) {
	e := newWF(t, "timers")
	ds := e.MustDataset(t, e.ws, e.MustConnection(t, e.ws, "c"), "public", "t")
	now := time.Now().UTC().Truncate(time.Second)
	seed := func(severity string, created time.Time, steps ...[3]any) string {
		id := vigia.NewID()
		status := "open"
		if len(steps) > 0 {
			status = steps[len(steps)-1][1].(string)
		}
		e.exec(t, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at)
			VALUES ($1, $2, $3, 'schema_drift', $4, $5, 'Anomalia', $6, $6)`, id, e.ws, ds, severity, status, created)
		e.exec(t, `INSERT INTO issue_history (id, issue_id, workspace_id, to_status, origin, event, created_at)
			VALUES ($1, $2, $3, 'open', 'scan:s', 'opened', $4)`, vigia.NewID(), id, e.ws, created)
		for _, s := range steps {
			e.exec(t, `INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
				VALUES ($1, $2, $3, $4, $5, 'user:u', $5, $6)`, vigia.NewID(), id, e.ws, s[0], s[1], s[2])
		}
		return id
	}
	late := seed("critical", now.Add(-30*time.Hour))
	// Open 10 h, resolved for 10 h, open again for the last 10 h: 20 h on the clock.
	paused := seed("critical", now.Add(-30*time.Hour), [3]any{"open", "resolved", now.Add(-20 * time.Hour)},
		[3]any{"resolved", "open", now.Add(-10 * time.Hour)})
	warning := seed("warning", now.Add(-30*time.Hour))

	t.Run("TargetsNeedAnAdminSession", func(t *testing.T) {
		if d := e.get(t, "/api/v1/workspace/sla-targets", e.tok); d["critical_hours"] != 24.0 || d["warning_hours"] != 72.0 || d["default"] != true {
			t.Fatalf("defaults %v", d)
		}
		body := map[string]any{"critical_hours": 24, "warning_hours": 72}
		if r := e.Do(t, http.MethodPut, "/api/v1/workspace/sla-targets", e.member, body); r.Status != 403 {
			t.Fatalf("member: %d", r.Status)
		}
		if r := e.Do(t, http.MethodPut, "/api/v1/workspace/sla-targets", e.admin, map[string]any{"critical_hours": 0, "warning_hours": 72}); r.Status != 422 {
			t.Fatalf("zero hours: %d", r.Status)
		}
		if r := e.Do(t, http.MethodPut, "/api/v1/workspace/sla-targets", e.admin, map[string]any{"critical_hours": 24}); r.Status != 422 {
			t.Fatalf("missing field: %d", r.Status)
		}
	})
	// The timers run over every workspace of the database; the checks below look at this
	// workspace's issues only.
	if _, err := e.App.Issues.MarkSLABreaches(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Run("MarkedAtTheMomentTheTargetPassed", func(t *testing.T) {
		d := e.get(t, "/api/v1/issues/"+late, e.tok)
		at, _ := time.Parse(time.RFC3339Nano, d["sla_breached_at"].(string))
		if !at.Equal(now.Add(-6 * time.Hour)) {
			t.Fatalf("sla_breached_at %v; want %v", at, now.Add(-6*time.Hour))
		}
		for _, id := range []string{paused, warning} {
			if d := e.get(t, "/api/v1/issues/"+id, e.tok); d["sla_breached_at"] != nil {
				t.Fatalf("%s marked: %v", id, d)
			}
		}
		if items, _ := e.list(t, "/api/v1/issues?sla=breached", e.tok); len(items) != 1 || items[0]["id"] != late {
			t.Fatalf("breached list %v", items)
		}
	})
	t.Run("OneEventWithTheSLABreachBody", func(t *testing.T) {
		var typ, key string
		var payload map[string]any
		if err := e.DB.Pool().QueryRow(context.Background(), `SELECT type, idempotency_key, payload FROM events
			WHERE workspace_id = $1 AND subject_id = $2`, e.ws, late).Scan(&typ, &key, &payload); err != nil {
			t.Fatal(err)
		}
		sb := payload["sla_breach"].(map[string]any)
		if typ != "issue.sla_breached" || key != issue.BreachIdempotencyKey(late) || sb["issue_id"] != late || sb["severity"] != "critical" ||
			sb["target_hours"] != 24.0 || sb["breached_at"] != now.Add(-6*time.Hour).Format(time.RFC3339) || payload["code"] != "issue_sla_breached" {
			t.Fatalf("event %s %s %v", typ, key, payload)
		}
	})
	t.Run("OncePerIssue", func(t *testing.T) {
		if _, err := e.App.Issues.MarkSLABreaches(context.Background()); err != nil {
			t.Fatal(err)
		}
		var events int
		if err := e.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE workspace_id = $1`, e.ws).Scan(&events); err != nil || events != 1 {
			t.Fatalf("%d events (%v)", events, err)
		}
	})
	t.Run("ShorterTargetsApplyToOpenIssues", func(t *testing.T) {
		r := e.Do(t, http.MethodPut, "/api/v1/workspace/sla-targets", e.admin, map[string]any{"critical_hours": 12, "warning_hours": nil})
		var out map[string]any
		r.JSON(t, &out)
		if r.Status != 200 || out["critical_hours"] != 12.0 || out["warning_hours"] != nil || out["default"] != false {
			t.Fatalf("put: %d %s", r.Status, r.Body)
		}
		if _, err := e.App.Issues.MarkSLABreaches(context.Background()); err != nil {
			t.Fatal(err)
		}
		d := e.get(t, "/api/v1/issues/"+paused, e.tok)
		at, _ := time.Parse(time.RFC3339Nano, d["sla_breached_at"].(string))
		// 10 h before the pause, then 2 h after reopening 10 h ago.
		if !at.Equal(now.Add(-8 * time.Hour)) {
			t.Fatalf("paused issue breached at %v; want %v", at, now.Add(-8*time.Hour))
		}
		if d := e.get(t, "/api/v1/issues/"+warning, e.tok); d["sla_breached_at"] != nil {
			t.Fatalf("a warning without target was marked")
		}
	})
}

// Must show 5: ignoring an anomaly as expected twice raises the dataset's tuned
// threshold, shown by /tuning and by the issue's explanation, and the next scan uses it.
func TestIgnoringAnomaliesAsExpectedTunesTheThreshold(t *testing.T) {
	e := newWF(t, "tuning")
	src := newSource(t, "sqlite", e.root)
	src.exec(t, `CREATE TABLE leituras (id INTEGER PRIMARY KEY)`)
	src.exec(t, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO leituras SELECT i FROM n`)
	conn := e.connect(t, "sensores", "sqlite", src.dsn)
	for i := 0; i < 6; i++ {
		e.scan(t, conn)
	}
	ds := e.dataset(t, conn, "leituras")
	volumeIssue := func(t *testing.T) string {
		t.Helper()
		items, _ := e.list(t, "/api/v1/issues?type=anomaly&status=open&dataset_id="+ds, e.tok)
		if len(items) != 1 || items[0]["subtype"] != "volume" {
			t.Fatalf("open anomalies %v", items)
		}
		return items[0]["id"].(string)
	}
	ignore := func(t *testing.T, id string) {
		t.Helper()
		r := e.Do(t, http.MethodPost, "/api/v1/issues/"+id+"/ignore", e.member, map[string]any{"reason": "expected"})
		var d map[string]any
		r.JSON(t, &d)
		if r.Status != 200 || d["status"] != "ignored" || d["resolution_reason"] != "expected" || lastEvent(t, d)["event"] != "ignored_expected" {
			t.Fatalf("ignore: %d %s", r.Status, r.Body)
		}
	}
	volumeTuning := func(t *testing.T) map[string]any {
		t.Helper()
		var ts []map[string]any
		e.Do(t, http.MethodGet, "/api/v1/datasets/"+ds+"/tuning", e.tok, nil).JSON(t, &ts)
		for _, tu := range ts {
			if tu["metric"] == "volume" {
				return tu
			}
		}
		t.Fatalf("no volume tuning in %v", ts)
		return nil
	}

	src.exec(t, `DELETE FROM leituras WHERE id > 100`)
	e.scan(t, conn)
	first := volumeIssue(t)
	if x := e.get(t, "/api/v1/issues/"+first+"/explanation", e.tok); x["kind"] != "anomaly" || x["tuned_threshold"] != nil ||
		x["tuned_threshold_label"] != nil || x["current_threshold"] != 3.5 {
		t.Fatalf("untuned explanation %v", x)
	}
	ignore(t, first)
	if tu := volumeTuning(t); tu["threshold"] != 4.0 || tu["ignored"] != 1.0 {
		t.Fatalf("after one ignore %v", tu)
	}

	e.scan(t, conn)
	second := volumeIssue(t)
	if second == first {
		t.Fatal("the ignored issue was reused")
	}
	if x := e.get(t, "/api/v1/issues/"+second+"/explanation", e.tok); x["threshold"] != 4.0 {
		t.Fatalf("the second anomaly was not judged with the tuned threshold: %v", x)
	}
	ignore(t, second)

	t.Run("TuningShowsTheRaisedThreshold", func(t *testing.T) {
		tu := volumeTuning(t)
		if tu["threshold"] != 4.5 || tu["tuned_threshold"] != 4.5 || tu["ignored"] != 2.0 || tu["next_on_ignore"] != 5.0 ||
			tu["tuned_threshold_label"] != "3.5 → 4.5 (2 ignorados como esperado)" || tu["retune_awaiting_approval"] != nil {
			t.Fatalf("tuning %v", tu)
		}
	})
	t.Run("ExplanationShowsTheTunedThreshold", func(t *testing.T) {
		x := e.get(t, "/api/v1/issues/"+second+"/explanation", e.tok)
		if x["tuned_threshold"] != 4.5 || x["current_threshold"] != 4.5 || x["tuned_threshold_label"] != "3.5 → 4.5 (2 ignorados como esperado)" ||
			x["metric"] != "volume" || x["observed"] != 100.0 || x["median"] != 1000.0 || x["ignored_as_expected"] != 2.0 {
			t.Fatalf("explanation %v", x)
		}
		en := e.Do(t, http.MethodGet, "/api/v1/issues/"+second+"/explanation", e.tok, nil, "Accept-Language: en")
		var xe map[string]any
		en.JSON(t, &xe)
		if xe["tuned_threshold_label"] != "3.5 → 4.5 (2 ignored as expected)" {
			t.Fatalf("english label %v", xe["tuned_threshold_label"])
		}
	})
	t.Run("TheNextScanUsesIt", func(t *testing.T) {
		// 2200 rows against [1000 ×6, 100, 100]: |z| = 1200 / (1.2533 × 225) ≈ 4.26, an
		// anomaly at the calibrated 3.5, not at the tuned 4.5.
		hist := []float64{1000, 1000, 1000, 1000, 1000, 1000, 100, 100}
		if a := quality.DetectAnomaly(quality.AnomalyInput{Metric: quality.MetricVolume, History: hist, Value: 2200}); !a.Anomalous {
			t.Fatalf("untuned threshold would not flag it: %+v", a)
		}
		src.exec(t, `WITH RECURSIVE n(i) AS (SELECT 1001 UNION ALL SELECT i + 1 FROM n WHERE i < 3100) INSERT INTO leituras SELECT i FROM n`)
		e.scan(t, conn)
		if items, _ := e.list(t, "/api/v1/issues?type=anomaly&status=open&dataset_id="+ds, e.tok); len(items) != 0 {
			t.Fatalf("the tuned threshold was not used: %v", items)
		}
	})
	t.Run("AtTheMaximumASilenceWaitsForAnAdmin", func(t *testing.T) {
		e.exec(t, `UPDATE anomaly_tuning SET threshold = 10, ignored = 13 WHERE dataset_id = $1 AND metric = 'volume'`, ds)
		e.exec(t, `UPDATE issues SET status = 'open', resolution_reason = NULL WHERE id = $1`, second)
		ignore(t, second)
		tu := volumeTuning(t)
		rt, _ := tu["retune_awaiting_approval"].(map[string]any)
		if rt == nil || rt["action"] != "silence" || tu["silenced"] != false || tu["threshold"] != 10.0 {
			t.Fatalf("tuning %v", tu)
		}
		path := "/api/v1/datasets/" + ds + "/tuning/retunes/" + rt["id"].(string)
		if r := e.Do(t, http.MethodPost, path+"/approve", e.member, nil); r.Status != 403 {
			t.Fatalf("member approved: %d", r.Status)
		}
		if r := e.Do(t, http.MethodPost, path+"/approve", e.admin, nil); r.Status != 200 {
			t.Fatalf("approve: %d %s", r.Status, r.Body)
		}
		if r := e.Do(t, http.MethodPost, path+"/reject", e.admin, nil); r.Status != 409 {
			t.Fatalf("decided twice: %d", r.Status)
		}
		if tu := volumeTuning(t); tu["silenced"] != true || tu["retune_awaiting_approval"] != nil {
			t.Fatalf("after approval %v", tu)
		}
	})
}
