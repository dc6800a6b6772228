package app_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/finops"
	"github.com/vigia-data/vigia/scan"
)

type chargebackRow struct {
	Month        string   `json:"month"`
	Dimension    string   `json:"dimension"`
	WorkspaceID  string   `json:"workspace_id"`
	EntityID     *string  `json:"entity_id"`
	EntityName   *string  `json:"entity_name"`
	Scans        float64  `json:"scans"`
	Datasets     float64  `json:"datasets"`
	Reports      float64  `json:"reports"`
	ProfileBytes float64  `json:"profile_bytes"`
	LLMTokens    *int64   `json:"llm_tokens"`
	LLMCostEUR   *float64 `json:"llm_cost_eur"`
	LLMCost      struct {
		Amount   *float64 `json:"amount"`
		Currency string   `json:"currency"`
	} `json:"llm_cost"`
	FX *struct {
		Currency string  `json:"currency"`
		Rate     float64 `json:"rate"`
		RateDate string  `json:"rate_date"`
	} `json:"fx"`
	Currency string `json:"currency"`
}

// Must-show 2: chargeback over real scans of a Postgres source. A dataset in two domains
// counts half in each; the figures match a hand computation, and profile_bytes matches
// what the source itself says its values weigh (pg_column_size of the fixed-width
// columns, char_length of the ASCII text ones).
func TestChargebackSharesDatasetsAndMatchesHandComputation(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "chargeback")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	ctx := app.AsAdmin(context.Background(), ws, "test")

	src := newSource(t, "postgres", "")
	src.exec(t, `CREATE TABLE vendas (id integer PRIMARY KEY, total bigint, pago boolean NOT NULL, criado_em timestamptz NOT NULL, nota text)`)
	src.exec(t, `INSERT INTO vendas SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE g * 100 END, g % 2 = 0, now() - g * interval '1 hour',
		CASE WHEN g % 3 = 0 THEN NULL ELSE repeat('x', g % 11) || 'venda' END FROM generate_series(1, 240) g`)
	src.exec(t, `CREATE TABLE clientes (id integer PRIMARY KEY, nome text NOT NULL, nascido date)`)
	src.exec(t, `INSERT INTO clientes SELECT g, 'cliente ' || g, CASE WHEN g % 5 = 0 THEN NULL ELSE date '1980-01-01' + g END FROM generate_series(1, 90) g`)
	src.exec(t, `CREATE TABLE registos (id bigint PRIMARY KEY, linha text NOT NULL)`)
	src.exec(t, `INSERT INTO registos SELECT g, md5(g::text) FROM generate_series(1, 55) g`)
	// The source's own answer: the bytes of each table's values.
	weigh := map[string]string{
		"vendas": `SELECT coalesce(sum(pg_column_size(id)), 0) + coalesce(sum(pg_column_size(total)), 0) + coalesce(sum(pg_column_size(pago)), 0)
			+ coalesce(sum(pg_column_size(criado_em)), 0) + coalesce(sum(char_length(nota)), 0) FROM vendas`,
		"clientes": `SELECT coalesce(sum(pg_column_size(id)), 0) + coalesce(sum(char_length(nome)), 0) + coalesce(sum(pg_column_size(nascido)), 0) FROM clientes`,
		"registos": `SELECT coalesce(sum(pg_column_size(id)), 0) + coalesce(sum(char_length(linha)), 0) FROM registos`,
	}
	bytesOf := map[string]float64{}
	for table, q := range weigh {
		bytesOf[table] = float64(src.int(t, q))
	}

	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "erp", "kind": "postgres", "dsn": src.dsn})
	mustStatus(t, r, http.StatusCreated)
	var conn map[string]any
	r.JSON(t, &conn)
	MustRunWorkers(t, env)
	scanNow := func() {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/scans", admin, map[string]any{"connection_id": conn["id"]})
		mustStatus(t, r, http.StatusAccepted)
		var out map[string]any
		r.JSON(t, &out)
		sc, err := env.App.WaitScan(ctx, out["id"].(string), nil)
		if err != nil || sc.Status != scan.StatusSucceeded {
			t.Fatalf("scan: %v %+v", err, sc)
		}
	}
	scanNow()
	ids := map[string]string{}
	for _, table := range []string{"vendas", "clientes", "registos"} {
		var id string
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT id::text FROM datasets WHERE workspace_id = $1 AND table_name = $2`, ws, table).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[table] = id
	}
	mkDomain := func(name string, members ...string) string {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": name, "dataset_ids": members})
		mustStatus(t, r, http.StatusCreated)
		var d map[string]any
		r.JSON(t, &d)
		return d["id"].(string)
	}
	vendasDom := mkDomain("Vendas", ids["vendas"])
	clientesDom := mkDomain("Clientes", ids["vendas"], ids["clientes"])
	scanNow()
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/reports", admin, map[string]any{"type": "workspace_overview", "persona": "executive"}), http.StatusCreated)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/reports", admin, map[string]any{"type": "domain", "persona": "steward", "subject_id": clientesDom}), http.StatusCreated)
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/reports", admin, map[string]any{"type": "dataset", "persona": "engineering", "subject_id": ids["vendas"]}), http.StatusCreated)

	// Another workspace's work is never counted, nor its domain reachable.
	other := env.MustWorkspace(t, "chargeback-other")
	otherDS := env.MustDataset(t, other, env.MustConnection(t, other, "pg"), "public", "alheia")
	otherAdmin := env.MustSession(t, other, vigia.RoleAdmin)
	r = env.Do(t, http.MethodPost, "/api/v1/domains", otherAdmin, map[string]any{"name": "Alheio", "dataset_ids": []string{otherDS}})
	mustStatus(t, r, http.StatusCreated)
	var otherDom map[string]any
	r.JSON(t, &otherDom)

	token := env.MustToken(t, ws)
	r = env.Do(t, http.MethodGet, "/api/v1/bi/chargeback", token, nil)
	mustStatus(t, r, http.StatusOK)
	var rows []chargebackRow
	r.JSON(t, &rows)
	if r.Header.Get("X-Total-Count") != fmt.Sprint(len(rows)) {
		t.Fatalf("X-Total-Count %q for %d rows", r.Header.Get("X-Total-Count"), len(rows))
	}
	// Months are the workspace's (its default time zone, Europe/Lisbon).
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	local := time.Now().In(lisbon)
	month := local.Format("2006-01")
	byEntity := map[string]chargebackRow{}
	for _, x := range rows {
		if x.Month != month || x.WorkspaceID != ws {
			t.Fatalf("row of another month or workspace: %s", r.Body)
		}
		k := x.Dimension + ":"
		if x.EntityID != nil {
			k += *x.EntityID
		}
		byEntity[k] = x
		if x.LLMTokens == nil || *x.LLMTokens != 0 || x.LLMCostEUR == nil || *x.LLMCostEUR != 0 || x.Currency != "EUR" ||
			x.LLMCost.Currency != "EUR" || x.LLMCost.Amount == nil || *x.LLMCost.Amount != 0 || x.FX != nil {
			t.Fatalf("llm figures and money: %s", r.Body)
		}
	}
	if len(rows) != 4 {
		t.Fatalf("want workspace, Vendas, Clientes and no-domain rows: %s", r.Body)
	}
	v, c, g := bytesOf["vendas"], bytesOf["clientes"], bytesOf["registos"]
	// By hand: two scans of three datasets; vendas is in Vendas and Clientes, clientes in
	// Clientes, from the second scan on: the first scan counts in no domain (memberships
	// are those of the time of the cost), and each of vendas' and clientes' two profiles
	// of the month carries half of the dataset.
	want := map[string][4]float64{ // scans, datasets, reports, bytes
		"workspace:" + ws:       {6, 3, 3, 2 * (v + c + g)},
		"domain:" + vendasDom:   {0.5, 0.5 * 0.5, 0.5, v / 2},
		"domain:" + clientesDom: {0.5 + 1, 0.5*0.5 + 0.5, 1 + 0.5, v/2 + c},
		"domain:":               {1 + 1 + 2, 0.5 + 0.5 + 1, 1, v + c + 2*g},
	}
	for k, w := range want {
		x, ok := byEntity[k]
		if !ok {
			t.Fatalf("no row %s: %s", k, r.Body)
		}
		got := [4]float64{x.Scans, x.Datasets, x.Reports, x.ProfileBytes}
		for i := range got {
			if math.Abs(got[i]-w[i]) > 1 { // profile bytes: mean lengths × counts, rounded per profile
				t.Errorf("%s figure %d: %v, want %v (%s)", k, i, got[i], w[i], r.Body)
			}
		}
	}
	if wr := byEntity["workspace:"+ws]; wr.EntityName == nil || !strings.HasPrefix(*wr.EntityName, "chargeback") {
		t.Fatalf("workspace row names it: %s", r.Body)
	}

	// GraphQL answers the same rows.
	gq := env.Do(t, http.MethodPost, "/graphql", token, map[string]any{"query": `{ chargeback { total items { dimension entityId scans datasets reports profileBytes } } }`})
	mustStatus(t, gq, http.StatusOK)
	var gout struct {
		Data struct {
			Chargeback struct {
				Total int `json:"total"`
				Items []struct {
					Dimension    string  `json:"dimension"`
					EntityID     *string `json:"entityId"`
					Scans        float64 `json:"scans"`
					ProfileBytes float64 `json:"profileBytes"`
				} `json:"items"`
			} `json:"chargeback"`
		} `json:"data"`
	}
	gq.JSON(t, &gout)
	if cb := gout.Data.Chargeback; cb.Total != 4 || len(cb.Items) != 4 || cb.Items[0].Dimension != "workspace" || cb.Items[0].Scans != 6 ||
		cb.Items[0].ProfileBytes != byEntity["workspace:"+ws].ProfileBytes {
		t.Fatalf("graphql chargeback: %s", gq.Body)
	}

	// The monthly routine's snapshot of this month has the same rows.
	snap, err := env.App.Finops.MonthSnapshot(context.Background(), ws, time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, lisbon))
	if err != nil {
		t.Fatal(err)
	}
	if sn := snap.(finops.Snapshot); sn.Month != month || len(sn.Rows) != 4 || sn.Rows[0].Scans != 6 || sn.Rows[0].Dimension != "workspace" {
		t.Fatalf("snapshot: %+v", snap)
	}

	// One domain's rows; an unknown or foreign domain is 404; bad days is 422.
	r = env.Do(t, http.MethodGet, "/api/v1/bi/chargeback?domain_id="+vendasDom, token, nil)
	mustStatus(t, r, http.StatusOK)
	rows = nil
	r.JSON(t, &rows)
	if len(rows) != 1 || rows[0].EntityID == nil || *rows[0].EntityID != vendasDom {
		t.Fatalf("domain filter: %s", r.Body)
	}
	unknown := env.Do(t, http.MethodGet, "/api/v1/bi/chargeback?domain_id="+vigia.NewID(), token, nil)
	foreign := env.Do(t, http.MethodGet, "/api/v1/bi/chargeback?domain_id="+otherDom["id"].(string), token, nil)
	mustStatus(t, unknown, http.StatusNotFound)
	mustStatus(t, foreign, http.StatusNotFound)
	if strings.Replace(string(foreign.Body), foreign.Header.Get("X-Request-ID"), "", 1) !=
		strings.Replace(string(unknown.Body), unknown.Header.Get("X-Request-ID"), "", 1) {
		t.Fatalf("foreign 404 differs from unknown: %s / %s", foreign.Body, unknown.Body)
	}
	mustStatus(t, env.Do(t, http.MethodGet, "/api/v1/bi/chargeback?days=0", token, nil), http.StatusUnprocessableEntity)

	// The other workspace sees only its own (empty) activity.
	r = env.Do(t, http.MethodGet, "/api/v1/bi/chargeback", otherAdmin, nil)
	mustStatus(t, r, http.StatusOK)
	if strings.Contains(string(r.Body), ws) {
		t.Fatalf("foreign workspace rows: %s", r.Body)
	}

	// Currency: USD without a loaded rate leaves the amount null; with one, the rate and
	// its date are given.
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/currency", admin, map[string]any{"currency": "USD"}), http.StatusOK)
	r = env.Do(t, http.MethodGet, "/api/v1/bi/chargeback?domain_id="+vendasDom, token, nil)
	rows = nil
	r.JSON(t, &rows)
	if rows[0].Currency != "USD" || rows[0].LLMCost.Currency != "USD" || rows[0].LLMCost.Amount != nil || rows[0].FX != nil {
		t.Fatalf("USD without a rate: %s", r.Body)
	}
	day := time.Now().UTC().AddDate(0, 0, -3)
	if err := env.App.Finops.LoadRates(context.Background(), []finops.Rate{{Currency: "USD", Date: day, PerEUR: 1.0832},
		{Currency: "USD", Date: day.AddDate(0, 0, -30), PerEUR: 1.2}}); err != nil {
		t.Fatal(err)
	}
	r = env.Do(t, http.MethodGet, "/api/v1/bi/chargeback?domain_id="+vendasDom, token, nil)
	rows = nil
	r.JSON(t, &rows)
	if f := rows[0].FX; f == nil || f.Currency != "USD" || f.Rate != 1.0832 || f.RateDate != day.Format(time.DateOnly) ||
		rows[0].LLMCost.Amount == nil || *rows[0].LLMCost.Amount != 0 {
		t.Fatalf("USD with a rate: %s", r.Body)
	}
}

// Chargeback months begin and end at midnight in the workspace's time zone: a scan just
// after midnight local time on the 1st (still the day before in UTC) counts in the new
// month, one just before it in the old; the monthly snapshot takes the same months.
func TestChargebackMonthsFollowTheWorkspaceTimeZone(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "chargeback-tz")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	mustStatus(t, env.Do(t, http.MethodPut, "/api/v1/workspace/locale", admin, map[string]any{"locale": "pt-PT", "timezone": "Asia/Tokyo"}), http.StatusOK)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	conn := env.MustConnection(t, ws, "pg")
	ds := env.MustDataset(t, ws, conn, "public", "vendas")
	local := time.Now().In(tokyo)
	after := time.Date(local.Year(), local.Month()-1, 1, 0, 30, 0, 0, tokyo) // 00:30 on the 1st of last month, local
	before := after.Add(-time.Hour)                                          // 23:30 the day before, local
	newMonth, oldMonth := after.Format("2006-01"), before.In(tokyo).Format("2006-01")
	if after.UTC().Format("2006-01") != oldMonth {
		t.Fatalf("the scan after midnight must still be in %s in UTC: %s", oldMonth, after.UTC())
	}
	for i, at := range []time.Time{before, after} {
		scan := seedScan(t, env, ws, conn, "succeeded", at)
		exec(t, env, `INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, columns, metrics, profiled_at, bytes_read)
			VALUES ($1, $2, $3, $4, 10, 'standard', '[]', '{}', $5, $6)`, ds, scan, ws, i+1, at, 1000*(i+1))
	}
	r := env.Do(t, http.MethodGet, "/api/v1/bi/chargeback", admin, nil)
	mustStatus(t, r, http.StatusOK)
	var rows []chargebackRow
	r.JSON(t, &rows)
	got := map[string][2]float64{}
	for _, row := range rows {
		if row.Dimension == "workspace" {
			got[row.Month] = [2]float64{row.Scans, row.ProfileBytes}
		}
	}
	want := map[string][2]float64{oldMonth: {1, 1000}, newMonth: {1, 2000}}
	if len(got) != 2 || got[oldMonth] != want[oldMonth] || got[newMonth] != want[newMonth] {
		t.Fatalf("workspace rows by month %v, want %v", got, want)
	}
	// The routine's snapshot of the new month, asked for with its local first day.
	snap, err := env.App.Finops.MonthSnapshot(context.Background(), ws, time.Date(after.Year(), after.Month(), 1, 0, 0, 0, 0, tokyo))
	if err != nil {
		t.Fatal(err)
	}
	if sn := snap.(finops.Snapshot); sn.Month != newMonth || len(sn.Rows) != 2 || sn.Rows[0].Dimension != "workspace" || sn.Rows[0].Scans != 1 || sn.Rows[0].ProfileBytes != 2000 {
		t.Fatalf("snapshot: %+v", snap)
	}
}

// Chargeback counts a cost in the domains its dataset belonged to when it was incurred:
// a dataset in Vendas for months that moves to Clientes (PATCH of both domains' members)
// counts in Vendas before the move and in Clientes after; the month of the move is split
// between them by its profiles; the domain rows add up to the workspace row each month;
// the back-dated history is the one the triggers wrote.
func TestChargebackCountsDomainMembershipsOfTheMonthOfTheCost(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "chargeback-history")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	conn := env.MustConnection(t, ws, "pg")
	moved := env.MustDataset(t, ws, conn, "public", "vendas")
	stays := env.MustDataset(t, ws, conn, "public", "clientes")
	mkDomain := func(name string, members ...string) string {
		t.Helper()
		r := env.Do(t, http.MethodPost, "/api/v1/domains", admin, map[string]any{"name": name, "dataset_ids": members})
		mustStatus(t, r, http.StatusCreated)
		var d map[string]any
		r.JSON(t, &d)
		return d["id"].(string)
	}
	vendas := mkDomain("Vendas", moved)
	clientes := mkDomain("Clientes", stays)
	var open int
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM domain_dataset_history h JOIN domains dm ON dm.id = h.domain_id
		WHERE dm.workspace_id = $1 AND h.valid_to IS NULL`, ws).Scan(&open); err != nil || open != 2 {
		t.Fatalf("open memberships written at creation: %d %v", open, err)
	}
	// The memberships began three months ago (the history is back-dated, as if the
	// domains had been created then).
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	local := time.Now().In(lisbon)
	first := time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, lisbon)
	exec(t, env, `UPDATE domain_dataset_history SET valid_from = $2 WHERE domain_id IN ($1::uuid, $3::uuid)`, vendas, first.AddDate(0, -3, 0), clientes)
	twoAgo, oneAgo := first.AddDate(0, -2, 0).Add(36*time.Hour), first.AddDate(0, -1, 0).Add(36*time.Hour)
	seq := 0
	profile := func(ds string, at time.Time, bytes int) {
		t.Helper()
		seq++
		sc := seedScan(t, env, ws, conn, "succeeded", at)
		exec(t, env, `INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, columns, metrics, profiled_at, bytes_read)
			VALUES ($1, $2, $3, $4, 10, 'standard', '[]', '{}', $5, $6)`, ds, sc, ws, seq, at, bytes)
	}
	// Before the move: two months ago, last month, and earlier this month (a minute ago,
	// or the first instant of the month when it began less than a minute ago).
	profile(moved, twoAgo, 100)
	profile(moved, oneAgo, 200)
	profile(stays, oneAgo, 7)
	before := time.Now().Add(-time.Minute)
	if before.Before(first) {
		before = first
	}
	profile(moved, before, 300)
	// The move: out of Vendas, into Clientes.
	mustStatus(t, env.Do(t, http.MethodPatch, "/api/v1/domains/"+vendas, admin, map[string]any{"dataset_ids": []string{}}), http.StatusOK)
	mustStatus(t, env.Do(t, http.MethodPatch, "/api/v1/domains/"+clientes, admin, map[string]any{"dataset_ids": []string{stays, moved}}), http.StatusOK)
	time.Sleep(10 * time.Millisecond)
	after := time.Now()
	profile(moved, after, 400)
	profile(moved, after.Add(time.Millisecond), 500)
	time.Sleep(1100 * time.Millisecond) // a report's generated_at is whole seconds: after the move's
	mustStatus(t, env.Do(t, http.MethodPost, "/api/v1/reports", admin, map[string]any{"type": "dataset", "persona": "engineering", "subject_id": moved}), http.StatusCreated)

	var history int
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM domain_dataset_history WHERE dataset_id = $1`, moved).Scan(&history); err != nil || history != 2 {
		t.Fatalf("the moved dataset's history rows: %d %v", history, err)
	}
	if err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM domain_dataset_history WHERE dataset_id = $1`, stays).Scan(&history); err != nil || history != 1 {
		t.Fatalf("a member kept by the PATCH keeps its one history row: %d %v", history, err)
	}

	r := env.Do(t, http.MethodGet, "/api/v1/bi/chargeback", admin, nil)
	mustStatus(t, r, http.StatusOK)
	var rows []chargebackRow
	r.JSON(t, &rows)
	type fig [4]float64 // scans, datasets, reports, bytes
	got := map[string]fig{}
	for _, x := range rows {
		k := x.Month + " " + x.Dimension + ":"
		switch {
		case x.Dimension == "workspace":
		case x.EntityID == nil:
			k += "none"
		case *x.EntityID == vendas:
			k += "Vendas"
		case *x.EntityID == clientes:
			k += "Clientes"
		}
		got[k] = fig{x.Scans, x.Datasets, x.Reports, x.ProfileBytes}
	}
	m2, m1, m0 := twoAgo.In(lisbon).Format("2006-01"), oneAgo.In(lisbon).Format("2006-01"), local.Format("2006-01")
	// By hand: this month the moved dataset has one profile in Vendas and two in
	// Clientes (a third and two thirds of it); its report counts in Clientes.
	want := map[string]fig{
		m2 + " workspace:":      {1, 1, 0, 100},
		m2 + " domain:Vendas":   {1, 1, 0, 100},
		m1 + " workspace:":      {2, 2, 0, 207},
		m1 + " domain:Vendas":   {1, 1, 0, 200},
		m1 + " domain:Clientes": {1, 1, 0, 7},
		m0 + " workspace:":      {3, 1, 1, 1200},
		m0 + " domain:Vendas":   {1, 0.333333, 0, 300},
		m0 + " domain:Clientes": {2, 0.666667, 1, 900},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v (%s)", got, want, r.Body)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	for _, m := range []string{m2, m1, m0} {
		var sum fig
		for k, x := range got {
			if strings.HasPrefix(k, m+" domain:") {
				for i := range sum {
					sum[i] += x[i]
				}
			}
		}
		for i, w := range got[m+" workspace:"] {
			if math.Abs(sum[i]-w) > 1e-5 {
				t.Errorf("%s: domain rows add to %v, workspace row %v", m, sum, got[m+" workspace:"])
			}
		}
	}
}
