package app_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/internal/browsertest"
)

// requestLog keeps every URL the browser asked for.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

func (l *requestLog) listen(ctx context.Context) {
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			l.mu.Lock()
			l.urls = append(l.urls, e.Request.URL)
			l.mu.Unlock()
		}
	})
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.urls...)
}

// waitForFile waits for a download to land and returns its bytes.
func waitForFile(t *testing.T, path string) []byte {
	t.Helper()
	for range 100 {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return b
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no download at %s", path)
	return nil
}

// poll waits until the JavaScript expression is truthy and stores its value in out.
func poll(b *browsertest.Browser, what, expr string, out any) {
	b.Run(what, chromedp.Poll(expr, out, chromedp.WithPollingTimeout(0)))
}

// screenshot saves the viewport under VIGIA_SCREENSHOT_DIR (docs/img when refreshing
// the README's pictures), else in the test's temporary directory.
func screenshot(t *testing.T, b *browsertest.Browser, name string) {
	t.Helper()
	dir := os.Getenv("VIGIA_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	b.Screenshot(filepath.Join(dir, name))
}

// The must-show items, in Chromium against a running Vigia with the shop
// source scanned: sign in, search, dataset page, lineage with parsed edges and their
// column map, another workspace's id as not found, a restricted neighbour locked
// without its name, and no request to any host but the server's.
func TestWebAppInChromium(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key"})
	le := newLineageEnv(t, env, shopDDL)
	le.fillShop(t)
	le.scan(t)
	le.scan(t) // a second scan: the trend has two points
	orders, enriched, customers := le.ids["orders"], le.ids["orders_enriched"], le.ids["customers"]

	if r := env.Do(t, "POST", "/api/v1/lineage/exposures", le.admin, map[string]any{"name": "Painel de vendas", "type": "dashboard",
		"dataset_ids": []string{enriched}}); r.Status != 201 {
		t.Fatalf("exposure: %d %s", r.Status, r.Body)
	}

	other := env.MustWorkspace(t, "webapp-other")
	random := vigia.NewID()
	foreign := env.MustDataset(t, other, env.MustConnection(t, other, "pg"), "public", "orders_enriched")

	srvURL, err := url.Parse(env.Server.URL)
	if err != nil {
		t.Fatal(err)
	}
	// Every host but the loopback server is unresolvable: the app must need nothing else.
	b := browsertest.New(t, chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	var reqs requestLog
	reqs.listen(b.Context())
	b.Run("enable network events", network.Enable())

	// The browser logs the refused token's 401 answers as failed loads: expected, and
	// only those, before the first good sign-in.
	var refused int
	t.Run("WrongTokenAsksToSignInAgain", func(t *testing.T) {
		b.Navigate(env.Server.URL + "/ui/#token=svc_" + strings.Repeat("0", 48))
		b.WaitVisible("form.signin")
		if got := b.Text("#main .error"); !strings.Contains(got, "token") {
			t.Fatalf("error shown: %q", got)
		}
		var stored *string
		b.Eval(`sessionStorage.getItem("vigia.token")`, &stored)
		if stored != nil {
			t.Fatal("a refused token stays stored")
		}
		for _, p := range b.Problems() {
			if !strings.Contains(p, "status of 401") {
				t.Fatalf("browser problem: %s", p)
			}
		}
		refused = len(b.Problems())
		// The form takes a token too.
		b.Run("type the token", chromedp.SetValue("#token", le.tok, chromedp.ByQuery))
		b.Click("form.signin button")
		b.WaitVisible("#q")
	})

	t.Run("SignInWithFragmentToken", func(t *testing.T) {
		b.Navigate(env.Server.URL + "/ui/#token=" + le.tok)
		b.WaitVisible("#q")
		var href, stored string
		b.Eval(`location.href`, &href)
		b.Eval(`sessionStorage.getItem("vigia.token")`, &stored)
		if strings.Contains(href, le.tok) || stored != le.tok {
			t.Fatalf("token: href %s, stored %t", href, stored == le.tok)
		}
	})

	t.Run("SearchFindsTheDataset", func(t *testing.T) {
		b.Run("type the search", chromedp.SetValue("#q", "order", chromedp.ByQuery))
		// The page before the search shows every dataset until the search's page replaces
		// it: mark its results so that only the new page's are read.
		var marked bool
		b.Eval(`(() => { const r = document.querySelector("#results"); if (r) r.dataset.stale = "1"; return true })()`, &marked)
		b.Click("#search-go")
		var names []string
		poll(b, "results", `(() => { if (!document.querySelector("#results:not([data-stale])")) return false;
			const a = [...document.querySelectorAll("#results a.ds-link")].map(x => x.textContent);
			return a.length > 0 && document.querySelector("#results .badge") ? a : false })()`, &names)
		sort.Strings(names)
		want := []string{"public.customer_orders", "public.order_status", "public.orders", "public.orders_enriched"}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Fatalf("results: %v", names)
		}
		screenshot(t, b, "ui-search.png")
	})

	t.Run("SearchPagesThroughManyDatasets", func(t *testing.T) {
		for i := range 53 {
			env.MustDataset(t, le.ws, le.connID, "arquivo", fmt.Sprintf("pagina_%02d", i))
		}
		count := func() int {
			var n int
			poll(b, "results", `(() => { const n = document.querySelectorAll("#results a.ds-link").length; return n > 0 ? n : false })()`, &n)
			return n
		}
		b.Navigate(env.Server.URL + "/ui/#/?q=pagina_")
		if n := count(); n != 50 || b.Text(".pager") == "" {
			t.Fatalf("first page: %d rows", n)
		}
		b.Click("#page-next")
		poll(b, "second page", `document.getElementById("page-prev") !== null && document.querySelectorAll("#results a.ds-link").length === 3`, nil)
		b.Click("#page-prev")
		poll(b, "back to the first page", `document.getElementById("page-prev") === null && document.querySelectorAll("#results a.ds-link").length === 50`, nil)
	})

	var domainID string
	t.Run("SearchFiltersByDomainAndVerdict", func(t *testing.T) {
		r := env.Do(t, "POST", "/api/v1/domains", le.admin, map[string]any{"name": "Loja", "dataset_ids": []string{orders, le.ids["revenue_daily"]}})
		if r.Status != 201 {
			t.Fatalf("domain: %d %s", r.Status, r.Body)
		}
		var d struct {
			ID string `json:"id"`
		}
		r.JSON(t, &d)
		domainID = d.ID
		results := func(hash string) []string {
			b.Navigate(env.Server.URL + "/ui/#/" + hash)
			var names []string
			poll(b, "results of "+hash, `(() => { if (document.getElementById("no-results")) return [];
				const a = [...document.querySelectorAll("#results a.ds-link")].map(x => x.textContent);
				return a.length > 0 ? a : false })()`, &names)
			sort.Strings(names)
			return names
		}
		if got := results("?q=order&domain=" + domainID); strings.Join(got, ",") != "public.orders" {
			t.Fatalf("domain filter: %v", got)
		}
		// The verdict filter keeps exactly the datasets whose verdict the API gives as warn.
		var want []string
		for _, name := range []string{"orders", "orders_enriched", "order_status", "customer_orders"} {
			var v struct {
				Verdict string `json:"verdict"`
			}
			le.get(t, "/api/v1/datasets/"+le.ids[name]+"/verdict", le.tok, &v)
			if v.Verdict == "warn" {
				want = append(want, "public."+name)
			}
		}
		sort.Strings(want)
		if len(want) == 0 {
			t.Fatal("no dataset with verdict warn to filter on")
		}
		if got := results("?q=order&verdict=warn"); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("verdict filter: %v, want %v", got, want)
		}
	})

	t.Run("DomainPageShowsSLAReadinessVersions", func(t *testing.T) {
		b.Navigate(env.Server.URL + "/ui/#/domains/" + domainID)
		var members []string
		poll(b, "domain members", `(() => { const a = [...document.querySelectorAll("#domain-members a")].map(x => x.textContent);
			return a.length === 2 ? a : false })()`, &members)
		sort.Strings(members)
		var readiness int
		b.Eval(`document.querySelectorAll("#readiness tr").length`, &readiness)
		if strings.Join(members, ",") != "public.orders,public.revenue_daily" || readiness != 4 || b.Text("#versions p") != "Nunca publicado." {
			t.Fatalf("members %v, readiness rows %d, versions %q", members, readiness, b.Text("#versions"))
		}
		// Published, the domain's page lists the version the API made.
		if r := env.Do(t, "POST", "/api/v1/domains/"+domainID+"/publish", le.admin, nil); r.Status != 200 {
			t.Fatalf("publish: %d %s", r.Status, r.Body)
		}
		var versions []struct {
			Version string `json:"version"`
		}
		le.get(t, "/api/v1/domains/"+domainID+"/versions", le.tok, &versions)
		if len(versions) != 1 {
			t.Fatalf("versions: %+v", versions)
		}
		b.Navigate(env.Server.URL + "/ui/#/domains")
		b.Navigate(env.Server.URL + "/ui/#/domains/" + domainID)
		var shown string
		poll(b, "version history", `(() => { const v = document.querySelector("#versions li strong"); return v ? v.textContent : false })()`, &shown)
		if shown != "v"+versions[0].Version {
			t.Fatalf("version shown %q, API %q", shown, versions[0].Version)
		}
	})

	t.Run("SearchOpensTheDatasetPage", func(t *testing.T) {
		b.Navigate(env.Server.URL + "/ui/#/?q=order")
		b.Click(`#results tr[data-id="` + enriched + `"] a.ds-link`)
		b.WaitVisible("#ds-name")
	})

	t.Run("DatasetPageShowsScoreDimensionsTrustColumns", func(t *testing.T) {
		poll(b, "trust decisions", `document.querySelectorAll("#trust tr[data-purpose]").length === 4`, nil)
		if got := b.Text("#ds-name"); got != "public.orders_enriched" {
			t.Fatalf("name: %q", got)
		}
		var dims, cols, dots int
		b.Eval(`document.querySelectorAll("#dimensions .dim").length`, &dims)
		b.Eval(`document.querySelectorAll("#columns tbody tr").length`, &cols)
		b.Eval(`document.querySelectorAll("#trend circle").length`, &dots)
		if dims != 5 || cols != 5 || dots != 2 {
			t.Fatalf("dimensions %d, columns %d, trend points %d", dims, cols, dots)
		}
		screenshot(t, b, "ui-dataset.png")

		// First paint measured from a fresh load of the page (no timed assertion): from
		// another document, so that this is a real navigation and not a hash change;
		// once with the browser's cache (a returning user) and once without.
		for _, cold := range []bool{false, true} {
			b.Run("cache", network.SetCacheDisabled(cold))
			b.Navigate("about:blank")
			b.Navigate(env.Server.URL + "/ui/#/datasets/" + enriched)
			var paint float64
			poll(b, "first paint mark", `(() => { const m = performance.getEntriesByName("vigia:dataset-painted");
				return m.length > 0 ? m[0].startTime : false })()`, &paint)
			var steps string
			b.Eval(`performance.getEntriesByType("resource").map(e => e.name.replace(location.origin, "").split("?")[0].slice(0, 40) + " " +
				e.startTime.toFixed(0) + "-" + e.responseEnd.toFixed(0)).join("; ") + "; DOMContentLoaded " +
				performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd.toFixed(0)`, &steps)
			t.Logf("dataset page first paint (cache disabled: %t): %.0f ms after navigation start (%s)", cold, paint, steps)
		}
		b.Run("cache", network.SetCacheDisabled(false))
	})

	t.Run("LineageShowsTwoParsedEdgesAndTheColumnMap", func(t *testing.T) {
		b.Click("#open-lineage")
		poll(b, "graph laid out", `document.querySelector("#lineage-graph[data-nodes]") !== null`, nil)
		var edges []struct {
			Source, Target, Kind, Color string
			X, Y                        float64
		}
		b.Eval(`(() => { const cy = document.getElementById("lineage-graph")._cyreg.cy;
			const box = document.getElementById("lineage-graph").getBoundingClientRect();
			return cy.edges().filter(e => e.data("kind") === "parsed" && e.target().data("ref") === "`+enriched+`").map(e => ({
				Source: e.source().data("ref"), Target: e.target().data("ref"), Kind: e.data("kind"),
				Color: e.style("line-color"), X: box.left + e.renderedMidpoint().x, Y: box.top + e.renderedMidpoint().y })) })()`, &edges)
		sort.Slice(edges, func(i, j int) bool { return edges[i].Source < edges[j].Source })
		var sources []string
		for _, e := range edges {
			if e.Kind != "parsed" || e.Color != "rgb(31,95,191)" {
				t.Fatalf("edge %+v is not drawn as parsed", e)
			}
			sources = append(sources, e.Source)
		}
		want := []string{customers, orders}
		sort.Strings(want)
		if strings.Join(sources, ",") != strings.Join(want, ",") {
			t.Fatalf("edges into orders_enriched come from %v, want %v", sources, want)
		}

		// Click the edge from orders: the panel lists the column map the API returns.
		var tr traverseOut
		le.get(t, "/api/v1/datasets/"+enriched+"/lineage/traverse?hops=2&direction=both", le.tok, &tr)
		apiMap := hasEdge(tr.Edges, orders, enriched, "parsed")
		if apiMap == nil || len(apiMap.ColumnMap) == 0 {
			t.Fatalf("API edge: %+v", tr.Edges)
		}
		var e0 = edges[0]
		if edges[1].Source == orders {
			e0 = edges[1]
		}
		b.Run("click the edge", chromedp.MouseClickXY(e0.X, e0.Y))
		var rows [][]string
		poll(b, "column map", `(() => { const r = [...document.querySelectorAll("#column-map tbody tr")];
			return r.length > 0 ? r.map(tr => [...tr.children].map(td => td.textContent)) : false })()`, &rows)
		var got, wantMap []string
		for _, r := range rows {
			got = append(got, r[0]+">"+r[1])
		}
		for _, p := range apiMap.ColumnMap {
			wantMap = append(wantMap, p.From+">"+p.To)
		}
		sort.Strings(got)
		sort.Strings(wantMap)
		if strings.Join(got, ",") != strings.Join(wantMap, ",") {
			t.Fatalf("column map shown %v, API %v", got, wantMap)
		}
		screenshot(t, b, "ui-lineage.png")

		// A click on a column highlights where its values go, as the API's impact says.
		var imp struct {
			Datasets []struct {
				Name   *string `json:"name"`
				Impact string  `json:"impact"`
			} `json:"datasets"`
		}
		le.get(t, "/api/v1/datasets/"+enriched+"/lineage/impact?column=amount", le.tok, &imp)
		var wantFlow []string
		for _, d := range imp.Datasets {
			if d.Impact == "column" && d.Name != nil {
				wantFlow = append(wantFlow, *d.Name)
			}
		}
		b.Click(`#column-pick button[data-column="amount"]`)
		var flow []string
		poll(b, "column flow", `(() => { const l = [...document.querySelectorAll("#column-flow li")].map(x => x.textContent.split(":")[0]);
			return l.length > 0 ? l : false })()`, &flow)
		sort.Strings(flow)
		sort.Strings(wantFlow)
		if len(wantFlow) == 0 || strings.Join(flow, ",") != strings.Join(wantFlow, ",") {
			t.Fatalf("column flow %v, API %v", flow, wantFlow)
		}
		// Upstream, amount is made from orders.amount (the edge's column map above).
		var upstream []string
		b.Eval(`[...document.querySelectorAll("#column-upstream li")].map(x => x.textContent)`, &upstream)
		if strings.Join(upstream, ";") != "public.orders: amount" {
			t.Fatalf("upstream of amount: %v", upstream)
		}
		// The exposure reading orders_enriched is a diamond linked to it.
		var exposure struct{ Shape, Label, From string }
		b.Eval(`(() => { const n = document.getElementById("lineage-graph")._cyreg.cy.nodes(".exposure").first();
			return {Shape: n.style("shape"), Label: n.data("label"), From: n.incomers("node").map(x => x.data("ref")).join(",")} })()`, &exposure)
		if exposure.Shape != "diamond" || exposure.Label != "Painel de vendas (dashboard)" || exposure.From != enriched {
			t.Fatalf("exposure node: %+v", exposure)
		}

		// Both exports download a file: a PNG that decodes, and an SVG document that
		// parses and names every dataset drawn.
		dl := t.TempDir()
		b.Run("allow downloads", browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dl))
		b.Click("#export-png")
		pngFile := waitForFile(t, filepath.Join(dl, "public.orders_enriched-lineage.png"))
		if _, err := png.Decode(bytes.NewReader(pngFile)); err != nil {
			t.Fatalf("exported PNG: %v", err)
		}
		b.Click("#export-svg")
		svgFile := waitForFile(t, filepath.Join(dl, "public.orders_enriched-lineage.svg"))
		var doc struct {
			Texts []string `xml:"text"`
		}
		if err := xml.Unmarshal(svgFile, &doc); err != nil {
			t.Fatalf("exported SVG: %v", err)
		}
		for _, name := range []string{"public.orders", "public.customers", "public.orders_enriched", "Painel de vendas (dashboard)"} {
			if !slices.Contains(doc.Texts, name) {
				t.Fatalf("SVG texts %v lack %s", doc.Texts, name)
			}
		}
		screenshot(t, b, "ui-lineage-column.png")
	})

	t.Run("AnotherWorkspacesDatasetIsNotFound", func(t *testing.T) {
		text := func(id string) string {
			b.Navigate(env.Server.URL + "/ui/#/datasets/" + id)
			b.WaitVisible("#not-found")
			return b.Text("#main")
		}
		foreignText, randomText := text(foreign), text(random)
		if foreignText != randomText || foreignText == "" {
			t.Fatalf("foreign %q, random %q", foreignText, randomText)
		}
	})

	t.Run("LanguageSwitchUsesTheCatalogue", func(t *testing.T) {
		// In order, back to pt-PT: the later subtests read Portuguese labels.
		for _, c := range [][2]string{{"en", "Search"}, {"es", "Búsqueda"}, {"pt-PT", "Pesquisa"}} {
			// One script picks the language and fires the change: the header is
			// drawn again right after, so no node may be held across two steps.
			b.Eval(`(() => { const s = document.getElementById("lang"); s.value = "`+c[0]+`";
				s.dispatchEvent(new Event("change")); return true })()`, nil)
			poll(b, "nav in "+c[0], `(() => { const a = document.querySelector("header nav a");
				return a && a.textContent === "`+c[1]+`" && document.documentElement.lang === "`+c[0]+`" })()`, nil)
		}
	})

	t.Run("IncidentsAndDomainsPagesLoad", func(t *testing.T) {
		b.Navigate(env.Server.URL + "/ui/#/incidents")
		poll(b, "incidents board", `document.querySelector("#main h1") !== null`, nil)
		b.Navigate(env.Server.URL + "/ui/#/domains")
		poll(b, "domains", `document.querySelector("#main h1") !== null`, nil)
	})

	t.Run("IncidentPageDrawsItsImpactTree", func(t *testing.T) {
		le.src.exec(t, `UPDATE orders SET amount = NULL WHERE id % 2 = 0`)
		le.scan(t)
		b.Navigate(env.Server.URL + "/ui/#/incidents")
		poll(b, "incident card", `document.querySelector("#board-open a.board-card") !== null`, nil)
		b.Click("#board-open a.board-card")
		poll(b, "impact graph", `document.querySelector("#impact-graph[data-nodes]") !== null`, nil)
		var classes map[string]string
		b.Eval(`(() => { const o = {}; document.getElementById("impact-graph")._cyreg.cy.nodes().forEach(n => {
			o[n.id().slice(2)] = n.hasClass("certain") ? "certain" : n.hasClass("possible") ? "possible" : n.hasClass("focus") ? "root" : "" }); return o })()`, &classes)
		want := map[string]string{orders: "root", enriched: "certain", le.ids["revenue_daily"]: "certain",
			le.ids["order_status"]: "possible", le.ids["customer_orders"]: "possible"}
		for ref, c := range want {
			if classes[ref] != c {
				t.Fatalf("impact tree styles %v, want %v", classes, want)
			}
		}
		screenshot(t, b, "ui-incident.png")
	})

	t.Run("RestrictedNeighbourIsLockedWithoutName", func(t *testing.T) {
		ctx := context.Background()
		domain := vigia.NewID()
		if _, err := env.DB.Pool().Exec(ctx, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'Vendas', true)`, domain, le.ws); err != nil {
			t.Fatal(err)
		}
		if _, err := env.DB.Pool().Exec(ctx, `INSERT INTO domain_datasets VALUES ($1, $2)`, domain, enriched); err != nil {
			t.Fatal(err)
		}
		member := env.MustSession(t, le.ws, vigia.RoleMember)
		b.Navigate(env.Server.URL + "/ui/#token=" + member)
		b.WaitVisible("#q")
		b.Navigate(env.Server.URL + "/ui/#/datasets/" + orders + "/lineage?hops=2&direction=downstream")
		poll(b, "graph laid out", `document.querySelector("#lineage-graph[data-nodes]") !== null`, nil)
		var locked []struct{ Label, Ref, Icon string }
		b.Eval(`document.getElementById("lineage-graph")._cyreg.cy.nodes(".restricted").map(n =>
			({Label: n.data("label"), Ref: n.data("ref"), Icon: n.style("background-image")}))`, &locked)
		if len(locked) == 0 {
			t.Fatal("no locked node")
		}
		for _, n := range locked {
			if n.Label != "restrito" || !strings.HasPrefix(n.Icon, "data:image/svg+xml") || n.Ref == enriched {
				t.Fatalf("locked node %+v", n)
			}
		}
		var all string
		b.Eval(`JSON.stringify(document.getElementById("lineage-graph")._cyreg.cy.json().elements) + document.body.innerText`, &all)
		if strings.Contains(all, "orders_enriched") || strings.Contains(all, enriched) {
			t.Fatal("the restricted dataset is named on the page")
		}
		screenshot(t, b, "ui-lineage-restricted.png")
	})

	t.Run("NoRequestLeavesTheServer", func(t *testing.T) {
		urls := reqs.all()
		if len(urls) == 0 {
			t.Fatal("no request recorded")
		}
		for _, u := range urls {
			p, err := url.Parse(u)
			if err != nil || (p.Scheme != "data" && p.Host != srvURL.Host) {
				t.Fatalf("request to another origin: %s", u)
			}
			if strings.Contains(u, le.tok) {
				t.Fatal("a token in a URL")
			}
		}
		// The not-found pages' 404 answers are logged by the browser as failed loads:
		// those two are expected, nothing else is.
		for _, p := range b.Problems()[refused:] {
			if strings.Contains(p, "status of 404") && (strings.Contains(p, "/api/v1/datasets/"+foreign) || strings.Contains(p, "/api/v1/datasets/"+random)) {
				continue
			}
			t.Fatalf("browser problem: %s", p)
		}
		if strings.Contains(env.Logs.String(), le.tok) {
			t.Fatal("token reached the log")
		}
	})
}

// The first item on the demo itself: the e-commerce pack seeded as `make demo`
// does, signed in with the demo's token, a dataset searched and opened, its lineage
// drawn (clientes_ativos is a view over clientes and encomendas: two parsed edges).
func TestWebAppOnTheDemoInChromium(t *testing.T) {
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root})
	res, err := env.App.SeedDemo(context.Background(), app.DemoOptions{Workspace: "demo-ui-" + vigia.NewUUID()[:8],
		Packs: []string{"ecommerce"}, Dir: filepath.Join(root, "demo")})
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ ID, Name, Table string }
	r := env.Do(t, "GET", "/api/v1/datasets?q=clientes_ativos", res.Token, nil)
	r.JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("clientes_ativos: %s", r.Body)
	}
	view := list[0]
	var tr traverseOut
	r = env.Do(t, "GET", "/api/v1/datasets/"+view.ID+"/lineage/traverse?hops=2&direction=both", res.Token, nil)
	r.JSON(t, &tr)
	var parsedFrom []string
	for _, e := range tr.Edges {
		if e.Kind == "parsed" && e.Target == view.ID {
			parsedFrom = append(parsedFrom, e.Source)
		}
	}
	sort.Strings(parsedFrom)
	if len(parsedFrom) != 2 {
		t.Fatalf("parsed edges into clientes_ativos: %+v", tr.Edges)
	}

	b := browsertest.New(t, chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	b.Navigate(env.Server.URL + "/ui/#token=" + res.Token)
	b.WaitVisible("#q")
	b.Run("type the search", chromedp.SetValue("#q", "clientes", chromedp.ByQuery))
	b.Click("#search-go")
	poll(b, "results", `document.querySelector('#results tr[data-id="`+view.ID+`"] .badge') !== null`, nil)
	screenshot(t, b, "ui-demo-search.png")
	b.Click(`#results tr[data-id="` + view.ID + `"] a.ds-link`)
	poll(b, "trust decisions", `document.querySelectorAll("#trust tr[data-purpose]").length === 4`, nil)
	if got := b.Text("#ds-name"); got != view.Name {
		t.Fatalf("dataset page of %q shows %q", view.Name, got)
	}
	screenshot(t, b, "ui-demo-dataset.png")
	b.Click("#open-lineage")
	poll(b, "graph laid out", `document.querySelector("#lineage-graph[data-nodes]") !== null`, nil)
	var drawn []string
	b.Eval(`document.getElementById("lineage-graph")._cyreg.cy.edges('[kind = "parsed"]')
		.filter(e => e.target().data("ref") === "`+view.ID+`" && e.style("line-color") === "rgb(31,95,191)")
		.map(e => e.source().data("ref")).sort()`, &drawn)
	if strings.Join(drawn, ",") != strings.Join(parsedFrom, ",") {
		t.Fatalf("parsed edges drawn from %v, API %v", drawn, parsedFrom)
	}
	// Click the first of them and read its column map.
	b.Eval(`document.getElementById("lineage-graph")._cyreg.cy.edges('[kind = "parsed"]')
		.filter(e => e.target().data("ref") === "`+view.ID+`")[0].emit("tap") && true`, nil)
	b.WaitVisible("#panel h3")
	screenshot(t, b, "ui-demo-lineage.png")
	if p := b.Problems(); len(p) > 0 {
		t.Fatalf("browser problems: %v", p)
	}
}
