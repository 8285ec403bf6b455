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
	u := NewUploadSlots(MaxUploadsPerKey, 1<<30, 1<<30)
	var held, most atomic.Int64
	var refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if !u.take("key_a", "m_a") {
				refused.Add(1)
				return
			}
			n := held.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			held.Add(-1)
			u.release("key_a", "m_a")
		}()
	}
	close(start)
	wg.Wait()
	if most.Load() > MaxUploadsPerKey {
		t.Fatalf("%d uploads of one key held slots at once, at most %d allowed", most.Load(), MaxUploadsPerKey)
	}
	for i := 0; i < 10_000; i++ {
		k := fmt.Sprint("key_", i)
		if !u.take(k, "m_"+k) || !u.take(k, "m_"+k) {
			t.Fatalf("%s: a free slot was refused", k)
		}
		if u.take(k, "m_"+k) {
			t.Fatalf("%s: a third slot was given", k)
		}
		u.release(k, "m_"+k)
		u.release(k, "m_"+k)
	}
	if n := u.inFlight(); n != 0 {
		t.Fatalf("%d keys remembered after every upload ended", n)
	}
}

// TestUploadSlotsTakenByLargeBodies: Acquire gives a body of at most
// largeUpload a free pass, and makes a larger one or one of unknown
// length (chunked) take a slot, refusing the third while two are held.
func TestUploadSlotsTakenByLargeBodies(t *testing.T) {
	u := NewUploadSlots(MaxUploadsPerKey, 1<<30, 1<<30)
	req := func(n int64) *http.Request {
		r := httptest.NewRequest("POST", "/v1/payouts/bulk", strings.NewReader(""))
		r.ContentLength = n
		return r
	}
	var releases []func()
	for _, n := range []int64{largeUpload + 1, -1} {
		release, ok := u.Acquire("key_a", "m_a", req(n))
		if !ok {
			t.Fatalf("a %d-byte upload was refused a free slot", n)
		}
		releases = append(releases, release)
	}
	if _, ok := u.Acquire("key_a", "m_a", req(-1)); ok {
		t.Fatal("a third large upload got a slot")
	}
	for _, n := range []int64{0, largeUpload} {
		release, ok := u.Acquire("key_a", "m_a", req(n))
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

// TestUploadSlotsBoundedPerMerchantAndProcess: many keys of one merchant
// racing for slots (two each allowed) together never hold more than
// MaxUploadsPerMerchant, and many merchants together never more than
// MaxUploadsPerProcess; a refused take reserves nothing, and every count
// returns to zero.
func TestUploadSlotsBoundedPerMerchantAndProcess(t *testing.T) {
	u := NewDefaultUploadSlots()
	var held, most atomic.Int64
	perMerchant := map[string]*atomic.Int64{}
	mostMerchant := map[string]*atomic.Int64{}
	for m := 0; m < 5; m++ {
		id := fmt.Sprint("m_", m)
		perMerchant[id], mostMerchant[id] = new(atomic.Int64), new(atomic.Int64)
	}
	maxOf := func(a *atomic.Int64, n int64) {
		for m := a.Load(); n > m && !a.CompareAndSwap(m, n); m = a.Load() {
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for m := 0; m < 5; m++ {
		for k := 0; k < 25; k++ {
			for c := 0; c < 2; c++ {
				wg.Add(1)
				go func(merchant, key string) {
					defer wg.Done()
					<-start
					for i := 0; i < 50; i++ {
						if !u.take(key, merchant) {
							continue
						}
						maxOf(&most, held.Add(1))
						maxOf(mostMerchant[merchant], perMerchant[merchant].Add(1))
						perMerchant[merchant].Add(-1)
						held.Add(-1)
						u.release(key, merchant)
					}
				}(fmt.Sprint("m_", m), fmt.Sprint("key_", m, "_", k))
			}
		}
	}
	close(start)
	wg.Wait()
	if most.Load() > MaxUploadsPerProcess {
		t.Fatalf("%d uploads held slots at once in the process, at most %d allowed", most.Load(), MaxUploadsPerProcess)
	}
	for id, a := range mostMerchant {
		if a.Load() > MaxUploadsPerMerchant {
			t.Fatalf("merchant %s held %d slots at once, at most %d allowed", id, a.Load(), MaxUploadsPerMerchant)
		}
	}
	// Deterministically: one merchant's fresh keys are refused once the
	// merchant holds its share, another merchant still gets slots until
	// the process total is reached.
	for k := 0; k < MaxUploadsPerMerchant; k++ {
		if !u.take(fmt.Sprint("key_x", k), "m_x") {
			t.Fatalf("merchant m_x: slot %d refused below the merchant limit", k)
		}
	}
	if u.take("key_x_new", "m_x") {
		t.Fatal("a fresh key of a merchant at its limit got a slot")
	}
	for k := MaxUploadsPerMerchant; k < MaxUploadsPerProcess; k++ {
		if !u.take(fmt.Sprint("key_y", k), fmt.Sprint("m_y", k)) {
			t.Fatalf("slot %d refused below the process limit", k)
		}
	}
	if u.take("key_z", "m_z") {
		t.Fatal("a slot was given past the process limit")
	}
	for k := 0; k < MaxUploadsPerMerchant; k++ {
		u.release(fmt.Sprint("key_x", k), "m_x")
	}
	for k := MaxUploadsPerMerchant; k < MaxUploadsPerProcess; k++ {
		u.release(fmt.Sprint("key_y", k), fmt.Sprint("m_y", k))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.busy) != 0 || len(u.merchants) != 0 || u.total != 0 {
		t.Fatalf("counts left after every upload ended: %d keys, %d merchants, total %d", len(u.busy), len(u.merchants), u.total)
	}
}
