package graph

import (
	"context"
	"sync"
	"time"
)

// batchWait is how long a loader waits for more keys before fetching: resolvers of a
// list's items run concurrently and ask within microseconds of each other.
const batchWait = 2 * time.Millisecond

// maxBatchWaits bounds how many batchWaits a batch that keeps growing waits in all.
const maxBatchWaits = 10

// loader batches the keys resolvers ask for during one request into one fetch, and
// caches the answers for the rest of the request.
type loader[K comparable, V any] struct {
	fetch func(ctx context.Context, keys []K) (map[K]V, error)
	// gather, when set, replaces the batchWait pause before a fetch: it returns when the
	// batch may go, given how many keys it holds so far (tests make batching certain).
	gather func(pending func() int)

	mu      sync.Mutex
	pending *batch[K, V]
	done    map[K]*batch[K, V]
}

type batch[K comparable, V any] struct {
	keys  []K
	ready chan struct{}
	vals  map[K]V
	err   error
}

func newLoader[K comparable, V any](fetch func(ctx context.Context, keys []K) (map[K]V, error)) *loader[K, V] {
	return &loader[K, V]{fetch: fetch, done: map[K]*batch[K, V]{}}
}

// Load returns the value of key (ok false when the fetch had none).
func (l *loader[K, V]) Load(ctx context.Context, key K) (V, bool, error) {
	l.mu.Lock()
	b, seen := l.done[key]
	if !seen {
		if l.pending == nil {
			l.pending = &batch[K, V]{ready: make(chan struct{})}
			go l.run(context.WithoutCancel(ctx), l.pending)
		}
		b = l.pending
		b.keys = append(b.keys, key)
		l.done[key] = b
	}
	l.mu.Unlock()
	select {
	case <-b.ready:
	case <-ctx.Done():
		var zero V
		return zero, false, ctx.Err()
	}
	v, ok := b.vals[key]
	return v, ok, b.err
}

// Prime puts keys in the pending batch (a new one when none is pending) without waiting
// for it: resolvers that ask for them later join that batch instead of starting others.
func (l *loader[K, V]) Prime(ctx context.Context, keys []K) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, key := range keys {
		if _, seen := l.done[key]; seen {
			continue
		}
		if l.pending == nil {
			l.pending = &batch[K, V]{ready: make(chan struct{})}
			go l.run(context.WithoutCancel(ctx), l.pending)
		}
		l.pending.keys = append(l.pending.keys, key)
		l.done[key] = l.pending
	}
}

// Set records a value already read for key (a detail read whole), so that resolvers that
// ask for it later get it without a fetch. A key already asked for keeps its batch.
func (l *loader[K, V]) Set(key K, v V) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, seen := l.done[key]; seen {
		return
	}
	b := &batch[K, V]{keys: []K{key}, ready: make(chan struct{}), vals: map[K]V{key: v}}
	close(b.ready)
	l.done[key] = b
}

func (l *loader[K, V]) run(ctx context.Context, b *batch[K, V]) {
	if l.gather != nil {
		l.gather(func() int {
			l.mu.Lock()
			defer l.mu.Unlock()
			return len(b.keys)
		})
	} else {
		// Wait while keys keep arriving: on a loaded machine a list's resolvers start over
		// more than one batchWait, and a fixed pause would split the batch.
		l.mu.Lock()
		n := len(b.keys)
		l.mu.Unlock()
		for range maxBatchWaits {
			time.Sleep(batchWait)
			l.mu.Lock()
			grown := len(b.keys) > n
			n = len(b.keys)
			l.mu.Unlock()
			if !grown {
				break
			}
		}
	}
	l.mu.Lock()
	l.pending = nil
	keys := b.keys
	l.mu.Unlock()
	b.vals, b.err = l.fetch(ctx, keys)
	close(b.ready)
}
