package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/store/storetest"
)

// A succeeded scan's event: written once, listed per connection oldest first until
// handled, its consumers recorded; the webhooks neither notify it nor send the scan's
// alerts before it is handled.
func TestScanSucceededEvents(t *testing.T) {
	f := newFx(t)
	s := f.db.Scans()
	ws := f.workspace().WorkspaceID
	conn, conn2 := f.connection(ws, "warehouse"), f.connection(ws, "lake")
	// Finished just now, so that the webhooks' lookback finds them.
	now := time.Now().UTC().Truncate(time.Millisecond)
	a, b, c := f.newScan(ws, conn, 1), f.newScan(ws, conn, 2), f.newScan(ws, conn2, 3)
	for i, id := range []string{a, b, c} {
		cn := conn
		if id == c {
			cn = conn2
		}
		at := now.Add(time.Duration(i-10) * time.Minute)
		f.must(s.FinishScan(f.ctx, id, scan.StatusSucceeded, nil, at))
		f.must(s.RecordSucceeded(f.ctx, ws, cn, id, at))
	}
	f.must(s.RecordSucceeded(f.ctx, ws, conn, a, now)) // a repeat writes nothing
	if n := f.count(`SELECT count(*) FROM events WHERE workspace_id = $1 AND type = $2`, ws, event.TypeScanSucceeded); n != 3 {
		t.Fatalf("%d scan.succeeded events for 3 scans", n)
	}
	ev := func(id string) scan.Succeeded {
		t.Helper()
		e, err := s.SucceededEvent(f.ctx, id)
		f.must(err)
		return e
	}
	ea, eb, ec := ev(a), ev(b), ev(c)
	if ea.ConnectionID != conn || ea.WorkspaceID != ws || ea.ScanID != a || ea.Handled || len(ea.Consumed) != 0 {
		t.Fatalf("event %+v", ea)
	}
	f.fails(vigia.KindNotFound, "the event of a scan without one", func(ctx ctxT) error {
		_, err := s.SucceededEvent(ctx, f.newScan(ws, conn, 4))
		return err
	})
	pending := func(e scan.Succeeded) []string {
		t.Helper()
		l, err := s.PendingSucceeded(f.ctx, e)
		f.must(err)
		var out []string
		for _, p := range l {
			out = append(out, p.ScanID)
		}
		return out
	}
	if got := pending(eb); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("pending up to b: %v, want a then b", got)
	}
	if got := pending(ea); !slices.Equal(got, []string{a}) {
		t.Fatalf("pending up to a: %v", got)
	}
	if got := pending(ec); !slices.Equal(got, []string{c}) {
		t.Fatalf("another connection's pending: %v", got)
	}

	f.must(s.MarkConsumed(f.ctx, ea.EventID, "lineage", now))
	f.must(s.MarkConsumed(f.ctx, ea.EventID, "lineage", now)) // again: no change
	f.must(s.MarkConsumed(f.ctx, ea.EventID, "incidents", now))
	if e := ev(a); !slices.Equal(e.Consumed, []string{"incidents", "lineage"}) || e.Handled {
		t.Fatalf("consumed %+v", e)
	}

	// Not a notification, and a succeeded scan's alerts wait for its consumers.
	claimed, err := f.db.Webhooks().ClaimEvents(f.ctx, 100)
	f.must(err)
	for _, e := range claimed {
		if e.Type == event.TypeScanSucceeded {
			t.Fatal("the webhooks claim a scan.succeeded event")
		}
	}
	alerts := func() []string {
		t.Helper()
		var ids []string
		err := storetest.Savepoint(t, f.ctx, func(ctx context.Context) error {
			l, err := f.db.Webhooks().ClaimFinishedScans(ctx, now.Add(-time.Hour), 100)
			for _, sc := range l {
				if sc.WorkspaceID == ws {
					ids = append(ids, sc.ID)
				}
			}
			return err
		})
		f.must(err)
		return ids
	}
	if got := alerts(); len(got) != 0 {
		t.Fatalf("alerts of scans whose consumers are not done: %v", got)
	}
	f.must(s.MarkHandled(f.ctx, ea.EventID, now))
	if e := ev(a); !e.Handled {
		t.Fatal("a handled event is not")
	}
	if got := pending(eb); !slices.Equal(got, []string{b}) {
		t.Fatalf("pending after a was handled: %v", got)
	}
	if got := alerts(); !slices.Equal(got, []string{a}) {
		t.Fatalf("alerts once a is handled: %v", got)
	}

	// A scan deleted with its connection leaves nothing to consume.
	f.exec(`DELETE FROM scans WHERE id = $1`, b)
	f.fails(vigia.KindNotFound, "the event of a deleted scan", func(ctx ctxT) error {
		_, err := s.SucceededEvent(ctx, b)
		return err
	})
	if got := pending(ea); len(got) != 0 {
		t.Fatalf("pending with a handled and a deleted scan: %v", got)
	}

	ran := false
	f.must(s.WithConnectionLock(f.ctx, conn, func(ctx context.Context) error {
		ran = true
		// Another connection's lock is another lock.
		return s.WithConnectionLock(ctx, conn2, func(context.Context) error { return nil })
	}))
	if !ran {
		t.Fatal("the lock did not run its function")
	}
}
