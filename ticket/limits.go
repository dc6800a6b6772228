package ticket

import (
	"sync"
	"time"
)

// inboundLimit is the contract's limit of inbound ticket events: 120 requests per
// minute per integration and IP.
const inboundLimit = 120

// windowLimiter counts requests per key in fixed windows.
type windowLimiter struct {
	limit  int
	window time.Duration

	mu      sync.Mutex
	counts  map[string]*windowCount
	sweepAt time.Time
}

type windowCount struct {
	n     int
	reset time.Time
}

func newWindowLimiter(limit int, window time.Duration) *windowLimiter {
	return &windowLimiter{limit: limit, window: window, counts: map[string]*windowCount{}}
}

// take counts one request for key at now; when over the limit it returns false and the
// whole seconds until the window resets (at least 1).
func (l *windowLimiter) take(key string, now time.Time) (ok bool, retryAfter int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.sweepAt) {
		for k, c := range l.counts {
			if !now.Before(c.reset) {
				delete(l.counts, k)
			}
		}
		l.sweepAt = now.Add(l.window)
	}
	c, found := l.counts[key]
	if !found || !now.Before(c.reset) {
		c = &windowCount{reset: now.Add(l.window)}
		l.counts[key] = c
	}
	c.n++
	if c.n <= l.limit {
		return true, 0
	}
	secs := int(c.reset.Sub(now).Seconds() + 0.999)
	return false, max(secs, 1)
}
