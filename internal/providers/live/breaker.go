package live

import (
	"sync"
	"time"
)

// breakerThreshold is how many consecutive failures open a breaker.
const breakerThreshold = 5

type breakerState int

const (
	closed breakerState = iota
	open
	halfOpen
)

// breaker is the circuit breaker of one merchant's connection to one
// provider. Closed, it lets calls through and counts consecutive failures;
// the fifth opens it. Open, it refuses calls for openFor; then it lets one
// trial call through (half-open): a success closes it, a failure opens it
// again. A trial that never reports (its caller gave up without calling)
// is replaced after trialTimeout.
type breaker struct {
	openFor      time.Duration
	trialTimeout time.Duration
	onChange     func(from, to breakerState)

	mu       sync.Mutex
	state    breakerState
	failures int
	openedAt time.Time
	trialAt  time.Time
}

// ready reports whether a call could go through now, without taking the
// trial: a create asks it before it records anything.
func (b *breaker) ready(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case open:
		return now.Sub(b.openedAt) >= b.openFor
	case halfOpen:
		return now.Sub(b.trialAt) >= b.trialTimeout
	}
	return true
}

// allow admits one call. trial is true for the half-open trial call, which
// must report its result with done.
func (b *breaker) allow(now time.Time) (ok, trial bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case open:
		if now.Sub(b.openedAt) < b.openFor {
			return false, false
		}
		b.set(halfOpen)
		b.trialAt = now
		return true, true
	case halfOpen:
		if now.Sub(b.trialAt) < b.trialTimeout {
			return false, false
		}
		b.trialAt = now
		return true, true
	}
	return true, false
}

// done records a call's result.
func (b *breaker) done(success, trial bool, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case success:
		b.failures = 0
		if b.state == halfOpen && trial {
			b.set(closed)
		}
	case b.state == halfOpen && trial:
		b.openedAt = now
		b.set(open)
	case b.state == closed:
		b.failures++
		if b.failures >= breakerThreshold {
			b.openedAt = now
			b.set(open)
		}
	}
}

// current returns the state (for tests and the gauge).
func (b *breaker) current() breakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

func (b *breaker) set(s breakerState) {
	if s == b.state {
		return
	}
	from := b.state
	b.state = s
	if s == closed {
		b.failures = 0
	}
	if b.onChange != nil {
		b.onChange(from, s)
	}
}
