package httpx

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestUploadSlotsTakenByLargeBodies: Acquire gives a body of at most
// largeUpload a free pass, and makes a larger one or one of unknown
// length (chunked) take a slot, refusing the third while two are held.
func TestUploadSlotsTakenByLargeBodies(t *testing.T) {
	u := NewUploadSlots(MaxUploadsPerKey)
	req := func(n int64) *http.Request {
		r := httptest.NewRequest("POST", "/v1/payouts/bulk", strings.NewReader(""))
		r.ContentLength = n
		return r
	}
	var releases []func()
	for _, n := range []int64{largeUpload + 1, -1} {
		release, ok := u.Acquire("key_a", req(n))
		if !ok {
			t.Fatalf("a %d-byte upload was refused a free slot", n)
		}
		releases = append(releases, release)
	}
	if _, ok := u.Acquire("key_a", req(-1)); ok {
		t.Fatal("a third large upload got a slot")
	}
	for _, n := range []int64{0, largeUpload} {
		release, ok := u.Acquire("key_a", req(n))
		if !ok {
			t.Fatalf("a %d-byte body was refused while the large uploads held every slot", n)
		}
		release()
	}
	for _, release := range releases {
		release()
	}
	if n := u.inFlight(); n != 0 {
		t.Fatalf("%d keys remembered after every upload ended", n)
	}
}
