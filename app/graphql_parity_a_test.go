package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// parityTableA maps the GET operations issue 23's part A gave a GraphQL field:
// connections (never credentials), their query log, and a dataset's trust reads.
func parityTableA() map[string]parity {
	connFields := `id name kind dataCountry country { effective source } scanTimezone
		schedule { enabled hour scanHour minute timezone } datasetsCount lastScanAt lastScanStatus statementTimeoutS
		openlineage { namespace database aliases } createdAt`
	finding := `{ key message params }`
	useCase := `{ status score blockers ` + finding + ` warnings ` + finding + ` }`
	dims := `dimensions { completude unicidade validade atualidade consistencia }`
	fresh := `freshness { observedAgeHours slaHours slaSource met }`
	domainRef := `domains { id name status version }`
	usage := `usage { queriesPerDay consumptions30d lastConsumedAt }`
	metadata := `domainId datasetsTotal score problems { code count datasets { datasetId datasetName downstreamReach }
		suggestion { channel action } }`
	suggestion := `{ datasetId datasetName domainId domainName votes totalLinks viaColumns edgeKinds inferredOnly signature
		candidates { domainId domainName votes } }`
	neighbour := `{ ref id name restricted edgeKinds columnMap { from to direct } columnLevel linkingColumn inferredOnly }`
	snapshot := `{ id trigger scanId digest nodesCount edgesCount createdAt }`
	knode := `{ id kind name restricted props }`
	kedge := `{ source target kind lineageKind }`
	run := `{ id orchestrator pipeline runId status startedAt endedAt inputs outputs unmatched facets receivedAt updatedAt
		nextScans { datasetId scanId profiledAt } }`
	change := `{ kind property field quality before after breaking }`
	proposal := `id datasetId status origin summary authorId decidedBy decidedAt note version createdAt updatedAt`
	return map[string]parity{
		"listConnections": {rest: "/api/v1/connections", query: `{ connections { ` + connFields + ` } }`, at: "connections"},
		"getConnection": {rest: "/api/v1/connections/{id}", sample: "connection",
			query: `query($id: ID!){ connection(id: $id){ ` + connFields + ` } }`, at: "connection"},
		"connectionEngineering": {rest: "/api/v1/connections/{id}/engineering", sample: "connection",
			query: `query($id: ID!){ connection(id: $id){ engineering { optIn lastScan { id status createdAt finishedAt } openIssues } } }`,
			at:    "connection.engineering"},
		"connectionQueryLog": {rest: "/api/v1/connections/{id}/query-log?operation=scan&limit=20", sample: "connection",
			query: `query($id: ID!){ connection(id: $id){ queryLog(operation: scan, limit: 20) { items { statement operation scanId endpoint
				executions durationMs rows failures firstSeenAt lastSeenAt } total } } }`,
			at: "connection.queryLog.items", total: "connection.queryLog.total"},
		// The export's JSON form is the query log (up to 10000 statements; GraphQL pages it by 500).
		"connectionQueryLogExport": {rest: "/api/v1/connections/{id}/query-log/export?format=json", sample: "connection",
			query: `query($id: ID!){ connection(id: $id){ queryLog(limit: 500) { items { statement operation scanId endpoint
				executions durationMs rows failures firstSeenAt lastSeenAt } } } }`, at: "connection.queryLog.items"},
		"connectionPresets": {rest: "/api/v1/connections/presets", query: `{ connectionPresets { key name kind description dsnTemplate } }`,
			at: "connectionPresets"},
		"connectionTypes": {rest: "/api/v1/connections/types", query: `{ connectionTypes { kind name driver state dialect dsnExample } }`,
			at: "connectionTypes"},
		"demoPacks": {rest: "/api/v1/connections/demo/packs", query: `{ demoPacks { key name description industry tables defects command } }`,
			at: "demoPacks"},
		"datasetTrust": {rest: "/api/v1/datasets/{id}/trust", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ trustScore { datasetId score grade components { key weight score evidence gain
				action { code message params } } blockers ` + finding + ` warnings ` + finding + ` asOf } } }`, at: "dataset.trustScore"},
		"datasetAIReadiness": {rest: "/api/v1/datasets/{id}/ai-readiness", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ aiReadiness { datasetId score useCases { rag ` + useCase + ` treino ` + useCase +
				` agente ` + useCase + ` bi ` + useCase + ` } pii { columns unmasked } recommendations { code messagePt useCases } } } }`,
			at: "dataset.aiReadiness"},
		"datasetContext": {rest: "/api/v1/datasets/{id}/context", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ context { datasetId name kind layer usageClass rowCount rowCountExact
				columns { name dataType semanticType pii nullRate primaryKey } piiColumns ` + domainRef + ` verdict score ` + dims + `
				trust { score grade } openIncidents { critical warning } ` + fresh + ` readiness { rag treino agente bi } ` + usage + `
				lastScanAt summaryPt generatedAt } } }`, at: "dataset.context", renamed: map[string]string{"consumptions30d": "consumptions_30d"}},
		"datasetTrustFacts": {rest: "/api/v1/datasets/{id}/trust-facts", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ trustFacts { schemaVersion kind generatedAt subject { id name status version }
				facts { verdict score ` + dims + ` trust { score grade blockers ` + finding + ` warnings ` + finding + ` }
				readiness { rag treino agente bi } openIncidents { critical warning } ` + fresh + ` pii { columns unmasked }
				contract { active valid } ` + domainRef + ` lastScanAt rowCount rowCountExact ` + usage + ` } } } }`,
			at: "dataset.trustFacts", renamed: map[string]string{"consumptions30d": "consumptions_30d"}},
		// Domains and the catalog.
		"domainVerdict": {rest: "/api/v1/domains/{id}/verdict", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ verdict { domainId verdict score counts { pass warn fail unknown }
				datasets { datasetId datasetName verdict score } } } }`, at: "domain.verdict"},
		"domainTrustFacts": {rest: "/api/v1/domains/{id}/trust-facts", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ trustFacts { schemaVersion kind generatedAt subject { id name status version }
				facts { verdict score sla { availabilityObjectivePct retentionDays }
				sloMonth { month availabilityPct metDays violatedDays objectivePct objectiveMet } readiness { rag ml agente bi }
				datasets { datasetId datasetName verdict score trustScore trustGrade openIncidents { critical warning } lastScanAt } } } } }`,
			at: "domain.trustFacts"},
		"domainMetadataQuality": {rest: "/api/v1/domains/{id}/metadata-quality", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ metadataQuality { ` + metadata + ` } } }`, at: "domain.metadataQuality"},
		"catalogMetadataQuality": {rest: "/api/v1/catalog/metadata-quality",
			query: `{ catalogMetadataQuality { ` + metadata + ` } }`, at: "catalogMetadataQuality"},
		"diffDomainVersions": {rest: "/api/v1/domains/{id}/versions/latest/diff/current", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ versionDiff(from: "latest", to: "current") { domainId fromVersion toVersion bump
				nextVersion changes { kind impact datasetId datasetName column dimension field before after restricted }
				counts { datasets changes breaking compatible } } } }`, at: "domain.versionDiff"},
		"getDomainSuggestions": {rest: "/api/v1/domains/suggestions", as: "admin",
			query: `{ domainSuggestions { hasLineage suggestions ` + suggestion + ` ambiguous ` + suggestion + ` } }`, at: "domainSuggestions"},
		// Direct lineage, exposures and the knowledge graph's snapshots.
		"getDatasetLineage": {rest: "/api/v1/datasets/{id}/lineage", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ directLineage { datasetId unresolved upstream ` + neighbour + ` downstream ` + neighbour + `
				exposures { id name type url owner origin direct via } reachTotal truncated } } }`, at: "dataset.directLineage"},
		"listExposures": {rest: "/api/v1/lineage/exposures",
			query: `{ exposures { id name type url owner origin direct via } }`, at: "exposures"},
		"listGraphSnapshots": {rest: "/api/v1/knowledge/graph/history",
			query: `{ graphSnapshots { items ` + snapshot + ` total } }`, at: "graphSnapshots.items", total: "graphSnapshots.total"},
		"diffGraphSnapshots": {rest: "/api/v1/knowledge/graph/diff?from=latest",
			query: `{ graphSnapshotDiff(from: "latest") { from ` + snapshot + ` to ` + snapshot + ` addedNodes ` + knode + `
				removedNodes ` + knode + ` renamedNodes { id kind from to } addedEdges ` + kedge + ` removedEdges ` + kedge + `
				byKind truncated } }`, at: "graphSnapshotDiff"},
		// Data contracts: documents as JSON text compare member by member with REST's JSON form.
		"datasetContract": {rest: "/api/v1/datasets/{id}/contract", sample: "dataset", header: []string{"Accept: application/json"},
			query: `query($id: ID!){ dataset(id: $id){ contractDocument } }`, at: "dataset.contractDocument"},
		"datasetContractVersion": {rest: "/api/v1/datasets/{dataset}/contract/versions/1.0.0",
			query: `query($dataset: ID!){ dataset(id: $dataset){ contractVersion(number: "1.0.0") { version bump changeSummary
				changes ` + change + ` proposalId authorId acceptedBy createdAt document } } }`, at: "dataset.contractVersion"},
		"datasetContractDiff": {rest: "/api/v1/datasets/{dataset}/contract/diff?from=active&to=observed",
			query: `query($dataset: ID!){ dataset(id: $dataset){ contractDiff(from: "active", to: "observed") { from to bump breaking
				changes ` + change + ` } } }`, at: "dataset.contractDiff"},
		"datasetContractProposals": {rest: "/api/v1/datasets/{dataset}/contract/proposals",
			query: `query($dataset: ID!){ dataset(id: $dataset){ contractProposals { items { ` + proposal + ` } total } } }`,
			at:    "dataset.contractProposals.items", total: "dataset.contractProposals.total"},
		"getContractProposal": {rest: "/api/v1/datasets/{dataset}/contract/proposals/{proposal}",
			query: `query($dataset: ID!, $proposal: ID!){ dataset(id: $dataset){ contractProposal(id: $proposal) { ` + proposal + `
				bump changes ` + change + ` comments { id authorId body createdAt } document } } }`, at: "dataset.contractProposal"},
		"domainContract": {rest: "/api/v1/domains/{id}/contract", sample: "domain",
			query: `query($id: ID!){ domain(id: $id){ contract { domainId name version members { datasetId name version valid columns }
				document } } }`, at: "domain.contract"},
		// A dataset's README (generatedAt is the read's instant: the fixture's clock is frozen), sensitivity, rules export (gx: JSON).
		"datasetReadme": {rest: "/api/v1/datasets/{id}/readme", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ readme { datasetId contentMd edited editedBy editedAt aiGenerated aiModel generatedAt
				publishedMd publishedBy publishedAt publishedAiGenerated publishedAiModel } } }`, at: "dataset.readme",
			renamed: map[string]string{"aiGenerated": "ai_generated", "aiModel": "ai_model", "publishedAiGenerated": "published_ai_generated",
				"publishedAiModel": "published_ai_model"}},
		"datasetSensitivity": {rest: "/api/v1/datasets/{id}/sensitivity", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ sensitivity { datasetId columns { column level origin reason author setAt
				suggestion { level origin from { datasetId column level restricted } } } trail { column from to author at } } } }`,
			at: "dataset.sensitivity"},
		"exportDatasetRules": {rest: "/api/v1/datasets/{id}/rules/export?format=gx", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ rulesExport(format: gx) { body } } }`, at: "dataset.rulesExport.body"},
		"datasetPipelineHealth": {rest: "/api/v1/datasets/{id}/pipeline-health", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ pipelineHealth { datasetId status pipelines { orchestrator pipeline status
				lastRun ` + run + ` failingRun ` + run + ` lastSuccessAt lastFailureAt consecutiveFailures cadenceSeconds expectedBy runs } } } }`,
			at: "dataset.pipelineHealth"},
		// Synthetic rows are generated from the profile by seed: the same seed gives the same rows in both.
		"datasetSynthetic": {rest: "/api/v1/datasets/{id}/synthetic?format=json&rows=20&seed=7", sample: "dataset",
			query: `query($id: ID!){ dataset(id: $id){ syntheticRows(rows: 20, seed: 7) { manifest { datasetId table rows seed
				columns { name type nullable primaryKey unique semanticType references quasiIdentifier pii }
				evaluation { rows seed utilityScore privacyVerdict kMin kThreshold quasiIdentifiers } } rows } } }`,
			at: "dataset.syntheticRows"},
		"findDatasets": {rest: "/api/v1/datasets/find?query=c",
			query: `{ findDatasets(query: "c") { datasets { id name kind layer usageClass latestScore verdict ` + domainRef + `
				piiColumns } truncated } }`, at: "findDatasets"},
	}
}

// A connection in GraphQL never carries its DSN or password: no field could (checked by
// introspection), and no answer has the password, on a real Postgres source scanned
// once. Another workspace's connection is not_found; bad query-log and find arguments
// are refused with validation_error without echoing them.
func TestGraphQLConnectionsWithoutCredentials(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	ws := env.MustWorkspace(t, "gqlconn")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	member := env.MustSession(t, ws, vigia.RoleMember)
	tok := env.MustToken(t, ws)
	src := newSource(t, "postgres", "")
	src.exec(t, `CREATE TABLE faturas (id INTEGER PRIMARY KEY, cliente TEXT, total NUMERIC(12,2))`)
	src.exec(t, `INSERT INTO faturas VALUES (1, 'a', 10.5), (2, NULL, 20), (3, 'c', NULL)`)
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "faturacao", "kind": "postgres", "dsn": src.dsn})
	if r.Status != http.StatusCreated {
		t.Fatalf("connection: %d %s", r.Status, r.Body)
	}
	var c struct{ ID string }
	r.JSON(t, &c)
	sc := mustScanConnection(t, env, ws, tok, c.ID)

	intro := env.GraphQL(t, member, `{ __type(name: "Connection") { fields { name } } }`, nil)
	fields := dig(intro["data"], "__type.fields").([]any)
	for _, f := range fields {
		name := strings.ToLower(f.(map[string]any)["name"].(string))
		for _, bad := range []string{"dsn", "password", "secret", "credential", "sealed"} {
			if strings.Contains(name, bad) {
				t.Errorf("Connection has a field %q", name)
			}
		}
	}
	all := `id name kind dataCountry country { effective source } scanTimezone schedule { enabled hour scanHour minute timezone }
		datasetsCount lastScanAt lastScanStatus statementTimeoutS openlineage { namespace database aliases } createdAt
		engineering { optIn lastScan { id status createdAt finishedAt } openIssues }
		queryLog(limit: 500) { items { statement operation scanId endpoint executions durationMs rows failures firstSeenAt lastSeenAt } total }`
	for _, q := range []string{`{ connections { ` + all + ` } }`, `query($id: ID!){ connection(id: $id){ ` + all + ` } }`} {
		out := env.GraphQL(t, member, q, map[string]any{"id": c.ID})
		if out["errors"] != nil {
			t.Fatalf("errors: %v", out["errors"])
		}
		b, _ := json.Marshal(out)
		if strings.Contains(string(b), passwordMarker) {
			t.Fatalf("the password came back: %s", b)
		}
	}
	out := env.GraphQL(t, member, `query($id: ID!, $scan: ID!){ connection(id: $id){ datasetsCount lastScanStatus
		engineering { lastScan { id status } }
		queryLog(scanId: $scan, operation: scan, limit: 500) { total items { statement scanId executions } } } }`,
		map[string]any{"id": c.ID, "scan": sc.ID})
	if out["errors"] != nil {
		t.Fatalf("errors: %v", out["errors"])
	}
	if got := dig(out["data"], "connection.engineering.lastScan.id"); got != sc.ID {
		t.Fatalf("last scan %v, want %s", got, sc.ID)
	}
	if n := dig(out["data"], "connection.datasetsCount"); fmt.Sprint(n) != "1" {
		t.Fatalf("datasetsCount %v (the source has one table)", n)
	}
	items := dig(out["data"], "connection.queryLog.items").([]any)
	if len(items) == 0 {
		t.Fatal("the scan's query log is empty")
	}
	var restLog []map[string]any
	env.Do(t, http.MethodGet, "/api/v1/connections/"+c.ID+"/query-log?operation=scan&limit=500&scan_id="+sc.ID, member, nil).JSON(t, &restLog)
	if len(restLog) != len(items) {
		t.Fatalf("GraphQL %d statements, REST %d", len(items), len(restLog))
	}
	for i, it := range items {
		m := it.(map[string]any)
		if m["scanId"] != sc.ID || m["statement"] != restLog[i]["statement"] {
			t.Fatalf("statement %d: GraphQL %v, REST %v", i, m, restLog[i])
		}
		if strings.Contains(m["statement"].(string), "'a'") {
			t.Fatalf("a value in a logged statement: %v", m["statement"])
		}
	}

	// Another workspace: its members see neither the connection nor its reads.
	ws2 := env.MustWorkspace(t, "gqlconn-other")
	other := env.MustSession(t, ws2, vigia.RoleAdmin)
	for _, q := range []string{`query($id: ID!){ connection(id: $id){ id name } }`,
		`query($id: ID!){ connection(id: $id){ id engineering { openIssues } } }`} {
		out := env.GraphQL(t, other, q, map[string]any{"id": c.ID})
		if code := firstCode(out); code != "not_found" || dig(out["data"], "connection") != nil {
			t.Fatalf("another workspace's connection: %v", out)
		}
	}
	out = env.GraphQL(t, other, `{ connections { id } }`, nil)
	if b, _ := json.Marshal(out); strings.Contains(string(b), c.ID) {
		t.Fatalf("another workspace's connection listed: %s", b)
	}
	// The dataset reads and the snapshot diff of another workspace: not_found, as REST's 404.
	var ds []struct{ ID string }
	env.Do(t, http.MethodGet, "/api/v1/datasets", member, nil).JSON(t, &ds)
	var snaps []struct{ ID string }
	env.Do(t, http.MethodGet, "/api/v1/knowledge/graph/history", member, nil).JSON(t, &snaps)
	if len(ds) != 1 || len(snaps) == 0 {
		t.Fatalf("datasets %v, snapshots %v", ds, snaps)
	}
	for _, q := range []struct{ query, rest string }{
		{`query($id: ID!){ dataset(id: $id){ trustScore { score } } }`, "/api/v1/datasets/" + ds[0].ID + "/trust"},
		{`query($id: ID!){ dataset(id: $id){ directLineage { datasetId } } }`, "/api/v1/datasets/" + ds[0].ID + "/lineage"},
		{`query($id: ID!){ dataset(id: $id){ contractDocument } }`, "/api/v1/datasets/" + ds[0].ID + "/contract"},
		{`query($id: ID!){ dataset(id: $id){ sensitivity { datasetId } } }`, "/api/v1/datasets/" + ds[0].ID + "/sensitivity"},
		{`query($snap: String!){ graphSnapshotDiff(from: $snap) { truncated } }`, "/api/v1/knowledge/graph/diff?from=" + snaps[0].ID},
	} {
		if r := env.Do(t, http.MethodGet, q.rest, other, nil); r.Status != http.StatusNotFound {
			t.Fatalf("REST %s from another workspace: %d", q.rest, r.Status)
		}
		out := env.GraphQL(t, other, q.query, map[string]any{"id": ds[0].ID, "snap": snaps[0].ID})
		if code := firstCode(out); code != "not_found" {
			t.Fatalf("%s from another workspace: %v", q.query, out)
		}
	}

	// Bad arguments: validation_error, the value never echoed.
	for _, q := range []string{
		`query($id: ID!){ connection(id: $id){ queryLog(days: 0) { total } } }`,
		`query($id: ID!){ connection(id: $id){ queryLog(days: 367) { total } } }`,
		`query($id: ID!){ connection(id: $id){ queryLog(limit: 501) { total } } }`,
		`{ findDatasets(query: "` + strings.Repeat("zq", 101) + `") { truncated } }`,
		`{ findDatasets(minScore: 101) { truncated } }`,
	} {
		out := env.GraphQL(t, member, q, map[string]any{"id": c.ID})
		if code := firstCode(out); code != "validation_error" {
			t.Fatalf("%s: code %q: %v", q, code, out)
		}
		if b, _ := json.Marshal(out["errors"]); strings.Contains(string(b), "zqzq") || strings.Contains(string(b), "367") {
			t.Fatalf("%s: the input was echoed: %s", q, b)
		}
	}
}

// firstCode is the extensions.code of a GraphQL answer's first error ("" without one).
func firstCode(out map[string]any) string {
	errs, _ := out["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	code, _ := dig(errs[0], "extensions.code").(string)
	return code
}

// parityContract proposes the dataset's observed contract, comments it and accepts it
// (version 1.0.0); it returns the proposal's id.
func parityContract(t *testing.T, env *apptest.Env, admin, datasetID string) string {
	t.Helper()
	base := "/api/v1/datasets/" + datasetID + "/contract/proposals"
	r := env.Do(t, http.MethodPost, base, admin, map[string]any{"origin": "observed", "summary": "Contrato observado"})
	if r.Status != http.StatusCreated {
		t.Fatalf("proposal: %d %s", r.Status, r.Body)
	}
	var p struct{ ID string }
	r.JSON(t, &p)
	if r := env.Do(t, http.MethodPost, base+"/"+p.ID+"/comments", admin, map[string]any{"body": "Colunas conferidas"}); r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, http.MethodPost, base+"/"+p.ID+"/accept", admin, nil); r.Status != http.StatusOK {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	return p.ID
}

// freezableClock is the system clock until freeze, then the instant it was frozen at.
type freezableClock struct {
	mu     sync.Mutex
	at     time.Time
	frozen bool
}

func (c *freezableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen {
		return c.at
	}
	return time.Now().UTC()
}

func (c *freezableClock) freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.frozen = time.Now().UTC(), true
}
