package rest

import (
	"sync"
	"time"
)

// limiter is a fixed-window request counter per key (a token or an IP address).
type limiter struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu      sync.Mutex
	windows map[string]*window
	sweepAt time.Time
}

type window struct {
	count int
	reset time.Time
}

// quota is what a request learns from a limiter.
type quota struct {
	Limit     int
	Remaining int
	Reset     time.Time
	Allowed   bool
}

func newLimiter(limit int, period time.Duration, now func() time.Time) *limiter {
	return &limiter{limit: limit, window: period, now: now, windows: map[string]*window{}}
}

// take counts one request for key.
func (l *limiter) take(key string) quota {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.sweepAt) {
		for k, w := range l.windows {
			if now.After(w.reset) {
				delete(l.windows, k)
			}
		}
		l.sweepAt = now.Add(l.window)
	}
	w, ok := l.windows[key]
	if !ok || !now.Before(w.reset) {
		w = &window{reset: now.Add(l.window)}
		l.windows[key] = w
	}
	w.count++
	q := quota{Limit: l.limit, Reset: w.reset, Allowed: w.count <= l.limit}
	if q.Remaining = l.limit - w.count; q.Remaining < 0 {
		q.Remaining = 0
	}
	return q
}
