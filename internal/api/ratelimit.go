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
