package groupcommit

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// While the first batch is held, every other caller queues; releasing it runs them
// together (within max), and each caller gets its own result.
func TestCallsArrivingDuringABatchShareTheNext(t *testing.T) {
	hold := make(chan struct{})
	started := make(chan struct{})
	var batches [][]int
	var mu sync.Mutex
	b := New(8, func(items []int) ([]int, error) {
		mu.Lock()
		batches = append(batches, append([]int(nil), items...))
		first := len(batches) == 1
		mu.Unlock()
		if first {
			close(started)
			<-hold
		}
		out := make([]int, len(items))
		for i, v := range items {
			out[i] = v * 10
		}
		return out, nil
	})
	var wg sync.WaitGroup
	results := make([]int, 21)
	wg.Go(func() { results[0], _ = b.Do(0) })
	<-started
	for i := 1; i <= 20; i++ {
		wg.Go(func() {
			r, err := b.Do(i)
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		})
	}
	for {
		b.mu.Lock()
		n := len(b.pending)
		b.mu.Unlock()
		if n == 20 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	for i, r := range results {
		if r != i*10 {
			t.Errorf("result %d = %d, want %d", i, r, i*10)
		}
	}
	// 1 + 20 items in batches of at most 8: [1], then 8, 8, 4.
	if len(batches) != 4 || len(batches[0]) != 1 || len(batches[1]) != 8 || len(batches[3]) != 4 {
		t.Errorf("batches = %v", batches)
	}
	seen := map[int]bool{}
	for _, bt := range batches {
		for _, v := range bt {
			if seen[v] {
				t.Errorf("item %d ran twice", v)
			}
			seen[v] = true
		}
	}
}

func TestBatchErrorsAndPanicsReachEveryCaller(t *testing.T) {
	boom := errors.New("boom")
	b := New(0, func(items []int) ([]int, error) { return nil, boom })
	if _, err := b.Do(1); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
	p := New(0, func(items []int) ([]int, error) { panic("x") })
	if _, err := p.Do(1); err == nil {
		t.Error("a panicking batch gave no error")
	}
	short := New(0, func(items []int) ([]int, error) { return nil, nil })
	if _, err := short.Do(1); err == nil {
		t.Error("a batch with too few results gave no error")
	}
	// The Batcher is usable after a panic.
	if _, err := p.Do(2); err == nil {
		t.Error("second call: no error")
	}
}
