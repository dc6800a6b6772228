package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app/apptest"
)

// parityTableOps maps the GET operations of teams, notifications, the on-call rota and
// ticket integrations (issue 23, part B) to their GraphQL fields.
func parityTableOps() map[string]parity {
	channel := `id name kind config { webhookUrl locale } minSeverity digest eventKinds
		scope { domainIds connectionIds datasetIds issueTypes includeAutoMonitors } teamId signed
		lastDeliveryStatus lastDeliveryAt lastDeliveryError createdAt updatedAt`
	integration := `id name provider baseUrl project webhookSecretSet webhookPath intervalMin comment transition createdAt
		updatedAt credentialsSet lastPollAt nextPollAt lastError lastErrorAt backoffUntil ticketErrors pendingWrites failedWrites`
	check := `id name datasetId otherId groupBy sumColumns tolerancePct createdAt
		lastResult { status code groups failedGroups differing { group code countA countB sums } scanId runAt }`
	entry := `id kind title body tags links { datasetId column } outdated authorId score createdAt updatedAt`
	rep := `id type persona subjectId title language contentMd score aiGenerated aiModel generatedAt routineId`
	sugg := `id datasetId datasetName category signature column status params aiGenerated aiModel generatedAt createdAt updatedAt
		rehearsal { version status affectedRows totalRows pct requestedAt ranAt durationMs actor reason { code params message } }
		impact { estimatedRows estimatedRowsSample rowsSource ruleId }`
	tree := `impactScope impactColumns impactNote impactTree { ref id name restricted hops parent impact viaColumns }
		downstreamCount downstreamColumnCount exposuresCount exposures { node id name type } reachTotal truncated`
	month := lastMonth().Format("2006-01")
	pct := `{ medianHours p90Hours samples }`
	group := `key name opened closed unresolved breached inScope mtta ` + pct + ` mttr ` + pct + `
		ageing { lt1d d1to3 d3to7 d7to30 gt30d }`
	return map[string]parity{
		"getIncident": {rest: "/api/v1/incidents/{id}", sample: "incident",
			query: `query($id: ID!){ incident(id: $id){ id status title severity rootDatasetId rootDatasetName issueIds datasetIds
				scanId createdAt updatedAt resolvedAt ` + tree + ` } }`, at: "incident"},
		"getIssueImpact": {rest: "/api/v1/issues/{id}/impact", sample: "issue",
			query: `query($id: ID!){ issue(id: $id){ impact { ` + tree + ` } } }`, at: "issue.impact"},
		"issueExplanation": {rest: "/api/v1/issues/{id}/explanation", sample: "issue",
			query: `query($id: ID!){ issue(id: $id){ explanation { issueId type kind title metric column observed median mad z
				direction historySize threshold currentThreshold tunedThreshold tunedThresholdLabel nextOnIgnore ignoredAsExpected
				resolved silenced retuneAwaitingApproval { id action fromThreshold issueId requestedBy requestedAt } details
				sla { breachedAt } rule { ruleId ruleType observed threshold } } } }`, at: "issue.explanation"},
		"issueBoard": {rest: "/api/v1/issues/board",
			query: `{ issueBoard { total columns { status count bySeverity } teamCells { status teamId teamName count } } }`,
			at:    "issueBoard"},
		// Last month, whose report is as of its end (the current month's is as of now).
		"issueSLAReport": {rest: "/api/v1/issues/sla-report?period=" + month + "&group_by=severity",
			query: `{ issueSLAReport(period: "` + month + `", groupBy: "severity") { period groupBy timezone from to asOf
				targets { criticalHours warningHours default } groups { ` + group + ` } total { ` + group + ` } } }`,
			at: "issueSLAReport", renamed: map[string]string{"lt1d": "lt_1d", "d1to3": "d1_3", "d3to7": "d3_7", "d7to30": "d7_30",
				"gt30d": "gt_30d"}},
		"getSLATargets": {rest: "/api/v1/workspace/sla-targets", query: `{ slaTargets { criticalHours warningHours default } }`,
			at: "slaTargets"},
		"listRulePacks": {rest: "/api/v1/rule-packs", query: `{ rulePacks { items { name version title description
			items { key semanticType ruleType title severity pattern checkDigit } } total } }`, at: "rulePacks.items",
			total: "rulePacks.total"},
		"getRulePack": {rest: "/api/v1/rule-packs/{id}", sample: "pack", query: `query($id: String!){ rulePack(name: $id){ name
			version title description items { key semanticType ruleType title severity pattern checkDigit } } }`, at: "rulePack"},
		"previewRulePack": {rest: "/api/v1/rule-packs/{id}/preview", sample: "pack",
			query: `query($id: String!){ rulePack(name: $id){ preview { pack version applied datasets new existing
				matches { datasetId datasetName column semanticType item ruleType ruleName severity status ruleId
				params { column columns values pattern min max refDatasetId refColumn maxOrphanPct maxAgeHours minRows sql maxFailing } } } } }`,
			at: "rulePack.preview"},
		"listReconcileChecks": {rest: "/api/v1/reconcile/checks", query: `{ reconcileChecks { items { ` + check + ` } total } }`,
			at: "reconcileChecks.items", total: "reconcileChecks.total"},
		"getReconcileCheck": {rest: "/api/v1/reconcile/checks/{id}", sample: "check",
			query: `query($id: ID!){ reconcileCheck(id: $id){ ` + check + ` } }`, at: "reconcileCheck"},
		"listOrchestratorRuns": {rest: "/api/v1/orchestrator-runs", query: `{ orchestratorRuns { items { id orchestrator pipeline runId
			status startedAt endedAt inputs outputs unmatched facets receivedAt updatedAt nextScans { datasetId scanId profiledAt } }
			total } }`, at: "orchestratorRuns.items", total: "orchestratorRuns.total"},
		"ideDatasetColumns": {rest: "/api/v1/ide/datasets/{id}/columns", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ editorColumns { name position dataType class nullable primaryKey semanticType
				sensitivity profiled nullCount nullRate distinct distinctEstimated } } }`, at: "dataset.editorColumns"},
		"ideResolve": {rest: "/api/v1/ide/resolve?name={id}", sample: "datasetName",
			query: `query($id: String!){ editorResolve(name: $id){ datasetId name schema table kind connectionId connectionName verdict
				score decision reasons owner piiColumns otherMatches { datasetId connectionId connectionName schema table } } }`,
			at: "editorResolve"},
		"getPublicShare": {rest: "/api/v1/domains/{id}/public-share", sample: "domain", as: "admin",
			query: `query($id: ID!){ domain(id: $id){ publicShare { domainId enabled token pageUrl badgeUrl createdAt rotatedAt } } }`,
			at:    "domain.publicShare"},
		"getMe": {rest: "/api/v1/auth/me", as: "admin", query: `{ me { id email role workspaceId workspaceName plan locale timezone
			effectiveLocale effectiveTimezone workspaceLocale workspaceTimezone responseLanguage } }`, at: "me"},
		"getWorkspaceLocale": {rest: "/api/v1/workspace/locale", query: `{ workspaceSettings { locale effectiveLocale timezone } }`,
			at: "workspaceSettings"},
		"getWorkspaceCurrency": {rest: "/api/v1/workspace/currency", query: `{ workspaceSettings { currency { currency default } } }`,
			at: "workspaceSettings.currency"},
		"getArt10Dossier": {rest: "/api/v1/compliance/art10", query: `{ art10Dossier { article gapCounts datasets {
			datasetId datasetName connectionId connectionName sourceKind dataCountry upstreamCount domains score verdict rules
			rulesPassed rulesFailed openIssues piiColumns biasRelevantColumns gaps } } }`, at: "art10Dossier"},
		"getWorkspaceDataPolicy": {rest: "/api/v1/workspace/data-policy",
			query: `{ workspaceDataPolicy { scope domainId updatedAt rules { rule enabled maxAgeDays severity column } } }`,
			at:    "workspaceDataPolicy"},
		"getDomainDataPolicy": {rest: "/api/v1/domains/{id}/data-policy", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ dataPolicy { scope domainId updatedAt rules { rule enabled maxAgeDays severity
				column } } } }`, at: "domain.dataPolicy"},
		"listKnowledgeEntries": {rest: "/api/v1/knowledge?q=encomenda", query: `{ knowledgeEntries(q: "encomenda") { items { ` + entry + ` }
			total } }`, at: "knowledgeEntries.items", total: "knowledgeEntries.total"},
		"getKnowledgeEntry": {rest: "/api/v1/knowledge/{id}", sample: "knowledge",
			query: `query($id: ID!){ knowledgeEntry(id: $id){ ` + entry + ` } }`, at: "knowledgeEntry"},
		"listReports": {rest: "/api/v1/reports", query: `{ reports { items { ` + rep + ` } total } }`, at: "reports.items",
			total: "reports.total"},
		"getReport": {rest: "/api/v1/reports/{id}", sample: "report", query: `query($id: ID!){ report(id: $id){ ` + rep + ` } }`,
			at: "report"},
		"listRoutines": {rest: "/api/v1/routines", query: `{ routines { key cadence weekday localTime timezone enabled nextRunAt
			lastRunAt lastStatus lastResult lastReportId } }`, at: "routines"},
		"listSuggestions": {rest: "/api/v1/suggestions", query: `{ suggestions { items { ` + sugg + ` } total } }`,
			at: "suggestions.items", total: "suggestions.total", empty: true},
		"getSuggestion": {rest: "/api/v1/suggestions/{id}", sample: "suggestion",
			query: `query($id: ID!){ suggestion(id: $id){ ` + sugg + ` } }`, at: "suggestion"},
		"datasetSyntheticEvaluation": {rest: "/api/v1/datasets/{id}/synthetic/evaluation?rows=50&seed=7", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ syntheticEvaluation(rows: 50, seed: 7) { datasetId rows seed utilityScore
				utilityComponents { name value } utilityWeights { name value } privacyVerdict key params { name value } reason
				findings { key params } kMin kThreshold quasiIdentifiers } } }`, at: "dataset.syntheticEvaluation"},
		"listTeams": {rest: "/api/v1/teams", query: `{ teams { items { id name memberCount createdAt } total } }`,
			at: "teams.items", total: "teams.total"},
		"getTeam": {rest: "/api/v1/teams/{id}", sample: "team",
			query: `query($id: ID!){ team(id: $id){ id name memberCount members { userId email role } createdAt } }`, at: "team"},
		"listNotificationChannels": {rest: "/api/v1/notification-channels", as: "admin",
			query: `{ notificationChannels { items { ` + channel + ` } total } }`,
			at:    "notificationChannels.items", total: "notificationChannels.total"},
		"getNotificationChannel": {rest: "/api/v1/notification-channels/{id}", sample: "channel", as: "admin",
			query: `query($id: ID!){ notificationChannel(id: $id){ ` + channel + ` } }`, at: "notificationChannel"},
		"previewNotificationChannel": {rest: "/api/v1/notification-channels/{id}/preview?days=45", sample: "channel", as: "admin",
			query: `query($id: ID!){ notificationChannel(id: $id){ preview(days: 45) { days alerts deliveries held } } }`,
			at:    "notificationChannel.preview"},
		"listNotificationChannelDeliveries": {rest: "/api/v1/notification-channels/{id}/deliveries", sample: "channel", as: "admin",
			query: `query($id: ID!){ notificationChannel(id: $id){ deliveries { items { id event status test idempotencyKey
				attempts { n at statusCode error outcome durationMs } nextAttemptAt lastStatusCode lastError createdAt finishedAt }
				total } } }`, at: "notificationChannel.deliveries.items", total: "notificationChannel.deliveries.total"},
		"listNotifications": {rest: "/api/v1/notifications", as: "admin",
			query: `{ notifications { items { id event code title body params severity datasetIds domainId issueId scanId held
				muteIds deliveries createdAt } total } }`, at: "notifications.items", total: "notifications.total"},
		"listNotificationMutes": {rest: "/api/v1/notification-mutes",
			query: `{ notificationMutes { items { id scope connectionId datasetId issueTypes reason endsAt createdBy createdAt }
				total } }`, at: "notificationMutes.items", total: "notificationMutes.total"},
		"getOnCallRota": {rest: "/api/v1/oncall/rota", as: "admin",
			query: `{ onCallRota { levels { userId minutes } teamId minSeverity createdAt updatedAt } }`, at: "onCallRota"},
		"listTicketIntegrations": {rest: "/api/v1/tickets/integrations",
			query: `{ ticketIntegrations { items { ` + integration + ` } total } }`,
			at:    "ticketIntegrations.items", total: "ticketIntegrations.total"},
		"getTicketIntegration": {rest: "/api/v1/tickets/integrations/{id}", sample: "integration",
			query: `query($id: ID!){ ticketIntegration(id: $id){ ` + integration + ` } }`, at: "ticketIntegration"},
		// The fixture's integration has no API credentials and its tracker is not reachable
		// from the test: both transports refuse the read with the same code.
		"listTicketTargets": {rest: "/api/v1/tickets/integrations/{id}/targets", sample: "integration",
			query: `query($id: ID!){ ticketIntegration(id: $id){ targets { truncated targets { key name } } } }`,
			at:    "ticketIntegration.targets", code: "ticket_credentials_missing"},
	}
}

// addOpsFixture adds what the part-B reads answer: a team with a member, a channel with
// a delivery of two attempts, a notification, a mute, the on-call rota and a ticket
// integration.
func (f *parityFixture) addOpsFixture(t *testing.T) {
	t.Helper()
	env := f.env
	post := func(method, path string, body any) map[string]any {
		t.Helper()
		r := env.Do(t, method, path, f.admin, body)
		if r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		var out map[string]any
		r.JSON(t, &out)
		return out
	}
	var user string
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT id::text FROM users WHERE workspace_id = $1 ORDER BY created_at LIMIT 1`,
		f.ws).Scan(&user); err != nil {
		t.Fatal(err)
	}
	team := post(http.MethodPost, "/api/v1/teams", map[string]any{"name": "Dados"})["id"].(string)
	post(http.MethodPost, "/api/v1/teams/"+team+"/members", map[string]any{"user": user})
	post(http.MethodPost, "/api/v1/teams", map[string]any{"name": "Plataforma"})
	f.ids["team"] = []string{team}

	channel, _ := MustChannel(t, env, f.admin, map[string]any{"name": "alertas", "min_severity": "critical",
		"config": map[string]any{"webhook_url": "https://" + receiverHost + "/hooks/segredo-no-caminho", "locale": "en"},
		"scope":  map[string]any{"dataset_ids": f.ids["dataset"][:1]}})
	f.ids["channel"] = []string{channel}
	now := time.Now().UTC().Truncate(time.Millisecond)
	exec(t, env, `INSERT INTO webhook_deliveries (id, workspace_id, channel_id, event, source_key, body, status, attempts,
		attempt_log, last_status_code, last_error, created_at, finished_at)
		VALUES ($1, $2, $3, 'service.alerts', 'scan:x', '\x7b7d', 'delivered', 2, $4, 200, NULL, $5, $6)`,
		vigia.NewID(), f.ws, channel, `[{"n":1,"at":"`+now.Format(time.RFC3339Nano)+`","status_code":500,"error":"http 500",
		"outcome":"retry","duration_ms":41},{"n":2,"at":"`+now.Add(time.Minute).Format(time.RFC3339Nano)+`","status_code":200,
		"outcome":"delivered","duration_ms":12}]`, now, now.Add(time.Minute))
	exec(t, env, `INSERT INTO notifications (id, workspace_id, event, code, params, source_key, dataset_ids, issue_id, severity,
		deliveries, created_at) VALUES ($1, $2, 'service.issue.sla_breached', 'issue_sla_breached', $3, 'event:x', $4::uuid[], $5,
		'critical', 1, $6)`, vigia.NewID(), f.ws, `{"issue_id":"`+f.ids["issue"][0]+`","target_hours":24}`,
		f.ids["dataset"][:1], f.ids["issue"][0], now)
	post(http.MethodPost, "/api/v1/notification-mutes", map[string]any{"scope": "dataset", "dataset_id": f.ids["dataset"][1],
		"reason": "carga mensal", "ends_at": now.Add(48 * time.Hour).Format(time.RFC3339)})
	post(http.MethodPut, "/api/v1/oncall/rota", map[string]any{"team_id": team, "min_severity": "warning",
		"levels": []any{map[string]any{"user_id": user, "minutes": 15}}})
	integ := post(http.MethodPost, "/api/v1/tickets/integrations", map[string]any{"name": "Jira", "provider": "jira",
		"project": "OPS"})["id"].(string)
	f.ids["integration"] = []string{integ}

	// Rule packs, a reconciliation check run once, a reported pipeline run, the editor's
	// references and the domain's public share.
	var packs []struct{ Name string }
	env.Do(t, http.MethodGet, "/api/v1/rule-packs", f.tok, nil).JSON(t, &packs)
	for _, p := range packs {
		f.ids["pack"] = append(f.ids["pack"], p.Name)
	}
	check := post(http.MethodPost, "/api/v1/reconcile/checks", map[string]any{"name": "clientes vs encomendas",
		"dataset_id": f.ids["dataset"][0], "other_id": f.ids["dataset"][1]})["id"].(string)
	post(http.MethodPost, "/api/v1/reconcile/checks/"+check+"/run", nil)
	f.ids["check"] = []string{check}
	if r := env.Do(t, http.MethodPost, "/api/v1/orchestrator-runs", f.tok, map[string]any{"orchestrator": "airflow", "pipeline": "carga",
		"run_id": vigia.NewUUID(), "status": "success", "started_at": now.Add(-time.Hour).Format(time.RFC3339),
		"ended_at": now.Format(time.RFC3339), "inputs": []any{map[string]any{"dataset_id": f.ids["dataset"][1]}},
		"outputs": []any{map[string]any{"dataset_id": f.ids["dataset"][0]}, map[string]any{"namespace": "s3://lago", "name": "brutos"}},
		"facets":  map[string]any{"nominalTime": map[string]any{"nominalStartTime": "2026-01-01T00:00:00Z"}}}); r.Status >= 300 {
		t.Fatalf("orchestrator run: %d %s", r.Status, r.Body)
	}
	for _, id := range f.ids["dataset"] {
		var d struct{ Schema, Table string }
		env.Do(t, http.MethodGet, "/api/v1/datasets/"+id, f.tok, nil).JSON(t, &d)
		f.ids["datasetName"] = append(f.ids["datasetName"], d.Schema+"."+d.Table)
	}
	post(http.MethodPut, "/api/v1/domains/"+f.ids["domain"][0]+"/public-share", nil)

	// The business plan (the Article 10 dossier), data policies, a knowledge entry, a report
	// and the suggestions the scan made.
	exec(t, env, `UPDATE workspaces SET plan = 'business' WHERE id = $1`, f.ws)
	policy := map[string]any{"rules": []any{map[string]any{"rule": "pii_retention_max_age", "max_age_days": 365, "severity": "critical"}}}
	post(http.MethodPut, "/api/v1/workspace/data-policy", policy)
	post(http.MethodPut, "/api/v1/domains/"+f.ids["domain"][0]+"/data-policy", policy)
	f.ids["knowledge"] = []string{post(http.MethodPost, "/api/v1/knowledge", map[string]any{"kind": "term", "title": "Encomenda",
		"body": "Uma encomenda é um pedido de um cliente.", "tags": []string{"vendas"},
		"links": []any{map[string]any{"dataset_id": f.ids["dataset"][0]}}})["id"].(string)}
	f.ids["report"] = []string{post(http.MethodPost, "/api/v1/reports", map[string]any{"type": "workspace_overview",
		"persona": "executive", "language": "en"})["id"].(string)}
	var suggestions []struct{ ID string }
	env.Do(t, http.MethodGet, "/api/v1/suggestions", f.tok, nil).JSON(t, &suggestions)
	for i, sg := range suggestions {
		if i < 3 {
			f.ids["suggestion"] = append(f.ids["suggestion"], sg.ID)
		}
	}

	// An issue opened last month and acknowledged two hours later, for the SLA report.
	opened := lastMonth().Add(-72 * time.Hour)
	exec(t, env, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at,
		acknowledged_at) VALUES ($1, $2, $3, 'anomaly', 'warning', 'acknowledged', 'volume', $4, $5, $5)`, vigia.NewID(), f.ws,
		f.ids["dataset"][2], opened, opened.Add(2*time.Hour))

	// An incident: the two datasets with open issues joined by lineage, grouped as after a scan.
	r := env.Do(t, http.MethodPost, "/api/v1/lineage/edges", f.admin, map[string]any{"source_id": f.ids["dataset"][0],
		"target_id": f.ids["dataset"][1]})
	if r.Status >= 300 {
		t.Fatalf("lineage edge: %d %s", r.Status, r.Body)
	}
	if err := env.App.Incidents.Group(context.Background(), f.ws, f.ids["scan"][0]); err != nil {
		t.Fatal(err)
	}
	var incidents []struct{ ID string }
	env.Do(t, http.MethodGet, "/api/v1/incidents", f.tok, nil).JSON(t, &incidents)
	if len(incidents) == 0 {
		t.Fatal("the fixture made no incident")
	}
	f.ids["incident"] = []string{incidents[0].ID}
}

// sameRefusal checks that REST and GraphQL refuse a read with the same stable code.
func sameRefusal(t *testing.T, env *apptest.Env, cred string, c parity, path string, rr *apptest.Response, vars map[string]any) {
	t.Helper()
	var restErr struct{ Code string }
	rr.JSON(t, &restErr)
	if rr.Status == http.StatusOK || restErr.Code != c.code {
		t.Fatalf("REST %s: %d %s, want code %s", path, rr.Status, rr.Body, c.code)
	}
	out := env.GraphQL(t, cred, c.query, vars)
	errs, _ := out["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("GraphQL answered without error: %v", out)
	}
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	if got, _ := ext["code"].(string); got != c.code {
		t.Fatalf("GraphQL code %q, want %s (REST %s)", got, c.code, rr.Body)
	}
}

// checkForeignIDs asks GraphQL for the fixture's objects with a session of another
// workspace: each is not_found with no data, as REST answers 404.
func checkForeignIDs(t *testing.T, f *parityFixture) {
	ws := f.env.MustWorkspace(t, "parity-other")
	other := f.env.MustSession(t, ws, vigia.RoleAdmin)
	for kind, c := range map[string]struct{ field, rest string }{
		"team":        {"team", "/api/v1/teams/"},
		"channel":     {"notificationChannel", "/api/v1/notification-channels/"},
		"integration": {"ticketIntegration", "/api/v1/tickets/integrations/"},
		"check":       {"reconcileCheck", "/api/v1/reconcile/checks/"},
		"knowledge":   {"knowledgeEntry", "/api/v1/knowledge/"},
		"report":      {"report", "/api/v1/reports/"},
		"suggestion":  {"suggestion", "/api/v1/suggestions/"},
		"incident":    {"incident", "/api/v1/incidents/"},
	} {
		if len(f.ids[kind]) == 0 {
			t.Errorf("the fixture has no %s", kind)
		}
		for _, id := range f.ids[kind] {
			out := f.env.GraphQL(t, other, `query($id: ID!){ `+c.field+`(id: $id){ id } }`, map[string]any{"id": id})
			errs, _ := out["errors"].([]any)
			if len(errs) == 0 || dig(out["data"], c.field) != nil {
				t.Errorf("%s of another workspace answered: %v", kind, out)
				continue
			}
			ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
			if ext["code"] != "not_found" {
				t.Errorf("%s of another workspace: code %v, want not_found", kind, ext["code"])
			}
			if r := f.env.Do(t, http.MethodGet, c.rest+id, other, nil); r.Status != http.StatusNotFound {
				t.Errorf("REST %s of another workspace: %d", kind, r.Status)
			}
		}
	}
}

// checkSessionReads asks the reads REST keeps for sessions (channels) or admins (the
// rota, delivery logs) with an API token and a member's session: GraphQL refuses them
// with REST's status code.
func checkSessionReads(t *testing.T, f *parityFixture) {
	member := f.env.MustSession(t, f.ws, vigia.RoleMember)
	channel := f.ids["channel"][0]
	for _, c := range []struct {
		who, cred, rest, query string
	}{
		{"token", f.tok, "/api/v1/notification-channels", `{ notificationChannels { total } }`},
		{"token", f.tok, "/api/v1/notification-channels/" + channel + "/preview", `query($id: ID!){ notificationChannel(id: $id){ id } }`},
		{"member", member, "/api/v1/oncall/rota", `{ onCallRota { minSeverity } }`},
		{"member", member, "/api/v1/notification-channels/" + channel + "/deliveries",
			`query($id: ID!){ notificationChannel(id: $id){ deliveries { total } } }`},
	} {
		rr := f.env.Do(t, http.MethodGet, c.rest, c.cred, nil)
		var restErr struct{ Code string }
		rr.JSON(t, &restErr)
		if rr.Status != http.StatusForbidden || restErr.Code == "" {
			t.Errorf("REST %s as %s: %d %s, want 403", c.rest, c.who, rr.Status, rr.Body)
			continue
		}
		out := f.env.GraphQL(t, c.cred, c.query, map[string]any{"id": channel})
		errs, _ := out["errors"].([]any)
		if len(errs) == 0 {
			t.Errorf("GraphQL %s as %s answered: %v", c.query, c.who, out)
			continue
		}
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		if ext["code"] != restErr.Code {
			t.Errorf("GraphQL %s as %s: code %v, REST %s", c.query, c.who, ext["code"], restErr.Code)
		}
	}
}

// lastMonth is the middle of the month before this one (UTC).
func lastMonth() time.Time {
	now := time.Now().UTC()
	return time.Date(now.Year(), now.Month(), 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, -14)
}
