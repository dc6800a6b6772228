package app_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/client"
)

// newTypedClient is the generated client against the test server with a bearer
// credential (an API token, or a person's session for what tokens may not do).
func newTypedClient(t *testing.T, env *apptest.Env, credential string) *client.ClientWithResponses {
	t.Helper()
	c, err := client.NewClientWithResponses(env.Server.URL, client.WithHTTPClient(env.Server.Client()),
		client.WithRequestEditorFn(client.BearerToken(credential)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// errorCode is the stable code of an error envelope the client decoded.
func errorCode(e *client.Error) string {
	if e == nil || e.Code == nil {
		return ""
	}
	return *e.Code
}

// waitScanThroughClient polls GET /scans/{id} as a client would until the scan ends.
func waitScanThroughClient(t *testing.T, ctx context.Context, c *client.ClientWithResponses, id string) *client.ScanDetailOut {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := c.GetScanWithResponse(ctx, id)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("get scan: %v %d %s", err, r.StatusCode(), r.Body)
		}
		switch r.JSON200.Status {
		case client.ScanDetailOutStatusSucceeded:
			return r.JSON200
		case client.ScanDetailOutStatusFailed, client.ScanDetailOutStatusCancelled:
			t.Fatalf("scan %s: %s", r.JSON200.Status, r.Body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("scan still %s", r.JSON200.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Must show 5 of issue 19: the client generated from the published document builds and
// walks scan → issue → trust decision → consumption against a real server and a real
// Postgres source, with an API token; every answer is decoded into the generated types
// (and checked against the document by apptest).
func TestGeneratedClientWalksScanIssueTrustConsumption(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	MustRunWorkers(t, env) // the server works its jobs, as vigia serve does
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ws := env.MustWorkspace(t, "client")
	admin := newTypedClient(t, env, env.MustSession(t, ws, vigia.RoleAdmin))
	tok := newTypedClient(t, env, env.MustToken(t, ws))

	src := newSource(t, "postgres", "")
	src.exec(t, `CREATE TABLE contas (id integer PRIMARY KEY, iban text, saldo numeric(38,10))`)
	src.exec(t, `INSERT INTO contas SELECT g, CASE WHEN g % 4 = 0 THEN NULL ELSE 'PT50' || g END, g * 1.5 FROM generate_series(1, 199) g`)
	src.exec(t, `INSERT INTO contas VALUES (200, 'PT50200', 12345678901234567890.1234567891)`)

	// A person adds the connection; an API token may not (403 token_read_only).
	in := client.ConnectionIn{Name: "banco", Kind: client.ConnectionInKindPostgres, Dsn: src.dsn}
	if r, err := tok.CreateConnectionWithResponse(ctx, in); err != nil || r.StatusCode() != 403 || errorCode(r.JSON403) != "token_read_only" {
		t.Fatalf("token creates a connection: %v %d %s", err, r.StatusCode(), r.Body)
	}
	cr, err := admin.CreateConnectionWithResponse(ctx, in)
	if err != nil || cr.JSON201 == nil {
		t.Fatalf("create connection: %v %d %s", err, cr.StatusCode(), cr.Body)
	}
	conn := cr.JSON201.Id

	scan := func() {
		t.Helper()
		r, err := tok.TriggerScanWithResponse(ctx, client.ScanIn{ConnectionId: conn})
		if err != nil || r.JSON202 == nil {
			t.Fatalf("trigger scan: %v %d %s", err, r.StatusCode(), r.Body)
		}
		if got := waitScanThroughClient(t, ctx, tok, r.JSON202.Id); got.DatasetsDone < 1 || got.ConnectionId != conn {
			t.Fatalf("scan %+v", got)
		}
	}
	scan()
	dl, err := tok.ListDatasetsWithResponse(ctx, &client.ListDatasetsParams{ConnectionId: &conn})
	if err != nil || dl.JSON200 == nil {
		t.Fatalf("datasets: %v %d %s", err, dl.StatusCode(), dl.Body)
	}
	var dataset string
	for _, d := range *dl.JSON200 {
		if d.Table == "contas" {
			dataset = d.Id
		}
	}
	if dataset == "" {
		t.Fatalf("contas not found in %s", dl.Body)
	}
	// The exact min/max is a oneOf in the document: a double when one holds it, else the
	// decimal's digits; the client reads both branches.
	dd, err := tok.GetDatasetWithResponse(ctx, dataset)
	if err != nil || dd.JSON200 == nil || dd.JSON200.Columns == nil {
		t.Fatalf("dataset: %v %d %s", err, dd.StatusCode(), dd.Body)
	}
	extremes := map[string][2]string{}
	for _, col := range *dd.JSON200.Columns {
		if col.Profile == nil || col.Profile.Min == nil || col.Profile.Max == nil {
			continue
		}
		lo, hi := "", ""
		if n, err := col.Profile.Min.AsProfileOutMin0(); err == nil {
			lo = fmt.Sprint(n)
		}
		if n, err := col.Profile.Max.AsProfileOutMax0(); err == nil {
			hi = fmt.Sprint(n)
		} else if s, err := col.Profile.Max.AsProfileOutMax1(); err == nil {
			hi = s
		}
		extremes[col.Name] = [2]string{lo, hi}
	}
	if extremes["id"] != [2]string{"1", "200"} || extremes["saldo"] != [2]string{"1.5", "12345678901234567890.1234567891"} {
		t.Fatalf("min/max through the client: %v", extremes)
	}

	// A person adds a critical not_null rule; the token's next scan raises the issue.
	rr, err := admin.CreateRuleWithResponse(ctx, client.RuleIn{DatasetId: dataset, RuleType: client.RuleInRuleTypeNotNull,
		Severity: ptr(client.RuleInSeverityCritical), Params: map[string]any{"column": "iban"}})
	if err != nil || rr.JSON201 == nil {
		t.Fatalf("create rule: %v %d %s", err, rr.StatusCode(), rr.Body)
	}
	scan()
	var issueID string
	deadline := time.Now().Add(30 * time.Second)
	for issueID == "" {
		il, err := tok.ListIssuesWithResponse(ctx, &client.ListIssuesParams{Type: ptr("rule"), DatasetId: &dataset})
		if err != nil || il.JSON200 == nil {
			t.Fatalf("issues: %v %d %s", err, il.StatusCode(), il.Body)
		}
		if n := len(*il.JSON200); n == 1 {
			issueID = (*il.JSON200)[0].Id
			if got := (*il.JSON200)[0]; got.RuleId == nil || *got.RuleId != rr.JSON201.Id || got.Status != client.IssueItemOutStatusOpen {
				t.Fatalf("issue %s", il.Body)
			}
		} else if n > 1 || time.Now().After(deadline) {
			t.Fatalf("rule issues: %s", il.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ir, err := tok.GetIssueWithResponse(ctx, issueID)
	if err != nil || ir.JSON200 == nil || ir.JSON200.DatasetId != dataset || ir.JSON200.Severity != client.IssueDetailOutSeverityCritical {
		t.Fatalf("issue: %v %d %s", err, ir.StatusCode(), ir.Body)
	}

	// The trust decision sees the open critical issue.
	var decision client.TrustDecisionOut
	deadline = time.Now().Add(30 * time.Second)
	for {
		tr, err := tok.TrustDecisionsWithResponse(ctx, client.TrustDecisionsIn{DatasetIds: &[]string{dataset}})
		if err != nil || tr.JSON200 == nil || tr.JSON200.Decisions == nil || len(*tr.JSON200.Decisions) != 1 {
			t.Fatalf("trust decisions: %v %d %s", err, tr.StatusCode(), tr.Body)
		}
		decision = (*tr.JSON200.Decisions)[0]
		if decision.Decision != client.TrustDecisionOutDecisionTrusted && decision.RequiredActions != nil &&
			slices.Contains(*decision.RequiredActions, "resolve_critical_issues") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decision does not see the critical issue: %s", tr.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if decision.DatasetId != dataset || decision.Reasons == nil || len(*decision.Reasons) == 0 {
		t.Fatalf("decision %+v", decision)
	}

	// The consumer records that it read the dataset having seen that decision.
	seen := client.DecisionSeenIn{Decision: client.DecisionSeenInDecision(decision.Decision), AsOf: &decision.AsOf}
	body := client.ConsumptionIn{Consumer: client.ConsumerRefIn{Name: "relatorio-semanal", Kind: client.ConsumerRefInKindPipeline,
		RunRef: ptr("run-1")}, Datasets: &[]string{dataset}, Purpose: client.ConsumptionInPurposeBi, DecisionSeen: &seen}
	cs, err := tok.RecordConsumptionWithResponse(ctx, body)
	if err != nil || cs.JSON201 == nil || cs.JSON201.Datasets == nil || len(*cs.JSON201.Datasets) != 1 || cs.JSON201.Replayed {
		t.Fatalf("consumption: %v %d %s", err, cs.StatusCode(), cs.Body)
	}
	if got := (*cs.JSON201.Datasets)[0]; got.DatasetId != dataset || string(got.DecisionSeen) != string(decision.Decision) {
		t.Fatalf("consumed %+v", got)
	}
	if again, err := tok.RecordConsumptionWithResponse(ctx, body); err != nil || again.JSON201 == nil || !again.JSON201.Replayed ||
		again.JSON201.Id != cs.JSON201.Id {
		t.Fatalf("replay: %v %d %s", err, again.StatusCode(), again.Body)
	}
	cl, err := tok.DatasetConsumersWithResponse(ctx, dataset, nil)
	if err != nil || cl.JSON200 == nil || len(*cl.JSON200) != 1 {
		t.Fatalf("consumers: %v %d %s", err, cl.StatusCode(), cl.Body)
	}
	if c := (*cl.JSON200)[0]; c.Name != "relatorio-semanal" || c.LastDecision == nil || *c.LastDecision != string(decision.Decision) {
		t.Fatalf("consumer %+v", c)
	}

	// Another workspace's token sees none of it: 404, decoded as the error envelope.
	other := newTypedClient(t, env, env.MustToken(t, env.MustWorkspace(t, "client-other")))
	if r, err := other.GetIssueWithResponse(ctx, issueID); err != nil || r.StatusCode() != http.StatusNotFound || r.JSON404 == nil ||
		errorCode(r.JSON404) == "" {
		t.Fatalf("foreign issue: %v %d %s", err, r.StatusCode(), r.Body)
	}
}

func ptr[T any](v T) *T { return &v }
