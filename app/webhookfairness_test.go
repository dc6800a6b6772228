package app_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app/apptest"
)

// A flood on one channel must not starve another: 40 deliveries queued before them to
// a receiver that holds every request open take at most the channel's bound of workers
// (8 of 16), so a later delivery to another channel of the same workspace, and one to
// another workspace, arrive while most of the flood has not been sent. Without the
// per-channel bound the flood would hold every worker and the later deliveries would
// wait until every delivery of the flood had been sent (and timed out).
func TestFloodOnOneChannelDoesNotStarveAnother(t *testing.T) {
	cfg := webhookConfig(t)
	cfg.WebhookWorkers = 16
	env := apptest.MustStart(t, cfg)
	ws := env.MustWorkspace(t, "flood")
	other := env.MustWorkspace(t, "calm")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	otherAdmin := env.MustSession(t, other, vigia.RoleAdmin)
	kinds := []string{"dataset.verdict_changed"}

	release := make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	var mu sync.Mutex
	inFlight, most := 0, 0
	flooded := MustReceiver(t, receiverHost, func(_ int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		select {
		case <-release:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	})
	floodID, _ := MustChannel(t, env, admin, map[string]any{"name": "flood", "config": map[string]any{"webhook_url": flooded.URL}, "event_kinds": kinds})
	const flood = 40
	for range flood {
		verdictEvent(t, env, ws)
	}
	MustRunWorkers(t, env)
	eventually(t, "the flood's deliveries", func() bool {
		var n int
		err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE channel_id = $1`, floodID).Scan(&n)
		return err == nil && n == flood
	})
	flooded.waitFor(t, "", 8) // the channel's bound of sends is stuck in the receiver

	sameWS := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	otherWS := MustReceiver(t, otherHost, status(http.StatusNoContent))
	MustChannel(t, env, admin, map[string]any{"name": "calm", "config": map[string]any{"webhook_url": sameWS.URL}, "event_kinds": kinds})
	MustChannel(t, env, otherAdmin, map[string]any{"name": "other", "config": map[string]any{"webhook_url": otherWS.URL}, "event_kinds": kinds})
	verdictEvent(t, env, ws) // to the flooded channel (queued behind its flood) and to the calm one
	verdictEvent(t, env, other)
	sameWS.waitFor(t, "", 1)
	otherWS.waitFor(t, "", 1)

	// Deliveries are claimed in the order they were made: without the bound, every
	// delivery of the flood would have been sent before the later ones.
	servedAt := sameWS.requests()[0].At
	if at := otherWS.requests()[0].At; at.After(servedAt) {
		servedAt = at
	}
	before := map[string]bool{}
	for _, r := range flooded.requests() {
		if r.At.Before(servedAt) {
			before[r.Header.Get("X-Service-Delivery")] = true
		}
	}
	mu.Lock()
	peak := most
	mu.Unlock()
	t.Logf("the other channels were served after %d of the flood's %d deliveries had been sent; at most %d of its sends in flight",
		len(before), flood, peak)
	if len(before) >= flood {
		t.Fatalf("the other channels were served only after all %d deliveries of the flood", flood)
	}
	if peak > 8 {
		t.Fatalf("%d sends in flight to one channel, above its bound of 8", peak)
	}
	letGo()
	eventually(t, "the flood to drain", func() bool {
		var n int
		err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries
			WHERE channel_id = $1 AND status = 'delivered'`, floodID).Scan(&n)
		return err == nil && n == flood+1
	})
}
