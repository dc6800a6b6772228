package graph

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Forty resolvers asking at once cost one fetch, and a repeated key is served from the
// request's cache.
func TestLoaderBatchesConcurrentLoads(t *testing.T) {
	var fetches atomic.Int32
	l := newLoader(func(_ context.Context, keys []int) (map[int]string, error) {
		fetches.Add(1)
		out := map[int]string{}
		for _, k := range keys {
			if k%10 != 0 {
				out[k] = fmt.Sprint("v", k)
			}
		}
		return out, nil
	})
	// The batch goes once the forty keys are in (rather than after batchWait, which a
	// loaded machine may not honour).
	l.gather = func(pending func() int) {
		for pending() < 40 {
			runtime.Gosched()
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 1; i <= 40; i++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			v, ok, err := l.Load(context.Background(), k)
			switch {
			case err != nil:
				errs <- err
			case k%10 == 0 && ok:
				errs <- fmt.Errorf("key %d should be missing", k)
			case k%10 != 0 && v != fmt.Sprint("v", k):
				errs <- fmt.Errorf("key %d = %q", k, v)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for one batch", n)
	}
	if v, ok, _ := l.Load(context.Background(), 3); !ok || v != "v3" || fetches.Load() != 1 {
		t.Fatal("cached key fetched again")
	}
}
