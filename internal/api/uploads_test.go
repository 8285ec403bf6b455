package api

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestUploadSlotsBounded: a key never holds more than MaxUploadsPerKey
// slots however many uploads race for them, a released slot can be taken
// again, and the map forgets a key once its uploads are done (it holds only
// keys with an upload in flight, so many keys cannot grow it).
func TestUploadSlotsBounded(t *testing.T) {
	u := NewUploadSlots(MaxUploadsPerKey)
	var held, most atomic.Int64
	var refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if !u.take("key_a") {
				refused.Add(1)
				return
			}
			n := held.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			held.Add(-1)
			u.release("key_a")
		}()
	}
	close(start)
	wg.Wait()
	if most.Load() > MaxUploadsPerKey {
		t.Fatalf("%d uploads of one key held slots at once, at most %d allowed", most.Load(), MaxUploadsPerKey)
	}
	for i := 0; i < 10_000; i++ {
		k := fmt.Sprint("key_", i)
		if !u.take(k) || !u.take(k) {
			t.Fatalf("%s: a free slot was refused", k)
		}
		if u.take(k) {
			t.Fatalf("%s: a third slot was given", k)
		}
		u.release(k)
		u.release(k)
	}
	if n := u.inFlight(); n != 0 {
		t.Fatalf("%d keys remembered after every upload ended", n)
	}
}
