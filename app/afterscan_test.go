package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/scan"
)

// A scan is succeeded when its results are committed; its after-scan steps consume the
// scan.succeeded event afterwards, once each, and WaitScan returns only when they did.
func TestSucceededScanIsConsumedAfterItsCommit(t *testing.T) {
	f := newSQLiteScans(t, "afterscan", "after.db", "orders")
	r := f.env.Do(t, http.MethodPost, "/api/v1/scans", f.tok, map[string]any{"connection_id": f.connectionID})
	if r.Status != http.StatusAccepted {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	var out map[string]any
	r.JSON(t, &out)
	id := out["id"].(string)
	// Only the scan job: the scan is succeeded, its event written and not yet handled.
	if ran, err := f.env.App.Jobs.RunOne(f.ctx, scan.JobKind); err != nil || !ran {
		t.Fatalf("scan job: %v %v", ran, err)
	}
	sc, err := f.env.App.Scans.Scan(f.ctx, id)
	if err != nil || sc.Status != scan.StatusSucceeded {
		t.Fatalf("scan %+v %v", sc, err)
	}
	consumed := func() (handled bool, consumers int) {
		t.Helper()
		if err := f.env.DB.Pool().QueryRow(context.Background(), `SELECT e.dispatched_at IS NOT NULL,
			(SELECT count(*) FROM event_consumers c WHERE c.event_id = e.id)
			FROM events e WHERE e.scan_id = $1 AND e.type = $2`, id, event.TypeScanSucceeded).Scan(&handled, &consumers); err != nil {
			t.Fatal(err)
		}
		return handled, consumers
	}
	if handled, n := consumed(); handled || n != 0 {
		t.Fatalf("consumed before the consumer ran: handled %v, %d consumers", handled, n)
	}
	if done, err := f.env.App.Scans.AfterScanDone(f.ctx, id); err != nil || done {
		t.Fatalf("after-scan done before its job: %v %v", done, err)
	}
	// WaitScan works the after-scan job: every consumer processed the event.
	if sc, err := f.env.App.WaitScan(f.ctx, id, nil); err != nil || sc.Status != scan.StatusSucceeded {
		t.Fatalf("wait %+v %v", sc, err)
	}
	// lineage, contracts, reconcile, incidents, products, modeling, policies, suggestions, duplicates, labels.
	if handled, n := consumed(); !handled || n != 10 {
		t.Fatalf("after WaitScan: handled %v, %d consumers; want handled by 10", handled, n)
	}
	// Running the job again (a retry, a duplicate) changes nothing.
	if err := f.env.App.Scans.AfterScan(f.ctx, id, false); err != nil {
		t.Fatal(err)
	}
	if _, n := consumed(); n != 10 {
		t.Fatalf("%d consumer rows after a second run", n)
	}
}
