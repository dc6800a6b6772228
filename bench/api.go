package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigia-data/vigia"
)

// APIDatabaseURL points databaseURL at the kept database of `vigia bench api`.
func APIDatabaseURL(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Path == "" {
		return "", fmt.Errorf("DATABASE_URL is not a valid Postgres URL")
	}
	u.Path = "/vigia_bench_api"
	return u.String(), nil
}

// SeedCatalog writes the catalog of `vigia bench api` into workspace ws: the lineage
// warehouse of SeedLineage (n datasets in pipelines of 100 with their columns and
// edges), queries per day spread over four orders of magnitude, a score history of
// three scans for one dataset in ten, and one restricted-access domain of 100 datasets
// without grants (hidden from token callers), so that lists pay for visibility.
// It returns the dataset ids and the ids of the hidden datasets.
func SeedCatalog(ctx context.Context, pool *pgxpool.Pool, ws string, n int) ([]string, []string, error) {
	ids, _, err := SeedLineage(ctx, pool, ws, n, 100, 10, 450)
	if err != nil {
		return nil, nil, err
	}
	// Usage: deterministic per dataset, zero for about a tenth.
	if _, err := pool.Exec(ctx, `UPDATE datasets SET queries_per_day = CASE WHEN abs(hashtext(id::text)) % 10 = 0 THEN 0
		ELSE round((abs(hashtext(id::text)) % 100000)::numeric / (1 + abs(hashtext(table_name)) % 100), 2) END
		WHERE workspace_id = $1`, ws); err != nil {
		return nil, nil, err
	}
	scans := []string{vigia.NewID(), vigia.NewID(), vigia.NewID()}
	if _, err := pool.Exec(ctx, `INSERT INTO scans (id, workspace_id, connection_id, status, trigger)
		SELECT s, $1, (SELECT connection_id FROM datasets WHERE workspace_id = $1 LIMIT 1), 'succeeded', 'manual' FROM unnest($2::uuid[]) s`,
		ws, scans); err != nil {
		return nil, nil, fmt.Errorf("seed scans: %w", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO scores (dataset_id, scan_id, workspace_id, seq, score, detail, created_at)
		SELECT d.id, ($2::uuid[])[k], $1, k, 80 + k, jsonb_build_object('dimensions', jsonb_build_object('completeness', 90, 'validity', 85,
			'uniqueness', 100, 'freshness', 70, 'consistency', 95)), now() - make_interval(days => 3 - k)
		FROM datasets d, generate_series(1, 3) k WHERE d.workspace_id = $1 AND abs(hashtext(d.id::text)) % 10 = 1`, ws, scans); err != nil {
		return nil, nil, fmt.Errorf("seed scores: %w", err)
	}
	dom := vigia.NewID()
	if _, err := pool.Exec(ctx, `INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, 'restricted', true)`, dom, ws); err != nil {
		return nil, nil, err
	}
	var hidden []string
	for i := 0; i < 100 && i*(n/100) < n; i++ {
		hidden = append(hidden, ids[i*(n/100)+n/200])
	}
	if _, err := pool.Exec(ctx, `INSERT INTO domain_datasets (domain_id, dataset_id) SELECT $1, unnest($2::uuid[])`, dom, hidden); err != nil {
		return nil, nil, err
	}
	if _, err := pool.Exec(ctx, `ANALYZE datasets, dataset_columns, lineage_edges, scores, domain_datasets`); err != nil {
		return nil, nil, err
	}
	return ids, hidden, nil
}

// PlainReads are the baselines of `vigia bench api`: what an application reading the
// catalog's table with pgx on its own pool pays, without Vigia in between.
type PlainReads struct{ pool *pgxpool.Pool }

// OpenPlainReads opens a pool of conns connections on databaseURL.
func OpenPlainReads(ctx context.Context, databaseURL string, conns int) (*PlainReads, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("the bench database URL does not parse")
	}
	cfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &PlainReads{pool: pool}, nil
}

// Close closes the pool.
func (p *PlainReads) Close() { p.pool.Close() }

// DatasetByKey reads one dataset's name by its primary key.
func (p *PlainReads) DatasetByKey(ctx context.Context, id string) error {
	var name string
	return p.pool.QueryRow(ctx, `SELECT schema_name || '.' || table_name FROM datasets WHERE id = $1`, id).Scan(&name)
}

// CountDatasets counts a workspace's datasets.
func (p *PlainReads) CountDatasets(ctx context.Context, ws string) error {
	var n int
	return p.pool.QueryRow(ctx, `SELECT count(*) FROM datasets WHERE workspace_id = $1`, ws).Scan(&n)
}

// BackendCPU is the CPU time the server's backends connected to this database have used
// so far, by process id (Postgres on this machine: /proc/<pid>/stat); a bench takes the
// difference over a phase for the database's own cost per request, which the load of
// other processes does not change. Empty when the server's processes are not visible.
func (p *PlainReads) BackendCPU(ctx context.Context) (map[int]time.Duration, error) {
	rows, err := p.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: utime and stime are the 12th
		// and 13th, in clock ticks (100 a second on Linux).
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 13 {
			continue
		}
		ut, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out[int(pid)] = time.Duration(ut+st) * 10 * time.Millisecond
	}
	return out, nil
}

// DatabaseURL points databaseURL at the database name on the same server (a kept bench
// database).
func DatabaseURL(databaseURL, name string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Path == "" {
		return "", fmt.Errorf("DATABASE_URL is not a valid Postgres URL")
	}
	u.Path = "/" + name
	return u.String(), nil
}
