package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/jobs"
	"github.com/vigia-data/vigia/store/storetest"
)

// The kill test re-runs this test binary as a worker process that it kills with SIGKILL;
// these variables turn TestMain into that worker.
const (
	childURLEnv  = "VIGIA_JOBS_TEST_CHILD_URL"
	childKindEnv = "VIGIA_JOBS_TEST_CHILD_KIND"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(childURLEnv); url != "" {
		os.Exit(runChild(url, os.Getenv(childKindEnv)))
	}
	os.Exit(storetest.Run(m))
}

// runChild works jobs of kind with a handler that announces the job on stdout and then
// blocks until it is killed.
func runChild(url, kind string) int {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: cannot open the pool")
		return 2
	}
	q := jobs.New(pool, jobs.Options{WorkerID: "child-worker", Logger: slog.New(slog.DiscardHandler)})
	q.Handle(kind, func(ctx context.Context, j jobs.Job) error {
		fmt.Printf("started %s %d\n", j.ID, j.Attempt)
		<-ctx.Done()
		return ctx.Err()
	})
	_ = q.Run(ctx)
	return 0
}

// bound caps every wait so that a broken queue fails the test instead of hanging it; no
// test asserts on how long anything takes.
const bound = 60 * time.Second

func recv[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		tb.Fatalf("gave up waiting for %s", what)
	}
	var zero T
	return zero
}

// eventually waits, bounded, until cond holds.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return storetest.MustDB(tb).Pool()
}

// newKind returns a job kind no other test uses, so that queues of different tests
// sharing the package database never work each other's jobs.
// Its jobs are deleted when the test ends.
func newKind(tb testing.TB) string {
	tb.Helper()
	kind := "test." + strings.ToLower(tb.Name()) + "." + vigia.NewUUID()[:8]
	pool := mustPool(tb)
	tb.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DELETE FROM jobs WHERE kind LIKE $1", kind+"%")
	})
	return kind
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startRun runs q.Run until the returned stop is called (or the test ends) and checks
// that Run returns.
func startRun(tb testing.TB, q *jobs.Queue) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("Run returned %v", err)
				}
			case <-time.After(bound):
				tb.Errorf("Run did not return after its ctx ended")
			}
		})
	}
	tb.Cleanup(stop)
	return stop
}

func mustEnqueue(tb testing.TB, ctx context.Context, q *jobs.Queue, kind string, args any, o jobs.EnqueueOpts) string {
	tb.Helper()
	id, err := q.Enqueue(ctx, kind, args, o)
	if err != nil {
		tb.Fatalf("Enqueue(%s): %v", kind, err)
	}
	return id
}

// jobRow is a job as stored.
type jobRow struct {
	Status      string
	Attempts    int
	MaxAttempts int
	LastError   *string
	LockedBy    *string
	RunAt       time.Time
	Finished    bool
}

func mustRow(tb testing.TB, pool *pgxpool.Pool, id string) jobRow {
	tb.Helper()
	var r jobRow
	err := pool.QueryRow(context.Background(), `SELECT status, attempts, max_attempts, last_error,
		locked_by, run_at, finished_at IS NOT NULL FROM jobs WHERE id = $1`, id).
		Scan(&r.Status, &r.Attempts, &r.MaxAttempts, &r.LastError, &r.LockedBy, &r.RunAt, &r.Finished)
	if err != nil {
		tb.Fatalf("read job %s: %v", id, err)
	}
	return r
}

func dbNow(tb testing.TB, pool *pgxpool.Pool) time.Time {
	tb.Helper()
	var now time.Time
	if err := pool.QueryRow(context.Background(), "SELECT clock_timestamp()").Scan(&now); err != nil {
		tb.Fatalf("read the database clock: %v", err)
	}
	return now
}

func mustExec(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	tb.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("exec: %v", err)
	}
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var errRollback = errors.New("roll back")
