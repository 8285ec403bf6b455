package auth

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEpoch is a database epoch the tests move by hand, counting reads.
type fakeEpoch struct {
	v     atomic.Int64
	reads atomic.Int64
	fail  atomic.Bool
}

func (f *fakeEpoch) read(context.Context) (int64, error) {
	f.reads.Add(1)
	if f.fail.Load() {
		return 0, errors.New("database unreachable")
	}
	return f.v.Load(), nil
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newTestCache(o KeyCacheOptions) (*KeyCache, *fakeEpoch, *clock) {
	ep, clk := &fakeEpoch{}, &clock{t: time.Unix(1_800_000_000, 0)}
	o.Now = clk.now
	return NewKeyCache(ep.read, o), ep, clk
}

func principal(i int) Principal {
	return Principal{ID: fmt.Sprintf("key_%d", i), MerchantID: fmt.Sprintf("mer_%d", i%3), Livemode: i%2 == 1, Kind: KindSecret}
}

// TestKeyCacheEpoch: a held key is served while the epoch was read less than
// CheckEvery ago; past that the epoch is read first, and when it moved
// everything held is forgotten.
func TestKeyCacheEpoch(t *testing.T) {
	c, ep, clk := newTestCache(KeyCacheOptions{})
	ctx := context.Background()
	sum := SumKey("sk_test_a")
	c.Put(sum, principal(1), c.Generation())
	if p, ok := c.Lookup(ctx, sum); !ok || p != principal(1) {
		t.Fatalf("first lookup: %v %v", p, ok)
	}
	reads := ep.reads.Load()
	for range 100 {
		clk.add(DefaultEpochCheck / 200)
		if _, ok := c.Lookup(ctx, sum); !ok {
			t.Fatal("held key missed within CheckEvery")
		}
	}
	if got := ep.reads.Load() - reads; got != 0 {
		t.Fatalf("%d epoch reads within CheckEvery, want 0", got)
	}
	ep.v.Add(1) // another process revoked some key
	if _, ok := c.Lookup(ctx, sum); !ok {
		t.Fatal("served nothing before CheckEvery passed (allowed, but the epoch was not read)")
	}
	clk.add(DefaultEpochCheck)
	if _, ok := c.Lookup(ctx, sum); ok {
		t.Fatal("key served after the epoch moved and CheckEvery passed")
	}
	if c.Len() != 0 {
		t.Fatalf("%d keys held after the epoch moved", c.Len())
	}
}

// TestKeyCacheStaleReadNotAdded: a key whose row was read before a flush is
// not added after it (the row may show it before its revocation).
func TestKeyCacheStaleReadNotAdded(t *testing.T) {
	c, ep, clk := newTestCache(KeyCacheOptions{})
	ctx := context.Background()
	other := SumKey("sk_test_other")
	c.Put(other, principal(2), c.Generation())
	gen := c.Generation() // a request begins reading sk_test_a's row
	ep.v.Add(1)           // sk_test_a is revoked meanwhile
	clk.add(DefaultEpochCheck)
	c.Lookup(ctx, other) // some request reads the epoch: everything is forgotten
	c.Put(SumKey("sk_test_a"), principal(1), gen)
	if _, ok := c.Lookup(ctx, SumKey("sk_test_a")); ok {
		t.Fatal("a key read before the flush was added after it")
	}
	c.Put(SumKey("sk_test_a"), principal(1), c.Generation())
	if _, ok := c.Lookup(ctx, SumKey("sk_test_a")); !ok {
		t.Fatal("a key read after the flush was not added")
	}
	gen = c.Generation()
	c.Invalidate()
	c.Put(SumKey("sk_test_b"), principal(3), gen)
	if c.Len() != 0 {
		t.Fatal("Invalidate left keys, or a read begun before it added one")
	}
}

// TestKeyCacheAge: an entry is never used past MaxAge, whatever the epoch.
func TestKeyCacheAge(t *testing.T) {
	c, _, clk := newTestCache(KeyCacheOptions{MaxAge: time.Second})
	ctx := context.Background()
	sum := SumKey("sk_test_a")
	c.Put(sum, principal(1), c.Generation())
	clk.add(999 * time.Millisecond)
	if _, ok := c.Lookup(ctx, sum); !ok {
		t.Fatal("missed before MaxAge")
	}
	clk.add(time.Millisecond)
	if _, ok := c.Lookup(ctx, sum); ok {
		t.Fatal("served at MaxAge")
	}
}

// TestKeyCacheEpochReadFails: when the epoch cannot be read a held key is a
// miss (the caller reads the row and meets the same failure).
func TestKeyCacheEpochReadFails(t *testing.T) {
	c, ep, clk := newTestCache(KeyCacheOptions{})
	ctx := context.Background()
	sum := SumKey("sk_test_a")
	c.Put(sum, principal(1), c.Generation())
	c.Lookup(ctx, sum)
	ep.fail.Store(true)
	clk.add(DefaultEpochCheck)
	if _, ok := c.Lookup(ctx, sum); ok {
		t.Fatal("served a key whose freshness could not be checked")
	}
	ep.fail.Store(false)
	if _, ok := c.Lookup(ctx, sum); !ok {
		t.Fatal("not served once the epoch could be read again")
	}
}

// TestKeyCacheOneEpochReadAtATime: the requests that find the epoch stale
// together share one read.
func TestKeyCacheOneEpochReadAtATime(t *testing.T) {
	release := make(chan struct{})
	var reads atomic.Int64
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	c := NewKeyCache(func(context.Context) (int64, error) {
		reads.Add(1)
		<-release
		return 0, nil
	}, KeyCacheOptions{Now: clk.now})
	sum := SumKey("sk_test_a")
	c.Put(sum, principal(1), c.Generation())
	var wg sync.WaitGroup
	var served atomic.Int64
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := c.Lookup(context.Background(), sum); ok {
				served.Add(1)
			}
		}()
	}
	for reads.Load() == 0 {
		runtime.Gosched()
	}
	time.Sleep(20 * time.Millisecond) // let the others queue behind the read
	close(release)
	wg.Wait()
	if reads.Load() != 1 || served.Load() != 50 {
		t.Fatalf("%d epoch reads for 50 concurrent lookups (want 1), %d served (want 50)", reads.Load(), served.Load())
	}
}

// TestKeyCacheBounded: however many distinct keys are verified, the cache
// holds at most MaxEntries, and lookups of keys never added hold nothing.
func TestKeyCacheBounded(t *testing.T) {
	c, _, clk := newTestCache(KeyCacheOptions{MaxEntries: 64})
	ctx := context.Background()
	for i := range 10_000 {
		c.Put(SumKey(fmt.Sprintf("sk_test_%d", i)), principal(i), c.Generation())
		if i%100 == 0 {
			clk.add(time.Second) // some entries age past MaxAge on the way
		}
		c.Lookup(ctx, SumKey(fmt.Sprintf("sk_test_random_%d", i)))
		if n := c.Len(); n > 64 {
			t.Fatalf("%d keys held after %d puts; the bound is 64", n, i+1)
		}
	}
	if _, ok := c.Lookup(ctx, SumKey("sk_test_9999")); !ok {
		t.Fatal("the latest key was evicted")
	}
}

// TestKeyCacheWholeKey: the cache is indexed by the whole key's hash: keys
// sharing a prefix, a suffix or everything but one character never answer
// for each other.
func TestKeyCacheWholeKey(t *testing.T) {
	c, _, _ := newTestCache(KeyCacheOptions{})
	ctx := context.Background()
	keys := []string{"sk_test_abcdef0123", "sk_test_abcdef0124", "sk_live_abcdef0123", "pk_test_abcdef0123", "xk_test_abcdef0123"}
	for i, k := range keys[:4] {
		c.Put(SumKey(k), principal(i), c.Generation())
	}
	for i, k := range keys {
		p, ok := c.Lookup(ctx, SumKey(k))
		if i == 4 {
			if ok {
				t.Fatalf("%s never added, answered %v", k, p)
			}
			continue
		}
		if !ok || p != principal(i) {
			t.Fatalf("%s answered %v %v, want %v", k, p, ok, principal(i))
		}
	}
}
