package screening

import (
	"context"
	"sync"
	"sync/atomic"
)

// Screener holds the current list of one source and screens names against
// it. Screening reads the list through an atomic pointer, so it never waits
// for a reload; Reload builds a new list aside and swaps it in only when it
// loaded completely. A nil Screener, or one with no list loaded, answers
// StatusNotScreened for every name. A Screener is safe for concurrent use.
type Screener struct {
	source string
	opts   Options
	list   atomic.Pointer[List]
	reload sync.Mutex // one reload at a time; screening never takes it
}

// NewScreener returns a Screener for source (see Load) without loading it;
// call Reload to load. An empty source makes a Screener that screens nothing.
func NewScreener(source string, opts Options) *Screener {
	return &Screener{source: source, opts: opts}
}

// OpenScreener returns a Screener with the list of source loaded.
func OpenScreener(ctx context.Context, source string, opts Options) (*Screener, error) {
	s := NewScreener(source, opts)
	if err := s.Reload(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// NewScreenerFromList returns a Screener over an already loaded list; Reload
// reads the list's source again.
func NewScreenerFromList(l *List, opts Options) *Screener {
	s := &Screener{source: l.Source(), opts: opts}
	s.list.Store(l)
	return s
}

// Screen screens name against the current list.
func (s *Screener) Screen(name string) Result {
	if s == nil {
		return notScreened()
	}
	return s.list.Load().Screen(name, s.opts)
}

// Reload loads the list again from the same source and swaps it in. On
// failure the current list stays in use and the error (a *LoadError, or
// ErrNoSource when no source is configured) is returned.
func (s *Screener) Reload(ctx context.Context) error {
	if s == nil || s.source == "" {
		return ErrNoSource
	}
	s.reload.Lock()
	defer s.reload.Unlock()
	l, err := Load(ctx, s.source)
	if err != nil {
		return err
	}
	s.list.Store(l)
	return nil
}

// Source returns the configured path or URL; empty when none.
func (s *Screener) Source() string {
	if s == nil {
		return ""
	}
	return s.source
}

// Size returns the number of entries of the current list; 0 when none is
// loaded.
func (s *Screener) Size() int {
	if s == nil {
		return 0
	}
	if l := s.list.Load(); l != nil {
		return l.Size()
	}
	return 0
}

// List returns the current list, or nil when none is loaded.
func (s *Screener) List() *List {
	if s == nil {
		return nil
	}
	return s.list.Load()
}

// Ready reports whether a list is loaded. Live money must not move while it
// is false: payouts and transfers refuse live requests with
// ErrUnavailable.
func (s *Screener) Ready() bool {
	return s != nil && s.list.Load() != nil
}
