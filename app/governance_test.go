package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/plan"
)

// planErrorBody is the contract's error envelope with the members a 402 adds.
type planErrorBody struct {
	Detail       any    `json:"detail"`
	Code         string `json:"code"`
	RequestID    string `json:"request_id"`
	Plan         string `json:"plan"`
	Limit        *int   `json:"limit"`
	RequiredPlan string `json:"required_plan"`
	Quota        string `json:"quota"`
}

func mustStatus(t *testing.T, r *apptest.Response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
}

// The workspace's default locale and time zone: anyone reads them, only an admin
// changes them; bad values are 422 without echoing them.
func TestWorkspaceLocaleAndCurrency(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "settings")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	viewer := env.MustSession(t, ws, vigia.RoleViewer)

	var loc struct {
		Locale          *string `json:"locale"`
		EffectiveLocale string  `json:"effective_locale"`
		Timezone        string  `json:"timezone"`
	}
	r := env.Do(t, http.MethodGet, "/api/v1/workspace/locale", viewer, nil)
	mustStatus(t, r, http.StatusOK)
	r.JSON(t, &loc)
	if loc.Locale != nil || loc.EffectiveLocale != "pt-PT" || loc.Timezone != "Europe/Lisbon" {
		t.Fatalf("default locale: %s", r.Body)
	}
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/locale", viewer, map[string]any{"locale": "en-GB", "timezone": "UTC"}), http.StatusForbidden)
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/locale", env.MustToken(t, ws), map[string]any{"locale": "en-GB", "timezone": "UTC"}), http.StatusForbidden)

	r = env.Do(t, http.MethodPut, "/api/v1/workspace/locale", admin, map[string]any{"locale": "xx-YY<script>", "timezone": "Mars/Olympus_Mons"})
	mustStatus(t, r, http.StatusUnprocessableEntity)
	if strings.Contains(string(r.Body), "Olympus") || strings.Contains(string(r.Body), "script") {
		t.Fatalf("422 echoes the input: %s", r.Body)
	}
	for _, want := range []string{`"body","locale"`, `"body","timezone"`} {
		if !strings.Contains(string(r.Body), want) {
			t.Fatalf("422 without %s: %s", want, r.Body)
		}
	}
	r = env.Do(t, http.MethodPut, "/api/v1/workspace/locale", admin, map[string]any{"locale": "es-ES", "timezone": "America/Sao_Paulo"})
	mustStatus(t, r, http.StatusOK)
	r = env.Do(t, http.MethodGet, "/api/v1/workspace/locale", viewer, nil)
	r.JSON(t, &loc)
	if loc.Locale == nil || *loc.Locale != "es-ES" || loc.EffectiveLocale != "es-ES" || loc.Timezone != "America/Sao_Paulo" {
		t.Fatalf("after PUT: %s", r.Body)
	}

	var cur struct {
		Currency string `json:"currency"`
		Default  bool   `json:"default"`
	}
	r = env.Do(t, http.MethodGet, "/api/v1/workspace/currency", viewer, nil)
	r.JSON(t, &cur)
	if cur.Currency != "EUR" || !cur.Default {
		t.Fatalf("default currency: %s", r.Body)
	}
	r = env.Do(t, http.MethodPut, "/api/v1/workspace/currency", admin, map[string]any{"currency": "JPY"})
	mustStatus(t, r, http.StatusUnprocessableEntity)
	if strings.Contains(string(r.Body), "JPY") {
		t.Fatalf("422 echoes the input: %s", r.Body)
	}
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/currency", viewer, map[string]any{"currency": "USD"}), http.StatusForbidden)
	r = env.Do(t, http.MethodPut, "/api/v1/workspace/currency", admin, map[string]any{"currency": "USD"})
	mustStatus(t, r, http.StatusOK)
	r = env.Do(t, http.MethodGet, "/api/v1/workspace/currency", viewer, nil)
	r.JSON(t, &cur)
	if cur.Currency != "USD" || cur.Default {
		t.Fatalf("after PUT USD: %s", r.Body)
	}
	r = env.Do(t, http.MethodPut, "/api/v1/workspace/currency", admin, map[string]any{"currency": nil})
	mustStatus(t, r, http.StatusOK)
	r.JSON(t, &cur)
	if cur.Currency != "EUR" || !cur.Default {
		t.Fatalf("after PUT null: %s", r.Body)
	}

	// Another workspace's settings are its own.
	other := env.MustSession(t, env.MustWorkspace(t, "settings-other"), vigia.RoleViewer)
	r = env.Do(t, http.MethodGet, "/api/v1/workspace/locale", other, nil)
	r.JSON(t, &loc)
	if loc.Locale != nil || loc.Timezone != "Europe/Lisbon" {
		t.Fatalf("another workspace sees this one's settings: %s", r.Body)
	}
}

// Must-show 4: PATCH /auth/me {"locale":"en-GB"} makes the next error to that person
// English; null goes back to the workspace default (then Accept-Language, then pt-PT).
func TestAccountLocaleDrivesErrors(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "me")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	member := env.MustSession(t, ws, vigia.RoleMember)
	msgs := env.App.Messages
	missing := "/api/v1/datasets/" + vigia.NewID()
	detail := func(cred string, headers ...string) string {
		t.Helper()
		r := env.Do(t, http.MethodGet, missing, cred, nil, headers...)
		mustStatus(t, r, http.StatusNotFound)
		var e planErrorBody
		r.JSON(t, &e)
		return fmt.Sprint(e.Detail)
	}
	pt, en, es := msgs.Message("pt-PT", "error.not_found", nil), msgs.Message("en", "error.not_found", nil), msgs.Message("es", "error.not_found", nil)
	if pt == en || en == es {
		t.Fatalf("the catalogue does not tell the languages apart: %q %q %q", pt, en, es)
	}
	if got := detail(member); got != pt {
		t.Fatalf("without settings: %q, want %q", got, pt)
	}

	var me struct {
		Locale            *string `json:"locale"`
		Timezone          *string `json:"timezone"`
		EffectiveLocale   string  `json:"effective_locale"`
		EffectiveTimezone string  `json:"effective_timezone"`
		ResponseLanguage  string  `json:"response_language"`
		Role              string  `json:"role"`
		Plan              string  `json:"plan"`
	}
	r := env.Do(t, http.MethodGet, "/api/v1/auth/me", member, nil)
	mustStatus(t, r, http.StatusOK)
	r.JSON(t, &me)
	if me.Locale != nil || me.EffectiveLocale != "pt-PT" || me.Role != "member" || me.Plan != "business" || me.EffectiveTimezone != "Europe/Lisbon" {
		t.Fatalf("GET /auth/me: %s", r.Body)
	}

	r = env.Do(t, http.MethodPatch, "/api/v1/auth/me", member, map[string]any{"locale": "en-GB"})
	mustStatus(t, r, http.StatusOK)
	r.JSON(t, &me)
	if me.Locale == nil || *me.Locale != "en-GB" || me.ResponseLanguage != "en" {
		t.Fatalf("PATCH locale: %s", r.Body)
	}
	if got := detail(member); got != en {
		t.Fatalf("after en-GB: %q, want %q", got, en)
	}
	// The account wins over Accept-Language.
	if got := detail(member, "Accept-Language: es"); got != en {
		t.Fatalf("after en-GB with Accept-Language es: %q, want %q", got, en)
	}
	// Only sent keys change.
	r = env.Do(t, http.MethodPatch, "/api/v1/auth/me", member, map[string]any{"timezone": "Europe/Zurich"})
	mustStatus(t, r, http.StatusOK)
	r.JSON(t, &me)
	if me.Locale == nil || *me.Locale != "en-GB" || me.Timezone == nil || *me.Timezone != "Europe/Zurich" {
		t.Fatalf("PATCH timezone changed the locale: %s", r.Body)
	}
	r = env.Do(t, http.MethodPatch, "/api/v1/auth/me", member, map[string]any{"locale": "klingon", "timezone": "Nowhere/Else"})
	mustStatus(t, r, http.StatusUnprocessableEntity)
	if strings.Contains(string(r.Body), "klingon") || strings.Contains(string(r.Body), "Nowhere") {
		t.Fatalf("422 echoes the input: %s", r.Body)
	}

	// The workspace default is Spanish; null on the account goes back to it.
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/locale", admin, map[string]any{"locale": "es-ES", "timezone": "Europe/Madrid"}), http.StatusOK)
	r = env.Do(t, http.MethodPatch, "/api/v1/auth/me", member, map[string]any{"locale": nil})
	mustStatus(t, r, http.StatusOK)
	r.JSON(t, &me)
	if me.Locale != nil || me.EffectiveLocale != "es-ES" || me.ResponseLanguage != "es" || me.Timezone == nil {
		t.Fatalf("PATCH locale null: %s", r.Body)
	}
	if got := detail(member, "Accept-Language: en"); got != es {
		t.Fatalf("after null with workspace es-ES: %q, want %q", got, es)
	}
	// Without a workspace default, Accept-Language decides.
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/locale", admin, map[string]any{"locale": nil, "timezone": "Europe/Lisbon"}), http.StatusOK)
	if got := detail(member, "Accept-Language: en-US,en;q=0.8"); got != en {
		t.Fatalf("Accept-Language en: %q, want %q", got, en)
	}
	if got := detail(member); got != pt {
		t.Fatalf("nothing set: %q, want %q", got, pt)
	}
	// An API token is nobody's account.
	r = env.Do(t, http.MethodGet, "/api/v1/auth/me", env.MustToken(t, ws), nil)
	mustStatus(t, r, http.StatusForbidden)
}

// GET /public/egress-ips is public and publishes the configured addresses.
func TestEgressIPs(t *testing.T) {
	env := apptest.MustStart(t, app.Config{EgressIPs: []netip.Prefix{netip.MustParsePrefix("203.0.113.7/32"), netip.MustParsePrefix("198.51.100.0/28")}})
	r := env.Do(t, http.MethodGet, "/api/v1/public/egress-ips", "", nil)
	mustStatus(t, r, http.StatusOK)
	var out struct {
		Addresses []string `json:"addresses"`
	}
	r.JSON(t, &out)
	if strings.Join(out.Addresses, ",") != "203.0.113.7,198.51.100.0/28" {
		t.Fatalf("egress addresses: %s", r.Body)
	}
}

// Plans: API tokens need team, scans are bounded by the plan's quotas (402 org_quota
// with plan and limit); business (the default) allows all of it.
func TestPlansAnswer402(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "plans")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	conn := env.MustConnection(t, ws, "pg")

	// The default is business: a token is created and a scan is queued.
	token := env.MustToken(t, ws)
	r := env.Do(t, http.MethodPost, "/api/v1/scans", token, map[string]any{"connection_id": conn})
	mustStatus(t, r, http.StatusAccepted)

	// free: no API tokens (402 plan_limit, the plan and the plan needed).
	if _, err := env.App.Identity.SetPlan(ctx, ws, plan.Free); err != nil {
		t.Fatal(err)
	}
	_, _, err := env.App.Identity.CreateAPIToken(ctx, ws, "blocked", "test", nil)
	e := vigia.AsError(err)
	if e.Kind != vigia.KindPaymentRequired || e.Code != "plan_limit" || e.Plan == nil || e.Plan.Plan != "free" || e.Plan.Required != "team" || e.Plan.Limit != 0 {
		t.Fatalf("token on free: %v %+v", err, e.Plan)
	}
	if _, err := env.App.Identity.SetPlan(ctx, ws, plan.Team); err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.App.Identity.CreateAPIToken(ctx, ws, "allowed", "test", nil); err != nil {
		t.Fatalf("token on team: %v", err)
	}

	// free: the scans of the day are used up (one queued above plus the rest).
	if _, err := env.App.Identity.SetPlan(ctx, ws, plan.Free); err != nil {
		t.Fatal(err)
	}
	done := plan.Free.Limit(plan.ScansPerDay) - 1
	if _, err := env.DB.Pool().Exec(ctx, `INSERT INTO scans (id, workspace_id, connection_id, status)
		SELECT gen_random_uuid(), $1, $2, 'succeeded' FROM generate_series(1, $3)`, ws, conn, done); err != nil {
		t.Fatal(err)
	}
	otherConn := env.MustConnection(t, ws, "pg2")
	r = env.Do(t, http.MethodPost, "/api/v1/scans", admin, map[string]any{"connection_id": otherConn})
	mustStatus(t, r, http.StatusPaymentRequired)
	var body planErrorBody
	r.JSON(t, &body)
	if body.Code != "org_quota" || body.Plan != "free" || body.Limit == nil || *body.Limit != plan.Free.Limit(plan.ScansPerDay) ||
		body.Quota != "scans_per_day" || body.RequestID == "" || body.Detail == "" {
		t.Fatalf("402 scans per day: %s", r.Body)
	}
	// Business lifts it.
	if _, err := env.App.Identity.SetPlan(ctx, ws, plan.Business); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/scans", admin, map[string]any{"connection_id": otherConn}), http.StatusAccepted)

	// free in another workspace holding more datasets than the plan allows.
	ws2 := env.MustWorkspace(t, "plans-datasets")
	admin2 := env.MustSession(t, ws2, vigia.RoleAdmin)
	conn2 := env.MustConnection(t, ws2, "pg")
	for i := 0; i <= plan.Free.Limit(plan.Datasets); i++ {
		env.MustDataset(t, ws2, conn2, "public", fmt.Sprintf("t%02d", i))
	}
	if _, err := env.App.Identity.SetPlan(ctx, ws2, plan.Free); err != nil {
		t.Fatal(err)
	}
	r = env.Do(t, http.MethodPost, "/api/v1/scans", admin2, map[string]any{"connection_id": conn2}, "Accept-Language: en")
	mustStatus(t, r, http.StatusPaymentRequired)
	body = planErrorBody{}
	r.JSON(t, &body)
	if body.Code != "org_quota" || body.Plan != "free" || body.Limit == nil || *body.Limit != plan.Free.Limit(plan.Datasets) || body.Quota != "datasets" ||
		!strings.Contains(fmt.Sprint(body.Detail), "datasets") {
		t.Fatalf("402 datasets: %s", r.Body)
	}
	if _, err := env.App.Identity.SetPlan(ctx, ws2, plan.Team); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/scans", admin2, map[string]any{"connection_id": conn2}), http.StatusAccepted)

	// An unknown plan is refused.
	if _, err := env.App.Identity.SetPlan(ctx, ws2, plan.Plan("gold")); !vigia.IsKind(err, vigia.KindInvalid) {
		t.Fatalf("unknown plan: %v", err)
	}
}
