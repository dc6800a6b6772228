package app_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/scan"
)

// Markers planted in text values and in a password: none may ever come back.
const (
	valueMarker    = "NOMEMARKER7731"
	passwordMarker = "PWMARK3R9"
)

// sourceDB is a throw-away source database of one kind.
type sourceDB struct {
	kind, dsn, badDSN string
	db                *sql.DB
	ph                func(i int) string
}

func newSource(t *testing.T, kind, sqliteRoot string) *sourceDB {
	t.Helper()
	ctx := context.Background()
	name := "src_" + strings.ReplaceAll(vigia.NewUUID()[:8], "-", "")
	s := &sourceDB{kind: kind}
	switch kind {
	case "postgres":
		admin, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			a, _ := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
			_, _ = a.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			a.Close()
		})
		// Trust auth accepts any password: the marker travels in the DSN all the way.
		s.dsn = "postgres://postgres:" + passwordMarker + "@127.0.0.1:5432/" + name + "?sslmode=disable"
		s.badDSN = "postgres://postgres:" + passwordMarker + "@127.0.0.1:5432/no_such_db_" + name + "?sslmode=disable"
		s.ph = func(i int) string { return fmt.Sprintf("$%d", i) }
		s.db, err = sql.Open("pgx", s.dsn)
		if err != nil {
			t.Fatal(err)
		}
	case "mysql":
		admin, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/")
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			t.Skipf("MariaDB not available: %v", err)
		}
		t.Cleanup(func() {
			a, _ := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/")
			_, _ = a.Exec("DROP DATABASE IF EXISTS " + name)
			a.Close()
		})
		s.dsn = "root@tcp(127.0.0.1:3306)/" + name + "?parseTime=true"
		s.badDSN = "root:" + passwordMarker + "@tcp(127.0.0.1:3306)/" + name
		s.ph = func(int) string { return "?" }
		s.db, err = sql.Open("mysql", s.dsn)
		if err != nil {
			t.Fatal(err)
		}
	case "sqlite":
		path := filepath.Join(sqliteRoot, name+".db")
		var err error
		s.db, err = sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		s.dsn = path
		s.badDSN = filepath.Join(sqliteRoot, passwordMarker, "missing.db")
		s.ph = func(int) string { return "?" }
	}
	t.Cleanup(func() { s.db.Close() })
	return s
}

func (s *sourceDB) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := s.db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// fillClientes creates clientes with PT phones, NIFs with some invalid check digits,
// 5% null emails and the value marker in names.
func (s *sourceDB) fillClientes(t *testing.T, rows int) {
	t.Helper()
	s.exec(t, `CREATE TABLE clientes (id INTEGER PRIMARY KEY, nome VARCHAR(100), nif VARCHAR(9), telefone VARCHAR(20),
		email VARCHAR(120), valor NUMERIC(10,2), created_at TIMESTAMP)`)
	r := rand.New(rand.NewPCG(7, 11))
	now := time.Now().UTC().Truncate(time.Second)
	ins := fmt.Sprintf("INSERT INTO clientes VALUES (%s, %s, %s, %s, %s, %s, %s)", s.ph(1), s.ph(2), s.ph(3), s.ph(4), s.ph(5), s.ph(6), s.ph(7))
	tx, err := s.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= rows; i++ {
		nif := demo.ValidNIF(r)
		if i%20 == 0 {
			nif = demo.InvalidNIF(r)
		}
		var email any = fmt.Sprintf("cliente%d@exemplo.pt", i)
		if i%20 == 7 {
			email = nil
		}
		if _, err := tx.Exec(ins, i, fmt.Sprintf("%s Silva %d", valueMarker, i), nif, demo.PTMobile(r), email,
			float64(r.IntN(10000))/100, now.Add(-time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestScansEndToEnd(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(kind, func(t *testing.T) { testScansOn(t, kind) })
	}
}

func testScansOn(t *testing.T, kind string) {
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root})
	ws := env.MustWorkspace(t, "scan-"+kind)
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	src := newSource(t, kind, root)
	src.fillClientes(t, 400)
	var bodies []string
	do := func(method, path, cred string, body any) *apptest.Response {
		t.Helper()
		r := env.Do(t, method, path, cred, body)
		bodies = append(bodies, string(r.Body))
		return r
	}
	ctx := app.AsAdmin(context.Background(), ws, "test")

	t.Run("BadCredentialsAreNotEchoed", func(t *testing.T) {
		r := do(http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "bad", "kind": kind, "dsn": src.badDSN})
		if r.Status != 422 || !strings.Contains(string(r.Body), "connection_failed") {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("TokenCannotAddConnections", func(t *testing.T) {
		r := do(http.MethodPost, "/api/v1/connections", tok, map[string]any{"name": "x", "kind": kind, "dsn": src.dsn})
		if r.Status != 403 {
			t.Fatalf("got %d", r.Status)
		}
	})
	r := do(http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "crm", "kind": kind, "dsn": src.dsn})
	if r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	var conn map[string]any
	r.JSON(t, &conn)
	connID := conn["id"].(string)
	if _, ok := conn["dsn"]; ok || conn["country"].(map[string]any)["effective"] != "PT" {
		t.Fatalf("connection out: %v", conn)
	}

	scanNow := func(t *testing.T) scan.Scan {
		t.Helper()
		r := do(http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": connID})
		if r.Status != 202 {
			t.Fatalf("trigger: %d %s", r.Status, r.Body)
		}
		var out map[string]any
		r.JSON(t, &out)
		sc, err := env.App.WaitScan(ctx, out["id"].(string), nil)
		if err != nil || sc.Status != scan.StatusSucceeded {
			t.Fatalf("scan %v: %+v", err, sc)
		}
		return sc
	}
	datasetID := func(t *testing.T) string {
		t.Helper()
		r := do(http.MethodGet, "/api/v1/datasets?connection_id="+connID+"&q=clientes", tok, nil)
		var ds []map[string]any
		r.JSON(t, &ds)
		if len(ds) != 1 || ds[0]["latest_score"] == nil {
			t.Fatalf("datasets: %s", r.Body)
		}
		return ds[0]["id"].(string)
	}
	detail := func(t *testing.T, id string) map[string]any {
		t.Helper()
		var d map[string]any
		do(http.MethodGet, "/api/v1/datasets/"+id, tok, nil).JSON(t, &d)
		return d
	}
	column := func(d map[string]any, name string) map[string]any {
		for _, c := range d["columns"].([]any) {
			if c.(map[string]any)["name"] == name {
				return c.(map[string]any)
			}
		}
		t.Fatalf("no column %s", name)
		return nil
	}

	scanNow(t)
	id := datasetID(t)
	t.Run("ProfileSemanticTypesAndScore", func(t *testing.T) {
		d := detail(t, id)
		sem, _ := column(d, "telefone")["semantic"].(map[string]any)
		if sem == nil || sem["type"] != "phone_pt" || sem["region"] != nil || sem["sample_size"].(float64) < 1 {
			t.Fatalf("telefone semantic: %v", sem)
		}
		if _, ok := sem["estimated"].(bool); !ok {
			t.Fatalf("estimated missing: %v", sem)
		}
		if s, _ := column(d, "nif")["semantic"].(map[string]any); s == nil || s["type"] != "nif_pt" {
			t.Fatalf("nif semantic: %v", s)
		}
		if n := column(d, "email")["profile"].(map[string]any)["null_count"].(float64); n != 20 {
			t.Fatalf("email nulls %v, want 20", n)
		}
		hist := d["score_history"].([]any)
		dims := hist[0].(map[string]any)["dimensions"].(map[string]any)
		for _, k := range []string{"completude", "unicidade", "validade", "atualidade", "consistencia"} {
			if _, ok := dims[k]; !ok {
				t.Fatalf("dimension %s missing: %v", k, dims)
			}
		}
		if dims["validade"].(float64) >= 100 {
			t.Fatalf("invalid NIFs did not lower validade: %v", dims)
		}
	})

	t.Run("CountryESNoLongerReadsPhonePT", func(t *testing.T) {
		r := do(http.MethodPatch, "/api/v1/connections/"+connID, admin, map[string]any{"data_country": "ES"})
		if r.Status != 200 {
			t.Fatalf("patch: %d %s", r.Status, r.Body)
		}
		scanNow(t)
		d := detail(t, id)
		if sem, _ := column(d, "telefone")["semantic"].(map[string]any); sem != nil && sem["type"] == "phone_pt" {
			t.Fatalf("still phone_pt with ES: %v", sem)
		}
		if d["country"].(map[string]any)["effective"] != "ES" || d["country"].(map[string]any)["source"] != "connection" {
			t.Fatalf("country %v", d["country"])
		}
	})

	t.Run("DroppedColumnOpensSchemaDrift", func(t *testing.T) {
		src.exec(t, "ALTER TABLE clientes DROP COLUMN valor")
		scanNow(t)
		d := detail(t, id)
		var drift map[string]any
		for _, is := range d["issues"].([]any) {
			if is.(map[string]any)["type"] == "schema_drift" {
				drift = is.(map[string]any)
			}
		}
		if drift == nil {
			t.Fatalf("no schema_drift issue: %v", d["issues"])
		}
		var changes []map[string]any
		do(http.MethodGet, "/api/v1/datasets/"+id+"/schema-changes", tok, nil).JSON(t, &changes)
		if len(changes) != 1 || fmt.Sprint(changes[0]["dropped"]) == "[]" ||
			changes[0]["dropped"].([]any)[0].(map[string]any)["column"] != "valor" {
			t.Fatalf("schema changes: %v", changes)
		}
		var explain map[string]any
		do(http.MethodGet, "/api/v1/datasets/"+id+"/score/explain", tok, nil).JSON(t, &explain)
		found := false
		for _, dr := range explain["drivers"].([]any) {
			m := dr.(map[string]any)
			found = found || m["kind"] == "consistency_issue" && m["issue_id"] == drift["id"]
		}
		if !found {
			t.Fatalf("explain does not name the drift: %v", explain)
		}
	})

	t.Run("VolumeDropAfterSteadyScansOpensAnomaly", func(t *testing.T) {
		scanNow(t)
		scanNow(t)
		src.exec(t, "DELETE FROM clientes WHERE id % 10 <> 0")
		scanNow(t)
		d := detail(t, id)
		var anomaly map[string]any
		for _, is := range d["issues"].([]any) {
			m := is.(map[string]any)
			if m["type"] == "anomaly" && m["subtype"] == "volume" {
				anomaly = m
			}
		}
		if anomaly == nil {
			t.Fatalf("no volume anomaly: %v", d["issues"])
		}
		var verdict map[string]any
		do(http.MethodGet, "/api/v1/datasets/"+id+"/verdict", tok, nil).JSON(t, &verdict)
		if verdict["verdict"] == "pass" || verdict["verdict"] == "unknown" {
			t.Fatalf("verdict %v", verdict)
		}
	})

	t.Run("ReadOperations", func(t *testing.T) {
		for _, suffix := range []string{"auto-monitors", "freshness", "incremental-profiling", "tuning", "parsing", "data-country"} {
			if r := do(http.MethodGet, "/api/v1/datasets/"+id+"/"+suffix, tok, nil); r.Status != 200 {
				t.Errorf("%s: %d %s", suffix, r.Status, r.Body)
			}
		}
		for _, p := range []string{"/api/v1/connections/" + connID, "/api/v1/connections/" + connID + "/engineering",
			"/api/v1/scans", "/api/v1/signals", "/api/v1/connections/types", "/api/v1/connections/presets", "/api/v1/connections/demo/packs"} {
			if r := do(http.MethodGet, p, tok, nil); r.Status != 200 {
				t.Errorf("%s: %d %s", p, r.Status, r.Body)
			}
		}
	})

	t.Run("QueryLogHasNoValues", func(t *testing.T) {
		r := do(http.MethodGet, "/api/v1/connections/"+connID+"/query-log?operation=scan", tok, nil)
		var entries []map[string]any
		r.JSON(t, &entries)
		if len(entries) == 0 || r.Header.Get("X-Total-Count") == "0" {
			t.Fatalf("query log empty: %s", r.Body)
		}
		csv := do(http.MethodGet, "/api/v1/connections/"+connID+"/query-log/export?format=csv", tok, nil)
		if csv.Status != 200 || !strings.HasPrefix(string(csv.Body), "statement,operation") {
			t.Fatalf("export: %d %.200s", csv.Status, csv.Body)
		}
		var logged int
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM source_query_log
			WHERE statement LIKE '%' || $1 || '%' OR statement LIKE '%' || $2 || '%'`, valueMarker, passwordMarker).Scan(&logged); err != nil || logged != 0 {
			t.Fatalf("markers in the query log: %d %v", logged, err)
		}
	})

	t.Run("OtherWorkspaceGets404", func(t *testing.T) {
		other := env.MustToken(t, env.MustWorkspace(t, "other"))
		for _, p := range []string{"/api/v1/datasets/" + id, "/api/v1/datasets/" + id + "/verdict", "/api/v1/datasets/" + id + "/schema-changes",
			"/api/v1/connections/" + connID, "/api/v1/connections/" + connID + "/query-log"} {
			if r := do(http.MethodGet, p, other, nil); r.Status != 404 {
				t.Errorf("%s: %d", p, r.Status)
			}
		}
		if r := do(http.MethodPost, "/api/v1/scans", other, map[string]any{"connection_id": connID}); r.Status != 404 {
			t.Errorf("trigger with another workspace's connection: %d", r.Status)
		}
	})

	t.Run("GraphQLAgreesWithREST", func(t *testing.T) {
		out := env.GraphQL(t, tok, `{ datasets(q: "clientes") { items { id scoreHistory { score validade } issues { type }
			verdict { verdict } columns { name } } } }`, nil)
		if out["errors"] != nil {
			t.Fatalf("errors: %v", out["errors"])
		}
		g := out["data"].(map[string]any)["datasets"].(map[string]any)["items"].([]any)[0].(map[string]any)
		d := detail(t, id)
		var v map[string]any
		do(http.MethodGet, "/api/v1/datasets/"+id+"/verdict", tok, nil).JSON(t, &v)
		if len(g["scoreHistory"].([]any)) != len(d["score_history"].([]any)) || len(g["issues"].([]any)) != len(d["issues"].([]any)) ||
			len(g["columns"].([]any)) != len(d["columns"].([]any)) || g["verdict"].(map[string]any)["verdict"] != v["verdict"] {
			t.Fatalf("graphql %v\nrest %v", g, d)
		}
		first := g["scoreHistory"].([]any)[0].(map[string]any)
		restFirst := d["score_history"].([]any)[0].(map[string]any)
		if first["score"] != restFirst["score"] || first["validade"] != restFirst["dimensions"].(map[string]any)["validade"] {
			t.Fatalf("scores differ: %v / %v", first, restFirst)
		}
		m := env.GraphQL(t, tok, `mutation($c: ID!) { triggerScan(connectionId: $c) { id status } }`, map[string]any{"c": connID})
		if m["errors"] != nil {
			t.Fatalf("triggerScan with a token: %v", m["errors"])
		}
		sc := m["data"].(map[string]any)["triggerScan"].(map[string]any)
		if _, err := env.App.WaitScan(ctx, sc["id"].(string), nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("NoMarkerAnywhere", func(t *testing.T) {
		all := strings.Join(bodies, "\n") + env.Logs.String()
		for _, m := range []string{valueMarker, passwordMarker} {
			if strings.Contains(all, m) {
				t.Fatalf("marker %s leaked", m)
			}
		}
		var stored int
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM dataset_columns WHERE profile::text LIKE '%' || $1 || '%') +
			(SELECT count(*) FROM dataset_profiles WHERE columns::text LIKE '%' || $1 || '%') +
			(SELECT count(*) FROM issues WHERE details::text LIKE '%' || $1 || '%' OR title LIKE '%' || $1 || '%')`, valueMarker).Scan(&stored); err != nil || stored != 0 {
			t.Fatalf("value marker stored %d times (%v)", stored, err)
		}
	})
	_ = os.Getenv
}

func TestScanQueueFull(t *testing.T) {
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "k", SQLiteRoot: root, MaxActiveScans: 2})
	ws := env.MustWorkspace(t, "queue")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	var conns []string
	for i := 0; i < 3; i++ {
		src := newSource(t, "sqlite", root)
		src.fillClientes(t, 10)
		r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": fmt.Sprint("c", i), "kind": "sqlite", "dsn": src.dsn})
		var c map[string]any
		r.JSON(t, &c)
		conns = append(conns, c["id"].(string))
	}
	first := env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": conns[0]})
	again := env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": conns[0]})
	var a, b map[string]any
	first.JSON(t, &a)
	again.JSON(t, &b)
	if first.Status != 202 || again.Status != 202 || a["id"] != b["id"] {
		t.Fatalf("a queued scan is not reused: %s / %s", first.Body, again.Body)
	}
	if r := env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": conns[1]}); r.Status != 202 {
		t.Fatalf("second: %d", r.Status)
	}
	r := env.Do(t, http.MethodPost, "/api/v1/scans", tok, map[string]any{"connection_id": conns[2]})
	e := decodeError(t, r)
	if r.Status != 429 || e.Code != "scan_queue_full" || r.Header.Get("Retry-After") == "" || e.RetryAfter == nil {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
}

// queries_per_day comes from the source's own scan counters between two scans, and
// sort=usage puts the busiest dataset first.
func TestUsageFromSourceStatistics(t *testing.T) {
	env := apptest.MustStart(t, app.Config{SecretKey: "k", SQLiteRoot: t.TempDir()})
	ws := env.MustWorkspace(t, "usage")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	tok := env.MustToken(t, ws)
	src := newSource(t, "postgres", "")
	src.fillClientes(t, 50)
	src.exec(t, `CREATE TABLE pouco_usada (id int PRIMARY KEY)`)
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, map[string]any{"name": "pg", "kind": "postgres", "dsn": src.dsn})
	var conn map[string]any
	r.JSON(t, &conn)
	ctx := app.AsAdmin(context.Background(), ws, "test")
	scanOnce := func() {
		t.Helper()
		sc, err := env.App.Scans.TriggerScan(ctx, conn["id"].(string), "manual")
		if err != nil {
			t.Fatal(err)
		}
		if sc, err = env.App.WaitScan(ctx, sc.ID, nil); err != nil || sc.Status != scan.StatusSucceeded {
			t.Fatalf("scan: %v %+v", err, sc)
		}
	}
	scanOnce()
	list := func() []map[string]any {
		var ds []map[string]any
		env.Do(t, http.MethodGet, "/api/v1/datasets?sort=usage", tok, nil).JSON(t, &ds)
		return ds
	}
	for _, d := range list() {
		if d["queries_per_day"] != nil {
			t.Fatalf("usage known after one scan: %v", d)
		}
	}
	// A day passes: the application reads clientes 40 times.
	if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE datasets SET usage_reads_at = usage_reads_at - interval '1 day' WHERE workspace_id = $1`, ws); err != nil {
		t.Fatal(err)
	}
	conn1, err := src.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := conn1.ExecContext(context.Background(), "SELECT count(*) FROM clientes WHERE id > $1", i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn1.ExecContext(context.Background(), "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	conn1.Close()
	time.Sleep(50 * time.Millisecond) // the flush happens when that backend goes idle
	scanOnce()
	ds := list()
	if ds[0]["name"] != "public.clientes" {
		t.Fatalf("busiest dataset not first: %v", ds)
	}
	q, _ := ds[0]["queries_per_day"].(float64)
	if q < 40 || q > 50 {
		t.Fatalf("queries_per_day %v, want 40 reads plus Vigia's own few", ds[0]["queries_per_day"])
	}
}
