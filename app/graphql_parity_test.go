package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// parity maps one GET operation of the served OpenAPI document to the GraphQL field that
// reaches the same data, and says how to compare the two answers field by field.
type parity struct {
	// rest is the REST path; {id} and {to} are filled from the sampled ids.
	rest string
	// query is the GraphQL document; it gets $id (and $to) when rest has them.
	query string
	// at is the dotted path of the compared value in the GraphQL data.
	at string
	// restAt is the dotted path of the compared value in the REST answer (whole answer when empty).
	restAt string
	// sample says which fixture ids fill {id}: dataset, domain, issue, rule, incident, scan,
	// connection; empty for an operation without a path id.
	sample string
	// total is the dotted path of the GraphQL total a list compares with X-Total-Count.
	total string
	// renamed maps a GraphQL field to the REST member it carries when the names differ
	// beyond camelCase.
	renamed map[string]string
	// empty allows an empty answer on the fixture (otherwise at least one sample must
	// compare something, so the case can fail).
	empty bool
	// as is who asks: "" the demo's API token, "admin" an admin session (reads REST
	// keeps for sessions).
	as string
	// code, when set, is the stable error code both answers must carry (a read the
	// fixture cannot make succeed, compared on its refusal).
	code string
	// header is sent with the REST request ("Name: value"), e.g. Accept for a JSON form.
	header []string
}

// restOnly are GET operations that are no read of the model: probes and documents about
// the service, files rendered from data GraphQL reaches through another field, and the
// public (credential-free) pages. Each says why, and the test checks the why against the
// served document.
var restOnly = map[string]string{
	"health":                "probe",
	"ready":                 "probe",
	"version":               "probe",
	"openapi":               "probe",
	"datasetContractDBT":    "file",
	"getDatasetRulesDBT":    "file",
	"exportRules":           "file",
	"ruleFailingRowsSQL":    "file",
	"publicDomainBadge":     "file",
	"publicDomain":          "public",
	"getEgressIPs":          "public",
	"exportReportHTML":      "file",
	"exportReportPDF":       "file",
	"exportReportPPTX":      "file",
	"datasetReadmeMarkdown": "file",
	// The vertical's Markdown report; GraphQL lists the verticals with its URL.
	"complianceVerticalReport": "file",
}

// notYetMapped are GET operations without a GraphQL field yet. Issue 23 emptied it: every
// GET operation is mapped or restOnly. A new read listed here must leave it once mapped (an
// operation both listed and mapped fails the test).
var notYetMapped = map[string]bool{}

func parityTable() map[string]parity {
	listFields := `id name schema table connectionId connectionName kind costGuarded dataCountry latestScore lastScanAt
		createdAt updatedAt`
	datasetFields := listFields + ` accessRole country { effective source }`
	dimMeta := `{ checks failedRules estimated ci95 reason ageHours slaHours worstColumn { column completude nullCount rows } }`
	meta := `completude ` + dimMeta + ` unicidade ` + dimMeta + ` validade ` + dimMeta + ` atualidade ` + dimMeta + ` consistencia ` + dimMeta
	columnFields := `name position dataType nullable primaryKey partition clustering nullCount nullRate min max
		semantic { type region estimated sampleSize }`
	table := map[string]parity{
		"listDatasets": {rest: "/api/v1/datasets?limit=500", query: `{ datasets { items { ` + listFields + ` } total } }`,
			at: "datasets.items", total: "datasets.total"},
		"getDataset": {rest: "/api/v1/datasets/{id}", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ ` + datasetFields + ` rowCount rowCountExact columns { ` + columnFields + ` }
				issues { id title type subtype severity status createdAt } } }`, at: "dataset",
			renamed: map[string]string{"nullCount": "profile.null_count", "nullRate": "profile.null_rate", "min": "profile.min", "max": "profile.max"}},
		"datasetVerdict": {rest: "/api/v1/datasets/{id}/verdict", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ verdict { verdict scanId evaluatedAt failingRules { ruleId ruleType severity status } } } }`,
			at:    "dataset.verdict"},
		"datasetFreshness": {rest: "/api/v1/datasets/{id}/freshness", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ freshness { column latestTimestamp assumedTimezone rule ageHours slaHours met } } }`,
			at:    "dataset.freshness"},
		"datasetSchemaChanges": {rest: "/api/v1/datasets/{id}/schema-changes", sample: "dataset", empty: true,
			query: `query($id: ID!){ dataset(id: $id){ schemaChanges { scanId detectedAt issueId contractEffect
				added { column fromType toType } dropped { column fromType toType } typeChanged { column fromType toType }
				suggestedRenames { from to } } } }`, at: "dataset.schemaChanges"},
		"datasetIncrementalProfiling": {rest: "/api/v1/datasets/{id}/incremental-profiling", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ incrementalProfiling { enabled temporalColumn lastRun { scanId mode depth rowCount
				rowCountExact sampleSize durationMs profiledAt } } } }`, at: "dataset.incrementalProfiling"},
		"datasetAutoMonitors": {rest: "/api/v1/datasets/{id}/auto-monitors", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ autoMonitors {
				freshness { enabled status column last median threshold historySize lastScanAt }
				volume { enabled status column last median threshold historySize lastScanAt }
				schema { enabled columns lastChangeAt changes } } } }`, at: "dataset.autoMonitors"},
		"datasetParsing": {rest: "/api/v1/datasets/{id}/parsing", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ parsing { profiled columns { column kind locale successRate estimated sampleSize
				suggestionSignature failingMasks { mask count } } } } }`, at: "dataset.parsing"},
		"datasetDataCountry": {rest: "/api/v1/datasets/{id}/data-country", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ country { own effective source } } }`, at: "dataset.country"},
		"getScan": {rest: "/api/v1/scans/{id}", sample: "scan",
			query: `query($id: ID!){ scan(id: $id){ id connectionId connectionName status trigger datasetsTotal datasetsDone datasetsFailed
				errorCode createdAt finishedAt failures { datasetId name code failedAt } } }`, at: "scan"},
		"traverseDatasetLineage": {rest: "/api/v1/datasets/{id}/lineage/traverse?hops=2&direction=both", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ lineage(direction: both, hops: 2) { datasetId direction hops truncated
				nodes { ref id name restricted hops direction } edges { source target kind origin columnLevel linkingColumn
				columnMap { from to direct } } exposures { name type } } } }`,
			at: "dataset.lineage"},
		"getDatasetImpact": {rest: "/api/v1/datasets/{id}/lineage/impact", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ impact { datasetId column reachTotal truncated impactNote
				datasets { ref id name restricted hops impact } exposures { id name type direct via } } } }`,
			at: "dataset.impact"},
		"getDatasetLineagePath": {rest: "/api/v1/datasets/{id}/lineage/path?target_id={to}", sample: "dataset",
			query: `query($id: ID!, $to: ID!){ dataset(id: $id){ path(to: $to) { found direction hops
				nodes { ref id name restricted hops } edges { source target kind } } } }`, at: "dataset.path"},
		"datasetTrustDecision": {rest: "/api/v1/datasets/{id}/trust-decision?purpose=rag", sample: "dataset",
			query: `query($id: ID!){ trustDecision(dataset: $id, purpose: "rag"){ datasetId purpose decision verdict readinessScore
				readinessBlockers openCritical openWarning piiColumns piiUnmasked contractActive contractValid lastScanAt ttlSeconds
				recommendedActionPt requiredActions reasons { code severity messagePt } } }`, at: "trustDecision",
			renamed: map[string]string{"contractActive": "contract.active", "contractValid": "contract.valid", "readinessScore": "readiness.score",
				"readinessBlockers": "readiness.blockers", "piiColumns": "pii.columns", "piiUnmasked": "pii.unmasked",
				"openCritical": "open_incidents.critical", "openWarning": "open_incidents.warning"}},
		"datasetContractVersions": {rest: "/api/v1/datasets/{id}/contract/versions", sample: "dataset", empty: true,
			query: `query($id: ID!){ dataset(id: $id){ contractVersions { version bump changeSummary authorId acceptedBy createdAt } } }`,
			at:    "dataset.contractVersions"},
		"listIncidents": {rest: "/api/v1/incidents", empty: true,
			query: `{ incidents { items { id status title severity rootDatasetId rootDatasetName issueIds datasetIds impactScope
				impactColumns downstreamCount exposuresCount createdAt updatedAt } total } }`, at: "incidents.items", total: "incidents.total"},
		"datasetScoreExplain": {rest: "/api/v1/datasets/{id}/score/explain", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ scoreExplanation { datasetId scanId score previousScore
				dimensions { completude unicidade validade atualidade consistencia }
				dimensionsMeta { ` + meta + ` }
				drivers { kind issueId params } notes { code params }
				openIssues { critical warning criticalIssueIds warningIssueIds } } } }`, at: "dataset.scoreExplanation"},
		"datasetTuning": {rest: "/api/v1/datasets/{id}/tuning", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ tuning { metric column threshold silenced ignored resolved nextOnIgnore
				tunedThreshold tunedThresholdLabel } } }`, at: "dataset.tuning"},
		"listDomainVersions": {rest: "/api/v1/domains/{id}/versions", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ versions { version bump changeSummary publishedAt
				counts { datasets changes breaking compatible } } } }`, at: "domain.versions"},
		"listDomainConsumers": {rest: "/api/v1/domains/{id}/consumers", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ consumers { id name kind source channelId consumerKind consumptions30d datasets30d
				lastConsumedAt createdAt } } }`, at: "domain.consumers",
			renamed: map[string]string{"consumptions30d": "consumptions_30d", "datasets30d": "datasets_30d"}},
		"getKnowledgeGraph": {rest: "/api/v1/knowledge/graph",
			query: `{ knowledgeGraph { focus hops truncated nodes { id kind name restricted } edges { source target kind lineageKind } } }`,
			at:    "knowledgeGraph"},
		"listDomains": {rest: "/api/v1/domains",
			query: `{ domains { items { id name description status version publishedAt restricted ownerName datasetIds } total } }`,
			at:    "domains.items", total: "domains.total"},
		"getDomain": {rest: "/api/v1/domains/{id}", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ id name description status version restricted datasetIds
				sla { availabilityObjectivePct retentionDays } } }`, at: "domain"},
		"datasetConsumers": {rest: "/api/v1/datasets/{id}/consumers", sample: "dataset", empty: true,
			query: `query($id: ID!){ dataset(id: $id){ consumers { id name kind framework consumptions7d consumptions30d datasets30d
				lastDecision lastPurpose lastConsumedAt } } }`, at: "dataset.consumers",
			renamed: map[string]string{"consumptions7d": "consumptions_7d", "consumptions30d": "consumptions_30d", "datasets30d": "datasets_30d"}},
		"domainReadiness": {rest: "/api/v1/domains/{id}/readiness", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ readiness { consumersTotal } } }`, at: "domain.readiness",
			renamed: map[string]string{"consumersTotal": "consumers.total"}},
		"domainSLO": {rest: "/api/v1/domains/{id}/slo", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ slo { month timezone objectivePct objectiveMet availabilityPct metDays violatedDays
				historyDays dimensionTargetDays datasets { datasetId datasetName availabilityPct metDays violatedDays historyDays } } } }`,
			at: "domain.slo", renamed: map[string]string{"metDays": "availability_met_days", "violatedDays": "availability_violated_days",
				"dimensionTargetDays": "breakdown.dimension_target"}},
		"listConsumers": {rest: "/api/v1/consumers", empty: true,
			query: `{ consumers { items { id name kind framework consumptions7d consumptions30d datasets30d lastDecision lastPurpose
				lastConsumedAt } total } }`, at: "consumers.items", total: "consumers.total",
			renamed: map[string]string{"consumptions7d": "consumptions_7d", "consumptions30d": "consumptions_30d", "datasets30d": "datasets_30d"}},
		"listIssues": {rest: "/api/v1/issues",
			query: `{ issues { items { id datasetId datasetName title type subtype severity status resolutionReason slaBreachedAt
				assigneeTeamId assigneeTeamName createdAt updatedAt } total } }`, at: "issues.items", total: "issues.total"},
		"getIssue": {rest: "/api/v1/issues/{id}", sample: "issue",
			query: `query($id: ID!){ issue(id: $id){ id datasetId datasetName title type severity status detections createdAt
				history { fromStatus toStatus event origin note at } } }`, at: "issue"},
		"getChargeback": {rest: "/api/v1/bi/chargeback", empty: true,
			query: `{ chargeback { items { month dimension workspaceId workspaceName entityId entityName scans datasets reports profileBytes
				llmTokens llmTokensByok llmCostUsd llmCostEur llmCost { amount currency } fx { base currency rate rateDate } currency } total } }`,
			at: "chargeback.items", total: "chargeback.total"},
		"getExecutiveDashboard": {rest: "/api/v1/dashboard/executive?days=30",
			query: `{ executiveDashboard(days: 30) { periodDays datasets meanScore verdicts { pass warn fail unknown } openIncidentsCritical
				openIncidentsWarning slaAttainmentPct reads untrustedReads llmCostEur llmCost { amount currency } currency fx { base currency rate rateDate } } }`,
			at: "executiveDashboard"},
		"getManagementDashboard": {rest: "/api/v1/dashboard/management?days=30",
			query: `{ managementDashboard(days: 30) { periodDays coverage { datasets profiled { count pct } withOwner { count pct }
				withDomain { count pct } withRules { count pct } withContract { count pct } sensitivityClassified { count pct } }
				issueFlow { opened resolved ignored openNow openCritical openWarning openSlaBreached }
				sla { closedInScope met breached attainmentPct } llmCostEur llmCost { amount currency } currency fx { base currency rate rateDate } } }`,
			at: "managementDashboard"},
		"getGovernanceMetrics": {rest: "/api/v1/governance/metrics?days=30",
			query: `{ governanceMetrics(days: 30) { periodDays coverage { datasets profiled { count pct } withOwner { count pct }
				withDomain { count pct } withRules { count pct } withContract { count pct } sensitivityClassified { count pct } }
				issueFlow { opened resolved ignored openNow openCritical openWarning openSlaBreached }
				sla { closedInScope met breached attainmentPct } } }`, at: "governanceMetrics"},
		"listRules": {rest: "/api/v1/rules",
			query: `{ rules { items { id datasetId datasetName ruleType name severity active createdAt updatedAt } total } }`,
			at:    "rules.items", total: "rules.total"},
		"getRule": {rest: "/api/v1/rules/{id}", sample: "rule",
			query: `query($id: ID!){ rule(id: $id){ id datasetId datasetName ruleType name severity active
				params { column } } }`, at: "rule"},
		"listScans": {rest: "/api/v1/scans",
			query: `{ scans { items { id connectionId connectionName status trigger datasetsTotal datasetsDone datasetsFailed
				errorCode createdAt finishedAt } total } }`, at: "scans.items", total: "scans.total"},
		"listSignals": {rest: "/api/v1/signals",
			query: `{ signals { items { id datasetId datasetName scanId source kind metric column observed baseline z threshold method
				severity anomalous issueId createdAt pipeline { orchestrator pipeline runId } } total } }`, at: "signals.items", total: "signals.total"},
		"listBIRefreshes": {rest: "/api/v1/bi/refreshes",
			query: `{ biRefreshes { items { id tool biDatasetId biDatasetName refreshId status startedAt endedAt datasets unmatched
				dashboards { id name url } receivedAt updatedAt } total } }`, at: "biRefreshes.items", total: "biRefreshes.total"},
		"datasetLabelQuality": {rest: "/api/v1/datasets/{id}/label-quality", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ labelQuality { datasetId available configuration { labelColumn featureColumns updatedBy updatedAt }
				piiGate { status piiColumns } lastResult { trigger scanId ranAt durationMs rows unlabelledRows distinctClasses classes { rank count share }
				classesTruncated imbalanceRatio conflictGroups conflictRows featuresUsed leakage { column kind groups pureGroups } } } } }`,
			at: "dataset.labelQuality"},
		"listDuplicates": {rest: "/api/v1/duplicates", empty: true,
			query: `{ duplicates { items { id connectionId confidence confidenceBand referencePrecision matchedOn size
				members { datasetId datasetName rowKey confidence exact } computedAt } total } }`, at: "duplicates.items", total: "duplicates.total"},
	}
	// Mappings added by issue 23's parts A (graphql_parity_a_test.go), B (graphql_parity_ops_test.go)
	// and the last reads (graphql_parity_last_test.go).
	for id, c := range parityTableA() {
		table[id] = c
	}
	for id, c := range parityTableOps() {
		table[id] = c
	}
	for id, c := range parityTableLast() {
		table[id] = c
	}
	return table
}

// parityFixture is the e-commerce demo scanned once, with a domain and a rule.
type parityFixture struct {
	env   *apptest.Env
	tok   string
	admin string
	ws    string
	ids   map[string][]string
}

func newParityFixture(t *testing.T) *parityFixture {
	root := t.TempDir()
	clock := &freezableClock{}
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root, Clock: clock,
		WebhookAllowHosts: []string{receiverHost}, WebhookResolver: newTestResolver(), WebhookRootCAs: testCA(t)})
	res, err := env.App.SeedDemo(context.Background(), app.DemoOptions{Workspace: "parity-" + vigia.NewUUID()[:8],
		Packs: []string{"ecommerce"}, Dir: filepath.Join(root, "demo")})
	if err != nil {
		t.Fatal(err)
	}
	f := &parityFixture{env: env, tok: res.Token, ws: res.WorkspaceID, ids: map[string][]string{}}
	var ds []struct{ ID string }
	env.Do(t, "GET", "/api/v1/datasets?q=clientes", res.Token, nil).JSON(t, &ds)
	var all []struct{ ID string }
	env.Do(t, "GET", "/api/v1/datasets", res.Token, nil).JSON(t, &all)
	for _, d := range append(ds, all...) {
		f.ids["dataset"] = appendNew(f.ids["dataset"], d.ID)
	}
	if len(f.ids["dataset"]) < 3 {
		t.Fatalf("demo datasets: %v", f.ids["dataset"])
	}
	f.ids["dataset"] = f.ids["dataset"][:3]
	admin := env.MustSession(t, res.WorkspaceID, vigia.RoleAdmin)
	f.admin = admin
	r := env.Do(t, "POST", "/api/v1/domains", admin, map[string]any{"name": "Vendas", "description": "Encomendas e clientes",
		"dataset_ids": f.ids["dataset"][:2]})
	if r.Status != http.StatusCreated {
		t.Fatalf("domain: %d %s", r.Status, r.Body)
	}
	var dom struct{ ID string }
	r.JSON(t, &dom)
	f.ids["domain"] = []string{dom.ID}
	for _, w := range []struct {
		path string
		body any
	}{{"/api/v1/domains/" + dom.ID + "/publish", nil}, {"/api/v1/domains/" + dom.ID + "/consumers", map[string]any{"name": "Painel de vendas", "kind": "user"}},
		{"/api/v1/lineage/exposures", map[string]any{"name": "Painel de vendas", "type": "dashboard", "owner": "vendas@example.pt",
			"dataset_ids": f.ids["dataset"][:1]}}} {
		if r := env.Do(t, "POST", w.path, admin, w.body); r.Status >= 300 {
			t.Fatalf("%s: %d %s", w.path, r.Status, r.Body)
		}
	}
	r = env.Do(t, "POST", "/api/v1/rules", admin, map[string]any{"dataset_id": f.ids["dataset"][0], "rule_type": "not_null",
		"severity": "critical", "params": map[string]any{"column": "id"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("rule: %d %s", r.Status, r.Body)
	}
	f.ids["proposal"] = []string{parityContract(t, env, admin, f.ids["dataset"][0])}
	for i, ds := range f.ids["dataset"][:2] {
		exec(t, env, `INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at)
			VALUES ($1, $2, $3, 'rule', $4, 'open', 'nulos em id', now(), now())`, vigia.NewID(), res.WorkspaceID, ds,
			[]string{"critical", "warning"}[i])
	}
	// The feeds: a BI refresh reading the first dataset, and a writer of it failing (a
	// pipeline signal, which no scan raised).
	started := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	if r := env.Do(t, "POST", "/api/v1/bi/refreshes", res.Token, map[string]any{"tool": "looker", "bi_dataset_id": "explore-9",
		"bi_dataset_name": "Vendas", "refresh_id": "rf-1", "status": "success", "started_at": started, "ended_at": started.Add(time.Minute),
		"datasets":   []any{map[string]any{"dataset_id": f.ids["dataset"][0]}, map[string]any{"namespace": "s3://x", "name": "y.csv"}},
		"dashboards": []any{map[string]any{"id": "d-1", "name": "Painel", "url": "https://bi.example.com/d-1"}}}); r.Status != http.StatusCreated {
		t.Fatalf("bi refresh: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, "POST", "/api/v1/orchestrator-runs", res.Token, map[string]any{"orchestrator": "airflow", "pipeline": "carga",
		"run_id": "r-1", "status": "failed", "started_at": started, "outputs": []any{map[string]any{"dataset_id": f.ids["dataset"][0]}}}); r.Status != http.StatusCreated {
		t.Fatalf("orchestrator run: %d %s", r.Status, r.Body)
	}
	for kind, path := range map[string]string{"rule": "/api/v1/rules", "issue": "/api/v1/issues", "scan": "/api/v1/scans",
		"incident": "/api/v1/incidents", "connection": "/api/v1/connections"} {
		var xs []struct{ ID string }
		env.Do(t, "GET", path, res.Token, nil).JSON(t, &xs)
		for i, x := range xs {
			if i < 3 {
				f.ids[kind] = appendNew(f.ids[kind], x.ID)
			}
		}
	}
	f.addOpsFixture(t)
	f.addLastFixture(t)
	// The reads compared next see one instant: ages, as_of and TTLs computed at each read
	// (an age in hours with 2 decimals moves every 36 s) answer the same in REST and GraphQL.
	clock.freeze()
	return f
}

func appendNew(ids []string, id string) []string {
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}

// The parity test: every GET operation of the served document is mapped to GraphQL (or
// is no read of the model, with why), and for a sample of ids the two answers agree
// field by field.
func TestGraphQLParityWithEveryRESTRead(t *testing.T) {
	f := newParityFixture(t)
	env := f.env
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string            `json:"operationId"`
			Tags        []string          `json:"tags"`
			Security    *[]map[string]any `json:"security"`
			Responses   map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	r := env.Do(t, "GET", "/api/v1/openapi.json", "", nil)
	r.JSON(t, &doc)
	table := parityTable()
	var gets []string
	for _, ops := range doc.Paths {
		if op, ok := ops["get"]; ok {
			gets = append(gets, op.OperationID)
			_, mapped := table[op.OperationID]
			why, excused := restOnly[op.OperationID]
			switch {
			case mapped && (excused || notYetMapped[op.OperationID]):
				t.Errorf("%s is mapped and also listed as unmapped", op.OperationID)
			case excused && why == "probe" && !hasName(op.Tags, "health"):
				t.Errorf("%s is no probe: tags %v", op.OperationID, op.Tags)
			case excused && why == "file" && op.Responses["200"].Content["application/json"] != nil:
				t.Errorf("%s answers JSON: it is no file", op.OperationID)
			case excused && why == "public" && (op.Security == nil || len(*op.Security) > 0):
				t.Errorf("%s needs a credential: it is not public", op.OperationID)
			case !mapped && !excused && !notYetMapped[op.OperationID]:
				t.Errorf("GET operation %s has no GraphQL mapping", op.OperationID)
			}
		}
	}
	sort.Strings(gets)
	for id := range table {
		if !hasName(gets, id) {
			t.Errorf("mapping of %s, which the document has no GET operation of", id)
		}
	}
	for id := range notYetMapped {
		if !hasName(gets, id) {
			t.Errorf("%s is listed as unmapped but the document has no GET operation of it", id)
		}
	}
	if len(notYetMapped) > 0 {
		t.Logf("%d GET operations without a GraphQL field yet", len(notYetMapped))
	}

	t.Run("ForeignIDs", func(t *testing.T) { checkForeignIDs(t, f) })
	t.Run("SessionReads", func(t *testing.T) { checkSessionReads(t, f) })
	t.Run("LastGates", func(t *testing.T) { checkLastGates(t, f) })
	names := make([]string, 0, len(table))
	for id := range table {
		names = append(names, id)
	}
	sort.Strings(names)
	for _, id := range names {
		c := table[id]
		t.Run(id, func(t *testing.T) {
			samples := []string{""}
			if c.sample != "" {
				samples = f.ids[c.sample]
				if len(samples) == 0 {
					t.Fatalf("the fixture has no %s", c.sample)
				}
			}
			compared := 0
			for i, sid := range samples {
				to := f.ids["dataset"][(i+1)%len(f.ids["dataset"])]
				path := strings.NewReplacer("{id}", sid, "{to}", to).Replace(c.rest)
				cred := f.tok
				if c.as == "admin" {
					cred = f.admin
				}
				vars := map[string]any{}
				if strings.Contains(c.query, "$id") {
					vars["id"] = sid
				}
				if strings.Contains(c.query, "$to") {
					vars["to"] = to
				}
				// {kind} in the path and $kind in the query name the fixture's first id of that kind.
				for kind, ids := range f.ids {
					if len(ids) > 0 {
						path = strings.ReplaceAll(path, "{"+kind+"}", ids[0])
						if strings.Contains(c.query, "$"+kind+":") {
							vars[kind] = ids[0]
						}
					}
				}
				rr := env.Do(t, "GET", path, cred, nil, c.header...)
				if c.code != "" {
					sameRefusal(t, env, cred, c, path, rr, vars)
					compared++
					continue
				}
				if rr.Status != http.StatusOK {
					t.Fatalf("REST %s: %d %s", path, rr.Status, rr.Body)
				}
				var restAnswer any
				dec := json.NewDecoder(bytes.NewReader(rr.Body))
				dec.UseNumber()
				if err := dec.Decode(&restAnswer); err != nil {
					t.Fatalf("REST %s: %v", path, err)
				}
				out := env.GraphQL(t, cred, c.query, vars)
				if out["errors"] != nil {
					t.Fatalf("GraphQL errors: %v", out["errors"])
				}
				g := dig(out["data"], c.at)
				rv := dig(restAnswer, c.restAt)
				if msg := sameAnswer(g, rv, c.renamed, c.at); msg != "" {
					t.Fatalf("%s: %s\nGraphQL %s\nREST %s", path, msg, compact(g), compact(rv))
				}
				if c.total != "" {
					if got, want := fmt.Sprint(dig(out["data"], c.total)), rr.Header.Get("X-Total-Count"); got != want {
						t.Fatalf("total: GraphQL %s, REST %s", got, want)
					}
				}
				if !emptyAnswer(g) {
					compared++
				}
			}
			if compared == 0 && !c.empty {
				t.Fatalf("every sample answered empty: nothing was compared")
			}
		})
	}
}

func hasName(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// dig follows a dotted path of object members.
func dig(v any, path string) any {
	if path == "" {
		return v
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func emptyAnswer(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 1500 {
		b = append(b[:1500], "…"...)
	}
	return string(b)
}

// snake turns a camelCase GraphQL name into the REST member's snake_case.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sameAnswer compares every field of the GraphQL answer g with the REST member it
// carries in r; it returns what differs ("" when they agree).
func sameAnswer(g, r any, renamed map[string]string, at string) string {
	switch gv := g.(type) {
	case map[string]any:
		rm, ok := r.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: GraphQL object, REST %T", at, r)
		}
		keys := make([]string, 0, len(gv))
		for k := range gv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rk := snake(k)
			if n, ok := renamed[k]; ok {
				rk = n
			}
			rv, ok := member(rm, rk)
			if !ok {
				if emptyAnswer(gv[k]) {
					continue // a REST member left out when empty (omitempty) is GraphQL's null or []
				}
				return fmt.Sprintf("%s.%s: no REST member %s", at, k, rk)
			}
			if msg := sameAnswer(gv[k], rv, renamed, at+"."+k); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		if rm, ok := r.(map[string]any); ok {
			if named, ok := namedValues(gv); ok {
				// A REST object GraphQL lists as {name, value} pairs (a scorecard's measures).
				return sameAnswer(named, rm, renamed, at)
			}
		}
		rl, ok := r.([]any)
		if !ok {
			if r == nil && len(gv) == 0 {
				return ""
			}
			return fmt.Sprintf("%s: GraphQL list, REST %T", at, r)
		}
		if len(gv) != len(rl) {
			return fmt.Sprintf("%s: GraphQL %d items, REST %d", at, len(gv), len(rl))
		}
		for i := range gv {
			if msg := sameAnswer(gv[i], rl[i], renamed, fmt.Sprintf("%s[%d]", at, i)); msg != "" {
				return msg
			}
		}
		return ""
	case float64:
		rn, ok := r.(json.Number)
		rf, err := rn.Float64()
		if !ok || err != nil || math.Abs(gv-rf) > 1e-9*math.Max(1, math.Abs(rf)) {
			return fmt.Sprintf("%s: GraphQL %v, REST %v", at, gv, r)
		}
		return ""
	case string:
		switch rv := r.(type) {
		case string:
			if gv == rv || sameInstant(gv, rv) {
				return ""
			}
		case json.Number:
			// A number GraphQL carries as exact text (min, max): every digit the same.
			if gv == rv.String() {
				return ""
			}
		case bool:
			// A value carried as JSON text (a changed value).
			if gv == fmt.Sprint(rv) {
				return ""
			}
		case map[string]any, []any:
			// JSON carried as text (a contract document, params, facets): the same JSON,
			// member names verbatim.
			var parsed, want any
			b, err := json.Marshal(rv)
			if json.Unmarshal([]byte(gv), &parsed) == nil && err == nil && json.Unmarshal(b, &want) == nil {
				if reflect.DeepEqual(parsed, want) {
					return ""
				}
				return fmt.Sprintf("%s: GraphQL JSON text %s, REST %s", at, compact(parsed), compact(want))
			}
		}
		return fmt.Sprintf("%s: GraphQL %q, REST %v", at, gv, r)
	case nil:
		if r != nil {
			return fmt.Sprintf("%s: GraphQL null, REST %v", at, r)
		}
		return ""
	default:
		if fmt.Sprint(g) != fmt.Sprint(r) {
			return fmt.Sprintf("%s: GraphQL %v, REST %v", at, g, r)
		}
		return ""
	}
}

// member is m's member at a dotted path (a GraphQL field flattening a REST object).
func member(m map[string]any, path string) (any, bool) {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = o[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func sameInstant(a, b string) bool {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}

// namedValues turns a list of {name, value} objects into the object it lists.
func namedValues(xs []any) (map[string]any, bool) {
	out := map[string]any{}
	for _, x := range xs {
		m, ok := x.(map[string]any)
		name, named := m["name"].(string)
		if !ok || !named || len(m) != 2 {
			return nil, false
		}
		if _, ok := m["value"]; !ok {
			return nil, false
		}
		out[name] = m["value"]
	}
	return out, true
}
