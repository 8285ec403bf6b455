package api

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter is a token bucket per principal, in this process. With several
// processes behind a balancer each enforces its own share.
type rateLimiter struct {
	mu    sync.Mutex
	rps   rate.Limit
	burst int
	m     map[string]*rate.Limiter
}

func newRateLimiter(rps float64, burst int) *rateLimiter {
	if burst <= 0 {
		burst = int(rps * 2)
	}
	return &rateLimiter{rps: rate.Limit(rps), burst: burst, m: map[string]*rate.Limiter{}}
}

// allow takes a token for the principal, or says how long until one is free.
func (l *rateLimiter) allow(principal string) (time.Duration, bool) {
	l.mu.Lock()
	lim, ok := l.m[principal]
	if !ok {
		lim = rate.NewLimiter(l.rps, l.burst)
		l.m[principal] = lim
	}
	l.mu.Unlock()
	now := time.Now()
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// Public (unauthenticated) routes are limited per client address, in a map
// that never holds more than maxClients addresses: an outsider rotating
// addresses cannot grow it without bound. When it is full, addresses idle
// for a minute are forgotten first, then arbitrary ones (forgetting only
// gives that address a fresh bucket, it never blocks anyone).
const (
	defaultPublicRate  = 100
	defaultPublicBurst = 200
	maxClients         = 10_000
)

type clientBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// clientLimiter is a token bucket per client address, bounded in size.
type clientLimiter struct {
	mu    sync.Mutex
	rps   rate.Limit
	burst int
	max   int
	m     map[string]*clientBucket
}

func newClientLimiter(rps float64, burst, max int) *clientLimiter {
	return &clientLimiter{rps: rate.Limit(rps), burst: burst, max: max, m: map[string]*clientBucket{}}
}

// allow takes a token for addr, or says how long until one is free.
func (l *clientLimiter) allow(addr string) (time.Duration, bool) {
	now := time.Now()
	l.mu.Lock()
	b, ok := l.m[addr]
	if !ok {
		if len(l.m) >= l.max {
			l.evict(now)
		}
		b = &clientBucket{lim: rate.NewLimiter(l.rps, l.burst)}
		l.m[addr] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	l.mu.Unlock()
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// evict makes room: idle addresses first, then any, down to 90% of max.
func (l *clientLimiter) evict(now time.Time) {
	for a, b := range l.m {
		if now.Sub(b.seen) > time.Minute {
			delete(l.m, a)
		}
	}
	for a := range l.m {
		if len(l.m) < l.max*9/10 {
			break
		}
		delete(l.m, a)
	}
}

// size is how many addresses the limiter holds.
func (l *clientLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
