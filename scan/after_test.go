package scan_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/scan"
)

// afterStore keeps scan.succeeded events in memory (the rest of scan.Store is unused).
type afterStore struct {
	scan.Store
	events []*scan.Succeeded
	locks  int
}

func (s *afterStore) find(scanID string) *scan.Succeeded {
	for _, e := range s.events {
		if e.ScanID == scanID {
			return e
		}
	}
	return nil
}

func (s *afterStore) SucceededEvent(_ context.Context, scanID string) (scan.Succeeded, error) {
	if e := s.find(scanID); e != nil {
		return *e, nil
	}
	return scan.Succeeded{}, vigia.NotFound()
}

func (s *afterStore) PendingSucceeded(_ context.Context, ev scan.Succeeded) ([]scan.Succeeded, error) {
	var out []scan.Succeeded
	for _, e := range s.events {
		if e.ConnectionID == ev.ConnectionID && !e.Handled {
			out = append(out, *e)
		}
		if e.EventID == ev.EventID {
			break
		}
	}
	return out, nil
}

func (s *afterStore) MarkConsumed(_ context.Context, eventID, consumer string, _ time.Time) error {
	for _, e := range s.events {
		if e.EventID == eventID && !slices.Contains(e.Consumed, consumer) {
			e.Consumed = append(e.Consumed, consumer)
		}
	}
	return nil
}

func (s *afterStore) MarkHandled(_ context.Context, eventID string, _ time.Time) error {
	for _, e := range s.events {
		if e.EventID == eventID {
			e.Handled = true
		}
	}
	return nil
}

func (s *afterStore) WithConnectionLock(ctx context.Context, _ string, fn func(context.Context) error) error {
	s.locks++
	return fn(ctx)
}

// recorder is a consumer that records the scans it saw and fails while fail says so.
type recorder struct {
	seen []string
	fail map[string]bool
}

func (r *recorder) AfterScan(ctx context.Context, ws, _, scanID string) error {
	if p, err := vigia.MustPrincipal(ctx); err != nil || p.WorkspaceID != ws {
		return errors.New("no principal of the workspace")
	}
	if r.fail[scanID] {
		return errors.New("down")
	}
	r.seen = append(r.seen, scanID)
	return nil
}

type clock struct{}

func (clock) Now() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }

func newAfter(t *testing.T, st *afterStore, cs ...scan.NamedConsumer) *scan.Service {
	t.Helper()
	return scan.NewService(st, nil, nil, nil, scan.Ports{Consumers: cs}, clock{}, slog.New(slog.NewTextHandler(io.Discard, nil)), scan.Config{})
}

func TestAfterScanRunsEachConsumerOncePerEventInOrderPerConnection(t *testing.T) {
	st := &afterStore{events: []*scan.Succeeded{
		{EventID: "e1", WorkspaceID: "w", ConnectionID: "c1", ScanID: "s1"},
		{EventID: "e2", WorkspaceID: "w", ConnectionID: "c2", ScanID: "s2"},
		{EventID: "e3", WorkspaceID: "w", ConnectionID: "c1", ScanID: "s3"},
	}}
	lin, inc := &recorder{fail: map[string]bool{"s1": true}}, &recorder{}
	svc := newAfter(t, st, scan.NamedConsumer{Name: "lineage", Consumer: lin}, scan.NamedConsumer{Name: "incidents", Consumer: inc})
	ctx := context.Background()

	// s3's job first: it takes s1 first; lineage fails on s1 so it waits on s3 too,
	// incidents goes on; nothing is handled and the job is to be retried.
	if err := svc.AfterScan(ctx, "s3", false); err == nil {
		t.Fatal("a failing consumer gave no error to retry on")
	}
	if len(lin.seen) != 0 || !slices.Equal(inc.seen, []string{"s1", "s3"}) {
		t.Fatalf("lineage saw %v, incidents %v", lin.seen, inc.seen)
	}
	if st.find("s1").Handled || st.find("s3").Handled {
		t.Fatal("an event handled while a consumer failed on it")
	}
	// The retry: lineage recovers and processes s1 then s3; incidents is not run again.
	delete(lin.fail, "s1")
	if err := svc.AfterScan(ctx, "s3", false); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lin.seen, []string{"s1", "s3"}) || !slices.Equal(inc.seen, []string{"s1", "s3"}) {
		t.Fatalf("after the retry lineage saw %v, incidents %v", lin.seen, inc.seen)
	}
	if !st.find("s1").Handled || !st.find("s3").Handled || st.find("s2").Handled {
		t.Fatal("handled events wrong")
	}
	// s1's own job, late: its event is handled, nothing runs again.
	if err := svc.AfterScan(ctx, "s1", false); err != nil || len(lin.seen) != 2 {
		t.Fatalf("a handled event ran again: %v %v", err, lin.seen)
	}
	if done, err := svc.AfterScanDone(ctx, "s1"); err != nil || !done {
		t.Fatalf("done %v %v", done, err)
	}
	if done, _ := svc.AfterScanDone(ctx, "s2"); done {
		t.Fatal("s2 done before its job ran")
	}
	// A scan without an event (failed, or deleted with its connection) has nothing to do.
	if err := svc.AfterScan(ctx, "gone", false); err != nil {
		t.Fatal(err)
	}
	if done, err := svc.AfterScanDone(ctx, "gone"); err != nil || !done {
		t.Fatalf("no event: done %v %v", done, err)
	}
}

func TestAfterScanGivesUpOnTheLastAttempt(t *testing.T) {
	st := &afterStore{events: []*scan.Succeeded{{EventID: "e1", WorkspaceID: "w", ConnectionID: "c1", ScanID: "s1"}}}
	lin := &recorder{fail: map[string]bool{"s1": true}}
	svc := newAfter(t, st, scan.NamedConsumer{Name: "lineage", Consumer: lin})
	if err := svc.AfterScan(context.Background(), "s1", true); err != nil {
		t.Fatal(err)
	}
	if e := st.find("s1"); !e.Handled || len(e.Consumed) != 0 {
		t.Fatalf("given up: %+v", e)
	}
}
