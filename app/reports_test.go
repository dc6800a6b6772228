package app_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/internal/browsertest"
)

type reportOut struct {
	ID          string   `json:"id"`
	Type        string   `json:"type"`
	Persona     string   `json:"persona"`
	Title       string   `json:"title"`
	Language    *string  `json:"language"`
	ContentMD   string   `json:"content_md"`
	Score       *float64 `json:"score"`
	AIGenerated bool     `json:"ai_generated"`
	AIModel     *string  `json:"ai_model"`
	GeneratedAt string   `json:"generated_at"`
}

// reportSeed gives a workspace two datasets with three days of scores, a failing
// verdict, two open issues (one past its SLA), an incident with a blast radius, and a
// trust decision seen by a consumer. Scores: orders 80 → 90, customers 70 → 80, so
// the latest mean is 85.0.
func reportSeed(t *testing.T, env *apptest.Env, ws string) (orders, customers string) {
	t.Helper()
	ctx := context.Background()
	conn := env.MustConnection(t, ws, "warehouse")
	orders = env.MustDataset(t, ws, conn, "sales", "orders")
	customers = env.MustDataset(t, ws, conn, "sales", "customers")
	sqlExec := func(stmt string, args ...any) {
		t.Helper()
		if _, err := env.DB.Pool().Exec(ctx, stmt, args...); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	now := time.Now().UTC()
	for i, ds := range []struct {
		id     string
		scores []float64
	}{{orders, []float64{80, 85, 90}}, {customers, []float64{70, 75, 80}}} {
		for d, score := range ds.scores {
			at := now.Add(-time.Duration(len(ds.scores)-d) * 24 * time.Hour)
			scanID := vigia.NewID()
			sqlExec(`INSERT INTO scans (id, workspace_id, connection_id, status, created_at, finished_at) VALUES ($1, $2, $3, 'succeeded', $4, $4)`,
				scanID, ws, conn, at)
			detail := fmt.Sprintf(`{"score": %g, "dimensions": {"completude": %g, "unicidade": 100, "validade": %g, "atualidade": null, "consistencia": 95}}`,
				score, score, score-10)
			sqlExec(`INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				ds.id, scanID, ws, d+1, score, detail, at)
			verdict := "pass"
			if i == 1 && d == len(ds.scores)-1 {
				verdict = "fail"
			}
			sqlExec(`INSERT INTO verdicts (dataset_id, scan_id, workspace_id, seq, verdict, detail, created_at) VALUES ($1, $2, $3, $4, $5, '{}', $6)`,
				ds.id, scanID, ws, d+1, verdict, at)
		}
		sqlExec(`UPDATE datasets SET latest_score = $2 WHERE id = $1`, ds.id, ds.scores[len(ds.scores)-1])
	}
	issueA, issueB := vigia.NewID(), vigia.NewID()
	sqlExec(`INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, column_name, detections, created_at, updated_at, sla_breached_at)
		VALUES ($1, $2, $3, 'null_rate', 'critical', 'open', 't', 'email', 3, $4, $4, $4), ($5, $2, $3, 'row_count', 'warning', 'open', 't', '', 1, $4, $4, NULL)`,
		issueA, ws, customers, now.Add(-36*time.Hour), issueB)
	sqlExec(`INSERT INTO incidents (id, workspace_id, status, root_dataset_id, severity, issue_ids, dataset_ids, impact, created_at, updated_at)
		VALUES ($1, $2, 'open', $3, 'critical', $4, $5, '{"reach_total": 4}', $6, $6)`,
		vigia.NewID(), ws, customers, []string{issueA, issueB}, []string{customers, orders}, now.Add(-30*time.Hour))
	consumer, consumption := vigia.NewID(), vigia.NewID()
	sqlExec(`INSERT INTO consumers (id, workspace_id, name, kind, created_at) VALUES ($1, $2, 'board', 'application', now())`, consumer, ws)
	sqlExec(`INSERT INTO consumptions (id, workspace_id, consumer_id, purpose, actor, created_at) VALUES ($1, $2, $3, 'bi', 'test', $4)`,
		consumption, ws, consumer, now.Add(-time.Hour))
	sqlExec(`INSERT INTO consumption_datasets (consumption_id, dataset_id, workspace_id, consumer_id, purpose, decision_seen, trust_as_of, created_at)
		VALUES ($1, $2, $3, $4, 'bi', 'caution', $5, $5)`, consumption, customers, ws, consumer, now.Add(-time.Hour))
	return orders, customers
}

// renderer returns the path of a renderer binary; without it the test skips with the
// package to install (and fails when CI is set: .ci/run installs them).
func renderer(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := osexec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found on PATH: install Debian's %s (apt-get install -y %s)", name, pkg, pkg)
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " — CI is set, so this test fails instead of skipping")
	}
	t.Skip(msg)
	return ""
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := osexec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// Must-show 1 of issue 17: an English executive workspace overview; its HTML renders
// in headless Chromium, its PDF renders with pdftoppm and its text holds the score and
// an accented Portuguese heading, its deck converts with LibreOffice to a 5-page PDF;
// another persona's deck is 409.
func TestReportExecutiveOverviewExports(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "reports")
	reportSeed(t, env, ws)
	member := env.MustSession(t, ws, vigia.RoleMember)
	token := env.MustToken(t, ws)

	res := env.Do(t, http.MethodPost, "/api/v1/reports", member, map[string]any{"type": "workspace_overview", "persona": "executive", "language": "en"})
	var rep reportOut
	res.JSON(t, &rep)
	if res.Status != http.StatusCreated || rep.Language == nil || *rep.Language != "en" || rep.AIGenerated || rep.AIModel != nil ||
		rep.Score == nil || *rep.Score != 85 || rep.GeneratedAt == "" {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	for _, want := range []string{"## Resumo executivo", "## Pontuação e tendência", "## Incidentes e raio de impacto", "## Cumprimento de SLA",
		"## Decisões de confiança", "## Estado dos contratos", "Across 2 monitored datasets the average quality score is 85.0/100.",
		"1 fail, 0 warn; 1 open incidents; 2 open issues.", "from 75.0 to 85.0 (+10.0)", "blast radius 4 downstream",
		"50.0% of the 2 issues opened in the period met their resolution target (1 breached).", "caution 1"} {
		if !strings.Contains(rep.ContentMD, want) {
			t.Fatalf("content_md lacks %q:\n%s", want, rep.ContentMD)
		}
	}
	// The token reads it (no restricted facts); another workspace does not.
	if res := env.Do(t, http.MethodGet, "/api/v1/reports/"+rep.ID, token, nil); res.Status != http.StatusOK {
		t.Fatalf("token get: %d %s", res.Status, res.Body)
	}
	other := env.MustToken(t, env.MustWorkspace(t, "reports-other"))
	for _, p := range []string{"", "/export", "/export.pdf", "/export.pptx"} {
		if res := env.Do(t, http.MethodGet, "/api/v1/reports/"+rep.ID+p, other, nil); res.Status != http.StatusNotFound {
			t.Fatalf("other workspace %s: %d", p, res.Status)
		}
	}
	// VIGIA_SCREENSHOT_DIR keeps the rendered pages to look at.
	dir := os.Getenv("VIGIA_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}

	t.Run("HTMLRendersInChromium", func(t *testing.T) {
		res := env.Do(t, http.MethodGet, "/api/v1/reports/"+rep.ID+"/export", token, nil)
		if res.Status != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			!bytes.Contains(res.Body, []byte(`<meta name="ai-generated" content="false">`)) {
			t.Fatalf("html: %d %s", res.Status, res.Header)
		}
		page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(res.Body)
		}))
		defer page.Close()
		b := browsertest.New(t)
		b.Navigate(page.URL)
		b.WaitVisible("#chart-incidents svg")
		var facts struct {
			Charts, Points, Bars       int
			Heading, Marker, Resources string
		}
		b.Eval(`({charts: document.querySelectorAll("figure svg").length, points: document.querySelectorAll("#chart-trend circle").length,
			bars: document.querySelectorAll("#chart-incidents rect").length, resources: performance.getEntriesByType("resource").map(e => e.name).filter(n => !n.startsWith("data:")).join(" "),
			heading: Array.from(document.querySelectorAll("h2")).map(h => h.textContent).join("|"),
			marker: document.querySelector("meta[name=ai-generated]").content})`, &facts)
		if facts.Charts != 3 || facts.Points != 3 || facts.Bars != 1 || facts.Resources != "" || facts.Marker != "false" ||
			!strings.Contains(facts.Heading, "Pontuação e tendência") {
			t.Fatalf("rendered page: %+v", facts)
		}
		if p := b.Problems(); len(p) > 0 {
			t.Fatalf("browser problems: %v", p)
		}
		screenshot(t, b, "report-executive-en.png")
	})

	t.Run("PDFRendersWithPoppler", func(t *testing.T) {
		pdftoppm := renderer(t, "pdftoppm", "poppler-utils")
		pdftotext := renderer(t, "pdftotext", "poppler-utils")
		res := env.Do(t, http.MethodGet, "/api/v1/reports/"+rep.ID+"/export.pdf", token, nil)
		if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(res.Body, []byte("%PDF-")) {
			t.Fatalf("pdf: %d %s", res.Status, res.Header)
		}
		pdf := filepath.Join(dir, "report.pdf")
		if err := os.WriteFile(pdf, res.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		run(t, pdftoppm, "-png", "-r", "60", pdf, filepath.Join(dir, "page"))
		pages, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
		if len(pages) == 0 {
			t.Fatal("pdftoppm rendered no page")
		}
		text := run(t, pdftotext, "-layout", pdf, "-")
		for _, want := range []string{"85.0/100", "Pontuação e tendência", "Decisões de confiança", "ai-generated: false"} {
			if !strings.Contains(text, want) {
				t.Fatalf("pdf text lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("DeckConvertsToFivePages", func(t *testing.T) {
		soffice := renderer(t, "soffice", "libreoffice-impress")
		pdfinfo := renderer(t, "pdfinfo", "poppler-utils")
		res := env.Do(t, http.MethodGet, "/api/v1/reports/"+rep.ID+"/export.pptx", token, nil)
		if res.Status != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), "presentationml") {
			t.Fatalf("pptx: %d %s", res.Status, res.Body)
		}
		zr, err := zip.NewReader(bytes.NewReader(res.Body), int64(len(res.Body)))
		if err != nil {
			t.Fatal(err)
		}
		slides := 0
		for _, f := range zr.File {
			if strings.HasPrefix(f.Name, "ppt/slides/slide") && strings.HasSuffix(f.Name, ".xml") {
				slides++
			}
		}
		if slides != 5 {
			t.Fatalf("%d slides", slides)
		}
		deck := filepath.Join(dir, "deck.pptx")
		if err := os.WriteFile(deck, res.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "deck")
		run(t, soffice, "-env:UserInstallation=file://"+filepath.Join(dir, "lo-profile"), "--headless", "--convert-to", "pdf", "--outdir", out, deck)
		info := run(t, pdfinfo, filepath.Join(out, "deck.pdf"))
		if !strings.Contains(info, "Pages:           5\n") {
			t.Fatalf("converted deck:\n%s", info)
		}
	})

	t.Run("OtherPersonasDeckIs409", func(t *testing.T) {
		res := env.Do(t, http.MethodPost, "/api/v1/reports", member, map[string]any{"type": "workspace_overview", "persona": "engineering"})
		var eng reportOut
		res.JSON(t, &eng)
		if res.Status != http.StatusCreated || eng.Language == nil || *eng.Language != "pt" ||
			!strings.Contains(eng.ContentMD, "## Dimensões de qualidade") || !strings.Contains(eng.ContentMD, "null_rate (critical) em sales.customers.email") {
			t.Fatalf("engineering: %d %s", res.Status, res.Body)
		}
		res = env.Do(t, http.MethodGet, "/api/v1/reports/"+eng.ID+"/export.pptx", token, nil)
		var e struct {
			Code string `json:"code"`
		}
		res.JSON(t, &e)
		if res.Status != http.StatusConflict || e.Code != "report_deck_unsupported" {
			t.Fatalf("deck of engineering: %d %s", res.Status, res.Body)
		}
	})
}

// Reports of a domain, a dataset and an incident; bad requests are 422 without echoing
// the input; a subject the caller cannot see is 404; a report built from a restricted
// domain's datasets is read by its author and admins only; API tokens do not write.
func TestReportSubjectsValidationAndVisibility(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ctx := context.Background()
	ws := env.MustWorkspace(t, "reports-vis")
	orders, customers := reportSeed(t, env, ws)
	member := env.MustSession(t, ws, vigia.RoleMember)
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	token := env.MustToken(t, ws)
	open, secret := vigia.NewID(), vigia.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Vendas', false), ($3, $2, 'Clientes', true)`, []any{open, ws, secret}},
		{`INSERT INTO domain_datasets (domain_id, dataset_id) VALUES ($1, $2), ($3, $4)`, []any{open, orders, secret, customers}},
	} {
		if _, err := env.DB.Pool().Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	var incident string
	if err := env.DB.Pool().QueryRow(ctx, `SELECT id::text FROM incidents WHERE workspace_id = $1`, ws).Scan(&incident); err != nil {
		t.Fatal(err)
	}
	create := func(cred string, body map[string]any) (*apptest.Response, reportOut) {
		t.Helper()
		res := env.Do(t, http.MethodPost, "/api/v1/reports", cred, body)
		var out reportOut
		if res.Status == http.StatusCreated {
			res.JSON(t, &out)
		}
		return res, out
	}

	// The domain the member sees: one dataset, the orders' score.
	res, dom := create(member, map[string]any{"type": "domain", "persona": "steward", "subject_id": open, "language": "es"})
	if res.Status != http.StatusCreated || dom.Score == nil || *dom.Score != 90 || !strings.Contains(dom.Title, "Vendas") ||
		!strings.Contains(dom.ContentMD, "## Principais problemas") || !strings.Contains(dom.ContentMD, "puntuación media de calidad es 90,0/100") {
		t.Fatalf("domain: %d %s", res.Status, res.Body)
	}
	// The restricted domain and its dataset are invisible to a member without a grant.
	for _, body := range []map[string]any{{"type": "domain", "persona": "steward", "subject_id": secret},
		{"type": "dataset", "persona": "engineering", "subject_id": customers}, {"type": "dataset", "persona": "engineering", "subject_id": vigia.NewID()},
		{"type": "incident", "persona": "engineering", "subject_id": incident}} {
		if res, _ := create(member, body); res.Status != http.StatusNotFound {
			t.Fatalf("%v: %d %s", body, res.Status, res.Body)
		}
	}
	// The admin sees it: a post-incident review leads with the incident's timeline, and
	// is restricted to its author and admins.
	res, review := create(admin, map[string]any{"type": "incident", "persona": "engineering", "subject_id": incident, "language": "en"})
	if res.Status != http.StatusCreated || !strings.HasPrefix(strings.SplitN(review.ContentMD, "## ", 2)[1], "Cronologia do incidente") ||
		!strings.Contains(review.ContentMD, "blast radius 4 downstream") {
		t.Fatalf("incident: %d %s", res.Status, res.Body)
	}
	for _, cred := range []string{token, member} {
		if res := env.Do(t, http.MethodGet, "/api/v1/reports/"+review.ID, cred, nil); res.Status != http.StatusNotFound {
			t.Fatalf("restricted report: %d", res.Status)
		}
		if res := env.Do(t, http.MethodGet, "/api/v1/reports/"+review.ID+"/export.pdf", cred, nil); res.Status != http.StatusNotFound {
			t.Fatalf("restricted export: %d", res.Status)
		}
	}
	res = env.Do(t, http.MethodGet, "/api/v1/reports", token, nil)
	var listed []reportOut
	res.JSON(t, &listed)
	if res.Status != http.StatusOK || len(listed) != 1 || listed[0].ID != dom.ID || res.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("token list: %d %s", res.Status, res.Body)
	}
	if res := env.Do(t, http.MethodGet, "/api/v1/reports", admin, nil); res.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("admin list: %d %s", res.Status, res.Body)
	}
	res, ds := create(admin, map[string]any{"type": "dataset", "persona": "executive", "subject_id": customers})
	if res.Status != http.StatusCreated || ds.Score == nil || *ds.Score != 80 || ds.Language == nil || *ds.Language != "pt" {
		t.Fatalf("dataset: %d %s", res.Status, res.Body)
	}
	if res := env.Do(t, http.MethodGet, "/api/v1/reports/"+ds.ID+"/export.pptx", admin, nil); res.Status != http.StatusConflict {
		t.Fatalf("dataset deck: %d %s", res.Status, res.Body)
	}

	// Writes: API tokens are read-only here; bad bodies are 422 naming the field only.
	if res, _ := create(token, map[string]any{"type": "workspace_overview", "persona": "executive"}); res.Status != http.StatusForbidden {
		t.Fatalf("token create: %d %s", res.Status, res.Body)
	}
	hostile := "<script>x</script>"
	for _, body := range []map[string]any{{"type": hostile, "persona": "executive"}, {"type": "workspace_overview", "persona": hostile},
		{"type": "workspace_overview", "persona": "executive", "language": hostile}, {"type": "domain", "persona": "executive"},
		{"type": "workspace_overview", "persona": "executive", "subject_id": open}, {"type": "workspace_overview", "persona": "executive", "extra": 1}} {
		res, _ := create(member, body)
		if res.Status != http.StatusUnprocessableEntity || bytes.Contains(res.Body, []byte("script")) {
			t.Fatalf("%v: %d %s", body, res.Status, res.Body)
		}
	}
	if res := env.Do(t, http.MethodGet, "/api/v1/reports/not-an-id", token, nil); res.Status != http.StatusNotFound {
		t.Fatalf("bad id: %d", res.Status)
	}
}
