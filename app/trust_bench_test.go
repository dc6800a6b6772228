package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// benchDatasets is the size of the benchmark workspace.
const benchDatasets = 10000

// seedBenchWorkspace fills a workspace with 10,000 scanned datasets: 8 columns each (two
// with personal data), 3 profiles with scores and verdicts, warning issues on 10% and
// critical ones on 2%, 20 domains of 500 datasets with owners, and reads by consumers.
func seedBenchWorkspace(b *testing.B, env *apptest.Env) (ws, token string, ids []string) {
	b.Helper()
	ws = env.MustWorkspace(b, "bench")
	token = env.MustToken(b, ws)
	conn := env.MustConnection(b, ws, "dw")
	ctx := context.Background()
	pool := env.DB.Pool()
	run := func(q string, args ...any) {
		b.Helper()
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	run(`INSERT INTO datasets (id, workspace_id, connection_id, schema_name, table_name, kind, latest_score, last_scan_at, queries_per_day, created_at)
		SELECT gen_random_uuid(), $1, $2, (ARRAY['raw','stg','marts','vendas'])[1 + g % 4], 't' || g, 'table', 50 + g % 50, now(), g % 200,
		now() - interval '90 days' FROM generate_series(1, $3::int) g`, ws, conn, benchDatasets)
	run(`INSERT INTO dataset_columns (dataset_id, name, position, data_type, class, nullable, primary_key, profile)
		SELECT d.id, c.name, c.pos, 'text', 'text', true, c.pos = 1,
			CASE WHEN c.name = 'email' THEN '{"null_count":1,"null_rate":0.01,"semantic":{"type":"email","estimated":true,"sample_size":100,"matches":99,"valid":99}}'::jsonb
			ELSE '{"null_count":0,"null_rate":0}'::jsonb END
		FROM datasets d CROSS JOIN (VALUES ('id',1),('email',2),('nif_cliente',3),('estado',4),('valor',5),('criado_em',6),('canal',7),('nota',8)) c(name, pos)
		WHERE d.workspace_id = $1`, ws)
	for seq := 1; seq <= 3; seq++ {
		scan := seedScan(b, env, ws, conn, "succeeded", time.Now().Add(-time.Duration(3-seq)*24*time.Hour))
		run(`INSERT INTO dataset_profiles (dataset_id, scan_id, workspace_id, seq, row_count, depth, columns, metrics, profiled_at, latest_timestamp)
			SELECT id, $2, $1, $3, 10000, 'standard', '[]', '{}', now() - ($4::int * interval '1 day'), now() - ($4::int * interval '1 day') - interval '1 hour'
			FROM datasets WHERE workspace_id = $1`, ws, scan, seq, 3-seq)
		run(`INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at)
			SELECT id, $2, $1, $3, latest_score, jsonb_build_object('score', latest_score, 'dimensions',
				jsonb_build_object('completude', 90 + random() * 10, 'unicidade', 100, 'validade', 95, 'atualidade', 100, 'consistencia', 100)), now()
			FROM datasets WHERE workspace_id = $1`, ws, scan, seq)
		run(`INSERT INTO verdicts (dataset_id, scan_id, workspace_id, seq, verdict, detail, created_at)
			SELECT id, $2, $1, $3, CASE WHEN latest_score < 60 THEN 'warn' ELSE 'pass' END, '{}', now() FROM datasets WHERE workspace_id = $1`, ws, scan, seq)
	}
	run(`INSERT INTO issues (id, workspace_id, dataset_id, type, severity, status, title, created_at, updated_at)
		SELECT gen_random_uuid(), $1, id, 'anomaly', CASE WHEN n % 50 = 0 THEN 'critical' ELSE 'warning' END, 'open', 'x', now(), now()
		FROM (SELECT id, row_number() OVER (ORDER BY id) n FROM datasets WHERE workspace_id = $1) d WHERE n % 10 = 0`, ws)
	run(`INSERT INTO domains (id, workspace_id, name, owner_name) SELECT gen_random_uuid(), $1, 'dominio ' || g, 'Equipa ' || g
		FROM generate_series(1, 20) g`, ws)
	run(`INSERT INTO domain_datasets (domain_id, dataset_id)
		SELECT dm.id, d.id FROM (SELECT id, row_number() OVER (ORDER BY id) n FROM datasets WHERE workspace_id = $1) d
		JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 k FROM domains WHERE workspace_id = $1) dm ON dm.k = d.n % 20`, ws)
	run(`INSERT INTO consumers (id, workspace_id, name, kind, created_at) SELECT gen_random_uuid(), $1, 'agente ' || g, 'agent', now()
		FROM generate_series(1, 10) g`, ws)
	run(`INSERT INTO consumptions (id, workspace_id, consumer_id, purpose, actor, created_at)
		SELECT gen_random_uuid(), $1, c.id, 'rag', 'bench', now() - (g * interval '1 hour') FROM consumers c, generate_series(1, 100) g
		WHERE c.workspace_id = $1`, ws)
	run(`INSERT INTO consumption_datasets (consumption_id, dataset_id, workspace_id, consumer_id, purpose, decision_seen, trust_as_of, created_at)
		SELECT cs.id, d.id, $1, cs.consumer_id, 'rag', 'trusted', cs.created_at, cs.created_at
		FROM (SELECT id, consumer_id, created_at, row_number() OVER (ORDER BY id) n FROM consumptions WHERE workspace_id = $1) cs
		JOIN (SELECT id, row_number() OVER (ORDER BY id) n FROM datasets WHERE workspace_id = $1) d ON d.n % 1000 = cs.n % 1000`, ws)
	run(`ANALYZE`)
	rows, err := pool.Query(ctx, `SELECT id::text FROM datasets WHERE workspace_id = $1`, ws)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ws, token, ids
}

// latencies reports p50 and p99 in milliseconds and decisions per second.
func latencies(b *testing.B, ds []time.Duration, perCall int) {
	b.Helper()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	pick := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pick(0.50), "p50-ms")
	b.ReportMetric(pick(0.99), "p99-ms")
	b.ReportMetric(float64(len(ds)*perCall)/total.Seconds(), "decisions/s")
}

// BenchmarkTrustDecisions measures trust decisions through the HTTP API with an API
// token (each call audited) against a workspace of 10,000 datasets: one dataset per
// call, and batches of 50. Run: go test ./app -run '^$' -bench TrustDecisions -benchtime 2000x
func BenchmarkTrustDecisions(b *testing.B) {
	env := apptest.MustStart(b, app.Config{RateLimitToken: 1 << 30, RateLimitIP: 1 << 30})
	_, token, ids := seedBenchWorkspace(b, env)
	client := env.Server.Client()
	r := rand.New(rand.NewPCG(1, 2))
	call := func(b *testing.B, method, path string, body []byte) {
		req, _ := http.NewRequest(method, env.Server.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s %s: %d", method, path, res.StatusCode)
		}
	}
	b.Run("Single", func(b *testing.B) {
		ds := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			id := ids[r.IntN(len(ids))]
			start := time.Now()
			call(b, http.MethodGet, "/api/v1/datasets/"+id+"/trust-decision?purpose=rag", nil)
			ds = append(ds, time.Since(start))
		}
		b.StopTimer()
		latencies(b, ds, 1)
	})
	b.Run("Batch50", func(b *testing.B) {
		ds := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			batch := make([]string, 50)
			for j := range batch {
				batch[j] = ids[r.IntN(len(ids))]
			}
			body, _ := json.Marshal(map[string]any{"dataset_ids": batch, "purpose": "rag"})
			start := time.Now()
			call(b, http.MethodPost, "/api/v1/trust-decisions", body)
			ds = append(ds, time.Since(start))
		}
		b.StopTimer()
		latencies(b, ds, 50)
	})
}
