package notify

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// limiter bounds the sends in flight in this process per workspace and per channel.
// A delivery that finds its bound reached gives its worker back (the job is snoozed)
// instead of waiting, so one slow receiver holds at most PerChannel workers and one
// workspace at most PerWorkspace, and every other receiver keeps its pace.
type limiter struct {
	perWorkspace, perChannel int

	mu        sync.Mutex
	workspace map[string]int
	channel   map[string][]time.Time // start of each send in flight
	// took is each channel's recent send duration (exponentially weighted), kept
	// while the channel is busy: how long a slot of it usually stays taken.
	took map[string]time.Duration
	// freed is closed (and forgotten) when a slot of the workspace is released: it
	// wakes the sends of that workspace waiting in acquireWithin.
	freed map[string]chan struct{}
}

func newLimiter(perWorkspace, perChannel int) *limiter {
	return &limiter{perWorkspace: perWorkspace, perChannel: perChannel,
		workspace: map[string]int{}, channel: map[string][]time.Time{}, took: map[string]time.Duration{},
		freed: map[string]chan struct{}{}}
}

// acquireWithin is acquire, waiting up to wait for a slot of the workspace or channel
// to be released. A busy but healthy receiver frees a slot within about one send, so
// a delivery that waits that long in the process is sent at once instead of going
// back to the queue (a snooze costs two statements and at least SnoozeMin); the wait
// is bounded, so a receiver that stops answering holds no more workers than its
// bound plus the waiters of one short wait.
func (l *limiter) acquireWithin(ctx context.Context, workspaceID, channelID string, wait time.Duration) (release func(sent time.Duration), took time.Duration, ok bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		l.mu.Lock()
		release, took, ok = l.acquireLocked(workspaceID, channelID, time.Now())
		if ok {
			l.mu.Unlock()
			return release, took, ok
		}
		freed := l.freed[workspaceID]
		if freed == nil {
			freed = make(chan struct{})
			l.freed[workspaceID] = freed
		}
		l.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C:
			return nil, took, false
		case <-ctx.Done():
			return nil, took, false
		}
	}
}

// acquire takes a slot for a send started at now; ok is false when either bound is
// reached, and then took says how long the channel's sends take: their recent average,
// or how long its oldest send in flight has been running, whichever is longer.
func (l *limiter) acquire(workspaceID, channelID string, now time.Time) (release func(sent time.Duration), took time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acquireLocked(workspaceID, channelID, now)
}

// acquireLocked is acquire with l.mu held.
func (l *limiter) acquireLocked(workspaceID, channelID string, now time.Time) (release func(sent time.Duration), took time.Duration, ok bool) {
	if l.workspace[workspaceID] >= l.perWorkspace || len(l.channel[channelID]) >= l.perChannel {
		took = l.took[channelID]
		for _, start := range l.channel[channelID] {
			took = max(took, now.Sub(start))
		}
		return nil, took, false
	}
	l.workspace[workspaceID]++
	l.channel[channelID] = append(l.channel[channelID], now)
	var once sync.Once
	return func(sent time.Duration) {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.workspace[workspaceID]--; l.workspace[workspaceID] <= 0 {
				delete(l.workspace, workspaceID)
			}
			if freed := l.freed[workspaceID]; freed != nil {
				close(freed)
				delete(l.freed, workspaceID)
			}
			if prev, ok := l.took[channelID]; ok {
				l.took[channelID] = (3*prev + sent) / 4
			} else {
				l.took[channelID] = sent
			}
			starts := l.channel[channelID]
			if i := slices.Index(starts, now); i >= 0 {
				starts = slices.Delete(starts, i, i+1)
			}
			if len(starts) == 0 {
				delete(l.channel, channelID)
				delete(l.took, channelID)
			} else {
				l.channel[channelID] = starts
			}
		})
	}, 0, true
}

// snoozeFor is a jittered wait between lo and hi, so that deferred deliveries do not
// come back all at once.
func snoozeFor(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rand.Int64N(int64(hi-lo)))
}
