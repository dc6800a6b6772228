package app_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/confcode"
	"github.com/vigia-data/vigia/rule"
)

// The secrets of the configuration tests: they must never come back in a plan, an
// error or a log.
const (
	cfgDSN      = "postgres://vigia:cfg-dsn-s3cret@127.0.0.1:5432/warehouse?sslmode=disable"
	cfgOtherDSN = "postgres://vigia:cfg-other-s3cret@127.0.0.1:5432/warehouse?sslmode=disable"
)

func mustParse(t *testing.T, text string) confcode.File {
	t.Helper()
	f, err := confcode.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func envOf(vars map[string]string) confcode.Env {
	return func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
}

func planText(p confcode.Plan) string {
	lines := make([]string, 0, len(p.Changes))
	for _, c := range p.Changes {
		lines = append(lines, c.String())
	}
	return strings.Join(lines, "\n")
}

func requireNoSecret(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) || strings.Contains(text, "s3cret") || strings.Contains(text, urlMarker) {
			t.Fatalf("%s shows a secret: %s", what, text)
		}
	}
}

const cfgConnectionOnly = `version: 1
connections:
  - name: warehouse
    kind: postgres
    dsn_env: WAREHOUSE_DSN
    scan_timezone: Europe/Lisbon
    schedule: {enabled: true, hour: 3, minute: 30}
`

const cfgFull = cfgConnectionOnly + `teams:
  - name: Finance
    members: [ana.cfg@example.pt]
domains:
  - name: Sales
    description: Orders and customers
    owner_name: Ana
    datasets: [warehouse/public.orders]
    teams: [{team: Finance, role: manager}]
    sla:
      availability_objective_pct: 99
      retention_days: 365
      dimension_targets: {completude: 95}
channels:
  - name: ops
    webhook_url_env: OPS_HOOK
    team: Finance
    min_severity: critical
    scope: {domains: [Sales]}
rules:
  - dataset: warehouse/public.orders
    name: id present
    type: not_null
    severity: critical
    params: {column: id}
`

// Must show 4: applying the same file twice gives an empty second plan; the objects it
// made are managed, and the API refuses to edit them (409 managed_by_config); a dry
// run changes nothing; --prune deletes what left the file; the export applies back to
// an empty plan; no secret is ever printed.
func TestConfigAsCodeApply(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ctx := context.Background()
	ws := env.MustWorkspace(t, "cfg")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	if _, _, err := env.App.Identity.CreateUser(ctx, ws, "ana.cfg@example.pt", vigia.RoleMember); err != nil {
		t.Fatal(err)
	}
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	vars := map[string]string{"WAREHOUSE_DSN": cfgDSN, "OPS_HOOK": rcv.URL}
	actx := app.AsAdmin(ctx, ws, "config")
	apply := func(t *testing.T, text string, opts confcode.Options) confcode.Plan {
		t.Helper()
		p, err := env.App.ConfigAsCode.Apply(actx, mustParse(t, text), envOf(vars), opts)
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		requireNoSecret(t, "plan", planText(p), cfgDSN, rcv.URL)
		return p
	}

	// The connection first: the domain's dataset comes from its (simulated) scan.
	if p := apply(t, cfgConnectionOnly, confcode.Options{}); planText(p) != `create connection "warehouse"` {
		t.Fatalf("first plan:\n%s", planText(p))
	}
	conns, err := env.App.Connections.Connections(actx)
	if err != nil || len(conns) != 1 || conns[0].ScanTimezone != "Europe/Lisbon" || !conns[0].Schedule.Enabled {
		t.Fatalf("connection %+v %v", conns, err)
	}
	env.MustDataset(t, ws, conns[0].ID, "public", "orders")

	t.Run("DryRunChangesNothing", func(t *testing.T) {
		p := apply(t, cfgFull, confcode.Options{DryRun: true})
		want := "create team \"Finance\"\ncreate domain \"Sales\"\ncreate channel \"ops\"\ncreate rule \"warehouse/public.orders: id present\""
		if planText(p) != want {
			t.Fatalf("dry-run plan:\n%s", planText(p))
		}
		if ts, _ := env.App.Teams.Teams(actx); len(ts) != 0 {
			t.Fatalf("a dry run created %d teams", len(ts))
		}
		if cs, _ := env.App.Notify.Channels(actx); len(cs) != 0 {
			t.Fatalf("a dry run created %d channels", len(cs))
		}
	})

	t.Run("SecondPlanIsEmpty", func(t *testing.T) {
		if p := apply(t, cfgFull, confcode.Options{}); len(p.Changes) != 4 {
			t.Fatalf("apply plan:\n%s", planText(p))
		}
		if p := apply(t, cfgFull, confcode.Options{}); !p.Empty() {
			t.Fatalf("second plan is not empty:\n%s", planText(p))
		}
	})

	channels, err := env.App.Notify.Channels(actx)
	if err != nil || len(channels) != 1 {
		t.Fatalf("channels %v %v", channels, err)
	}
	ch := channels[0]
	t.Run("ManagedChannelRefusesAPIEdits", func(t *testing.T) {
		for _, r := range []*apptest.Response{
			env.Do(t, http.MethodPatch, "/api/v1/notification-channels/"+ch.ID, admin, map[string]any{"min_severity": "warning"}),
			env.Do(t, http.MethodDelete, "/api/v1/notification-channels/"+ch.ID, admin, nil),
		} {
			if e := decodeError(t, r); r.Status != http.StatusConflict || e.Code != "managed_by_config" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		}
		got, err := env.App.Notify.Channel(actx, ch.ID)
		if err != nil || got.MinSeverity != "critical" {
			t.Fatalf("the channel changed: %+v %v", got, err)
		}
	})
	t.Run("OtherManagedObjectsRefuseAPIEdits", func(t *testing.T) {
		teams, _ := env.App.Teams.Teams(actx)
		domains, _ := env.App.Products.Domains(actx, vigia.Page{Limit: 10})
		rules, _ := env.App.Rules.Rules(actx, rule.Filter{Page: vigia.Page{Limit: 10}})
		if len(teams) != 1 || len(domains.Items) != 1 || len(rules.Items) != 1 {
			t.Fatalf("teams %d domains %d rules %d", len(teams), len(domains.Items), len(rules.Items))
		}
		for i, r := range []*apptest.Response{
			env.Do(t, http.MethodPatch, "/api/v1/teams/"+teams[0].ID, admin, map[string]any{"name": "Renamed"}),
			env.Do(t, http.MethodDelete, "/api/v1/teams/"+teams[0].ID, admin, nil),
			env.Do(t, http.MethodPatch, "/api/v1/domains/"+domains.Items[0].ID, admin, map[string]any{"description": "x"}),
			env.Do(t, http.MethodPatch, "/api/v1/rules/"+rules.Items[0].ID, admin, map[string]any{"severity": "warning"}),
			env.Do(t, http.MethodDelete, "/api/v1/rules/"+rules.Items[0].ID, admin, nil),
			env.Do(t, http.MethodPatch, "/api/v1/connections/"+conns[0].ID, admin, map[string]any{"name": "other"}),
			env.Do(t, http.MethodPatch, "/api/v1/connections/"+conns[0].ID+"/schedule", admin, map[string]any{"hour": 4}),
		} {
			if e := decodeError(t, r); r.Status != http.StatusConflict || e.Code != "managed_by_config" {
				t.Fatalf("request %d: got %d %s", i, r.Status, r.Body)
			}
		}
		// GraphQL calls the same services: the same refusal.
		out := env.GraphQL(t, admin, `mutation($id: ID!) { updateRule(id: $id, input: {severity: "warning"}) { id } }`,
			map[string]any{"id": rules.Items[0].ID})
		errs, _ := out["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "managed_by_config" {
			t.Fatalf("GraphQL updateRule: %v", out)
		}
	})
	t.Run("SecretShownOnlyWhenRotated", func(t *testing.T) {
		r := env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+ch.ID, admin, nil)
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "whsec_") || !strings.Contains(string(r.Body), `"signed":true`) {
			t.Fatalf("channel: %d %s", r.Status, r.Body)
		}
		r = env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+ch.ID+"/rotate-secret", admin, nil)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"signing_secret":"whsec_`) {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
	})
	t.Run("FileChangeIsAnUpdate", func(t *testing.T) {
		vars["WAREHOUSE_DSN"] = cfgOtherDSN
		defer func() { vars["WAREHOUSE_DSN"] = cfgDSN }()
		changed := strings.Replace(cfgFull, "min_severity: critical", "min_severity: warning", 1)
		p := apply(t, changed, confcode.Options{DryRun: true})
		if planText(p) != "update connection \"warehouse\" (dsn)\nupdate channel \"ops\" (min_severity)" {
			t.Fatalf("plan:\n%s", planText(p))
		}
		requireNoSecret(t, "plan", planText(p), cfgOtherDSN)
	})
	t.Run("ExportAppliesBackToAnEmptyPlan", func(t *testing.T) {
		f, err := env.App.ConfigAsCode.Export(actx)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := confcode.Encode(&buf, f); err != nil {
			t.Fatal(err)
		}
		requireNoSecret(t, "export", buf.String(), cfgDSN, rcv.URL)
		if strings.Contains(buf.String(), "whsec_") || !strings.Contains(buf.String(), "dsn_env: VIGIA_DSN_WAREHOUSE") {
			t.Fatalf("export:\n%s", buf.String())
		}
		back := map[string]string{"VIGIA_DSN_WAREHOUSE": cfgDSN, "VIGIA_WEBHOOK_URL_OPS": rcv.URL}
		p, err := env.App.ConfigAsCode.Apply(actx, mustParse(t, buf.String()), envOf(back), confcode.Options{DryRun: true, Prune: true})
		if err != nil || !p.Empty() {
			t.Fatalf("export round trip: %v\n%s\n%s", err, planText(p), buf.String())
		}
	})
	t.Run("PruneDeletesWhatLeftTheFile", func(t *testing.T) {
		without := cfgFull[:strings.Index(cfgFull, "channels:")]
		if p := apply(t, without, confcode.Options{}); !p.Empty() {
			t.Fatalf("without --prune:\n%s", planText(p))
		}
		if _, err := env.App.Notify.Channel(actx, ch.ID); err != nil {
			t.Fatalf("deleted without --prune: %v", err)
		}
		p := apply(t, without, confcode.Options{Prune: true})
		if planText(p) != "delete channel \"ops\"\ndelete rule \"warehouse/public.orders: id present\"" {
			t.Fatalf("prune plan:\n%s", planText(p))
		}
		if _, err := env.App.Notify.Channel(actx, ch.ID); !vigia.IsKind(err, vigia.KindNotFound) {
			t.Fatalf("the channel is still there: %v", err)
		}
		if p := apply(t, without, confcode.Options{Prune: true}); !p.Empty() {
			t.Fatalf("after prune:\n%s", planText(p))
		}
	})
	t.Run("RulePackAppliedOnce", func(t *testing.T) {
		file := cfgFull[:strings.Index(cfgFull, "channels:")] + "rule_packs:\n  - pack: pt_customer_master\n    dataset: warehouse/public.orders\n"
		p := apply(t, file, confcode.Options{Prune: true})
		if planText(p) != `apply rule pack "pt_customer_master on warehouse/public.orders": 1 new rule` {
			t.Fatalf("pack plan:\n%s", planText(p))
		}
		if p := apply(t, file, confcode.Options{Prune: true}); !p.Empty() {
			t.Fatalf("second pack plan:\n%s", planText(p))
		}
	})
	if strings.Contains(env.Logs.String(), "s3cret") || strings.Contains(env.Logs.String(), urlMarker) {
		t.Fatal("a secret reached the logs")
	}
}

// A bad file applies nothing: an unknown key is reported with its line; a missing
// environment variable by its name (never a value); a bad object rolls back the
// objects before it.
func TestConfigAsCodeRefusals(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ctx := context.Background()
	ws := env.MustWorkspace(t, "cfgbad")
	actx := app.AsAdmin(ctx, ws, "config")

	t.Run("UnknownKeyWithLine", func(t *testing.T) {
		_, err := confcode.Parse(strings.NewReader("version: 1\nteams:\n  - name: A\n    colour: blue\n"))
		var fe *confcode.FileError
		if !errors.As(err, &fe) || fe.Line != 4 || !strings.Contains(err.Error(), `unknown key "colour"`) || strings.Contains(err.Error(), "blue") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("DSNInTheFile", func(t *testing.T) {
		_, err := confcode.Parse(strings.NewReader("version: 1\nconnections:\n  - name: w\n    kind: postgres\n    dsn: " + cfgDSN + "\n    dsn_env: W\n"))
		if err == nil || !strings.Contains(err.Error(), "line 3: connection \"w\": a DSN never goes in the file") {
			t.Fatalf("got %v", err)
		}
		requireNoSecret(t, "error", err.Error(), cfgDSN)
	})
	t.Run("MissingVariableNamed", func(t *testing.T) {
		f := mustParse(t, cfgConnectionOnly+"channels:\n  - name: ops\n    webhook_url_env: OPS_HOOK\n")
		_, err := env.App.ConfigAsCode.Apply(actx, f, envOf(map[string]string{"WAREHOUSE_DSN": cfgDSN}), confcode.Options{})
		if err == nil || err.Error() != "environment variables not set: OPS_HOOK" {
			t.Fatalf("got %v", err)
		}
		if cs, _ := env.App.Connections.Connections(actx); len(cs) != 0 {
			t.Fatalf("applied %d connections", len(cs))
		}
	})
	t.Run("AdoptsWhatTheAPIMade", func(t *testing.T) {
		ws := env.MustWorkspace(t, "cfgadopt")
		admin := env.MustSession(t, ws, vigia.RoleAdmin)
		actx := app.AsAdmin(ctx, ws, "config")
		r := env.Do(t, http.MethodPost, "/api/v1/teams", admin, map[string]any{"name": "Ops"})
		if r.Status != http.StatusCreated {
			t.Fatalf("team: %d %s", r.Status, r.Body)
		}
		var team struct{ ID string }
		r.JSON(t, &team)
		f, err := env.App.ConfigAsCode.Export(actx)
		if err != nil {
			t.Fatal(err)
		}
		p, err := env.App.ConfigAsCode.Apply(actx, f, envOf(nil), confcode.Options{})
		if err != nil || planText(p) != `manage team "Ops"` {
			t.Fatalf("adopt: %v\n%s", err, planText(p))
		}
		if r := env.Do(t, http.MethodPatch, "/api/v1/teams/"+team.ID, admin, map[string]any{"name": "Other"}); r.Status != http.StatusConflict {
			t.Fatalf("rename of an adopted team: %d %s", r.Status, r.Body)
		}
		if p, err := env.App.ConfigAsCode.Apply(actx, f, envOf(nil), confcode.Options{}); err != nil || !p.Empty() {
			t.Fatalf("second apply: %v\n%s", err, planText(p))
		}
	})
	t.Run("BadObjectAppliesNothing", func(t *testing.T) {
		f := mustParse(t, "version: 1\nteams:\n  - name: Early\ndomains:\n  - name: D\n    sla: {dimension_weights: {completude: 50}}\n")
		_, err := env.App.ConfigAsCode.Apply(actx, f, envOf(nil), confcode.Options{})
		var oe *confcode.ObjectError
		if !errors.As(err, &oe) || oe.Kind != "domain" || oe.Name != "D" || !vigia.IsKind(err, vigia.KindInvalid) {
			t.Fatalf("got %v", err)
		}
		if ts, _ := env.App.Teams.Teams(actx); len(ts) != 0 {
			t.Fatalf("the team before the bad domain was applied")
		}
	})
}
