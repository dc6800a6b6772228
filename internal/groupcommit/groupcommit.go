// Package groupcommit folds concurrent calls into batches, the way a database groups
// commits: the first caller runs its item at once; callers that arrive while a batch is
// in flight queue up and the next batch takes all of them in one call. A lone caller
// waits for nothing, and under load N callers cost one round trip instead of N.
//
// There is no background goroutine and nothing to close: the caller that finds no batch
// in flight runs the batches until the queue is empty.
package groupcommit

import "sync"

// Batcher runs batches of items of type T giving results of type R.
type Batcher[T, R any] struct {
	// Run handles a batch and returns one result per item, in order, or an error that
	// every item of the batch gets. It must not block on other calls of the Batcher.
	run func(items []T) ([]R, error)
	max int

	mu       sync.Mutex
	pending  []*call[T, R]
	flushing bool
}

type call[T, R any] struct {
	item T
	res  R
	err  error
	done chan struct{}
}

// New returns a Batcher over run that puts at most max items in a batch (max < 1: no
// bound).
func New[T, R any](max int, run func(items []T) ([]R, error)) *Batcher[T, R] {
	return &Batcher[T, R]{run: run, max: max}
}

// Do runs item in the next batch and returns its result. run is never given an item twice.
func (b *Batcher[T, R]) Do(item T) (R, error) {
	c := &call[T, R]{item: item, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, c)
	if b.flushing {
		b.mu.Unlock()
		<-c.done
		return c.res, c.err
	}
	b.flushing = true
	for len(b.pending) > 0 {
		n := len(b.pending)
		if b.max > 0 {
			n = min(n, b.max)
		}
		batch := b.pending[:n:n]
		b.pending = append([]*call[T, R](nil), b.pending[n:]...)
		b.mu.Unlock()
		b.flush(batch)
		b.mu.Lock()
		// The caller's own item went in the first batch; it keeps flushing only while
		// others wait, so no call waits on a caller that has left.
	}
	b.flushing = false
	b.mu.Unlock()
	<-c.done
	return c.res, c.err
}

func (b *Batcher[T, R]) flush(batch []*call[T, R]) {
	items := make([]T, len(batch))
	for i, c := range batch {
		items[i] = c.item
	}
	res, err := b.safeRun(items)
	if err == nil && len(res) != len(batch) {
		err = errResults
	}
	for i, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.res = res[i]
		}
		close(c.done)
	}
}

// safeRun turns a panic of run into an error for the batch, so that no waiter hangs.
func (b *Batcher[T, R]) safeRun(items []T) (res []R, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, errPanic
		}
	}()
	return b.run(items)
}

type batchError string

func (e batchError) Error() string { return string(e) }

const (
	errResults batchError = "groupcommit: the batch returned a wrong number of results"
	errPanic   batchError = "groupcommit: the batch panicked"
)
