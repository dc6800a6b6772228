package notify

import (
	"context"
	"testing"
	"time"
)

func TestLimiterBoundsWorkspaceAndChannel(t *testing.T) {
	l := newLimiter(3, 2)
	t0 := time.Unix(1000, 0)
	r1, _, ok1 := l.acquire("ws", "a", t0)
	r2, _, ok2 := l.acquire("ws", "a", t0)
	_, _, ok3 := l.acquire("ws", "a", t0)
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("channel bound: %v %v %v", ok1, ok2, ok3)
	}
	r3, _, ok4 := l.acquire("ws", "b", t0)
	_, _, ok5 := l.acquire("ws", "c", t0)
	if !ok4 || ok5 {
		t.Fatalf("workspace bound: %v %v", ok4, ok5)
	}
	if _, _, ok := l.acquire("other", "d", t0); !ok {
		t.Fatal("another workspace is held back")
	}
	r1(10 * time.Second)
	r1(time.Second) // a second release does nothing
	r4, _, ok := l.acquire("ws", "c", t0)
	if !ok {
		t.Fatal("a release did not free the workspace's slot")
	}
	if _, _, ok := l.acquire("ws", "e", t0); ok {
		t.Fatal("the double release freed a second slot")
	}
	r2(0)
	r3(0)
	r4(0)
}

func TestLimiterRemembersHowLongABusyChannelTakes(t *testing.T) {
	l := newLimiter(10, 2)
	t0 := time.Unix(1000, 0)
	r1, _, _ := l.acquire("ws", "slow", t0)
	r2, _, _ := l.acquire("ws", "slow", t0.Add(time.Second))
	if _, took, ok := l.acquire("ws", "slow", t0.Add(3*time.Second)); ok || took != 3*time.Second {
		t.Fatalf("before any send finished, the oldest one in flight tells: ok %v, took %v", ok, took)
	}
	r1(10 * time.Second)
	r3, _, _ := l.acquire("ws", "slow", t0.Add(10*time.Second))
	_, took, ok := l.acquire("ws", "slow", t0.Add(10*time.Second))
	if ok || took != 10*time.Second {
		t.Fatalf("full slow channel: ok %v, took %v", ok, took)
	}
	r2(6 * time.Second)
	r3(6 * time.Second)
	if _, took, ok := l.acquire("ws", "slow", t0.Add(20*time.Second)); !ok || took != 0 {
		t.Fatalf("an idle channel forgets: ok %v took %v", ok, took)
	}
}

func TestLimiterWaiterTakesTheSlotThatIsReleased(t *testing.T) {
	l := newLimiter(10, 1)
	r1, _, ok := l.acquire("ws", "a", time.Now())
	if !ok {
		t.Fatal("an idle channel refused a send")
	}
	got := make(chan bool)
	go func() {
		r, _, ok := l.acquireWithin(t.Context(), "ws", "a", time.Minute)
		if ok {
			defer r(0)
		}
		got <- ok
	}()
	// The waiter is parked until the slot is released, whatever the scheduling: it
	// cannot have the slot before r1 gives it back.
	select {
	case ok := <-got:
		t.Fatalf("the waiter returned (ok %v) while the channel's only slot was taken", ok)
	case <-time.After(20 * time.Millisecond):
	}
	r1(time.Millisecond)
	if !<-got {
		t.Fatal("the waiter did not get the released slot")
	}
}

func TestLimiterWaitIsBounded(t *testing.T) {
	l := newLimiter(10, 1)
	r1, _, _ := l.acquire("ws", "a", time.Now())
	defer r1(0)
	if _, _, ok := l.acquireWithin(t.Context(), "ws", "a", 5*time.Millisecond); ok {
		t.Fatal("a full channel gave a second slot")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, ok := l.acquireWithin(ctx, "ws", "a", time.Minute); ok {
		t.Fatal("a cancelled wait got a slot of a full channel")
	}
	// Another workspace's release does not hand out this channel's slot.
	r2, _, _ := l.acquire("other", "b", time.Now())
	r2(0)
	if _, _, ok := l.acquireWithin(t.Context(), "ws", "a", 5*time.Millisecond); ok {
		t.Fatal("a release elsewhere freed the full channel")
	}
}
