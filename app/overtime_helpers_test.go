package app_test

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

// watched is one Postgres source table scanned again and again through the API, with
// what a user reads after each scan.
type watched struct {
	env        *apptest.Env
	ws, connID string
	admin, tok string
	src        *sourceDB
	table      string
	datasetID  string
	scans      []string // scan ids, oldest first
}

// newWatched adds the source as a connection of a fresh workspace.
func newWatched(t *testing.T, table string) *watched {
	t.Helper()
	root := t.TempDir()
	env := apptest.MustStart(t, app.Config{SecretKey: "test-secret-key", SQLiteRoot: root})
	w := &watched{env: env, table: table}
	w.ws = env.MustWorkspace(t, "overtime")
	w.admin = env.MustSession(t, w.ws, vigia.RoleAdmin)
	w.tok = env.MustToken(t, w.ws)
	w.src = newSource(t, "postgres", root)
	return w
}

// connect registers the source once its tables exist.
func (w *watched) connect(t *testing.T) {
	t.Helper()
	r := w.env.Do(t, http.MethodPost, "/api/v1/connections", w.admin, map[string]any{"name": "loja", "kind": "postgres", "dsn": w.src.dsn})
	if r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	var c map[string]any
	r.JSON(t, &c)
	w.connID = c["id"].(string)
}

// scan runs one scan to its end and returns its id.
func (w *watched) scan(t *testing.T) string {
	t.Helper()
	r := w.env.Do(t, http.MethodPost, "/api/v1/scans", w.tok, map[string]any{"connection_id": w.connID})
	if r.Status != 202 {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	ctx, cancel := context.WithTimeout(app.AsAdmin(context.Background(), w.ws, "test"), 2*time.Minute)
	defer cancel()
	sc, err := w.env.App.WaitScan(ctx, out["id"].(string), nil)
	if err != nil || sc.Status != scan.StatusSucceeded {
		t.Fatalf("scan %v: %+v", err, sc)
	}
	w.scans = append(w.scans, sc.ID)
	if w.datasetID == "" {
		var ds []map[string]any
		w.env.Do(t, http.MethodGet, "/api/v1/datasets?connection_id="+w.connID+"&q="+w.table, w.tok, nil).JSON(t, &ds)
		if len(ds) != 1 {
			t.Fatalf("datasets: %v", ds)
		}
		w.datasetID = ds[0]["id"].(string)
	}
	return sc.ID
}

// get reads a JSON object with the API token.
func (w *watched) get(t *testing.T, path string) map[string]any {
	t.Helper()
	r := w.env.Do(t, http.MethodGet, path, w.tok, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	return out
}

// list reads a JSON array with the API token.
func (w *watched) list(t *testing.T, path string) []map[string]any {
	t.Helper()
	r := w.env.Do(t, http.MethodGet, path, w.tok, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var out []map[string]any
	r.JSON(t, &out)
	return out
}

// issues lists every issue of the dataset, any status, by id.
func (w *watched) issues(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, is := range w.list(t, "/api/v1/issues?limit=500&dataset_id="+w.datasetID) {
		out[is["id"].(string)] = is
	}
	return out
}

// signals lists the dataset's signals raised since the given time (all when zero).
func (w *watched) signals(t *testing.T, since time.Time) []map[string]any {
	t.Helper()
	q := url.Values{"dataset_id": {w.datasetID}, "limit": {"500"}}
	if !since.IsZero() {
		q.Set("since", since.Format(time.RFC3339Nano))
	}
	return w.list(t, "/api/v1/signals?"+q.Encode())
}

// counts are the standing issues as one reading reports them.
type counts struct{ critical, warning int }

// readings are the four places that report a dataset's standing issues, read now:
// the stored verdict's reasons, the trust decision (agente), AI readiness (agente) and
// the score explanation.
func (w *watched) readings(t *testing.T) map[string]counts {
	t.Helper()
	out := map[string]counts{}
	var v counts
	for _, r := range w.get(t, "/api/v1/datasets/"+w.datasetID+"/verdict")["reasons"].([]any) {
		m := r.(map[string]any)
		n := int(m["params"].(map[string]any)["count"].(float64))
		switch m["code"] {
		case quality.ReasonCriticalIssue:
			v.critical = n
		case quality.ReasonWarningIssue:
			v.warning = n
		}
	}
	out["verdict"] = v
	oi := w.get(t, "/api/v1/datasets/"+w.datasetID+"/trust-decision")["open_incidents"].(map[string]any)
	out["trust_decision"] = counts{int(oi["critical"].(float64)), int(oi["warning"].(float64))}
	agente := w.get(t, "/api/v1/datasets/"+w.datasetID+"/ai-readiness")["use_cases"].(map[string]any)["agente"].(map[string]any)
	var rd counts
	for _, kind := range []string{"blockers", "warnings"} {
		for _, f := range agente[kind].([]any) {
			m := f.(map[string]any)
			switch m["key"] {
			case "critical_issue":
				rd.critical = int(m["params"].(map[string]any)["count"].(float64))
			case "warning_issue":
				rd.warning = int(m["params"].(map[string]any)["count"].(float64))
			}
		}
	}
	out["readiness"] = rd
	ex := w.get(t, "/api/v1/datasets/"+w.datasetID+"/score/explain")["open_issues"].(map[string]any)
	out["score_explanation"] = counts{int(ex["critical"].(float64)), int(ex["warning"].(float64))}
	return out
}

// assertSameCounts checks that the four readings agree, and with want.
func assertSameCounts(t *testing.T, got map[string]counts, want counts) {
	t.Helper()
	for where, c := range got {
		if c != want {
			t.Errorf("%s counts %d critical / %d warning issues; want %d / %d (all: %v)", where, c.critical, c.warning,
				want.critical, want.warning, got)
		}
	}
}

// findIssue returns the one issue of the type and subtype (metric for anomalies) with
// the given status ("" any), failing when there is not exactly one.
func findIssue(t *testing.T, issues map[string]map[string]any, typ, subtype, status string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, is := range issues {
		if is["type"] == typ && (subtype == "" || is["subtype"] == subtype) && (status == "" || is["status"] == status) {
			found = append(found, is)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d issues of type %s/%s status %q: %v", len(found), typ, subtype, status, issues)
	}
	return found[0]
}

// ids are the ids of a JSON list, sorted.
func ids(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	sort.Strings(out)
	return out
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// sourceInt runs a query returning one integer on the source.
func (s *sourceDB) int(t *testing.T, q string) int64 {
	t.Helper()
	var n int64
	if err := s.db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// completudeOf is completude computed from the source's own counts, as the contract's
// formula says: 1 − null cells / all cells over every column, × 100, two decimals.
func (s *sourceDB) completudeOf(t *testing.T, table string) float64 {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(),
		`SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`, table)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	n := s.int(t, "SELECT count(*) FROM "+table)
	if n == 0 {
		return math.NaN()
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = `(count(*) - count("` + c + `"))`
	}
	nulls := s.int(t, "SELECT "+strings.Join(parts, " + ")+" FROM "+table)
	return round2(100 * (1 - float64(nulls)/float64(n*int64(len(cols)))))
}

// dims reads the latest score's dimensions and overall score from the explanation.
func (w *watched) dims(t *testing.T) (map[string]any, float64) {
	t.Helper()
	ex := w.get(t, "/api/v1/datasets/"+w.datasetID+"/score/explain")
	return ex["dimensions"].(map[string]any), ex["score"].(float64)
}
