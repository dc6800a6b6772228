package jobs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/jobs"
	"github.com/vigia-data/vigia/store/storetest"
)

func TestEnqueueInRolledBackTransactionLeavesNoJob(t *testing.T) {
	db := storetest.MustDB(t)
	q := jobs.New(db.Pool(), jobs.Options{Logger: quietLogger()})
	kind := newKind(t)
	ctx := context.Background()

	err := db.InTx(ctx, func(ctx context.Context) error {
		mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{})
		queued, _, err := q.Counts(ctx, kind, "")
		if err != nil || queued != 1 {
			t.Errorf("inside the transaction Counts = %d, %v; want 1", queued, err)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx = %v", err)
	}
	queued, running, err := q.Counts(ctx, kind, "")
	if err != nil || queued != 0 || running != 0 {
		t.Fatalf("after rollback Counts = %d, %d, %v; want no job", queued, running, err)
	}
	q.Handle(kind, func(context.Context, jobs.Job) error { return nil })
	if ran, err := q.RunOne(ctx, kind); ran || err != nil {
		t.Fatalf("RunOne = %v, %v; want nothing to run", ran, err)
	}
}

func TestEnqueueInCommittedTransactionRunsOnceWokenByNotify(t *testing.T) {
	db := storetest.MustDB(t)
	// Polling once an hour: only the NOTIFY sent at commit can wake the worker in time.
	q := jobs.New(db.Pool(), jobs.Options{Poll: time.Hour, Logger: quietLogger()})
	kind := newKind(t)
	type args struct {
		ScanID string `json:"scan_id"`
	}
	var runs atomic.Int32
	got := make(chan jobs.Job, 10)
	q.Handle(kind, func(_ context.Context, j jobs.Job) error {
		runs.Add(1)
		got <- j
		return nil
	})
	stop := startRun(t, q)

	ws := vigia.NewUUID()
	var id string
	err := db.InTx(context.Background(), func(ctx context.Context) error {
		id = mustEnqueue(t, ctx, q, kind, args{ScanID: "s-1"}, jobs.EnqueueOpts{WorkspaceID: ws})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	j := recv(t, got, "the committed job to run")
	stop()

	if j.ID != id || j.Kind != kind || j.WorkspaceID != ws || j.Attempt != 1 || j.MaxAttempts != 3 {
		t.Errorf("handler got %+v; want id %s, workspace %s, attempt 1 of 3", j, id, ws)
	}
	var a args
	if err := json.Unmarshal(j.Args, &a); err != nil || a.ScanID != "s-1" {
		t.Errorf("args = %s (%v); want scan_id s-1", j.Args, err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times; want 1", n)
	}
	if r := mustRow(t, db.Pool(), id); r.Status != jobs.StatusSucceeded || !r.Finished || r.Attempts != 1 {
		t.Errorf("row = %+v; want succeeded after 1 attempt", r)
	}
	if ran, err := q.RunOne(context.Background(), kind); ran || err != nil {
		t.Errorf("RunOne after success = %v, %v; want nothing left", ran, err)
	}
	if s := q.Stats(); s.Run != 1 || s.Succeeded != 1 {
		t.Errorf("Stats = %+v; want 1 run, 1 succeeded", s)
	}
}

func TestEnqueueRejectsInvalidOptions(t *testing.T) {
	q := jobs.New(mustPool(t), jobs.Options{Logger: quietLogger()})
	ctx := context.Background()
	tests := []struct {
		name string
		kind string
		o    jobs.EnqueueOpts
	}{
		{"EmptyKind", "", jobs.EnqueueOpts{}},
		{"WorkspaceNotUUID", "k", jobs.EnqueueOpts{WorkspaceID: "ws-1"}},
		{"NegativeMaxAttempts", "k", jobs.EnqueueOpts{MaxAttempts: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := q.Enqueue(ctx, tt.kind, nil, tt.o); !vigia.IsKind(err, vigia.KindInvalid) {
				t.Errorf("Enqueue = %v; want KindInvalid", err)
			}
		})
	}
}

func TestRetryReschedulesAfterTheDelayThenFailsAfterMaxAttempts(t *testing.T) {
	pool := mustPool(t)
	q := jobs.New(pool, jobs.Options{Logger: quietLogger()})
	kind := newKind(t)
	ctx := context.Background()
	var attempts []int
	q.Handle(kind, func(_ context.Context, j jobs.Job) error {
		attempts = append(attempts, j.Attempt)
		return jobs.Retry(jobs.WithCode("http_503", errors.New("upstream said 503")), time.Second)
	})
	id := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{MaxAttempts: 2})

	before := dbNow(t, pool)
	if ran, err := q.RunOne(ctx, kind); !ran || err != nil {
		t.Fatalf("RunOne = %v, %v", ran, err)
	}
	after := dbNow(t, pool)
	r := mustRow(t, pool, id)
	if r.Status != jobs.StatusAvailable || r.Attempts != 1 || str(r.LastError) != "http_503" || r.Finished {
		t.Fatalf("after a Retry row = %+v; want available, 1 attempt, last_error http_503", r)
	}
	if r.RunAt.Before(before.Add(time.Second)) || r.RunAt.After(after.Add(time.Second)) {
		t.Errorf("run_at = %v; want now+1s, between %v and %v", r.RunAt, before.Add(time.Second), after.Add(time.Second))
	}
	if ran, err := q.RunOne(ctx, kind); ran || err != nil {
		t.Fatalf("RunOne before run_at = %v, %v; want nothing due", ran, err)
	}

	mustExec(t, pool, "UPDATE jobs SET run_at = now() WHERE id = $1", id)
	if ran, err := q.RunOne(ctx, kind); !ran || err != nil {
		t.Fatalf("second RunOne = %v, %v", ran, err)
	}
	r = mustRow(t, pool, id)
	if r.Status != jobs.StatusFailed || r.Attempts != 2 || str(r.LastError) != "http_503" || !r.Finished {
		t.Errorf("after the last attempt row = %+v; want failed after 2 attempts", r)
	}
	if fmt.Sprint(attempts) != "[1 2]" {
		t.Errorf("handler saw attempts %v; want [1 2]", attempts)
	}
	if s := q.Stats(); s.Run != 2 || s.Retried != 1 || s.Failed != 1 {
		t.Errorf("Stats = %+v; want 2 runs, 1 retried, 1 failed", s)
	}
}

func TestOutcomesOfHandlerErrors(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	tests := []struct {
		name            string
		err             error
		wantStatus      string
		wantMaxAttempts int
		wantLastError   string
		wantDelayed     bool
	}{
		{"PlainErrorRetriesWithBackoff", errors.New("dial tcp 10.0.0.1: secret-ish detail"), jobs.StatusAvailable, 3, "error", true},
		{"VigiaErrorKeepsItsCode", vigia.NotFound(), jobs.StatusAvailable, 3, "not_found", true},
		{"TimeoutIsNamed", fmt.Errorf("query: %w", context.DeadlineExceeded), jobs.StatusAvailable, 3, "timeout", true},
		{"PermanentFailsAtOnce", jobs.Permanent(jobs.WithCode("http_410", errors.New("gone"))), jobs.StatusFailed, 3, "http_410", false},
		{"SnoozeDoesNotUseAnAttempt", jobs.Snooze(time.Hour), jobs.StatusAvailable, 4, "<nil>", true},
		{"InvalidCodeIsNotStored", jobs.WithCode("Password=hunter2", errors.New("x")), jobs.StatusAvailable, 3, "error", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := jobs.New(pool, jobs.Options{Logger: quietLogger()})
			kind := newKind(t)
			q.Handle(kind, func(context.Context, jobs.Job) error { return tt.err })
			id := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{})
			if ran, err := q.RunOne(ctx, kind); !ran || err != nil {
				t.Fatalf("RunOne = %v, %v", ran, err)
			}
			now := dbNow(t, pool)
			r := mustRow(t, pool, id)
			if r.Status != tt.wantStatus || r.MaxAttempts != tt.wantMaxAttempts || str(r.LastError) != tt.wantLastError || r.Attempts != 1 {
				t.Errorf("row = %+v (last_error %s); want %s, max_attempts %d, last_error %s",
					r, str(r.LastError), tt.wantStatus, tt.wantMaxAttempts, tt.wantLastError)
			}
			if tt.wantDelayed && !r.RunAt.After(now) {
				t.Errorf("run_at %v is not after now %v", r.RunAt, now)
			}
		})
	}
}

func TestDefaultBackoffGrowsWithTheAttemptAndIsCapped(t *testing.T) {
	tests := []struct {
		attempt  int
		low, top time.Duration
	}{
		{1, 900 * time.Millisecond, 1100 * time.Millisecond},
		{2, 14400 * time.Millisecond, 17600 * time.Millisecond},
		{3, 72900 * time.Millisecond, 89100 * time.Millisecond},
		{50, 3240 * time.Second, 3960 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.attempt), func(t *testing.T) {
			for range 100 {
				if d := jobs.DefaultBackoff(tt.attempt); d < tt.low || d > tt.top {
					t.Fatalf("DefaultBackoff(%d) = %v; want within [%v, %v]", tt.attempt, d, tt.low, tt.top)
				}
			}
		})
	}
}

func TestUniqueKeyDeduplicatesWhileQueuedOrRunningAndAllowsAgainAfterFinish(t *testing.T) {
	db := storetest.MustDB(t)
	pool := db.Pool()
	q := jobs.New(pool, jobs.Options{Heartbeat: time.Hour, Logger: quietLogger()})
	kind := newKind(t)
	ctx := context.Background()
	key := "connection:" + vigia.NewUUID()

	id1 := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{UniqueKey: key})
	if id, err := q.Enqueue(ctx, kind, nil, jobs.EnqueueOpts{UniqueKey: key}); !errors.Is(err, jobs.ErrDuplicate) || id != id1 {
		t.Fatalf("duplicate while queued = %s, %v; want %s, ErrDuplicate", id, err, id1)
	}
	// The key is per kind.
	other := mustEnqueue(t, ctx, q, kind+".other", nil, jobs.EnqueueOpts{UniqueKey: key})
	if err := q.Cancel(ctx, other); err != nil {
		t.Fatal(err)
	}
	// A duplicate inside a transaction leaves the transaction usable.
	err := db.InTx(ctx, func(ctx context.Context) error {
		if id, err := q.Enqueue(ctx, kind, nil, jobs.EnqueueOpts{UniqueKey: key}); !errors.Is(err, jobs.ErrDuplicate) || id != id1 {
			t.Errorf("duplicate in a transaction = %s, %v; want %s, ErrDuplicate", id, err, id1)
		}
		_, _, err := q.Counts(ctx, kind, "")
		return err
	})
	if err != nil {
		t.Fatalf("transaction after a duplicate: %v", err)
	}

	started, release := make(chan struct{}), make(chan struct{})
	q.Handle(kind, func(context.Context, jobs.Job) error {
		close(started)
		<-release
		return nil
	})
	ranDone := make(chan error, 1)
	go func() {
		_, err := q.RunOne(ctx, kind)
		ranDone <- err
	}()
	recv(t, started, "the job to start")
	if id, err := q.Enqueue(ctx, kind, nil, jobs.EnqueueOpts{UniqueKey: key}); !errors.Is(err, jobs.ErrDuplicate) || id != id1 {
		t.Errorf("duplicate while running = %s, %v; want %s, ErrDuplicate", id, err, id1)
	}
	close(release)
	if err := recv(t, ranDone, "RunOne to return"); err != nil {
		t.Fatal(err)
	}

	id2, err := q.Enqueue(ctx, kind, nil, jobs.EnqueueOpts{UniqueKey: key})
	if err != nil || id2 == id1 {
		t.Fatalf("after the job finished Enqueue = %s, %v; want a new job", id2, err)
	}
}

// A worker dies holding a job: its heartbeat stops, another Queue reaps the job and runs
// it again, and when the first worker comes back to life its outcome is dropped.
func TestReapedJobRunsAgainOnAnotherQueueAndTheStaleWorkerCannotOverwriteIt(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	kind := newKind(t)

	// Worker A beats once an hour and gives up waiting for its handler at once on stop,
	// leaving the row running as a killed process would.
	qa := jobs.New(pool, jobs.Options{WorkerID: "worker-a", Heartbeat: time.Hour, StopTimeout: time.Millisecond, Logger: quietLogger()})
	startedA, releaseA := make(chan jobs.Job, 1), make(chan struct{})
	qa.Handle(kind, func(_ context.Context, j jobs.Job) error {
		startedA <- j
		<-releaseA // ignores its ctx: the process is "dead"
		return errors.New("a late outcome that must not be recorded")
	})
	stopA := startRun(t, qa)
	id := mustEnqueue(t, ctx, qa, kind, nil, jobs.EnqueueOpts{})
	if j := recv(t, startedA, "worker A to start the job"); j.Attempt != 1 {
		t.Fatalf("first run attempt = %d", j.Attempt)
	}
	stopA()
	defer close(releaseA)
	if r := mustRow(t, pool, id); r.Status != jobs.StatusRunning || str(r.LockedBy) != "worker-a" {
		t.Fatalf("after A stopped row = %+v; want still running, locked by worker-a", r)
	}

	logs := &syncBuffer{}
	qb := jobs.New(pool, jobs.Options{WorkerID: "worker-b", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	var attemptB atomic.Int32
	qb.Handle(kind, func(_ context.Context, j jobs.Job) error {
		attemptB.Store(int32(j.Attempt))
		return nil
	})
	if n, err := qb.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("Reap with a fresh heartbeat = %d, %v; want 0", n, err)
	}
	mustExec(t, pool, "UPDATE jobs SET heartbeat_at = now() - interval '1 hour' WHERE id = $1", id)
	if n, err := qb.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("Reap = %d, %v; want 1", n, err)
	}
	if r := mustRow(t, pool, id); r.Status != jobs.StatusAvailable || r.Attempts != 1 || str(r.LastError) != "worker_lost" || r.LockedBy != nil {
		t.Fatalf("after Reap row = %+v; want available, 1 attempt, worker_lost", r)
	}
	if !strings.Contains(logs.String(), "reaped") || !strings.Contains(logs.String(), id) {
		t.Errorf("reap was not logged with the job id: %q", logs.String())
	}
	if ran, err := qb.RunOne(ctx, kind); !ran || err != nil {
		t.Fatalf("B RunOne = %v, %v", ran, err)
	}
	if got := attemptB.Load(); got != 2 {
		t.Errorf("B saw attempt %d; want 2", got)
	}

	releaseA <- struct{}{}
	eventually(t, "worker A to drop its outcome", func() bool { return qa.Stats().Lost == 1 })
	r := mustRow(t, pool, id)
	if r.Status != jobs.StatusSucceeded || r.Attempts != 2 || str(r.LockedBy) != "worker-b" {
		t.Errorf("final row = %+v; want succeeded by worker-b after 2 attempts", r)
	}
	if s := qb.Stats(); s.Reaped != 1 || s.Succeeded != 1 {
		t.Errorf("B Stats = %+v; want 1 reaped, 1 succeeded", s)
	}
	if s := qa.Stats(); s.Failed != 0 || s.Retried != 0 || s.Lost != 1 {
		t.Errorf("A Stats = %+v; want its outcome lost", s)
	}
}

// The real thing: a worker process is killed with SIGKILL in the middle of a job, and a
// Queue in this process takes the job over through its periodic reaper.
func TestJobOfAKilledWorkerProcessRunsAgainElsewhere(t *testing.T) {
	pool := mustPool(t)
	url := storetest.MustURL(t)
	ctx := context.Background()
	kind := newKind(t)
	id := mustEnqueue(t, ctx, jobs.New(pool, jobs.Options{Logger: quietLogger()}), kind, nil, jobs.EnqueueOpts{})

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childURLEnv+"="+url, childKindEnv+"="+kind)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var reapChild sync.Once
	kill := func() {
		reapChild.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
	}()
	if line := recv(t, lines, "the worker process to start the job"); line != "started "+id+" 1" {
		t.Fatalf("worker process said %q; want it to start job %s", line, id)
	}
	kill()
	if r := mustRow(t, pool, id); r.Status != jobs.StatusRunning || str(r.LockedBy) != "child-worker" {
		t.Fatalf("after the kill row = %+v; want running, locked by the dead worker", r)
	}

	q := jobs.New(pool, jobs.Options{WorkerID: "survivor", Heartbeat: 50 * time.Millisecond,
		StaleAfter: 200 * time.Millisecond, Logger: quietLogger()})
	got := make(chan jobs.Job, 1)
	q.Handle(kind, func(_ context.Context, j jobs.Job) error {
		got <- j
		return nil
	})
	stop := startRun(t, q)
	j := recv(t, got, "the survivor to run the job again")
	stop()
	if j.ID != id || j.Attempt != 2 {
		t.Errorf("survivor ran %s attempt %d; want %s attempt 2", j.ID, j.Attempt, id)
	}
	if r := mustRow(t, pool, id); r.Status != jobs.StatusSucceeded || r.Attempts != 2 || str(r.LockedBy) != "survivor" {
		t.Errorf("final row = %+v; want succeeded by the survivor after 2 attempts", r)
	}
	if s := q.Stats(); s.Reaped != 1 {
		t.Errorf("Stats = %+v; want 1 reaped", s)
	}
}

// wsTracker counts the running handlers of each workspace.
type wsTracker struct {
	mu      sync.Mutex
	running map[string]int
	peak    map[string]int
}

func newTracker() *wsTracker {
	return &wsTracker{running: map[string]int{}, peak: map[string]int{}}
}

// enter records a start and returns how many jobs of every workspace were running then.
func (w *wsTracker) enter(ws string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running[ws]++
	w.peak[ws] = max(w.peak[ws], w.running[ws])
	snap := make(map[string]int, len(w.running))
	for k, v := range w.running {
		snap[k] = v
	}
	return snap
}

func (w *wsTracker) leave(ws string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running[ws]--
}

func (w *wsTracker) peaks() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.peak))
	for k, v := range w.peak {
		out[k] = v
	}
	return out
}

func TestPerWorkspaceBoundHoldsOneWorkspaceBackWhileAnotherRuns(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	kind := newKind(t)
	w1, w2 := vigia.NewUUID(), vigia.NewUUID()
	q := jobs.New(pool, jobs.Options{Concurrency: map[string]int{jobs.DefaultQueue: 4}, PerWorkspace: 1,
		Poll: 20 * time.Millisecond, Logger: quietLogger()})

	// Priorities make the order of claims certain: a1, then a2 (held back), then b1.
	a1 := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{WorkspaceID: w1, Priority: 2})
	a2 := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{WorkspaceID: w1, Priority: 1})
	b1 := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{WorkspaceID: w2})
	release := map[string]chan struct{}{a1: make(chan struct{}), a2: make(chan struct{}), b1: make(chan struct{})}
	type start struct {
		id   string
		snap map[string]int
	}
	started := make(chan start, 3)
	tr := newTracker()
	q.Handle(kind, func(_ context.Context, j jobs.Job) error {
		snap := tr.enter(j.WorkspaceID)
		defer tr.leave(j.WorkspaceID)
		started <- start{j.ID, snap}
		<-release[j.ID]
		return nil
	})
	stop := startRun(t, q)

	first := map[string]start{}
	for range 2 {
		s := recv(t, started, "two jobs to start")
		first[s.id] = s
	}
	if _, ok := first[a1]; !ok {
		t.Fatalf("first two jobs %v; want a1 %s among them", first, a1)
	}
	sb, ok := first[b1]
	if !ok {
		t.Fatalf("first two jobs %v; want b1 %s (other workspace) among them, not a2", first, b1)
	}
	if sb.snap[w1] != 1 {
		t.Errorf("when w2's job started, w1 had %d running; want 1 (running meanwhile)", sb.snap[w1])
	}
	// Another process with the same bound finds nothing it may claim.
	other := jobs.New(pool, jobs.Options{PerWorkspace: 1, Logger: quietLogger()})
	other.Handle(kind, func(context.Context, jobs.Job) error { return nil })
	if ran, err := other.RunOne(ctx, kind); ran || err != nil {
		t.Fatalf("another queue's RunOne = %v, %v; want w1's second job held back", ran, err)
	}
	if queued, running, err := q.Counts(ctx, kind, w1); err != nil || queued != 1 || running != 1 {
		t.Errorf("Counts(w1) = %d queued, %d running, %v; want 1, 1", queued, running, err)
	}

	close(release[a1])
	if s := recv(t, started, "w1's second job to start"); s.id != a2 {
		t.Fatalf("started %s; want a2 %s", s.id, a2)
	}
	close(release[a2])
	close(release[b1])
	eventually(t, "all three jobs to succeed", func() bool { return q.Stats().Succeeded == 3 })
	stop()
	if p := tr.peaks(); p[w1] != 1 || p[w2] != 1 {
		t.Errorf("peak running per workspace = %v; want 1 each", p)
	}
}

func TestPerWorkspaceBoundHoldsUnderConcurrentClaimers(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	kind := newKind(t)
	workspaces := []string{vigia.NewUUID(), vigia.NewUUID(), vigia.NewUUID()}
	const perWorkspace = 8
	tr := newTracker()
	done := make(chan struct{}, len(workspaces)*perWorkspace)
	var queues []*jobs.Queue
	for i := range 3 {
		q := jobs.New(pool, jobs.Options{WorkerID: fmt.Sprintf("claimer-%d", i), PerWorkspace: 1,
			Concurrency: map[string]int{jobs.DefaultQueue: 4}, Poll: 5 * time.Millisecond, Logger: quietLogger()})
		q.Handle(kind, func(_ context.Context, j jobs.Job) error {
			tr.enter(j.WorkspaceID)
			defer tr.leave(j.WorkspaceID)
			time.Sleep(2 * time.Millisecond) // widen the window in which claims could overlap
			done <- struct{}{}
			return nil
		})
		queues = append(queues, q)
	}
	for _, ws := range workspaces {
		for range perWorkspace {
			mustEnqueue(t, ctx, queues[0], kind, nil, jobs.EnqueueOpts{WorkspaceID: ws})
		}
	}
	for _, q := range queues {
		startRun(t, q)
	}
	for range len(workspaces) * perWorkspace {
		recv(t, done, "every job to run")
	}
	for ws, p := range tr.peaks() {
		if p != 1 {
			t.Errorf("workspace %s had %d jobs running at once; want 1", ws, p)
		}
	}
	eventually(t, "every job to be recorded", func() bool {
		queued, running, err := queues[0].Counts(ctx, kind, "")
		return err == nil && queued == 0 && running == 0
	})
}

func TestPanicInHandlerFailsTheJobAndTheWorkerGoesOn(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	kind := newKind(t)
	// A retry an hour away keeps the second panicking job from running again here.
	q := jobs.New(pool, jobs.Options{Concurrency: map[string]int{jobs.DefaultQueue: 1},
		Backoff: func(int) time.Duration { return time.Hour }, Logger: quietLogger()})
	okRan := make(chan struct{}, 1)
	q.Handle(kind, func(_ context.Context, j jobs.Job) error {
		var a struct{ Panic bool }
		if err := json.Unmarshal(j.Args, &a); err != nil {
			return err
		}
		if a.Panic {
			panic("boom")
		}
		okRan <- struct{}{}
		return nil
	})
	bad := mustEnqueue(t, ctx, q, kind, map[string]bool{"panic": true}, jobs.EnqueueOpts{MaxAttempts: 1, Priority: 10})
	retried := mustEnqueue(t, ctx, q, kind, map[string]bool{"panic": true}, jobs.EnqueueOpts{MaxAttempts: 2, Priority: 9})
	mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{})

	startRun(t, q)
	recv(t, okRan, "the job after the panics to run on the same single worker")
	if r := mustRow(t, pool, bad); r.Status != jobs.StatusFailed || str(r.LastError) != "panic" {
		t.Errorf("panicking job with 1 attempt = %+v; want failed, last_error panic", r)
	}
	if r := mustRow(t, pool, retried); r.Status != jobs.StatusAvailable || str(r.LastError) != "panic" {
		t.Errorf("panicking job with 2 attempts = %+v; want available again, last_error panic", r)
	}
	eventually(t, "the good job to be recorded", func() bool { return q.Stats().Succeeded == 1 })
	if s := q.Stats(); s.Panicked != 2 || s.Failed != 1 || s.Retried != 1 {
		t.Errorf("Stats = %+v; want 2 panics: 1 failed, 1 retried", s)
	}
}

func TestCancel(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()

	t.Run("AvailableJobNeverRuns", func(t *testing.T) {
		kind := newKind(t)
		q := jobs.New(pool, jobs.Options{Logger: quietLogger()})
		q.Handle(kind, func(context.Context, jobs.Job) error { return nil })
		id := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{})
		if err := q.Cancel(ctx, id); err != nil {
			t.Fatal(err)
		}
		if ran, err := q.RunOne(ctx, kind); ran || err != nil {
			t.Fatalf("RunOne = %v, %v; want nothing", ran, err)
		}
		if r := mustRow(t, pool, id); r.Status != jobs.StatusCancelled {
			t.Errorf("row = %+v; want cancelled", r)
		}
		if err := q.Cancel(ctx, id); err != nil {
			t.Errorf("cancelling a finished job = %v; want nil", err)
		}
	})

	t.Run("RunningJobsHandlerIsCancelledAndItsOutcomeDropped", func(t *testing.T) {
		kind := newKind(t)
		q := jobs.New(pool, jobs.Options{Heartbeat: 10 * time.Millisecond, Logger: quietLogger()})
		started, stopped := make(chan string, 1), make(chan error, 1)
		q.Handle(kind, func(ctx context.Context, j jobs.Job) error {
			started <- j.ID
			<-ctx.Done()
			stopped <- ctx.Err()
			return nil // would be a success if it were recorded
		})
		id := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{})
		go func() { _, _ = q.RunOne(ctx, kind) }()
		recv(t, started, "the job to start")
		if err := q.Cancel(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, stopped, "the handler to see its ctx cancelled"); !errors.Is(err, context.Canceled) {
			t.Errorf("handler ctx err = %v", err)
		}
		eventually(t, "the outcome to be dropped", func() bool { return q.Stats().Lost == 1 })
		if r := mustRow(t, pool, id); r.Status != jobs.StatusCancelled {
			t.Errorf("row = %+v; want cancelled", r)
		}
	})

	t.Run("UnknownIDIsNotFound", func(t *testing.T) {
		q := jobs.New(pool, jobs.Options{Logger: quietLogger()})
		for _, id := range []string{vigia.NewID(), "not-an-id"} {
			if err := q.Cancel(ctx, id); !vigia.IsKind(err, vigia.KindNotFound) {
				t.Errorf("Cancel(%q) = %v; want KindNotFound", id, err)
			}
		}
	})
}

func TestShutdownPutsTheInterruptedJobBackWithoutUsingAnAttempt(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	kind := newKind(t)
	q := jobs.New(pool, jobs.Options{Logger: quietLogger()})
	started := make(chan struct{}, 1)
	q.Handle(kind, func(ctx context.Context, j jobs.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	id := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{MaxAttempts: 1})
	stop := startRun(t, q)
	recv(t, started, "the job to start")
	stop()

	r := mustRow(t, pool, id)
	if r.Status != jobs.StatusAvailable || r.Attempts != 1 || r.MaxAttempts != 2 || str(r.LastError) != "interrupted" {
		t.Fatalf("after shutdown row = %+v; want available, attempt 1 of 2, interrupted", r)
	}
	var attempt int
	q.Handle(kind, func(_ context.Context, j jobs.Job) error {
		attempt = j.Attempt
		return nil
	})
	if ran, err := q.RunOne(ctx, kind); !ran || err != nil {
		t.Fatalf("RunOne = %v, %v", ran, err)
	}
	if attempt != 2 {
		t.Errorf("re-run attempt = %d; want 2 so the handler knows it is a re-run", attempt)
	}
	if r := mustRow(t, pool, id); r.Status != jobs.StatusSucceeded {
		t.Errorf("row = %+v; want succeeded", r)
	}
}

func TestCountsByKindAndWorkspace(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	kind := newKind(t)
	q := jobs.New(pool, jobs.Options{Logger: quietLogger()})
	w1, w2 := vigia.NewUUID(), vigia.NewUUID()
	mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{WorkspaceID: w1})
	mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{WorkspaceID: w1, RunAt: time.Now().Add(time.Hour)})
	mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{WorkspaceID: w2})
	tests := []struct {
		kind, ws string
		want     int
	}{
		{kind, w1, 2},
		{kind, w2, 1},
		{kind, "", 3},
		{"", w2, 1},
		{kind, "not-a-uuid", 0},
	}
	for _, tt := range tests {
		queued, running, err := q.Counts(ctx, tt.kind, tt.ws)
		if err != nil || queued != tt.want || running != 0 {
			t.Errorf("Counts(%q, %q) = %d, %d, %v; want %d queued", tt.kind, tt.ws, queued, running, err, tt.want)
		}
	}
}

func TestPruneDeletesOnlyOldFinishedJobs(t *testing.T) {
	pool := mustPool(t)
	ctx := context.Background()
	kind := newKind(t)
	q := jobs.New(pool, jobs.Options{Logger: quietLogger()})
	q.Handle(kind, func(context.Context, jobs.Job) error { return nil })
	done := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{})
	if ran, err := q.RunOne(ctx, kind); !ran || err != nil {
		t.Fatalf("RunOne = %v, %v", ran, err)
	}
	waiting := mustEnqueue(t, ctx, q, kind, nil, jobs.EnqueueOpts{RunAt: time.Now().Add(time.Hour)})
	if _, err := q.Prune(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustRow(t, pool, done) // recent: kept
	if n, err := q.Prune(ctx, time.Now().Add(time.Minute)); err != nil || n < 1 {
		t.Fatalf("Prune = %d, %v; want the finished job deleted", n, err)
	}
	var left int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE id IN ($1, $2)", done, waiting).Scan(&left); err != nil || left != 1 {
		t.Errorf("jobs left = %d, %v; want only the waiting one", left, err)
	}
}
