package auth

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// KeySum is the SHA-256 of a presented API key: the cache's index, so a hit
// needs the whole key, and the key itself is never held.
type KeySum = [sha256.Size]byte

// SumKey returns the KeySum of key (HashKey is its hex form).
func SumKey(key string) KeySum { return sha256.Sum256([]byte(key)) }

// Defaults of a KeyCache.
const (
	// DefaultKeyCacheEntries bounds the keys held (about 200 bytes each).
	DefaultKeyCacheEntries = 4096
	// DefaultKeyCacheAge bounds how long a verified key is used without
	// reading its row again, whatever the epoch says.
	DefaultKeyCacheAge = 10 * time.Second
	// DefaultEpochCheck is how stale the epoch may be when a held key is
	// used: a revocation committed in any process is honoured within it.
	DefaultEpochCheck = 250 * time.Millisecond
)

// KeyCache holds the principals of recently verified API keys, so a request
// with a known key is not a database read. It is bounded in entries and in
// each entry's age, and it forgets everything when the database's key epoch
// moves: every change to an API key or a merchant increments that number in
// the changing transaction (database triggers), and a key found in the cache
// is only used while the epoch was read less than CheckEvery ago; otherwise
// the request reads it first (one read per process per CheckEvery, shared by
// the requests that arrive meanwhile). So a revocation in any process is
// honoured by every process within CheckEvery of its commit.
//
// A key is only added after it was verified in the database, so unknown or
// forged keys never take room. An entry read from the database before a
// flush is not added after it: Put compares the generation the reader began
// under (Generation) with the current one, so a key revoked while its row
// was being read cannot be cached from the stale read.
type KeyCache struct {
	// Epoch reads the database's key epoch.
	epoch      func(context.Context) (int64, error)
	maxEntries int
	maxAge     time.Duration
	checkEvery time.Duration
	now        func() time.Time

	mu      sync.Mutex
	entries map[KeySum]cachedKey
	gen     uint64        // incremented by every flush
	seen    int64         // the epoch last read
	checked time.Time     // when the read that returned seen was sent; zero: never
	reading chan struct{} // closed when the epoch read in flight ends; nil when none
}

type cachedKey struct {
	p  Principal
	at time.Time
}

// KeyCacheOptions sets a KeyCache's bounds; zero fields take the defaults.
type KeyCacheOptions struct {
	MaxEntries int
	MaxAge     time.Duration
	CheckEvery time.Duration
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// NewKeyCache makes a cache whose epoch is read by epoch.
func NewKeyCache(epoch func(context.Context) (int64, error), o KeyCacheOptions) *KeyCache {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultKeyCacheEntries
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultKeyCacheAge
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = DefaultEpochCheck
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &KeyCache{epoch: epoch, maxEntries: o.MaxEntries, maxAge: o.MaxAge, checkEvery: o.CheckEvery, now: o.Now,
		entries: make(map[KeySum]cachedKey)}
}

// Lookup returns the principal held for the key whose sum is sum. It reads
// the epoch first when the last reading is older than CheckEvery; when that
// read fails it answers a miss, so the caller reads the key's row (and meets
// the same failure) rather than trusting an entry it cannot check.
func (c *KeyCache) Lookup(ctx context.Context, sum KeySum) (Principal, bool) {
	for try := 0; try < 2; try++ {
		c.mu.Lock()
		e, ok := c.entries[sum]
		if !ok {
			c.mu.Unlock()
			return Principal{}, false
		}
		now := c.now()
		if now.Sub(e.at) >= c.maxAge {
			delete(c.entries, sum)
			c.mu.Unlock()
			return Principal{}, false
		}
		if !c.checked.IsZero() && now.Sub(c.checked) < c.checkEvery {
			c.mu.Unlock()
			return e.p, true
		}
		c.mu.Unlock()
		if !c.readEpoch(ctx) {
			return Principal{}, false
		}
	}
	return Principal{}, false
}

// epochReadTimeout bounds one read of the key epoch.
const epochReadTimeout = 2 * time.Second

// readEpoch brings the epoch up to date: one read at a time, which the
// requests arriving meanwhile wait for. It reports whether the caller may
// look again (false: the read failed or ctx ended).
func (c *KeyCache) readEpoch(ctx context.Context) bool {
	c.mu.Lock()
	if !c.checked.IsZero() && c.now().Sub(c.checked) < c.checkEvery {
		c.mu.Unlock()
		return true
	}
	if ch := c.reading; ch != nil {
		c.mu.Unlock()
		select {
		case <-ch:
			return true
		case <-ctx.Done():
			return false
		}
	}
	ch := make(chan struct{})
	c.reading = ch
	sent := c.now()
	c.mu.Unlock()

	// The read is shared by every request waiting for it, so it belongs to
	// none of them: it runs on a context of its own (bounded), not cut short
	// by the one request that happened to start it nor counted as its work.
	rctx, cancel := context.WithTimeout(context.Background(), epochReadTimeout)
	epoch, err := c.epoch(rctx)
	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.reading = nil
	close(ch)
	if err != nil {
		return false
	}
	if epoch != c.seen {
		c.flushLocked()
		c.seen = epoch
	}
	c.checked = sent
	return true
}

// Generation is the flush count a database read of a key begins under; Put
// adds the key only if no flush happened since.
func (c *KeyCache) Generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Put holds p, verified by a database read begun under generation gen. At
// the bound it first drops an entry past its age, else any one entry.
func (c *KeyCache) Put(sum KeySum, p Principal, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if _, ok := c.entries[sum]; !ok && len(c.entries) >= c.maxEntries {
		c.evictLocked()
	}
	c.entries[sum] = cachedKey{p: p, at: c.now()}
}

// evictLocked drops one entry: the first one past its age among a few
// looked at (map order is random), else the first one looked at.
func (c *KeyCache) evictLocked() {
	now := c.now()
	var victim KeySum
	n := 0
	for s, e := range c.entries {
		if n == 0 {
			victim = s
		}
		if now.Sub(e.at) >= c.maxAge {
			victim = s
			break
		}
		if n++; n == 8 {
			break
		}
	}
	delete(c.entries, victim)
}

// Invalidate forgets every key at once: this process changed a key and
// does not wait for its own epoch read to see it.
func (c *KeyCache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

func (c *KeyCache) flushLocked() {
	clear(c.entries)
	c.gen++
}

// Len is the number of keys held.
func (c *KeyCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
