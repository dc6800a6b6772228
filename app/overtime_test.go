package app_test

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/quality"
)

// pedidosSQL creates the scripted history's table: 2000 orders, every value of a column
// distinct except estado (4 values) and atualizado_em (one load time), no NULL.
const pedidosSQL = `CREATE TABLE pedidos (id bigint PRIMARY KEY, email text, estado text, valor numeric(10,2),
	criado_em timestamptz, atualizado_em timestamptz);
INSERT INTO pedidos SELECT g, 'cliente' || g || '@exemplo.pt', (ARRAY['novo', 'pago', 'enviado', 'entregue'])[g % 4 + 1],
	g * 1.25, now() - g * interval '1 minute', now() FROM generate_series(1, 2000) g`

// step is one scan of the scripted history: what changed in the source before it, and
// what a user must read after it (each dimension worked out by hand from the contract's
// formulas; see docs/scoring-over-time.md, "The scripted history").
type step struct {
	name   string
	change string // SQL run on the source before the scan
	// dimensions and score; unicidade is 100 throughout (a primary key).
	completude, validade, atualidade, consistencia, score float64
	verdict, decision                                     string
	critical, warning                                     int // standing issues
}

// Must show 1 and 2: a real Postgres table changed between scans as a user would see it
// happen. After every scan the score, each dimension (by hand, from the source's own
// counts and the contract's formulas, and as written in the table below), the verdict,
// the trust decision and the issues are asserted, and the verdict, the trust decision,
// readiness and the score explanation report the same issue counts.
func TestScoresVerdictsAndIssuesFollowAScriptedHistory(t *testing.T) {
	w := newWatched(t, "pedidos")
	for _, q := range strings.Split(pedidosSQL, ";\n") {
		w.src.exec(t, q)
	}
	w.connect(t)

	steps := []step{
		{name: "baseline", completude: 100, validade: 100, atualidade: 100, consistencia: 100, score: 100, verdict: "pass", decision: "caution"},
		{name: "rescan 2", completude: 100, validade: 100, atualidade: 100, consistencia: 100, score: 100, verdict: "pass", decision: "caution"},
		{name: "rescan 3", completude: 100, validade: 100, atualidade: 100, consistencia: 100, score: 100, verdict: "pass", decision: "caution"},
		{name: "rescan 4", completude: 100, validade: 100, atualidade: 100, consistencia: 100, score: 100, verdict: "pass", decision: "caution"},
		{name: "rescan 5", completude: 100, validade: 100, atualidade: 100, consistencia: 100, score: 100, verdict: "pass", decision: "caution"},
		{name: "rescan 6", completude: 100, validade: 100, atualidade: 100, consistencia: 100, score: 100, verdict: "pass", decision: "caution"},
		// 400 NULL emails of 12000 cells: completude 96.67; the not_null rule (critical,
		// weight 2) fails next to the valid emails (weight 1): validade 33.33; the null
		// rate anomaly (A, critical: constant history) deducts 30.
		{name: "20% NULLs", change: `UPDATE pedidos SET email = NULL WHERE id % 5 = 0`,
			completude: 96.67, validade: 33.33, atualidade: 100, consistencia: 70, score: 80, verdict: "fail", decision: "untrusted", critical: 2},
		// Volume 2000 → 4000 (B, critical); A detected again (30); the rule still fails.
		{name: "rows doubled", change: `INSERT INTO pedidos SELECT id + 2000, CASE WHEN email IS NULL THEN NULL ELSE 'cliente' || (id + 2000) || '@exemplo.pt' END,
			estado, (id + 2000) * 1.25, now() - (id + 2000) * interval '1 minute', now() FROM pedidos`,
			completude: 96.67, validade: 33.33, atualidade: 100, consistencia: 40, score: 74, verdict: "fail", decision: "untrusted", critical: 3},
		// 90% deleted, and the NULLs with them: completude and validade back to 100, the
		// rule's issue resolved by the scan, A's first clean scan (24: age 1). B detected
		// again by the gross drop (4000 → 400, critical: 30). consistencia 46: the score
		// rises (74 → 89.2) as the formulas say; the verdict fails on B.
		{name: "90% deleted", change: `DELETE FROM pedidos WHERE id % 10 <> 3`,
			completude: 100, validade: 100, atualidade: 100, consistencia: 46, score: 89.2, verdict: "fail", decision: "untrusted", critical: 2},
		// Drift C (added only: warning, 15); A 18 (age 2) and resolved by this scan, its
		// second clean one; B 24.
		{name: "column added", change: `ALTER TABLE pedidos ADD COLUMN canal text NOT NULL DEFAULT 'web'`,
			completude: 100, validade: 100, atualidade: 100, consistencia: 43, score: 88.6, verdict: "fail", decision: "untrusted", critical: 1, warning: 1},
		// Drift D (dropped: critical, structural, 30); A gone; B 18; C 12.
		{name: "column dropped", change: `ALTER TABLE pedidos DROP COLUMN canal`,
			completude: 100, validade: 100, atualidade: 100, consistencia: 40, score: 88, verdict: "fail", decision: "untrusted", critical: 2, warning: 1},
		// Drift E (estado → situacao: dropped + added, critical, 30); B 12; C 9; D 0
		// (structural: only in the scan that detects it).
		{name: "column renamed", change: `ALTER TABLE pedidos RENAME COLUMN estado TO situacao`,
			completude: 100, validade: 100, atualidade: 100, consistencia: 49, score: 89.8, verdict: "fail", decision: "untrusted", critical: 3, warning: 1},
		// D was acknowledged after the last scan: an acknowledged schema change no longer
		// stands. Drift F (numeric → text: critical, 30); B 6; C 6.
		{name: "type changed", change: `ALTER TABLE pedidos ALTER COLUMN valor TYPE text`,
			completude: 100, validade: 100, atualidade: 100, consistencia: 58, score: 91.6, verdict: "fail", decision: "untrusted", critical: 3, warning: 1},
		// Newest row 72 h old: atualidade 0; freshness lag anomaly G (critical, 30); B 0
		// (age 5 = K); C 3.
		{name: "timestamps stale", change: `UPDATE pedidos SET atualizado_em = now() - interval '72 hours'`,
			completude: 100, validade: 100, atualidade: 0, consistencia: 67, score: 73.4, verdict: "fail", decision: "untrusted", critical: 4, warning: 1},
		// Fresh again: G's first clean scan (24); C 0.
		{name: "timestamps fresh", change: `UPDATE pedidos SET atualizado_em = now()`,
			completude: 100, validade: 100, atualidade: 100, consistencia: 76, score: 95.2, verdict: "fail", decision: "untrusted", critical: 4, warning: 1},
		// G's second clean scan: 18 this once, and resolved.
		{name: "fresh rescan", completude: 100, validade: 100, atualidade: 100, consistencia: 82, score: 96.4, verdict: "fail", decision: "untrusted", critical: 3, warning: 1},
	}

	// What the test knows of each schema_drift and anomaly issue, to work consistencia
	// out by hand: 15 per warning, 30 per critical, × (1 − age/K), K = 5; structural drift
	// only in the scan that detects it; open or acknowledged issues only.
	type tracked struct {
		severity, status  string
		structural        bool
		lastDetected, det int
	}
	known := map[string]*tracked{}
	var ruleID string
	named := map[string]string{} // letter → issue id, as the comments above name them

	for n, st := range steps {
		n := n + 1
		if st.change != "" {
			w.src.exec(t, st.change)
		}
		started := time.Now()
		scanID := w.scan(t)
		if n == 1 {
			r := w.env.Do(t, http.MethodPost, "/api/v1/rules", w.admin, map[string]any{"dataset_id": w.datasetID, "rule_type": "not_null",
				"severity": "critical", "name": "email obrigatório", "params": map[string]any{"column": "email"}})
			if r.Status != 201 {
				t.Fatalf("rule: %d %s", r.Status, r.Body)
			}
			var rule map[string]any
			r.JSON(t, &rule)
			ruleID = rule["id"].(string)
		}
		t.Run(fmt.Sprintf("%02d %s", n, st.name), func(t *testing.T) {
			issues := w.issues(t)

			// consistencia by hand.
			deduction := 0.0
			for id, is := range issues {
				if is["type"] != quality.IssueTypeSchemaDrift && is["type"] != quality.IssueTypeAnomaly {
					continue
				}
				k, seen := known[id]
				deducting := !seen || k.status == "open" || k.status == "acknowledged"
				if !seen {
					d := w.get(t, "/api/v1/issues/"+id)["details"].(map[string]any)
					structural, _ := d["structural"].(bool)
					k = &tracked{structural: structural, lastDetected: n}
					known[id] = k
				} else if det := int(is["detections"].(float64)); det != k.det {
					k.lastDetected = n
				}
				k.det, k.severity, k.status = int(is["detections"].(float64)), is["severity"].(string), is["status"].(string)
				age := n - k.lastDetected
				if !deducting || age >= quality.DefaultDecayScans || (k.structural && age > 0) {
					continue
				}
				base := quality.PointsWarning
				if k.severity == "critical" {
					base = quality.PointsCritical
				}
				deduction += base * float64(quality.DefaultDecayScans-age) / float64(quality.DefaultDecayScans)
			}
			consistencia := round2(math.Max(0, 100-deduction))

			// The other dimensions from the source's own answers.
			completude := w.src.completudeOf(t, "pedidos")
			unicidade := round2(100 * float64(w.src.int(t, `SELECT count(DISTINCT id) FROM pedidos`)) / float64(w.src.int(t, `SELECT count(id) FROM pedidos`)))
			validEmails := float64(w.src.int(t, `SELECT count(*) FROM pedidos WHERE email ~ '^[a-z0-9]+@[a-z]+\.pt$'`)) /
				float64(w.src.int(t, `SELECT count(email) FROM pedidos`))
			ruleScore, ruleWeight := 0.0, 0.0
			if n > 1 {
				ruleWeight = 2 // a critical rule
				if w.src.int(t, `SELECT count(*) - count(email) FROM pedidos`) == 0 {
					ruleScore = 1
				}
			}
			validade := round2(100 * (validEmails + ruleWeight*ruleScore) / (1 + ruleWeight))
			ageHours := float64(w.src.int(t, `SELECT extract(epoch FROM now() - max(atualizado_em))::bigint FROM pedidos`)) / 3600
			atualidade := round2(100 * quality.FreshnessScore(time.Duration(ageHours*float64(time.Hour)), 24*time.Hour))
			score := round2((completude + unicidade + validade + atualidade + consistencia) / 5)

			dims, gotScore := w.dims(t)
			byHand := map[string]float64{"completude": completude, "unicidade": unicidade, "validade": validade,
				"atualidade": atualidade, "consistencia": consistencia}
			table := map[string]float64{"completude": st.completude, "unicidade": 100, "validade": st.validade,
				"atualidade": st.atualidade, "consistencia": st.consistencia}
			for d, want := range byHand {
				got, _ := dims[d].(float64)
				if dims[d] == nil || got != want || want != table[d] {
					t.Errorf("%s: Vigia %v, by hand %v, expected %v", d, dims[d], want, table[d])
				}
			}
			if gotScore != score || score != st.score {
				t.Errorf("score: Vigia %v, by hand %v, expected %v", gotScore, score, st.score)
			}

			verdict := w.get(t, "/api/v1/datasets/"+w.datasetID+"/verdict")
			decision := w.get(t, "/api/v1/datasets/"+w.datasetID+"/trust-decision")
			if verdict["verdict"] != st.verdict || decision["decision"] != st.decision {
				t.Errorf("verdict %v, decision %v; want %s, %s", verdict["verdict"], decision["decision"], st.verdict, st.decision)
			}
			// Must show 2: one count everywhere.
			assertSameCounts(t, w.readings(t), counts{st.critical, st.warning})

			switch n {
			case 7:
				a := findIssue(t, issues, "anomaly", "null_rate", "open")
				r := findIssue(t, issues, "rule", "not_null", "open")
				named["A"], named["R"] = a["id"].(string), r["id"].(string)
				if a["severity"] != "critical" || r["severity"] != "critical" || *ptrOf(r["rule_id"]) != ruleID {
					t.Errorf("A %v, R %v", a, r)
				}
				if !strings.Contains(a["title"].(string), "20.0%") {
					t.Errorf("title %q", a["title"])
				}
			case 8:
				b := findIssue(t, issues, "anomaly", "volume", "open")
				named["B"] = b["id"].(string)
				if b["severity"] != "critical" || !strings.Contains(b["title"].(string), "4000 linhas (mediana 2000)") {
					t.Errorf("B %v", b)
				}
				// A was detected again as a warning (its history now holds one 20%):
				// its severity stays the highest of its detections.
				if a := issues[named["A"]]; a["severity"] != "critical" || a["detections"].(float64) != 2 {
					t.Errorf("A %v", a)
				}
			case 9:
				b := issues[named["B"]]
				// The still-open volume issue says what the table holds now.
				if b["status"] != "open" || b["severity"] != "critical" || !strings.Contains(b["title"].(string), "400 linhas (mediana 2000)") {
					t.Errorf("B after the 90%% delete: %v", b)
				}
				if r := issues[named["R"]]; r["status"] != "resolved" {
					t.Errorf("R %v", r)
				}
				// The verdict fails with the critical volume issue, and names it; so do
				// the trust decision and the score explanation.
				var names []string
				for _, r := range verdict["reasons"].([]any) {
					if m := r.(map[string]any); m["code"] == quality.ReasonCriticalIssue {
						names = ids(m["params"].(map[string]any)["issue_ids"])
					}
				}
				if !slices.Contains(names, named["B"]) {
					t.Errorf("verdict reasons %v do not name B", verdict["reasons"])
				}
				var trustNames []string
				for _, r := range decision["reasons"].([]any) {
					if m := r.(map[string]any); m["code"] == "critical_incident" {
						trustNames = ids(m["params"].(map[string]any)["issue_ids"])
					}
				}
				if !slices.Equal(names, trustNames) {
					t.Errorf("verdict names %v, trust decision %v", names, trustNames)
				}
				explain := w.get(t, "/api/v1/datasets/"+w.datasetID+"/score/explain")
				var driver map[string]any
				for _, d := range explain["drivers"].([]any) {
					if m := d.(map[string]any); m["kind"] == "consistency_issue" && m["issue_id"] == named["B"] {
						driver = m["params"].(map[string]any)
					}
				}
				if driver == nil || driver["change"] != "detected_again" || driver["points_after"] != 30.0 || driver["severity"] != "critical" {
					t.Errorf("the explanation does not name B: %v", explain["drivers"])
				}
				if explain["previous_score"] != 74.0 || explain["score"] != 89.2 {
					t.Errorf("explanation scores %v → %v", explain["previous_score"], explain["score"])
				}
				// The drop is a signal of its own, raised by the gross change.
				var sig map[string]any
				for _, s := range w.signals(t, started) {
					if s["metric"] == "volume" {
						sig = s
					}
				}
				if sig == nil || sig["method"] != "gross_change" || sig["severity"] != "critical" || sig["issue_id"] != named["B"] {
					t.Errorf("volume signal %v", sig)
				}
			case 10:
				// A: the nulls left with the deleted rows two scans ago; its metric stayed
				// inside its band for two scans and this scan resolved it.
				a := w.get(t, "/api/v1/issues/"+named["A"])
				hist := a["history"].([]any)
				last := hist[len(hist)-1].(map[string]any)
				if a["status"] != "resolved" || last["event"] != "resolved" || last["origin"] != "scan:"+scanID {
					t.Errorf("A %v %v", a["status"], hist)
				}
				named["C"] = findIssue(t, issues, "schema_drift", "", "open")["id"].(string)
				if issues[named["C"]]["severity"] != "warning" {
					t.Errorf("C %v", issues[named["C"]])
				}
			case 11, 12, 13:
				for id, is := range issues {
					if is["type"] == "schema_drift" && !slices.Contains([]string{named["C"], named["D"], named["E"]}, id) {
						named[string(rune('A'+n-8))] = id // D, E, F
						if is["severity"] != "critical" {
							t.Errorf("drift %v", is)
						}
					}
				}
				if n == 12 {
					changes := w.list(t, "/api/v1/datasets/"+w.datasetID+"/schema-changes")
					renames := changes[0]["suggested_renames"].([]any)
					if len(renames) != 1 || renames[0].(map[string]any)["from"] != "estado" || renames[0].(map[string]any)["to"] != "situacao" {
						t.Errorf("renames %v", renames)
					}
				}
			case 14:
				g := findIssue(t, issues, "anomaly", "freshness_lag", "open")
				named["G"] = g["id"].(string)
				if g["severity"] != "critical" {
					t.Errorf("G %v", g)
				}
			case 15:
				if g := issues[named["G"]]; g["status"] != "open" {
					t.Errorf("G resolved after one clean scan: %v", g)
				}
			case 16:
				if g := issues[named["G"]]; g["status"] != "resolved" {
					t.Errorf("G %v", g)
				}
			}
		})
		if n == 12 {
			// A person accepts the dropped column.
			if r := w.env.Do(t, http.MethodPost, "/api/v1/issues/"+named["D"]+"/acknowledge", w.admin, nil); r.Status != 200 {
				t.Fatalf("acknowledge: %d %s", r.Status, r.Body)
			}
		}
	}
}

func ptrOf(v any) *string {
	s, _ := v.(string)
	return &s
}

// Must show 3: rescanning unchanged data ten times raises no signal — on a table larger
// than the samples, whose distinct values are estimated (a distinct ratio near 0.1 on
// codigo), measured the same way every time (deterministic sample) and judged at its
// interval.
func TestRescanningUnchangedDataTenTimesRaisesNoSignal(t *testing.T) {
	w := newWatched(t, "movimentos")
	w.src.exec(t, `CREATE TABLE movimentos (id bigint PRIMARY KEY, codigo integer, referencia text, valor numeric(12,2), criado_em timestamptz)`)
	w.src.exec(t, `INSERT INTO movimentos SELECT g, g % 3000, md5(g::text), (g % 977) * 3.5, now() - g * interval '1 second'
		FROM generate_series(1, 30000) g`)
	w.src.exec(t, `ANALYZE movimentos`)
	w.connect(t)
	var estimates []string
	for i := range 11 {
		w.scan(t)
		d := w.get(t, "/api/v1/datasets/"+w.datasetID)
		for _, c := range d["columns"].([]any) {
			col := c.(map[string]any)
			if col["name"] != "codigo" {
				continue
			}
			dist, _ := col["profile"].(map[string]any)["distinct"].(map[string]any)
			if dist == nil || dist["estimated"] != true || dist["ci95"] == nil {
				t.Fatalf("scan %d: codigo's distinct values are not an estimate: %v", i+1, col["profile"])
			}
			estimates = append(estimates, fmt.Sprint(dist["value"], dist["ci95"]))
		}
	}
	if sig := w.signals(t, time.Time{}); len(sig) != 0 {
		t.Fatalf("unchanged data raised %d signals: %v", len(sig), sig)
	}
	if is := w.issues(t); len(is) != 0 {
		t.Fatalf("unchanged data opened issues: %v", is)
	}
	for _, e := range estimates[1:] {
		if e != estimates[0] {
			t.Fatalf("the same table measured differently: %v", estimates)
		}
	}
	_, score := w.dims(t)
	if v := w.get(t, "/api/v1/datasets/"+w.datasetID+"/verdict"); v["verdict"] != "pass" || score != 100 {
		t.Fatalf("verdict %v, score %v", v["verdict"], score)
	}
}

// Must show 4: a null spike opens an issue that resolves by itself once the nulls are
// gone and quality.RecoveryScans (2) scans in a row found the null rate back inside the
// band the issue was opened against: history event resolved, origin scan:<id>.
func TestANullSpikeResolvesItselfAfterTheCleanScans(t *testing.T) {
	w := newWatched(t, "clientes")
	w.src.exec(t, `CREATE TABLE clientes (id bigint PRIMARY KEY, email text, nome text)`)
	w.src.exec(t, `INSERT INTO clientes SELECT g, 'c' || g || '@exemplo.pt', 'Cliente ' || g FROM generate_series(1, 500) g`)
	w.connect(t)
	for range 6 {
		w.scan(t)
	}
	w.src.exec(t, `UPDATE clientes SET email = NULL WHERE id % 10 < 3`)
	spike := w.scan(t)
	issue := findIssue(t, w.issues(t), "anomaly", "null_rate", "open")
	id := issue["id"].(string)
	if issue["severity"] != "critical" || !strings.Contains(issue["title"].(string), "clientes.email: 30.0%") {
		t.Fatalf("spike issue %v", issue)
	}
	if v := w.get(t, "/api/v1/datasets/"+w.datasetID+"/verdict"); v["verdict"] != "fail" {
		t.Fatalf("verdict %v", v["verdict"])
	}

	w.src.exec(t, `UPDATE clientes SET email = 'c' || id || '@exemplo.pt' WHERE email IS NULL`)
	w.scan(t)
	if is := w.issues(t)[id]; is["status"] != "open" {
		t.Fatalf("resolved after one clean scan: %v", is)
	}
	resolving := w.scan(t)
	detail := w.get(t, "/api/v1/issues/"+id)
	hist := detail["history"].([]any)
	first, last := hist[0].(map[string]any), hist[len(hist)-1].(map[string]any)
	if detail["status"] != "resolved" || len(hist) != 2 || first["event"] != "opened" || first["origin"] != "scan:"+spike ||
		last["event"] != "resolved" || last["origin"] != "scan:"+resolving || last["from_status"] != "open" || last["to_status"] != "resolved" {
		t.Fatalf("issue %v, history %v", detail["status"], hist)
	}
	// It stands no more: the verdict passes again, the four readings agree.
	if v := w.get(t, "/api/v1/datasets/"+w.datasetID+"/verdict"); v["verdict"] != "pass" {
		t.Fatalf("verdict %v", v)
	}
	assertSameCounts(t, w.readings(t), counts{})
	// A resolved issue stops deducting at the next scan.
	w.scan(t)
	dims, _ := w.dims(t)
	if dims["consistencia"] != 100.0 {
		t.Fatalf("consistencia %v", dims["consistencia"])
	}
}

// Must show 5: a new table whose rows drop by 80% between its 2nd and 3rd scans raises a
// volume signal — the gross-change thresholds judge from the second scan, long before
// the robust model has the 5 scans it needs.
func TestANewTableDroppingEightyPercentOnItsThirdScanRaisesAVolumeSignal(t *testing.T) {
	w := newWatched(t, "encomendas")
	w.src.exec(t, `CREATE TABLE encomendas (id bigint PRIMARY KEY, total numeric(10,2))`)
	w.src.exec(t, `INSERT INTO encomendas SELECT g, g * 0.5 FROM generate_series(1, 1000) g`)
	w.connect(t)
	w.scan(t)
	w.scan(t)
	if sig := w.signals(t, time.Time{}); len(sig) != 0 {
		t.Fatalf("signals before the drop: %v", sig)
	}
	w.src.exec(t, `DELETE FROM encomendas WHERE id % 5 <> 0`)
	third := w.scan(t)
	sig := w.signals(t, time.Time{})
	if len(sig) != 1 {
		t.Fatalf("signals %v", sig)
	}
	s := sig[0]
	issue := findIssue(t, w.issues(t), "anomaly", "volume", "open")
	if s["kind"] != "anomaly" || s["metric"] != "volume" || s["method"] != "gross_change" || s["severity"] != "critical" ||
		s["observed"] != 200.0 || s["baseline"] != 1000.0 || s["z"] != nil || s["scan_id"] != third || s["issue_id"] != issue["id"] {
		t.Fatalf("signal %v", s)
	}
	if issue["severity"] != "critical" || !strings.Contains(issue["title"].(string), "200 linhas (mediana 1000)") {
		t.Fatalf("issue %v", issue)
	}
}

// /signals filters by dataset, type (kind), metric and period, counts only what the
// caller can see, and refuses bad filters without echoing them; GraphQL answers the same.
func TestSignalsFilterByDatasetTypeAndPeriod(t *testing.T) {
	w := newWatched(t, "alfa")
	w.src.exec(t, `CREATE TABLE alfa (id bigint PRIMARY KEY, v text)`)
	w.src.exec(t, `CREATE TABLE beta (id bigint PRIMARY KEY, v text)`)
	w.src.exec(t, `INSERT INTO alfa SELECT g, 'x' || g FROM generate_series(1, 100) g`)
	w.src.exec(t, `INSERT INTO beta SELECT g, 'y' || g FROM generate_series(1, 100) g`)
	w.connect(t)
	w.scan(t)
	var ds []map[string]any
	w.env.Do(t, http.MethodGet, "/api/v1/datasets?connection_id="+w.connID+"&q=beta", w.tok, nil).JSON(t, &ds)
	if len(ds) != 1 {
		t.Fatalf("datasets %v", ds)
	}
	a, b := w.datasetID, ds[0]["id"].(string)
	before := time.Now()
	w.src.exec(t, `DELETE FROM alfa WHERE id > 10`)     // volume, on alfa
	w.src.exec(t, `ALTER TABLE beta ADD COLUMN w text`) // schema drift, on beta
	w.scan(t)

	total := func(t *testing.T, cred, query string) (int, []map[string]any) {
		t.Helper()
		r := w.env.Do(t, http.MethodGet, "/api/v1/signals"+query, cred, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		var out []map[string]any
		r.JSON(t, &out)
		n := 0
		fmt.Sscan(r.Header.Get("X-Total-Count"), &n)
		return n, out
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{"", 2},
		{"?dataset_id=" + a, 1},
		{"?dataset_id=" + b + "&type=schema_drift", 1},
		{"?type=anomaly", 1},
		{"?type=anomaly,schema_drift", 2},
		{"?metric=volume", 1},
		{"?metric=schema&dataset_id=" + a, 0},
		{"?since=" + before.UTC().Format(time.RFC3339Nano), 2},
		{"?until=" + before.UTC().Format(time.RFC3339Nano), 0},
		{"?since=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339), 0},
		{"?dataset_id=not-an-id", 0},
		{"?dataset_id=" + "00000000-0000-4000-8000-000000000000", 0},
	} {
		if n, items := total(t, w.tok, c.query); n != c.want || len(items) != c.want {
			t.Errorf("%s: total %d, %d items; want %d", c.query, n, len(items), c.want)
		}
	}
	if _, items := total(t, w.tok, "?dataset_id="+a); items[0]["metric"] != "volume" || items[0]["method"] != "gross_change" ||
		items[0]["observed_ci95"] != nil || items[0]["dataset_id"] != a {
		t.Errorf("volume signal %v", items[0])
	}

	t.Run("BadFiltersAre422WithoutEcho", func(t *testing.T) {
		for _, q := range []string{"?type=ECHO7731", "?metric=ECHO7731", "?since=ECHO7731", "?until=2026-13-01",
			"?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z"} {
			r := w.env.Do(t, http.MethodGet, "/api/v1/signals"+q, w.tok, nil)
			if r.Status != 422 || strings.Contains(string(r.Body), "ECHO7731") || !strings.Contains(string(r.Body), "validation_error") {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
		}
	})

	t.Run("OtherWorkspacesAndRestrictedDomainsStayOut", func(t *testing.T) {
		other := w.env.MustWorkspace(t, "other")
		if n, _ := total(t, w.env.MustToken(t, other), "?dataset_id="+a); n != 0 {
			t.Errorf("another workspace counts %d signals", n)
		}
		if n, _ := total(t, w.env.MustToken(t, other), ""); n != 0 {
			t.Errorf("another workspace counts %d signals", n)
		}
		r := w.env.Do(t, http.MethodPost, "/api/v1/domains", w.admin, map[string]any{"name": "Reservado", "restricted": true, "dataset_ids": []string{a}})
		if r.Status != 201 {
			t.Fatalf("domain: %d %s", r.Status, r.Body)
		}
		member := w.env.MustSession(t, w.ws, "member")
		if n, items := total(t, member, ""); n != 1 || items[0]["dataset_id"] != b {
			t.Errorf("a member without the grant sees %d signals: %v", n, items)
		}
		if n, _ := total(t, member, "?dataset_id="+a); n != 0 {
			t.Errorf("a member without the grant counts %d signals of the restricted dataset", n)
		}
		if n, _ := total(t, w.admin, ""); n != 2 {
			t.Errorf("the admin sees %d signals", n)
		}
	})

	t.Run("GraphQL", func(t *testing.T) {
		out := w.env.GraphQL(t, w.admin, `query($d: ID, $since: Time) { signals(datasetId: $d, type: ["anomaly"], since: $since) {
			total items { datasetId kind metric method severity observed observedCi95 baseline z issueId } } }`,
			map[string]any{"d": a, "since": before.UTC().Format(time.RFC3339Nano)})
		page, _ := out["data"].(map[string]any)["signals"].(map[string]any)
		if page == nil || page["total"] != 1.0 {
			t.Fatalf("graphql %v", out)
		}
		item := page["items"].([]any)[0].(map[string]any)
		if item["metric"] != "volume" || item["method"] != "gross_change" || item["severity"] != "critical" || item["observed"] != 10.0 {
			t.Fatalf("graphql item %v", item)
		}
		bad := w.env.GraphQL(t, w.admin, `{ signals(type: ["ECHO7731"]) { total } }`, nil)
		if bad["errors"] == nil || strings.Contains(fmt.Sprint(bad), "ECHO7731") {
			t.Fatalf("graphql bad type %v", bad)
		}
	})
}

// The contract's formulas stay as they are, and what they cannot show is said next to
// them: four critical null spikes in one scan deduct 120 points from a consistencia that
// stops at 0, so the score explanation names the dimension as saturated and the issue
// whose points fall past the floor; completude's note names the emptiest column next to
// the cell average.
func TestTheExplanationNamesWhatASaturatedScoreHides(t *testing.T) {
	w := newWatched(t, "fichas")
	w.src.exec(t, `CREATE TABLE fichas (id bigint PRIMARY KEY, a text, b text, c text, d text)`)
	w.src.exec(t, `INSERT INTO fichas SELECT g, 'a' || g, 'b' || g, 'c' || g, 'd' || g FROM generate_series(1, 1000) g`)
	w.connect(t)
	w.scan(t)
	w.scan(t)
	w.src.exec(t, `UPDATE fichas SET a = NULL, b = NULL, c = NULL WHERE id % 10 < 3`)
	w.src.exec(t, `UPDATE fichas SET d = NULL WHERE id % 10 < 4`)
	w.scan(t)
	issues := w.issues(t)
	if len(issues) != 4 {
		t.Fatalf("issues %v", issues)
	}
	var all []string
	for id, is := range issues {
		if is["severity"] != "critical" || is["subtype"] != "null_rate" {
			t.Fatalf("issue %v", is)
		}
		all = append(all, id)
	}
	slices.Sort(all)
	ex := w.get(t, "/api/v1/datasets/"+w.datasetID+"/score/explain")
	if ex["dimensions"].(map[string]any)["consistencia"] != 0.0 {
		t.Fatalf("consistencia %v", ex["dimensions"])
	}
	notes := map[string]map[string]any{}
	for _, n := range ex["notes"].([]any) {
		m := n.(map[string]any)
		notes[m["code"].(string)] = m["params"].(map[string]any)
	}
	sat := notes[quality.NoteDimensionSaturated]
	// All four were detected in this scan (age 0, 30 points each): counted in id order,
	// the last one's 30 points fall past 100.
	if sat == nil || sat["dimension"] != "consistencia" || sat["deduction"] != 120.0 || sat["hidden_points"] != 20.0 ||
		!slices.Equal(ids(sat["issues_beyond_floor"]), all[3:]) {
		t.Fatalf("saturation note %v (issues %v)", sat, all)
	}
	// 1000 rows × 5 columns, 1300 NULLs: 74 on average, while d is 60% complete.
	worst := notes[quality.NoteCompletudeWorstColumn]
	if worst == nil || worst["column"] != "d" || worst["column_completude"] != 60.0 || worst["cell_average"] != 74.0 {
		t.Fatalf("worst column note %v", worst)
	}
	meta := ex["dimensions_meta"].(map[string]any)["completude"].(map[string]any)["worst_column"].(map[string]any)
	if meta["column"] != "d" || meta["null_count"] != 400.0 || meta["rows"] != 1000.0 {
		t.Fatalf("dimensions_meta.completude.worst_column %v", meta)
	}
}
